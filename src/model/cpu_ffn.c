/* The CPU's feed-forward ops: the gated FFN in row tiles, the mixture of
 * experts (a batch's tokens grouped by expert), gemma4's dual FFN and
 * per-layer embeddings. */
#include <math.h>
#include <string.h>

#include "cpu_pass.h"

/* gate and up rows in chunks; each thread turns its chunk into
 * act(gate) * up (gpt2: gelu(up + b); nemotron_h: relu(up)^2) in c->ff. */
void cpu_glu(cf_exec *e, const cf_layer *L)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int64_t F = L->n_ff;
    const int n = P->n, phase = T->phase++;
    const bool gpt2 = P->hp->ffn == CF_FFN_GELU, relu2 = P->hp->ffn == CF_FFN_RELU2;
    const bool fused = !gpt2 && !relu2 && !L->w_gate;
    cf_weight qkv[3], ws[3];
    cf_layer_groups(L, qkv, ws);
    const size_t rb = cf_row_bytes(ws[0]->type, ws[0]->ne[0]) * (gpt2 || relu2 ? 1 : 2);
    const int64_t piece = cpu_piece_rows(rb, (int64_t)(c->tile_cap / (size_t)n) & ~(int64_t)15);
    float *up = T->b->tile;
    int64_t a, nr;
    while ((nr = cpu_grab_rows(T, phase, F, piece, &a)) > 0) {
        float *g = c->ff + a;
        if (gpt2) {
            cpu_mm(L->w_up, a, nr, act(T, 0, 0), c->xq_stride, n, g, (size_t)F, phase_serial(T, phase));
            for (int t = 0; t < n; t++)
                for (int64_t i = 0; i < nr; i++) {
                    float *y = &g[(size_t)t * F + i];
                    *y = cf_gelu(*y + ((const float *)L->b_up->data)[a + i]);
                }
            continue;
        }
        cpu_mm(ws[0], a, nr, act(T, 0, 0), c->xq_stride, n, g, (size_t)F, phase_serial(T, phase));
        if (relu2) {
            for (int t = 0; t < n; t++)
                cf_relu_squared(g + (size_t)t * F, nr);
            continue;
        }
        cpu_mm(fused ? L->w_up : ws[1], fused ? F + a : a, nr, act(T, fused ? 0 : cf_xq_index(ws, 1), 0),
               c->xq_stride, n, up, (size_t)nr, phase_serial(T, phase));
        for (int t = 0; t < n; t++) {
            float *gt = g + (size_t)t * F, *ut = up + (size_t)t * nr;
            if (P->hp->ffn == CF_FFN_GEGLU)
                for (int64_t i = 0; i < nr; i++)
                    gt[i] = cf_gelu(gt[i]) * ut[i];
            else
                P->vec->silu_mul(gt, ut, (int)nr);
        }
    }
}

/* ---- mixture of experts ---------------------------------------------------- */

/* Route every token (the router's logits are in c->moe_logits) and group
 * the (token, expert) pairs by expert, tokens in increasing order within
 * an expert; a batch's inputs are gathered into pair rows so that each
 * expert runs one matmul over its tokens.  One thread plans: it is a few
 * hundred comparisons per token. */
void cpu_moe_route(cf_exec *ex, const cf_layer *L, cf_weight const ff[3])
{
    thr *T = cpu_thr(ex);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, X = hp->n_expert, k = hp->n_expert_used;
    if (T->ith == 0) {
        if (L->moe_router_b)
            for (int t = 0; t < n; t++)
                P->vec->add(c->moe_logits + (size_t)t * X, c->moe_logits + (size_t)t * X, L->moe_router_b->data,
                            NULL, X);
        memset(c->moe_off, 0, (size_t)(X + 1) * sizeof *c->moe_off);
        for (int t = 0; t < n; t++) {
            cf_moe_route(hp, c->moe_logits + (size_t)t * X, L->moe_choice_b ? L->moe_choice_b->data : NULL,
                         c->moe_sel + (size_t)t * k, c->moe_w + (size_t)t * k);
            for (int j = 0; j < k; j++)
                c->moe_off[c->moe_sel[t * k + j] + 1]++;
        }
        c->moe_n_used = c->moe_max_pairs = 0;
        for (int e = 0; e < X; e++) {
            const int cnt = c->moe_off[e + 1];
            if (cnt)
                c->moe_used[c->moe_n_used++] = e;
            c->moe_max_pairs = cnt > c->moe_max_pairs ? cnt : c->moe_max_pairs;
            c->moe_off[e + 1] += c->moe_off[e];
        }
        int32_t next[CF_MAX_EXPERTS];
        memcpy(next, c->moe_off, (size_t)X * sizeof *next);
        const uint8_t *xin = c->xq[cf_moe_xq(L, ff)];
        for (int t = 0; t < n; t++)
            for (int j = 0; j < k; j++) {
                const int p = next[c->moe_sel[t * k + j]]++;
                c->moe_slot[t * k + j] = p;
                if (!P->one)
                    memcpy(c->moe_x + (size_t)p * c->xq_stride, xin + (size_t)t * c->xq_stride,
                           c->xq_stride);
            }
    }
    sync_all(T);
}

