/* The GPU's ops (backend.h): each records dispatches of confab/gpu.h into
 * the pass's one command buffer.  The activations live in the offload's
 * buffers (gpu_offload.h); "h rounded for the weights" is only where the
 * next matmul reads (gpu_exec.in), as the GPU's matmuls take F32 rows.
 * The recorder puts a barrier between dependent dispatches, so sync
 * records nothing.  The layers given to these ops are those
 * cf_offload_new found them able to run. */
#include <math.h>

#include "gpu_offload.h"

static gpu_exec *gpu(cf_exec *e)
{
    return (gpu_exec *)e;
}

/* Float `floats` of buffer b. */
static cf_gpu_view at(cf_gpu_buf *b, size_t floats)
{
    return (cf_gpu_view){b, floats * sizeof(float)};
}

static cf_gpu_view shift_bytes(cf_gpu_view v, size_t bytes)
{
    v.off += bytes;
    return v;
}

static cf_gpu_view shift(cf_gpu_view v, size_t floats)
{
    return shift_bytes(v, floats * sizeof(float));
}

static cf_gpu_rows rows(cf_gpu_view v, int n, int heads, int64_t ld, int64_t hs)
{
    return (cf_gpu_rows){v, n, heads, ld, hs};
}

static cf_gpu_view W(const gpu_exec *G, cf_weight t)
{
    return cf_offload_weight(G->o, t);
}

/* y = x w^T for n rows of x (w's ne[0] floats each). */
static void mm(const gpu_exec *G, cf_weight w, cf_gpu_view x, int n, cf_gpu_view y)
{
    cf_gpu_matmul(G->o->g, w->type, W(G, w), w->ne[1], w->ne[0], x, n, y);
}

/* The same for w's rows [first, first + count) (a head's slice of wk_b /
 * wv_b), x's rows ldx floats apart and y's ldy apart. */
static void mm_rows(const gpu_exec *G, cf_weight w, int64_t first, int64_t count, cf_gpu_view x, int64_t ldx, int n,
                    cf_gpu_view y, int64_t ldy)
{
    const cf_gpu_view slice = shift_bytes(W(G, w), (size_t)first * cf_row_bytes(w->type, w->ne[0]));
    cf_gpu_matmul_ld(G->o->g, w->type, slice, count, w->ne[0], x, ldx, n, y, ldy);
}

/* RoPE of rows r at the pass's positions, by the layer's table. */
static void rope_at(const gpu_exec *G, const cf_layer *L, cf_gpu_rows r)
{
    const cf_hparams *hp = G->ex.P->hp;
    const int tab = cf_rope_table(hp, L);
    cf_gpu_rope(G->o->g, r, L->n_rot, hp->rope_style, at(G->o->rope_cos[tab], 0), at(G->o->rope_sin[tab], 0),
                G->ex.P->pos0);
}

static void residual_norm(cf_exec *e, int first, int n, const cf_block_out *out, cf_weight nw, cf_weight nb,
                          cf_weight const ws[3])
{
    (void)ws; /* the GPU's matmuls read F32 */
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int E = hp->n_embd;
    const size_t r0 = (size_t)first * (size_t)E;
    const cf_gpu_view x = at(o->x, r0), scratch = at(o->scratch, r0);
    const cf_gpu_rows xr = rows(x, n, 1, E, 0);
    if (out) {
        cf_gpu_view a = at(o->out, r0);
        if (out->post_norm) {
            cf_gpu_rms_norm(o->g, rows(a, n, 1, E, 0), E, W(G, out->post_norm), hp->norm_eps,
                            rows(scratch, n, 1, E, 0));
            a = scratch;
        }
        if (hp->residual_scale != 1.0f) {
            cf_gpu_scale(o->g, scratch, a, hp->residual_scale, (int64_t)n * E);
            a = scratch;
        }
        cf_gpu_add(o->g, x, x, a, n, n, E, E);
        if (out->bias)
            cf_gpu_add(o->g, x, x, W(G, out->bias), 1, n, E, E);
        if (out->scale)
            cf_gpu_scale(o->g, x, x, *(const float *)out->scale->data, (int64_t)n * E);
    }
    G->in = at(o->x, 0);
    if (!nw)
        return;
    const cf_gpu_rows hr = rows(at(o->h, r0), n, 1, E, 0);
    if (hp->norm == CF_NORM_LAYER)
        cf_gpu_layer_norm(o->g, xr, E, W(G, nw), W(G, nb), hp->norm_eps, hr);
    else
        cf_gpu_rms_norm(o->g, xr, E, W(G, nw), hp->norm_eps, hr);
    G->in = at(o->h, 0);
}

