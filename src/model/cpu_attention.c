/* The CPU's attention: the Q K V projections finished head by head into
 * the cache, latent attention's absorbed queries, and attention over the
 * cache in fixed chunks of positions (docs/kv-cache.md). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cpu_pass.h"

/* Floats of a query head in a qkv row: its query, then (q_gate) its
 * output gate. */
static int q_width(const cf_hparams *hp, const cf_layer *L)
{
    return hp->q_gate ? 2 * L->head_dim : L->head_dim;
}

/* Rotate the first n_rot dims of v, of token t, by its position's angles. */
static void rope_at(const thr *T, const cf_layer *L, float *v, int t)
{
    const cf_ctx *c = cf_pass_ctx(T->ex.P, t);
    const int pos = cf_pass_pos(T->ex.P, t);
    const size_t half = (size_t)L->n_rot / 2;
    const int tab = cf_rope_table(T->ex.P->hp, L);
    cf_rope_apply(T->ex.P->hp->rope_style, L->n_rot, v, c->rope_cos[tab] + (size_t)pos * half,
                  c->rope_sin[tab] + (size_t)pos * half);
}

/* Bias, per-head norm, RoPE, q's scale and the cache store of head h of
 * part `which` (0 Q, 1 K, 2 V) for token t, whose values sit in the qkv
 * row. */
static void finish_head(const thr *T, const cf_layer *L, int l, int which, int h, int t)
{
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = L->head_dim;
    const size_t Q = (size_t)hp->n_head * q_width(hp, L), KV = (size_t)L->n_head_kv * hd;
    const size_t off = which == 0 ? (size_t)h * q_width(hp, L) : (which == 1 ? Q : Q + KV) + (size_t)h * hd;
    float *v = c->qkv + (size_t)t * c->qkv_stride + off;
    const float *bias = L->bqkv ? (const float *)L->bqkv->data + off : NULL;
    cf_weight b = which == 0 ? L->bq : which == 1 ? L->bk : L->bv;
    if (b)
        bias = (const float *)b->data + (size_t)h * hd;
    if (bias)
        P->vec->add(v, v, bias, NULL, hd);
    const int pos = cf_pass_pos(P, t);
    if (which == 2 && L->v_norm)
        cf_rms_unweighted(v, hd, hp->norm_eps);
    if (which < 2 && hp->qk_norm == CF_QK_NORM_HEAD)
        P->vec->rmsnorm(v, v, (which == 0 ? L->q_norm : L->k_norm)->data, hd, hp->norm_eps);
    if (which < 2 && L->rope)
        rope_at(T, L, v, t);
    if (which == 0 && hp->q_scale != 1.0f)
        for (int i = 0; i < hd; i++)
            v[i] *= hp->q_scale;
    if (which == 0 && hp->attn_temp_scale > 0) {
        const double steps = floor((double)pos / hp->attn_temp_floor);
        const float temp = (float)(log(steps + 1.0) * hp->attn_temp_scale + 1.0);
        for (int i = 0; i < hd; i++)
            v[i] *= temp;
    }
    /* into the Hadamard basis of a quantized cache: q with the keys, as
     * their product is what it keeps (D8) */
    const cf_kv *kv = &cf_pass_ctx(P, t)->kv;
    const int rot = cf_kv_rot(kv, hd, which != 2);
    if (rot)
        cf_kv_rotate(v, hd, rot);
    if (which == 1)
        cf_kv_put_k(kv, l, h, pos, v);
    else if (which == 2)
        cf_kv_put_v(kv, l, h, pos, v);
}

/* Q, K and V rows in units of whole heads (whole 16-row panels too), each
 * finished by the thread that computed it; a norm over the whole q or k
 * projection makes each of them one unit. */
typedef struct qkv_units {
    int per;                    /* heads a unit */
    int count[3], units[3];     /* heads and units of Q, K, V */
    int64_t width[3], base[3];  /* floats (and rows) of a head; where each part starts */
} qkv_units;

