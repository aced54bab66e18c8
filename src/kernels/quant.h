/* Row quantizers f32 -> one type (k a multiple of the block size).
 * Private to src/kernels; cf_quantize_row dispatches to them. */
#ifndef CONFAB_KERNELS_QUANT_H
#define CONFAB_KERNELS_QUANT_H

#include <math.h>
#include <stdint.h>

/* The largest magnitude of n values (a NaN is skipped). */
static inline float cf_absmax(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++)
        amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    return amax;
}

/* The element of largest magnitude, sign kept (the first one on ties). */
static inline float cf_signed_absmax(const float *x, int n)
{
    float amax = 0.0f, v = 0.0f;
    for (int j = 0; j < n; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            v = x[j];
        }
    return v;
}

/* rintf: half to even, as ggml's nearest_int */
static inline int nearest(float v) { return (int)rintf(v); }

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* 32 quants of 4 bits into 16 bytes: element j in the low nibble of qs[j],
 * element j + 16 in the high one. */
static inline void cf_pack_nibbles(const uint8_t *q, uint8_t *qs)
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

void cf_quantize_q8_0(const float *x, void *dst, int64_t k);
void cf_quantize_q8_1(const float *x, void *dst, int64_t k);
void cf_quantize_q8_K(const float *x, void *dst, int64_t k);

void cf_quantize_q4_0(const float *x, void *dst, int64_t k);
void cf_quantize_q4_1(const float *x, void *dst, int64_t k);
void cf_quantize_q5_0(const float *x, void *dst, int64_t k);
void cf_quantize_q5_1(const float *x, void *dst, int64_t k);

void cf_quantize_q2_K(const float *x, void *dst, int64_t k);
void cf_quantize_q3_K(const float *x, void *dst, int64_t k);
void cf_quantize_q4_K(const float *x, void *dst, int64_t k);
void cf_quantize_q5_K(const float *x, void *dst, int64_t k);
void cf_quantize_q6_K(const float *x, void *dst, int64_t k);

/* The grid types build their grid searches at first use: -1 when out of
 * memory.  imatrix: llama-imatrix's importance of each of the k columns,
 * or NULL (cf_quantize_row's choice, llama-quantize's without --imatrix). */
int cf_quantize_iq2_s(const float *x, void *dst, int64_t k);
int cf_quantize_iq3_xxs(const float *x, void *dst, int64_t k, const float *imatrix);
int cf_quantize_iq3_s(const float *x, void *dst, int64_t k, const float *imatrix);
void cf_quantize_iq4_nl(const float *x, void *dst, int64_t k);
void cf_quantize_iq4_xs(const float *x, void *dst, int64_t k);
void cf_quantize_mxfp4(const float *x, void *dst, int64_t k);
void cf_quantize_tq2_0(const float *x, void *dst, int64_t k);

#endif
