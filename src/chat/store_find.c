/* Which stored model a name means, and the names near one that means none. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "store_internal.h"

static bool named(const cf_store_entry *e, const char *name)
{
    return !strcasecmp(e->name, name) || (e->file_name && !strcasecmp(e->file_name, name));
}

/* The first entry (the stores' order is their precedence) of that name. */
static const cf_store_entry *exact(const cf_store *st, const char *name, const char *suffix)
{
    char buf[4200];
    if (snprintf(buf, sizeof buf, "%s%s", name, suffix) >= (int)sizeof buf)
        return NULL;
    for (int i = 0; i < st->n; i++)
        if (named(&st->e[i], buf))
            return &st->e[i];
    return NULL;
}

/* Whether an earlier entry has e's name (one model in two stores). */
static bool repeated(const cf_store *st, const cf_store_entry *e)
{
    for (const cf_store_entry *p = st->e; p < e; p++)
        if (!strcasecmp(p->name, e->name))
            return true;
    return false;
}

static bool starts(const char *s, const char *prefix)
{
    return s && !strncasecmp(s, prefix, strlen(prefix));
}

/* Levenshtein distance, any case, of a and the first bn bytes of b. */
static size_t distance(const char *a, const char *b, size_t bn)
{
    size_t an = strlen(a), row[256];
    if (an >= 256 || bn >= 256)
        return (size_t)-1;
    for (size_t j = 0; j <= bn; j++)
        row[j] = j;
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            bool same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            size_t sub = diag + !same;
            size_t best = sub < up + 1 ? sub : up + 1;
            row[j] = best < row[j - 1] + 1 ? best : row[j - 1] + 1;
            diag = up;
        }
    }
    return row[bn];
}

/* How far name is from e: 0 when e's name contains it; else the edit
 * distance to e's name, or to its part before the tag or the quant type
 * (typing "qwen4" for "qwen3:0.6b"); with start, to a start of its name
 * about as long as the name instead (a slip in the first letters:
 * "storis" for "stories260K"). */
static size_t how_far(const cf_store_entry *e, const char *name, bool start)
{
    if (strcasestr(e->name, name))
        return 0;
    size_t en = strlen(e->name), n = strlen(name), d = SIZE_MAX;
    const char *colon = strrchr(e->name, ':');
    if (!start)
        d = distance(name, e->name, colon ? (size_t)(colon - e->name) : en);
    if (!start && colon) {
        size_t dw = distance(name, e->name, en);
        d = dw < d ? dw : d;
    }
    for (size_t k = n > 2 ? n - 2 : 1; start && k <= n + 2 && k < en; k++) {
        size_t ds = distance(name, e->name, k);
        d = ds < d ? ds : d;
    }
    return d;
}

void cf_store_find(const cf_store *st, const char *name, cf_store_match *m)
{
    memset(m, 0, sizeof *m);
    if ((m->found = exact(st, name, "")) || (m->found = exact(st, name, ":latest")) ||
        (m->found = exact(st, name, ":Q4_K_M")))
        return;
    const cf_store_entry *only = NULL;
    for (int i = 0; i < st->n; i++) {
        const cf_store_entry *e = &st->e[i];
        if (!(starts(e->name, name) || starts(e->file_name, name)) || repeated(st, e))
            continue;
        only = e;
        if (m->n_near < CF_STORE_NEAR_MAX)
            m->near[m->n_near++] = e;
        m->n_matching++;
    }
    if (m->n_matching == 1) {
        m->found = only;
        m->n_near = 0;
        return;
    }
    if ((m->ambiguous = m->n_matching > 1))
        return;
    m->n_matching = 0;
    /* the closest names, nearest first, within a third of the name; when
     * none is, the closest starts of names */
    size_t limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2, dist[CF_STORE_NEAR_MAX];
    for (int i = 0; i < 2 * st->n && !(i == st->n && m->n_near); i++) {
        const cf_store_entry *e = &st->e[i % st->n];
        size_t d = how_far(e, name, i >= st->n);
        if (d > limit || repeated(st, e))
            continue;
        int at = m->n_near;
        while (at > 0 && dist[at - 1] > d)
            at--;
        if (at == CF_STORE_NEAR_MAX)
            continue;
        int last = m->n_near < CF_STORE_NEAR_MAX ? m->n_near : CF_STORE_NEAR_MAX - 1;
        for (int k = last; k > at; k--) {
            m->near[k] = m->near[k - 1];
            dist[k] = dist[k - 1];
        }
        m->near[at] = e;
        dist[at] = d;
        if (m->n_near < CF_STORE_NEAR_MAX)
            m->n_near++;
    }
}
