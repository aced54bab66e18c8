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
 * block, unpacked in a vector register.  With u0..u2 the 12 bytes as
 * 32-bit words: scales = u0 & 0x3f.., (u2 & 0x0f..) | ((u0 >> 6) & 3..) << 4;
 * mins = u1 & 0x3f.., ((u2 >> 4) & 0x0f..) | ((u1 >> 6) & 3..) << 4. */
static inline __m128i k4_scales_mins(const uint8_t *s)
{
    uint32_t u[3];
    memcpy(u, s, 12);
    __m128i v = _mm_set_epi32(0, (int)u[2], (int)u[1], (int)u[0]);
    __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)); /* u0 u2 u1 u2 */
    __m128i b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)); /* u0 u0 u1 u1 */
    __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_set_epi32(4, 0, 0, 0)),
                               _mm_set_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
    __m128i hi = _mm_and_si128(_mm_srlv_epi32(b, _mm_set_epi32(6, 0, 6, 0)),
                               _mm_set_epi32(0x03030303, 0, 0x03030303, 0));
    return _mm_or_si128(lo, _mm_slli_epi32(hi, 4));
}

/* int16 lane j of step h takes scale 2h + j/16 (Q4_K/Q5_K) */
static inline __m512i k4_scale_idx(int h)
{
    return _mm512_inserti64x4(_mm512_set1_epi16((short)(2 * h)), _mm256_set1_epi16((short)(2 * h + 1)), 1);
}

/* The K-quants' inner step: 64 quants (u8) times 64 activations, products
 * summed in pairs (int16; never saturates for q < 64), then times the
 * per-pair scales and summed into int32 lanes. */
static inline __m512i qdot_scaled(__m512i isum, __m512i q, const int8_t *x, __m512i scales16)
{
    __m512i p16 = _mm512_maddubs_epi16(q, _mm512_loadu_si512(x));
    return _mm512_dpwssd_epi32(isum, p16, scales16);
}

/* Q4_K / Q5_K: 64 elements (two groups) per 512-bit step. */
static inline __attribute__((always_inline)) float dot_k4_512(int64_t k, const void *w, const void *x, int five)
{
    const block_q8_K *b = x;
    const size_t bsz = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    const __m512i idx0 = k4_scale_idx(0), idx1 = k4_scale_idx(1), idx2 = k4_scale_idx(2),
                  idx3 = k4_scale_idx(3);
    const __m512i one = _mm512_set1_epi8(1);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *blk = (const uint8_t *)w + i * bsz;
        const uint8_t *scales = blk + 4, *qs = blk + (five ? 48 : 16), *qh = blk + 16;
        __m128i sm = k4_scales_mins(scales);
        __m512i sc16 = _mm512_cvtepu8_epi16(_mm256_zextsi128_si256(sm)); /* words 0..7 */
        __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));   /* m0 m0 m1 m1 .. */
        __m256i mins = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(&b[i])),
                                         m16);
        __m512i isum[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}; /* two short chains */
        __m256i hbits = five ? load32(qh) : _mm256_setzero_si256();
        for (int h = 0; h < 4; h++) {
            __m512i q = nib_lo_hi(load32(qs + 32 * h));
            if (five) {
                __m512i hb = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(hbits, 2 * h)),
                                                _mm256_srli_epi16(hbits, 2 * h + 1), 1);
                q = _mm512_or_si512(q, _mm512_slli_epi16(_mm512_and_si512(hb, one), 4));
            }
            __m512i idx = h == 0 ? idx0 : h == 1 ? idx1 : h == 2 ? idx2 : idx3;
            isum[h & 1] = qdot_scaled(isum[h & 1], q, b[i].qs + 64 * h, _mm512_permutexvar_epi16(idx, sc16));
        }
        uint16_t d16, dmin16;
        memcpy(&d16, blk, 2);
        memcpy(&dmin16, blk + 2, 2);
        float dx = b[i].d;
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(isum[0], isum[1])), _mm512_set1_ps(dx * f16(d16)),
                              acc);
        accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_set1_ps(dx * f16(dmin16)), accm);
    }
    return _mm512_reduce_add_ps(acc) - hsum8(accm);
}

static float dot_q4_K_512(int64_t k, const void *w, const void *x) { return dot_k4_512(k, w, x, 0); }
static float dot_q5_K_512(int64_t k, const void *w, const void *x) { return dot_k4_512(k, w, x, 1); }

