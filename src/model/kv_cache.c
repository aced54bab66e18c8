/* The KV cache: allocation, the layout of keys and values, truncation, the
 * context shift (drop a range of positions and re-rotate the keys that
 * move), and (de)serialisation of the used positions. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "confab/platform.h"
#include "gpu_offload.h"
#include "model_internal.h"
#include "vec.h"

_Static_assert(CF_ATTN_CHUNK % CF_KV_BLOCK == 0, "a key block never straddles two slabs");

/* Whether layer l writes a cache of its own. */
static bool own_cache(const cf_layer *L, int l)
{
    return (L->wk || L->wqkv) && L->kv_src == l;
}

/* Bytes of one position of a layer's keys, or values, of one KV head. */
static size_t k_row(const cf_kv *kv, int l)
{
    return cf_kv_row_bytes(kv->type_k, kv->head_dim[l]);
}

static size_t v_row(const cf_kv *kv, int l)
{
    return kv->k_only ? 0 : cf_kv_row_bytes(kv->type_v, kv->head_dim[l]);
}

/* Bytes of one KV head's keys and values in a slab (latent attention
 * reads its values out of the keys: llama.cpp's K-only cache). */
static size_t head_span(const cf_kv *kv, int l)
{
    return (size_t)CF_ATTN_CHUNK * (k_row(kv, l) + v_row(kv, l));
}

/* Why the layers' heads cannot be kept in these types, or NULL. */
static const char *unfit(const cf_kv *kv, const cf_layer *L)
{
    if (kv->k_only && cf_kv_widened(kv))
        return "latent attention keeps one f16 or f32 cache for both";
    if (L->head_dim % 32 && (kv->type_k >= CF_KV_Q8_0 || kv->type_v >= CF_KV_Q8_0))
        return "a q8_0 or q4_0 cache needs head sizes that are multiples of 32";
    return NULL;
}