/* The experts' input rows: a batch's gathered pairs, or a single token's
 * own rounded row. */
static const uint8_t *moe_input(const thr *T, const cf_layer *L, cf_weight const ff[3], int e)
{
    const cf_ctx *c = T->ex.P->c;
    return T->ex.P->one ? act(T, cf_moe_xq(L, ff), 0) : c->moe_x + (size_t)c->moe_off[e] * c->xq_stride;
}

/* The used experts' rows (`width` each) are shared out as one stack; the
 * part of stacked rows [v, end) inside one expert: *e, its first row *r,
 * and the count. */
static int64_t expert_span(const cf_ctx *c, int64_t width, int64_t v, int64_t end, int *e, int64_t *r)
{
    *e = c->moe_used[v / width];
    *r = v % width;
    return width - *r < end - v ? width - *r : end - v;
}

/* act(gate) * up of every pair (experts without a gate: relu(up)^2), in
 * row pieces of the used experts. */
void cpu_experts_up(cf_exec *ex, const cf_layer *L, cf_weight const ff[3])
{
    thr *T = cpu_thr(ex);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int64_t F = P->hp->n_ff_exp;
    const int phase = T->phase++;
    const cf_weight first = L->moe_gate ? L->moe_gate : L->moe_up;
    const size_t rb = (L->moe_gate ? 2 : 1) * cf_row_bytes(first->type, first->ne[0]);
    const int64_t cap = (int64_t)(c->tile_cap / (size_t)c->moe_max_pairs) & ~(int64_t)15;
    const int64_t piece = cpu_piece_rows(rb, cap); /* tile_cap >= 64 rows of a batch */
    int64_t v0, nv;
    while ((nv = cpu_grab_rows(T, phase, (int64_t)c->moe_n_used * F, piece, &v0)) > 0)
        for (int64_t v = v0, r, cnt; v < v0 + nv; v += cnt) {
            int e;
            cnt = expert_span(c, F, v, v0 + nv, &e, &r);
            const int p0 = c->moe_off[e], np = c->moe_off[e + 1] - p0;
            const uint8_t *x = moe_input(T, L, ff, e);
            float *g = c->moe_ff + (size_t)p0 * F + r, *up = T->b->tile;
            if (!L->moe_gate) {
                cpu_mm(L->moe_up, e * F + r, cnt, x, c->xq_stride, np, g, (size_t)F, 0);
                for (int i = 0; i < np; i++)
                    cf_relu_squared(g + (size_t)i * F, cnt);
                continue;
            }
            cpu_mm(L->moe_gate, e * F + r, cnt, x, c->xq_stride, np, g, (size_t)F, 0);
            cpu_mm(L->moe_up, e * F + r, cnt, x, c->xq_stride, np, up, (size_t)cnt, 0);
            for (int i = 0; i < np; i++) {
                float *gi = g + (size_t)i * F, *ui = up + (size_t)i * cnt;
                if (L->moe_gate_b) {
                    P->vec->add(gi, gi, (const float *)L->moe_gate_b->data + e * F + r, NULL, (int)cnt);
                    P->vec->add(ui, ui, (const float *)L->moe_up_b->data + e * F + r, NULL, (int)cnt);
                }
                if (P->hp->ffn == CF_FFN_SWIGLU_OAI)
                    cf_swiglu_oai(gi, ui, (int)cnt);
                else if (P->hp->ffn == CF_FFN_GEGLU)
                    for (int64_t j = 0; j < cnt; j++)
                        gi[j] = cf_gelu(gi[j]) * ui[j];
                else
                    P->vec->silu_mul(gi, ui, (int)cnt);
            }
        }
}

/* The pairs' down projections, then each token's weighted sum of its
 * experts' outputs (best first, as llama.cpp adds them) into c->tmp. */
