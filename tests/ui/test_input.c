/* Multi-line input: """ blocks and trailing backslashes. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "input.h"

/* Feed lines until one completes a message; check it and where it completed. */
static void check(const char *const *lines, int n, const char *want, int done_at)
{
    input_asm a = {0};
    int at = -1;
    for (int i = 0; i < n; i++) {
        int r = input_feed(&a, lines[i]);
        CHECKF(r >= 0, "line %d failed", i);
        if (r == 1 && at < 0) {
            at = i;
            char *msg = input_take(&a);
            CHECKF(strcmp(msg, want) == 0, "message '%s', want '%s'", msg, want);
            free(msg);
        } else if (r == 0) {
            CHECKF(input_pending(&a), "line %d: a partly typed message is not pending", i);
        }
    }
    CHECKF(at == done_at, "completed at line %d, want %d", at, done_at);
    input_free(&a);
}

#define LINES(...) (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)

int main(void)
{
    check(LINES("hello"), "hello", 0);
    check(LINES(""), "", 0);
    check(LINES("one \\", "two"), "one \ntwo", 1);
    check(LINES("a\\", "b\\", "c"), "a\nb\nc", 2);
    check(LINES("\"\"\"", "line one", "line two", "\"\"\""), "line one\nline two", 3);
    check(LINES("\"\"\"first", "second\"\"\""), "first\nsecond", 1);
    check(LINES("\"\"\"", "", "after blank", "\"\"\""), "\nafter blank", 3);
    check(LINES("/set system \"\"\"", "You are terse.", "Really.", "\"\"\""),
          "/set system You are terse.\nReally.", 3);
    check(LINES("\"\"\"", "keep \\", "\"\"\""), "keep \\", 2); /* no continuation in a block */
    check(LINES("say \"\"\"hi\"\"\" now"), "say \"\"\"hi\"\"\" now", 0);
    check(LINES("pasted\nlines"), "pasted\nlines", 0);

    /* Ctrl-C drops a partly typed message. */
    input_asm a = {0};
    CHECK(input_feed(&a, "\"\"\"") == 0);
    CHECK(input_feed(&a, "half") == 0);
    input_reset(&a);
    CHECK(!input_pending(&a));
    CHECK(input_feed(&a, "fresh") == 1);
    char *msg = input_take(&a);
    CHECKF(strcmp(msg, "fresh") == 0, "after reset: '%s'", msg);
    free(msg);
    input_free(&a);
    return test_summary("ui-input");
}
