/* AVX-512 dot products: the 256-bit kernels with VNNI's vpdpbusd (on CPUs
 * with AVX-512 but without VNNI the AVX2 kernels stay in place). */
#include "internal.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#define CF_VNNI 1
#include "dot_simd.inc"

static inline __m512i nib_lo_hi(__m256i qb)
{
    __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(qb), _mm256_srli_epi16(qb, 4), 1);
    return _mm512_and_si512(z, _mm512_set1_epi8(0xF));
}

static inline __m512i dp(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }

/* The 8 6-bit scales (bytes 0..7) and mins (bytes 8..15) of a Q4_K/Q5_K
 * block, with the 32-bit masking trick. */
static inline __m128i k4_scales_mins(const uint8_t *s)
{
    uint32_t u[4];
    memcpy(u, s, 12);
    const uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
    u[3] = ((u[2] >> 4) & m4) | (((u[1] >> 6) & m2) << 4);
    uint32_t mins_lo = u[1] & m6;
    u[1] = (u[2] & m4) | (((u[0] >> 6) & m2) << 4);
    u[2] = mins_lo;
    u[0] &= m6;
    return _mm_loadu_si128((const __m128i *)u);
}

/* Q4_K: 64 elements (two groups) per 512-bit step. */
static float dot_q4_K_512(int64_t k, const void *w, const void *x)
{
    const block_q4_K *a = w;
    const block_q8_K *b = x;
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    /* lane l of step h takes the scale of group 2h + l/8 */
    const __m512i idx0 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i two = _mm512_set1_epi32(2);
    for (int64_t i = 0; i < k / QK_K; i++) {
        __m128i sm = k4_scales_mins(a[i].scales);
        __m512i sc = _mm512_cvtepu8_epi32(sm); /* lanes 0..7: scales */
        __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm)); /* m0 m0 m1 m1 .. */
        __m256i mins = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(&b[i])),
                                         m16);
        __m512i isum = _mm512_setzero_si512();
        __m512i idx = idx0;
        for (int h = 0; h < 4; h++) {
            __m512i q = nib_lo_hi(load32(a[i].qs + 32 * h));
            __m512i p = dp(_mm512_setzero_si512(), q, _mm512_loadu_si512(b[i].qs + 64 * h));
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(p, _mm512_permutexvar_epi32(idx, sc)));
            idx = _mm512_add_epi32(idx, two);
        }
        float dx = b[i].d;
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(dx * f16(a[i].d)), acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_set1_ps(dx * f16(a[i].dmin)), accm);
    }
    return _mm512_reduce_add_ps(acc) - hsum8(accm);
}

/* Q6_K: 64 elements (four groups of 16) per 512-bit step. */
static float dot_q6_K_512(int64_t k, const void *w, const void *x)
{
    const block_q6_K *a = w;
    const block_q8_K *b = x;
    __m512 acc = _mm512_setzero_ps();
    const __m512i m15 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    /* lane l of step j takes the scale of group 4j + l/4 */
    const __m512i idx0 = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i four = _mm512_set1_epi32(4);
    for (int64_t i = 0; i < k / QK_K; i++) {
        __m128i sc8 = _mm_loadu_si128((const __m128i *)a[i].scales);
        __m512i sc = _mm512_cvtepi8_epi32(sc8);
        __m256i off = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(&b[i])),
                                        _mm256_cvtepi8_epi16(sc8));
        __m512i isum = _mm512_setzero_si512();
        __m512i idx = idx0;
        for (int h = 0; h < 2; h++) {
            __m512i ql = _mm512_loadu_si512(a[i].ql + 64 * h); /* elements s=0 | s=1 low nibbles */
            __m256i qh = load32(a[i].qh + 32 * h);
            /* high bits of s = 0,1 (shifted to bits 4,5) and s = 2,3 */
            __m512i h01 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_slli_epi16(qh, 4)),
                                             _mm256_slli_epi16(qh, 2), 1);
            __m512i h23 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
            __m512i q01 = _mm512_or_si512(_mm512_and_si512(ql, m15), _mm512_and_si512(h01, m30));
            __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m15),
                                          _mm512_and_si512(h23, m30));
            __m512i p01 = dp(_mm512_setzero_si512(), q01, _mm512_loadu_si512(b[i].qs + 128 * h));
            __m512i p23 = dp(_mm512_setzero_si512(), q23, _mm512_loadu_si512(b[i].qs + 128 * h + 64));
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(p01, _mm512_permutexvar_epi32(idx, sc)));
            idx = _mm512_add_epi32(idx, four);
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(p23, _mm512_permutexvar_epi32(idx, sc)));
            idx = _mm512_add_epi32(idx, four);
        }
        /* q - 32: subtract 32 * sum sc * bsums (8 lanes) from lanes 0..7 */
        __m512i offz = _mm512_castsi256_si512(_mm256_slli_epi32(off, 5));
        isum = _mm512_sub_epi32(isum, _mm512_maskz_mov_epi32(0xFF, offz));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(b[i].d * f16(a[i].d)), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

