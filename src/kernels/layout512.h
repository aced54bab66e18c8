/* What the AVX-512 readers of layout.h's groups share; included inside
 * the AVX-512 target region of their files.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_LAYOUT512_H
#define CONFAB_KERNELS_LAYOUT512_H

#include <immintrin.h>

#include "layout.h"

/* The scales (sc[0]: those of groups 0..3, sc[1]: 4..7) and mins (m[0],
 * m[1] alike) of a Q4_K super-block of 16 rows (b: its R16_K4_BLOCK
 * bytes), byte s of lane j row j's value for group 4 * half + s: each
 * lane unpacks its row's 12 packed bytes as k4_scale_min. */
static inline void r16_k4_scales_mins(const uint8_t *b, __m512i sc[2], __m512i m[2])
{
    const __m512i u0 = _mm512_loadu_si512(b + R16_K4_SCALES), u1 = _mm512_loadu_si512(b + R16_K4_SCALES + 64);
    const __m512i u2 = _mm512_loadu_si512(b + R16_K4_SCALES + 128);
    const __m512i m6 = _mm512_set1_epi8(0x3F), m4 = _mm512_set1_epi8(0xF), top = _mm512_set1_epi8(0x30);
    sc[0] = _mm512_and_si512(u0, m6);
    m[0] = _mm512_and_si512(u1, m6);
    /* a | (b & c): the low 4 bits from u2, bits 4 and 5 the top 2 of u0 / u1 */
    sc[1] = _mm512_ternarylogic_epi32(_mm512_and_si512(u2, m4), _mm512_srli_epi32(u0, 2), top, 0xF8);
    m[1] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi32(u2, 4), m4), _mm512_srli_epi32(u1, 2), top,
                                     0xF8);
}

/* byte s (0..3) of every 32-bit lane of v, as an int32 */
static inline __m512i lane_byte(__m512i v, int s)
{
    return _mm512_and_si512(_mm512_srli_epi32(v, 8 * s), _mm512_set1_epi32(0xFF));
}

#endif
