/* Breaking text into screen rows (the full-screen transcript re-wraps on
 * every resize, so this is a pure function of the text and the width). */
#include <string.h>

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

int wrap_hang(const char *s, size_t n, int width)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    int hang = utf8_width(s, i);
    size_t word = i;
    while (word < n && s[word] != ' ')
        word++;
    /* two spaces after a sentence are prose, not a column */
    for (size_t j = word; j + 1 < n; j++)
        if (s[j] == ' ' && s[j + 1] == ' ' && s[j - 1] != '.') {
            while (j < n && s[j] == ' ')
                j++;
            if (j < n)
                hang = utf8_width(s, j);
            break;
        }
    return 2 * hang > width ? 0 : hang;
}

void wrap_print(FILE *f, const char *s, int width, int col, const char *pre, const char *post)
{
    for (;; col = 0) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s), at = 0;
        int hang = width > col ? col + wrap_hang(s, n, width - col) : 0;
        do {
            size_t next = n - at, len = next;
            int indent = at ? hang : 0;
            if (width > col)
                len = wrap_row(s + at, n - at, width - (at ? hang : col), &next);
            fprintf(f, "%s%*s%.*s%s\n", pre, indent, "", (int)len, s + at, post);
            at += next;
            /* a later row starts at its hang, not with the spaces before it */
            while (at < n && s[at] == ' ')
                at++;
        } while (at < n);
        if (!eol)
            return;
        s = eol + 1;
    }
}