static void qkv_plan(const thr *T, const cf_layer *L, int l, qkv_units *q)
{
    const cf_hparams *hp = T->ex.P->hp;
    const int hd = L->head_dim, all = hp->n_head + 2 * L->n_head_kv;
    q->per = (all + 2 * T->nth - 1) / (2 * T->nth); /* two units per thread */
    while ((q->per * hd) % 16)
        q->per++;
    if (hp->qk_norm == CF_QK_NORM_FULL)
        q->per = hp->n_head;
    /* a layer reading another's cache computes only its queries */
    const int n_kv = L->kv_src == l ? L->n_head_kv : 0;
    const int count[3] = {hp->n_head, n_kv, n_kv};
    for (int i = 0; i < 3; i++) {
        q->count[i] = count[i];
        q->units[i] = (count[i] + q->per - 1) / q->per;
        q->width[i] = i ? hd : q_width(hp, L);
    }
    q->base[0] = 0;
    q->base[1] = count[0] * q->width[0];
    q->base[2] = q->base[1] + count[1] * hd;
}

/* Unit u of the plan: part *which, heads [*h0, *h1), rows from *row0 of
 * *w (the fused matrix or the part's own, ws). */
static void qkv_unit(const cf_layer *L, const qkv_units *q, cf_weight const ws[3], int u, int *which, int *h0,
                     int *h1, cf_weight *w, int64_t *row0)
{
    *which = u < q->units[0] ? 0 : u < q->units[0] + q->units[1] ? 1 : 2;
    *h0 = (u - (*which > 0 ? q->units[0] : 0) - (*which > 1 ? q->units[1] : 0)) * q->per;
    *h1 = *h0 + q->per < q->count[*which] ? *h0 + q->per : q->count[*which];
    *w = L->wqkv ? L->wqkv : ws[*which];
    *row0 = (L->wqkv ? q->base[*which] : 0) + *h0 * q->width[*which];
}

cf_fetch cpu_qkv_start(const thr *T, int l)
{
    const cf_pass *P = T->ex.P;
    if (l >= P->hp->n_layer)
        return P->logits ? cpu_share_start(T, P->m->output, 0, P->m->output->ne[1]) : (cf_fetch){0};
    const cf_layer *L = &P->m->layers[l];
    if ((!L->wq && !L->wqkv) || L->wk_b)
        return (cf_fetch){0};
    qkv_units q;
    qkv_plan(T, L, l, &q);
    if (T->ith >= q.units[0] + q.units[1] + q.units[2])
        return (cf_fetch){0};
    cf_weight ws[3], ff[3], w;
    cf_layer_groups(L, ws, ff);
    int which, h0, h1;
    int64_t row0;
    qkv_unit(L, &q, ws, T->ith, &which, &h0, &h1, &w, &row0);
    return cpu_rows_start(w, row0, (h1 - h0) * q.width[which]);
}

void cpu_qkv(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int hd = L->head_dim, phase = T->phase++;
    const bool full_norm = hp->qk_norm == CF_QK_NORM_FULL;
    qkv_units q;
    qkv_plan(T, L, l, &q);
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    for (int u; (u = grab(T, phase)) < q.units[0] + q.units[1] + q.units[2];) {
        int which, h0, h1;
        int64_t row0;
        cf_weight w;
        qkv_unit(L, &q, ws, u, &which, &h0, &h1, &w, &row0);
        cpu_mm(w, row0, (h1 - h0) * q.width[which], act(T, L->wqkv ? 0 : cf_xq_index(ws, which), 0), c->xq_stride,
               P->n, c->qkv + q.base[which] + h0 * q.width[which], c->qkv_stride, phase_serial(T, phase));
        if (full_norm && which < 2)
            for (int t = 0; t < P->n; t++) {
                float *v = c->qkv + (size_t)t * c->qkv_stride + q.base[which];
                P->vec->rmsnorm(v, v, (which == 0 ? L->q_norm : L->k_norm)->data, q.count[which] * hd,
                                hp->norm_eps);
            }
        for (int t = 0; t < P->n; t++)
            for (int h = h0; h < h1; h++)
                finish_head(T, L, l, which, h, t);
    }
}

