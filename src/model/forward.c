/* The forward pass: a batch of tokens goes through every layer as a matrix
 * (activations rounded once per matmul to the weight's dot type, then one
 * GEMM per weight), attention runs over the KV cache, and logits come out
 * for the last token or for all.  One OpenMP parallel region covers the
 * whole pass; work is split by output rows or by (token, head), so results
 * do not depend on the thread count. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* ---- context --------------------------------------------------------------- */

static size_t act_bytes(cf_weight w)
{
    return w ? cf_row_bytes(cf_vec_dot_type(w->type), w->ne[0]) : 0;
}

static size_t max_act_bytes(const cf_model *m)
{
    size_t mx = act_bytes(m->output);
    for (int l = 0; l < m->hp.n_layer; l++) {
        const cf_layer *L = &m->layers[l];
        cf_weight ws[] = {L->wq, L->wk, L->wv, L->wqkv, L->wo, L->w_gate, L->w_up, L->w_down};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
            if (act_bytes(ws[i]) > mx)
                mx = act_bytes(ws[i]);
    }
    return (mx + 63) & ~(size_t)63;
}

static void *alloc_floats(size_t n)
{
    return aligned_alloc(64, ((n * sizeof(float)) + 63) & ~(size_t)63);
}

int cf_ctx_new(const cf_model *m, const cf_ctx_params *p, cf_ctx **out, cf_err *err)
{
    *out = NULL;
    const cf_hparams *hp = &m->hp;
    int n_ctx = p && p->n_ctx > 0 ? p->n_ctx : (hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096);
    int n_batch = p && p->n_batch > 0 ? p->n_batch : 512;
    if (n_ctx > (1 << 20))
        return cf_fail(err, "context size %d is too large", n_ctx);
    if (hp->arch == CF_ARCH_GPT2 && n_ctx > hp->n_ctx_train)
        return cf_fail(err, "gpt2 has learned positions for %d tokens; -c %d is larger",
                       hp->n_ctx_train, n_ctx);
    if (n_batch > n_ctx)
        n_batch = n_ctx;
    cf_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return cf_fail(err, "out of memory");
    c->m = m;
    c->n_batch = n_batch;
    c->n_threads = p && p->n_threads > 0 ? p->n_threads : 1;
    if (cf_kv_init(&c->kv, hp, n_ctx, p ? p->kv_type : CF_KV_F32, err) != 0) {
        free(c);
        return -1;
    }
    const size_t B = (size_t)n_batch, E = (size_t)hp->n_embd;
    const size_t Q = (size_t)hp->n_head * hp->head_dim, KV = (size_t)hp->n_head_kv * hp->head_dim;
    c->qkv_stride = Q + 2 * KV;
    c->ff_stride = 2 * (size_t)hp->n_ff;
    c->xq_stride = max_act_bytes(m);
    c->x = alloc_floats(B * E);
    c->xn = alloc_floats(B * E);
    c->tmp = alloc_floats(B * E);
    c->qkv = alloc_floats(B * c->qkv_stride);
    c->att = alloc_floats(B * Q);
    c->ff = alloc_floats(B * c->ff_stride);
    c->scores = alloc_floats((size_t)c->n_threads * (size_t)n_ctx);
    c->rope_cos = alloc_floats(B * (size_t)(hp->n_rot / 2 + 1));
    c->rope_sin = alloc_floats(B * (size_t)(hp->n_rot / 2 + 1));
    bool ok = c->x && c->xn && c->tmp && c->qkv && c->att && c->ff && c->scores && c->rope_cos &&
              c->rope_sin;
    for (int i = 0; i < 3; i++)
        ok = ok && (c->xq[i] = aligned_alloc(64, B * c->xq_stride));
    if (!ok) {
        cf_ctx_free(c);
        return cf_fail(err, "out of memory for the activations of a %d-token batch", n_batch);
    }
    *out = c;
    return 0;
}