int cf_kv_init(cf_kv *kv, const cf_model *m, int n_ctx, const cf_ctx_params *p, cf_err *err)
{
    const cf_hparams *hp = &m->hp;
    memset(kv, 0, sizeof *kv);
    kv->type_k = p ? p->type_k : CF_KV_F32;
    kv->type_v = p ? p->type_v : CF_KV_F32;
    kv->n_ctx = n_ctx;
    kv->n_layer = hp->n_layer;
    kv->k_only = hp->kv_lora > 0;
    kv->rotate = !(p && p->kv_no_rotate);
    kv->n_head_kv = calloc((size_t)hp->n_layer, sizeof *kv->n_head_kv);
    kv->head_dim = calloc((size_t)hp->n_layer, sizeof *kv->head_dim);
    kv->layer_off = calloc((size_t)hp->n_layer, sizeof *kv->layer_off);
    if (!kv->n_head_kv || !kv->head_dim || !kv->layer_off)
        goto oom;
    for (int l = 0; l < hp->n_layer; l++) {
        const cf_layer *L = &m->layers[l];
        if (!own_cache(L, l))
            continue;
        const char *why = unfit(kv, L);
        if (why) {
            cf_kv_free(kv);
            return cf_fail(err, "cannot keep a %s/%s KV cache: %s", cf_kv_type_name(p->type_k),
                           cf_kv_type_name(p->type_v), why);
        }
        kv->n_head_kv[l] = L->n_head_kv;
        kv->head_dim[l] = L->head_dim;
        kv->layer_off[l] = kv->slab_bytes;
        kv->slab_bytes += (size_t)L->n_head_kv * head_span(kv, l);
    }
    const size_t n_slabs = ((size_t)n_ctx + CF_ATTN_CHUNK - 1) / CF_ATTN_CHUNK;
    kv->map_bytes = n_slabs * kv->slab_bytes;
    if (kv->map_bytes == 0)
        return 0;
    void *map = mmap(NULL, kv->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        goto oom;
    cf_advise_huge(map, kv->map_bytes);
    kv->map = map;
    return 0;
oom:
    cf_kv_free(kv);
    return cf_fail(err, "out of memory for a KV cache of %d positions", n_ctx);
}

void cf_kv_free(cf_kv *kv)
{
    if (kv->map)
        munmap(kv->map, kv->map_bytes);
    free(kv->n_head_kv);
    free(kv->head_dim);
    free(kv->layer_off);
    kv->map = NULL;
    kv->n_head_kv = kv->head_dim = NULL;
    kv->layer_off = NULL;
}

/* ---- layout ---------------------------------------------------------------- */

/* Position pos of head h of layer l among its slab's keys: the keys'
 * blocks and rows both take k_row bytes a position, and the head's values
 * follow its keys. */
static uint8_t *kv_at(const cf_kv *kv, int l, int h, int pos)
{
    return kv->map + (size_t)(pos / CF_ATTN_CHUNK) * kv->slab_bytes + kv->layer_off[l] +
           (size_t)h * head_span(kv, l) + (size_t)(pos % CF_ATTN_CHUNK) * k_row(kv, l);
}

void *cf_kv_kblock(const cf_kv *kv, int l, int h, int block)
{
    return kv_at(kv, l, h, block * CF_KV_BLOCK);
}

void *cf_kv_k(const cf_kv *kv, int l, int h, int pos)
{
    return kv_at(kv, l, h, pos);
}

void *cf_kv_v(const cf_kv *kv, int l, int h, int pos)
{
    if (kv->k_only)
        return NULL;
    return kv_at(kv, l, h, pos / CF_ATTN_CHUNK * CF_ATTN_CHUNK) + CF_ATTN_CHUNK * k_row(kv, l) +
           (size_t)(pos % CF_ATTN_CHUNK) * v_row(kv, l);
}

void cf_kv_put_k(const cf_kv *kv, int l, int h, int pos, const float *row)
{
    if (!cf_kv_blocked(kv->type_k)) {
        cf_kv_store(kv->type_k, row, kv_at(kv, l, h, pos), kv->head_dim[l]);
        return;
    }
    uint8_t *b = cf_kv_kblock(kv, l, h, pos / CF_KV_BLOCK);
    const int j = pos % CF_KV_BLOCK;
    for (int d = 0; d < kv->head_dim[l]; d++) {
        const size_t at = (size_t)d * CF_KV_BLOCK + (size_t)j;
        if (kv->type_k == CF_KV_F16)
            ((uint16_t *)b)[at] = cf_f32_to_f16(row[d]);
        else
            ((float *)b)[at] = row[d];
    }
}

void cf_kv_get_k(const cf_kv *kv, int l, int h, int pos, float *row)
{
    if (!cf_kv_blocked(kv->type_k)) {
        cf_kv_widen(kv->type_k, kv_at(kv, l, h, pos), row, kv->head_dim[l]);
        return;
    }
    const uint8_t *b = cf_kv_kblock(kv, l, h, pos / CF_KV_BLOCK);
    const int j = pos % CF_KV_BLOCK;
    for (int d = 0; d < kv->head_dim[l]; d++) {
        const size_t at = (size_t)d * CF_KV_BLOCK + (size_t)j;
        row[d] = kv->type_k == CF_KV_F16 ? cf_f16_to_f32(((const uint16_t *)b)[at]) : ((const float *)b)[at];
    }
}

void cf_kv_put_v(const cf_kv *kv, int l, int h, int pos, const float *row)
{
    void *dst = cf_kv_v(kv, l, h, pos);
    if (kv->type_v == CF_KV_F16)
        cf_f32_to_f16_row(row, dst, kv->head_dim[l]);
    else if (kv->type_v == CF_KV_F32)
        memcpy(dst, row, (size_t)kv->head_dim[l] * sizeof *row);
    else
        cf_kv_store(kv->type_v, row, dst, kv->head_dim[l]);
}

bool cf_kv_widened(const cf_kv *kv)
{
    return kv->type_k != kv->type_v || !cf_kv_blocked(kv->type_k);
}

void cf_kv_widen_keys(const cf_kv *kv, int l, int h, int lo, int hi, float *blocks)
{
    const int hd = kv->head_dim[l], b0 = lo / CF_KV_BLOCK * CF_KV_BLOCK;
    float row[1024];
    for (int p = lo; p < hi; p++) {
        float *blk = blocks + (size_t)((p - b0) / CF_KV_BLOCK) * CF_KV_BLOCK * hd + (p - b0) % CF_KV_BLOCK;
        cf_kv_get_k(kv, l, h, p, row);
        for (int d = 0; d < hd; d++)
            blk[(size_t)d * CF_KV_BLOCK] = row[d];
    }
}

void cf_kv_widen_values(const cf_kv *kv, int l, int h, int lo, int hi, float *rows)
{
    /* a chunk's rows lie one after the other */
    cf_kv_widen(kv->type_v, cf_kv_v(kv, l, h, lo), rows, (hi - lo) * kv->head_dim[l]);
}

/* ---- the public cache operations ------------------------------------------ */

int cf_ctx_kv_truncate(cf_ctx *c, int n_keep, cf_err *err)
{
    if (n_keep < 0 || n_keep > c->kv.n_past)
        return cf_fail(err, "cannot keep %d positions: the cache holds %d", n_keep, c->kv.n_past);
    if (cf_rs_active(c) && n_keep < c->kv.n_past)
        return cf_rs_rewind(c, n_keep, err);
    c->kv.n_past = n_keep;
    return 0;
}

/* A recurrent state cannot move: the kept tokens are evaluated again at
 * their new positions, after going back to p0. */
static int discard_recurrent(cf_ctx *c, int p0, int p1, cf_err *err)
{
    const int moved = c->kv.n_past - p1;
    int32_t *keep = malloc(((size_t)moved + 1) * sizeof *keep);
    if (!keep)
        return cf_fail(err, "out of memory");
    memcpy(keep, c->tokens + p1, (size_t)moved * sizeof *keep);
    int rc = cf_rs_rewind(c, p0, err);
    if (rc == 0 && moved > 0)
        rc = cf_ctx_replay(c, keep, moved, err);
    free(keep);
    return rc;
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
    if (cf_rs_active(c))
        return discard_recurrent(c, p0, p1, err);
    /* offloaded layers' keys move here, on their way back */
    if (cf_offload_kv_pull(c->gpu, kv, kv->n_past, err))
        return -1;
    /* Rotating a key by -delta angles moves it from position p to p - delta:
     * RoPE at p is a rotation by p * theta_i, and rotations compose. */
    float cos_t[2][512], sin_t[2][512], row[1024];
    for (int t = 0; t < (hp->rope_base_swa > 0 ? 2 : 1); t++)
        cf_rope_angles(hp, t, (float)-delta, false, cos_t[t], sin_t[t]);
    for (int l = 0; l < kv->n_layer; l++) {
        const cf_layer *L = &c->m->layers[l];
        const int t = cf_rope_table(hp, L), rot = cf_kv_rot(kv, kv->head_dim[l], true);
        for (int h = 0; h < kv->n_head_kv[l]; h++) {
            for (int p = p0; p < p0 + moved; p++) {
                if (!kv->k_only)
                    memcpy(cf_kv_v(kv, l, h, p), cf_kv_v(kv, l, h, p + delta), v_row(kv, l));
                /* a quantized key is widened, taken out of its Hadamard
                 * basis, moved, and rotated and quantized again */
                cf_kv_get_k(kv, l, h, p + delta, row);
                if (rot)
                    cf_kv_rotate(row, kv->head_dim[l], rot);
                if (L->rope) /* a latent's row has its rotated part after the latent */
                    cf_rope_apply(hp->rope_style, L->n_rot, row + hp->kv_lora, cos_t[t], sin_t[t]);
                if (rot)
                    cf_kv_rotate(row, kv->head_dim[l], rot);
                cf_kv_put_k(kv, l, h, p, row);
            }
        }
    }
    kv->n_past -= delta;
    return cf_offload_kv_push(c->gpu, kv, kv->n_past, err);
}

/* Saved layout: for each layer, K then V (none in a K-only cache), each
 * [n_head_kv][n] rows of head_dim in the cache's element types. */
uint64_t cf_ctx_kv_bytes(const cf_ctx *c, int n)
{
    const cf_kv *kv = &c->kv;
    /* a recurrent model adds its state and the tokens that rebuild it */
    const uint64_t rs = cf_rs_active(c) ? (uint64_t)n * sizeof(int32_t) + c->rs_floats * sizeof(float) : 0;
    uint64_t bytes = rs;
    for (int l = 0; l < kv->n_layer; l++)
        bytes += (uint64_t)kv->n_head_kv[l] * (uint64_t)n * (k_row(kv, l) + v_row(kv, l));
    return bytes;
}

/* Copy the keys of positions [0, n) of one head between the cache's
 * blocks ([head_dim][CF_KV_BLOCK] each) and saved rows ([n][head_dim]):
 * a transpose per block, in the element's own width.  The saved rows may
 * sit at any byte offset of a session file, hence memcpy on their side. */
#define KEYS_IO(T)                                                                  \
    for (size_t d = 0; d < hd; d++)                                                 \
        for (size_t j = 0; j < m; j++) {                                            \
            T *cell = (T *)blk + d * CF_KV_BLOCK + j;                               \
            uint8_t *saved = row + (j * hd + d) * sizeof(T);                        \
            if (save)                                                               \
                memcpy(saved, cell, sizeof(T));                                     \
            else                                                                    \
                memcpy(cell, saved, sizeof(T));                                     \
        }

static void rows_io(const cf_kv *kv, int l, int h, int n, uint8_t *rows, bool save, bool keys);

static void keys_io(const cf_kv *kv, int l, int h, int n, uint8_t *rows, bool save)
{
    if (!cf_kv_blocked(kv->type_k)) {
        rows_io(kv, l, h, n, rows, save, true);
        return;
    }
    const size_t hd = (size_t)kv->head_dim[l];
    for (int p0 = 0; p0 < n; p0 += CF_KV_BLOCK) {
        uint8_t *blk = cf_kv_kblock(kv, l, h, p0 / CF_KV_BLOCK);
        uint8_t *row = rows + (size_t)p0 * k_row(kv, l);
        const size_t m = n - p0 < CF_KV_BLOCK ? (size_t)(n - p0) : CF_KV_BLOCK;
        if (kv->type_k == CF_KV_F16)
            KEYS_IO(uint16_t)
        else
            KEYS_IO(uint32_t)
    }
}

#undef KEYS_IO

/* The values (or row-stored keys) of positions [0, n) of one head to or
 * from saved rows: already rows, one copy per slab. */
static void rows_io(const cf_kv *kv, int l, int h, int n, uint8_t *rows, bool save, bool keys)
{
    const size_t row = keys ? k_row(kv, l) : v_row(kv, l);
    for (int p0 = 0; p0 < n; p0 += CF_ATTN_CHUNK) {
        const size_t bytes = (size_t)(n - p0 < CF_ATTN_CHUNK ? n - p0 : CF_ATTN_CHUNK) * row;
        uint8_t *cell = keys ? kv_at(kv, l, h, p0) : (uint8_t *)cf_kv_v(kv, l, h, p0);
        uint8_t *saved = rows + (size_t)p0 * row;
        if (save)
            memcpy(saved, cell, bytes);
        else
            memcpy(cell, saved, bytes);
    }
}

int cf_ctx_kv_save(const cf_ctx *c, int n, void *dst, uint64_t size, cf_err *err)
{
    const cf_kv *kv = &c->kv;
    if (n < 0 || n > kv->n_past || size < cf_ctx_kv_bytes(c, n) || (cf_rs_active(c) && n != kv->n_past))
        return cf_fail(err, "cannot save %d cache positions (%d held)", n, kv->n_past);
    if (cf_offload_kv_pull(c->gpu, kv, n, err) || cf_offload_rs_pull(c->gpu, c, err))
        return -1;
    uint8_t *out = dst;
    for (int l = 0; l < kv->n_layer; l++) {
        for (int h = 0; h < kv->n_head_kv[l]; h++, out += (size_t)n * k_row(kv, l))
            keys_io(kv, l, h, n, out, true);
        for (int h = 0; !kv->k_only && h < kv->n_head_kv[l]; h++, out += (size_t)n * v_row(kv, l))
            rows_io(kv, l, h, n, out, true, false);
    }
    if (cf_rs_active(c)) {
        memcpy(out, c->tokens, (size_t)n * sizeof *c->tokens);
        memcpy(out + (size_t)n * sizeof *c->tokens, c->rs, c->rs_floats * sizeof *c->rs);
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
    for (int l = 0; l < kv->n_layer; l++) {
        for (int h = 0; h < kv->n_head_kv[l]; h++, in += (size_t)n * k_row(kv, l))
            keys_io(kv, l, h, n, (uint8_t *)in, false);
        for (int h = 0; !kv->k_only && h < kv->n_head_kv[l]; h++, in += (size_t)n * v_row(kv, l))
            rows_io(kv, l, h, n, (uint8_t *)in, false, false);
    }
    if (cf_rs_active(c)) {
        memcpy(c->tokens, in, (size_t)n * sizeof *c->tokens);
        memcpy(c->rs, in + (size_t)n * sizeof *c->tokens, c->rs_floats * sizeof *c->rs);
        while (c->n_ckpt) /* they belonged to the state replaced */
            free(c->ckpt[--c->n_ckpt].state);
    }
    /* the offloaded layers' part, or nothing held */
    kv->n_past = cf_offload_kv_push(c->gpu, kv, n, err) || cf_offload_rs_push(c->gpu, c, err) ? 0 : n;
    return kv->n_past == n ? 0 : -1;
}
