/* 256-bit helpers of the dots (dot_simd.inc, at AVX2 and in AVX-512's
 * 256-bit kernels) and the prepared GEMVs (gemv256.inc, at AVX2 and
 * AVX-VNNI).  Included inside the includer's target region: CF_VNNI says
 * it has a vpdpbusd, CF_AVXVNNI that it is AVX-VNNI's VEX form (CPUs
 * without AVX-512 have only that one, AVX-512 CPUs before Sapphire Rapids
 * only the EVEX one). */
#ifndef CONFAB_KERNELS_SIMD256_H
#define CONFAB_KERNELS_SIMD256_H

#include <immintrin.h>

#include "blocks.h"

static inline float f16(uint16_t h) { return _cvtsh_ss(h); }

static inline __m256i load32(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* bit s (< 8) of every byte of v at bit t of that byte, in one shift of
 * the 16-bit lanes: the K-quants' high bits on top of their low ones (the
 * other bits are the caller's to mask) */
static inline __m256i bit_to(__m256i v, int s, int t)
{
    return s <= t ? _mm256_slli_epi16(v, t - s) : _mm256_srli_epi16(v, s - t);
}

static inline __m256i bit_to_4(__m256i v, int s) { return bit_to(v, s, 4); }

static inline uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* 32 bits -> 32 bytes, byte j = 0xff if bit j is set */
static inline __m256i bits32_mask(uint32_t bits)
{
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                           0x0101010101010101, 0x0000000000000000);
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), shuf);
    const __m256i sel = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel);
}

/* v with byte j negated where bit j of signs is set (the grid i-quants'
 * sign bits) */
static inline __m256i iq_signed(__m256i v, uint32_t signs)
{
    const __m256i m = bits32_mask(signs);
    return _mm256_sub_epi8(_mm256_xor_si256(v, m), m);
}

#ifdef CF_VNNI
static inline __m256i dpbusd256(__m256i acc, __m256i u, __m256i s)
{
#ifdef CF_AVXVNNI
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_dpbusd_epi32(acc, u, s);
#endif
}
#endif

/* 8 int32 sums of 4 products u8 * s8 each (no saturation with VNNI; with
 * vpmaddubsw the pairs must fit int16, which every caller ensures). */
static inline __m256i dot_us(__m256i u, __m256i s)
{
#ifdef CF_VNNI
    return dpbusd256(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* signed x signed products summed in pairs in int16 (|a b| <= 127 * 127
 * each): |a| * (b with a's sign) */
static inline __m256i dot_ss16(__m256i a, __m256i b)
{
    return _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

/* signed x signed: |a| * (b with a's sign) */
static inline __m256i dot_ss(__m256i a, __m256i b)
{
    return dot_us(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

/* Lane j: the sum of v[j]'s 8 lanes (one reduction for 8 blocks, where
 * one per block cost the AVX2 GEMV more than the block's products). */
static inline __m256i hsum8x8(const __m256i v[8])
{
    const __m256i a0 = _mm256_hadd_epi32(v[0], v[1]), a1 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i a2 = _mm256_hadd_epi32(v[4], v[5]), a3 = _mm256_hadd_epi32(v[6], v[7]);
    const __m256i b0 = _mm256_hadd_epi32(a0, a1), b1 = _mm256_hadd_epi32(a2, a3);
    return _mm256_add_epi32(_mm256_permute2x128_si256(b0, b1, 0x20), _mm256_permute2x128_si256(b0, b1, 0x31));
}

/* The 16 canonical accumulators as two vectors (lanes 0..7, 8..15). */
typedef struct {
    __m256 lo, hi;
} canon2;

static inline float canon2_sum(canon2 c)
{
    __m256 r8 = _mm256_add_ps(c.lo, c.hi);
    __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_movehdup_ps(r2)));
}

/* The GEMVs' own fetches down their weight stream (why, and the distances
 * measured, in dot_avx512.c). */
enum { AHEAD_NEAR = 2048, AHEAD_FAR = 6144, AHEAD_FURTHEST = 8192 };

/* Set with the tables (cf_cpu_fetch_ahead): on Zen 4 the fetches cost
 * more than they bring (see there).  A loop reads it once (fetching())
 * and hands it down, so that it stays in a register: read again after
 * every fetch's memory clobber, it cost 2 % of the GEMVs' arithmetic. */
static int fetch_ahead = 1;

static inline int fetching(void) { return __atomic_load_n(&fetch_ahead, __ATOMIC_RELAXED); }

static inline __attribute__((always_inline)) void stream_ahead(int fetch, const uint8_t *p, size_t bytes, size_t ahead)
{
    if (!fetch)
        return;
    for (size_t o = 0; o < bytes; o += 64)
        __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)(p + ahead + o)) : "memory");
}

#endif
