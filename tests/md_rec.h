/* Recording what the markdown renderer writes: each byte and its style
 * (test_markdown and the markdown fuzz harness). */
#ifndef CONFAB_TESTS_MD_REC_H
#define CONFAB_TESTS_MD_REC_H

#include <stdlib.h>
#include <string.h>

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

#endif
