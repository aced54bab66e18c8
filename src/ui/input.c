/* Multi-line input.
 *
 *   """                      a line that opens a block: text before the
 *   line one                 quotes starts the message, text after them is
 *   line two                 its first line; a later line with the closing
 *   """                      quotes ends it (text around them is kept).
 *
 *   line one \               a trailing backslash continues on the next
 *   line two                 line (the backslash becomes a newline). */
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "text.h"

#define QUOTES "\"\"\""

static int append(input_asm *a, const char *s, size_t n)
{
    if (buf_reserve(&a->buf, &a->cap, a->len + n + 1) < 0)
        return -1;
    memcpy(a->buf + a->len, s, n);
    a->len += n;
    a->buf[a->len] = 0;
    return 0;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* Add one line of a block: lines are joined by newlines. */
static int block_line(input_asm *a, const char *s, size_t n)
{
    if (a->block_text && append(a, "\n", 1) < 0)
        return -1;
    a->block_text = true;
    return append(a, s, n);
}

static int fail(input_asm *a)
{
    input_reset(a);
    return -1;
}

int input_feed(input_asm *a, const char *line)
{
    size_t n = strlen(line);
    if (a->in_block) {
        const char *close = strstr(line, QUOTES);
        if (!close)
            return block_line(a, line, n) < 0 ? fail(a) : 0;
        size_t before = (size_t)(close - line);
        if (!blank(line, before) && block_line(a, line, before) < 0)
            return fail(a);
        const char *after = close + 3;
        if (!blank(after, strlen(after)) && append(a, after, strlen(after)) < 0)
            return fail(a);
        a->in_block = false;
        return 1;
    }
    const char *open = strstr(line, QUOTES);
    if (open && !strstr(open + 3, QUOTES)) {
        /* Joining: the text before the quotes, then the block's lines. */
        if (a->continued && append(a, "\n", 1) < 0)
            return fail(a);
        a->continued = false;
        if (append(a, line, (size_t)(open - line)) < 0)
            return fail(a);
        const char *first_line = open + 3;
        a->in_block = true;
        a->block_text = false;
        /* Text right after the quotes is the block's first line; nothing
         * there is not a line of the message. */
        if (!blank(first_line, strlen(first_line)) &&
            block_line(a, first_line, strlen(first_line)) < 0)
            return fail(a);
        return 0;
    }
    if (a->continued && append(a, "\n", 1) < 0)
        return fail(a);
    if (n > 0 && line[n - 1] == '\\') {
        a->continued = true;
        return append(a, line, n - 1) < 0 ? fail(a) : 0;
    }
    a->continued = false;
    if (append(a, line, n) < 0)
        return fail(a);
    return 1;
}

char *input_take(input_asm *a)
{
    char *msg = a->buf ? a->buf : strdup("");
    a->buf = NULL;
    a->len = a->cap = 0;
    a->in_block = a->continued = a->block_text = false;
    return msg;
}

bool input_pending(const input_asm *a)
{
    return a->in_block || a->continued;
}

void input_reset(input_asm *a)
{
    a->len = 0;
    if (a->buf)
        a->buf[0] = 0;
    a->in_block = a->continued = a->block_text = false;
}

void input_free(input_asm *a)
{
    free(a->buf);
    a->buf = NULL;
    a->len = a->cap = 0;
}