/* Latent attention's layout of a token's qkv row (deepseek2): the query
 * heads as attention reads them, [absorbed nope | rope] of head_dim each;
 * the raw query heads, [nope | rope]; the latent and its rope part as
 * attn_kv_a_mqa gives them; the q LoRA's rank. */
typedef struct mla_row {
    size_t raw, kv_a, q_a;
    int q_head; /* floats of a raw query head */
} mla_row;

static mla_row mla_layout(const cf_hparams *hp, const cf_layer *L)
{
    mla_row r;
    r.q_head = hp->mla_nope + L->n_rot;
    r.raw = (size_t)hp->n_head * (size_t)L->head_dim;
    r.kv_a = r.raw + (size_t)hp->n_head * (size_t)r.q_head;
    r.q_a = r.kv_a + (size_t)L->head_dim;
    return r;
}

/* Token t's cache row: the latent normed, its rope part rotated; every
 * head reads it as its key, and its latent as its value (out of the key
 * blocks: the cache holds keys only). */
static void latent_row(const thr *T, const cf_layer *L, int l, int t, const mla_row *r)
{
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int R = P->hp->kv_lora;
    float *a = c->qkv + (size_t)t * c->qkv_stride + r->kv_a;
    P->vec->rmsnorm(a, a, L->kv_a_norm->data, R, P->hp->norm_eps);
    rope_at(T, L, a + R, t);
    cf_kv_put_k(&cf_pass_ctx(P, t)->kv, l, 0, cf_pass_pos(P, t), a);
}

/* Latent attention's queries and cache rows: q (through its LoRA when it
 * has one) and the latent from the normalised input; each query head's
 * rope part rotated into place and its nope part absorbed by W_k_b[h], a
 * unit being a head over a block of tokens whose rounded rows fit the
 * thread's tile. */
void cpu_latent_qkv(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, H = hp->n_head, hd = L->head_dim, R = hp->kv_lora, nope = hp->mla_nope;
    const size_t st = c->qkv_stride;
    const mla_row lay = mla_layout(hp, L);
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    const cf_weight w[2] = {ws[0], L->wk};
    const int xi[2] = {cf_xq_index(ws, 0), cf_xq_index(ws, 1)};
    float *const y[2] = {c->qkv + (L->wq_a ? lay.q_a : lay.raw), c->qkv + lay.kv_a};
    const size_t ys[2] = {st, st};
    cpu_stacked(T, w, xi, y, ys, 2);
    sync_all(T);
    int r0, r1;
    split(n, T->ith, T->nth, &r0, &r1);
    for (int t = r0; t < r1; t++)
        latent_row(T, L, l, t, &lay);
    if (L->wq_a) {
        cf_weight wq[3] = {L->wq, NULL, NULL};
        my_rows(T, 0, n, &r0, &r1);
        for (int t = r0; t < r1; t++) {
            P->vec->rmsnorm(T->b->row, c->qkv + (size_t)t * st + lay.q_a, L->q_a_norm->data, hp->q_lora,
                            hp->norm_eps);
            cpu_round_row(T, wq, T->b->row, t);
        }
        sync_all(T);
        cpu_matmul_rows(T, L->wq, act(T, 0, 0), n, c->qkv + lay.raw, st);
    }
    sync_all(T);

    const cf_type dt = cf_vec_dot_type(L->wk_b->type);
    const size_t xs = (cf_row_bytes(dt, nope) + 63) & ~(size_t)63;
    const size_t fit = c->tile_cap * sizeof(float) / xs;
    const int tb = (size_t)n < fit ? n : (int)fit, blocks = (n + tb - 1) / tb, phase = T->phase++;
    uint8_t *x = (uint8_t *)T->b->tile;
    for (int u; (u = grab(T, phase)) < blocks * H;) {
        const int h = u % H, t0 = u / H * tb, t1 = t0 + tb < n ? t0 + tb : n;
        for (int t = t0; t < t1; t++) {
            float *row = c->qkv + (size_t)t * st;
            const float *q = row + lay.raw + (size_t)h * lay.q_head;
            float *qh = row + (size_t)h * hd;
            memcpy(qh + R, q + nope, (size_t)L->n_rot * sizeof *q);
            rope_at(T, L, qh + R, t);
            cf_quantize_row(dt, q, x + (size_t)(t - t0) * xs, nope);
        }
        cpu_mm(L->wk_b, (int64_t)h * R, R, x, xs, t1 - t0, c->qkv + (size_t)t0 * st + (size_t)h * hd, st, 0);
    }
}