static void add_bias(const gpu_exec *G, cf_weight b, cf_gpu_view v, int n, int64_t width, int64_t ld)
{
    if (b)
        cf_gpu_add(G->o->g, v, v, W(G, b), 1, n, (int)width, ld);
}

/* Query or key heads r (width floats a token) normalised per head or whole
 * by w, as the model has it, then rotated. */
static void norm_rope(const gpu_exec *G, const cf_layer *L, cf_gpu_rows r, int64_t width, cf_weight w)
{
    const cf_hparams *hp = G->ex.P->hp;
    if (hp->qk_norm == CF_QK_NORM_HEAD)
        cf_gpu_rms_norm(G->o->g, r, L->head_dim, W(G, w), hp->norm_eps, r);
    else if (hp->qk_norm == CF_QK_NORM_FULL) {
        const cf_gpu_rows whole = rows(r.v, r.n, 1, r.ld, 0);
        cf_gpu_rms_norm(G->o->g, whole, (int)width, W(G, w), hp->norm_eps, whole);
    }
    if (L->rope)
        rope_at(G, L, r);
}

/* Per-head (or whole) norms, RoPE and the cache store, as the CPU's
 * finish_head; q's scale goes into attention's. */
static void qkv(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_pass *P = e->P;
    const cf_hparams *hp = P->hp;
    const int n = P->n, H = hp->n_head, Hkv = L->n_head_kv, hd = L->head_dim;
    /* q_gate: each query head followed by its output gate */
    const int64_t Q = (int64_t)H * hd * (hp->q_gate ? 2 : 1), KV = (int64_t)Hkv * hd, hs = hp->q_gate ? 2 * hd : hd;
    cf_gpu_view q = at(o->qkv, 0), k, v;
    const bool own = L->kv_src == l; /* else its queries read an earlier layer's cache (gemma4) */
    int64_t ldq, ldk;
    if (L->wqkv) { /* one row of q|k|v a token */
        ldq = ldk = Q + 2 * KV;
        mm(G, L->wqkv, G->in, n, q);
        add_bias(G, L->bqkv, q, n, ldq, ldq);
        k = shift(q, (size_t)Q);
        v = shift(q, (size_t)(Q + KV));
    } else {
        ldq = Q;
        ldk = KV;
        k = shift(q, (size_t)(n * Q));
        v = shift(k, (size_t)(n * KV));
        mm(G, L->wq, G->in, n, q);
        if (own) {
            mm(G, L->wk, G->in, n, k);
            mm(G, L->wv ? L->wv : L->wk, G->in, n, v); /* no wv: the values are the keys before norm and RoPE */
        }
    }
    const cf_gpu_rows qr = rows(q, n, H, ldq, hs);
    add_bias(G, L->bq, q, n, Q, ldq);
    norm_rope(G, L, qr, Q, L->q_norm);
    if (own) {
        const cf_gpu_rows kr = rows(k, n, Hkv, ldk, hd), vr = rows(v, n, Hkv, ldk, hd);
        add_bias(G, L->bk, k, n, KV, ldk);
        add_bias(G, L->bv, v, n, KV, ldk);
        if (L->v_norm)
            cf_gpu_rms_norm(o->g, vr, hd, (cf_gpu_view){0}, hp->norm_eps, vr);
        norm_rope(G, L, kr, KV, L->k_norm);
        cf_gpu_kv_store(o->g, &o->kv[l], kr, vr, P->pos0);
    }
    G->q = qr;
    G->gate = hp->q_gate ? rows(shift(q, (size_t)hd), n, H, ldq, hs) : (cf_gpu_rows){0};
}