void cf_ctx_free(cf_ctx *c)
{
    if (!c)
        return;
    cf_kv_free(&c->kv);
    free(c->x);
    free(c->xn);
    free(c->tmp);
    free(c->qkv);
    free(c->att);
    free(c->ff);
    free(c->scores);
    free(c->rope_cos);
    free(c->rope_sin);
    for (int i = 0; i < 3; i++)
        free(c->xq[i]);
    free(c);
}

const cf_model *cf_ctx_model(const cf_ctx *c) { return c->m; }
int cf_ctx_n_ctx(const cf_ctx *c) { return c->kv.n_ctx; }
int cf_ctx_n_past(const cf_ctx *c) { return c->kv.n_past; }
int cf_ctx_n_threads(const cf_ctx *c) { return c->n_threads; }
cf_kv_type cf_ctx_kv_type(const cf_ctx *c) { return c->kv.type; }

void cf_ctx_set_threads(cf_ctx *c, int n_threads)
{
    if (n_threads < 1)
        n_threads = 1;
    if (n_threads > c->n_threads) {
        float *s = alloc_floats((size_t)n_threads * (size_t)c->kv.n_ctx);
        if (!s)
            return; /* keep the old count */
        free(c->scores);
        c->scores = s;
    }
    c->n_threads = n_threads;
}

/* ---- the pass -------------------------------------------------------------- */

/* State of one pass, shared by the threads of the parallel region. */
typedef struct pass {
    cf_ctx *c;
    const cf_model *m;
    const cf_hparams *hp;
    const int32_t *tokens;
    int n, pos0;
    float *logits;
    bool all_logits;
} pass;

/* rows [i0, i1) of n split evenly over nth threads */
static void split(int n, int ith, int nth, int *i0, int *i1)
{
    *i0 = (int)((int64_t)n * ith / nth);
    *i1 = (int)((int64_t)n * (ith + 1) / nth);
}

/* Round rows [r0, r1) of src (stride K floats) to the dot type of w. */
static void round_rows(cf_weight w, const float *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int r0, int r1)
{
    const cf_type t = cf_vec_dot_type(w->type);
    for (int r = r0; r < r1; r++)
        cf_quantize_row(t, src + (size_t)r * src_stride, dst + (size_t)r * dst_stride, w->ne[0]);
}

static void matmul(cf_weight w, const uint8_t *x, size_t x_stride, float *y, size_t y_stride,
                   int n, int ith, int nth)
{
    cf_matmul_args a = {
        .wtype = w->type,
        .w = w->data,
        .w_stride = cf_row_bytes(w->type, w->ne[0]),
        .m = w->ne[1],
        .k = w->ne[0],
        .n = n,
        .x = x,
        .x_stride = x_stride,
        .y = y,
        .y_stride = y_stride,
    };
    cf_matmul(&a, ith, nth);
}

static void add_bias(float *y, cf_weight b)
{
    if (!b)
        return;
    const float *bb = b->data;
    for (int64_t i = 0; i < b->ne[0]; i++)
        y[i] += bb[i];
}

static void norm_row(const pass *P, float *y, const float *x, cf_weight w, cf_weight b)
{
    if (P->hp->arch == CF_ARCH_GPT2)
        cf_layernorm(y, x, w->data, b->data, P->hp->n_embd, P->hp->norm_eps);
    else
        cf_rmsnorm(y, x, w->data, P->hp->n_embd, P->hp->norm_eps);
}

/* Rows r of this thread: normalise x into xn and round for the group's
 * weights (up to three, each into its own buffer when the types differ). */
static void norm_and_round(const pass *P, cf_weight nw, cf_weight nb, cf_weight const ws[3], int r0,
                           int r1)
{
    cf_ctx *c = P->c;
    const size_t E = (size_t)P->hp->n_embd;
    for (int r = r0; r < r1; r++)
        norm_row(P, c->xn + r * E, c->x + r * E, nw, nb);
    for (int i = 0; i < 3; i++)
        if (ws[i] && (i == 0 || cf_vec_dot_type(ws[i]->type) != cf_vec_dot_type(ws[0]->type)))
            round_rows(ws[i], c->xn, E, c->xq[i], c->xq_stride, r0, r1);
}

