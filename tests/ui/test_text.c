/* UTF-8 repair, terminal-safe text, display widths and row wrapping. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "text.h"

#define R UTF8_REPLACEMENT

static void check_sanitize(const char *in, size_t n, const char *want, int want_bad)
{
    int bad = -1;
    char *out = utf8_sanitize(in, n, &bad);
    CHECKF(out && strcmp(out, want) == 0, "sanitize gave '%s', want '%s'", out, want);
    CHECKF(bad == want_bad, "%d bad sequences, want %d", bad, want_bad);
    free(out);
}

static void test_decode(void)
{
    uint32_t cp = 0;
    CHECK(utf8_decode("A", 1, &cp) == 1 && cp == 'A');
    CHECK(utf8_decode("\xC3\xA9", 2, &cp) == 2 && cp == 0xE9);
    CHECK(utf8_decode("\xE2\x82\xAC", 3, &cp) == 3 && cp == 0x20AC);
    CHECK(utf8_decode("\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
    CHECK(utf8_decode("\xC0\x80", 2, &cp) == 0);         /* overlong NUL */
    CHECK(utf8_decode("\xE0\x80\xAF", 3, &cp) == 0);     /* overlong '/' */
    CHECK(utf8_decode("\xED\xA0\x80", 3, &cp) == 0);     /* surrogate */
    CHECK(utf8_decode("\xF4\x90\x80\x80", 4, &cp) == 0); /* past U+10FFFF */
    CHECK(utf8_decode("\xE2\x82", 2, &cp) == 0);         /* truncated */
    CHECK(utf8_decode("\x80", 1, &cp) == 0);             /* lone continuation */
    CHECK(utf8_decode("\xFF", 1, &cp) == 0);
}

static void test_sanitize(void)
{
    check_sanitize("plain", 5, "plain", 0);
    check_sanitize("caf\xC3\xA9", 5, "caf\xC3\xA9", 0);
    check_sanitize("a\xFF\xFE" "b", 4, "a" R R "b", 2);
    check_sanitize("x\xC3(", 3, "x" R "(", 1);
    /* a character cut short is one sequence; bytes that start none, one each */
    check_sanitize("\xE2\x82", 2, R, 1);
    check_sanitize("a\xE2\x82" "b\xF0\x9F\x98 c", 9, "a" R "b" R " c", 2);
    check_sanitize("\xED\xA0\x80", 3, R R R, 3); /* a surrogate starts no valid sequence */
    check_sanitize("\xE0\x80", 2, R R, 2);        /* nor does an overlong form */
    check_sanitize("\xF4\x8F\xBF", 3, R, 1);
    check_sanitize("a\0b", 3, "a" R "b", 1);
    check_sanitize("", 0, "", 0);
}

static void test_terminal_safe(void)
{
    char *s = text_for_terminal("red \033[31mX\r\n\tok\x07");
    CHECKF(s && strcmp(s, "red " R "[31mX\n\tok" R) == 0, "got '%s'", s);
    free(s);
    s = text_for_terminal("\xC2\x9B" "c1 \xFF");
    CHECKF(s && strcmp(s, R "c1 " R) == 0, "got '%s'", s);
    free(s);
}

static void test_width(void)
{
    CHECK(utf8_width("abc", 3) == 3);
    CHECK(utf8_width("\xC3\xA9t\xC3\xA9", 5) == 3);
    CHECK(utf8_width("\xE4\xBD\xA0\xE5\xA5\xBD", 6) == 4); /* 你好 */
    CHECK(utf8_width("e\xCC\x81", 3) == 1);                /* e + combining acute */
}

/* The rows of s at width w, joined with '|'. */
static void rows(const char *s, int w, char *out)
{
    size_t n = strlen(s), i = 0;
    out[0] = 0;
    for (;;) {
        size_t next, len = wrap_row(s + i, n - i, w, &next);
        strncat(out, s + i, len);
        i += next;
        if (i >= n)
            break;
        strcat(out, "|");
    }
}

static void check_rows(const char *s, int w, const char *want)
{
    char got[512];
    rows(s, w, got);
    CHECKF(strcmp(got, want) == 0, "'%s' at %d: '%s', want '%s'", s, w, got, want);
}

static void test_wrap(void)
{
    check_rows("hello world", 20, "hello world");
    check_rows("hello world", 5, "hello|world");
    check_rows("hello world", 8, "hello|world");
    check_rows("abcdefghij", 4, "abcd|efgh|ij");
    check_rows("one\ntwo", 10, "one|two");
    check_rows("a b c d e f", 3, "a b|c d|e f");
    check_rows("\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xBD\xA0", 4, "\xE4\xBD\xA0\xE5\xA5\xBD|\xE4\xBD\xA0");
    check_rows("\xE4\xBD\xA0x", 1, "\xE4\xBD\xA0|x"); /* wider than the row: shown anyway */
    CHECK(wrap_count("", 0, 10) == 1);
    CHECK(wrap_count("abc", 3, 10) == 1);
    CHECK(wrap_count("abc\n", 4, 10) == 2);
    CHECK(wrap_count("abcdefghij", 10, 4) == 3);
    CHECK(wrap_count("a\n\nb", 4, 4) == 3);
}

static void check_print(const char *s, int w, int col, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wrap_print(f, s, w, col, "<", ">");
    fclose(f);
    CHECKF(buf && strcmp(buf, want) == 0, "'%s' at %d: '%s', want '%s'", s, w, buf, want);
    free(buf);
}

/* Lines of our own: broken at spaces, later rows under a listing's
 * second column, a prefix's end or the line's indent. */
static void test_print(void)
{
    check_print("first token 6 ms", 12, 0, "<first token>\n<6 ms>\n");
    check_print("/save FILE    save the chat to a file", 30, 0,
                "</save FILE    save the chat to>\n<              a file>\n");
    check_print("/save FILE    save it", 20, 0, "</save FILE    save>\n<it>\n"); /* too far */
    check_print("unknown setting foo", 14, 7, "<unknown>\n<       setting>\n<       foo>\n");
    check_print("  - an item that wraps", 12, 0, "<  - an item>\n<  that wraps>\n");
    check_print("One.  Two three", 10, 0, "<One.  Two>\n<three>\n");
    check_print("a\n\nb", 10, 0, "<a>\n<>\n<b>\n");
    check_print("as it is, however long", 0, 0, "<as it is, however long>\n");
}

int main(void)
{
    if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) {
        fprintf(stderr, "no UTF-8 locale: skipped\n");
        return TEST_SKIP;
    }
    test_decode();
    test_sanitize();
    test_terminal_safe();
    test_width();
    test_wrap();
    test_print();
    return test_summary("ui-text");
}
