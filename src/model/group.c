/* Grouped decoding: several contexts' next tokens in one pass over the
 * weights (cf_ctx_decode_group).  The checks come first, so that a group
 * that cannot run changes no context; the pass itself is forward.c's. */
#include "model_internal.h"

static int check_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, cf_err *err)
{
    if (n <= 0)
        return cf_fail(err, "nothing to decode");
    if (n > ctxs[0]->n_batch)
        return cf_fail(err, "a group of %d contexts is more than the first one's batch of %d", n,
                       ctxs[0]->n_batch);
    const int n_vocab = ctxs[0]->m->hp.n_vocab;
    for (int i = 0; i < n; i++) {
        const cf_ctx *c = ctxs[i];
        if (c->m != ctxs[0]->m)
            return cf_fail(err, "context %d of the group is of another model", i);
        for (int j = 0; j < i; j++)
            if (ctxs[j] == c)
                return cf_fail(err, "context %d of the group is context %d again", i, j);
        /* the first one's buffers and rotation serve every token */
        if (c->kv.type_k != ctxs[0]->kv.type_k || c->kv.type_v != ctxs[0]->kv.type_v ||
            cf_ctx_kv_rotated(c) != cf_ctx_kv_rotated(ctxs[0]))
            return cf_fail(err, "context %d of the group has another cache type than the first",
                           i);
        if (c->kv.n_ctx > ctxs[0]->kv.n_ctx)
            return cf_fail(err, "context %d of the group is longer (%d positions) than the first "
                           "(%d)", i, c->kv.n_ctx, ctxs[0]->kv.n_ctx);
        if (c->kv.n_past >= c->kv.n_ctx)
            return cf_fail_as(err, CF_E_CONTEXT, "context %d of the group is full (%d positions)",
                              i, c->kv.n_ctx);
        if (tokens[i] < 0 || tokens[i] >= n_vocab)
            return cf_fail(err, "token id %d (context %d of the group) is outside the vocabulary "
                           "(0..%d)", tokens[i], i, n_vocab - 1);
    }
    return 0;
}

int cf_ctx_decode_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                        cf_err *err)
{
    if (check_group(ctxs, tokens, n, err))
        return -1;
    return cf_forward_group(ctxs, tokens, n, logits, err);
}
