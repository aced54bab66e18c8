/* Breaking text into screen rows (the full-screen transcript re-wraps on
 * every resize, so this is a pure function of the text and the width). */
#include "text.h"

size_t wrap_row(const char *s, size_t n, int width, size_t *next)
{
    size_t i = 0, last_space = 0;
    int col = 0;
    bool have_space = false;
    if (width < 1)
        width = 1;
    while (i < n) {
        if (s[i] == '\n') {
            *next = i + 1;
            return i;
        }
        uint32_t cp;
        int len = utf8_decode(s + i, n - i, &cp);
        if (len == 0)
            len = 1, cp = 0xFFFD;
        int w = cp_width(cp);
        if (col + w > width) {
            if (cp == ' ') {
                *next = i + 1;
                return i;
            }
            if (have_space) {
                *next = last_space + 1;
                return last_space;
            }
            /* A row must show something, even a glyph wider than it. */
            if (i == 0)
                i = (size_t)len;
            *next = i;
            return i;
        }
        if (cp == ' ')
            last_space = i, have_space = true;
        col += w;
        i += (size_t)len;
    }
    *next = n;
    return n;
}

int wrap_count(const char *s, size_t n, int width)
{
    int rows = 1;
    size_t i = 0;
    for (;;) {
        size_t next;
        wrap_row(s + i, n - i, width, &next);
        i += next;
        if (i >= n)
            break;
        rows++;
    }
    /* A text ending in a newline has an empty last row. */
    if (n > 0 && s[n - 1] == '\n')
        rows++;
    return rows;
}