/* Latent attention's head outputs (row: every head's, head_dim apart),
 * each taken out of the latent by W_v_b[h] into mla_v values, in place:
 * head h's lands before head h + 1's input starts. */
static void latent_values(const thr *T, const cf_layer *L, float *row)
{
    const cf_hparams *hp = T->ex.P->hp;
    const int V = hp->mla_v, hd = L->head_dim;
    const cf_type dt = cf_vec_dot_type(L->wv_b->type);
    uint8_t *x = (uint8_t *)T->b->tile;
    for (int h = 0; h < hp->n_head; h++) {
        cf_quantize_row(dt, row + (size_t)h * hd, x, hp->kv_lora);
        cpu_mm(L->wv_b, (int64_t)h * V, V, x, cf_row_bytes(dt, hp->kv_lora), 1, row + (size_t)h * V, (size_t)V, 0);
    }
}

/* Cache positions [first, last] a query at pos attends to, in chunks: a
 * sliding layer masks keys n_swa or more positions back, as llama.cpp. */
static void attn_span(const cf_hparams *hp, const cf_layer *L, int pos, int *first, int *c0, int *c1)
{
    *first = L->swa && pos - hp->n_swa + 1 > 0 ? pos - hp->n_swa + 1 : 0;
    *c0 = *first / CF_ATTN_CHUNK;
    *c1 = pos / CF_ATTN_CHUNK;
}

/* The keys of chunk c of KV head g in layer l of the cache kv. */
static const void *chunk_keys(const thr *T, const cf_kv *kv, int l, int g, int c)
{
    const int src = T->ex.P->m->layers[l].kv_src;
    return cf_kv_kblock(kv, src, g, c * (CF_ATTN_CHUNK / CF_KV_BLOCK));
}

/* Positions [lo, hi) of chunk c that a query at pos attends to. */
static void chunk_span(const cf_hparams *hp, const cf_layer *L, int pos, int c, int *lo, int *hi)
{
    int first, c0, c1;
    attn_span(hp, L, pos, &first, &c0, &c1);
    *lo = c * CF_ATTN_CHUNK > first ? c * CF_ATTN_CHUNK : first;
    *hi = (c + 1) * CF_ATTN_CHUNK < pos + 1 ? (c + 1) * CF_ATTN_CHUNK : pos + 1;
}

/* Query head h of token t. */
static const float *query(const thr *T, const cf_layer *L, int t, int h)
{
    const cf_ctx *c = T->ex.P->c;
    return c->qkv + (size_t)t * c->qkv_stride + (size_t)h * (size_t)q_width(T->ex.P->hp, L);
}

/* attn_rows for keys kept in rows (q8_0, q4_0, bf16): the scores are the
 * kernels' dot products of the key rows with each query rounded to their
 * dot type, as llama.cpp's one-chunk kernel computes them (D8); the values
 * are read as they lie when F16 or F32, else widened to F32 once for all
 * the rows. */