/* Q6_K: 64 elements (four groups of 16) per 512-bit step. */
static float dot_q6_K_512(int64_t k, const void *w, const void *x)
{
    const block_q6_K *a = w;
    const block_q8_K *b = x;
    __m512 acc = _mm512_setzero_ps();
    const __m512i m15 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    /* int16 lane j of step s takes the scale of group 4s + j/8 */
    __m512i idx[4];
    for (int st = 0; st < 4; st++)
        idx[st] = _mm512_set_epi64(0x0003000300030003ll * 1 + 0x0004000400040004ll * st,
                                   0x0003000300030003ll + 0x0004000400040004ll * st,
                                   0x0002000200020002ll + 0x0004000400040004ll * st,
                                   0x0002000200020002ll + 0x0004000400040004ll * st,
                                   0x0001000100010001ll + 0x0004000400040004ll * st,
                                   0x0001000100010001ll + 0x0004000400040004ll * st,
                                   0x0000000000000000ll + 0x0004000400040004ll * st,
                                   0x0000000000000000ll + 0x0004000400040004ll * st);
    for (int64_t i = 0; i < k / QK_K; i++) {
        __m128i sc8 = _mm_loadu_si128((const __m128i *)a[i].scales);
        __m256i sc16y = _mm256_cvtepi8_epi16(sc8);
        __m512i sc16 = _mm512_castsi256_si512(sc16y);
        __m256i off = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(&b[i])),
                                        sc16y);
        /* q - 32: start from -32 * sum sc * bsums (8 lanes) */
        __m512i isum = _mm512_castsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 5)));
        isum = _mm512_maskz_mov_epi32(0xFF, isum);
        for (int h = 0; h < 2; h++) {
            __m512i ql = _mm512_loadu_si512(a[i].ql + 64 * h); /* elements s=0 | s=1 low nibbles */
            __m256i qh = load32(a[i].qh + 32 * h);
            /* high bits of s = 0,1 (shifted to bits 4,5) and s = 2,3 */
            __m512i h01 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_slli_epi16(qh, 4)),
                                             _mm256_slli_epi16(qh, 2), 1);
            __m512i h23 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
            __m512i q01 = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m15), h01, m30, 0xF8);
            __m512i q23 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m15), h23, m30, 0xF8);
            isum = qdot_scaled(isum, q01, b[i].qs + 128 * h, _mm512_permutexvar_epi16(idx[2 * h], sc16));
            isum = qdot_scaled(isum, q23, b[i].qs + 128 * h + 64, _mm512_permutexvar_epi16(idx[2 * h + 1], sc16));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(b[i].d * f16(a[i].d)), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

/* Q8_0 and Q4_0: eight blocks per iteration, two per 512-bit vector; the
 * eight scale products dw*dx are formed in one vector and spread to the
 * lanes of their blocks. */
static inline __m512 block_scales8(__m128i dw, const uint16_t dx[8])
{
    return _mm512_castps256_ps512(
        _mm256_mul_ps(_mm256_cvtph_ps(dw), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dx))));
}

/* lanes 0..7 take scale 2j, lanes 8..15 scale 2j+1 */
static inline __m512 spread(__m512 s8, int j)
{
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(_mm512_add_epi32(idx, _mm512_set1_epi32(2 * j)), s8);
}

/* The F16 scales of 8 consecutive Q4_0 blocks (18 bytes apart: the first
 * 128 bytes hold them all), picked out with one word permute. */
static inline __m128i q4_0_scales8(const void *blocks)
{
    const __m512i idx = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         63, 54, 45, 36, 27, 18, 9, 0);
    __m512i lo = _mm512_loadu_si512(blocks), hi = _mm512_loadu_si512((const char *)blocks + 64);
    return _mm512_castsi512_si128(_mm512_permutex2var_epi16(lo, idx, hi));
}

static inline __m512i two_blocks(const int8_t *a, const int8_t *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(load32(a)), load32(b), 1);
}

static float dot_q8_0_512(int64_t k, const void *w, const void *x)
{
    const block_q8_0 *a = w, *b = x;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t nb = k / QK32, i = 0;
    for (; i + 8 <= nb; i += 8) {
        uint16_t dw[8], dx[8];
        for (int j = 0; j < 8; j++) {
            dw[j] = a[i + j].d;
            dx[j] = b[i + j].d;
        }
        __m512 s8 = block_scales8(_mm_loadu_si128((const __m128i *)dw), dx);
        for (int j = 0; j < 4; j++) {
            __m512i wa = two_blocks(a[i + 2 * j].qs, a[i + 2 * j + 1].qs);
            __m512i xb = two_blocks(b[i + 2 * j].qs, b[i + 2 * j + 1].qs);
            /* |w| times x with w's sign */
            __m512i sx = _mm512_mask_sub_epi8(xb, _mm512_movepi8_mask(wa), _mm512_setzero_si512(), xb);
            __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(wa), sx);
            if (j & 1)
                acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc1);
            else
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc0);
        }
    }
    float tail = i < nb ? simd_dot_q8_0((nb - i) * QK32, a + i, b + i) : 0.0f;
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tail;
}

