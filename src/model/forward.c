/* The forward pass: each architecture's recipe, written once as calls to
 * the ops of backend.h, and the pass over a batch.  The layers run on the
 * CPU's threads, in one OpenMP parallel region (cpu_pass.h), or those
 * offloaded on a GPU (gpu_offload.h). */
#include <omp.h>
#include <string.h>

#include "cpu_pass.h"
#include "gpu_offload.h"

/* A layer is a token mixer then an FFN, or one of them alone (nemotron_h:
 * each layer is Mamba2, attention or an MLP, under its one norm). */
static bool has_mixer(const cf_layer *L)
{
    return L->wq || L->wqkv || L->conv_in || L->dn_qkv || L->m2_in;
}

static bool has_ffn(const cf_layer *L)
{
    return L->w_down || L->moe_router;
}

/* The attention block, from the rounded normalised input to the output
 * projection's result in out. */
static void attention_block(cf_exec *e, const cf_layer *L, int l)
{
    const cf_ops *o = e->ops;
    if (L->wk_b)
        o->latent_qkv(e, L, l);
    else
        o->qkv(e, L, l);
    o->sync(e, CF_NEXT_NONE, l);
    o->attention(e, L, l);
    o->matmul(e, L->wo, 0, e->P->n, CF_DST_OUT);
    /* the FFN's gate and up rows next, unless the experts come first */
    const bool ffn_next = has_ffn(L) && !(L->moe_router && !L->dense_norm);
    o->sync(e, ffn_next ? CF_NEXT_FFN_UP : CF_NEXT_NONE, l);
}

/* The mixture of experts, from the rounded normalised input to out. */
static void moe_block(cf_exec *e, const cf_layer *L, int l, cf_weight const ff[3])
{
    const cf_ops *o = e->ops;
    o->matmul(e, L->moe_router, 0, e->P->n, CF_DST_ROUTER);
    o->sync(e, CF_NEXT_NONE, l);
    o->moe_route(e, L, ff);
    o->experts_up(e, L, ff);
    o->sync(e, CF_NEXT_NONE, l);
    o->experts_down(e, L);
    if (L->sh_down)
        o->shared_expert(e, L, ff);
}

/* The dense FFN, from the rounded normalised input to out; next: what the
 * layer does after it. */
static void ffn_block(cf_exec *e, const cf_layer *L, int l, cf_next next)
{
    const cf_ops *o = e->ops;
    o->glu(e, L);
    o->sync(e, CF_NEXT_FFN_DOWN, l);
    o->round_ff(e, L->w_down);
    o->matmul(e, L->w_down, 0, e->P->n, CF_DST_OUT);
    o->sync(e, next, l + 1);
}

cf_block_out cf_layer_out(const cf_layer *L)
{
    if (!has_ffn(L))
        return (cf_block_out){L->bo, L->post_attn_norm, NULL};
    if (L->ple_gate)
        return (cf_block_out){NULL, L->ple_norm, L->out_scale};
    return (cf_block_out){L->b_down, L->post_ffn_norm, L->out_scale};
}

static void layer(cf_exec *e, int l)
{
    const cf_ops *o = e->ops;
    const cf_pass *P = e->P;
    const cf_layer *L = &P->m->layers[l];
    const int n = P->n;
    cf_weight qkv[3], ff[3];
    cf_layer_groups(L, qkv, ff);

    const cf_block_out prev_out = l > 0 ? cf_layer_out(&P->m->layers[l - 1]) : (cf_block_out){0};
    const cf_block_out attn_out = {L->bo, L->post_attn_norm, NULL};
    if (has_mixer(L)) {
        o->residual_norm(e, 0, n, l > 0 ? &prev_out : NULL, L->attn_norm, L->attn_norm_b, qkv);
        if (L->conv_in)
            o->conv(e, L, l);
        else if (L->dn_qkv)
            o->delta_net(e, L, l);
        else if (L->m2_in)
            o->mamba2(e, L, l);
        else
            attention_block(e, L, l);
        if (!has_ffn(L))
            return;
    }
    o->residual_norm(e, 0, n, has_mixer(L) ? &attn_out : l > 0 ? &prev_out : NULL, L->ffn_norm, L->ffn_norm_b,
                     ff);
    if (L->moe_router && !L->dense_norm)
        moe_block(e, L, l, ff);
    else /* the next layer's Q K V rows follow, unless more comes first */
        ffn_block(e, L, l, L->dense_norm || L->ple_gate ? CF_NEXT_NONE : CF_NEXT_QKV);
    if (L->dense_norm) {
        cf_weight moe[3];
        cf_moe_group(L, moe);
        o->dual_ffn_inputs(e, L, moe);
        moe_block(e, L, l, moe);
        o->dual_ffn_sum(e, L);
    }
    if (L->ple_gate)
        o->ple(e, L, l);
}

