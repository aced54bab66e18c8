/* The CPU's token mixers with a recurrent state (docs/design.md): lfm2's
 * short convolution, qwen35's gated delta net and Mamba2 (docs/mamba2.md). */
#include <math.h>

#include "cpu_pass.h"

/* ---- short convolution ----------------------------------------------------- */

/* A causal convolution over time, in place: seq[t][ch] becomes
 * sum_k w[ch][k] seq[t - K + 1 + k][ch] for channels [ch0, ch1), the
 * layer's window holding the K - 1 inputs before this batch (oldest first)
 * and left holding the batch's last K - 1.  Time runs in order within a
 * channel, so threads take channels. */
static void causal_conv(float *seq, size_t stride, int n, int ch0, int ch1, int channels,
                        const float *w, int K, float *window)
{
    for (int ch = ch0; ch < ch1; ch++) {
        float win[16]; /* the last K inputs of this channel */
        for (int k = 0; k < K - 1; k++)
            win[k] = window[(size_t)k * channels + ch];
        for (int t = 0; t < n; t++) {
            float *u = seq + (size_t)t * stride + ch;
            win[K - 1] = *u;
            float sum = 0.0f;
            for (int k = 0; k < K; k++)
                sum += win[k] * w[(size_t)ch * K + k];
            *u = sum;
            for (int k = 0; k < K - 1; k++)
                win[k] = win[k + 1];
        }
        for (int k = 0; k < K - 1; k++)
            window[(size_t)k * channels + ch] = win[k];
    }
}

/* Layer l's recurrent state in token t's sequence (its context's). */
static float *seq_state(const cf_pass *P, int t, int l)
{
    const cf_ctx *s = cf_pass_ctx(P, t);
    return s->rs + s->rs_off[l];
}

/* causal_conv of the batch's qkv rows from seq on, each sequence through
 * its own window (a group's tokens are a sequence each). */
static void conv_seqs(const cf_pass *P, float *seq, int l, int ch0, int ch1, int channels,
                      const float *w, int K)
{
    const size_t stride = P->c->qkv_stride;
    for (int t0 = 0, t1; t0 < P->n; t0 = t1) {
        t1 = cf_pass_run_end(P, t0);
        causal_conv(seq + (size_t)t0 * stride, stride, t1 - t0, ch0, ch1, channels, w, K,
                    seq_state(P, t0, l));
    }
}

/* lfm2's mixer: [B | C | X] = in_proj h; u = B * X, convolved over the
 * last conv_kernel tokens; out_proj (C * conv(u)). */
void cpu_conv(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const int E = P->hp->n_embd, n = P->n;
    cpu_matmul_rows(T, L->conv_in, act(T, 0, 0), n, c->qkv, c->qkv_stride);
    sync_all(T);
    int i0, i1;
    split(E, T->ith, T->nth, &i0, &i1);
    for (int t = 0; t < n; t++) { /* u = B * X, in X's place */
        float *row = c->qkv + (size_t)t * c->qkv_stride;
        for (int ch = i0; ch < i1; ch++)
            row[2 * E + ch] *= row[ch];
    }
    conv_seqs(P, c->qkv + 2 * E, l, i0, i1, E, L->conv_w->data, P->hp->conv_kernel);
    for (int t = 0; t < n; t++) {
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        for (int ch = i0; ch < i1; ch++)
            c->ff[(size_t)t * E + ch] = row[E + ch] * row[2 * E + ch];
    }
    sync_all(T);
    cpu_round(T, L->conv_out, c->ff, (size_t)E);
    cpu_matmul_rows(T, L->conv_out, act(T, 0, 0), n, c->tmp, (size_t)E);
    sync_all(T);
}

/* ---- gated delta net -------------------------------------------------------- */

/* x / max(|x|, eps), as ggml_l2_norm (the sum in double) */
static void l2_normalize(float *y, const float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * scale;
}

static float silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* ln(1 + e^x), x itself past 20, as ggml */
static float softplus(float x)
{
    return x > 20.0f ? x : log1pf(expf(x));
}

/* The raw beta and alpha of value head h for token t: their own rows, or
 * fused as ssm_ba's, r = Hv / Hk betas then r alphas per key head. */
static void beta_alpha(const cf_ctx *c, const cf_hparams *hp, int t, int h, float *beta, float *alpha)
{
    const int Hv = hp->ssm_v_heads;
    if (!hp->ssm_v_grouped) {
        *beta = c->dn_beta[(size_t)t * Hv + h];
        *alpha = c->dn_alpha[(size_t)t * Hv + h];
        return;
    }
    const int r = Hv / hp->ssm_k_heads;
    const float *ba = c->dn_beta + (size_t)t * 2 * Hv + (size_t)(h / r) * 2 * r;
    *beta = ba[h % r];
    *alpha = ba[r + h % r];
}

