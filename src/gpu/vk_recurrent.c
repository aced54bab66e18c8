/* The recurrent mixers' steps on the device: the short causal
 * convolution (qwen35, lfm2) and qwen35's gated delta net. */
#include "vk_internal.h"

/* conv.comp's, delta_net.comp's and mamba2.comp's bounds */
#define MAX_CONV_K 16
#define MAX_DELTA_D 256
#define MAX_M2 256

void cf_gpu_conv(cf_gpu *g, cf_gpu_conv_kind kind, cf_gpu_view seq, int64_t ld, int n, int channels, cf_gpu_view w,
                 cf_gpu_view bias, int K, cf_gpu_view window, cf_gpu_view out, int64_t ld_out)
{
    if (!cf_vk_can_record(g, "conv"))
        return;
    const bool gated = kind == CF_GPU_CONV_GATED;
    const int width = gated ? 3 * channels : channels;
    if (n < 0 || channels <= 0 || K < 1 || K > MAX_CONV_K || ld < width || ld_out < channels ||
        (kind != CF_GPU_CONV_SILU && !gated))
        return (void)cf_vk_fail(g, "conv: %d tokens of %d channels (rows %lld apart), kernel %d (up to %d)", n, channels,
                                (long long)ld, K, MAX_CONV_K);
    const uint64_t in = n ? ((uint64_t)(n - 1) * (uint64_t)ld + (uint64_t)width) * 4 : 0;
    const uint64_t outb = n ? ((uint64_t)(n - 1) * (uint64_t)ld_out + (uint64_t)channels) * 4 : 0;
    if (!cf_vk_view_ok(g, seq, in, "conv's rows") || !cf_vk_view_ok(g, w, (uint64_t)channels * (uint64_t)K * 4, "conv's weights") ||
        (K > 1 && !cf_vk_view_ok(g, window, (uint64_t)(K - 1) * (uint64_t)channels * 4, "conv's window")) ||
        !cf_vk_view_ok(g, out, outb, "conv's output") ||
        (bias.buf && !gated && !cf_vk_view_ok(g, bias, (uint64_t)channels * 4, "conv's bias")))
        return;
    const struct {
        uint32_t seq_off, ld, n, channels, w_off, K, win_off, out_off, ld_out, gated, bias_off, has_bias;
    } p = {(uint32_t)(seq.off / 4),    (uint32_t)ld,              (uint32_t)n,
           (uint32_t)channels,         (uint32_t)(w.off / 4),     (uint32_t)K,
           (uint32_t)(window.off / 4), (uint32_t)(out.off / 4),   (uint32_t)ld_out,
           gated,                      (uint32_t)(bias.off / 4),  bias.buf && !gated};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {seq.buf, w.buf, window.buf, out.buf, gated ? NULL : bias.buf};
    cf_vk_dispatch(g, "conv", b, &p, sizeof p, ((uint64_t)channels + 63) / 64);
}

