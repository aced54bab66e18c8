/* vec_simd.inc with one float per "vector": the plain C fallback. */
#include <math.h>
#include <stdint.h>

#include "confab/kernels.h"
#include "vec.h"

typedef float V;
#define VW 1

static inline V v_zero(void) { return 0.0f; }
static inline V v_set1(float x) { return x; }
static inline V v_load(const float *p) { return *p; }
static inline V v_loadn(const float *p, int n) { return n ? *p : 0.0f; }
static inline V v_loadh(const uint16_t *p) { return cf_f16_to_f32(*p); }
static inline V v_loadhn(const uint16_t *p, int n) { return n ? cf_f16_to_f32(*p) : 0.0f; }
static inline void v_store(float *p, V v) { *p = v; }
static inline void v_storen(float *p, V v, int n)
{
    if (n)
        *p = v;
}
static inline V v_add(V a, V b) { return a + b; }
static inline V v_sub(V a, V b) { return a - b; }
static inline V v_mul(V a, V b) { return a * b; }
static inline V v_div(V a, V b) { return a / b; }
static inline V v_max(V a, V b) { return a > b ? a : b; }
static inline V v_fma(V a, V b, V c) { return fmaf(a, b, c); }
static inline float v_hmax(V v) { return v; }
static inline V v_min(V a, V b) { return a < b ? a : b; }
static inline V v_round(V x) { return rintf(x); } /* ties to even, as the SIMD rounds */
static inline V v_ldexp(V x, V n) { return ldexpf(x, (int)n); }
typedef double VD;
static inline void v_dsq(VD a[2], V x) { a[0] += (double)(x * x); }
static inline void v_dstore(double *p, const VD a[2]) { *p = a[0]; }

#include "vec_simd.inc"

void cf_vec_fill_scalar(cf_vec_ops *t) { vec_fill(t); }