/* One value head of the recurrence over tokens [t0, t1) of one sequence, in order:
 * S <- exp(g) S; d = beta (v - S^T k); S <- S + k d^T; o = S^T q / sqrt(D),
 * with q and k L2-normalised; then o is RMS-normalised by ssm_norm and
 * gated by silu(z).  S[i][j]: key dim i, value dim j.  The key head is
 * h % Hk when the value heads are tiled over the key heads (qwen35's
 * converter reorders them so), h / (Hv / Hk) when grouped. */
static void delta_head(const thr *T, const cf_layer *L, float *S, int h, int t0, int t1)
{
    const cf_pass *P = T->ex.P;
    const cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int D = hp->ssm_d, Hk = hp->ssm_k_heads, Hv = hp->ssm_v_heads;
    const int kh = hp->ssm_v_grouped ? h / (Hv / Hk) : h % Hk;
    const float eps = hp->norm_eps, q_scale = 1.0f / sqrtf((float)D);
    const float dt_bias = ((const float *)L->dn_dt_bias->data)[h], a = ((const float *)L->dn_a->data)[h];
    float q[256], k[256], d[256];
    for (int t = t0; t < t1; t++) {
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        const float *v = row + (size_t)(2 * Hk + h) * D;
        l2_normalize(q, row + (size_t)kh * D, D, eps);
        l2_normalize(k, row + (size_t)(Hk + kh) * D, D, eps);
        for (int i = 0; i < D; i++)
            q[i] *= q_scale;
        float b_raw, a_raw;
        beta_alpha(c, hp, t, h, &b_raw, &a_raw);
        const float beta = 1.0f / (1.0f + expf(-b_raw));
        const float x = a_raw + dt_bias;
        const float decay = expf(softplus(x) * a);
        for (int i = 0; i < D * D; i++)
            S[i] *= decay;
        /* S^T k and S^T q run over rows of S (contiguous, so they
         * vectorise), each sum still in increasing i */
        for (int j = 0; j < D; j++)
            d[j] = 0.0f;
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                d[j] += S[i * D + j] * k[i];
        for (int j = 0; j < D; j++)
            d[j] = beta * (v[j] - d[j]);
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                S[i * D + j] += k[i] * d[j];
        float *o = c->ff + (size_t)t * Hv * D + (size_t)h * D;
        for (int j = 0; j < D; j++)
            o[j] = 0.0f;
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                o[j] += S[i * D + j] * q[i];
        P->vec->rmsnorm(o, o, L->dn_norm->data, D, eps);
        const float *z = c->dn_z + (size_t)t * Hv * D + (size_t)h * D;
        for (int j = 0; j < D; j++)
            o[j] *= silu(z[j]);
    }
}

/* qwen35's recurrent mixer: the projections, the causal convolution (with
 * SiLU) of q|k|v over the last conv_kernel tokens, the recurrence per value
 * head, then ssm_out.  The layer's state: the convolution's window, then
 * each value head's S. */
void cpu_delta_net(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, K = hp->conv_kernel, D = hp->ssm_d, Hv = hp->ssm_v_heads;
    const int conv_dim = (int)L->dn_qkv->ne[1];
    cf_weight ws[3], ff[3];
    cf_layer_groups(L, ws, ff);
    const cf_weight w[4] = {L->dn_qkv, L->dn_z, L->dn_beta, L->dn_alpha};
    const int xi[4] = {cf_xq_index(ws, 0), cf_xq_index(ws, 1), cf_xq_index(ws, 2), cf_xq_index(ws, 2)};
    float *const y[4] = {c->qkv, c->dn_z, c->dn_beta, c->dn_alpha};
    const size_t ys[4] = {c->qkv_stride, (size_t)Hv * D, (size_t)L->dn_beta->ne[1], (size_t)Hv};
    cpu_stacked(T, w, xi, y, ys, L->dn_alpha ? 4 : 3);
    sync_all(T);

    /* the convolution of q|k|v with SiLU, in place; each sequence's state:
     * K - 1 rows of conv_dim, then each head's S */
    int i0, i1;
    split(conv_dim, T->ith, T->nth, &i0, &i1);
    conv_seqs(P, c->qkv, l, i0, i1, conv_dim, L->dn_conv->data, K);
    for (int t = 0; t < n; t++)
        for (int ch = i0; ch < i1; ch++) {
            float *u = c->qkv + (size_t)t * c->qkv_stride + ch;
            *u = silu(*u);
        }
    sync_all(T);

    split(Hv, T->ith, T->nth, &i0, &i1);
    for (int t0 = 0, t1; t0 < n; t0 = t1) {
        float *S = seq_state(P, t0, l) + (size_t)(K - 1) * conv_dim;
        t1 = cf_pass_run_end(P, t0);
        for (int h = i0; h < i1; h++)
            delta_head(T, L, S + (size_t)h * D * D, h, t0, t1);
    }
    sync_all(T);
    cpu_round(T, L->dn_out, c->ff, (size_t)Hv * D);
    cpu_matmul_rows(T, L->dn_out, act(T, 0, 0), n, c->tmp, (size_t)hp->n_embd);
    sync_all(T);
}

/* ---- Mamba2 ----------------------------------------------------------------- */