void cpu_experts_down(cf_exec *ex, const cf_layer *L)
{
    thr *T = cpu_thr(ex);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int64_t F = hp->n_ff_exp, E = hp->n_embd;
    const int k = hp->n_expert_used, pairs = P->n * k;
    int p0, p1;
    split(pairs, T->ith, T->nth, &p0, &p1);
    for (int p = p0; p < p1; p++)
        cf_quantize_row(cf_vec_dot_type(L->moe_down->type), c->moe_ff + (size_t)p * F,
                        c->moe_xd + (size_t)p * c->xq_stride, F);
    sync_all(T);

    const int phase = T->phase++;
    const int64_t piece = cpu_piece_rows(cf_row_bytes(L->moe_down->type, F), 0);
    int64_t v0, nv;
    while ((nv = cpu_grab_rows(T, phase, (int64_t)c->moe_n_used * E, piece, &v0)) > 0)
        for (int64_t v = v0, r, cnt; v < v0 + nv; v += cnt) {
            int e;
            cnt = expert_span(c, E, v, v0 + nv, &e, &r);
            const int q0 = c->moe_off[e], nq = c->moe_off[e + 1] - q0;
            float *o = c->moe_out + (size_t)q0 * E + r;
            cpu_mm(L->moe_down, e * E + r, cnt, c->moe_xd + (size_t)q0 * c->xq_stride, c->xq_stride, nq, o,
                   (size_t)E, 0);
            for (int q = 0; L->moe_down_b && q < nq; q++)
                P->vec->add(o + (size_t)q * E, o + (size_t)q * E,
                            (const float *)L->moe_down_b->data + e * E + r, NULL, (int)cnt);
        }
    sync_all(T);

    int i0, i1;
    split((int)E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < P->n; t++) {
        float *y = c->tmp + (size_t)t * E;
        for (int j = 0; j < k; j++) {
            const float *s = L->exp_scale ? L->exp_scale->data : NULL; /* per expert (gemma4) */
            const float w = c->moe_w[t * k + j] * (s ? s[c->moe_sel[t * k + j]] : 1.0f);
            const float *o = c->moe_out + (size_t)c->moe_slot[t * k + j] * E;
            for (int i = i0; i < i1; i++) {
                const float wo = o[i] * w;
                y[i] = j ? y[i] + wo : wo;
            }
        }
    }
    sync_all(T);
}

/* The shared expert, after the routed ones: an FFN on the same input
 * (SwiGLU, or relu(up)^2 without a gate), scaled by sigmoid(sh_inp . h)
 * per token when it has sh_inp (qwen35moe), added to c->tmp.  It reuses
 * the routed experts' buffers: gate rows then up rows in moe_ff, its
 * rounded rows in moe_xd, its outputs in moe_out. */
void cpu_shared_expert(cf_exec *e, const cf_layer *L, cf_weight const ff[3])
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int n = P->n, E = P->hp->n_embd, F = P->hp->n_ff_shexp;
    const bool gated = L->sh_gate != NULL;
    const cf_weight w[2] = {gated ? L->sh_gate : L->sh_up, L->sh_up};
    const int xi[2] = {cf_xq_index(ff, 1), cf_xq_index(ff, 1)};
    float *const y[2] = {c->moe_ff, c->moe_ff + (size_t)n * F};
    const size_t ys[2] = {(size_t)F, (size_t)F};
    cpu_stacked(T, w, xi, y, ys, gated ? 2 : 1);
    sync_all(T);
    int r0, r1;
    split(n, T->ith, T->nth, &r0, &r1);
    for (int t = r0; t < r1; t++) {
        float *g = c->moe_ff + (size_t)t * F;
        if (gated)
            P->vec->silu_mul(g, g + (size_t)n * F, F);
        else
            cf_relu_squared(g, F);
        cf_quantize_row(cf_vec_dot_type(L->sh_down->type), g, c->moe_xd + (size_t)t * c->xq_stride, F);
    }
    sync_all(T);
    cpu_matmul_rows(T, L->sh_down, c->moe_xd, n, c->moe_out, (size_t)E);
    sync_all(T);
    int i0, i1;
    split(E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < n; t++) {
        /* the router's input is F32: its rounded row is h itself */
        const float *h = (const float *)act(T, 0, t);
        const float gate = L->sh_inp ? 1.0f / (1.0f + expf(-cf_vec_dot(CF_TYPE_F32, E, L->sh_inp->data, h)))
                                     : 1.0f;
        const float *o = c->moe_out + (size_t)t * E;
        float *y_t = c->tmp + (size_t)t * E;
        for (int i = i0; i < i1; i++)
            y_t[i] += o[i] * gate;
    }
    sync_all(T);
}

/* Gemma 4 MoE, after its dense FFN (in c->tmp): that output normalised
 * aside, and the residual rounded for the router, rms(x) / sqrt(n_embd) *
 * router_scale, and for the experts, rms(x, exp_pre_norm). */