static void scored_rows(const thr *T, const cf_kv *kv, int l, int g, int lo, int hi, int n_q,
                        const float *const *q, cf_attn_part *const *part, const void *next)
{
    const cf_pass *P = T->ex.P;
    const int src = P->m->layers[l].kv_src, hd = P->m->layers[l].head_dim, n = hi - lo;
    const cf_type kt = cf_kv_elem_type(kv->type_k), dt = cf_vec_dot_type(kt);
    const size_t xb = cf_row_bytes(dt, hd);
    const void *values = cf_kv_v(kv, src, g, lo);
    if (kv->type_v != CF_KV_F16 && kv->type_v != CF_KV_F32) {
        cf_kv_widen_values(kv, src, g, lo, hi, T->b->vw);
        values = T->b->vw;
    }
    uint8_t *xq = (uint8_t *)T->b->kw; /* the rounded queries: the keys are not widened here */
    for (int h0 = 0; h0 < n_q; h0 += P->vec->attn_rows) {
        const int nq = n_q - h0 < P->vec->attn_rows ? n_q - h0 : P->vec->attn_rows;
        for (int j = 0; j < nq; j++)
            cf_quantize_row(dt, q[h0 + j], xq + (size_t)j * xb, hd);
        const cf_matmul_args a = {
            .wtype = kt,
            .w = cf_kv_k(kv, src, g, lo),
            .w_stride = cf_kv_row_bytes(kv->type_k, hd),
            .m = n,
            .k = hd,
            .n = nq,
            .x = xq,
            .x_stride = xb,
            .y = T->b->scores,
            .y_stride = (size_t)n,
            .w_rows = n,
        };
        cf_matmul(&a, 0, 1);
        for (int i = 0; i < nq * n; i++)
            T->b->scores[i] *= P->hp->kq_scale;
        P->vec->attn_scored(nq, hd, T->b->scores, values, kv->type_v == CF_KV_F16, n,
                            part + h0, h0 ? NULL : next);
    }
}

/* The partials of n_q query rows (of KV head g) over positions [lo, hi)
 * of layer l of the cache kv; next: the keys of the unit this thread does
 * next (chunk_keys, NULL if none), for the kernel to fetch ahead. */
static void attn_rows(const thr *T, const cf_kv *kv, int l, int g, int lo, int hi, int n_q,
                      const float *const *q, cf_attn_part *const *part, const void *next)
{
    const cf_pass *P = T->ex.P;
    const int src = P->m->layers[l].kv_src;
    if (!cf_kv_blocked(kv->type_k)) {
        scored_rows(T, kv, l, g, lo, hi, n_q, q, part, next);
        return;
    }
    /* a mixed chunk is widened to F32 once for all the rows */
    const void *keys = cf_kv_kblock(kv, src, g, lo / CF_KV_BLOCK), *values = cf_kv_v(kv, src, g, lo);
    if (T->b->kw) {
        cf_kv_widen_keys(kv, src, g, lo, hi, T->b->kw);
        cf_kv_widen_values(kv, src, g, lo, hi, T->b->vw);
        keys = T->b->kw;
        values = T->b->vw;
    }
    P->vec->attn_chunk(n_q, P->m->layers[l].head_dim, q, keys, lo % CF_KV_BLOCK, values,
                       !T->b->kw && kv->type_k == CF_KV_F16, hi - lo, P->hp->kq_scale, T->b->scores, part,
                       next);
}

/* A head's attention output out of the values' Hadamard basis. */
static void unrotate(const thr *T, int hd, float *out)
{
    const int rot = cf_kv_rot(&T->ex.P->c->kv, hd, false);
    if (rot)
        cf_kv_rotate(out, hd, rot);
}

/* The attention output of token t (row: every head's) times each head's
 * sigmoid gate, when the model has them. */
