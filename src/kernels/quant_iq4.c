/* Reference quantizers of IQ4_NL and IQ4_XS, as llama-quantize runs them
 * without an importance matrix (quantize_iq4_nl / quantize_iq4_xs): each
 * group of 32 gets the scale, out of 16 tries around the one that maps its
 * extreme value to the codebook's -127, that best explains the group under
 * the weights x^2; IQ4_XS then rounds the eight group scales to 6 bits
 * against one super-block scale.  Every value goes to the nearest level of
 * the scale actually used.
 *
 * The search compares sums of products, so a fused multiply-add changes
 * near-tie picks: contraction is off here (llama.cpp's quantizers build
 * without FMA), which makes the result not depend on -march and gives
 * llama-quantize's bytes.  (Checked once by hand: with its importance
 * weights sqrt(sigma2 + x^2) put in for x^2, this code reproduced the
 * token_embd and output tensors of quant-IQ4_NL/IQ4_XS.gguf, quantized
 * with a uniform importance matrix, byte for byte.) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC optimize("fp-contract=off")
#endif
#include <math.h>

#include "iq4.h"
#include "quant.h"

#define ALL_ZERO 1e-15f
#define TRIES 7 /* the extreme value tried at -127 - 7 .. -127 + 7 */

/* The codebook as floats, and the midpoints between neighbouring levels
 * doubled (exact sums): v is nearest level i when 2v has reached i of
 * them (a tie goes up). */
typedef struct {
    float level[16];
    float mid2[15];
} levels;

static levels levels_of_codebook(void)
{
    const int8_t *kv = cf_kvalues_iq4nl;
    levels lv;
    for (int i = 0; i < 16; i++)
        lv.level[i] = kv[i];
    for (int i = 0; i < 15; i++)
        lv.mid2[i] = (float)(kv[i] + kv[i + 1]);
    return lv;
}

/* the nearest levels of id * x[j], j < 32: branch-free counts, which the
 * compilers vectorize */
static void nearest_levels(const levels *lv, const float *x, float id, int idx[32])
{
    float v2[32];
    for (int j = 0; j < 32; j++) {
        v2[j] = (id * x[j]) + (id * x[j]);
        idx[j] = 0;
    }
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 32; j++)
            idx[j] += v2[j] >= lv->mid2[i];
}

/* The weighted fit of x ~ d * level at inverse scale id: sum w q x and
 * sum w q^2 (w = x^2), from which d = sqx / sq2 and the explained energy
 * sqx^2 / sq2. */
static void fit_at(const levels *lv, const float *x, const float *w, float id, float *sqx, float *sq2)
{
    int idx[32];
    nearest_levels(lv, x, id, idx);
    float a = 0, b = 0;
    for (int j = 0; j < 32; j++) {
        const float q = lv->level[idx[j]];
        a += w[j] * q * x[j];
        b += w[j] * q * q;
    }
    *sqx = a;
    *sq2 = b;
}

/* The scale of a group of 32 (0 when it is all zero). */
static float group_scale(const levels *lv, const float *x)
{
    const float vmax = cf_signed_absmax(x, 32), kv0 = cf_kvalues_iq4nl[0];
    if (fabsf(vmax) < ALL_ZERO)
        return 0.0f;
    float w[32], sqx, sq2;
    for (int j = 0; j < 32; j++)
        w[j] = x[j] * x[j];
    fit_at(lv, x, w, 1.0f / (-vmax / kv0), &sqx, &sq2);
    float d = sq2 > 0 ? sqx / sq2 : 0.0f, best = d * sqx;
    for (int t = -TRIES; t <= TRIES; t++) {
        fit_at(lv, x, w, (t + kv0) / vmax, &sqx, &sq2);
        if (sq2 > 0 && sqx * sqx > best * sq2) {
            d = sqx / sq2;
            best = d * sqx;
        }
    }
    return d;
}

/* 32 values at scale d into 16 bytes of nibbles */
static void put_levels(const levels *lv, const float *x, float d, uint8_t *qs)
{
    int idx[32];
    uint8_t L[32];
    nearest_levels(lv, x, d != 0.0f ? 1.0f / d : 0.0f, idx);
    for (int j = 0; j < 32; j++)
        L[j] = (uint8_t)idx[j];
    cf_pack_nibbles(L, qs);
}

void cf_quantize_iq4_nl(const float *x, void *dst, int64_t k)
{
    block_iq4_nl *y = dst;
    const levels lv = levels_of_codebook();
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        float d = group_scale(&lv, x);
        y[i].d = cf_f32_to_f16(d);
        put_levels(&lv, x, d, y[i].qs); /* with the unrounded d, as llama.cpp */
    }
}

void cf_quantize_iq4_xs(const float *x, void *dst, int64_t k)
{
    block_iq4_xs *y = dst;
    const levels lv = levels_of_codebook();
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float sc[8];
        for (int g = 0; g < 8; g++)
            sc[g] = group_scale(&lv, x + 32 * g);
        /* the group scale of largest magnitude maps to -32 */
        const float d = cf_signed_absmax(sc, 8) / -32.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = cf_f32_to_f16(d);
        uint16_t h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        for (int g = 0; g < 8; g++) {
            int l = (int)rintf(id * sc[g]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            put_levels(&lv, x + 32 * g, d * l, y[i].qs + 16 * g);
            y[i].scales_l[g / 2] |= (uint8_t)(((l + 32) & 0xF) << 4 * (g % 2));
            h |= (uint16_t)(((l + 32) >> 4) << 2 * g);
        }
        y[i].scales_h = h;
    }
}
