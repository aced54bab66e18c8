/* Recording what the markdown renderer writes: each byte and its style
 * (test_markdown and the markdown fuzz harness). */
#ifndef CONFAB_TESTS_MD_REC_H
#define CONFAB_TESTS_MD_REC_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "markdown.h"

typedef struct rec {
    char *b;
    unsigned *st; /* each byte's style */
    size_t n, cap;
} rec;

/* A text_put: appends s[0..n) in that style (aborts when out of memory). */
static inline void rec_put(void *ud, const char *s, size_t n, unsigned style)
{
    rec *r = ud;
    if (r->n + n > r->cap) {
        r->cap = (r->n + n) * 2 + 64;
        r->b = realloc(r->b, r->cap);
        r->st = realloc(r->st, r->cap * sizeof *r->st);
        if (!r->b || !r->st)
            abort();
    }
    memcpy(r->b + r->n, s, n);
    for (size_t i = 0; i < n; i++)
        r->st[r->n + i] = style;
    r->n += n;
}

static inline void rec_free(rec *r)
{
    free(r->b);
    free(r->st);
    memset(r, 0, sizeof *r);
}

/* The bytes of r without those of a style in `drop`. */
static inline size_t rec_text(const rec *r, unsigned drop, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!(r->st[i] & drop))
            out[k++] = r->b[i];
    return k;
}

/* Whether r keeps text[0..n) as markdown.h promises: the pieces not
 * MD_DECOR are the text in order, but where a run of MD_REFLOW (a table
 * too wide, its cells wrapped) stands for the table's lines, its pieces
 * not MD_DECOR are the bytes of their cells (all but blanks, unescaped
 * pipes and the delimiter row), in any order.  *at: how far the text was
 * found kept. */
static inline bool rec_kept(const rec *r, const char *text, size_t n, size_t *at)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n;) {
        *at = k;
        if (!(r->st[i] & MD_REFLOW) && (r->st[i] & MD_DECOR)) {
            i++;
        } else if (!(r->st[i] & MD_REFLOW)) {
            if (k >= n || r->b[i] != text[k])
                return false;
            k++, i++;
        } else {
            size_t count[256] = {0};
            for (; i < r->n && (r->st[i] & MD_REFLOW); i++)
                if (!(r->st[i] & MD_DECOR) && r->b[i] != ' ' && r->b[i] != '\t')
                    count[(unsigned char)r->b[i]]++;
            for (int line = 0; k < n; line++) {
                size_t j = k, e;
                while (j < n && (text[j] == ' ' || text[j] == '\t'))
                    j++;
                if (j == n || text[j] != '|')
                    break;
                for (e = j; e < n && text[e] != '\n'; e++) {
                    char c = text[e];
                    bool pipe = c == '|' && (e == j || text[e - 1] != '\\');
                    if (line != 1 && c != ' ' && c != '\t' && !pipe && !count[(unsigned char)c]--)
                        return false;
                }
                k = e < n ? e + 1 : e;
            }
            for (int c = 0; c < 256; c++)
                if (count[c])
                    return false;
        }
    }
    *at = k;
    return k == n;
}

#endif
