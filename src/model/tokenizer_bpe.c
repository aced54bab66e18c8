/* Byte-level BPE as llama.cpp's llm_tokenizer_bpe does it: the text is
 * decoded (bad bytes become U+FFFD), split into words by the vocabulary's
 * pre-tokenizer, and each word's bytes, seen as GPT-2 characters, are
 * merged pairwise in merge-rank order (ties: leftmost) until no listed merge
 * applies.  Each resulting piece is a token, or else falls back to the
 * tokens of its single bytes where there are any.
 *
 * Merges are looked up by symbol ids instead of strings: every string that
 * a merge names or makes is interned once at load. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer_internal.h"
#include "unicode.h"

#define SYM_DEAD (-2)

/* ---- load: intern merge strings, fill the pair table ----------------------- */

typedef struct interner {
    const cf_tokenizer *t;
    char *bytes; /* extra strings, back to back */
    size_t n_bytes, cap_bytes;
    uint64_t *ref; /* offset << 24 | length of extra string i */
    int32_t n, cap;
    int32_t *slot; /* extra index + 1 */
    uint32_t mask;
} interner;

static cf_str xstr(const interner *in, int32_t i)
{
    return (cf_str){in->bytes + (in->ref[i] >> 24), (size_t)(in->ref[i] & 0xFFFFFF)};
}

static int grow_slots(interner *in)
{
    uint32_t cap = in->mask ? (in->mask + 1) * 2 : 1024;
    int32_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (int32_t i = 0; i < in->n; i++) {
        cf_str s = xstr(in, i);
        uint32_t h = (uint32_t)cf_str_hash(s.ptr, s.len) & (cap - 1);
        while (slot[h])
            h = (h + 1) & (cap - 1);
        slot[h] = i + 1;
    }
    free(in->slot);
    in->slot = slot;
    in->mask = cap - 1;
    return 0;
}

/* The symbol id of s: its token id, else an extra string (added when new).
 * -1 when out of memory. */
static int32_t intern(interner *in, const char *s, size_t n)
{
    int32_t id = cf_strmap_get(&in->t->map, s, n);
    if (id >= 0)
        return id;
    if (n > 0xFFFFFF)
        return -1;
    if (!in->mask || (uint32_t)in->n * 2 >= in->mask)
        if (grow_slots(in))
            return -1;
    uint32_t h = (uint32_t)cf_str_hash(s, n) & in->mask;
    for (; in->slot[h]; h = (h + 1) & in->mask) {
        cf_str x = xstr(in, in->slot[h] - 1);
        if (x.len == n && memcmp(x.ptr, s, n) == 0)
            return in->t->n_vocab + in->slot[h] - 1;
    }
    if (in->n == in->cap) {
        int32_t cap = in->cap ? in->cap * 2 : 1024;
        uint64_t *ref = realloc(in->ref, (size_t)cap * sizeof *ref);
        if (!ref)
            return -1;
        in->ref = ref;
        in->cap = cap;
    }
    if (in->n_bytes + n > in->cap_bytes) {
        size_t cap = (in->cap_bytes + n) * 2;
        char *b = realloc(in->bytes, cap);
        if (!b)
            return -1;
        in->bytes = b;
        in->cap_bytes = cap;
    }
    if (in->n_bytes >= (1ull << 39))
        return -1;
    memcpy(in->bytes + in->n_bytes, s, n);
    in->ref[in->n] = (uint64_t)in->n_bytes << 24 | n;
    in->n_bytes += n;
    in->slot[h] = in->n + 1;
    return in->t->n_vocab + in->n++;
}

static inline uint64_t pair_key(int32_t l, int32_t r)
{
    return ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) + 1;
}

static const bpe_pair *pair_find(const cf_tokenizer *t, uint64_t key)
{
    for (uint64_t i = (key * 0x9E3779B97F4A7C15ull >> 20) & t->pair_mask;; i = (i + 1) & t->pair_mask) {
        const bpe_pair *p = &t->pairs[i];
        if (p->key == key || p->key == 0)
            return p;
    }
}

