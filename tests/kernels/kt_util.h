/* Shared by the kernels tests: deterministic random data and the list of
 * weight types. */
#ifndef CONFAB_TESTS_KT_UTIL_H
#define CONFAB_TESTS_KT_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "confab/kernels.h"

static uint64_t kt_state = 0x9E3779B97F4A7C15ull;

static inline void kt_seed(uint64_t s) { kt_state = s * 0x9E3779B97F4A7C15ull + 1; }

static inline uint64_t kt_next(void)
{
    uint64_t z = (kt_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static inline double kt_unif(void) { return (double)(kt_next() >> 11) * 0x1p-53; }

static inline float kt_gauss(void)
{
    double u = kt_unif(), v = kt_unif();
    return (float)(sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v));
}

static inline void kt_fill_gauss(float *x, int64_t n, float sigma)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = sigma * kt_gauss();
}

static const cf_type kt_weight_types[] = {
    CF_TYPE_F32,  CF_TYPE_F16,  CF_TYPE_BF16, CF_TYPE_Q8_0, CF_TYPE_Q4_0,
    CF_TYPE_Q4_1, CF_TYPE_Q5_0, CF_TYPE_Q5_1, CF_TYPE_Q2_K, CF_TYPE_Q3_K,
    CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K, CF_TYPE_IQ2_S,
    CF_TYPE_IQ3_XXS, CF_TYPE_IQ3_S,
    CF_TYPE_IQ4_NL, CF_TYPE_IQ4_XS, CF_TYPE_MXFP4, CF_TYPE_TQ2_0,
};
#define KT_N_WEIGHT_TYPES (int)(sizeof kt_weight_types / sizeof kt_weight_types[0])

static inline void *kt_quantize(cf_type t, const float *x, int64_t k)
{
    void *q = malloc(cf_row_bytes(t, k) + 1);
    if (q)
        cf_quantize_row(t, x, q, k);
    return q;
}

/* Bounds on RMS(x - deq(q(x))) / RMS(x) for Gaussian rows: about 1.3x what
 * these quantizers reach here, which is what the number of levels predicts:
 * a uniform quantizer with step d has RMS error d/sqrt(12), and d is the
 * block's range over its levels (Q8_0: max|x| of 32 Gaussians is ~2.3 sigma,
 * d = 2.3/127, error 0.52 %; Q4_0: d = 2.3/8, 8.3 %; Q4_K: (max-min)/15
 * over 32 with a fitted scale and min, ~7 %; IQ3_S, IQ3_XXS: groups of 4
 * on a grid of 512 / 256 points of the 8^4 lattice, weighted by x^2, 17
 * and 21 %).  kernels_models checks the same types against llama.cpp's own
 * quantization of the fixtures. */
static inline double kt_err_bound(cf_type t)
{
    switch (t) {
    case CF_TYPE_F32: return 0;
    case CF_TYPE_F16: return 3e-4;
    case CF_TYPE_BF16: return 2.2e-3;
    case CF_TYPE_Q8_0: return 0.007;
    case CF_TYPE_Q8_1: return 0.007;
    case CF_TYPE_Q8_K: return 0.009;
    case CF_TYPE_Q4_0: return 0.115;
    case CF_TYPE_Q4_1: return 0.10;
    case CF_TYPE_Q5_0: return 0.056;
    case CF_TYPE_Q5_1: return 0.05;
    case CF_TYPE_Q2_K: return 0.39;
    case CF_TYPE_Q3_K: return 0.20;
    case CF_TYPE_Q4_K: return 0.094;
    case CF_TYPE_Q5_K: return 0.048;
    case CF_TYPE_Q6_K: return 0.0275;
    case CF_TYPE_IQ2_S: return 0.35;
    case CF_TYPE_IQ3_XXS: return 0.28;
    case CF_TYPE_IQ3_S: return 0.22;
    case CF_TYPE_IQ4_NL: return 0.10;  /* 16 levels, denser near 0: below Q4_0 */
    case CF_TYPE_IQ4_XS: return 0.105; /* IQ4_NL with 6-bit group scales */
    case CF_TYPE_MXFP4: return 0.155;  /* power-of-2 scales: a block's top may clip by 25 % */
    case CF_TYPE_TQ2_0: return 0.84;   /* ternary at max|x| of 256: most values round to 0 */
    default: return 0;
    }
}

#endif
