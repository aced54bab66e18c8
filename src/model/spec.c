/* Speculative decoding (spec.h): guesses from a draft model or from the
 * context, checked by one batched pass of the target. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/spec.h"

struct cf_spec {
    cf_ctx *t, *d; /* target, draft (NULL: lookup) */
    cf_spec_params p;
    int n_vocab;
    int32_t *hist; /* the tokens of the target's cache */
    int n_hist;
    int d_keep;      /* the draft's cache holds hist[0..d_keep) */
    int32_t *batch;  /* x and the guesses */
    float *logits;   /* a row for each */
    float *dlogits;  /* the draft's, for its next guess */
    cf_spec_stats st;
};

void cf_spec_params_default(cf_spec_params *p)
{
    *p = (cf_spec_params){.draft_max = 16, .draft_min = 0, .p_min = 0.75f, .ngram_min = 2, .ngram_max = 4};
}

int cf_spec_params_check(const cf_spec_params *p, cf_err *err)
{
    if (p->draft_max < 1 || p->draft_max > 64)
        return cf_fail(err, "draft-max %d is out of range (1..64)", p->draft_max);
    if (p->draft_min < 0 || p->draft_min > p->draft_max)
        return cf_fail(err, "draft-min %d is out of range (0..draft-max %d)", p->draft_min, p->draft_max);
    if (!(p->p_min >= 0.0f && p->p_min <= 1.0f))
        return cf_fail(err, "draft-p-min %g is out of range (0..1)", (double)p->p_min);
    if (p->ngram_min < 1 || p->ngram_max < p->ngram_min || p->ngram_max > 16)
        return cf_fail(err, "lookup n-grams %d..%d are out of range (1..16, min <= max)", p->ngram_min,
                       p->ngram_max);
    return 0;
}

int cf_spec_vocab_check(const cf_tokenizer *target, const cf_tokenizer *draft, cf_err *err)
{
    const int32_t n = cf_tok_n_vocab(target);
    if (cf_tok_n_vocab(draft) != n)
        return cf_fail(err, "the draft model's vocabulary has %d tokens, the model's %d: they must be the same",
                       cf_tok_n_vocab(draft), n);
    for (int32_t id = 0; id < n; id++) {
        cf_str a = cf_tok_text(target, id), b = cf_tok_text(draft, id);
        if (a.len != b.len || memcmp(a.ptr, b.ptr, a.len) != 0)
            return cf_fail(err, "the draft model's vocabulary differs from the model's at token %d: they must be "
                                "the same", id);
    }
    return 0;
}

void cf_draft_close(cf_draft *d)
{
    cf_ctx_free(d->ctx);
    cf_tokenizer_free(d->tok);
    cf_model_free(d->m);
    *d = (cf_draft){0};
}

int cf_draft_open(cf_draft *d, const char *path, cf_load_mode mode, const cf_ctx *target,
                  const cf_tokenizer *target_tok, cf_err *err)
{
    *d = (cf_draft){0};
    cf_ctx_params cp = {.n_ctx = cf_ctx_n_ctx(target), .n_threads = cf_ctx_n_threads(target),
                        .type_k = CF_KV_F16, .type_v = CF_KV_F16};
    int rc = 0;
    if (cf_model_load_as(path, NULL, mode, &d->m, err) || cf_tokenizer_create(cf_model_gguf(d->m), &d->tok, err))
        rc = cf_err_class(err, CF_E_MODEL);
    else if (cf_spec_vocab_check(target_tok, d->tok, err))
        rc = cf_err_class(err, CF_E_USAGE);
    else if (cf_ctx_new(d->m, &cp, &d->ctx, err))
        rc = -1;
    if (rc)
        cf_draft_close(d);
    return rc;
}

void cf_spec_free(cf_spec *s)
{
    if (!s)
        return;
    free(s->hist);
    free(s->batch);
    free(s->logits);
    free(s->dlogits);
    free(s);
}

