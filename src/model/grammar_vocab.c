/* A grammar bound to a vocabulary: which tokens may come next.
 *
 * The grammar's states are made into a byte automaton lazily: a state is a
 * set of stacks plus the part of a UTF-8 character read so far, interned
 * (equal sets are one state), with a 256-entry table of the states each
 * byte leads to, filled as bytes are tried.  The vocabulary's pieces are a
 * trie; the tokens a state allows are found by walking the trie once from
 * that state, a branch cut as soon as its byte leads nowhere, and kept as
 * that state's mask.  A state's walk is paid once: grammars of JSON come
 * back to a few states (inside a string, after a comma) most of the time. */
#include <stdlib.h>
#include <string.h>

#include "grammar_internal.h"

#define UNKNOWN (-2)
#define DEAD (-1)
/* Past this many states (each 1 KiB of table) the automaton starts over
 * from the current state; past this many bytes of masks they are dropped. */
#define MAX_STATES 65536
#define MAX_MASK_BYTES ((size_t)256 << 20)

typedef struct dstate {
    size_t key;      /* offset in keys: the code point so far, the bytes it still
                      * needs | its size << 8, the stacks */
    uint32_t len;    /* words of the key */
    int32_t *next;   /* 256 states or UNKNOWN / DEAD; NULL until a byte is tried */
    uint64_t *mask;  /* NULL until asked */
    int32_t base;    /* the state of these stacks with no character begun */
    /* a base state's steps by which of its stacks (bit i: the i-th) take a
     * code point: the step depends on nothing else, so the thousands of
     * code points a vocabulary's pieces hold cost a few expansions */
    struct {
        uint64_t takers;
        int32_t to;
    } *by_takers;
    uint32_t n_by_takers, cap_by_takers;
} dstate;

typedef struct trie_node {
    uint32_t child, sibling; /* 0: none (the root is node 0) */
    int32_t tok;             /* first token of this piece, -1: none */
    uint8_t byte;
} trie_node;

struct cf_constraint {
    const cf_grammar *g;
    const cf_tokenizer *t;
    int32_t n_vocab;
    size_t mask_words;

    trie_node *node;
    size_t n_node;
    int32_t *tok_next; /* tokens of the same piece */
    cf_token *eog;
    size_t n_eog;

    dstate *st;
    size_t n_st, cap_st, n_masks;
    cf_gwords keys;
    int32_t *hash; /* open addressing over state ids, -1 empty */
    size_t hash_cap;
    int32_t start, cur;

    uint32_t *walk; /* the trie walk's stack: (node, state) pairs */
    size_t walk_cap;
};

