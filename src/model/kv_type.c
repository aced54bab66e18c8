/* The KV cache's element types: their names, rows, and the Walsh-Hadamard
 * rotation that llama.cpp 2026-08 applies per head before it quantizes a
 * cache (refs/README-2026.md D8): q.k = Hq.Hk and H spreads an outlier
 * over the block, so the blocks of 32 quantize with 2-15x less error. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "confab/kernels.h"
#include "model_internal.h"

static const struct {
    const char *name;
    cf_type type;
} kv_types[] = {
    [CF_KV_F32] = {"f32", CF_TYPE_F32},   [CF_KV_F16] = {"f16", CF_TYPE_F16},
    [CF_KV_BF16] = {"bf16", CF_TYPE_BF16}, [CF_KV_Q8_0] = {"q8_0", CF_TYPE_Q8_0},
    [CF_KV_Q4_0] = {"q4_0", CF_TYPE_Q4_0},
};

int cf_kv_type_parse(const char *name)
{
    for (size_t i = 0; i < sizeof kv_types / sizeof *kv_types; i++)
        if (!strcasecmp(name, kv_types[i].name))
            return (int)i;
    return -1;
}

const char *cf_kv_type_name(cf_kv_type t)
{
    return (unsigned)t < sizeof kv_types / sizeof *kv_types ? kv_types[t].name : "?";
}

bool cf_kv_blocked(cf_kv_type t)
{
    return t == CF_KV_F32 || t == CF_KV_F16;
}

size_t cf_kv_row_bytes(cf_kv_type t, int n)
{
    return cf_row_bytes(kv_types[t].type, n);
}

void cf_kv_store(cf_kv_type t, const float *row, void *dst, int n)
{
    cf_quantize_row(kv_types[t].type, row, dst, n);
}

void cf_kv_widen(cf_kv_type t, const void *src, float *dst, int n)
{
    cf_dequantize_row(kv_types[t].type, src, dst, n);
}

int cf_kv_rot_block(cf_kv_type t, int hd, bool keys)
{
    if ((t != CF_KV_Q8_0 && t != CF_KV_Q4_0) || hd <= 0 || hd % 64)
        return 0;
    int block = 64;
    while (keys && hd % (2 * block) == 0)
        block *= 2;
    return block;
}

int cf_kv_rot(const cf_kv *kv, int hd, bool keys)
{
    return kv->rotate ? cf_kv_rot_block(keys ? kv->type_k : kv->type_v, hd, keys) : 0;
}

void cf_kv_rotate(float *x, int n, int block)
{
    /* scaled first, then the butterflies in F32, as ggml's fwht */
    const float scale = 1.0f / sqrtf((float)block);
    for (int b = 0; b < n; b += block) {
        float *v = x + b;
        for (int i = 0; i < block; i++)
            v[i] *= scale;
        for (int len = 1; len < block; len *= 2)
            for (int i = 0; i < block; i += 2 * len)
                for (int j = i; j < i + len; j++) {
                    const float a = v[j], c = v[j + len];
                    v[j] = a + c;
                    v[j + len] = a - c;
                }
    }
}

cf_type cf_kv_elem_type(cf_kv_type t)
{
    return kv_types[t].type;
}
