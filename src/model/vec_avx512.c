/* vec_simd.inc with 512-bit vectors. */
#include <stdint.h>

#include "confab/target.h"
#include "vec.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")
#include <immintrin.h>

typedef __m512 V;
#define VW 16

static inline __mmask16 first(int n) { return (__mmask16)((1u << n) - 1); }
static inline V v_zero(void) { return _mm512_setzero_ps(); }
static inline V v_set1(float x) { return _mm512_set1_ps(x); }
static inline V v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline V v_loadn(const float *p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
static inline V v_loadh(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
static inline V v_loadhn(const uint16_t *p, int n)
{
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first(n), p));
}
static inline void v_store(float *p, V v) { _mm512_storeu_ps(p, v); }
static inline void v_storen(float *p, V v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
static inline V v_add(V a, V b) { return _mm512_add_ps(a, b); }
static inline V v_sub(V a, V b) { return _mm512_sub_ps(a, b); }
static inline V v_mul(V a, V b) { return _mm512_mul_ps(a, b); }
static inline V v_div(V a, V b) { return _mm512_div_ps(a, b); }
static inline V v_max(V a, V b) { return _mm512_max_ps(a, b); }
static inline V v_fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
/* *a * b + c, *a broadcast by the FMA itself ({1to16}): beside the F16
 * widening of keys and values, separate broadcasts (vbroadcastss, which
 * the compiler makes of a shared _mm512_set1_ps) held Zen 4's FMAs to 84 %
 * of their rate, embedded ones to 97 % (the same bits either way). */
#define V_FMA1
static inline V v_fma1(const float *a, V b, V c)
{
    __asm__ volatile("" : "+r"(a)); /* each use loads anew, so the load folds into the FMA */
    return _mm512_fmadd_ps(_mm512_set1_ps(*a), b, c);
}
static inline float v_hmax(V v) { return _mm512_reduce_max_ps(v); }

static inline V v_min(V a, V b) { return _mm512_min_ps(a, b); }
static inline V v_round(V x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline V v_ldexp(V x, V n) { return _mm512_scalef_ps(x, n); }

typedef __m512d VD;
static inline void v_dsq(VD a[2], V x)
{
    const V p = v_mul(x, x);
    a[0] = _mm512_add_pd(a[0], _mm512_cvtps_pd(_mm512_castps512_ps256(p)));
    a[1] = _mm512_add_pd(a[1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(p, 1)));
}
static inline void v_dstore(double *p, const VD a[2])
{
    _mm512_storeu_pd(p, a[0]);
    _mm512_storeu_pd(p + 8, a[1]);
}

#include "vec_simd.inc"

void cf_vec_fill_avx512(cf_vec_ops *t) { vec_fill(t); }
CF_TARGET_END
#else
void cf_vec_fill_avx512(cf_vec_ops *t) { (void)t; }
#endif