/* One head of the scan over tokens [t0, t1) of one sequence, in order (scalar-A Mamba2,
 * as ggml_ssm_scan): with dt = softplus(dt + dt_b) and B, C of the head's
 * group (consecutive heads share one), S <- exp(dt a) S + (dt x) B^T, then
 * y = (S C + skip x) silu(z).  S[p][i]: head channel p, state i.  S C is
 * summed in M2_LANES partial sums (state i in lane i % M2_LANES, added in
 * a fixed order), which the compiler makes one vector: the same bits for
 * every batch and thread count, and 6-7x faster than one running sum on
 * a head of 64 x 128 (Zen 4). */
#define M2_LANES 8
static void mamba2_head(const thr *T, const cf_layer *L, float *S, int h, int t0, int t1)
{
    const cf_pass *P = T->ex.P;
    const cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int N = hp->ssm_d, H = hp->ssm_v_heads, G = hp->ssm_k_heads, D = hp->ssm_inner, hd = D / H;
    const int g = h / (H / G);
    const float dt_b = ((const float *)L->m2_dt_b->data)[h], a = ((const float *)L->m2_a->data)[h];
    const float skip = ((const float *)L->m2_skip->data)[h];
    for (int t = t0; t < t1; t++) {
        /* the row: z, x, B, C, dt */
        const float *row = c->qkv + (size_t)t * c->qkv_stride;
        const float *z = row + (size_t)h * hd, *x = row + D + (size_t)h * hd;
        const float *B = row + 2 * D + (size_t)g * N, *C = B + (size_t)G * N;
        const float dt = softplus(row[2 * D + 2 * G * N + h] + dt_b), decay = expf(dt * a);
        float *y = c->ff + (size_t)t * D + (size_t)h * hd;
        for (int p = 0; p < hd; p++) {
            float *st = S + (size_t)p * N, part[M2_LANES] = {0};
            const float xdt = x[p] * dt;
            for (int i = 0; i < N; i += M2_LANES)
                for (int j = 0; j < M2_LANES; j++) {
                    st[i + j] = st[i + j] * decay + B[i + j] * xdt;
                    part[j] += st[i + j] * C[i + j];
                }
            float sum = 0.0f;
            for (int j = 0; j < M2_LANES; j++)
                sum += part[j];
            y[p] = (sum + skip * x[p]) * silu(z[p]);
        }
    }
}

/* The Mamba2 mixer: the projection, the causal convolution of x|B|C (plus
 * its bias, with SiLU) over the last conv_kernel tokens, the scan per
 * head, the norm of each group of channels, then m2_out.  The layer's
 * state: the convolution's window (raw inputs), then each head's S. */
void cpu_mamba2(cf_exec *e, const cf_layer *L, int l)
{
    thr *T = cpu_thr(e);
    const cf_pass *P = T->ex.P;
    cf_ctx *c = P->c;
    const cf_hparams *hp = P->hp;
    const int n = P->n, K = hp->conv_kernel, D = hp->ssm_inner, H = hp->ssm_v_heads, N = hp->ssm_d;
    const int conv_dim = D + 2 * hp->ssm_k_heads * N, gs = D / hp->ssm_k_heads;
    cpu_matmul_rows(T, L->m2_in, act(T, 0, 0), n, c->qkv, c->qkv_stride);
    sync_all(T);

    int i0, i1;
    split(conv_dim, T->ith, T->nth, &i0, &i1);
    conv_seqs(P, c->qkv + D, l, i0, i1, conv_dim, L->m2_conv->data, K);
    const float *bias = L->m2_conv_b->data;
    for (int t = 0; t < n; t++)
        for (int ch = i0; ch < i1; ch++) {
            float *u = c->qkv + (size_t)t * c->qkv_stride + D + ch;
            *u = silu(*u + bias[ch]);
        }
    sync_all(T);

    split(H, T->ith, T->nth, &i0, &i1);
    for (int t0 = 0, t1; t0 < n; t0 = t1) {
        float *S = seq_state(P, t0, l) + (size_t)(K - 1) * conv_dim;
        t1 = cf_pass_run_end(P, t0);
        for (int h = i0; h < i1; h++)
            mamba2_head(T, L, S + (size_t)h * (D / H) * N, h, t0, t1);
    }
    sync_all(T);

    cf_weight out[3] = {L->m2_out, NULL, NULL};
    int r0, r1;
    my_rows(T, 0, n, &r0, &r1);
    for (int r = r0; r < r1; r++) {
        const float *y = c->ff + (size_t)r * D, *w = L->m2_norm->data;
        for (int g = 0; g < hp->ssm_k_heads; g++)
            P->vec->rmsnorm(T->b->row + g * gs, y + g * gs, w + g * gs, gs, hp->norm_eps);
        cpu_round_row(T, out, T->b->row, r);
    }
    rows_done(T);
    cpu_matmul_rows(T, L->m2_out, act(T, 0, 0), n, c->tmp, (size_t)hp->n_embd);
    sync_all(T);
}

