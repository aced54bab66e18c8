/* The IQ3 pieces of 256-bit code that the dots (dot_iq3_simd.inc) and the
 * GEMM panels (gemm_iq3.inc) share: a group's grid entries and IQ3_XXS's
 * sign bytes.  Included inside the includer's target region. */
#ifndef CONFAB_KERNELS_IQ3_256_H
#define CONFAB_KERNELS_IQ3_256_H

#include "iq3.h"
#include "simd256.h"

/* The sign bytes of an IQ3_XXS block's 8 groups: byte j of word g is
 * cf_iq_signs of code j of group g's word (weights 8j..8j+7), the parity
 * bit computed for all 32 codes at once. */
static inline __m256i iq3xxs_sign_words(const block_iq3_xxs *a)
{
    __m256i w = load32(a->qs + QK_K / 4);
    __m256i s = _mm256_and_si256(w, _mm256_set1_epi32(0x7F));
    for (int j = 1; j < 4; j++)
        s = _mm256_or_si256(s, _mm256_and_si256(_mm256_slli_epi32(w, j), _mm256_set1_epi32(0x7F << (8 * j))));
    /* bit 0 of each byte: the parity of the byte */
    __m256i t = _mm256_xor_si256(s, _mm256_srli_epi32(s, 4));
    t = _mm256_xor_si256(t, _mm256_srli_epi32(t, 2));
    t = _mm256_xor_si256(t, _mm256_srli_epi32(t, 1));
    return _mm256_or_si256(s, _mm256_slli_epi32(_mm256_and_si256(t, _mm256_set1_epi32(0x01010101)), 7));
}

/* The 8 grid entries of a group: indices q, ninth bits in nine (IQ3_S).
 * Loaded one by one: a gather is slower on some CPUs (Zen 4). */
static inline __m256i iq3_entries(const uint32_t *grid, const uint8_t *q, unsigned nine)
{
    int e[8];
    for (int j = 0; j < 8; j++)
        e[j] = (int)grid[q[j] + (nine << (8 - j) & 256)];
    return _mm256_set_epi32(e[7], e[6], e[5], e[4], e[3], e[2], e[1], e[0]);
}

#endif