/* which activation buffer holds the input rounded for ws[i] */
static const uint8_t *rounded_for(const cf_ctx *c, cf_weight const ws[3], int i)
{
    return cf_vec_dot_type(ws[i]->type) == cf_vec_dot_type(ws[0]->type) ? c->xq[0] : c->xq[i];
}

/* Bias, RoPE and cache store for (token, head) items of this thread. */
static void qkv_finish(const pass *P, const cf_layer *L, int l, int ith, int nth)
{
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = hp->head_dim, nh = hp->n_head, nkv = hp->n_head_kv;
    const size_t Q = (size_t)nh * hd, KV = (size_t)nkv * hd;
    const int half = hp->n_rot / 2;
    const int items = P->n * (nh + 2 * nkv);
    int i0, i1;
    split(items, ith, nth, &i0, &i1);
    for (int it = i0; it < i1; it++) {
        const int t = it / (nh + 2 * nkv), h = it % (nh + 2 * nkv);
        float *row = c->qkv + (size_t)t * c->qkv_stride;
        float *v = row + (size_t)h * hd; /* Q heads, then K heads, then V heads */
        const float *bias = NULL;
        if (L->bqkv)
            bias = (const float *)L->bqkv->data + (size_t)h * hd;
        else if (h < nh && L->bq)
            bias = (const float *)L->bq->data + (size_t)h * hd;
        else if (h >= nh && h < nh + nkv && L->bk)
            bias = (const float *)L->bk->data + (size_t)(h - nh) * hd;
        else if (h >= nh + nkv && L->bv)
            bias = (const float *)L->bv->data + (size_t)(h - nh - nkv) * hd;
        if (bias)
            for (int d = 0; d < hd; d++)
                v[d] += bias[d];
        if (h < nh + nkv && hp->rope_style != CF_ROPE_NONE)
            cf_rope_apply(hp->rope_style, hp->n_rot, v, c->rope_cos + (size_t)t * half,
                          c->rope_sin + (size_t)t * half);
        const int pos = P->pos0 + t;
        if (h >= nh && h < nh + nkv)
            cf_kv_store(&c->kv, cf_kv_k(&c->kv, l, h - nh, pos), v, hd);
        else if (h >= nh + nkv)
            cf_kv_store(&c->kv, cf_kv_v(&c->kv, l, h - nh - nkv, pos), v, hd);
    }
    (void)Q;
    (void)KV;
}

/* softmax(q K^T / sqrt(d)) V for (token, head) items of this thread. */
static void attention(const pass *P, int l, int ith, int nth)
{
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = hp->head_dim, nh = hp->n_head, group = nh / hp->n_head_kv;
    const float scale = 1.0f / sqrtf((float)hd);
    float *s = c->scores + (size_t)ith * (size_t)c->kv.n_ctx;
    float kbuf[1024];
    int i0, i1;
    split(P->n * nh, ith, nth, &i0, &i1);
    for (int it = i0; it < i1; it++) {
        const int t = it / nh, h = it % nh, kvh = h / group;
        const int pos = P->pos0 + t;
        const int first = hp->n_swa > 0 && pos - hp->n_swa + 1 > 0 ? pos - hp->n_swa + 1 : 0;
        const float *q = c->qkv + (size_t)t * c->qkv_stride + (size_t)h * hd;
        const int n = pos - first + 1;
        for (int p = first; p <= pos; p++) {
            const void *k = cf_kv_k(&c->kv, l, kvh, p);
            const float *kf = k;
            if (c->kv.type != CF_KV_F32) {
                cf_kv_fetch(&c->kv, kbuf, k, hd);
                kf = kbuf;
            }
            s[p - first] = cf_dot_f32(q, kf, hd) * scale;
        }
        cf_softmax(s, n);
        float *o = c->att + (size_t)t * nh * hd + (size_t)h * hd;
        memset(o, 0, (size_t)hd * sizeof *o);
        for (int p = first; p <= pos; p++) {
            const void *v = cf_kv_v(&c->kv, l, kvh, p);
            const float *vf = v;
            if (c->kv.type != CF_KV_F32) {
                cf_kv_fetch(&c->kv, kbuf, v, hd);
                vf = kbuf;
            }
            cf_axpy_f32(o, s[p - first], vf, hd);
        }
    }
}

