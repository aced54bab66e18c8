/* What the i-quant kernels share.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_IQ_COMMON_H
#define CONFAB_KERNELS_IQ_COMMON_H

#include <stdint.h>

/* The IQ2/IQ3 sign code: 7 stored bits give the signs of 7 weights of a
 * group of 8; the 8th sign makes the number of minus signs even.  Returns
 * the 8-bit mask (bit j set: weight j is negative), ggml's ksigns_iq2xs[i]. */
static inline uint8_t cf_iq_signs(unsigned i7)
{
    return (uint8_t)(i7 | (unsigned)(__builtin_popcount(i7) & 1) << 7);
}

/* cf_iq_signs of four codes at once: byte l of b holds code l (7 bits);
 * byte l of the result is its 8-bit mask.  The parity folds stay inside
 * each byte's bit 0. */
static inline uint32_t cf_iq_signs4(uint32_t b)
{
    uint32_t p = b ^ b >> 4;
    p ^= p >> 2;
    p ^= p >> 1;
    return b | (p & 0x01010101u) << 7;
}

#endif