static void gate_heads(const thr *T, const cf_layer *L, int t, float *row)
{
    const cf_hparams *hp = T->ex.P->hp;
    if (!hp->q_gate)
        return;
    const int hd = L->head_dim;
    const float *q = T->ex.P->c->qkv + (size_t)t * T->ex.P->c->qkv_stride;
    for (int h = 0; h < hp->n_head; h++)
        for (int d = 0; d < hd; d++)
            row[h * hd + d] *= 1.0f / (1.0f + expf(-q[(size_t)h * 2 * hd + hd + d]));
}

/* Token t's attention output (row: every head's) made the output
 * projection's input: gated per head, or taken out of the latent per
 * head, as the layer has it, then rounded for wo. */
static void head_outputs(const thr *T, const cf_layer *L, int t, float *row)
{
    cf_weight wo[3] = {L->wo, NULL, NULL};
    if (L->wv_b)
        latent_values(T, L, row);
    else
        gate_heads(T, L, t, row);
    cpu_round_row(T, wo, row, t);
}

/* Query head h's sink score in layer l, -INFINITY without sinks. */
static float sink(const thr *T, int l, int h)
{
    cf_weight s = T->ex.P->m->layers[l].attn_sinks;
    return s ? ((const float *)s->data)[h] : -INFINITY;
}

/* One token: units are (KV head, chunk) so that long contexts split over
 * threads; then every thread merges all heads into its own row.  A unit's
 * partials are made in the thread's own scratch and copied out whole when
 * done: written in place, the kernel's stores of m and l waited mid-unit
 * on lines the other core had read in the last layer's merge (0.08 ms a
 * token at depth 4096 on Zen 4 when its cores were far apart). */
static void attention_one(thr *T, int l)
{
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const cf_layer *L = &P->m->layers[l];
    const int hd = L->head_dim, G = hp->n_head / L->n_head_kv, phase = T->phase++;
    const size_t pb = c->part_bytes, head_stride = (size_t)c->max_chunks * pb;
    int first, c0, c1;
    attn_span(hp, L, P->pos0, &first, &c0, &c1);
    const int nc = c1 - c0 + 1;
    const int units = L->n_head_kv * nc;
    /* a thread claims its next unit before doing this one, so that the
     * kernel fetches the keys it will really read next */
    for (int u = grab(T, phase), v; u < units; u = v) {
        v = grab(T, phase);
        const int g = u / nc, ci = u % nc;
        const float *q[G];
        cf_attn_part *part[G];
        for (int j = 0; j < G; j++) {
            q[j] = query(T, L, 0, g * G + j);
            part[j] = (cf_attn_part *)((char *)T->b->part + (size_t)j * pb);
        }
        int lo, hi;
        chunk_span(hp, L, P->pos0, c0 + ci, &lo, &hi);
        attn_rows(T, &c->kv, l, g, lo, hi, G, q, part,
                  v < units ? chunk_keys(T, &c->kv, l, v / nc, c0 + v % nc) : NULL);
        for (int j = 0; j < G; j++)
            memcpy((char *)c->part + (size_t)(g * G + j) * head_stride + (size_t)ci * pb, part[j], pb);
    }
    const cf_fetch wo = cpu_share_start(T, L->wo, 0, L->wo->ne[1]);
    cpu_sync_fetching(T, &wo, 1);
    for (int h = 0; h < hp->n_head; h++) {
        P->vec->attn_merge(hd, (char *)c->part + (size_t)h * head_stride, pb, nc, sink(T, l, h),
                           T->b->row + (size_t)h * hd);
        unrotate(T, hd, T->b->row + (size_t)h * hd);
    }
}

/* A batch: units are runs of tokens (latest first: they have the most to
 * do), each run done whole by one thread with the same chunks and merge
 * as above.  A run has as many tokens as fill the kernel's rows with
 * their heads of one KV head, so that a chunk's keys and values are read
 * (and widened from F16) once for all the rows whose spans of it agree:
 * every chunk but the last, as a rule.  A group's tokens read caches of
 * their own: a run each. */
