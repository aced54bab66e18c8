/* The state of recurrent layers (lfm2's short convolutions) and what
 * keeps truncation exact for them.  Such a state holds only "after the
 * last token": it cannot be cut back to an earlier position as a KV cache
 * can.  So the context records the tokens of its positions and keeps
 * checkpoints of the state (before and after each multi-token decode: the
 * turn boundaries of a chat); going back to position p restores the
 * newest checkpoint at or before p (or the empty state at 0) and evaluates
 * the recorded tokens from there to p again, which gives exactly the
 * state an uninterrupted run had (a token gives the same bits batched or
 * alone). */
#include <stdlib.h>
#include <string.h>

#include "gpu_offload.h"
#include "model_internal.h"

int cf_rs_init(cf_ctx *c)
{
    const cf_hparams *hp = &c->m->hp;
    size_t total = 0;
    c->rs_off = malloc((size_t)hp->n_layer * sizeof *c->rs_off);
    if (!c->rs_off)
        return -1;
    for (int l = 0; l < hp->n_layer; l++) {
        const cf_layer *L = &c->m->layers[l];
        c->rs_off[l] = total;
        if (L->conv_in)
            total += (size_t)(hp->conv_kernel - 1) * (size_t)hp->n_embd;
        if (L->dn_qkv) /* the convolution's window, then each value head's S */
            total += (size_t)(hp->conv_kernel - 1) * (size_t)L->dn_qkv->ne[1] +
                     (size_t)hp->ssm_v_heads * (size_t)hp->ssm_d * (size_t)hp->ssm_d;
        if (L->m2_in) /* the window of x|B|C, then each head's S (ssm_d states a channel) */
            total += (size_t)(hp->conv_kernel - 1) * (size_t)L->m2_conv->ne[1] +
                     (size_t)hp->ssm_inner * (size_t)hp->ssm_d;
    }
    c->rs_floats = total;
    if (!total)
        return 0;
    c->rs = calloc(total, sizeof *c->rs);
    c->tokens = malloc((size_t)c->kv.n_ctx * sizeof *c->tokens);
    return c->rs && c->tokens ? 0 : -1;
}

void cf_rs_free(cf_ctx *c)
{
    for (int i = 0; i < c->n_ckpt; i++)
        free(c->ckpt[i].state);
    c->n_ckpt = 0;
    free(c->rs);
    free(c->rs_off);
    free(c->tokens);
}

bool cf_rs_active(const cf_ctx *c)
{
    return c->rs_floats > 0;
}

void cf_rs_checkpoint(cf_ctx *c)
{
    const int pos = c->kv.n_past;
    if (!cf_rs_active(c) || pos == 0 || (c->n_ckpt && c->ckpt[c->n_ckpt - 1].pos == pos))
        return;
    cf_err err;
    if (cf_offload_rs_pull(c->gpu, c, &err)) /* the offloaded layers' part */
        return; /* no checkpoint: a rewind evaluates from further back */
    float *state;
    if (c->n_ckpt == CF_MAX_CKPT) { /* the oldest makes room */
        state = c->ckpt[0].state;
        memmove(c->ckpt, c->ckpt + 1, (CF_MAX_CKPT - 1) * sizeof c->ckpt[0]);
        c->n_ckpt--;
    } else if (!(state = malloc(c->rs_floats * sizeof *state))) {
        return; /* no checkpoint: a rewind evaluates from further back */
    }
    memcpy(state, c->rs, c->rs_floats * sizeof *state);
    c->ckpt[c->n_ckpt++] = (struct cf_ckpt){pos, state};
}

int cf_rs_rewind(cf_ctx *c, int n_keep, cf_err *err)
{
    while (c->n_ckpt && c->ckpt[c->n_ckpt - 1].pos > n_keep)
        free(c->ckpt[--c->n_ckpt].state);
    const int from = c->n_ckpt ? c->ckpt[c->n_ckpt - 1].pos : 0;
    if (c->n_ckpt)
        memcpy(c->rs, c->ckpt[c->n_ckpt - 1].state, c->rs_floats * sizeof *c->rs);
    else
        memset(c->rs, 0, c->rs_floats * sizeof *c->rs);
    cf_err gpu_err;
    if (cf_offload_rs_push(c->gpu, c, err ? err : &gpu_err))
        return -1;
    c->kv.n_past = from;
    if (n_keep == from)
        return 0;
    /* tokens[from..n_keep) are decoded into the same places they come from */
    return cf_ctx_replay(c, c->tokens + from, n_keep - from, err);
}