/* Final residual, norm and output projection for the rows that want
 * logits. */
static void output(cf_exec *e)
{
    const cf_ops *o = e->ops;
    const cf_pass *P = e->P;
    const cf_model *m = P->m;
    const int first = P->all_logits ? 0 : P->n - 1, rows = P->n - first;
    const cf_block_out last_out = cf_layer_out(&m->layers[P->hp->n_layer - 1]);
    cf_weight ws[3] = {m->output, NULL, NULL};
    o->residual_norm(e, first, rows, &last_out, m->out_norm, m->out_norm_b, ws);
    o->matmul(e, m->output, first, rows, CF_DST_LOGITS);
    if (P->hp->logit_scale != 1.0f || P->hp->logit_softcap > 0) {
        o->sync(e, CF_NEXT_NONE, P->hp->n_layer);
        o->logit_scale(e, rows);
    }
}

/* Whether to stop before the next layer: thread 0 asks, the barrier
 * passes its answer on, so that every thread leaves at the same layer
 * (the layer's own barriers keep the next question from overtaking). */
static bool stop_asked(const thr *T)
{
    cf_ctx *c = T->ex.P->c;
    if (T->ith == 0)
        __atomic_store_n(&c->stopping, cf_ctx_cancelled(c), __ATOMIC_RELAXED);
    sync_all(T);
    return __atomic_load_n(&c->stopping, __ATOMIC_RELAXED);
}

/* Passes run so far, by every context (cf_pass.serial). */
static uint64_t passes;

/* Every pass's work counters and shares start cleared. */
static void clear_work(const cf_pass *P)
{
    memset(P->c->work, 0, (size_t)P->c->n_work * sizeof *P->c->work);
    memset(P->c->shares, 0,
           (size_t)P->c->n_work * (size_t)P->c->n_threads * CF_SHARE_STRIDE * sizeof *P->c->shares);
}

/* The calling thread of the region, its share of the embeddings (and
 * per-layer inputs) done. */
static thr thread_start(const cf_pass *P)
{
    thr T = {{&cf_cpu_ops, P}, &P->c->tb[omp_get_thread_num()], omp_get_thread_num(), omp_get_num_threads(), 0};
    cf_exec *e = &T.ex;
    e->ops->embed(e);
    if (P->hp->ple_dim)
        e->ops->ple_inputs(e);
    return T;
}

static void run_batch(const cf_pass *P, int nth)
{
    clear_work(P);
#pragma omp parallel num_threads(nth)
    {
        thr T = thread_start(P);
        cf_exec *e = &T.ex;
        bool stopped = false;
        for (int l = 0; l < P->hp->n_layer && !(stopped = P->may_stop && stop_asked(&T)); l++)
            layer(e, l);
        if (P->logits && !stopped)
            output(e);
    }
}

/* ---- a pass with layers on a GPU -------------------------------------------- */

/* Thread 0 records the offloaded layers into one submission while the
 * others wait; x and the last block's output cross over wherever the pass
 * changes sides. */
static void gpu_enter(thr *T, gpu_exec *G, int l)
{
    const cf_pass *P = T->ex.P;
    cf_offload *o = G->o;
    const size_t bytes = (size_t)P->n * (size_t)P->hp->n_embd * sizeof(float);
    cf_gpu_begin(o->g);
    cf_gpu_upload(o->g, (cf_gpu_view){o->x, 0}, P->one ? T->b->x : P->c->x, bytes);
    if (l > 0)
        cf_gpu_upload(o->g, (cf_gpu_view){o->out, 0}, P->c->tmp, bytes);
    if (o->ple) /* gemma4's per-layer inputs, made with the embeddings */
        cf_gpu_upload(o->g, (cf_gpu_view){o->ple, 0}, P->c->ple,
                      (size_t)P->n * (size_t)P->hp->n_layer * (size_t)P->hp->ple_dim * sizeof(float));
}

/* Submit what was recorded (the token's one submission and wait). */
static void gpu_submit(gpu_exec *G)
{
    cf_offload *o = G->o;
    if (cf_gpu_submit(o->g, &o->err))
        o->failed = true;
}

