/* Tokenize and detokenize: special tokens are cut out of the text first
 * (llama.cpp's tokenizer_st_partition), then each stretch of plain text
 * goes through the vocabulary's encoder. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer_internal.h"

/* A piece of the text being tokenized: plain text [off, off + len), a
 * special token (tok >= 0), or the ids of cf_tokenize_parts' part `off`
 * (tok == FRAG_IDS).  Kept as a linked list in an array. */
typedef struct frag {
    size_t off, len;
    cf_token tok;
    int32_t next;
} frag;

#define FRAG_IDS (-2)

/* Bytes [lo, hi) of the text where control tokens are not recognised. */
typedef struct guard {
    size_t lo, hi;
} guard;

typedef struct guards {
    const guard *g;
    size_t n;
} guards;

static bool guarded(guards gs, size_t at, size_t len)
{
    for (size_t i = 0; i < gs.n; i++)
        if (at < gs.g[i].hi && gs.g[i].lo < at + len)
            return true;
    return false;
}

typedef struct frag_list {
    frag *f;
    int32_t n, cap, head;
} frag_list;

static int32_t frag_new(frag_list *l, frag f)
{
    if (l->n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 16;
        frag *p = realloc(l->f, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        l->f = p;
        l->cap = cap;
    }
    l->f[l->n] = f;
    return l->n++;
}

static int32_t *link_of(frag_list *l, int32_t prev)
{
    return prev < 0 ? &l->head : &l->f[prev].next;
}

static inline bool c_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Cut every occurrence of special token id out of the plain-text
 * fragments, left to right, as llama.cpp does one token at a time; a
 * control token is not cut where it overlaps a guarded range. */
static int cut_token(const cf_tokenizer *t, cf_token id, const char *text, guards gs, frag_list *l)
{
    cf_str s = t->text[id];
    uint32_t attr = t->attr[id];
    bool control = attr & (CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_UNKNOWN);
    /* the node whose link is followed, -1 for the head: an index, as
     * frag_new may move the array */
    int32_t prev = -1, cur;
    while ((cur = *link_of(l, prev)) >= 0) {
        if (l->f[cur].tok != CF_TOKEN_NULL) {
            prev = cur;
            continue;
        }
        size_t off = l->f[cur].off, len = l->f[cur].len, from = off;
        const char *m;
        while ((m = memmem(text + from, off + len - from, s.ptr, s.len)) && control &&
               guarded(gs, (size_t)(m - text), s.len))
            from = (size_t)(m - text) + 1;
        if (!m) {
            prev = cur;
            continue;
        }
        size_t at = (size_t)(m - text), end = off + len;
        size_t left_len = at - off;
        if (attr & CF_TOKEN_ATTR_LSTRIP)
            while (left_len > 0 && c_space(text[off + left_len - 1]))
                left_len--;
        size_t r_off = at + s.len, r_len = end - r_off;
        if (attr & CF_TOKEN_ATTR_RSTRIP)
            while (r_len > 0 && c_space(text[r_off])) {
                r_off++;
                r_len--;
            }
        int32_t after = l->f[cur].next;
        int32_t tok = frag_new(l, (frag){0, 0, id, -1});
        if (tok < 0)
            return -1;
        int32_t right = -1;
        if (r_len > 0) {
            right = frag_new(l, (frag){r_off, r_len, CF_TOKEN_NULL, after});
            if (right < 0)
                return -1;
        }
        l->f[tok].next = right >= 0 ? right : after;
        if (left_len > 0) { /* reuse the current node for the left part */
            l->f[cur].len = left_len;
            l->f[cur].next = tok;
        } else {
            *link_of(l, prev) = tok;
        }
        /* go on searching in what follows the token */
        prev = tok;
    }
    return 0;
}

/* Tokenize the fragments in l (plain text of `text`, and ids of parts):
 * cut the special tokens out of the plain text, then encode each stretch.
 * skip_control: control tokens stay text everywhere (parse_special off). */
static int tokenize_frags(const cf_tokenizer *t, const char *text, size_t len, frag_list *l,
                          guards gs, bool skip_control, const cf_tok_part *parts, bool add_special,
                          cf_tokens *out)
{
    bool present[256] = {false};
    for (size_t i = 0; i < len; i++)
        present[(unsigned char)text[i]] = true;
    for (int32_t i = 0; len > 0 && i < t->n_special; i++) {
        cf_token id = t->special[i];
        if (skip_control && (t->attr[id] & (CF_TOKEN_ATTR_CONTROL | CF_TOKEN_ATTR_UNKNOWN)))
            continue;
        if (!present[(unsigned char)t->text[id].ptr[0]])
            continue;
        if (cut_token(t, id, text, gs, l))
            return -1;
    }
    if (add_special && t->add_bos && t->ids.bos >= 0 && cf_tokens_push(out, t->ids.bos))
        return -1;
    /* SPM: plain text at the start or after a special token gets a space */
    bool prev_special = true;
    for (int32_t i = l->head; i >= 0; i = l->f[i].next) {
        const frag *f = &l->f[i];
        int r = 0;
        if (f->tok >= 0)
            r = cf_tokens_push(out, f->tok);
        else if (f->tok == FRAG_IDS)
            for (size_t k = 0; k < parts[f->off].n_ids && !r; k++)
                r = cf_tokens_push(out, parts[f->off].ids[k]);
        else if (t->type == CF_TOK_SPM)
            r = cf_spm_encode(t, text + f->off, f->len, t->add_space_prefix && prev_special, out);
        else
            r = cf_bpe_encode(t, text + f->off, f->len, out);
        if (r)
            return -1;
        prev_special = f->tok >= 0;
    }
    if (add_special && t->add_eos && t->ids.eos >= 0 && cf_tokens_push(out, t->ids.eos))
        return -1;
    return 0;
}

int cf_tokenize(const cf_tokenizer *t, const char *text, size_t len, bool add_special,
                bool parse_special, cf_tokens *out, cf_err *err)
{
    frag_list l = {.head = -1};
    int rc = -1;
    if (len > CF_TOK_MAX_TEXT)
        return cf_fail(err, "text of %zu bytes is too long to tokenize (at most %zu)", len,
                       CF_TOK_MAX_TEXT);
    if (len > 0) {
        if (frag_new(&l, (frag){0, len, CF_TOKEN_NULL, -1}) < 0)
            goto out;
        l.head = 0;
    }
    rc = tokenize_frags(t, text, len, &l, (guards){NULL, 0}, !parse_special, NULL, add_special, out);
out:
    free(l.f);
    if (rc)
        cf_fail(err, "out of memory tokenizing %zu bytes", len);
    return rc;
}

int cf_tokenize_parts(const cf_tokenizer *t, const cf_tok_part *parts, size_t n, bool add_special,
                      cf_tokens *out, cf_err *err)
{
    size_t len = 0, n_guard = 0;
    for (size_t i = 0; i < n; i++)
        if (parts[i].kind != CF_PART_TOKENS) {
            len += parts[i].len;
            n_guard += parts[i].kind == CF_PART_LITERAL;
        }
    char *text = malloc(len + 1);
    guard *g = malloc((n_guard + 1) * sizeof *g);
    frag_list l = {.head = -1};
    int rc = -1;
    if (!text || !g)
        goto out;
    /* the text parts end to end; a run of them is one plain fragment */
    int32_t prev = -1;
    size_t pos = 0, run = 0;
    n_guard = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && parts[i].kind != CF_PART_TOKENS) {
            memcpy(text + pos, parts[i].text, parts[i].len);
            if (parts[i].kind == CF_PART_LITERAL)
                g[n_guard++] = (guard){pos, pos + parts[i].len};
            pos += parts[i].len;
            continue;
        }
        if (pos > run) {
            int32_t f = frag_new(&l, (frag){run, pos - run, CF_TOKEN_NULL, -1});
            if (f < 0)
                goto out;
            *link_of(&l, prev) = f;
            prev = f;
        }
        run = pos;
        if (i < n) {
            int32_t f = frag_new(&l, (frag){i, 0, FRAG_IDS, -1});
            if (f < 0)
                goto out;
            *link_of(&l, prev) = f;
            prev = f;
        }
    }
    rc = tokenize_frags(t, text, len, &l, (guards){g, n_guard}, false, parts, add_special, out);