/* Latent attention, in the CPU's row layout (cpu_attention.c): a token's
 * qkv row holds the absorbed query heads (head_dim apart), the raw query
 * heads, the latent with its rope part and the q LoRA's rows.  The latent
 * normed and its rope part rotated is the token's cache row (keys only);
 * each query head takes its rope part rotated and its nope part through
 * W_k_b[h] into the latent's space. */
static void latent_qkv(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_pass *P = e->P;
    const cf_hparams *hp = P->hp;
    const int n = P->n, H = hp->n_head, hd = L->head_dim, R = hp->kv_lora, nope = hp->mla_nope, rot = L->n_rot;
    const int64_t st = (int64_t)P->c->qkv_stride, q_head = nope + rot;
    const cf_gpu_view qh = at(o->qkv, 0), raw = shift(qh, (size_t)H * (size_t)hd);
    const cf_gpu_view kv_a = shift(raw, (size_t)H * (size_t)q_head), q_a = shift(kv_a, (size_t)hd);
    if (L->wq_a) {
        mm_rows(G, L->wq_a, 0, L->wq_a->ne[1], G->in, L->wq_a->ne[0], n, q_a, st);
        cf_gpu_rms_norm(o->g, rows(q_a, n, 1, st, 0), hp->q_lora, W(G, L->q_a_norm), hp->norm_eps,
                        rows(q_a, n, 1, st, 0));
        mm_rows(G, L->wq, 0, L->wq->ne[1], q_a, st, n, raw, st);
    } else
        mm_rows(G, L->wq, 0, L->wq->ne[1], G->in, L->wq->ne[0], n, raw, st);
    mm_rows(G, L->wk, 0, L->wk->ne[1], G->in, L->wk->ne[0], n, kv_a, st);
    const cf_gpu_rows latent = rows(kv_a, n, 1, st, 0);
    cf_gpu_rms_norm(o->g, latent, R, W(G, L->kv_a_norm), hp->norm_eps, latent);
    rope_at(G, L, rows(shift(kv_a, (size_t)R), n, 1, st, 0));
    cf_gpu_kv_store(o->g, &o->kv[l], rows(kv_a, n, 1, st, hd), (cf_gpu_rows){0}, P->pos0);
    for (int h = 0; h < H; h++) {
        const cf_gpu_view q = shift(raw, (size_t)h * (size_t)q_head), y = shift(qh, (size_t)h * (size_t)hd);
        cf_gpu_copy_rows(o->g, shift(y, (size_t)R), shift(q, (size_t)nope), n, rot, st);
        mm_rows(G, L->wk_b, (int64_t)h * R, R, q, st, n, y, st);
    }
    G->q = rows(qh, n, H, st, hd);
    rope_at(G, L, rows(shift(qh, (size_t)R), n, H, st, hd));
    G->gate = (cf_gpu_rows){0};
}

/* Latent attention's head outputs (their latent, head_dim apart) taken out
 * by W_v_b[h] into mla_v values each, in the FFN's buffer. */
static void latent_values(gpu_exec *G, const cf_layer *L, int n)
{
    cf_offload *o = G->o;
    const cf_hparams *hp = G->ex.P->hp;
    const int H = hp->n_head, V = hp->mla_v, hd = L->head_dim;
    const cf_gpu_view x = at(o->h, 0), y = at(o->ff, 0);
    for (int h = 0; h < H; h++)
        mm_rows(G, L->wv_b, (int64_t)h * V, V, shift(x, (size_t)h * (size_t)hd), (int64_t)H * hd, n,
                shift(y, (size_t)h * (size_t)V), (int64_t)H * V);
    G->in = y;
}

static void attention(cf_exec *e, const cf_layer *L, int l)
{
    (void)l; /* L->kv_src: the cache its queries read */
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_pass *P = e->P;
    const cf_hparams *hp = P->hp;
    const int64_t Q = (int64_t)hp->n_head * L->head_dim;
    const cf_gpu_attn a = {
        .q = G->q,
        .kv = o->kv[L->kv_src],
        .pos0 = P->pos0,
        .window = L->swa ? hp->n_swa : 0,
        .scale = hp->kq_scale * hp->q_scale,
        .sinks = W(G, L->attn_sinks),
        .out = rows(at(o->h, 0), P->n, hp->n_head, Q, L->head_dim),
        .gate = G->gate,
        .temp_scale = hp->attn_temp_scale > 0 ? hp->attn_temp_scale : 0,
        .temp_floor = hp->attn_temp_floor,
    };
    cf_gpu_attention(o->g, &a);
    G->in = at(o->h, 0);
    if (L->wv_b)
        latent_values(G, L, P->n);
}

