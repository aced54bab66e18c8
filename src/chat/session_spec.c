/* Speculative decoding of a local session's replies (spec.h): the drafter
 * lives beside the session's context, each step checks its guesses after
 * the reply's pending token, and the step's tokens are then handed out
 * one by one as sampled ones are (session_reply.c). */
#include <stdlib.h>

#include "session_internal.h"

int sess_spec_open(cf_session *s, const cf_session_params *p, cf_err *err)
{
    if (!p->draft_model && !p->lookup)
        return 0;
    if (p->draft_model && p->lookup)
        return cf_fail_as(err, CF_E_USAGE, "a draft model and lookup: choose one way to guess");
    if (p->spec)
        s->spec_params = *p->spec;
    else
        cf_spec_params_default(&s->spec_params);
    if (p->draft_model) {
        cf_ctx_params cp = {.n_ctx = cf_ctx_n_ctx(s->ctx), .n_threads = cf_ctx_n_threads(s->ctx),
                            .type_k = CF_KV_F16, .type_v = CF_KV_F16};
        if (cf_model_load_as(p->draft_model, NULL, p->load_mode, &s->draft_model, err) ||
            cf_tokenizer_create(cf_model_gguf(s->draft_model), &s->draft_tok, err))
            return cf_err_class(err, CF_E_MODEL);
        if (cf_spec_vocab_check(s->tok, s->draft_tok, err))
            return cf_err_class(err, CF_E_USAGE);
        if (cf_ctx_new(s->draft_model, &cp, &s->draft_ctx, err))
            return -1;
    }
    if (cf_spec_new(s->ctx, s->draft_ctx, &s->spec_params, &s->spec, err))
        return cf_err_class(err, CF_E_USAGE);
    s->spec_ctx = s->ctx;
    return 0;
}

void sess_spec_free(cf_session *s)
{
    free(s->spec_smp);
    s->spec_smp = NULL;
    s->spec_smp_cap = s->spec_smp_len = 0;
    cf_spec_free(s->spec);
    cf_ctx_free(s->draft_ctx);
    cf_tokenizer_free(s->draft_tok);
    cf_model_free(s->draft_model);
    s->spec = NULL;
    s->draft_ctx = NULL;
    s->draft_tok = NULL;
    s->draft_model = NULL;
}

static bool stops(void *ud, int32_t tok)
{
    return sess_ends_reply(ud, tok);
}

int sess_spec_step(cf_session *s, int cap, cf_err *err)
{
    sess_reply *r = &s->reply;
    if (s->spec_ctx != s->ctx) { /* a loaded session brought its own context */
        cf_spec_free(s->spec);
        s->spec = NULL;
        if (cf_spec_new(s->ctx, s->draft_ctx, &s->spec_params, &s->spec, err))
            return -1;
        s->spec_ctx = s->ctx;
    }
    /* the cache may have moved since the last step (a new turn, undo, a
     * shift): the spec starts from what it holds */
    if (cf_spec_begin(s->spec, s->cache.ids, (int)s->cache.n, err))
        return -1;
    /* the sampler as it was, should the reply end before the step's last
     * token (sess_spec_settle) */
    size_t need = cf_sampler_state_save(s->smp, NULL, 0);
    if (need > s->spec_smp_cap) {
        void *grown = realloc(s->spec_smp, need);
        if (!grown)
            return cf_fail(err, "out of memory");
        s->spec_smp = grown;
        s->spec_smp_cap = need;
    }
    s->spec_smp_len = cf_sampler_state_save(s->smp, s->spec_smp, s->spec_smp_cap);
    const cf_spec_stats before = *cf_spec_get_stats(s->spec);
    int n = cf_spec_step(s->spec, s->smp, r->pending, r->q, cap < SESS_SPEC_MAX ? cap : SESS_SPEC_MAX, stops, s,
                         err);
    if (n < 1)
        return -1;
    const cf_spec_stats *after = cf_spec_get_stats(s->spec);
    s->stats.drafted += (int)(after->drafted - before.drafted);
    s->stats.accepted += (int)(after->accepted - before.accepted);
    s->stats.spec_passes++;
    r->nq = n;
    r->qat = 0;
    return 0;
}

void sess_spec_settle(cf_session *s)
{
    sess_reply *r = &s->reply;
    /* A reply that ended before its step's last token (a stop string, the
     * user) leaves the step's later tokens in the cache and in the sampler:
     * the cache is cut back, and the sampler made again from its state
     * before the step with the tokens shown drawn again from their rows, so
     * that the random state and the penalties are plain decoding's. */
    if (r->qat < r->nq) {
        cf_err ignored;
        if (cf_ctx_n_past(s->ctx) > (int)s->cache.n)
            cf_ctx_kv_truncate(s->ctx, (int)s->cache.n, NULL);
        if (cf_sampler_state_load(s->smp, s->spec_smp, s->spec_smp_len, &ignored) == 0)
            for (int i = 0; i < r->qat; i++)
                cf_sampler_accept(s->smp, cf_sampler_sample(s->smp, cf_spec_logits(s->spec, i)));
    }
    r->nq = r->qat = 0;
}
