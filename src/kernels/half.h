/* binary32 -> binary16, round to nearest even, in integer arithmetic (see
 * half.c), with the bit casts half.c also uses: inline for the activation
 * rounding, which converts one scale a block of 32 and paid a call, with
 * every live vector spilled, for each. */
#ifndef CONFAB_KERNELS_HALF_H
#define CONFAB_KERNELS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    x &= 0x7fffffff;
    if (x > 0x7f800000) /* NaN: keep it quiet and non-zero */
        return sign | 0x7e00 | (uint16_t)((x >> 13) & 0x3ff);
    if (x >= 0x477ff000) /* 65520 and up round to infinity */
        return sign | 0x7c00;
    if (x < 0x38800000) {
        /* result is subnormal (or rounds up to the smallest normal): adding
         * 0.5 puts the f16 subnormal unit 2^-24 at the last mantissa bit, so
         * the FPU's own round-to-nearest-even does the rounding. */
        float t = bits_f32(x) + 0.5f;
        return sign | (uint16_t)(f32_bits(t) - 0x3f000000);
    }
    uint32_t odd = (x >> 13) & 1;
    x += ((uint32_t)(15 - 127) << 23) + 0xfff + odd;
    return sign | (uint16_t)(x >> 13);
}

#endif