static void layer(const pass *P, int l, int ith, int nth)
{
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const cf_layer *L = &P->m->layers[l];
    const int n = P->n;
    const size_t E = (size_t)hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
    const size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = (size_t)hp->n_ff;
    int r0, r1;
    split(n, ith, nth, &r0, &r1);

    /* attention block */
    cf_weight qkv_w[3] = {L->wqkv ? L->wqkv : L->wq, L->wqkv ? NULL : L->wk, L->wqkv ? NULL : L->wv};
    norm_and_round(P, L->attn_norm, L->attn_norm_b, qkv_w, r0, r1);
#pragma omp barrier
    if (L->wqkv) {
        matmul(L->wqkv, c->xq[0], c->xq_stride, c->qkv, c->qkv_stride, n, ith, nth);
    } else {
        matmul(L->wq, rounded_for(c, qkv_w, 0), c->xq_stride, c->qkv, c->qkv_stride, n, ith, nth);
        matmul(L->wk, rounded_for(c, qkv_w, 1), c->xq_stride, c->qkv + Q, c->qkv_stride, n, ith, nth);
        matmul(L->wv, rounded_for(c, qkv_w, 2), c->xq_stride, c->qkv + Q + KV, c->qkv_stride, n,
               ith, nth);
    }
#pragma omp barrier
    qkv_finish(P, L, l, ith, nth);
#pragma omp barrier
    attention(P, l, ith, nth);
#pragma omp barrier
    round_rows(L->wo, c->att, Q, c->xq[0], c->xq_stride, r0, r1);
#pragma omp barrier
    matmul(L->wo, c->xq[0], c->xq_stride, c->tmp, E, n, ith, nth);
#pragma omp barrier

    /* feed-forward block */
    for (int r = r0; r < r1; r++) {
        float *x = c->x + r * E;
        const float *o = c->tmp + r * E;
        for (size_t i = 0; i < E; i++)
            x[i] += o[i];
        add_bias(x, L->bo);
    }
    cf_weight ff_w[3] = {L->w_up, L->w_gate, NULL};
    norm_and_round(P, L->ffn_norm, L->ffn_norm_b, ff_w, r0, r1);
#pragma omp barrier
    /* ff rows: [gate | up] for llama/qwen2/phi3 (phi3's fused weight writes
     * both halves at once), [up] for gpt2 */
    if (L->w_gate) {
        matmul(L->w_gate, rounded_for(c, ff_w, 1), c->xq_stride, c->ff, c->ff_stride, n, ith, nth);
        matmul(L->w_up, rounded_for(c, ff_w, 0), c->xq_stride, c->ff + F, c->ff_stride, n, ith, nth);
    } else {
        matmul(L->w_up, c->xq[0], c->xq_stride, c->ff, c->ff_stride, n, ith, nth);
    }
#pragma omp barrier
    for (int r = r0; r < r1; r++) {
        float *g = c->ff + r * c->ff_stride;
        if (hp->arch == CF_ARCH_GPT2) {
            add_bias(g, L->b_up);
            for (size_t i = 0; i < F; i++)
                g[i] = cf_gelu(g[i]);
        } else {
            for (size_t i = 0; i < F; i++)
                g[i] = cf_silu(g[i]) * g[F + i];
        }
    }
    round_rows(L->w_down, c->ff, c->ff_stride, c->xq[0], c->xq_stride, r0, r1);
#pragma omp barrier
    matmul(L->w_down, c->xq[0], c->xq_stride, c->tmp, E, n, ith, nth);
#pragma omp barrier
    for (int r = r0; r < r1; r++) {
        float *x = c->x + r * E;
        const float *o = c->tmp + r * E;
        for (size_t i = 0; i < E; i++)
            x[i] += o[i];
        add_bias(x, L->b_down);
    }
}