static void matmul(cf_exec *e, cf_weight w, int first, int n, cf_dst dst)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_gpu_view y = at(dst == CF_DST_LOGITS ? o->logits : dst == CF_DST_ROUTER ? o->router : o->out, 0);
    mm(G, w, shift(G->in, (size_t)first * (size_t)w->ne[0]), n, y);
}

static cf_gpu_act gate_act(const cf_hparams *hp)
{
    return hp->ffn == CF_FFN_GEGLU ? CF_GPU_GELU : hp->ffn == CF_FFN_SWIGLU_OAI ? CF_GPU_SWIGLU_OAI : CF_GPU_SILU;
}

/* gate [n][F] then up [n][F] (phi3: [n][2F] fused), the result after them. */
static void glu(cf_exec *e, const cf_layer *L)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, F = L->n_ff;
    const cf_gpu_view g = at(o->ff, 0), u = at(o->ff, (size_t)n * F), y = at(o->ff, 2 * (size_t)n * F);
    const cf_gpu_view x = G->in;
    cf_weight qkv[3], ws[3];
    cf_layer_groups(L, qkv, ws);
    G->in = y;
    if (hp->ffn == CF_FFN_GELU || hp->ffn == CF_FFN_RELU2) {
        mm(G, ws[0], x, n, g);
        add_bias(G, L->b_up, g, n, F, F);
        cf_gpu_glu(o->g, hp->ffn == CF_FFN_GELU ? CF_GPU_GELU_ONLY : CF_GPU_RELU2, g, g, F, n, F, y, F);
        return;
    }
    const cf_gpu_act act = gate_act(hp);
    if (!L->w_gate) { /* phi3: w_up's rows are gate | up */
        mm(G, L->w_up, x, n, g);
        cf_gpu_glu(o->g, act, g, shift(g, (size_t)F), 2 * (int64_t)F, n, F, y, F);
        return;
    }
    mm(G, ws[0], x, n, g);
    mm(G, ws[1], x, n, u);
    cf_gpu_glu(o->g, act, g, u, F, n, F, y, F);
}

/* Each token's experts, weights and pair rows (t * k + j), on the device. */
static void moe_route(cf_exec *e, const cf_layer *L, cf_weight const ff[3])
{
    (void)ff;
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const cf_gpu_view logits = at(o->router, 0);
    add_bias(G, L->moe_router_b, logits, e->P->n, hp->n_expert, hp->n_expert);
    cf_gpu_moe_route(o->g, hp, logits, W(G, L->moe_choice_b), e->P->n, at(o->sel, 0), at(o->pair_w, 0),
                     at(o->xrow, 0));
}

/* Rows `rows` of each expert's matrix in w times x's pair rows. */
static void expert_mm(const gpu_exec *G, cf_weight w, cf_gpu_view xrow, cf_gpu_view x, int pairs, cf_gpu_view y)
{
    const size_t expert_bytes = cf_row_bytes(w->type, w->ne[0]) * (size_t)w->ne[1];
    cf_gpu_matmul_id(G->o->g, w->type, W(G, w), expert_bytes, w->ne[1], w->ne[0], at(G->o->sel, 0), xrow, x,
                     pairs, y);
}