static void gpu_leave(thr *T, gpu_exec *G)
{
    const cf_pass *P = T->ex.P;
    cf_offload *o = G->o;
    const size_t bytes = (size_t)P->n * (size_t)P->hp->n_embd * sizeof(float);
    cf_gpu_download(o->g, (cf_gpu_view){o->x, 0}, P->c->x, bytes);
    cf_gpu_download(o->g, (cf_gpu_view){o->out, 0}, P->c->tmp, bytes);
    gpu_submit(G);
}

/* All threads: the pass goes over to the GPU before layer l, or back. */
static void cross(thr *T, gpu_exec *G, bool to_gpu, int l)
{
    const cf_pass *P = T->ex.P;
    sync_all(T);
    if (T->ith == 0) {
        if (to_gpu)
            gpu_enter(T, G, l);
        else
            gpu_leave(T, G);
    }
    if (to_gpu)
        return;
    sync_all(T);
    if (P->one) /* every thread's own copy */
        memcpy(T->b->x, P->c->x, (size_t)P->hp->n_embd * sizeof *T->b->x);
}

static void run_offloaded(const cf_pass *P, int nth)
{
    cf_offload *o = P->c->gpu;
    o->failed = false;
    clear_work(P);
#pragma omp parallel num_threads(nth)
    {
        thr T = thread_start(P);
        cf_exec *e = &T.ex;
        gpu_exec G = {.ex = {&cf_gpu_ops, P}, .o = o};
        bool stopped = false, on_gpu = false;
        for (int l = 0; l < P->hp->n_layer && !(stopped = P->may_stop && stop_asked(&T)); l++) {
            if (o->layer[l] != on_gpu)
                cross(&T, &G, on_gpu = o->layer[l], l);
            if (!on_gpu)
                layer(e, l);
            else if (T.ith == 0)
                layer(&G.ex, l);
        }
        const bool logits = P->logits && !stopped;
        if (logits && o->output) {
            if (!on_gpu)
                cross(&T, &G, true, P->hp->n_layer);
            const int rows = P->all_logits ? P->n : 1;
            if (T.ith == 0) {
                output(&G.ex);
                cf_gpu_download(o->g, (cf_gpu_view){o->logits, 0}, P->logits,
                                (size_t)rows * (size_t)P->hp->n_vocab * sizeof *P->logits);
                gpu_submit(&G);
            }
            sync_all(&T);
            if (P->hp->logit_scale != 1.0f || P->hp->logit_softcap > 0) /* the GPU's logit_scale left it */
                e->ops->logit_scale(e, rows);
        } else {
            if (on_gpu) /* the caches' stores, and x back */
                cross(&T, &G, false, P->hp->n_layer);
            if (logits)
                output(e);
        }
    }
}

/* Back to the n_past of `start`, as before a decode that did not finish. */
static void undo_decode(cf_ctx *c, int start)
{
    if (cf_rs_active(c))
        cf_rs_rewind(c, start, NULL);
    else
        c->kv.n_past = start;
}