static void embed(const pass *P, int r0, int r1)
{
    const cf_model *m = P->m;
    const size_t E = (size_t)P->hp->n_embd;
    const size_t row = cf_row_bytes(m->tok_embd->type, (int64_t)E);
    for (int r = r0; r < r1; r++) {
        float *x = P->c->x + r * E;
        cf_dequantize_row(m->tok_embd->type, (const uint8_t *)m->tok_embd->data + (size_t)P->tokens[r] * row,
                          x, (int64_t)E);
        if (m->pos_embd) {
            const float *pe = (const float *)m->pos_embd->data + (size_t)(P->pos0 + r) * E;
            for (size_t i = 0; i < E; i++)
                x[i] += pe[i];
        }
        if (P->hp->rope_style != CF_ROPE_NONE) {
            const int half = P->hp->n_rot / 2;
            cf_rope_angles(P->hp, (float)(P->pos0 + r), P->c->rope_cos + (size_t)r * half,
                           P->c->rope_sin + (size_t)r * half);
        }
    }
}

/* Final norm and output projection for the rows that want logits. */
static void output(const pass *P, int ith, int nth)
{
    cf_ctx *c = P->c;
    const cf_model *m = P->m;
    const size_t E = (size_t)P->hp->n_embd;
    const int first = P->all_logits ? 0 : P->n - 1, rows = P->n - first;
    int r0, r1;
    split(rows, ith, nth, &r0, &r1);
    for (int r = r0; r < r1; r++)
        norm_row(P, c->xn + r * E, c->x + (size_t)(first + r) * E, m->out_norm, m->out_norm_b);
    round_rows(m->output, c->xn, E, c->xq[0], c->xq_stride, r0, r1);
#pragma omp barrier
    matmul(m->output, c->xq[0], c->xq_stride, P->logits, (size_t)P->hp->n_vocab, rows, ith, nth);
}

static void run_batch(const pass *P)
{
#pragma omp parallel num_threads(P->c->n_threads)
    {
        const int ith = omp_get_thread_num(), nth = omp_get_num_threads();
        int r0, r1;
        split(P->n, ith, nth, &r0, &r1);
        embed(P, r0, r1);
#pragma omp barrier
        for (int l = 0; l < P->hp->n_layer; l++) {
            layer(P, l, ith, nth);
#pragma omp barrier
        }
        if (P->logits)
            output(P, ith, nth);
    }
}

int cf_ctx_decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  cf_err *err)
{
    const cf_hparams *hp = &c->m->hp;
    if (n <= 0)
        return cf_fail(err, "nothing to decode");
    if (n > c->kv.n_ctx - c->kv.n_past)
        return cf_fail(err, "context full: %d tokens do not fit (%d of %d positions used)", n,
                       c->kv.n_past, c->kv.n_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return cf_fail(err, "token id %d is outside the vocabulary (0..%d)", tokens[i],
                           hp->n_vocab - 1);
    for (int done = 0; done < n;) {
        const int nb = n - done < c->n_batch ? n - done : c->n_batch;
        const bool last_chunk = done + nb == n;
        pass P = {
            .c = c,
            .m = c->m,
            .hp = hp,
            .tokens = tokens + done,
            .n = nb,
            .pos0 = c->kv.n_past,
            .logits = logits && (all_logits || last_chunk)
                          ? logits + (all_logits ? (size_t)done * (size_t)hp->n_vocab : 0)
                          : NULL,
            .all_logits = all_logits,
        };
        run_batch(&P);
        c->kv.n_past += nb;
        done += nb;
    }
    return 0;
}
