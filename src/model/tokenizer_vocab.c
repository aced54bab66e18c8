/* Pieces the encoders share: the string -> token id map, the growable id
 * list and the merge queue. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer_internal.h"

uint64_t cf_str_hash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    if (n)
        memcpy(&w, s, n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
}

int cf_strmap_init(cf_strmap *m, const cf_str *keys, uint32_t n_keys_max)
{
    uint32_t cap = 16;
    while (cap < 2 * (uint64_t)n_keys_max)
        cap <<= 1;
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    m->keys = keys;
    return m->slot ? 0 : -1;
}

void cf_strmap_free(cf_strmap *m)
{
    free(m->slot);
    m->slot = NULL;
}

static inline bool key_eq(const cf_str *k, const char *s, size_t n)
{
    return k->len == n && memcmp(k->ptr, s, n) == 0;
}

void cf_strmap_put(cf_strmap *m, uint32_t id)
{
    const cf_str *k = &m->keys[id];
    for (uint32_t i = (uint32_t)cf_str_hash(k->ptr, k->len) & m->mask;; i = (i + 1) & m->mask) {
        uint32_t v = m->slot[i];
        if (v == 0 || key_eq(&m->keys[v - 1], k->ptr, k->len)) {
            m->slot[i] = id + 1;
            return;
        }
    }
}

int32_t cf_strmap_get(const cf_strmap *m, const char *s, size_t n)
{
    for (uint32_t i = (uint32_t)cf_str_hash(s, n) & m->mask;; i = (i + 1) & m->mask) {
        uint32_t v = m->slot[i];
        if (v == 0)
            return -1;
        if (key_eq(&m->keys[v - 1], s, n))
            return (int32_t)(v - 1);
    }
}

int cf_tokens_push(cf_tokens *v, cf_token id)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        cf_token *p = realloc(v->ids, cap * sizeof *p);
        if (!p)
            return -1;
        v->ids = p;
        v->cap = cap;
    }
    v->ids[v->n++] = id;
    return 0;
}

void cf_tokens_free(cf_tokens *v)
{
    free(v->ids);
    v->ids = NULL;
    v->n = v->cap = 0;
}

static inline bool served_first(const tok_bigram *a, const tok_bigram *b)
{
    return a->prio > b->prio || (a->prio == b->prio && a->left < b->left);
}

int tok_queue_push(tok_queue *q, tok_bigram e)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        tok_bigram *h = realloc(q->e, cap * sizeof *h);
        if (!h)
            return -1;
        q->e = h;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && served_first(&e, &q->e[(i - 1) / 2])) {
        q->e[i] = q->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->e[i] = e;
    return 0;
}

tok_bigram tok_queue_pop(tok_queue *q)
{
    tok_bigram top = q->e[0], last = q->e[--q->n];
    size_t i = 0, n = q->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && served_first(&q->e[c + 1], &q->e[c]))
            c++;
        if (!served_first(&q->e[c], &last))
            break;
        q->e[i] = q->e[c];
        i = c;
    }
    if (n)
        q->e[i] = last;
    return top;
}