/* act(gate) * up of every pair into pair_ff's third part (no gate: relu(up)^2). */
static void experts_up(cf_exec *e, const cf_layer *L, cf_weight const ff[3])
{
    (void)ff;
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int pairs = e->P->n * hp->n_expert_used, F = hp->n_ff_exp;
    const cf_gpu_view g = at(o->pair_ff, 0), u = at(o->pair_ff, (size_t)pairs * F);
    const cf_gpu_view y = at(o->pair_ff, 2 * (size_t)pairs * F), xrow = at(o->xrow, 0);
    const cf_gpu_view x = G->moe_in.buf ? G->moe_in : G->in;
    if (!L->moe_gate) {
        expert_mm(G, L->moe_up, xrow, x, pairs, g);
        cf_gpu_glu(o->g, CF_GPU_RELU2, g, g, F, pairs, F, y, F);
        return;
    }
    expert_mm(G, L->moe_gate, xrow, x, pairs, g);
    expert_mm(G, L->moe_up, xrow, x, pairs, u);
    if (L->moe_gate_b) { /* gpt-oss */
        cf_gpu_add_by(o->g, g, g, W(G, L->moe_gate_b), hp->n_expert, at(o->sel, 0), pairs, F, F);
        cf_gpu_add_by(o->g, u, u, W(G, L->moe_up_b), hp->n_expert, at(o->sel, 0), pairs, F, F);
    }
    cf_gpu_glu(o->g, gate_act(hp), g, u, F, pairs, F, y, F);
}

/* The pairs' down projections summed by weight into out. */
static void experts_down(cf_exec *e, const cf_layer *L)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, k = hp->n_expert_used, pairs = n * k, F = hp->n_ff_exp;
    expert_mm(G, L->moe_down, at(o->pairs, 0), at(o->pair_ff, 2 * (size_t)pairs * F), pairs, at(o->pair_out, 0));
    if (L->moe_down_b)
        cf_gpu_add_by(o->g, at(o->pair_out, 0), at(o->pair_out, 0), W(G, L->moe_down_b), hp->n_expert,
                      at(o->sel, 0), pairs, hp->n_embd, hp->n_embd);
    if (L->exp_scale) /* gemma4 MoE: each pair's weight times its expert's scale */
        cf_gpu_mul_by(o->g, at(o->pair_w, 0), at(o->pair_w, 0), W(G, L->exp_scale), hp->n_expert, at(o->sel, 0),
                      pairs, 1, 1);
    cf_gpu_moe_sum(o->g, at(o->pair_out, 0), at(o->pair_w, 0), n, k, hp->n_embd, at(o->out, 0), hp->n_embd);
}

/* The shared expert on the experts' input (SwiGLU, or relu(up)^2 without
 * a gate), added to out, gated per token by sigmoid(sh_inp . in) where it
 * has sh_inp (qwen35moe, qwen3next). */
static void shared_expert(cf_exec *e, const cf_layer *L, cf_weight const ff[3])
{
    (void)ff;
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const int n = e->P->n, S = e->P->hp->n_ff_shexp, E = e->P->hp->n_embd;
    const cf_gpu_view g = at(o->shared, 0), u = at(o->shared, (size_t)n * S), y = at(o->shared, 2 * (size_t)n * S);
    const cf_gpu_view down = at(o->shared, 3 * (size_t)n * S);
    if (L->sh_gate) {
        mm(G, L->sh_gate, G->in, n, g);
        mm(G, L->sh_up, G->in, n, u);
        cf_gpu_glu(o->g, CF_GPU_SILU, g, u, S, n, S, y, S);
    } else {
        mm(G, L->sh_up, G->in, n, g);
        cf_gpu_glu(o->g, CF_GPU_RELU2, g, g, S, n, S, y, S);
    }
    mm(G, L->sh_down, y, n, down);
    if (L->sh_inp) {
        const cf_gpu_view gate = at(o->shared, 3 * (size_t)n * S + (size_t)n * E);
        mm(G, L->sh_inp, G->in, n, gate);
        cf_gpu_add_gated(o->g, at(o->out, 0), at(o->out, 0), down, gate, n, E, E);
    } else
        cf_gpu_add(o->g, at(o->out, 0), at(o->out, 0), down, n, n, E, E);
}

/* Gemma 4 MoE after its dense FFN (out): that output normalised aside;
 * the router reads rms(x) / sqrt(n_embd) * router_scale, the experts
 * rms(x, exp_pre_norm). */