static uint64_t hash_words(const uint32_t *w, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ w[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int rehash(cf_constraint *c, size_t cap)
{
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return -1;
    memset(h, 0xff, cap * sizeof *h);
    for (size_t i = 0; i < c->n_st; i++) {
        size_t j = hash_words(c->keys.w + c->st[i].key, c->st[i].len) & (cap - 1);
        while (h[j] >= 0)
            j = (j + 1) & (cap - 1);
        h[j] = (int32_t)i;
    }
    free(c->hash);
    c->hash = h;
    c->hash_cap = cap;
    return 0;
}

/* The state of key (cp, need, stacks), made if new (its base state base,
 * -1: itself); DEAD for no stacks, or -3 on memory. */
static int32_t intern(cf_constraint *c, uint32_t cp, uint32_t need, const uint32_t *stk, size_t n,
                      int32_t base)
{
    if (!n)
        return DEAD;
    size_t at = c->keys.n;
    if (cf_gwords_push(&c->keys, cp) || cf_gwords_push(&c->keys, need))
        return -3;
    for (size_t i = 0; i < n; i++)
        if (cf_gwords_push(&c->keys, stk[i]))
            return -3;
    const uint32_t *key = c->keys.w + at;
    size_t len = n + 2, j = hash_words(key, len) & (c->hash_cap - 1);
    for (; c->hash[j] >= 0; j = (j + 1) & (c->hash_cap - 1)) {
        const dstate *s = &c->st[c->hash[j]];
        if (s->len == len && !memcmp(c->keys.w + s->key, key, len * sizeof *key)) {
            c->keys.n = at;
            return c->hash[j];
        }
    }
    if (c->n_st == c->cap_st) {
        size_t cap = c->cap_st ? 2 * c->cap_st : 256;
        dstate *st = realloc(c->st, cap * sizeof *st);
        if (!st)
            return -3;
        c->st = st;
        c->cap_st = cap;
    }
    int32_t id = (int32_t)c->n_st++;
    c->st[id] = (dstate){.key = at, .len = (uint32_t)len, .base = base < 0 ? id : base};
    c->hash[j] = id;
    if (2 * c->n_st > c->hash_cap && rehash(c, 2 * c->hash_cap))
        return -3;
    return id;
}

/* The state after whole code point cp from state s. */
static int32_t advance_cp(cf_constraint *c, int32_t s, uint32_t cp)
{
    const uint32_t *stk = c->keys.w + c->st[s].key + 2;
    size_t n = c->st[s].len - 2, k = 0;
    uint64_t takers = 0;
    bool fits = true; /* in 64 bits */
    for (size_t i = 0; i < n; i += stk[i] + 1, k++) {
        if (k == 64) {
            fits = false;
            break;
        }
        if (stk[i] && cf_gchar_takes(c->g, &c->g->elem[stk[i + stk[i]]], cp, cp))
            takers |= 1ull << k;
    }
    if (fits && !takers)
        return DEAD;
    int32_t base = c->st[s].base;
    for (uint32_t i = 0; fits && i < c->st[base].n_by_takers; i++)
        if (c->st[base].by_takers[i].takers == takers)
            return c->st[base].by_takers[i].to;
    /* keys may move while interning: advance from a copy's words */
    cf_gwords in = {0}, out = {0};
    int32_t to = 0;
    for (size_t i = 0; i < n && !to; i++)
        if (cf_gwords_push(&in, stk[i]))
            to = -3;
    if (!to)
        to = cf_gstate_advance(c->g, in.w, n, cp, &out) ? -3 : intern(c, 0, 0, out.w, out.n, -1);
    cf_gwords_free(&in);
    cf_gwords_free(&out);
    dstate *d = &c->st[base];
    if (to == -3 || !fits)
        return to;
    if (d->n_by_takers == d->cap_by_takers) {
        uint32_t cap = d->cap_by_takers ? 2 * d->cap_by_takers : 4;
        void *p = realloc(d->by_takers, cap * sizeof *d->by_takers);
        if (!p)
            return -3;
        d->by_takers = p;
        d->cap_by_takers = cap;
    }
    d->by_takers[d->n_by_takers].takers = takers;
    d->by_takers[d->n_by_takers++].to = to;
    return to;
}

/* The state after byte b from state s. */
static int32_t step(cf_constraint *c, int32_t s, uint8_t b)
{
    dstate *d = &c->st[s];
    if (d->next && d->next[b] != UNKNOWN)
        return d->next[b];
    if (!d->next) {
        if (!(d->next = malloc(256 * sizeof *d->next)))
            return -3;
        for (int i = 0; i < 256; i++)
            d->next[i] = UNKNOWN;
    }
    /* need: the bytes the character still needs; size: all it has */
    uint32_t cp = c->keys.w[d->key], need = c->keys.w[d->key + 1] & 0xff,
             size = c->keys.w[d->key + 1] >> 8;
    if (need) {
        if ((b & 0xc0) != 0x80)
            return d->next[b] = DEAD;
        cp = cp << 6 | (b & 0x3f);
        need--;
    } else if (b < 0x80) {
        cp = b;
    } else if ((b & 0xe0) == 0xc0) {
        cp = b & 0x1f, need = 1, size = 2;
    } else if ((b & 0xf0) == 0xe0) {
        cp = b & 0x0f, need = 2, size = 3;
    } else if ((b & 0xf8) == 0xf0) {
        cp = b & 0x07, need = 3, size = 4;
    } else {
        return d->next[b] = DEAD;
    }
    int32_t to;
    size_t n = d->len - 2;
    if (need) { /* a character begun: some stack must take one it can become
                 * (not in fewer bytes: overlong forms are no characters) */
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        uint32_t lo = cp << (6 * need), hi = lo | ((1u << (6 * need)) - 1);
        lo = lo > least[size] ? lo : least[size];
        const uint32_t *stk = c->keys.w + d->key + 2;
        to = hi >= lo && cf_gstate_takes(c->g, stk, n, lo, hi) ? -4 : DEAD;
        if (to == -4) {
            cf_gwords copy = {0};
            for (size_t i = 0; i < n && to == -4; i++)
                if (cf_gwords_push(&copy, stk[i]))
                    to = -3;
            if (to == -4)
                to = intern(c, cp, need | size << 8, copy.w, n, c->st[s].base);
            cf_gwords_free(&copy);
        }
    } else {
        to = advance_cp(c, s, cp);
    }
    if (to == -3)
        return -3;
    c->st[s].next[b] = to;
    return to;
}

static bool can_end(const cf_constraint *c, int32_t s)
{
    const dstate *d = &c->st[s];
    return !c->keys.w[d->key + 1] && cf_gstate_can_end(c->keys.w + d->key + 2, d->len - 2);
}

static void drop_states(cf_constraint *c)
{
    for (size_t i = 0; i < c->n_st; i++) {
        free(c->st[i].next);
        free(c->st[i].mask);
        free(c->st[i].by_takers);
    }
    c->n_st = c->n_masks = 0;
}

/* Start the automaton over from the start state and the current one. */
static int restart(cf_constraint *c)
{
    cf_gwords cur = {0}, start = {0};
    const dstate *d = &c->st[c->cur], *s0 = &c->st[c->start];
    for (uint32_t i = 0; i < d->len; i++)
        if (cf_gwords_push(&cur, c->keys.w[d->key + i]))
            return -1;
    for (uint32_t i = 0; i < s0->len; i++)
        if (cf_gwords_push(&start, c->keys.w[s0->key + i]))
            return -1;
    drop_states(c);
    c->keys.n = 0;
    memset(c->hash, 0xff, c->hash_cap * sizeof *c->hash);
    c->start = intern(c, 0, 0, start.w + 2, start.n - 2, -1);
    int32_t base = intern(c, 0, 0, cur.w + 2, cur.n - 2, -1);
    c->cur = cur.w[1] && base >= 0 ? intern(c, cur.w[0], cur.w[1], cur.w + 2, cur.n - 2, base)
                                   : base;
    cf_gwords_free(&cur);
    cf_gwords_free(&start);
    return c->start < 0 || c->cur < 0 ? -1 : 0;
}

/* ---- the vocabulary's trie ------------------------------------------------ */

typedef struct piece {
    cf_str s;
    int32_t id;
} piece;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    size_t n = x->s.len < y->s.len ? x->s.len : y->s.len;
    int d = memcmp(x->s.ptr, y->s.ptr, n);
    if (d)
        return d;
    if (x->s.len != y->s.len)
        return x->s.len < y->s.len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The pieces sorted, each one shares the nodes of the longest prefix it has
 * in common with the one before and appends the rest: siblings come in
 * byte order and no list is searched. */
static int build_trie(cf_constraint *c)
{
    piece *pc = malloc((size_t)c->n_vocab * sizeof *pc);
    size_t n = 0, total = 1;
    for (int32_t i = 0; pc && i < c->n_vocab; i++) {
        cf_str p = cf_tok_piece(c->t, i, false);
        if (p.len && !cf_tok_is_eog(c->t, i)) {
            pc[n++] = (piece){p, i};
            total += p.len;
        }
    }
    size_t max_len = 0;
    for (size_t i = 0; pc && i < n; i++)
        max_len = pc[i].s.len > max_len ? pc[i].s.len : max_len;
    c->node = malloc(total * sizeof *c->node);
    uint32_t *last = malloc(total * sizeof *last);     /* each node's last child */
    uint32_t *path = malloc((max_len + 1) * sizeof *path); /* the previous piece's nodes */
    if (!pc || !c->node || !last || !path) {
        free(pc), free(last), free(path);
        return -1;
    }
    qsort(pc, n, sizeof *pc, cmp_piece);
    c->node[0] = (trie_node){0, 0, -1, 0};
    c->n_node = 1;
    path[0] = 0;
    size_t prev_len = 0;
    for (size_t i = 0; i < n; i++) {
        cf_str s = pc[i].s;
        size_t lcp = 0;
        if (i)
            while (lcp < s.len && lcp < prev_len && s.ptr[lcp] == pc[i - 1].s.ptr[lcp])
                lcp++;
        for (size_t d = lcp; d < s.len; d++) {
            uint32_t parent = path[d], k = (uint32_t)c->n_node++;
            c->node[k] = (trie_node){0, 0, -1, (uint8_t)s.ptr[d]};
            if (c->node[parent].child)
                c->node[last[parent]].sibling = k;
            else
                c->node[parent].child = k;
            last[parent] = k;
            path[d + 1] = k;
        }
        uint32_t at = path[s.len];
        c->tok_next[pc[i].id] = c->node[at].tok;
        c->node[at].tok = pc[i].id;
        prev_len = s.len;
    }
    free(pc), free(last), free(path);
    return 0;
}

int cf_constraint_create(const cf_grammar *g, const cf_tokenizer *t, cf_constraint **out,
                         cf_err *err)
{
    *out = NULL;
    cf_constraint *c = calloc(1, sizeof *c);
    if (!c)
        return cf_fail_as(err, CF_E_FAIL, "grammar: out of memory");
    c->g = g;
    c->t = t;
    c->n_vocab = cf_tok_n_vocab(t);
    c->mask_words = ((size_t)c->n_vocab + 63) / 64;
    c->tok_next = malloc((size_t)c->n_vocab * sizeof *c->tok_next);
    c->eog = malloc(64 * sizeof *c->eog);
    int rc = c->tok_next && c->eog && !rehash(c, 1024) && !build_trie(c) ? 0 : -1;
    if (!rc)
        c->n_eog = cf_tok_eog_ids(t, c->eog, 64);
    cf_gwords s0 = {0};
    if (!rc && !(rc = cf_gstate_start(g, &s0))) {
        c->start = c->cur = intern(c, 0, 0, s0.w, s0.n, -1);
        if (c->start == DEAD) {
            cf_gwords_free(&s0);
            cf_constraint_free(c);
            return cf_fail_as(err, CF_E_USAGE, "grammar: it matches nothing");
        }
        rc = c->start < 0;
    }
    cf_gwords_free(&s0);
    if (rc) {
        cf_constraint_free(c);
        return cf_fail_as(err, CF_E_FAIL, "grammar: out of memory");
    }
    *out = c;
    return 0;
}

void cf_constraint_free(cf_constraint *c)
{
    if (!c)
        return;
    drop_states(c);
    free(c->st);
    cf_gwords_free(&c->keys);
    free(c->hash);
    free(c->node);
    free(c->tok_next);
    free(c->eog);
    free(c->walk);
    free(c);
}

void cf_constraint_reset(cf_constraint *c)
{
    c->cur = c->start;
}

bool cf_constraint_can_end(const cf_constraint *c)
{
    return can_end(c, c->cur);
}

static int walk_push(cf_constraint *c, size_t *n, uint32_t node, int32_t s)
{
    if (*n + 2 > c->walk_cap) {
        size_t cap = c->walk_cap ? 2 * c->walk_cap : 4096;
        uint32_t *w = realloc(c->walk, cap * sizeof *w);
        if (!w)
            return -1;
        c->walk = w;
        c->walk_cap = cap;
    }
    c->walk[(*n)++] = node;
    c->walk[(*n)++] = (uint32_t)s;
    return 0;
}

/* Every token whose piece leads from state s to a live state. */
static int fill_mask(cf_constraint *c, int32_t s, uint64_t *m)
{
    memset(m, 0, c->mask_words * sizeof *m);
    size_t n = 0;
    for (uint32_t k = c->node[0].child; k; k = c->node[k].sibling)
        if (walk_push(c, &n, k, s))
            return -1;
    while (n) {
        int32_t from = (int32_t)c->walk[--n];
        uint32_t k = c->walk[--n];
        int32_t to = step(c, from, c->node[k].byte);
        if (to == -3)
            return -1;
        if (to < 0)
            continue;
        for (int32_t t = c->node[k].tok; t >= 0; t = c->tok_next[t])
            m[t / 64] |= 1ull << (t % 64);
        for (uint32_t j = c->node[k].child; j; j = c->node[j].sibling)
            if (walk_push(c, &n, j, to))
                return -1;
    }
    if (can_end(c, s))
        for (size_t i = 0; i < c->n_eog; i++)
            m[c->eog[i] / 64] |= 1ull << (c->eog[i] % 64);
    return 0;
}

const uint64_t *cf_constraint_mask(cf_constraint *c)
{
    if (c->n_st > MAX_STATES && restart(c))
        return NULL;
    dstate *d = &c->st[c->cur];
    if (d->mask)
        return d->mask;
    if ((c->n_masks + 1) * c->mask_words * 8 > MAX_MASK_BYTES) {
        for (size_t i = 0; i < c->n_st; i++) {
            free(c->st[i].mask);
            c->st[i].mask = NULL;
        }
        c->n_masks = 0;
    }
    uint64_t *m = malloc(c->mask_words * sizeof *m);
    if (!m || fill_mask(c, c->cur, m)) {
        free(m);
        return NULL;
    }
    c->st[c->cur].mask = m;
    c->n_masks++;
    return m;
}

int cf_constraint_accept(cf_constraint *c, cf_token tok, cf_err *err)
{
    if (tok < 0 || tok >= c->n_vocab)
        return cf_fail_as(err, CF_E_USAGE, "grammar: token %d is not in the vocabulary", tok);
    if (cf_tok_is_eog(c->t, tok)) {
        if (!can_end(c, c->cur))
            return cf_fail_as(err, CF_E_USAGE, "grammar: the output cannot end here");
        return 0;
    }
    cf_str p = cf_tok_piece(c->t, tok, false);
    int32_t s = p.len ? c->cur : DEAD;
    for (size_t i = 0; i < p.len && s >= 0; i++)
        s = step(c, s, (uint8_t)p.ptr[i]);
    if (s == -3)
        return cf_fail_as(err, CF_E_FAIL, "grammar: out of memory");
    if (s < 0)
        return cf_fail_as(err, CF_E_USAGE, "grammar: token %d does not fit the grammar here", tok);
    c->cur = s;
    return 0;
}
