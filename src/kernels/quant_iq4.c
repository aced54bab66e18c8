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
 * llama-quantize's bytes (checked with its uniform-importance tensors). */
#pragma GCC optimize("fp-contract=off")
#include <math.h>

#include "iq4.h"
#include "quant.h"

#define ALL_ZERO 1e-15f
#define TRIES 7 /* the extreme value tried at -127 - 7 .. -127 + 7 */

/* The index of the level nearest v, a tie going to the larger: the number
 * of midpoints between neighbouring levels that v reaches (compared as
 * 2v against the exact sums of neighbours). */
static int nearest_level(float v)
{
    const int8_t *kv = cf_kvalues_iq4nl;
    const float v2 = v + v;
    int idx = 0;
    for (int step = 8; step; step >>= 1)
        if (v2 >= (float)(kv[idx + step - 1] + kv[idx + step]))
            idx += step;
    return idx;
}

/* The weighted fit of x ~ d * level at inverse scale id: sum w q x and
 * sum w q^2 (w = x^2), from which d = sqx / sq2 and the explained energy
 * sqx^2 / sq2. */
static void fit_at(const float *x, float id, float *sqx, float *sq2)
{
    float a = 0, b = 0;
    for (int j = 0; j < 32; j++) {
        float q = cf_kvalues_iq4nl[nearest_level(id * x[j])];
        float w = x[j] * x[j];
        a += w * q * x[j];
        b += w * q * q;
    }
    *sqx = a;
    *sq2 = b;
}

/* The scale of a group of 32 (0 when it is all zero). */
static float group_scale(const float *x)
{
    const float vmax = cf_signed_absmax(x, 32), kv0 = cf_kvalues_iq4nl[0];
    if (fabsf(vmax) < ALL_ZERO)
        return 0.0f;
    float sqx, sq2;
    fit_at(x, 1.0f / (-vmax / kv0), &sqx, &sq2);
    float d = sq2 > 0 ? sqx / sq2 : 0.0f, best = d * sqx;
    for (int t = -TRIES; t <= TRIES; t++) {
        fit_at(x, (t + kv0) / vmax, &sqx, &sq2);
        if (sq2 > 0 && sqx * sqx > best * sq2) {
            d = sqx / sq2;
            best = d * sqx;
        }
    }
    return d;
}

/* 32 values at scale d into 16 bytes of nibbles */
static void put_levels(const float *x, float d, uint8_t *qs)
{
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t L[32];
    for (int j = 0; j < 32; j++)
        L[j] = (uint8_t)nearest_level(id * x[j]);
    cf_pack_nibbles(L, qs);
}

void cf_quantize_iq4_nl(const float *x, void *dst, int64_t k)
{
    block_iq4_nl *y = dst;
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        float d = group_scale(x);
        y[i].d = cf_f32_to_f16(d);
        put_levels(x, d, y[i].qs); /* with the unrounded d, as llama.cpp */
    }
}

void cf_quantize_iq4_xs(const float *x, void *dst, int64_t k)
{
    block_iq4_xs *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        float sc[8];
        for (int g = 0; g < 8; g++)
            sc[g] = group_scale(x + 32 * g);
        /* the group scale of largest magnitude maps to -32 */
        const float d = cf_signed_absmax(sc, 8) / -32.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = cf_f32_to_f16(d);
        uint16_t h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        for (int g = 0; g < 8; g++) {
            int l = (int)rintf(id * sc[g]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            put_levels(x + 32 * g, d * l, y[i].qs + 16 * g);
            y[i].scales_l[g / 2] |= (uint8_t)(((l + 32) & 0xF) << 4 * (g % 2));
            h |= (uint16_t)(((l + 32) >> 4) << 2 * g);
        }
        y[i].scales_h = h;
    }
}
