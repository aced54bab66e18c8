/* Attention on the device: storing keys and values into a layer's cache
 * (F32, F16, BF16), and softmax attention over it in chunks of positions
 * (attention.comp) merged in order (attn_merge.comp). */
#include "vk_internal.h"

/* attention.comp's limit on a head's size */
#define MAX_HEAD_DIM 640

bool cf_gpu_kv_supports(cf_kv_type t)
{
    return t == CF_KV_F32 || t == CF_KV_F16 || t == CF_KV_BF16;
}

/* Bytes of one cached value. */
static uint64_t kv_elem(cf_kv_type t)
{
    return t == CF_KV_F32 ? 4 : 2;
}

/* Values a position: v_dim, or the keys' head_dim when it is 0. */
static int v_dim(const cf_gpu_kv *kv)
{
    return kv->v_dim ? kv->v_dim : kv->head_dim;
}

static bool kv_ok(cf_gpu *g, const cf_gpu_kv *kv)
{
    if (!cf_gpu_kv_supports(kv->type))
        return cf_vk_fail(g, "no %s cache on the GPU (F32, F16, BF16)", cf_kv_type_name(kv->type));
    const int vd = v_dim(kv);
    if (kv->n_ctx <= 0 || kv->n_head_kv <= 0 || kv->head_dim <= 0 || kv->head_dim % 2 ||
        kv->head_dim > MAX_HEAD_DIM || vd < 0 || vd % 2 || vd > MAX_HEAD_DIM || (!kv->v.buf && vd > kv->head_dim))
        return cf_vk_fail(g, "a cache of %d positions of %d heads of %d keys, %d values (even, up to %d)", kv->n_ctx,
                          kv->n_head_kv, kv->head_dim, vd, MAX_HEAD_DIM);
    const uint64_t rows = (uint64_t)kv->n_ctx * (uint64_t)kv->n_head_kv * kv_elem(kv->type);
    return cf_vk_view_ok(g, kv->k, rows * (uint64_t)kv->head_dim, "the cache's keys") &&
           (!kv->v.buf || cf_vk_view_ok(g, kv->v, rows * (uint64_t)vd, "the cache's values"));
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
    const bool k_only = !kv->v.buf;
    if (!cf_vk_can_record(g, "kv_store") || !kv_ok(g, kv) ||
        !heads_ok(g, k, kv->n_head_kv, kv->head_dim, "the keys to store") ||
        (!k_only && !heads_ok(g, v, kv->n_head_kv, v_dim(kv), "the values to store")))
        return;
    if ((!k_only && k.n != v.n) || pos0 < 0 || pos0 + k.n > kv->n_ctx)
        return (void)cf_vk_fail(g, "kv_store: %d keys, %d values at position %d of %d", k.n, v.n, pos0, kv->n_ctx);
    const struct {
        uint32_t k_off, k_ld, k_hs, v_off, v_ld, v_hs, kc_off, vc_off, n, heads, hd, n_ctx, pos0, type, vd;
    } p = {(uint32_t)(k.v.off / 4), (uint32_t)k.ld, (uint32_t)k.hs, (uint32_t)(v.v.off / 4), (uint32_t)v.ld,
           (uint32_t)v.hs, (uint32_t)(kv->k.off / 4), (uint32_t)(kv->v.off / 4), (uint32_t)k.n,
           (uint32_t)kv->n_head_kv, (uint32_t)kv->head_dim, (uint32_t)kv->n_ctx, (uint32_t)pos0,
           (uint32_t)kv->type, k_only ? 0u : (uint32_t)v_dim(kv)};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {k.v.buf, k_only ? NULL : v.v.buf, kv->k.buf, kv->v.buf, NULL};
    const uint64_t threads = (uint64_t)k.n * (uint64_t)kv->n_head_kv *
                             (uint64_t)(kv->head_dim / 2 + (k_only ? 0 : v_dim(kv) / 2));
    cf_vk_dispatch(g, "kvstore", b, &p, sizeof p, (threads + 255) / 256);
}

/* attention.comp's chunk of positions; the most scratch one group of
 * tokens' partials take (a partial: its maximum, its sum, vd outputs). */
#define CHUNK 256
#define SCRATCH_CAP ((size_t)64 << 20)

/* The chunks token t's span of positions touches (its window's start to
 * its own position). */
static int chunks(const cf_gpu_attn *a, int t)
{
    const int pos = a->pos0 + t, first = a->window > 0 && pos + 1 > a->window ? pos + 1 - a->window : 0;
    return pos / CHUNK - first / CHUNK + 1;
}