int cf_spec_new(cf_ctx *target, cf_ctx *draft, const cf_spec_params *p, cf_spec **out, cf_err *err)
{
    *out = NULL;
    if (cf_spec_params_check(p, err) != 0)
        return -1;
    const int n_vocab = cf_model_hparams(cf_ctx_model(target))->n_vocab;
    if (draft && cf_model_hparams(cf_ctx_model(draft))->n_vocab != n_vocab)
        return cf_fail(err, "the draft model's vocabulary has %d tokens, the model's %d: they must be the same",
                       cf_model_hparams(cf_ctx_model(draft))->n_vocab, n_vocab);
    cf_spec *s = calloc(1, sizeof *s);
    if (!s)
        return cf_fail(err, "out of memory");
    *s = (cf_spec){.t = target, .d = draft, .p = *p, .n_vocab = n_vocab};
    s->hist = malloc((size_t)cf_ctx_n_ctx(target) * sizeof *s->hist);
    s->batch = malloc((size_t)(p->draft_max + 1) * sizeof *s->batch);
    s->logits = malloc((size_t)(p->draft_max + 1) * (size_t)n_vocab * sizeof *s->logits);
    s->dlogits = draft ? malloc((size_t)n_vocab * sizeof *s->dlogits) : NULL;
    if (!s->hist || !s->batch || !s->logits || (draft && !s->dlogits)) {
        cf_spec_free(s);
        return cf_fail(err, "out of memory for speculative decoding (%d guesses of %d logits)", p->draft_max,
                       n_vocab);
    }
    *out = s;
    return 0;
}

int cf_spec_begin(cf_spec *s, const int32_t *tokens, int n, cf_err *err)
{
    if (n != cf_ctx_n_past(s->t) || n > cf_ctx_n_ctx(s->t))
        return cf_fail(err, "speculative decoding: %d tokens given for a cache of %d", n, cf_ctx_n_past(s->t));
    /* the draft keeps what it shares with the tokens it had */
    int same = 0;
    while (same < s->d_keep && same < n && s->hist[same] == tokens[same])
        same++;
    memmove(s->hist, tokens, (size_t)n * sizeof *tokens);
    s->n_hist = n;
    s->d_keep = same;
    if (s->d && cf_ctx_n_past(s->d) > same && cf_ctx_kv_truncate(s->d, same, err) != 0)
        return -1;
    return 0;
}

const float *cf_spec_logits(const cf_spec *s, int i)
{
    return s->logits + (size_t)i * (size_t)s->n_vocab;
}

const cf_spec_stats *cf_spec_get_stats(const cf_spec *s)
{
    return &s->st;
}

/* The most likely token (the lowest id on ties) and its probability. */
static int32_t most_likely(const float *l, int n, float *prob)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[best])
            best = i;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += exp((double)(l[i] - l[best]));
    *prob = (float)(1.0 / sum);
    return best;
}

/* The draft's cache cut to what it shares with hist[0..keep): its tokens
 * past d_keep are guesses, and those kept are hist's. */
static int draft_settle(cf_spec *s, int keep, cf_err *err)
{
    if (!s->d)
        return 0;
    const int have = cf_ctx_n_past(s->d);
    s->d_keep = have < keep ? have : keep;
    return have > s->d_keep ? cf_ctx_kv_truncate(s->d, s->d_keep, err) : 0;
}

/* Up to kmax guesses from the draft model after hist (x last). */
static int draft_guesses(cf_spec *s, int32_t *g, int kmax, cf_err *err)
{
    /* the last guess is not evaluated by the draft */
    const int room = cf_ctx_n_ctx(s->d) - s->n_hist + 1;
    if (kmax > room)
        kmax = room;
    if (kmax < 1)
        return 0;
    /* the draft evaluates what it has not seen, the last token at least,
     * for its logits */
    int from = s->d_keep < s->n_hist ? s->d_keep : s->n_hist - 1;
    if (cf_ctx_n_past(s->d) > from && cf_ctx_kv_truncate(s->d, from, err) != 0)
        return -1;
    if (cf_ctx_decode(s->d, s->hist + from, s->n_hist - from, s->dlogits, false, err) != 0)
        return -1;
    s->d_keep = s->n_hist;
    int k = 0;
    while (k < kmax) {
        float prob;
        const int32_t id = most_likely(s->dlogits, s->n_vocab, &prob);
        if (prob < s->p.p_min)
            break;
        g[k++] = id;
        if (k == kmax)
            break;
        if (cf_ctx_decode(s->d, &id, 1, s->dlogits, false, err) != 0)
            return -1;
    }
    return k;
}