int cf_bpe_prepare(cf_tokenizer *t, const cf_gguf_kv *merges, cf_err *err)
{
    if (merges->n >= (1u << 24)) /* ranks must stay exact as floats */
        return cf_fail(err, "tokenizer.ggml.merges: %llu merges is too many",
                       (unsigned long long)merges->n);
    uint64_t cap = 16;
    while (cap < 2 * merges->n)
        cap <<= 1;
    t->pairs = calloc(cap, sizeof *t->pairs);
    t->pair_mask = cap - 1;
    interner in = {.t = t};
    char *cat = NULL;
    size_t cat_cap = 0;
    int rc = -1;
    if (!t->pairs)
        goto out;
    for (uint64_t i = 0; i < merges->n; i++) {
        cf_str m = merges->strs[i];
        /* "left right", split at the first space after the first byte */
        const char *sp = m.len > 1 ? memchr(m.ptr + 1, ' ', m.len - 1) : NULL;
        if (!sp)
            continue; /* llama.cpp files it under two empty strings: never used */
        size_t nl = (size_t)(sp - m.ptr), nr = m.len - nl - 1;
        if (nr == 0)
            continue;
        if (nl + nr > cat_cap) {
            cat_cap = 2 * (nl + nr);
            char *c = realloc(cat, cat_cap);
            if (!c)
                goto out;
            cat = c;
        }
        memcpy(cat, m.ptr, nl);
        memcpy(cat + nl, sp + 1, nr);
        int32_t l = intern(&in, m.ptr, nl), r = intern(&in, sp + 1, nr), res = intern(&in, cat, nl + nr);
        if (l < 0 || r < 0 || res < 0)
            goto out;
        bpe_pair *p = (bpe_pair *)pair_find(t, pair_key(l, r));
        if (p->key == 0) /* the first listing of a pair wins */
            *p = (bpe_pair){pair_key(l, r), (int32_t)i, res};
    }
    for (int b = 0; b < 256; b++) {
        char enc[4];
        size_t k = cf_utf8_encode(cf_gpt2_byte_cp((uint8_t)b), enc);
        t->byte_sym[b] = intern(&in, enc, k);
        if (t->byte_sym[b] < 0)
            goto out;
        t->byte_fb[b][0] = tok_lookup_text(t, enc, 1);
        t->byte_fb[b][1] = k > 1 ? tok_lookup_text(t, enc + 1, 1) : CF_TOKEN_NULL;
    }
    rc = 0;
out:
    if (rc)
        cf_fail(err, "out of memory reading %llu merges", (unsigned long long)merges->n);
    free(cat);
    free(in.bytes);
    free(in.ref);
    free(in.slot);
    return rc;
}

/* ---- encode ------------------------------------------------------------------ */

typedef struct bpe_work {
    uint32_t *cp, *words, *tmp;
    uint8_t *fl;
    char *word, *enc;
    int32_t *sym, *prev, *next;
    uint32_t *n;
    tok_queue q;
} bpe_work;

static int add_bigram(const cf_tokenizer *t, bpe_work *w, int32_t left, int32_t right)
{
    if (left < 0 || right < 0 || w->sym[left] < 0 || w->sym[right] < 0)
        return 0;
    const bpe_pair *p = pair_find(t, pair_key(w->sym[left], w->sym[right]));
    if (!p->key)
        return 0;
    /* a, b: the two symbols, to tell when a side has been merged since */
    return tok_queue_push(&w->q,
                          (tok_bigram){-(float)p->rank, left, right, w->sym[left], w->sym[right]});
}