out:
    free(text);
    free(g);
    free(l.f);
    if (rc)
        cf_fail(err, "out of memory tokenizing a prompt of %zu bytes", len);
    return rc;
}

/* ---- back to text ------------------------------------------------------------ */

static inline bool valid(const cf_tokenizer *t, cf_token id)
{
    return id >= 0 && id < t->n_vocab;
}

cf_str cf_tok_piece(const cf_tokenizer *t, cf_token id, bool special)
{
    cf_str none = {"", 0};
    if (!valid(t, id))
        return none;
    if (!special && (t->attr[id] & (CF_TOKEN_ATTR_UNKNOWN | CF_TOKEN_ATTR_CONTROL)))
        return none;
    return t->piece[id];
}

size_t cf_detokenize(const cf_tokenizer *t, const cf_token *ids, size_t n, bool remove_special,
                     bool unparse_special, char *buf, size_t cap)
{
    bool strip_space = t->add_space_prefix;
    if (remove_special && t->add_bos && n > 0 && ids[0] == t->ids.bos) {
        strip_space = false; /* as llama.cpp: the space stays after a dropped BOS */
        ids++;
        n--;
    }
    if (remove_special && t->add_eos && n > 0 && ids[n - 1] == t->ids.eos)
        n--;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        cf_str p = cf_tok_piece(t, ids[i], unparse_special);
        if (strip_space && p.len > 0 && p.ptr[0] == ' ') {
            p.ptr++;
            p.len--;
        }
        strip_space = false;
        if (total < cap)
            memcpy(buf + total, p.ptr, p.len < cap - total ? p.len : cap - total);
        total += p.len;
    }
    return total;
}

