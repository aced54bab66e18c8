/* IQ4_NL, IQ4_XS and MXFP4 (a 4-bit index into a 16-value codebook, times
 * a block scale) and the ternary TQ2_0: the codebooks, the scale decoding
 * their dequantization, quantizers and dot products share, and the
 * dequantizers dequant.c dispatches to.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_IQ4_H
#define CONFAB_KERNELS_IQ4_H

#include <stdint.h>
#include <string.h>

#include "blocks.h"

/* The codebooks (codebook4.c): IQ4_NL's and IQ4_XS's non-linear levels, in
 * increasing order, and MXFP4's E2M1 values doubled (indices 8..15 are
 * 0..7 negated). */
extern const int8_t cf_kvalues_iq4nl[16];
extern const int8_t cf_kvalues_mxfp4[16];

/* MXFP4's scale 2^(e - 128): half of E8M0's 2^(e - 127), because the
 * codebook holds twice the E2M1 values.  e = 0 and 1 give the subnormals
 * 2^-128 and 2^-127; every value is exact. */
static inline float cf_e8m0_half(uint8_t e)
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The 6-bit scale of group j (0..7) of an IQ4_XS block, minus its bias 32. */
static inline int iq4xs_scale(const block_iq4_xs *b, int j)
{
    int lo = (b->scales_l[j / 2] >> 4 * (j % 2)) & 0xF;
    int hi = (b->scales_h >> 2 * j) & 3;
    return (lo | hi << 4) - 32;
}

/* dequant_iq4.c: nb blocks each */
void cf_dequantize_iq4_nl(const void *src, float *y, int64_t nb);
void cf_dequantize_iq4_xs(const void *src, float *y, int64_t nb);
void cf_dequantize_mxfp4(const void *src, float *y, int64_t nb);
void cf_dequantize_tq2_0(const void *src, float *y, int64_t nb);

#endif
