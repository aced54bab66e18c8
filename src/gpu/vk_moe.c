/* Mixture of experts on the device: routing each token to its experts,
 * and summing the experts' outputs by their weights.  The experts' matmuls
 * are cf_gpu_matmul_id's. */
#include "vk_internal.h"

/* moe_route.comp's bounds */
#define MAX_EXPERTS 512
#define MAX_USED 64
#define MAX_GROUPS 256

void cf_gpu_moe_route(cf_gpu *g, const cf_hparams *hp, cf_gpu_view logits, cf_gpu_view bias, int n,
                      cf_gpu_view sel, cf_gpu_view w, cf_gpu_view xrow)
{
    const int ne = hp->n_expert, k = hp->n_expert_used;
    if (!cf_vk_can_record(g, "moe_route"))
        return;
    if (ne <= 0 || ne > MAX_EXPERTS || k <= 0 || k > ne || k > MAX_USED || n < 0 || hp->moe_groups > MAX_GROUPS ||
        (hp->moe_groups > 1 && (ne % hp->moe_groups || hp->moe_groups_used <= 0 || hp->moe_groups_used > hp->moe_groups)))
        return (void)cf_vk_fail(g, "moe_route: %d of %d experts in %d groups (%d used): the shader takes up to %d of %d",
                                k, ne, hp->moe_groups, hp->moe_groups_used, MAX_USED, MAX_EXPERTS);
    const uint64_t pairs = (uint64_t)n * (uint64_t)k * 4;
    if (!cf_vk_view_ok(g, logits, (uint64_t)n * (uint64_t)ne * 4, "the router's logits") ||
        (bias.buf && !cf_vk_view_ok(g, bias, (uint64_t)ne * 4, "the router's bias")) ||
        !cf_vk_view_ok(g, sel, pairs, "the chosen experts") || !cf_vk_view_ok(g, w, pairs, "the experts' weights") ||
        !cf_vk_view_ok(g, xrow, pairs, "the pairs' input rows"))
        return;
    const struct {
        uint32_t l_off, b_off, sel_off, w_off, xrow_off, n, n_expert, k;
        uint32_t gating, has_bias, groups, groups_used, norm_w;
        float w_scale;
    } p = {(uint32_t)(logits.off / 4), (uint32_t)(bias.off / 4), (uint32_t)(sel.off / 4), (uint32_t)(w.off / 4),
           (uint32_t)(xrow.off / 4), (uint32_t)n, (uint32_t)ne, (uint32_t)k,
           hp->moe_gating == CF_MOE_SOFTMAX_WEIGHT ? 1u : hp->moe_gating == CF_MOE_SIGMOID ? 2u : 0u,
           bias.buf != NULL, (uint32_t)(hp->moe_groups > 0 ? hp->moe_groups : 0), (uint32_t)hp->moe_groups_used,
           hp->moe_norm_w, hp->moe_w_scale};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {logits.buf, bias.buf, sel.buf, w.buf, xrow.buf};
    cf_vk_dispatch(g, "moe_route", b, &p, sizeof p, (uint64_t)n);
}

void cf_gpu_moe_sum(cf_gpu *g, cf_gpu_view y, cf_gpu_view w, int n, int k, int width, cf_gpu_view out, int64_t ld)
{
    if (!cf_vk_can_record(g, "moe_sum"))
        return;
    if (n < 0 || k <= 0 || width <= 0 || ld < width)
        return (void)cf_vk_fail(g, "moe_sum: %d tokens of %d experts, %d wide, rows %lld apart", n, k, width,
                                (long long)ld);
    if (!cf_vk_view_ok(g, y, (uint64_t)n * (uint64_t)k * (uint64_t)width * 4, "the experts' outputs") ||
        !cf_vk_view_ok(g, w, (uint64_t)n * (uint64_t)k * 4, "the experts' weights") ||
        !cf_vk_view_ok(g, out, n ? ((uint64_t)(n - 1) * (uint64_t)ld + (uint64_t)width) * 4 : 0, "moe_sum's output"))
        return;
    const struct {
        uint32_t y_off, w_off, o_off, n, k, width, ld;
    } p = {(uint32_t)(y.off / 4), (uint32_t)(w.off / 4), (uint32_t)(out.off / 4), (uint32_t)n, (uint32_t)k,
           (uint32_t)width, (uint32_t)ld};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {y.buf, w.buf, out.buf, NULL, NULL};
    cf_vk_dispatch(g, "moe_sum", b, &p, sizeof p, ((uint64_t)n * (uint64_t)width + 255) / 256);
}
