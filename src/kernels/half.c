/* IEEE binary16 and bfloat16 <-> binary32, round to nearest even, done with
 * integer arithmetic so every ISA gives the same bits (F16C and AVX-512
 * paths for whole rows must and do agree with these). */
#include <string.h>

#include "confab/kernels.h"
#include "half.h"
#include "internal.h"

float cf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: mant units of 2^-24, exact in binary32 */
        return bits_f32(sign | f32_bits((float)mant * 0x1p-24f));
    }
    if (exp == 31)
        return bits_f32(sign | 0x7f800000 | (mant << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t cf_f32_to_f16(float f) { return f32_to_f16(f); }

float cf_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t cf_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

#if defined(__x86_64__)
#include <immintrin.h>

static int have_f16c(void)
{
    static int v = -1;
    int h = __atomic_load_n(&v, __ATOMIC_RELAXED);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("avx2") && cf_cpu_has_f16c();
        __atomic_store_n(&v, h, __ATOMIC_RELAXED);
    }
    return h;
}

__attribute__((target("avx2,f16c"))) static int64_t f16_to_f32_f16c(const uint16_t *s, float *d,
                                                                     int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    return i;
}

__attribute__((target("avx2,f16c"))) static int64_t f32_to_f16_f16c(const float *s, uint16_t *d,
                                                                     int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

/* The integer rounding of cf_f32_to_bf16, 8 at a time (vcvtneps2bf16 would
 * flush subnormals, so it is not used). */
__attribute__((target("avx2"))) static int64_t f32_to_bf16_avx2(const float *s, uint16_t *d,
                                                                 int64_t n)
{
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
    const __m256i quiet = _mm256_set1_epi32(0x40);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), one);
        __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(bias, odd)), 16);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs), inf);
        __m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16), quiet);
        r = _mm256_blendv_epi8(r, q, nan);
        /* pack 8 x 32-bit (values < 65536) to 16-bit, fixing the lane order */
        __m256i p = _mm256_packus_epi32(r, r);
        p = _mm256_permute4x64_epi64(p, 0x08);
        _mm_storeu_si128((__m128i *)(d + i), _mm256_castsi256_si128(p));
    }
    return i;
}

__attribute__((target("avx2"))) static int64_t bf16_to_f32_avx2(const uint16_t *s, float *d,
                                                                 int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_slli_epi32(h, 16));
    }
    return i;
}
#else
static int have_f16c(void) { return 0; }
#define f16_to_f32_f16c(s, d, n) 0
#define f32_to_f16_f16c(s, d, n) 0
#define f32_to_bf16_avx2(s, d, n) 0
#define bf16_to_f32_avx2(s, d, n) 0
#endif

void cf_f16_to_f32_row(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = have_f16c() ? f16_to_f32_f16c(src, dst, n) : 0;
    for (; i < n; i++)
        dst[i] = cf_f16_to_f32(src[i]);
}

void cf_f32_to_f16_row(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = have_f16c() ? f32_to_f16_f16c(src, dst, n) : 0;
    for (; i < n; i++)
        dst[i] = cf_f32_to_f16(src[i]);
}

void cf_bf16_to_f32_row(const uint16_t *src, float *dst, int64_t n)
{
    int64_t i = have_f16c() ? bf16_to_f32_avx2(src, dst, n) : 0;
    for (; i < n; i++)
        dst[i] = cf_bf16_to_f32(src[i]);
}

void cf_f32_to_bf16_row(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = have_f16c() ? f32_to_bf16_avx2(src, dst, n) : 0;
    for (; i < n; i++)
        dst[i] = cf_f32_to_bf16(src[i]);
}