static int decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  bool may_stop, cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    if (n <= 0)
        return cf_fail(err, "nothing to decode");
    if (n > c->kv.n_ctx - c->kv.n_past)
        return cf_fail_as(err, CF_E_CONTEXT, "context full: %d tokens do not fit (%d of %d positions used)",
                          n, c->kv.n_past, c->kv.n_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return cf_fail(err, "token id %d is outside the vocabulary (0..%d)", tokens[i],
                           hp->n_vocab - 1);
    const int start = c->kv.n_past;
    if (cf_rs_active(c)) {
        /* a multi-token decode is a chat's turn boundary: the state before
         * it and after it are where undo and the next turn go back to */
        memmove(c->tokens + start, tokens, (size_t)n * sizeof *tokens);
        if (n > 1)
            cf_rs_checkpoint(c);
    }
    for (int done = 0; done < n;) {
        const int nb = n - done < c->n_batch ? n - done : c->n_batch;
        const bool last_chunk = done + nb == n;
        cf_pass P = {
            .c = c,
            .m = c->m,
            .hp = hp,
            .vec = cf_vec(),
            .tokens = tokens + done,
            .n = nb,
            .pos0 = c->kv.n_past,
            .logits = logits && (all_logits || last_chunk)
                          ? logits + (all_logits ? (size_t)done * (size_t)hp->n_vocab : 0)
                          : NULL,
            .all_logits = all_logits,
            .one = nb == 1,
            .may_stop = may_stop && n > 1 && c->cancel,
            .serial = __atomic_add_fetch(&passes, 1, __ATOMIC_RELAXED),
        };
        c->stopping = false;
        if (P.one) {
            /* other programs on the cores: busy.c */
            const uint64_t t0 = cf_now_ns();
            const int nth = cf_busy_threads(&c->busy, c->n_threads, t0);
            c->bar.stall_ns = 0;
            (c->gpu ? run_offloaded : run_batch)(&P, nth);
            const uint64_t t1 = cf_now_ns();
            /* the waits of the threads that waited: one preempted thread
             * keeps nth - 1 waiting at once, delaying the pass once */
            cf_busy_report(&c->busy, c->n_threads, nth, t1 - t0, nth > 1 ? c->bar.stall_ns / (uint64_t)(nth - 1) : 0,
                           t1);
        } else {
            (c->gpu ? run_offloaded : run_batch)(&P, cf_busy_batch_threads(&c->busy, c->n_threads, cf_now_ns()));
        }
        if (c->gpu && c->gpu->failed) {
            undo_decode(c, start);
            return cf_fail(err, "GPU: %s", c->gpu->err.msg);
        }
        if (c->stopping) {
            undo_decode(c, start);
            return cf_fail_as(err, CF_E_CANCELLED, "stopped while the prompt was evaluated");
        }
        c->kv.n_past += nb;
        done += nb;
        if (c->pause && done < n)
            c->pause(c->pause_ud);
        /* the last row tells: NaN anywhere upstream reaches every logit */
        if (P.logits && !cf_all_finite(P.logits + (size_t)(P.all_logits ? nb - 1 : 0) * (size_t)hp->n_vocab,
                                       hp->n_vocab)) {
            undo_decode(c, start);
            return cf_model_blame_nonfinite(c->m, err);
        }
    }
    if (cf_rs_active(c) && n > 1)
        cf_rs_checkpoint(c);
    return 0;
}

int cf_ctx_decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  cf_err *err)
{
    return decode(c, tokens, n, logits, all_logits, true, err);
}

int cf_ctx_replay(cf_ctx *c, const int32_t *tokens, int n, cf_err *err)
{
    return decode(c, tokens, n, NULL, false, false, err);
}

/* Each context's token by its lone decode, in turn; on a failure the
 * ones done are undone. */
static int decode_each(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                       cf_err *err)
{
    const size_t V = (size_t)ctxs[0]->m->hp.n_vocab;
    for (int i = 0; i < n; i++)
        if (decode(ctxs[i], &tokens[i], 1, logits ? logits + (size_t)i * V : NULL, false, false,
                   err)) {
            while (i-- > 0)
                undo_decode(ctxs[i], ctxs[i]->kv.n_past - 1);
            return -1;
        }
    return 0;
}

/* The group's pass: one batch whose token t is ctxs[t]'s, each at its own
 * position (cf_pass.ctxs); as a batch, it reads each matrix once for all
 * the tokens.  One token alone takes the lone decode's path, and so do
 * contexts with layers on a GPU (whose caches are there, each its own). */
int cf_forward_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                     cf_err *err)
{
    cf_ctx *c = ctxs[0];
    const cf_hparams *hp = &c->m->hp;
    bool offloaded = false;
    for (int i = 0; i < n; i++)
        offloaded |= ctxs[i]->gpu != NULL;
    if (n == 1 || offloaded)
        return decode_each(ctxs, tokens, n, logits, err);
    int pos[n];
    for (int i = 0; i < n; i++) {
        pos[i] = ctxs[i]->kv.n_past;
        if (cf_rs_active(ctxs[i]))
            ctxs[i]->tokens[pos[i]] = tokens[i];
    }
    cf_pass P = {
        .c = c,
        .m = c->m,
        .hp = hp,
        .vec = cf_vec(),
        .tokens = tokens,
        .n = n,
        .logits = logits,
        .all_logits = true,
        .serial = __atomic_add_fetch(&passes, 1, __ATOMIC_RELAXED),
        .ctxs = ctxs,
        .pos = pos,
    };
    c->stopping = false;
    run_batch(&P, cf_busy_batch_threads(&c->busy, c->n_threads, cf_now_ns()));
    for (int i = 0; i < n; i++)
        ctxs[i]->kv.n_past++;
    for (int i = 0; logits && i < n; i++)
        if (!cf_all_finite(logits + (size_t)i * (size_t)hp->n_vocab, hp->n_vocab)) {
            for (int j = 0; j < n; j++)
                undo_decode(ctxs[j], pos[j]);
            return cf_model_blame_nonfinite(c->m, err);
        }
    return 0;
}
