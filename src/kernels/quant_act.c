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
#if defined(__aarch64__)
#include <arm_neon.h>
#elif defined(__SSE2__) && !defined(__SSE4_1__)
#include <emmintrin.h>
#endif

#include "blocks.h"
#include "half.h"
#include "quant.h"

/* The largest |x| of a block, or NaN when an element is not finite (a
 * comparison skips NaN, so x * 0, which is NaN for NaN and Inf alone,
 * carries it): such a block is stored with scale NaN and zero quants,
 * which keeps the float-to-int conversions defined and the NaN flowing
 * on to the logits, where the forward pass reports it. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

#if defined(__aarch64__)
/* FMAX carries a NaN through; an infinity is made NaN after */
static float amax_n(const float *x, int n)
{
    float32x4_t m[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    for (int j = 0; j < n; j += 8)
        for (int h = 0; h < 2; h++)
            m[h] = vmaxq_f32(m[h], vabsq_f32(vld1q_f32(x + j + 4 * h)));
    const float r = vmaxvq_f32(vmaxq_f32(m[0], m[1]));
    return isfinite(r) ? r : NAN;
}
#else
/* m, or |v| lane by lane where that is larger (NaN never is) */
static inline v4f max_abs(v4f m, v4f v)
{
    const v4f a = (v4f)((v4i)v & 0x7fffffff);
    const v4i gt = a > m;
    return (v4f)(((v4i)a & gt) | ((v4i)m & ~gt));
}

static float amax_n(const float *x, int n)
{
    /* 8 lanes at once (n: a multiple of 8), as two halves of 4, what SSE2
     * holds (8-lane vectors lowered to it went through the stack): a
     * maximum, and a sum of zeros or NaN, come out the same in any order */
    v4f m[2] = {{0}, {0}}, nonfinite[2] = {{0}, {0}};
    for (int j = 0; j < n; j += 8)
        for (int h = 0; h < 2; h++) {
            v4f v;
            memcpy(&v, x + j + 4 * h, sizeof v);
            m[h] = max_abs(m[h], v);
            nonfinite[h] += v * 0.0f;
        }
    float r = 0.0f, nf = 0.0f;
    for (int l = 0; l < 8; l++) {
        r = m[l / 4][l % 4] > r ? m[l / 4][l % 4] : r;
        nf += nonfinite[l / 4][l % 4];
    }
    return r + nf;
}
#endif

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

/* q[j] = rint(x[j] * s) as int8 for n (a multiple of 16) elements, s
 * such that |x[j] * s| <= 127.5: SSE2's cvtps2dq rounds as rintf does
 * (to nearest even, in the default mode), where without SSE4.1 the
 * compiler kept rintf a float at a time. */
static inline void round_i8(const float *x, float s, int8_t *q, int n)
{
#if defined(__aarch64__)
    /* FCVTNS rounds to nearest even whatever the rounding mode; the
     * saturating narrows are SSE2's packs */
    for (int j = 0; j < n; j += 16) {
        int32x4_t v[4];
        for (int i = 0; i < 4; i++)
            v[i] = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + j + 4 * i), s));
        const int16x8_t h0 = vcombine_s16(vqmovn_s32(v[0]), vqmovn_s32(v[1]));
        const int16x8_t h1 = vcombine_s16(vqmovn_s32(v[2]), vqmovn_s32(v[3]));
        vst1q_s8(q + j, vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1)));
    }
#elif defined(__SSE2__) && !defined(__SSE4_1__)
    const __m128 vs = _mm_set1_ps(s);
    for (int j = 0; j < n; j += 16) {
        __m128i v[4];
        for (int i = 0; i < 4; i++)
            v[i] = _mm_cvtps_epi32(_mm_mul_ps(_mm_loadu_ps(x + j + 4 * i), vs));
        _mm_storeu_si128((__m128i *)(void *)(q + j),
                         _mm_packs_epi16(_mm_packs_epi32(v[0], v[1]), _mm_packs_epi32(v[2], v[3])));
    }
#else
    for (int j = 0; j < n; j++)
        q[j] = (int8_t)rintf(x[j] * s);
