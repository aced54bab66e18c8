/* The grammar's state as a set of stacks (llama.cpp's pushdown design) and
 * its step over one code point.  A stack's positions are the next element
 * of each rule being read, the innermost on top; a reference on top is
 * expanded into its rule's alternatives at once, so every stack of a state
 * waits on a character set or is empty.  A reference that ends its
 * alternative is replaced rather than kept under the rule it calls, so
 * right recursion (x*) does not grow the stack. */
#include <stdlib.h>
#include <string.h>

#include "grammar_internal.h"
#include "unicode.h"

int cf_gwords_push(cf_gwords *v, uint32_t x)
{
    if (v->n == v->cap) {
        size_t c = v->cap ? 2 * v->cap : 64;
        uint32_t *w = realloc(v->w, c * sizeof *w);
        if (!w)
            return -1;
        v->w = w;
        v->cap = c;
    }
    v->w[v->n++] = x;
    return 0;
}

void cf_gwords_free(cf_gwords *v)
{
    free(v->w);
    *v = (cf_gwords){0};
}

bool cf_gchar_takes(const cf_grammar *g, const cf_gelem *e, uint32_t lo, uint32_t hi)
{
    const cf_grange *r = g->range + e->a;
    if (!e->neg) {
        for (uint32_t i = 0; i < e->n; i++)
            if (r[i].lo <= hi && lo <= r[i].hi)
                return true;
        return false;
    }
    /* some code point of [lo, hi] outside every range: step over the
     * ranges that cover the lowest one left */
    for (uint32_t cp = lo;;) {
        uint32_t i = 0;
        while (i < e->n && !(r[i].lo <= cp && cp <= r[i].hi))
            i++;
        if (i == e->n)
            return true;
        if (r[i].hi >= hi)
            return false;
        cp = r[i].hi + 1;
    }
}

/* Stacks deeper than this are dropped: only a grammar nesting without end
 * (and input as deep) reaches it. */
#define MAX_DEPTH 4096

/* Append to out every stack that st[0 .. d) expands to (st is scratch of
 * MAX_DEPTH + 1 entries, changed). */
static int expand(const cf_grammar *g, uint32_t *st, size_t d, cf_gwords *out)
{
    for (;;) {
        if (d && g->elem[st[d - 1]].kind == G_END) {
            d--; /* the rule is read; the caller's position is already past it */
            continue;
        }
        if (!d || g->elem[st[d - 1]].kind == G_CHAR) {
            if (cf_gwords_push(out, (uint32_t)d))
                return -1;
            for (size_t i = 0; i < d; i++)
                if (cf_gwords_push(out, st[i]))
                    return -1;
            return 0;
        }
        uint32_t p = st[d - 1], r = g->elem[p].a;
        size_t base = d - 1;
        if (g->elem[p + 1].kind != G_END)
            st[base++] = p + 1;
        if (base >= MAX_DEPTH)
            return 0;
        uint32_t first = g->rule_alt[r], last = g->rule_alt[r + 1];
        if (first == last)
            return 0;
        /* every alternative but the last on a copy; the last goes on here */
        for (uint32_t a = first; a + 1 < last; a++) {
            uint32_t *copy = malloc((MAX_DEPTH + 1) * sizeof *copy);
            if (!copy)
                return -1;
            memcpy(copy, st, base * sizeof *st);
            copy[base] = g->alt[a];
            int rc = expand(g, copy, base + 1, out);
            free(copy);
            if (rc)
                return -1;
        }
        st[base] = g->alt[last - 1];
        d = base + 1;
    }
}

static int cmp_stack(const uint32_t *a, const uint32_t *b)
{
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    for (uint32_t i = 1; i <= a[0]; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int cmp_stack_ptr(const void *a, const void *b)
{
    return cmp_stack(*(const uint32_t *const *)a, *(const uint32_t *const *)b);
}

/* raw's stacks sorted and without repeats into out. */
static int canonical(const cf_gwords *raw, cf_gwords *out)
{
    size_t n = 0;
    for (size_t i = 0; i < raw->n; i += raw->w[i] + 1)
        n++;
    const uint32_t **s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return -1;
    n = 0;
    for (size_t i = 0; i < raw->n; i += raw->w[i] + 1)
        s[n++] = raw->w + i;
    qsort(s, n, sizeof *s, cmp_stack_ptr);
    out->n = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (i && !cmp_stack(s[i - 1], s[i]))
            continue;
        for (uint32_t j = 0; j <= s[i][0] && !rc; j++)
            rc = cf_gwords_push(out, s[i][j]);
    }
    free(s);
    return rc;
}

int cf_gstate_start(const cf_grammar *g, cf_gwords *out)
{
    cf_gwords raw = {0};
    uint32_t *st = malloc((MAX_DEPTH + 1) * sizeof *st);
    int rc = st ? 0 : -1;
    for (uint32_t a = g->rule_alt[g->root]; a < g->rule_alt[g->root + 1] && !rc; a++) {
        st[0] = g->alt[a];
        rc = expand(g, st, 1, &raw);
    }
    if (!rc)
        rc = canonical(&raw, out);
    free(st);
    cf_gwords_free(&raw);
    return rc;
}

int cf_gstate_advance(const cf_grammar *g, const uint32_t *in, size_t n, uint32_t cp,
                      cf_gwords *out)
{
    cf_gwords raw = {0};
    uint32_t *st = malloc((MAX_DEPTH + 1) * sizeof *st);
    int rc = st ? 0 : -1;
    for (size_t i = 0; i < n && !rc; i += in[i] + 1) {
        uint32_t d = in[i];
        if (!d || !cf_gchar_takes(g, &g->elem[in[i + d]], cp, cp))
            continue;
        memcpy(st, in + i + 1, d * sizeof *st);
        st[d - 1]++;
        rc = expand(g, st, d, &raw);
    }
    if (!rc)
        rc = canonical(&raw, out);
    free(st);
    cf_gwords_free(&raw);
    return rc;
}

bool cf_gstate_takes(const cf_grammar *g, const uint32_t *st, size_t n, uint32_t lo,
                     uint32_t hi)
{
    for (size_t i = 0; i < n; i += st[i] + 1)
        if (st[i] && cf_gchar_takes(g, &g->elem[st[i + st[i]]], lo, hi))
            return true;
    return false;
}

bool cf_gstate_can_end(const uint32_t *st, size_t n)
{
    for (size_t i = 0; i < n; i += st[i] + 1)
        if (!st[i])
            return true;
    return false;
}

bool cf_grammar_matches(const cf_grammar *g, const char *s, size_t n, bool whole)
{
    cf_gwords a = {0}, b = {0};
    bool ok = !cf_gstate_start(g, &a);
    for (size_t i = 0; ok && i < n;) {
        uint32_t cp = cf_utf8_decode((const unsigned char *)s, n, &i);
        ok = !cf_gstate_advance(g, a.w, a.n, cp, &b) && b.n;
        cf_gwords t = a;
        a = b;
        b = t;
    }
    ok = ok && (!whole || cf_gstate_can_end(a.w, a.n));
    cf_gwords_free(&a);
    cf_gwords_free(&b);
    return ok;
}