/* Tokens [t0, t1): every chunk's partial, then their merge. */
static void attend(cf_gpu *g, const cf_gpu_attn *a, int t0, int t1, int max_chunks, cf_gpu_buf *scratch)
{
    const int n_head = a->q.heads, vd = v_dim(&a->kv), n = t1 - t0;
    const uint32_t pos0 = (uint32_t)(a->pos0 + t0);
    const struct {
        uint32_t q_off, q_ld, q_hs, part_off, kc_off, vc_off;
        uint32_t n_ctx, n_head, n_head_kv, hd, pos0, n, window, max_chunks;
        float scale, softcap, temp_scale, temp_floor;
        uint32_t type, vd, k_only;
    } p = {(uint32_t)(a->q.v.off / 4 + (uint64_t)t0 * (uint64_t)a->q.ld),
           (uint32_t)a->q.ld,
           (uint32_t)a->q.hs,
           0,
           (uint32_t)(a->kv.k.off / 4),
           (uint32_t)((a->kv.v.buf ? a->kv.v.off : a->kv.k.off) / 4),
           (uint32_t)a->kv.n_ctx,
           (uint32_t)n_head,
           (uint32_t)a->kv.n_head_kv,
           (uint32_t)a->kv.head_dim,
           pos0,
           (uint32_t)n,
           (uint32_t)a->window,
           (uint32_t)max_chunks,
           a->scale,
           a->softcap,
           a->temp_scale > 0 ? a->temp_scale : 0,
           a->temp_floor,
           (uint32_t)a->kv.type,
           (uint32_t)vd,
           a->kv.v.buf == NULL};
    cf_gpu_buf *b[CF_VK_BINDINGS] = {a->q.v.buf, a->kv.k.buf, a->kv.v.buf ? a->kv.v.buf : a->kv.k.buf, scratch};
    cf_vk_dispatch(g, "attention", b, &p, sizeof p, (uint64_t)n * (uint64_t)n_head * (uint64_t)max_chunks);
    const struct {
        uint32_t part_off, o_off, o_ld, o_hs, g_off, g_ld, g_hs, has_gate, sinks_off, has_sinks;
        uint32_t n, n_head, pos0, window, max_chunks, vd;
    } m = {0,
           (uint32_t)(a->out.v.off / 4 + (uint64_t)t0 * (uint64_t)a->out.ld),
           (uint32_t)a->out.ld,
           (uint32_t)a->out.hs,
           (uint32_t)(a->gate.v.off / 4 + (uint64_t)t0 * (uint64_t)a->gate.ld),
           (uint32_t)a->gate.ld,
           (uint32_t)a->gate.hs,
           a->gate.v.buf != NULL,
           (uint32_t)(a->sinks.off / 4),
           a->sinks.buf != NULL,
           (uint32_t)n,
           (uint32_t)n_head,
           pos0,
           (uint32_t)a->window,
           (uint32_t)max_chunks,
           (uint32_t)vd};
    cf_gpu_buf *mb[CF_VK_BINDINGS] = {scratch, a->sinks.buf, a->gate.v.buf, a->out.v.buf};
    cf_vk_dispatch(g, "attn_merge", mb, &m, sizeof m, (uint64_t)n * (uint64_t)n_head);
}

void cf_gpu_attention(cf_gpu *g, const cf_gpu_attn *a)
{
    if (!cf_vk_can_record(g, "attention") || !kv_ok(g, &a->kv))
        return;
    const int n_head = a->q.heads, hd = a->kv.head_dim, vd = v_dim(&a->kv), n = a->q.n;
    if (n_head <= 0 || n_head % a->kv.n_head_kv || a->pos0 < 0 || a->pos0 + n > a->kv.n_ctx || a->window < 0)
        return (void)cf_vk_fail(g, "attention: %d query heads over %d KV heads, tokens %d.. %d of a %d-position cache",
                                n_head, a->kv.n_head_kv, a->pos0, a->pos0 + n, a->kv.n_ctx);
    if (!heads_ok(g, a->q, n_head, hd, "attention's queries") || !heads_ok(g, a->out, n_head, vd, "attention's output") ||
        (a->sinks.buf && !cf_vk_view_ok(g, a->sinks, (uint64_t)n_head * 4, "attention's sinks")) ||
        (a->gate.v.buf && !heads_ok(g, a->gate, n_head, vd, "attention's gates")))
        return;
    if (a->out.n != n || (a->gate.v.buf && a->gate.n != n))
        return (void)cf_vk_fail(g, "attention: %d tokens of queries, %d of output, %d of gates", n, a->out.n,
                                a->gate.n);
    if (a->temp_scale > 0 && !(a->temp_floor >= 1))
        return (void)cf_vk_fail(g, "attention: a temperature floor of %g", (double)a->temp_floor);
    /* tokens in groups whose partials fit the scratch; a token's result is
     * the same in any group */
    const size_t per_chunk = (size_t)(2 + vd) * 4 * (size_t)n_head;
    const size_t cap = SCRATCH_CAP < g->max_buffer ? SCRATCH_CAP : (size_t)g->max_buffer;
    for (int t0 = 0; t0 < n && !g->failed;) {
        int t1 = t0, most = 0;
        while (t1 < n) {
            const int c = chunks(a, t1) > most ? chunks(a, t1) : most;
            if (t1 > t0 && (size_t)(t1 + 1 - t0) * (size_t)c * per_chunk > cap)
                break;
            most = c;
            t1++;
        }
        cf_gpu_buf *scratch = cf_vk_scratch(g, (size_t)(t1 - t0) * (size_t)most * per_chunk);
        if (scratch)
            attend(g, a, t0, t1, most, scratch);
        t0 = t1;
    }
}
