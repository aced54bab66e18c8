/* vec_simd.inc with 256-bit vectors (AVX2, FMA, F16C). */
#include <stdint.h>
#include <string.h>

#include "confab/target.h"
#include "vec.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c")
#include <immintrin.h>

typedef __m256 V;
#define VW 8

static inline V v_zero(void) { return _mm256_setzero_ps(); }
static inline V v_set1(float x) { return _mm256_set1_ps(x); }
static inline V v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline V v_loadn(const float *p, int n)
{
    float t[8] = {0};
    memcpy(t, p, (size_t)n * sizeof *t);
    return _mm256_loadu_ps(t);
}
static inline V v_loadh(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline V v_loadhn(const uint16_t *p, int n)
{
    uint16_t t[8] = {0};
    memcpy(t, p, (size_t)n * sizeof *t);
    return v_loadh(t);
}
static inline void v_store(float *p, V v) { _mm256_storeu_ps(p, v); }
static inline void v_storen(float *p, V v, int n)
{
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    float t[8];
    _mm256_storeu_ps(t, v);
    memcpy(p, t, (size_t)n * sizeof *t);
}
static inline V v_add(V a, V b) { return _mm256_add_ps(a, b); }
static inline V v_sub(V a, V b) { return _mm256_sub_ps(a, b); }
static inline V v_mul(V a, V b) { return _mm256_mul_ps(a, b); }
static inline V v_div(V a, V b) { return _mm256_div_ps(a, b); }
static inline V v_max(V a, V b) { return _mm256_max_ps(a, b); }
static inline V v_fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
static inline float v_hmax(V v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

static inline V v_min(V a, V b) { return _mm256_min_ps(a, b); }
static inline V v_round(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* 2^n built in the exponent bits: n stays within the normal range */
static inline V v_ldexp(V x, V n)
{
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return v_mul(x, _mm256_castsi256_ps(e));
}

typedef __m256d VD;
static inline void v_dsq(VD a[2], V x)
{
    const V p = v_mul(x, x);
    a[0] = _mm256_add_pd(a[0], _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
    a[1] = _mm256_add_pd(a[1], _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
}
static inline void v_dstore(double *p, const VD a[2])
{
    _mm256_storeu_pd(p, a[0]);
    _mm256_storeu_pd(p + 4, a[1]);
}

#define DG 2
#include "vec_simd.inc"

void cf_vec_fill_avx2(cf_vec_ops *t) { vec_fill(t); }
CF_TARGET_END
#else
void cf_vec_fill_avx2(cf_vec_ops *t) { (void)t; }
#endif