#endif
}

/* the sum of 32 quants, and the 16 sums of each 16 of 256 */
#if defined(__aarch64__)
static inline int sum32(const int8_t *q) { return vaddlvq_s8(vld1q_s8(q)) + vaddlvq_s8(vld1q_s8(q + 16)); }

/* pairwise: the 16-bit lanes of 8 groups' pair sums halve to one a group */
static inline void sums16(const int8_t *q, int16_t bs[QK_K / 16])
{
    for (int h = 0; h < 2; h++) {
        int16x8_t p[8];
        for (int g = 0; g < 8; g++)
            p[g] = vpaddlq_s8(vld1q_s8(q + 128 * h + 16 * g));
        for (int g = 0; g < 4; g++)
            p[g] = vpaddq_s16(p[2 * g], p[2 * g + 1]);
        for (int g = 0; g < 2; g++)
            p[g] = vpaddq_s16(p[2 * g], p[2 * g + 1]);
        vst1q_s16(bs + 8 * h, vpaddq_s16(p[0], p[1]));
    }
}
#else
static inline int sum32(const int8_t *q)
{
    int sum = 0;
    for (int j = 0; j < QK32; j++)
        sum += q[j];
    return sum;
}

static inline void sums16(const int8_t *q, int16_t bs[QK_K / 16])
{
    for (int g = 0; g < QK_K / 16; g++) {
        int s = 0;
        for (int j = 0; j < 16; j++)
            s += q[16 * g + j];
        bs[g] = (int16_t)s;
    }
}
#endif

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
        round_i8(x, inv_scale(amax), y[i].qs, QK32);
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
        round_i8(x, inv_scale(amax), y[i].qs, QK32);
        y[i].s = f32_to_f16(d * (float)sum32(y[i].qs));
    }
}

/* The first element of largest magnitude of a super-block (0 when all
 * are 0; NaN is passed over), amax that magnitude (amax_n: finite, as
 * a block with NaN or an infinity is not rounded).  aarch64 finds the
 * first element of magnitude amax, 16 at a time, and stops there. */
#if defined(__aarch64__)
static float first_of_largest(const float *x, float amax)
{
    const float32x4_t m = vdupq_n_f32(amax);
    for (int j = 0; j < QK_K; j += 16) {
        uint32x4_t at = vceqq_f32(vabsq_f32(vld1q_f32(x + j)), m);
        for (int h = 4; h < 16; h += 4)
            at = vorrq_u32(at, vceqq_f32(vabsq_f32(vld1q_f32(x + j + h)), m));
        if (vmaxvq_u32(at))
            for (int e = j;; e++)
                if (fabsf(x[e]) == amax)
                    return x[e];
    }
    return 0.0f;
}
#else
/* By 4 lanes at once (amax is not needed): each lane keeps the first of
 * its own largest and where it was, and of the lanes with the largest,
 * the earliest wins (one scalar pass with a branch an element took 3/4 of
 * Q8_K's time). */
static float first_of_largest(const float *x, float amax)
{
    (void)amax;
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
#endif

void cf_quantize_q8_K(const float *x, void *dst, int64_t k)
{
    block_q8_K *y = dst;
    for (int64_t i = 0; i < k / QK_K; i++, x += QK_K) {
        const float amax = amax_n(x, QK_K);
        const bool nonfinite = isnan(amax);
        const float vmax = nonfinite ? 0.0f : first_of_largest(x, amax);
        const float iscale = -127.0f / vmax;
        /* vmax 0, or so small that iscale overflows (the scale 1 / iscale
         * is 0 then anyway): a block of zeros */
        if (nonfinite || !isfinite(iscale)) {
            memset(&y[i], 0, sizeof y[i]);
            y[i].d = nonfinite ? NAN : 0.0f;
            continue;
        }
        round_i8(x, iscale, y[i].qs, QK_K); /* |iscale x| <= 127 */
        int16_t bs[QK_K / 16];
        sums16(y[i].qs, bs);
        memcpy(y[i].bsums, bs, sizeof bs);
        y[i].d = 1.0f / iscale;
    }
}