static float dot_q4_0_512(int64_t k, const void *w, const void *x)
{
    const block_q4_0 *a = w;
    const block_q8_0 *b = x;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    const __m512i eight = _mm512_set1_epi8(8);
    int64_t nb = k / QK32, i = 0;
    for (; i + 8 <= nb; i += 8) {
        uint16_t dx[8];
        for (int j = 0; j < 8; j++)
            dx[j] = b[i + j].d;
        __m512 s8 = block_scales8(q4_0_scales8(a + i), dx);
        for (int j = 0; j < 4; j++) {
            const block_q4_0 *a0 = a + i + 2 * j;
            __m256i qb = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)a0[1].qs),
                                          _mm_loadu_si128((const __m128i *)a0[0].qs));
            /* [lo0 lo1 hi0 hi1] -> [lo0 hi0 lo1 hi1], the order of the x bytes */
            __m512i q = nib_lo_hi(qb);
            q = _mm512_shuffle_i64x2(q, q, _MM_SHUFFLE(3, 1, 2, 0));
            __m512i xb = two_blocks(b[i + 2 * j].qs, b[i + 2 * j + 1].qs);
            /* sum (q - 8) x: start from -8 sum x */
            __m512i p = dp(_mm512_sub_epi32(_mm512_setzero_si512(), dp(_mm512_setzero_si512(), eight, xb)), q, xb);
            if (j & 1)
                acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc1);
            else
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc0);
        }
    }
    float tail = i < nb ? simd_dot_q4_0((nb - i) * QK32, a + i, b + i) : 0.0f;
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tail;
}

/* Four Q4_0 rows against one activation row (decode): the activation
 * loads, its block sums and scales are shared.  Each row's arithmetic is
 * exactly dot_q4_0_512's, so the results are bit-identical to it. */
static void dot4_q4_0_512(int64_t k, const void *w, size_t w_stride, const void *x, float *out)
{
    const block_q8_0 *b = x;
    const block_q4_0 *a[4];
    for (int r = 0; r < 4; r++)
        a[r] = (const block_q4_0 *)(const void *)((const char *)w + r * w_stride);
    __m512 acc0[4], acc1[4];
    for (int r = 0; r < 4; r++)
        acc0[r] = acc1[r] = _mm512_setzero_ps();
    const __m512i eight = _mm512_set1_epi8(8);
    int64_t nb = k / QK32, i = 0;
    for (; i + 8 <= nb; i += 8) {
        uint16_t dx[8];
        for (int j = 0; j < 8; j++)
            dx[j] = b[i + j].d;
        __m512i xb[4], xs[4];
        for (int j = 0; j < 4; j++) {
            xb[j] = two_blocks(b[i + 2 * j].qs, b[i + 2 * j + 1].qs);
            xs[j] = _mm512_sub_epi32(_mm512_setzero_si512(), dp(_mm512_setzero_si512(), eight, xb[j]));
        }
        for (int r = 0; r < 4; r++) {
            __m512 s8 = block_scales8(q4_0_scales8(a[r] + i), dx);
            for (int j = 0; j < 4; j++) {
                const block_q4_0 *a0 = a[r] + i + 2 * j;
                __m256i qb = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)a0[1].qs),
                                              _mm_loadu_si128((const __m128i *)a0[0].qs));
                __m512i q = nib_lo_hi(qb);
                q = _mm512_shuffle_i64x2(q, q, _MM_SHUFFLE(3, 1, 2, 0));
                __m512i p = dp(xs[j], q, xb[j]);
                if (j & 1)
                    acc1[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc1[r]);
                else
                    acc0[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread(s8, j), acc0[r]);
            }
        }
    }
    for (int r = 0; r < 4; r++) {
        float tail = i < nb ? simd_dot_q4_0((nb - i) * QK32, a[r] + i, b + i) : 0.0f;
        out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) + tail;
    }
}

void cf_fill_avx512(cf_kernel_table *t, int vnni)
{
    if (!vnni)
        return;
    simd_fill(t);
    t->dot[CF_TYPE_Q8_0] = dot_q8_0_512;
    t->dot[CF_TYPE_Q4_0] = dot_q4_0_512;
    t->dot4[CF_TYPE_Q4_0] = dot4_q4_0_512;
    t->dot[CF_TYPE_Q4_K] = dot_q4_K_512;
    t->dot[CF_TYPE_Q5_K] = dot_q5_K_512;
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
