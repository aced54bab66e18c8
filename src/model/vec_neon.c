/* vec_simd.inc with 128-bit Advanced SIMD vectors: every ARM level's. */
#include <stdint.h>
#include <string.h>

#include "vec.h"

#if defined(__aarch64__)
#include <arm_neon.h>

typedef float32x4_t V;
#define VW 4

static inline V v_zero(void) { return vdupq_n_f32(0.0f); }
static inline V v_set1(float x) { return vdupq_n_f32(x); }
static inline V v_load(const float *p) { return vld1q_f32(p); }
static inline V v_loadn(const float *p, int n)
{
    float t[4] = {0};
    memcpy(t, p, (size_t)n * sizeof *t);
    return vld1q_f32(t);
}
static inline V v_loadh(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
static inline V v_loadhn(const uint16_t *p, int n)
{
    uint16_t t[4] = {0};
    memcpy(t, p, (size_t)n * sizeof *t);
    return v_loadh(t);
}
static inline void v_store(float *p, V v) { vst1q_f32(p, v); }
static inline void v_storen(float *p, V v, int n)
{
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, (size_t)n * sizeof *t);
}
static inline V v_add(V a, V b) { return vaddq_f32(a, b); }
static inline V v_sub(V a, V b) { return vsubq_f32(a, b); }
static inline V v_mul(V a, V b) { return vmulq_f32(a, b); }
static inline V v_div(V a, V b) { return vdivq_f32(a, b); }
/* x86's max: b where either is NaN (the scores never are) */
static inline V v_max(V a, V b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
static inline V v_fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }
static inline float v_hmax(V v) { return vmaxvq_f32(v); }
static inline V v_min(V a, V b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
static inline V v_round(V x) { return vrndnq_f32(x); }
/* 2^n built in the exponent bits: n stays within the normal range */
static inline V v_ldexp(V x, V n)
{
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
    return v_mul(x, vreinterpretq_f32_s32(e));
}
typedef float64x2_t VD;
static inline void v_dsq(VD a[2], V x)
{
    const V p = v_mul(x, x);
    a[0] = vaddq_f64(a[0], vcvt_f64_f32(vget_low_f32(p)));
    a[1] = vaddq_f64(a[1], vcvt_high_f64_f32(p));
}
static inline void v_dstore(double *p, const VD a[2])
{
    vst1q_f64(p, a[0]);
    vst1q_f64(p + 2, a[1]);
}

#include "vec_simd.inc"

void cf_vec_fill_neon(cf_vec_ops *t) { vec_fill(t); }
#else
void cf_vec_fill_neon(cf_vec_ops *t) { (void)t; }
#endif