static void dual_ffn_inputs(cf_exec *e, const cf_layer *L, cf_weight const moe[3])
{
    (void)moe; /* the GPU's matmuls read F32 */
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, E = hp->n_embd;
    const cf_gpu_rows x = rows(at(o->x, 0), n, 1, E, 0), router = rows(at(o->h, 0), n, 1, E, 0);
    const cf_gpu_rows dense = rows(at(o->dense_out, 0), n, 1, E, 0), experts = rows(at(o->scratch, 0), n, 1, E, 0);
    cf_gpu_rms_norm(o->g, rows(at(o->out, 0), n, 1, E, 0), E, W(G, L->dense_norm), hp->norm_eps, dense);
    cf_gpu_rms_norm(o->g, x, E, W(G, L->router_scale), hp->norm_eps, router);
    cf_gpu_scale(o->g, router.v, router.v, 1.0f / sqrtf((float)E), (int64_t)n * E);
    cf_gpu_rms_norm(o->g, x, E, W(G, L->exp_pre_norm), hp->norm_eps, experts);
    G->in = router.v;
    G->moe_in = experts.v;
}

/* Gemma 4 MoE's FFN output: the dense part plus rms(experts, exp_norm). */
static void dual_ffn_sum(cf_exec *e, const cf_layer *L)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, E = hp->n_embd;
    const cf_gpu_rows y = rows(at(o->out, 0), n, 1, E, 0);
    cf_gpu_rms_norm(o->g, y, E, W(G, L->exp_norm), hp->norm_eps, y);
    cf_gpu_add(o->g, y.v, y.v, at(o->dense_out, 0), n, n, E, E);
    G->moe_in = (cf_gpu_view){0};
}

/* gemma4's per-layer embedding step after the FFN (cpu_ple): the FFN's
 * output joins the residual, which ple_gate, GELU and the token's input of
 * this layer (rows n_layer ple_dim apart) make ple_proj's input; into out. */
static void ple(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, D = hp->ple_dim, E = hp->n_embd;
    const int64_t ld = (int64_t)hp->n_layer * D;
    const cf_block_out ffn_out = {L->b_down, L->post_ffn_norm, NULL};
    residual_norm(e, 0, n, &ffn_out, NULL, NULL, NULL);
    const cf_gpu_view g = at(o->ff, 0), y = at(o->ff, (size_t)n * (size_t)ld);
    mm_rows(G, L->ple_gate, 0, D, G->in, E, n, g, ld);
    cf_gpu_glu(o->g, CF_GPU_GELU, g, at(o->ple, (size_t)l * (size_t)D), ld, n, D, y, D);
    mm(G, L->ple_proj, y, n, at(o->out, 0));
}

/* Layer l's recurrent state: its convolution's window, then (after
 * `skip` floats) its heads' S. */
static cf_gpu_view state(const gpu_exec *G, int l, size_t skip)
{
    return at(G->o->rs, G->ex.P->c->rs_off[l] + skip);
}

/* lfm2's mixer: [B | C | X] = in_proj h; out_proj (C * conv(B * X)). */
static void conv(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const int n = e->P->n, E = e->P->hp->n_embd;
    const cf_gpu_view bcx = at(o->qkv, 0), y = at(o->ff, 0), none = {0};
    mm(G, L->conv_in, G->in, n, bcx);
    cf_gpu_conv(o->g, CF_GPU_CONV_GATED, bcx, 3 * (int64_t)E, n, E, W(G, L->conv_w), none, e->P->hp->conv_kernel,
                state(G, l, 0), y, E);
    mm(G, L->conv_out, y, n, at(o->out, 0));
}

/* qwen35's gated delta net: the projections, the convolution of q|k|v
 * with SiLU, the recurrence per value head, ssm_out. */