/* Q8_0 and Q4_0: two blocks per 512-bit step. */
static inline __m512 two_scales(float s0, float s1)
{
    return _mm512_insertf32x8(_mm512_set1_ps(s0), _mm256_set1_ps(s1), 1);
}

static float dot_q8_0_512(int64_t k, const void *w, const void *x)
{
    const block_q8_0 *a = w, *b = x;
    __m512 acc = _mm512_setzero_ps();
    int64_t nb = k / QK32, i = 0;
    for (; i + 1 < nb; i += 2) {
        __m512i wa = _mm512_inserti64x4(_mm512_castsi256_si512(load32(a[i].qs)), load32(a[i + 1].qs), 1);
        __m512i xb = _mm512_inserti64x4(_mm512_castsi256_si512(load32(b[i].qs)), load32(b[i + 1].qs), 1);
        /* |w| times x with w's sign */
        __m512i aw = _mm512_abs_epi8(wa);
        __m512i sx = _mm512_mask_sub_epi8(xb, _mm512_movepi8_mask(wa), _mm512_setzero_si512(), xb);
        __m512i p = dp(_mm512_setzero_si512(), aw, sx);
        __m512 s = two_scales(f16(a[i].d) * f16(b[i].d), f16(a[i + 1].d) * f16(b[i + 1].d));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), s, acc);
    }
    float tail = i < nb ? simd_dot_q8_0(QK32, a + i, b + i) : 0.0f;
    return _mm512_reduce_add_ps(acc) + tail;
}

static float dot_q4_0_512(int64_t k, const void *w, const void *x)
{
    const block_q4_0 *a = w;
    const block_q8_0 *b = x;
    __m512 acc = _mm512_setzero_ps();
    const __m512i eight = _mm512_set1_epi8(8);
    int64_t nb = k / QK32, i = 0;
    for (; i + 1 < nb; i += 2) {
        __m256i qb = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)a[i + 1].qs),
                                      _mm_loadu_si128((const __m128i *)a[i].qs));
        /* [lo0 lo1 hi0 hi1] -> [lo0 hi0 lo1 hi1], the order of the x bytes */
        __m512i q = _mm512_shuffle_i64x2(nib_lo_hi(qb), nib_lo_hi(qb), _MM_SHUFFLE(3, 1, 2, 0));
        __m512i xb = _mm512_inserti64x4(_mm512_castsi256_si512(load32(b[i].qs)), load32(b[i + 1].qs), 1);
        __m512i p = _mm512_sub_epi32(dp(_mm512_setzero_si512(), q, xb), dp(_mm512_setzero_si512(), eight, xb));
        __m512 s = two_scales(f16(a[i].d) * f16(b[i].d), f16(a[i + 1].d) * f16(b[i + 1].d));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), s, acc);
    }
    float tail = i < nb ? simd_dot_q4_0(QK32, a + i, b + i) : 0.0f;
    return _mm512_reduce_add_ps(acc) + tail;
}

void cf_fill_avx512(cf_kernel_table *t, int vnni)
{
    if (!vnni)
        return;
    simd_fill(t);
    t->dot[CF_TYPE_Q8_0] = dot_q8_0_512;
    t->dot[CF_TYPE_Q4_0] = dot_q4_0_512;
    t->dot[CF_TYPE_Q4_K] = dot_q4_K_512;
    t->dot[CF_TYPE_Q6_K] = dot_q6_K_512;
    cf_fill_gemm_avx512(t);
}
#else
void cf_fill_avx512(cf_kernel_table *t, int vnni)
{
    (void)t;
    (void)vnni;
}
#endif