/* Up to kmax guesses from the context: the tokens that followed the latest
 * earlier occurrence of its longest suffix of ngram_max..ngram_min tokens. */
static int lookup_guesses(const cf_spec *s, int32_t *g, int kmax)
{
    const int32_t *h = s->hist;
    const int n = s->n_hist;
    for (int ng = s->p.ngram_max; ng >= s->p.ngram_min; ng--) {
        if (n < ng + 1)
            continue;
        const int32_t *suffix = h + n - ng;
        for (int i = n - ng - 1; i >= 0; i--) {
            if (memcmp(h + i, suffix, (size_t)ng * sizeof *h) != 0)
                continue;
            int k = 0;
            while (k < kmax && i + ng + k < n) {
                g[k] = h[i + ng + k];
                k++;
            }
            return k;
        }
    }
    return 0;
}

int cf_spec_step(cf_spec *s, cf_sampler *smp, int32_t x, int32_t *out, int cap, cf_spec_stop_fn stop,
                 void *ud, cf_err *err)
{
    const int base = cf_ctx_n_past(s->t);
    if (cap < 1)
        return cf_fail(err, "speculative decoding: no room for a token");
    if (base != s->n_hist)
        return cf_fail(err, "speculative decoding: the cache holds %d tokens, the spec %d", base, s->n_hist);
    if (base >= cf_ctx_n_ctx(s->t))
        return cf_fail_as(err, CF_E_CONTEXT, "context full: %d tokens do not fit (%d of %d positions used)", 1,
                          base, cf_ctx_n_ctx(s->t));
    int kmax = s->p.draft_max;
    if (kmax > cap - 1)
        kmax = cap - 1;
    if (kmax > cf_ctx_n_ctx(s->t) - base - 1)
        kmax = cf_ctx_n_ctx(s->t) - base - 1;
    s->hist[s->n_hist++] = x;
    int32_t *g = s->batch + 1;
    int k = 0;
    if (kmax > 0) {
        k = s->d ? draft_guesses(s, g, kmax, err) : lookup_guesses(s, g, kmax);
        if (k < 0) {
            s->n_hist--;
            draft_settle(s, s->n_hist, NULL);
            return -1;
        }
    }
    if (k < s->p.draft_min)
        k = 0;
    s->batch[0] = x;
    if (cf_ctx_decode(s->t, s->batch, k + 1, s->logits, true, err) != 0) {
        s->n_hist--;
        draft_settle(s, s->n_hist, NULL);
        return -1;
    }
    int n = 0;
    for (int i = 0; i <= k; i++) {
        const int32_t tok = cf_sampler_sample(smp, s->logits + (size_t)i * (size_t)s->n_vocab);
        out[n++] = tok;
        if (stop && stop(ud, tok))
            break;
        cf_sampler_accept(smp, tok);
        if (n == cap || i == k || tok != g[i])
            break;
    }
    /* the cache keeps x and the guesses that were drawn again; out's last
     * token is the next x */
    const int keep = base + n;
    if (cf_ctx_n_past(s->t) > keep && cf_ctx_kv_truncate(s->t, keep, err) != 0)
        return -1;
    memcpy(s->hist + s->n_hist, out, (size_t)(n - 1) * sizeof *out);
    s->n_hist = keep;
    /* the draft evaluated x and the guesses but the last: those drawn
     * again stay in its cache */
    if (draft_settle(s, keep, err) != 0)
        return -1;
    s->st.steps++;
    s->st.drafted += k;
    s->st.accepted += n - 1;
    s->st.tokens += n;
    return n;
}
