/* SentencePiece-style encoding as llama.cpp's llm_tokenizer_spm does it:
 * spaces become U+2581, the text is cut into UTF-8 characters, and the
 * adjacent pair whose concatenation is the highest-scoring token is merged
 * (ties: leftmost) until no pair forms a token; what is left and is no token
 * falls back to <0xNN> byte tokens.
 *
 * Merges never reach across a place where the byte before and the byte
 * after appear next to each other in no token, so the text is cut there and
 * each segment merged on its own: the same result, with small queues. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer_internal.h"
#include "unicode.h"

typedef struct spm_sym {
    int32_t prev, next;
    uint32_t start, n;
} spm_sym;

typedef struct spm_work {
    spm_sym *sym;
    tok_queue q;
} spm_work;

int cf_spm_prepare(cf_tokenizer *t, cf_err *err)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        char buf[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
        char raw = (char)b;
        cf_token id = cf_strmap_get(&t->map, buf, 6);
        t->byte_tok[b] = id >= 0 ? id : cf_strmap_get(&t->map, &raw, 1);
    }
    t->join = calloc(65536 / 8, 1);
    if (!t->join)
        return cf_fail(err, "out of memory");
    for (cf_token i = 0; i < t->n_vocab; i++) {
        if (t->attr[i] & TOK_ATTR_NOT_TEXT)
            continue;
        const unsigned char *s = (const unsigned char *)t->text[i].ptr;
        for (size_t k = 1; k < t->text[i].len; k++) {
            unsigned pair = (unsigned)s[k - 1] << 8 | s[k];
            t->join[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
    return 0;
}

static inline bool joinable(const cf_tokenizer *t, unsigned char a, unsigned char b)
{
    unsigned pair = (unsigned)a << 8 | b;
    return t->join[pair >> 3] >> (pair & 7) & 1;
}

static int try_bigram(const cf_tokenizer *t, spm_work *w, const char *text, int32_t left,
                      int32_t right)
{
    if (left < 0 || right < 0)
        return 0;
    const spm_sym *l = &w->sym[left], *r = &w->sym[right];
    cf_token id = tok_lookup_text(t, text + l->start, l->n + r->n);
    if (id < 0)
        return 0;
    /* a: the pair's length, to tell when a side has changed since */
    return tok_queue_push(&w->q, (tok_bigram){t->score[id], left, right, (int32_t)(l->n + r->n), 0});
}

static int emit_symbol(const cf_tokenizer *t, const char *s, size_t n, cf_tokens *out)
{
    cf_token id = tok_lookup_text(t, s, n);
    if (id >= 0)
        return cf_tokens_push(out, id);
    for (size_t i = 0; i < n; i++) {
        /* llama.cpp throws when a byte has no token; use <unk> if any */
        cf_token b = t->byte_tok[(unsigned char)s[i]];
        if (b < 0)
            b = t->ids.unk;
        if (b >= 0 && cf_tokens_push(out, b))
            return -1;
    }
    return 0;
}

/* Merge the symbols [first, last] (a linked run) and emit the result. */
static int merge_segment(const cf_tokenizer *t, spm_work *w, const char *text, int32_t first,
                         int32_t last, cf_tokens *out)
{
    w->q.n = 0;
    for (int32_t i = first; i < last; i++)
        if (try_bigram(t, w, text, i, i + 1))
            return -1;
    while (w->q.n) {
        tok_bigram b = tok_queue_pop(&w->q);
        spm_sym *l = &w->sym[b.left], *r = &w->sym[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != (uint32_t)b.a)
            continue; /* one side has changed since */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            w->sym[r->next].prev = b.left;
        if (try_bigram(t, w, text, l->prev, b.left) || try_bigram(t, w, text, b.left, l->next))
            return -1;
    }
    for (int32_t i = first; i >= 0; i = w->sym[i].next)
        if (emit_symbol(t, text + w->sym[i].start, w->sym[i].n, out))
            return -1;
    return 0;
}

int cf_spm_encode(const cf_tokenizer *t, const char *raw, size_t len, bool space_prefix,
                  cf_tokens *out)
{
    /* the text with spaces escaped: at most 3 bytes per byte, +3 prefix */
    size_t cap = 3 * len + 3;
    char *text = malloc(cap ? cap : 1);
    spm_work w = {0};
    w.sym = malloc((cap ? cap : 1) * sizeof *w.sym);
    int rc = -1;
    if (!text || !w.sym)
        goto out;
    size_t n = 0;
    if (space_prefix) {
        memcpy(text, "\xe2\x96\x81", 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (raw[i] == ' ') {
            memcpy(text + n, "\xe2\x96\x81", 3);
            n += 3;
        } else {
            text[n++] = raw[i];
        }
    }
    /* characters, linked within segments */
    int32_t n_sym = 0, seg_first = 0;
    for (size_t off = 0; off < n;) {
        size_t clen = cf_utf8_len((unsigned char)text[off]);
        if (clen > n - off)
            clen = n - off;
        bool cut = n_sym > 0 && !joinable(t, (unsigned char)text[off - 1], (unsigned char)text[off]);
        if (cut) {
            w.sym[n_sym - 1].next = -1;
            if (merge_segment(t, &w, text, seg_first, n_sym - 1, out))
                goto out;
            seg_first = n_sym;
        }
        w.sym[n_sym] = (spm_sym){n_sym == seg_first ? -1 : n_sym - 1, n_sym + 1, (uint32_t)off,
                                 (uint32_t)clen};
        n_sym++;
        off += clen;
    }
    if (n_sym) {
        w.sym[n_sym - 1].next = -1;
        if (merge_segment(t, &w, text, seg_first, n_sym - 1, out))
            goto out;
    }
    rc = 0;
out:
    free(text);
    free(w.sym);
    free(w.q.e);
    return rc;
}
