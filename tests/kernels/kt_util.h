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
    CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K,
};
#define KT_N_WEIGHT_TYPES (int)(sizeof kt_weight_types / sizeof kt_weight_types[0])

static inline void *kt_quantize(cf_type t, const float *x, int64_t k)
{
    void *q = malloc(cf_row_bytes(t, k) + 1);
    if (q)
        cf_quantize_row(t, x, q, k);
    return q;
}

#endif