static void delta_net(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, K = hp->conv_kernel, D = hp->ssm_d, Hv = hp->ssm_v_heads;
    const int conv_dim = (int)L->dn_qkv->ne[1];
    const cf_gpu_view qkv = at(o->qkv, 0), y = at(o->ff, 0), none = {0};
    mm(G, L->dn_qkv, G->in, n, qkv);
    mm(G, L->dn_z, G->in, n, at(o->dn_z, 0));
    mm(G, L->dn_beta, G->in, n, at(o->dn_beta, 0));
    if (L->dn_alpha)
        mm(G, L->dn_alpha, G->in, n, at(o->dn_alpha, 0));
    cf_gpu_conv(o->g, CF_GPU_CONV_SILU, qkv, conv_dim, n, conv_dim, W(G, L->dn_conv), none, K, state(G, l, 0), qkv,
                conv_dim);
    const cf_gpu_delta d = {
        .qkv = qkv,
        .qkv_ld = conv_dim,
        .z = at(o->dn_z, 0),
        .beta = at(o->dn_beta, 0),
        .alpha = at(o->dn_alpha, 0),
        .dt_bias = W(G, L->dn_dt_bias),
        .a = W(G, L->dn_a),
        .norm = W(G, L->dn_norm),
        .state = state(G, l, (size_t)(K - 1) * (size_t)conv_dim),
        .out = y,
        .n = n,
        .D = D,
        .Hk = hp->ssm_k_heads,
        .Hv = Hv,
        .grouped = hp->ssm_v_grouped,
        .eps = hp->norm_eps,
    };
    cf_gpu_delta_net(o->g, &d);
    mm(G, L->dn_out, y, n, at(o->out, 0));
}

/* Mamba2: the projection (z, x|B|C, dt), the convolution of x|B|C with
 * its bias and SiLU, the scan, each group's norm, m2_out. */
static void mamba2(cf_exec *e, const cf_layer *L, int l)
{
    gpu_exec *G = gpu(e);
    cf_offload *o = G->o;
    const cf_hparams *hp = e->P->hp;
    const int n = e->P->n, K = hp->conv_kernel, D = hp->ssm_inner, Gr = hp->ssm_k_heads, N = hp->ssm_d;
    const int conv_dim = D + 2 * Gr * N, gs = D / Gr;
    const int64_t ld = L->m2_in->ne[1];
    const cf_gpu_view rows_v = at(o->qkv, 0), y = at(o->ff, 0), h = at(o->h, 0);
    mm(G, L->m2_in, G->in, n, rows_v);
    cf_gpu_conv(o->g, CF_GPU_CONV_SILU, shift(rows_v, (size_t)D), ld, n, conv_dim, W(G, L->m2_conv),
                W(G, L->m2_conv_b), K, state(G, l, 0), shift(rows_v, (size_t)D), ld);
    const cf_gpu_mamba2 m = {
        .rows = rows_v,
        .rows_ld = ld,
        .dt_b = W(G, L->m2_dt_b),
        .a = W(G, L->m2_a),
        .skip = W(G, L->m2_skip),
        .state = state(G, l, (size_t)(K - 1) * (size_t)conv_dim),
        .out = y,
        .n = n,
        .D = D,
        .H = hp->ssm_v_heads,
        .G = Gr,
        .N = N,
    };
    cf_gpu_mamba2_scan(o->g, &m);
    for (int g = 0; g < Gr; g++) {
        const size_t off = (size_t)g * (size_t)gs;
        cf_gpu_rms_norm(o->g, rows(shift(y, off), n, 1, D, 0), gs, shift(W(G, L->m2_norm), off), hp->norm_eps,
                        rows(shift(h, off), n, 1, D, 0));
    }
    mm(G, L->m2_out, h, n, at(o->out, 0));
}

static void round_ff(cf_exec *e, cf_weight w)
{
    (void)e; /* glu left in the FFN's output */
    (void)w;
}

static void logit_scale(cf_exec *e, int rows_)
{
    /* done on the host after the logits are read (forward.c) */
    (void)e;
    (void)rows_;
}

static void sync(cf_exec *e, cf_next next, int l)
{
    (void)e;
    (void)next;
    (void)l;
}

const cf_ops cf_gpu_ops = {
    .name = "GPU",
    .residual_norm = residual_norm,
    .qkv = qkv,
    .latent_qkv = latent_qkv,
    .ple = ple,
    .dual_ffn_inputs = dual_ffn_inputs,
    .dual_ffn_sum = dual_ffn_sum,
    .attention = attention,
    .matmul = matmul,
    .glu = glu,
    .round_ff = round_ff,
    .conv = conv,
    .delta_net = delta_net,
    .mamba2 = mamba2,
    .moe_route = moe_route,
    .experts_up = experts_up,
    .experts_down = experts_down,
    .shared_expert = shared_expert,
    .logit_scale = logit_scale,
    .sync = sync,
};
