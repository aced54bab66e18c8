/* Reference quantizers of the 32-element types, as llama.cpp's: a scale
 * from the block's extreme values and round-to-nearest quants.
 * (Q8_0 is the activation rule, in quant_act.c.) */
#include <math.h>

#include "blocks.h"
#include "quant.h"

static void min_max(const float *x, int n, float *lo, float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int j = 0; j < n; j++) {
        *lo = fminf(*lo, x[j]);
        *hi = fmaxf(*hi, x[j]);
    }
}

/* round(v) for v >= -0.5 (halves up), clamped to [0, top]. */
static inline int round_up_clamp(float v, int top)
{
    int q = (int)(v + 0.5f);
    return q < 0 ? 0 : q > top ? top : q;
}

/* Returns the F16 scale. The extreme value maps to -8 (or -16): d = max / -8, q in [0, 15]. */
static uint16_t sym_block(const float *x, int levels, uint8_t *q)
{
    float d = cf_signed_absmax(x, QK32) / -(float)(levels / 2);
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK32; j++)
        q[j] = (uint8_t)round_up_clamp(x[j] * id + (float)(levels / 2), levels - 1);
    return cf_f32_to_f16(d);
}

/* d covers [min, max] in levels-1 steps; returns F16 d and min packed as
 * d | min << 16. */
static uint32_t asym_block(const float *x, int levels, uint8_t *q)
{
    float lo, hi;
    min_max(x, QK32, &lo, &hi);
    float d = (hi - lo) / (float)(levels - 1);
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < QK32; j++)
        q[j] = (uint8_t)round_up_clamp((x[j] - lo) * id, levels - 1);
    return cf_f32_to_f16(d) | (uint32_t)cf_f32_to_f16(lo) << 16;
}

static void pack_fifth_bits(const uint8_t *q, uint8_t qh[4])
{
    uint32_t h = 0;
    for (int j = 0; j < QK32; j++)
        h |= (uint32_t)((q[j] >> 4) & 1) << j;
    memcpy(qh, &h, 4);
}

void cf_quantize_q4_0(const float *x, void *dst, int64_t k)
{
    block_q4_0 *y = dst;
    uint8_t q[QK32];
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        y[i].d = sym_block(x, 16, q);
        cf_pack_nibbles(q, y[i].qs);
    }
}

void cf_quantize_q4_1(const float *x, void *dst, int64_t k)
{
    block_q4_1 *y = dst;
    uint8_t q[QK32];
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        uint32_t dm = asym_block(x, 16, q);
        y[i].d = (uint16_t)dm;
        y[i].m = (uint16_t)(dm >> 16);
        cf_pack_nibbles(q, y[i].qs);
    }
}

void cf_quantize_q5_0(const float *x, void *dst, int64_t k)
{
    block_q5_0 *y = dst;
    uint8_t q[QK32];
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        y[i].d = sym_block(x, 32, q);
        cf_pack_nibbles(q, y[i].qs);
        pack_fifth_bits(q, y[i].qh);
    }
}

void cf_quantize_q5_1(const float *x, void *dst, int64_t k)
{
    block_q5_1 *y = dst;
    uint8_t q[QK32];
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        uint32_t dm = asym_block(x, 32, q);
        y[i].d = (uint16_t)dm;
        y[i].m = (uint16_t)(dm >> 16);
        cf_pack_nibbles(q, y[i].qs);
        pack_fifth_bits(q, y[i].qh);
    }
}
