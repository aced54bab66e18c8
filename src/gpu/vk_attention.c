/* Attention on the device: storing keys and values into a layer's F16
 * cache, and softmax attention over it. */
#include "vk_internal.h"

/* attention.comp's limit on a head's size */
#define MAX_HEAD_DIM 512

bool cf_gpu_kv_supports(cf_kv_type t)
{
    return t == CF_KV_F32 || t == CF_KV_F16 || t == CF_KV_BF16;
}

/* Bytes of one cached value. */
static uint64_t kv_elem(cf_kv_type t)
{
    return t == CF_KV_F32 ? 4 : 2;
}

static bool kv_ok(cf_gpu *g, const cf_gpu_kv *kv)
{
    if (!cf_gpu_kv_supports(kv->type))
        return cf_vk_fail(g, "no %s cache on the GPU (F32, F16, BF16)", cf_kv_type_name(kv->type));
    if (kv->n_ctx <= 0 || kv->n_head_kv <= 0 || kv->head_dim <= 0 || kv->head_dim % 2 ||
        kv->head_dim > MAX_HEAD_DIM)
        return cf_vk_fail(g, "a cache of %d positions of %d heads of %d (even, up to %d)", kv->n_ctx,
                          kv->n_head_kv, kv->head_dim, MAX_HEAD_DIM);
    const uint64_t bytes = (uint64_t)kv->n_ctx * (uint64_t)kv->n_head_kv * (uint64_t)kv->head_dim * kv_elem(kv->type);
    return cf_vk_view_ok(g, kv->k, bytes, "the cache's keys") && cf_vk_view_ok(g, kv->v, bytes, "the cache's values");
}

static bool heads_ok(cf_gpu *g, cf_gpu_rows r, int heads, int dim, const char *what)
{
    if (r.heads != heads || r.n < 0 || r.ld < 0 || r.hs < 0)
        return cf_vk_fail(g, "%s: %d heads where %d are wanted", what, r.heads, heads);
    const uint64_t bytes =
        r.n ? ((uint64_t)(r.n - 1) * (uint64_t)r.ld + (uint64_t)(heads - 1) * (uint64_t)r.hs + (uint64_t)dim) * 4 : 0;
    return cf_vk_view_ok(g, r.v, bytes, what);
}

void cf_gpu_kv_store(cf_gpu *g, const cf_gpu_kv *kv, cf_gpu_rows k, cf_gpu_rows v, int pos0)
{
    if (!cf_vk_can_record(g, "kv_store") || !kv_ok(g, kv) ||
        !heads_ok(g, k, kv->n_head_kv, kv->head_dim, "the keys to store") ||
        !heads_ok(g, v, kv->n_head_kv, kv->head_dim, "the values to store"))
        return;
    if (k.n != v.n || pos0 < 0 || pos0 + k.n > kv->n_ctx)
        return (void)cf_vk_fail(g, "kv_store: %d keys, %d values at position %d of %d", k.n, v.n, pos0, kv->n_ctx);
    const struct {
        uint32_t k_off, k_ld, k_hs, v_off, v_ld, v_hs, kc_off, vc_off, n, heads, hd, n_ctx, pos0, type;
    } p = {(uint32_t)(k.v.off / 4), (uint32_t)k.ld, (uint32_t)k.hs, (uint32_t)(v.v.off / 4), (uint32_t)v.ld,
           (uint32_t)v.hs, (uint32_t)(kv->k.off / 4), (uint32_t)(kv->v.off / 4), (uint32_t)k.n,
           (uint32_t)kv->n_head_kv, (uint32_t)kv->head_dim, (uint32_t)kv->n_ctx, (uint32_t)pos0,
           (uint32_t)kv->type};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {k.v.buf, v.v.buf, kv->k.buf, kv->v.buf, NULL};
    const uint64_t threads = 2 * (uint64_t)k.n * (uint64_t)kv->n_head_kv * (uint64_t)(kv->head_dim / 2);
    cf_vk_dispatch(g, "kvstore", b, &p, sizeof p, (threads + 255) / 256);
}

void cf_gpu_attention(cf_gpu *g, const cf_gpu_attn *a)
{
    if (!cf_vk_can_record(g, "attention") || !kv_ok(g, &a->kv))
        return;
    const int n_head = a->q.heads, hd = a->kv.head_dim, n = a->q.n;
    if (n_head <= 0 || n_head % a->kv.n_head_kv || a->pos0 < 0 || a->pos0 + n > a->kv.n_ctx || a->window < 0)
        return (void)cf_vk_fail(g, "attention: %d query heads over %d KV heads, tokens %d.. %d of a %d-position cache",
                                n_head, a->kv.n_head_kv, a->pos0, a->pos0 + n, a->kv.n_ctx);
    if (!heads_ok(g, a->q, n_head, hd, "attention's queries") || !heads_ok(g, a->out, n_head, hd, "attention's output") ||
        (a->sinks.buf && !cf_vk_view_ok(g, a->sinks, (uint64_t)n_head * 4, "attention's sinks")) ||
        (a->gate.v.buf && !heads_ok(g, a->gate, n_head, hd, "attention's gates")))
        return;
    if (a->out.n != n || (a->gate.v.buf && a->gate.n != n))
        return (void)cf_vk_fail(g, "attention: %d tokens of queries, %d of output, %d of gates", n, a->out.n,
                                a->gate.n);
    if (a->temp_scale > 0 && !(a->temp_floor >= 1))
        return (void)cf_vk_fail(g, "attention: a temperature floor of %g", (double)a->temp_floor);
    const struct {
        uint32_t q_off, q_ld, q_hs, o_off, o_ld, o_hs, kc_off, vc_off;
        uint32_t n_ctx, n_head, n_head_kv, hd, pos0, n, window, sinks_off, has_sinks;
        float scale, softcap;
        uint32_t g_off, g_ld, g_hs, has_gate;
        float temp_scale, temp_floor;
        uint32_t type;
    } p = {(uint32_t)(a->q.v.off / 4),    (uint32_t)a->q.ld,         (uint32_t)a->q.hs,
           (uint32_t)(a->out.v.off / 4),  (uint32_t)a->out.ld,       (uint32_t)a->out.hs,
           (uint32_t)(a->kv.k.off / 4),   (uint32_t)(a->kv.v.off / 4), (uint32_t)a->kv.n_ctx,
           (uint32_t)n_head,              (uint32_t)a->kv.n_head_kv, (uint32_t)hd,
           (uint32_t)a->pos0,             (uint32_t)n,               (uint32_t)a->window,
           (uint32_t)(a->sinks.off / 4),  a->sinks.buf != NULL,      a->scale,
           a->softcap,                    (uint32_t)(a->gate.v.off / 4), (uint32_t)a->gate.ld,
           (uint32_t)a->gate.hs,          a->gate.v.buf != NULL,     a->temp_scale > 0 ? a->temp_scale : 0,
           a->temp_floor,                 (uint32_t)a->kv.type};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {a->q.v.buf, a->kv.k.buf, a->kv.v.buf, a->sinks.buf, a->out.v.buf, a->gate.v.buf};
    cf_vk_dispatch(g, "attention", b, &p, sizeof p, (uint64_t)n * (uint64_t)n_head);
}
