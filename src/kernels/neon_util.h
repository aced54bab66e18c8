/* What the aarch64 dots (dot_neon.inc), GEMM tiles (gemm_neon.inc) and R16
 * readers (r16_dotprod.c) share, R16's Q4_K fields among it; included inside their target regions.  Private
 * to src/kernels. */
#ifndef CONFAB_KERNELS_NEON_UTIL_H
#define CONFAB_KERNELS_NEON_UTIL_H

#include <arm_neon.h>
#include <string.h>

#include "layout.h"

/* an F16 scale at p as float, by the FCVT instruction (exact, as
 * cf_f16_to_f32 is, without its call) */
static inline float f16_at(const uint8_t *p)
{
    __fp16 h;
    memcpy(&h, p, 2);
    return (float)h;
}

static inline int8x16_t lo_nibbles(uint8x16_t v) { return vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0xF))); }
static inline int8x16_t hi_nibbles(uint8x16_t v) { return vreinterpretq_s8_u8(vshrq_n_u8(v, 4)); }

/* The scales (sc[0]: groups 0..3, sc[1]: 4..7) and mins (m[0], m[1]) of
 * rows 4v .. 4v + 3 of a Q4_K super-block of 16 rows (b: its
 * R16_K4_BLOCK bytes), byte s of lane j row 4v + j's value of group
 * 4 * half + s: each lane unpacks its row's 12 packed bytes as
 * k4_scale_min does. */
static inline void r16_k4_scales_mins(const uint8_t *b, int v, uint32x4_t sc[2], uint32x4_t m[2])
{
    const uint32x4_t u0 = vreinterpretq_u32_u8(vld1q_u8(b + R16_K4_SCALES + 16 * v));
    const uint32x4_t u1 = vreinterpretq_u32_u8(vld1q_u8(b + R16_K4_SCALES + 64 + 16 * v));
    const uint32x4_t u2 = vreinterpretq_u32_u8(vld1q_u8(b + R16_K4_SCALES + 128 + 16 * v));
    const uint32x4_t m6 = vdupq_n_u32(0x3F3F3F3F), m4 = vdupq_n_u32(0x0F0F0F0F), top = vdupq_n_u32(0x30303030);
    sc[0] = vandq_u32(u0, m6);
    m[0] = vandq_u32(u1, m6);
    /* the low 4 bits from u2, bits 4 and 5 the top 2 of u0 / u1 */
    sc[1] = vorrq_u32(vandq_u32(u2, m4), vandq_u32(vshrq_n_u32(u0, 2), top));
    m[1] = vorrq_u32(vandq_u32(vshrq_n_u32(u2, 4), m4), vandq_u32(vshrq_n_u32(u1, 2), top));
}

/* byte s (0..3) of every lane, as an int32 */
static inline int32x4_t lane_byte(uint32x4_t v, int s)
{
    return vreinterpretq_s32_u32(vandq_u32(vshlq_u32(v, vdupq_n_s32(-8 * s)), vdupq_n_u32(0xFF)));
}

/* d (low half) and dmin (high) of 4 rows' first word of a Q4_K group */
static inline void r16_k4_d_dmin(const uint8_t *b, int v, float32x4_t *d, float32x4_t *dmin)
{
    const uint32x4_t w = vreinterpretq_u32_u8(vld1q_u8(b + 16 * v));
    *d = vcvt_f32_f16(vreinterpret_f16_u16(vmovn_u32(w)));
    *dmin = vcvt_f32_f16(vreinterpret_f16_u16(vshrn_n_u32(w, 16)));
}

#endif