void cf_gpu_delta_net(cf_gpu *g, const cf_gpu_delta *d)
{
    if (!cf_vk_can_record(g, "delta_net"))
        return;
    const int D = d->D, Hk = d->Hk, Hv = d->Hv, n = d->n;
    if (n < 0 || D <= 0 || D > MAX_DELTA_D || Hk <= 0 || Hv <= 0 || Hv % Hk ||
        d->qkv_ld < (int64_t)(2 * Hk + Hv) * D)
        return (void)cf_vk_fail(g, "delta_net: %d key and %d value heads of %d (up to %d), rows %lld apart", Hk, Hv, D,
                                MAX_DELTA_D, (long long)d->qkv_ld);
    const uint64_t hd = (uint64_t)Hv * (uint64_t)D * 4, rows = n ? (uint64_t)(n - 1) * (uint64_t)d->qkv_ld * 4 : 0;
    if (!cf_vk_view_ok(g, d->qkv, n ? rows + (uint64_t)(2 * Hk + Hv) * (uint64_t)D * 4 : 0, "delta_net's rows") ||
        !cf_vk_view_ok(g, d->z, (uint64_t)n * hd, "delta_net's gates") ||
        !cf_vk_view_ok(g, d->beta, (uint64_t)n * (uint64_t)Hv * (d->grouped ? 8 : 4), "delta_net's betas") ||
        (!d->grouped && !cf_vk_view_ok(g, d->alpha, (uint64_t)n * (uint64_t)Hv * 4, "delta_net's alphas")) ||
        !cf_vk_view_ok(g, d->dt_bias, (uint64_t)Hv * 4, "delta_net's dt bias") ||
        !cf_vk_view_ok(g, d->a, (uint64_t)Hv * 4, "delta_net's a") ||
        !cf_vk_view_ok(g, d->norm, (uint64_t)D * 4, "delta_net's norm") ||
        !cf_vk_view_ok(g, d->state, (uint64_t)D * hd, "delta_net's state") ||
        !cf_vk_view_ok(g, d->out, (uint64_t)n * hd, "delta_net's output"))
        return;
    const struct {
        uint32_t qkv_off, qkv_ld, z_off, beta_off, alpha_off, dt_off, a_off, norm_off, s_off, out_off;
        uint32_t n, D, Hk, Hv, grouped;
        float eps;
    } p = {(uint32_t)(d->qkv.off / 4),   (uint32_t)d->qkv_ld,         (uint32_t)(d->z.off / 4),
           (uint32_t)(d->beta.off / 4),  (uint32_t)(d->alpha.off / 4), (uint32_t)(d->dt_bias.off / 4),
           (uint32_t)(d->a.off / 4),     (uint32_t)(d->norm.off / 4),  (uint32_t)(d->state.off / 4),
           (uint32_t)(d->out.off / 4),   (uint32_t)n,                  (uint32_t)D,
           (uint32_t)Hk,                 (uint32_t)Hv,                 d->grouped,
           d->eps};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {d->qkv.buf,  d->z.buf,    d->beta.buf,  d->grouped ? NULL : d->alpha.buf,
                                     d->dt_bias.buf, d->a.buf, d->norm.buf, d->state.buf, d->out.buf};
    cf_vk_dispatch(g, "delta_net", b, &p, sizeof p, (uint64_t)Hv);
}

void cf_gpu_mamba2_scan(cf_gpu *g, const cf_gpu_mamba2 *m)
{
    if (!cf_vk_can_record(g, "mamba2_scan"))
        return;
    const int n = m->n, D = m->D, H = m->H, G = m->G, N = m->N;
    if (n < 0 || D <= 0 || H <= 0 || G <= 0 || N <= 0 || D % H || H % G || D / H > MAX_M2 || N > MAX_M2 || N % 8 ||
        m->rows_ld < (int64_t)2 * D + 2 * G * N + H)
        return (void)cf_vk_fail(g, "mamba2_scan: %d channels in %d heads, %d groups, state %d (heads of up to %d, "
                                   "states up to %d and a multiple of 8), rows %lld apart",
                                D, H, G, N, MAX_M2, MAX_M2, (long long)m->rows_ld);
    const uint64_t row = (uint64_t)(2 * D + 2 * G * N + H) * 4;
    if (!cf_vk_view_ok(g, m->rows, n ? (uint64_t)(n - 1) * (uint64_t)m->rows_ld * 4 + row : 0, "mamba2's rows") ||
        !cf_vk_view_ok(g, m->dt_b, (uint64_t)H * 4, "mamba2's dt bias") ||
        !cf_vk_view_ok(g, m->a, (uint64_t)H * 4, "mamba2's a") || !cf_vk_view_ok(g, m->skip, (uint64_t)H * 4, "mamba2's skip") ||
        !cf_vk_view_ok(g, m->state, (uint64_t)D * (uint64_t)N * 4, "mamba2's state") ||
        !cf_vk_view_ok(g, m->out, (uint64_t)n * (uint64_t)D * 4, "mamba2's output"))
        return;
    const struct {
        uint32_t rows_off, rows_ld, dt_off, a_off, skip_off, s_off, out_off, n, D, H, G, N;
    } p = {(uint32_t)(m->rows.off / 4), (uint32_t)m->rows_ld,       (uint32_t)(m->dt_b.off / 4),
           (uint32_t)(m->a.off / 4),    (uint32_t)(m->skip.off / 4), (uint32_t)(m->state.off / 4),
           (uint32_t)(m->out.off / 4),  (uint32_t)n,                 (uint32_t)D,
           (uint32_t)H,                 (uint32_t)G,                 (uint32_t)N};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {m->rows.buf, m->dt_b.buf, m->a.buf, m->skip.buf, m->state.buf, m->out.buf};
    cf_vk_dispatch(g, "mamba2", b, &p, sizeof p, (uint64_t)H);
}
