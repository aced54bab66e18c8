/* The KV cache: allocation, element conversion, truncation, the context
 * shift (drop a range of positions and re-rotate the keys that move), and
 * (de)serialisation of the used positions. */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

int cf_kv_init(cf_kv *kv, const cf_hparams *hp, int n_ctx, cf_kv_type type, cf_err *err)
{
    memset(kv, 0, sizeof *kv);
    kv->type = type;
    kv->n_ctx = n_ctx;
    kv->n_layer = hp->n_layer;
    kv->n_head_kv = hp->n_head_kv;
    kv->head_dim = hp->head_dim;
    kv->elem = type == CF_KV_F16 ? 2 : 4;
    kv->k = calloc((size_t)hp->n_layer, sizeof *kv->k);
    kv->v = calloc((size_t)hp->n_layer, sizeof *kv->v);
    if (!kv->k || !kv->v)
        goto oom;
    size_t bytes = (size_t)n_ctx * (size_t)hp->n_head_kv * (size_t)hp->head_dim * kv->elem;
    for (int l = 0; l < hp->n_layer; l++) {
        kv->k[l] = malloc(bytes);
        kv->v[l] = malloc(bytes);
        if (!kv->k[l] || !kv->v[l])
            goto oom;
    }
    return 0;
oom:
    cf_kv_free(kv);
    return cf_fail(err, "out of memory for a KV cache of %d positions", n_ctx);
}

void cf_kv_free(cf_kv *kv)
{
    for (int l = 0; kv->k && l < kv->n_layer; l++)
        free(kv->k[l]);
    for (int l = 0; kv->v && l < kv->n_layer; l++)
        free(kv->v[l]);
    free(kv->k);
    free(kv->v);
    kv->k = kv->v = NULL;
}

static size_t offset(const cf_kv *kv, int h, int pos)
{
    return (((size_t)h * (size_t)kv->n_ctx + (size_t)pos) * (size_t)kv->head_dim) * kv->elem;
}

void *cf_kv_k(const cf_kv *kv, int l, int h, int pos)
{
    return (uint8_t *)kv->k[l] + offset(kv, h, pos);
}

void *cf_kv_v(const cf_kv *kv, int l, int h, int pos)
{
    return (uint8_t *)kv->v[l] + offset(kv, h, pos);
}

void cf_kv_store(const cf_kv *kv, void *dst, const float *src, int n)
{
    if (kv->type == CF_KV_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    uint16_t *d = dst;
    for (int i = 0; i < n; i++)
        d[i] = cf_f32_to_f16(src[i]);
}

void cf_kv_fetch(const cf_kv *kv, float *dst, const void *src, int n)
{
    if (kv->type == CF_KV_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    const uint16_t *s = src;
    for (int i = 0; i < n; i++)
        dst[i] = cf_f16_to_f32(s[i]);
}

/* ---- the public cache operations ------------------------------------------ */

int cf_ctx_kv_truncate(cf_ctx *c, int n_keep, cf_err *err)
{
    if (n_keep < 0 || n_keep > c->kv.n_past)
        return cf_fail(err, "cannot keep %d positions: the cache holds %d", n_keep, c->kv.n_past);
    c->kv.n_past = n_keep;
    return 0;
}

int cf_ctx_kv_discard(cf_ctx *c, int p0, int p1, cf_err *err)
{
    cf_kv *kv = &c->kv;
    const cf_hparams *hp = &c->m->hp;
    if (p0 < 0 || p1 < p0 || p1 > kv->n_past)
        return cf_fail(err, "cannot discard positions [%d, %d) of %d", p0, p1, kv->n_past);
    const int delta = p1 - p0, moved = kv->n_past - p1;
    if (delta == 0)
        return 0;
    /* Rotating a key by -delta angles moves it from position p to p - delta:
     * RoPE at p is a rotation by p * theta_i, and rotations compose. */
    float cos_t[512], sin_t[512], row[1024];
    cf_rope_angles(hp, (float)-delta, cos_t, sin_t);
    const size_t row_bytes = (size_t)kv->head_dim * kv->elem;
    for (int l = 0; l < kv->n_layer; l++)
        for (int h = 0; h < kv->n_head_kv; h++) {
            memmove(cf_kv_k(kv, l, h, p0), cf_kv_k(kv, l, h, p1), (size_t)moved * row_bytes);
            memmove(cf_kv_v(kv, l, h, p0), cf_kv_v(kv, l, h, p1), (size_t)moved * row_bytes);
            if (hp->rope_style == CF_ROPE_NONE)
                continue;
            for (int p = p0; p < p0 + moved; p++) {
                void *k = cf_kv_k(kv, l, h, p);
                cf_kv_fetch(kv, row, k, kv->head_dim);
                cf_rope_apply(hp->rope_style, hp->n_rot, row, cos_t, sin_t);
                cf_kv_store(kv, k, row, kv->head_dim);
            }
        }
    kv->n_past -= delta;
    return 0;
}

/* Saved layout: for each layer, K then V, each [n_head_kv][n][head_dim]. */
uint64_t cf_ctx_kv_bytes(const cf_ctx *c, int n)
{
    const cf_kv *kv = &c->kv;
    return 2ull * (uint64_t)kv->n_layer * (uint64_t)kv->n_head_kv * (uint64_t)n *
           (uint64_t)kv->head_dim * kv->elem;
}

int cf_ctx_kv_save(const cf_ctx *c, int n, void *dst, uint64_t size, cf_err *err)
{
    const cf_kv *kv = &c->kv;
    if (n < 0 || n > kv->n_past || size < cf_ctx_kv_bytes(c, n))
        return cf_fail(err, "cannot save %d cache positions (%d held)", n, kv->n_past);
    uint8_t *out = dst;
    const size_t chunk = (size_t)n * (size_t)kv->head_dim * kv->elem;
    for (int l = 0; l < kv->n_layer; l++)
        for (int which = 0; which < 2; which++)
            for (int h = 0; h < kv->n_head_kv; h++) {
                memcpy(out, which ? cf_kv_v(kv, l, h, 0) : cf_kv_k(kv, l, h, 0), chunk);
                out += chunk;
            }
    return 0;
}

int cf_ctx_kv_load(cf_ctx *c, int n, const void *src, uint64_t size, cf_err *err)
{
    cf_kv *kv = &c->kv;
    if (n < 0 || n > kv->n_ctx)
        return cf_fail(err, "%d cache positions do not fit a context of %d", n, kv->n_ctx);
    if (size != cf_ctx_kv_bytes(c, n))
        return cf_fail(err, "cache data of %llu bytes do not match %d positions (%llu expected)",
                       (unsigned long long)size, n, (unsigned long long)cf_ctx_kv_bytes(c, n));
    const uint8_t *in = src;
    const size_t chunk = (size_t)n * (size_t)kv->head_dim * kv->elem;
    for (int l = 0; l < kv->n_layer; l++)
        for (int which = 0; which < 2; which++)
            for (int h = 0; h < kv->n_head_kv; h++) {
                memcpy(which ? cf_kv_v(kv, l, h, 0) : cf_kv_k(kv, l, h, 0), in, chunk);
                in += chunk;
            }
    kv->n_past = n;
    return 0;
}