/* ---- facts ------------------------------------------------------------------- */

cf_tok_type cf_tok_type_of(const cf_tokenizer *t)
{
    return t->type;
}

const char *cf_tok_model_name(const cf_tokenizer *t)
{
    return t->model;
}

const char *cf_tok_pre_name(const cf_tokenizer *t)
{
    return t->pre;
}

int32_t cf_tok_n_vocab(const cf_tokenizer *t)
{
    return t->n_vocab;
}

const cf_tok_special *cf_tok_special_ids(const cf_tokenizer *t)
{
    return &t->ids;
}

bool cf_tok_add_bos(const cf_tokenizer *t)
{
    return t->add_bos;
}

bool cf_tok_add_eos(const cf_tokenizer *t)
{
    return t->add_eos;
}

bool cf_tok_is_eog(const cf_tokenizer *t, cf_token id)
{
    return valid(t, id) && (t->attr[id] & TOK_ATTR_EOG);
}

size_t cf_tok_eog_ids(const cf_tokenizer *t, cf_token *ids, size_t cap)
{
    size_t n = 0;
    for (cf_token i = 0; i < t->n_vocab; i++)
        if (t->attr[i] & TOK_ATTR_EOG) {
            if (n < cap)
                ids[n] = i;
            n++;
        }
    return n;
}

bool cf_tok_is_control(const cf_tokenizer *t, cf_token id)
{
    return valid(t, id) && (t->attr[id] & CF_TOKEN_ATTR_CONTROL);
}

uint32_t cf_tok_attr(const cf_tokenizer *t, cf_token id)
{
    return valid(t, id) ? t->attr[id] & ~TOK_ATTR_EOG : 0;
}

cf_str cf_tok_text(const cf_tokenizer *t, cf_token id)
{
    cf_str none = {"", 0};
    return valid(t, id) ? t->text[id] : none;
}

cf_token cf_tok_find(const cf_tokenizer *t, const char *s, size_t len)
{
    return cf_strmap_get(&t->map, s, len);
}
