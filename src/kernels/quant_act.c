/* Activation rounding, exactly as llama.cpp's CPU backend does it before a
 * matrix multiply (so logits match it closely):
 *   Q8_0: blocks of 32, d = amax/127 (stored F16), q = rne(x * (127/amax))
 *   Q8_1: Q8_0 plus s = F16(d * sum q), with the unrounded d
 *   Q8_K: blocks of 256, iscale = -127/v where v is the first element of
 *         largest magnitude (sign kept), q = min(127, rne(iscale * x)),
 *         d = 1/iscale as F32, and the sums of each 16 q.
 * rintf rounds half to even in the default rounding mode; the product is
 * rounded to float before rintf sees it, as in the
 * vector code in llama.cpp does (there is no addition to fuse it with). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "blocks.h"
#include "half.h"
#include "quant.h"

/* The largest |x| of a block, or NaN when an element is not finite (a
 * comparison skips NaN, so x * 0, which is NaN for NaN and Inf alone,
 * carries it): such a block is stored with scale NaN and zero quants,
 * which keeps the float-to-int conversions defined and the NaN flowing
 * on to the logits, where the forward pass reports it. */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

static float amax_n(const float *x, int n)
{
    /* 8 lanes at once (n: a multiple of 8): a maximum, and a sum of zeros
     * or NaN, come out the same in any order */
    v8f m = {0}, nonfinite = {0};
    for (int j = 0; j < n; j += 8) {
        v8f v;
        memcpy(&v, x + j, sizeof v);
        const v8f a = (v8f)((v8i)v & 0x7fffffff);
        const v8i gt = a > m;
        m = (v8f)(((v8i)a & gt) | ((v8i)m & ~gt));
        nonfinite += v * 0.0f;
    }
    float r = 0.0f, nf = 0.0f;
    for (int l = 0; l < 8; l++) {
        r = m[l] > r ? m[l] : r;
        nf += nonfinite[l];
    }
    return r + nf;
}

static float amax32(const float *x)
{
    return amax_n(x, QK32);
}

/* 127 / amax, or 0 when that is not finite: amax is 0, or so small (a
 * subnormal) that the block's F16 scale amax / 127 is 0 anyway, and the
 * products with an infinite inverse would not convert to int8. */
static float inv_scale(float amax)
{
    const float id = 127.0f / amax;
    return isfinite(id) ? id : 0.0f;
}

void cf_quantize_q8_0(const float *x, void *dst, int64_t k)
{
    block_q8_0 *y = dst;
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        float amax = amax32(x);
        y[i].d = f32_to_f16(amax / 127.0f);
        if (isnan(amax)) {
            memset(y[i].qs, 0, sizeof y[i].qs);
            continue;
        }
        float id = inv_scale(amax);
        for (int j = 0; j < QK32; j++) {
            y[i].qs[j] = (int8_t)rintf(x[j] * id);
        }
    }
}

void cf_quantize_q8_1(const float *x, void *dst, int64_t k)
{
    block_q8_1 *y = dst;
    for (int64_t i = 0; i < k / QK32; i++, x += QK32) {
        float amax = amax32(x);
        float d = amax / 127.0f;
        y[i].d = f32_to_f16(d);
        if (isnan(amax)) {
            memset(y[i].qs, 0, sizeof y[i].qs);
            y[i].s = y[i].d;
            continue;
        }
        float id = inv_scale(amax);
        int sum = 0;
        for (int j = 0; j < QK32; j++) {
            y[i].qs[j] = (int8_t)rintf(x[j] * id);
            sum += y[i].qs[j];
        }
        y[i].s = f32_to_f16(d * (float)sum);
    }
}

/* The first element of largest magnitude of a super-block (0 when all
 * are 0; NaN is passed over), by 4 lanes at once: each lane keeps the
 * first of its own largest and where it was, and of the lanes with the
 * largest, the earliest wins.  One scalar pass with a branch an element
 * took 3/4 of Q8_K's time; 4 lanes are what SSE2 holds, and 8 lowered
 * to it cost twice the scalar pass. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static float first_of_largest(const float *x)
{
    v4f m = {0}, at_v = {0};
    v4i at = {0}, idx = {0, 1, 2, 3};
    for (int j = 0; j < QK_K; j += 4, idx += 4) {
        v4f v;
        memcpy(&v, x + j, sizeof v);
        const v4f a = (v4f)((v4i)v & 0x7fffffff);
        const v4i gt = a > m;
        m = (v4f)(((v4i)a & gt) | ((v4i)m & ~gt));
        at_v = (v4f)(((v4i)v & gt) | ((v4i)at_v & ~gt));
        at = (idx & gt) | (at & ~gt);
    }
    float best = 0.0f, vmax = 0.0f;
    int first = QK_K;
    for (int l = 0; l < 4; l++)
        if (m[l] > best || (m[l] == best && best > 0.0f && at[l] < first)) {
            best = m[l];
            vmax = at_v[l];
            first = at[l];
        }
    return vmax;
}

void cf_quantize_q8_K(const float *x, void *dst, int64_t k)
{
    block_q8_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        const bool nonfinite = isnan(amax_n(x, QK_K));
        const float vmax = first_of_largest(x);
        const float iscale = -127.0f / vmax;
        /* vmax 0, or so small that iscale overflows (the scale 1 / iscale
         * is 0 then anyway): a block of zeros */
        if (nonfinite || !isfinite(iscale)) {
            memset(&y[i], 0, sizeof y[i]);
            y[i].d = nonfinite ? NAN : 0.0f;
            continue;
        }
        for (int j = 0; j < QK_K; j++) {
            int q = (int)rintf(iscale * x[j]);
            y[i].qs[j] = (int8_t)(q < 127 ? q : 127);
        }
        for (int g = 0; g < QK_K / 16; g++) {
            int s = 0;
            for (int j = 0; j < 16; j++)
                s += y[i].qs[16 * g + j];
            y[i].bsums[g] = (int16_t)s;
        }
        y[i].d = 1.0f / iscale;
    }
}
