/* What the aarch64 GEMM tiles (gemm_neon.inc) and the R16 readers
 * (r16_dotprod.c) share; included inside their target regions.  Private
 * to src/kernels. */
#ifndef CONFAB_KERNELS_NEON_UTIL_H
#define CONFAB_KERNELS_NEON_UTIL_H

#include <arm_neon.h>
#include <string.h>

/* an F16 scale at p as float, by the FCVT instruction (exact, as
 * cf_f16_to_f32 is, without its call) */
static inline float f16_at(const void *p)
{
    __fp16 h;
    memcpy(&h, p, 2);
    return (float)h;
}

static inline int8x16_t lo_nibbles(uint8x16_t v) { return vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0xF))); }
static inline int8x16_t hi_nibbles(uint8x16_t v) { return vreinterpretq_s8_u8(vshrq_n_u8(v, 4)); }

#endif