/* Merge the bytes of one word and append its tokens. */
static int encode_word(const cf_tokenizer *t, bpe_work *w, const unsigned char *b, int32_t n,
                       cf_tokens *out)
{
    if (t->pretok.ignore_merges) { /* a word that is a token stays whole */
        size_t k = 0;
        for (int32_t i = 0; i < n; i++)
            k += cf_utf8_encode(cf_gpt2_byte_cp(b[i]), w->enc + k);
        cf_token id = tok_lookup_text(t, w->enc, k);
        if (id >= 0)
            return cf_tokens_push(out, id);
    }
    for (int32_t i = 0; i < n; i++) {
        w->sym[i] = t->byte_sym[b[i]];
        w->prev[i] = i - 1;
        w->next[i] = i + 1 < n ? i + 1 : -1;
        w->n[i] = 1;
    }
    w->q.n = 0;
    for (int32_t i = 1; i < n; i++)
        if (add_bigram(t, w, i - 1, i))
            return -1;
    while (w->q.n) {
        tok_bigram g = tok_queue_pop(&w->q);
        if (w->sym[g.left] != g.a || w->sym[g.right] != g.b)
            continue; /* stale: one side has been merged since */
        const bpe_pair *p = pair_find(t, pair_key(g.a, g.b));
        w->sym[g.left] = p->result;
        w->n[g.left] += w->n[g.right];
        w->sym[g.right] = SYM_DEAD;
        w->next[g.left] = w->next[g.right];
        if (w->next[g.right] >= 0)
            w->prev[w->next[g.right]] = g.left;
        if (add_bigram(t, w, w->prev[g.left], g.left) || add_bigram(t, w, g.left, w->next[g.left]))
            return -1;
    }
    for (int32_t i = 0; i >= 0; i = w->next[i]) {
        int32_t s = w->sym[i];
        if (s >= 0 && s < t->n_vocab && !(t->attr[s] & TOK_ATTR_NOT_TEXT)) {
            if (cf_tokens_push(out, s))
                return -1;
            continue;
        }
        /* no token: llama.cpp looks up each byte of the piece's text */
        for (uint32_t j = 0; j < w->n[i]; j++)
            for (int k = 0; k < 2; k++)
                if (t->byte_fb[b[i + (int32_t)j]][k] >= 0 &&
                    cf_tokens_push(out, t->byte_fb[b[i + (int32_t)j]][k]))
                    return -1;
    }
    return 0;
}

int cf_bpe_encode(const cf_tokenizer *t, const char *text, size_t len, cf_tokens *out)
{
    if (len == 0)
        return 0;
    if (len > INT32_MAX / 4)
        return -1;
    bpe_work w = {0};
    size_t n = len;
    w.cp = malloc(n * sizeof *w.cp);
    w.words = malloc(n * sizeof *w.words);
    w.tmp = malloc(n * sizeof *w.tmp);
    w.fl = malloc(n);
    /* a word re-encoded: U+FFFD for a bad byte takes 3 bytes */
    w.word = malloc(3 * n);
    w.enc = malloc(6 * n);
    w.sym = malloc(3 * n * sizeof *w.sym);
    w.prev = malloc(3 * n * sizeof *w.prev);
    w.next = malloc(3 * n * sizeof *w.next);
    w.n = malloc(3 * n * sizeof *w.n);
    int rc = -1;
    if (!w.cp || !w.words || !w.tmp || !w.fl || !w.word || !w.enc || !w.sym || !w.prev ||
        !w.next || !w.n)
        goto out;
    size_t n_cp = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c = cf_utf8_decode((const unsigned char *)text, len, &i);
        w.cp[n_cp] = c;
        w.fl[n_cp++] = (uint8_t)cf_ucd_flags(c);
    }
    size_t n_words = cf_pretok_split(&t->pretok, w.cp, w.fl, n_cp, w.words, w.tmp);
    size_t at = 0;
    for (size_t k = 0; k < n_words; k++) {
        int32_t nb = 0;
        for (uint32_t j = 0; j < w.words[k]; j++)
            nb += (int32_t)cf_utf8_encode(w.cp[at + j], w.word + nb);
        at += w.words[k];
        if (encode_word(t, &w, (const unsigned char *)w.word, nb, out))
            goto out;
    }
    rc = 0;
out:
    free(w.cp);
    free(w.words);
    free(w.tmp);
    free(w.fl);
    free(w.word);
    free(w.enc);
    free(w.sym);
    free(w.prev);
    free(w.next);
    free(w.n);
    free(w.q.e);
    return rc;
}
