/* What the AVX-512 readers of layout.h's groups share; included inside
 * the AVX-512 target region of their files.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_LAYOUT512_H
#define CONFAB_KERNELS_LAYOUT512_H

#include <immintrin.h>

#include "layout.h"

/* acc + u times the 4 activation bytes at x broadcast to every lane: the
 * broadcast rides on vpdpbusd's memory operand ({1to16}), which GCC does
 * not fold by itself (a separate vpbroadcastd cost the Q8_0 GEMM's tile
 * 1-4 %). */
static inline __m512i dp_bcast(__m512i acc, __m512i u, const void *x)
{
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*(const int32_t *)x));
    return acc;
}

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

/* The 4-bit quants nib of a Q5_0 chunk half h (layout.h: 0..3 the low
 * nibbles of chunk h, 4..7 the high ones of chunk h - 4, so byte i of lane
 * j is row j's element 4h + i) with their fifth bits, from the 16 rows'
 * qh words (lane j row j's), as bit 4: qh byte h / 2 spread to the 4
 * bytes of its lane, each byte's own bit tested into a mask.  (AVX-512BW
 * only: no VBMI needed.) */
static inline __m512i r16_q5_quants(__m512i nib, __m512i qh, int h)
{
    const __m512i spread = _mm512_add_epi8(
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12)),
        _mm512_set1_epi8((char)(h / 2)));
    const __mmask64 fifth =
        _mm512_test_epi8_mask(_mm512_shuffle_epi8(qh, spread), _mm512_set1_epi32((int)(0x08040201u << 4 * (h % 2))));
    return _mm512_mask_add_epi8(nib, fifth, nib, _mm512_set1_epi8(0x10));
}

/* byte s (0..3) of every 32-bit lane of v, as an int32 */
static inline __m512i lane_byte(__m512i v, int s)
{
    return _mm512_and_si512(_mm512_srli_epi32(v, 8 * s), _mm512_set1_epi32(0xFF));
}

#endif