static void attention_batch(thr *T, int l)
{
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const cf_layer *L = &P->m->layers[l];
    const int hd = L->head_dim, G = hp->n_head / L->n_head_kv, phase = T->phase++;
    const int run = G < P->vec->attn_rows && !P->ctxs ? P->vec->attn_rows / G : 1;
    const size_t pb = c->part_bytes, head_stride = (size_t)c->max_chunks * pb;
    const int units = (P->n + run - 1) / run;
    for (int u; (u = grab(T, phase)) < units;) {
        const int t1 = P->n - u * run, t0 = t1 > run ? t1 - run : 0, nt = t1 - t0;
        const cf_kv *kv = &cf_pass_ctx(P, t0)->kv;
        int c0[nt], c1[nt], cmin = INT_MAX, cmax = 0;
        for (int k = 0; k < nt; k++) {
            int first;
            attn_span(hp, L, cf_pass_pos(P, t0 + k), &first, &c0[k], &c1[k]);
            cmin = c0[k] < cmin ? c0[k] : cmin;
            cmax = c1[k] > cmax ? c1[k] : cmax;
        }
        /* token k's partial of head j of the KV head, for chunk ch */
#define PART(k, j, ch)                                                                             \
    ((char *)T->b->part + (size_t)((k) * G + (j)) * head_stride + (size_t)((ch) - c0[k]) * pb)
        for (int g = 0; g < L->n_head_kv; g++) {
            for (int ch = cmin; ch <= cmax; ch++) {
                const void *next = ch < cmax ? chunk_keys(T, kv, l, g, ch + 1)
                                 : g + 1 < L->n_head_kv ? chunk_keys(T, kv, l, g + 1, cmin)
                                                        : NULL;
                unsigned todo = 0; /* the tokens that attend to chunk ch and wait for it */
                for (int k = 0; k < nt; k++)
                    todo |= (unsigned)(c0[k] <= ch && ch <= c1[k]) << k;
                while (todo) {
                    const float *q[nt * G];
                    cf_attn_part *part[nt * G];
                    int lo, hi, n_q = 0;
                    chunk_span(hp, L, cf_pass_pos(P, t0 + __builtin_ctz(todo)), ch, &lo, &hi);
                    for (int k = 0; k < nt; k++) {
                        int lk, hk;
                        if (!(todo >> k & 1))
                            continue;
                        chunk_span(hp, L, cf_pass_pos(P, t0 + k), ch, &lk, &hk);
                        if (lk != lo || hk != hi)
                            continue;
                        todo &= ~(1u << k);
                        for (int j = 0; j < G; j++, n_q++) {
                            q[n_q] = query(T, L, t0 + k, g * G + j);
                            part[n_q] = (cf_attn_part *)PART(k, j, ch);
                        }
                    }
                    attn_rows(T, kv, l, g, lo, hi, n_q, q, part, next);
                }
            }
            for (int k = 0; k < nt; k++)
                for (int j = 0; j < G; j++) {
                    float *out = T->b->row + (size_t)k * c->row_cap + (size_t)(g * G + j) * hd;
                    P->vec->attn_merge(hd, PART(k, j, c0[k]), pb, c1[k] - c0[k] + 1, sink(T, l, g * G + j),
                                       out);
                    unrotate(T, hd, out);
                }
        }
#undef PART
        for (int k = 0; k < nt; k++)
            head_outputs(T, L, t0 + k, T->b->row + (size_t)k * c->row_cap);
    }
    sync_all(T);
}


void cpu_attention(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    if (T->ex.P->one) {
        attention_one(T, l);
        head_outputs(T, L, 0, T->b->row);
    } else {
        attention_batch(T, l);
    }
}