void cpu_dual_ffn_inputs(cf_exec *e, const cf_layer *L, cf_weight const moe[3])
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int E = hp->n_embd;
    int r0, r1;
    split(P->n, T->ith, T->nth, &r0, &r1);
    for (int r = r0; r < r1; r++)
        P->vec->rmsnorm(c->dense_out + (size_t)r * E, c->tmp + (size_t)r * E, L->dense_norm->data, E,
                        hp->norm_eps);
    const float *scale = L->router_scale->data, inv_sqrt_e = 1.0f / sqrtf((float)E);
    float *row = T->b->row;
    my_rows(T, 0, P->n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        const float *x = resid(T, r);
        for (int i = 0; i < E; i++)
            row[i] = x[i];
        cf_rms_unweighted(row, E, hp->norm_eps);
        for (int i = 0; i < E; i++)
            row[i] = row[i] * inv_sqrt_e * scale[i];
        cf_quantize_row(cf_vec_dot_type(moe[0]->type), row, act(T, cf_xq_index(moe, 0), r), E);
        P->vec->rmsnorm(row, x, L->exp_pre_norm->data, E, hp->norm_eps);
        cf_quantize_row(cf_vec_dot_type(moe[1]->type), row, act(T, cf_moe_xq(L, moe), r), E);
    }
    sync_all(T);
}

/* Gemma 4 MoE's FFN output: the dense part plus rms(experts, exp_norm). */
void cpu_dual_ffn_sum(cf_exec *e, const cf_layer *L)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int E = P->hp->n_embd;
    int r0, r1;
    split(P->n, T->ith, T->nth, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        float *y = c->tmp + (size_t)r * E;
        P->vec->rmsnorm(y, y, L->exp_norm->data, E, P->hp->norm_eps);
        P->vec->add(y, c->dense_out + (size_t)r * E, y, NULL, E);
    }
    sync_all(T);
}

/* gemma4's per-layer inputs of every token (c->ple, n_layer x ple each):
 * (ple_embd[token] sqrt(ple) + rms(ple_model_proj x / sqrt(n_embd))) /
 * sqrt(2), x the scaled input embedding. */
void cpu_ple_inputs(cf_exec *e)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_model *m = P->m;
    const int n = P->n, E = P->hp->n_embd, D = P->hp->ple_dim, NL = P->hp->n_layer;
    cf_weight w[3] = {m->ple_model_proj, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int r = r0; r < r1; r++)
        cpu_round_row(T, w, resid(T, r), r);
    rows_done(T);
    cpu_matmul_rows(T, m->ple_model_proj, act(T, 0, 0), n, c->ple, (size_t)NL * D);
    sync_all(T);
    const size_t row = cf_row_bytes(m->ple_embd->type, (int64_t)NL * D);
    const float in_scale = 1.0f / sqrtf((float)E), emb_scale = sqrtf((float)D), mix = 1.0f / sqrtf(2.0f);
    float *a = T->b->tile; /* one token's embedding rows, n_layer x ple */
    int u0, u1;
    split(n, T->ith, T->nth, &u0, &u1);
    for (int t = u0; t < u1; t++) {
        cf_dequantize_row(m->ple_embd->type, (const uint8_t *)m->ple_embd->data + (size_t)P->tokens[t] * row,
                          a, (int64_t)NL * D);
        for (int il = 0; il < NL; il++) {
            float *b = c->ple + ((size_t)t * NL + il) * D;
            for (int i = 0; i < D; i++)
                b[i] *= in_scale;
            P->vec->rmsnorm(b, b, m->ple_model_norm->data, D, P->hp->norm_eps);
            for (int i = 0; i < D; i++)
                b[i] = (a[il * D + i] * emb_scale + b[i]) * mix;
        }
    }
    sync_all(T);
}

/* gemma4's per-layer embedding step after the FFN: the residual (the FFN
 * output added) goes through ple_gate, GELU, times the token's input of
 * this layer, and ple_proj, into c->tmp. */
void cpu_ple(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int n = P->n, D = P->hp->ple_dim;
    const cf_block_out ffn_out = {L->b_down, L->post_ffn_norm, NULL};
    cf_weight gate[3] = {L->ple_gate, NULL, NULL}, proj[3] = {L->ple_proj, NULL, NULL};
    cpu_residual_norm(e, 0, n, &ffn_out, NULL, NULL, gate);
    cpu_matmul_rows(T, L->ple_gate, act(T, 0, 0), n, c->ff, (size_t)D);
    sync_all(T);
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int t = r0; t < r1; t++) {
        const float *g = c->ff + (size_t)t * D, *pl = c->ple + ((size_t)t * P->hp->n_layer + l) * D;
        for (int i = 0; i < D; i++)
            T->b->row[i] = cf_gelu(g[i]) * pl[i];
        cpu_round_row(T, proj, T->b->row, t);
    }
    rows_done(T);
    cpu_matmul_rows(T, L->ple_proj, act(T, 0, 0), n, c->tmp, (size_t)P->hp->n_embd);
    sync_all(T);
}

