/* AVX-512 dot products: the 256-bit kernels with VNNI's vpdpbusd, and
 * 512-bit ones for the types that matter most for speed (on CPUs with
 * AVX-512 but without VNNI the AVX2 kernels stay in place).  All follow the
 * canonical order of internal.h, so they give the scalar kernels' bits. */
#include "confab/target.h"
#include "internal.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#define CF_VNNI 1
#include "dot_simd.inc"
#include "iq4.h"
#include "layout512.h"

static inline __m512i dp(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }

/* Decoding reads each matrix's bytes once, as one sequential stream from
 * DRAM.  On Zen 5 the hardware prefetchers do not run far enough ahead of
 * a single stream to keep a core's misses in flight: the GEMVs fetch every
 * line `ahead` bytes down the stream themselves, in the order they read
 * the stream.  Volatile asm with a memory clobber keeps that order:
 * _mm_prefetch has no dependences, and GCC hoisted a whole group's 80 of
 * them above its arithmetic, a burst the core cannot take in at once.
 * Measured on Zen 5 (-t 2, 48 matrices 2048 x 8192, GB/s of the GEMVs
 * against an AVX-512 read loop alternating with them): in the VM's fast
 * bandwidth state (70-78 GB/s) Q4_0 hoisted 2 KiB 0.74-0.80, in order
 * 1 KiB 0.75-0.89, 2 KiB 0.80-0.93, 4 KiB 0.86-0.95, 6 KiB 0.94-0.98,
 * 8 KiB 0.90-0.95; Q4_K and Q6_K likewise (6 KiB 0.88-1.00); Q8_0, whose
 * blocks cost the least arithmetic a byte, best at 2 KiB (0.94-1.02,
 * 6 KiB 0.91-0.96).  In the slow state (40-50 GB/s) every distance in
 * order reads at the loop's rate, hoisted 0.84-0.96.  In a whole model
 * (llama-1b Q4_0, bench tg128, fast state, per-run probes) the 32-element
 * types gained a little more at 8 KiB (77-82 % of the roofline at 6 KiB,
 * 79-89 % at 8 KiB, 83-86 % at 12 KiB); Q4_K_M's K-quants did not (slow
 * state 92-94 % at 6 KiB, 86-89 % at 8 KiB).  Into L2 only (T1)
 * or non-temporal was slower than into L1.  Past the end of the matrix a
 * prefetch is a hint and cannot fault.  Always inlined: a call left out
 * of line in these target regions lost its prefetches altogether.
 * On Zen 4 the same fetches cost: without them one core's GEMV reads at a
 * read loop's rate, with them at 85-90 % of it (bench_kernels, 8192 x 2048,
 * one thread: Q4_0 25-28 GB/s with, 28-32 without), and two cores in the
 * VM's fast state read 53-59 GB/s with them, 63-77 without; so
 * cf_cpu_fetch_ahead leaves them out there.  The fetch (stream_ahead) and
 * the distances (AHEAD_*) are simd256.h's, shared with the 256-bit GEMVs. */

/* ---- 32-element blocks, 16 at a time ----------------------------------- */

/* z[0..3] -> s, whose 128-bit lane L holds the lane-L sums of z[0], z[1],
 * z[2], z[3] in its 4 words (a transposing add tree) */
static inline __m512i sums4(const __m512i z[4])
{
    __m512i a0 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[0], z[1]), _mm512_unpackhi_epi32(z[0], z[1]));
    __m512i a1 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[2], z[3]), _mm512_unpackhi_epi32(z[2], z[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a0, a1), _mm512_unpackhi_epi64(a0, a1));
}

/* z[i]: partial sums of blocks 2i and 2i+1 -> b[i] = sums4(z + 4i) */
static inline void quad_sums(const __m512i z[8], __m512i b[2])
{
    b[0] = sums4(z);
    b[1] = sums4(z + 4);
}

/* s holding blocks 0 2 4 6 1 3 5 7 8 10 12 14 9 11 13 15 -> block order */
static inline __m512i in_block_order(__m512i s)
{
    const __m512i order = _mm512_set_epi32(15, 11, 14, 10, 13, 9, 12, 8, 7, 3, 6, 2, 5, 1, 4, 0);
    return _mm512_permutexvar_epi32(order, s);
}

/* z[i]: partial sums of blocks 2i (lanes 0..7) and 2i+1 (lanes 8..15) ->
 * the 16 block sums in block order. */
static inline __m512i block_sums16(const __m512i z[8])
{
    __m512i b[2];
    quad_sums(z, b);
    return in_block_order(
        _mm512_add_epi32(_mm512_shuffle_i32x4(b[0], b[1], 0x88), _mm512_shuffle_i32x4(b[0], b[1], 0xDD)));
}

/* The same for the nibble types' lane order: block 2i in 128-bit lanes 0
 * and 2, block 2i+1 in lanes 1 and 3 (see x_pair). */
static inline __m512i block_sums16_x(const __m512i z[8])
{
    __m512i b[2];
    quad_sums(z, b);
    return in_block_order(
        _mm512_add_epi32(_mm512_shuffle_i32x4(b[0], b[1], 0x44), _mm512_shuffle_i32x4(b[0], b[1], 0xEE)));
}

static inline float canon16_sum(__m512 a)
{
    __m256 r8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_movehdup_ps(r2)));
}

/* bytes of one block (32) or two (64) */
static inline __m512i load_blocks(const int8_t *a, const int8_t *b, int two)
{
    __m256i lo = _mm256_loadu_si256((const __m256i *)a);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), two ? _mm256_loadu_si256((const __m256i *)b)
                                                              : _mm256_setzero_si256(), 1);
}

/* The F16 d of n (<= 16) blocks size bytes apart, as floats (0 beyond n),
 * put together in registers (a vector load of words just stored would
 * wait for the stores). */
static inline __m512 d16(const void *blocks, size_t size, int n)
{
    __m256i h = _mm256_setzero_si256();
    for (int j = 0; j < n; j++) {
        uint16_t v;
        memcpy(&v, (const uint8_t *)blocks + j * size, 2);
        h = _mm256_mask_set1_epi16(h, (__mmask16)(1u << j), (short)v);
    }
    return _mm512_cvtph_ps(h);
}

/* MXFP4's scales 2^(e - 128) of n (<= 16) blocks (0 beyond n), from their
 * E8M0 bytes (cf_e8m0_half).  The e of block j is byte 17j: each 64-byte
 * quarter of 16 blocks holds four, e(4c + L) at byte 4c + L of 128-bit
 * lane L of quarter c, so masked loads of the quarters merge them into one
 * vector, and a byte shuffle and a dword permute put them in order. */
static inline __m512 e8m0_16(const void *blocks, int n)
{
    __m512i e;
    if (n == 16) {
        const uint8_t *p = blocks;
        __m512i v = _mm512_setzero_si512();
        for (int c = 0; c < 4; c++)
            v = _mm512_mask_loadu_epi8(v, (__mmask64)0x0008000400020001ull << (4 * c), p + 64 * c);
        /* dword c of lane L <- byte 4c + L: e(4c + L) at dword 4L + c */
        const __m512i spread = _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, -1, -1, 4, -1, -1, -1, 8, -1, -1, -1,
                                                                    12, -1, -1, -1));
        const __m512i lane = _mm512_set_epi64(0x0303030303030303, 0x0303030303030303, 0x0202020202020202,
                                              0x0202020202020202, 0x0101010101010101, 0x0101010101010101, 0, 0);
        v = _mm512_shuffle_epi8(v, _mm512_or_si512(spread, lane));
        e = _mm512_permutexvar_epi32(_mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), v);
    } else {
        __m128i b = _mm_setzero_si128();
        for (int j = 0; j < n; j++)
            b = _mm_mask_set1_epi8(b, (__mmask16)(1u << j), (char)((const block_mxfp4 *)blocks)[j].e);
        e = _mm512_cvtepu8_epi32(b);
    }
    __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
    __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
    __m512 d = _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2)), normal,
                                                           subnormal));
    return _mm512_maskz_mov_ps((__mmask16)((1u << n) - 1), d);
}

/* The F16 d of 16 whole blocks picked out of full vector loads with word
 * permutes (cheaper than 16 scalar moves).  A permute picks from two
 * vectors, 64 words: 8 Q4_0 blocks (18 bytes) or 4 Q8_0 blocks (34 bytes)
 * fit; the loads stay inside the 16 blocks. */
static inline __m512 d16_q4_0(const void *blocks)
{
    const uint8_t *p = blocks;
    const __m512i idx = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         63, 54, 45, 36, 27, 18, 9, 0);
    __m512i a = _mm512_permutex2var_epi16(_mm512_loadu_si512(p), idx, _mm512_loadu_si512(p + 64));
    __m512i b = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + 144), idx, _mm512_loadu_si512(p + 208));
    return _mm512_cvtph_ps(_mm256_set_m128i(_mm512_castsi512_si128(b), _mm512_castsi512_si128(a)));
}

static inline __m512 d16_q8_0(const void *blocks)
{
    const uint8_t *p = blocks;
    const __m512i idx = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 51, 34, 17, 0);
    __m512i r[4];
    for (int q = 0; q < 4; q++)
        r[q] = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + 136 * q), idx, _mm512_loadu_si512(p + 136 * q + 64));
    __m128i lo = _mm_unpacklo_epi64(_mm512_castsi512_si128(r[0]), _mm512_castsi512_si128(r[1]));
    __m128i hi = _mm_unpacklo_epi64(_mm512_castsi512_si128(r[2]), _mm512_castsi512_si128(r[3]));
    return _mm512_cvtph_ps(_mm256_set_m128i(hi, lo));
}

/* The nibble types pair two blocks per vector in the order the nibbles
 * unpack to: 16-byte lanes lo0 lo1 hi0 hi1 (elements 0-15 of block 0, of
 * block 1, then elements 16-31 of each); the activations are loaded to
 * match.  q0/x0: block 0, q1/x1: block 1 or NULL. */
static inline __m512i nib_pair(const uint8_t *q0, const uint8_t *q1)
{
    __m128i b0 = _mm_loadu_si128((const __m128i *)q0);
    __m128i b1 = q1 ? _mm_loadu_si128((const __m128i *)q1) : _mm_setzero_si128();
    __m256i v = _mm256_set_m128i(b1, b0);
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1);
    return _mm512_and_si512(q, _mm512_set1_epi8(0xF));
}

static inline __m512i x_pair(const int8_t *x0, const int8_t *x1)
{
    __m128i a0 = _mm_loadu_si128((const __m128i *)x0), c0 = _mm_loadu_si128((const __m128i *)(x0 + 16));
    __m128i a1 = x1 ? _mm_loadu_si128((const __m128i *)x1) : _mm_setzero_si128();
    __m128i c1 = x1 ? _mm_loadu_si128((const __m128i *)(x1 + 16)) : _mm_setzero_si128();
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(a1, a0)), _mm256_set_m128i(c1, c0), 1);
}

/* 0x10 where the fifth bit of an element is set, in nib_pair's order */
static inline __m512i fifth_pair(const uint8_t *h0, const uint8_t *h1)
{
    uint32_t b0, b1 = 0;
    memcpy(&b0, h0, 4);
    if (h1)
        memcpy(&b1, h1, 4);
    uint64_t m = (uint64_t)(b0 & 0xFFFF) | (uint64_t)(b1 & 0xFFFF) << 16 | (uint64_t)(b0 >> 16) << 32 |
                 (uint64_t)(b1 >> 16) << 48;
    return _mm512_maskz_mov_epi8((__mmask64)m, _mm512_set1_epi8(0x10));
}

/* The 32-element types, 16 blocks at a time, two blocks per vector: the
 * unsigned quants q of a pair times its activations x with vpdpbusd, then
 * the block sums in order.  The offset types (x = d * (q - off)) subtract
 * off * sum x per block, which depends on the activations only; Q8_0 is
 * one of them, its signed quants made unsigned by adding 128, and so are
 * IQ4_NL and MXFP4, whose nibbles look up their codebook plus 128.  Q4_1
 * and Q5_1 add their m * s term instead (Q8_1 activations). */
enum t32 { T_Q8_0, T_Q4_0, T_Q5_0, T_Q4_1, T_Q5_1, T_IQ4_NL, T_MXFP4 };

static inline size_t t32_wsz(enum t32 t)
{
    return t == T_Q8_0 ? sizeof(block_q8_0) : t == T_Q4_0 ? sizeof(block_q4_0) : t == T_Q5_0 ? sizeof(block_q5_0)
         : t == T_Q4_1 ? sizeof(block_q4_1) : t == T_Q5_1 ? sizeof(block_q5_1)
         : t == T_IQ4_NL ? sizeof(block_iq4_nl) : sizeof(block_mxfp4);
}

/* how far ahead a GEMV of t fetches (stream_ahead) */
static inline size_t t32_ahead(enum t32 t) { return t == T_Q8_0 ? AHEAD_NEAR : AHEAD_FURTHEST; }

static inline size_t t32_xsz(enum t32 t) { return t == T_Q4_1 || t == T_Q5_1 ? sizeof(block_q8_1) : sizeof(block_q8_0); }

/* the codebook plus 128 of IQ4_NL / MXFP4, in every 128-bit lane */
static inline __m512i nl4_table512(enum t32 t)
{
    __m128i kv = _mm_loadu_si128((const __m128i *)(t == T_IQ4_NL ? cf_kvalues_iq4nl : cf_kvalues_mxfp4));
    return _mm512_broadcast_i32x4(_mm_xor_si128(kv, _mm_set1_epi8((char)0x80)));
}

/* the unsigned quants of weight block w0 and (two) the next one */
static inline __m512i w_pair(const uint8_t *w0, int two, enum t32 t)
{
    const size_t wsz = t32_wsz(t);
    if (t == T_Q8_0) {
        __m512i q = load_blocks((const int8_t *)w0 + 2, two ? (const int8_t *)w0 + wsz + 2 : NULL, two);
        return _mm512_xor_si512(q, _mm512_set1_epi8((char)0x80));
    }
    const size_t qs = wsz - 16; /* the nibbles end each block */
    __m512i q = nib_pair(w0 + qs, two ? w0 + wsz + qs : NULL);
    if (t == T_Q5_0 || t == T_Q5_1)
        q = _mm512_or_si512(q, fifth_pair(w0 + qs - 4, two ? w0 + wsz + qs - 4 : NULL));
    if (t == T_IQ4_NL || t == T_MXFP4)
        q = _mm512_shuffle_epi8(nl4_table512(t), q);
    return q;
}

/* the activations of block x0 and (two) the next one, in w_pair's order */
static inline __m512i x_pair_of(const uint8_t *x0, int two, enum t32 t)
{
    const size_t xsz = t32_xsz(t), qo = xsz - 32;
    const int8_t *a = (const int8_t *)x0 + qo, *b = two ? a + xsz : NULL;
    return t == T_Q8_0 ? load_blocks(a, b, two) : x_pair(a, b);
}

static inline __m512i sums_of_pairs(const __m512i z[8], enum t32 t)
{
    return t == T_Q8_0 ? block_sums16(z) : block_sums16_x(z);
}

static inline int t32_off(enum t32 t)
{
    return t == T_Q8_0 || t == T_IQ4_NL || t == T_MXFP4 ? 128 : t == T_Q4_0 ? 8 : t == T_Q5_0 ? 16 : 0;
}

/* The scales of 16 blocks of the type's weights (xs = 0) or activations:
 * their F16 d, or MXFP4's E8M0 exponents. */
static inline __m512 d16_t32(const uint8_t *blocks, int n, enum t32 t, int xs)
{
    const size_t sz = xs ? t32_xsz(t) : t32_wsz(t);
    if (!xs && t == T_MXFP4)
        return e8m0_16(blocks, n);
    if (n == 16 && sz == sizeof(block_q8_0))
        return d16_q8_0(blocks);
    if (n == 16 && sz == sizeof(block_q4_0))
        return d16_q4_0(blocks);
    return d16(blocks, sz, n);
}

/* Q4_0's whole groups go four blocks at a time: one word permute gathers
 * the 64 nibble bytes of blocks 4q..4q+3 (18 bytes each, the quants at
 * bytes 2..17, so word-aligned) from the 72 that hold them, 16 bytes per
 * 128-bit lane; the low nibbles (elements 0-15) and the high ones (16-31)
 * meet activations prepared in the same order, and a block's sums end in
 * its own 128-bit lane.  Fewer shuffles than the pairs: the kernel is
 * shuffle-bound. */
static inline __m512i q4_0_quad(const uint8_t *w)
{
    const __m512i pick = _mm512_set_epi16(35, 34, 33, 32, 31, 30, 29, 28, 26, 25, 24, 23, 22, 21, 20, 19,
                                          17, 16, 15, 14, 13, 12, 11, 10, 8, 7, 6, 5, 4, 3, 2, 1);
    /* a masked load: the quad may end its tensor's mapping */
    return _mm512_permutex2var_epi16(_mm512_loadu_si512(w), pick, _mm512_maskz_loadu_epi8(0xFF, w + 64));
}

/* MXFP4's quants of blocks 4q..4q+3 (w: block 4q; 17 bytes each, the
 * quants at 1..16), one block per 128-bit lane as q4_0_quad's */
static inline __m512i mxfp4_quad(const uint8_t *w)
{
    /* the lane must be a literal constant for clang */
#define BLOCK(b) _mm_loadu_si128((const __m128i *)(w + (b) * sizeof(block_mxfp4) + 1))
    __m512i v = _mm512_castsi128_si512(BLOCK(0));
    v = _mm512_inserti32x4(v, BLOCK(1), 1);
    v = _mm512_inserti32x4(v, BLOCK(2), 2);
    v = _mm512_inserti32x4(v, BLOCK(3), 3);
#undef BLOCK
    return v;
}

/* the types whose whole groups go four blocks at a time */
static inline int t32_quad(enum t32 t) { return t == T_Q4_0 || t == T_IQ4_NL || t == T_MXFP4; }

/* activations of blocks 4q..4q+3 (x: block 4q), elements from e to e + 15 */
static inline __m512i x_quad(const uint8_t *x, int e)
{
    const int8_t *q = (const int8_t *)x + offsetof(block_q8_0, qs) + e;
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)q));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(q + sizeof(block_q8_0))), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(q + 2 * sizeof(block_q8_0))), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(q + 3 * sizeof(block_q8_0))), 3);
}

/* z[q]: 128-bit lane b holds the partial sums of block 4q + b -> the 16
 * block sums in order */
static inline __m512i quad_block_sums(const __m512i z[4])
{
    /* sums4 leaves block 4q + b in lane 4b + q */
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    return _mm512_permutexvar_epi32(order, sums4(z));
}

/* The activation side of a group of 16 blocks, the same for every weight
 * row: the pairs of activations, off * the sum of each block's (to take
 * off), the activations' d and (Q8_1) s. */
typedef struct {
    __m512i xq[8];
    __m512i bias;
    __m512 dx, sx;
} grp32;
_Static_assert(sizeof(grp32) * (CF_PREP_MAX_K / 512) <= CF_PREP_BYTES, "CF_PREP_BYTES holds the groups");

static inline __attribute__((always_inline)) void grp32_prep(const uint8_t *xg, int n, enum t32 t, grp32 *g)
{
    const size_t xsz = t32_xsz(t);
    const int off = t32_off(t);
    __m512i xo[8];
    if (t32_quad(t) && n == 16) {
        for (int q = 0; q < 4; q++) {
            g->xq[2 * q] = x_quad(xg + 4 * q * xsz, 0);
            g->xq[2 * q + 1] = x_quad(xg + 4 * q * xsz, 16);
            xo[q] = dp(dp(_mm512_setzero_si512(), _mm512_set1_epi8((char)off), g->xq[2 * q]),
                       _mm512_set1_epi8((char)off), g->xq[2 * q + 1]);
        }
        g->bias = quad_block_sums(xo);
        g->dx = d16_t32(xg, n, t, 1);
        g->sx = _mm512_setzero_ps();
        return;
    }
    for (int p = 0; p < 8; p++) {
        g->xq[p] = 2 * p < n ? x_pair_of(xg + 2 * p * xsz, 2 * p + 1 < n, t) : _mm512_setzero_si512();
        xo[p] = dp(_mm512_setzero_si512(), _mm512_set1_epi8((char)off), g->xq[p]);
    }
    g->bias = sums_of_pairs(xo, t);
    g->dx = d16_t32(xg, n, t, 1);
    g->sx = t == T_Q4_1 || t == T_Q5_1 ? d16(xg + 2, xsz, n) : _mm512_setzero_ps();
}

/* a weight row's pairs of n blocks at wg times the activations (z: 8, zero
 * beyond the pairs) */
static inline __attribute__((always_inline)) void grp32_pairs(const uint8_t *wg, int n, const grp32 *g, enum t32 t,
                                                              __m512i z[8])
{
    const size_t wsz = t32_wsz(t);
    for (int p = 0; p < 8; p++)
        z[p] = 2 * p < n ? dp(_mm512_setzero_si512(), w_pair(wg + 2 * p * wsz, 2 * p + 1 < n, t), g->xq[p])
                         : _mm512_setzero_si512();
}

static inline __attribute__((always_inline)) __m512 grp32_min(__m512 acc, const uint8_t *wg, int n, const grp32 *g,
                                                              enum t32 t)
{
    if (t != T_Q4_1 && t != T_Q5_1)
        return acc;
    return _mm512_mask3_fmadd_ps(d16(wg + 2, t32_wsz(t), n), g->sx, acc, (__mmask16)((1u << n) - 1));
}

/* One whole group of a row into its accumulators. */
static inline __attribute__((always_inline)) __m512 grp32_row(__m512 acc, const uint8_t *wg, const grp32 *g,
                                                              enum t32 t, int fetch)
{
    __m512i z[8], sums;
    stream_ahead(fetch, wg, 16 * t32_wsz(t), t32_ahead(t));
    if (t32_quad(t)) {
        const __m512i m4 = _mm512_set1_epi8(0xF);
        for (int q = 0; q < 4; q++) {
            /* IQ4_NL's blocks are laid out as Q4_0's */
            __m512i nib = t == T_MXFP4 ? mxfp4_quad(wg + 4 * q * sizeof(block_mxfp4))
                                       : q4_0_quad(wg + 4 * q * sizeof(block_q4_0));
            __m512i lo = _mm512_and_si512(nib, m4), hi = _mm512_and_si512(_mm512_srli_epi16(nib, 4), m4);
            if (t != T_Q4_0) {
                lo = _mm512_shuffle_epi8(nl4_table512(t), lo);
                hi = _mm512_shuffle_epi8(nl4_table512(t), hi);
            }
            z[q] = dp(dp(_mm512_setzero_si512(), lo, g->xq[2 * q]), hi, g->xq[2 * q + 1]);
        }
        sums = quad_block_sums(z);
    } else {
        grp32_pairs(wg, 16, g, t, z);
        sums = sums_of_pairs(z, t);
    }
    __m512i isum = _mm512_sub_epi32(sums, g->bias);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d16_t32(wg, 16, t, 0), g->dx), acc);
    return grp32_min(acc, wg, 16, g, t);
}

/* The short last group (n < 16 blocks, np pairs) of R rows (row j at wl +
 * j * w_stride): several rows' pairs share one reduction, row j's sums in
 * lanes 2 np j on. */
static inline __attribute__((always_inline)) void grp32_last_np(__m512 *acc, const uint8_t *wl, size_t w_stride,
                                                                int R, int n, const int np, const grp32 *g,
                                                                enum t32 t)
{
    const int per = 8 / np;
    const size_t wsz = t32_wsz(t);
    const __mmask16 mask = (__mmask16)((1u << n) - 1);
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int r0 = 0; r0 < R; r0 += per) {
        const int cnt = R - r0 < per ? R - r0 : per;
        __m512i z[8];
        for (int q = 0; q < 8; q++)
            z[q] = _mm512_setzero_si512();
        for (int j = 0; j < cnt; j++)
            for (int p = 0; p < np; p++)
                z[j * np + p] = dp(_mm512_setzero_si512(),
                                   w_pair(wl + (r0 + j) * w_stride + 2 * p * wsz, 2 * p + 1 < n, t), g->xq[p]);
        const __m512i sums = sums_of_pairs(z, t);
        for (int j = 0; j < cnt; j++) {
            const uint8_t *wr = wl + (r0 + j) * w_stride;
            __m512i isum = _mm512_sub_epi32(_mm512_permutexvar_epi32(_mm512_add_epi32(lanes, _mm512_set1_epi32(2 * np * j)), sums),
                                            g->bias);
            __m512 s = _mm512_mul_ps(d16_t32(wr, n, t, 0), g->dx);
            acc[r0 + j] = grp32_min(_mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(isum), s, acc[r0 + j], mask), wr, n, g, t);
        }
    }
}

/* one pair (as when k = 576: 18 blocks) is common enough to have its own
 * copy, whose rows' sums stay in registers */
static inline __attribute__((always_inline)) void grp32_last(__m512 *acc, const uint8_t *wl, size_t w_stride, int R,
                                                             int n, const grp32 *g, enum t32 t)
{
    if (n <= 2)
        grp32_last_np(acc, wl, w_stride, R, n, 1, g, t);
    else
        grp32_last_np(acc, wl, w_stride, R, n, (n + 1) / 2, g, t);
}

static inline __attribute__((always_inline)) float dot32_512(int64_t k, const void *w, const void *x, enum t32 t)
{
    const int64_t nb = k / QK32;
    const size_t wsz = t32_wsz(t), xsz = t32_xsz(t);
    __m512 acc = _mm512_setzero_ps();
    grp32 g;
    const int fetch = fetching();
    for (int64_t i0 = 0; i0 < nb; i0 += 16) {
        const int n = nb - i0 < 16 ? (int)(nb - i0) : 16;
        const uint8_t *wg = (const uint8_t *)w + i0 * wsz;
        grp32_prep((const uint8_t *)x + i0 * xsz, n, t, &g);
        if (n == 16)
            acc = grp32_row(acc, wg, &g, t, fetch);
        else
            grp32_last(&acc, wg, 0, 1, n, &g, t);
    }
    return canon16_sum(acc);
}

/* The prepared activations: one grp32 per group of 16 blocks. */
static inline __attribute__((always_inline)) void prep32(int64_t k, const void *x, void *p, enum t32 t)
{
    const int64_t nb = k / QK32;
    grp32 *g = p;
    for (int64_t i0 = 0; i0 < nb; i0 += 16)
        grp32_prep((const uint8_t *)x + i0 * t32_xsz(t), nb - i0 < 16 ? (int)(nb - i0) : 16, t, g + i0 / 16);
}

/* R rows one after the other (so that the weights stream in order), their
 * short last groups together. */
static inline __attribute__((always_inline)) void rows32(int64_t k, const uint8_t *w, size_t w_stride, const grp32 *g,
                                                         float *y, enum t32 t, const int R)
{
    const int64_t nb = k / QK32, full = nb / 16;
    const int last = (int)(nb % 16);
    const size_t wsz = t32_wsz(t);
    __m512 acc[CF_DOT_ROWS];
    const int fetch = fetching();
    for (int r = 0; r < R; r++) {
        const uint8_t *wr = w + r * w_stride;
        acc[r] = _mm512_setzero_ps();
        for (int64_t i = 0; i < full; i++)
            acc[r] = grp32_row(acc[r], wr + i * 16 * wsz, g + i, t, fetch);
    }
    if (last)
        grp32_last(acc, w + full * 16 * wsz, w_stride, R, last, g + full, t);
    for (int r = 0; r < R; r++)
        y[r] = canon16_sum(acc[r]);
}

static inline __attribute__((always_inline)) void dot_rows32(int64_t k, const void *w, size_t w_stride, int64_t rows,
                                                             const void *p, float *y, enum t32 t)
{
    int64_t r = 0;
    for (; r + CF_DOT_ROWS <= rows; r += CF_DOT_ROWS)
        rows32(k, (const uint8_t *)w + r * w_stride, w_stride, p, y + r, t, CF_DOT_ROWS);
    for (; r < rows; r++)
        rows32(k, (const uint8_t *)w + r * w_stride, w_stride, p, y + r, t, 1);
}

#define DOT32(name, t)                                                                                    \
    static float dot_##name##_512(int64_t k, const void *w, const void *x) { return dot32_512(k, w, x, t); } \
    static void prep_##name##_512(int64_t k, const void *x, void *p) { prep32(k, x, p, t); }                \
    static void dot_rows_##name##_512(int64_t k, const void *w, size_t w_stride, int64_t rows, const void *p, \
                                      float *y)                                                           \
    {                                                                                                     \
        dot_rows32(k, w, w_stride, rows, p, y, t);                                                        \
    }
DOT32(q8_0, T_Q8_0)
DOT32(q4_0, T_Q4_0)
DOT32(q5_0, T_Q5_0)
DOT32(q4_1, T_Q4_1)
DOT32(q5_1, T_Q5_1)
DOT32(iq4_nl, T_IQ4_NL)
DOT32(mxfp4, T_MXFP4)
#undef DOT32

/* ---- CF_LAYOUT_R16 (layout.h), Q8_0, Q4_0, IQ4_NL, Q5_0: 16 rows at once, lane = row */

/* Where elements e..e+3 (e % 4 == 0) of block j of a group of blocks lie
 * in its grp32's activations: x_quad's order in a whole group (whole) of
 * the quad types, else x_pair_of's (Q8_0: the two blocks as they are). */
static inline size_t r16_xoff(int j, int e, int whole, enum t32 t)
{
    return whole        ? (size_t)(2 * (j / 4) + e / 16) * 64 + 16 * (j % 4) + e % 16
         : t == T_Q8_0 ? (size_t)(j / 2) * 64 + 32 * (j % 2) + e
                        : (size_t)(j / 2) * 64 + 16 * (2 * (e / 16) + j % 2) + e % 16;
}

static inline __m512i r16_x4(const grp32 *g, int j, int e, int whole, enum t32 t)
{
    int32_t v;
    memcpy(&v, (const uint8_t *)g->xq + r16_xoff(j, e, whole, t), 4);
    return _mm512_set1_epi32(v);
}

/* the bytes of one block of 16 rows, and where its chunks start */
static inline size_t r16_bsz(enum t32 t) { return R16_ROWS * t32_wsz(t); }
static inline size_t r16_qs(enum t32 t) { return t == T_Q5_0 ? R16_Q5_QS : R16_QS; }

/* Block j of a group of blocks (b: its r16_bsz bytes) into acc, 16 rows:
 * the chunks' quants times the activations' 4 bytes broadcast, isum minus
 * the block's off * sum x, then acc = fma(isum, dw * dx, acc) lane by
 * lane: each row's canonical step.  Q4_0 leaves its high nibbles in
 * place, 16 times their value, and shifts their sum back once (exact);
 * IQ4_NL looks its nibbles up in the codebook plus 128; Q5_0 adds the
 * fifth bits to both halves (r16_q5_quants); Q8_0 reads chunks c and 4 + c
 * as the halves, plus 128. */
static inline __attribute__((always_inline)) __m512 r16_block(__m512 acc, const uint8_t *b, const grp32 *g, int j,
                                                              int whole, enum t32 t, int fetch)
{
    const __m512i m4 = _mm512_set1_epi8(0xF);
    whole = whole && t32_quad(t); /* Q5_0's whole groups too are in pairs */
    const __m512i qh = t == T_Q5_0 ? _mm512_loadu_si512(b + R16_Q5_QH) : _mm512_setzero_si512();
    __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
    stream_ahead(fetch, b, r16_bsz(t), t32_ahead(t));
    for (int c = 0; c < 4; c++) {
        if (t == T_Q8_0) {
            const __m512i plus128 = _mm512_set1_epi8((char)0x80);
            lo = dp(lo, _mm512_xor_si512(_mm512_loadu_si512(b + R16_QS + 64 * c), plus128), r16_x4(g, j, 4 * c, 0, t));
            hi = dp(hi, _mm512_xor_si512(_mm512_loadu_si512(b + R16_QS + 64 * (4 + c)), plus128),
                    r16_x4(g, j, 16 + 4 * c, 0, t));
            continue;
        }
        __m512i v = _mm512_loadu_si512(b + r16_qs(t) + 64 * c);
        /* in a register once: GCC would fold the load into both uses, and
         * the loads limit this loop (Zen 4 measured 24 % slower so) */
        __asm__("" : "+v"(v));
        if (t == T_Q4_0) {
            lo = dp(lo, _mm512_and_si512(v, m4), r16_x4(g, j, 4 * c, whole, t));
            hi = dp(hi, _mm512_andnot_si512(m4, v), r16_x4(g, j, 16 + 4 * c, whole, t));
        } else if (t == T_Q5_0) {
            lo = dp(lo, r16_q5_quants(_mm512_and_si512(v, m4), qh, c), r16_x4(g, j, 4 * c, whole, t));
            hi = dp(hi, r16_q5_quants(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4), qh, 4 + c),
                    r16_x4(g, j, 16 + 4 * c, whole, t));
        } else {
            const __m512i table = nl4_table512(t);
            lo = dp(lo, _mm512_shuffle_epi8(table, _mm512_and_si512(v, m4)), r16_x4(g, j, 4 * c, whole, t));
            hi = dp(hi, _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4)),
                    r16_x4(g, j, 16 + 4 * c, whole, t));
        }
    }
    int32_t bias;
    float dx;
    memcpy(&bias, (const int32_t *)(const void *)&g->bias + j, 4);
    memcpy(&dx, (const float *)(const void *)&g->dx + j, 4);
    __m512i sum = _mm512_add_epi32(lo, t == T_Q4_0 ? _mm512_srai_epi32(hi, 4) : hi);
    __m512i isum = _mm512_sub_epi32(sum, _mm512_set1_epi32(bias));
    __m512 s = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)b)), _mm512_set1_ps(dx));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), s, acc);
}

/* the activation side of blocks i.. (n of them) when there is no prep:
 * out of line, so that the kernel with a prep keeps its registers */
static __attribute__((noinline)) void r16_prep_here(const uint8_t *x, int64_t i, int n, enum t32 t, grp32 *g)
{
    grp32_prep(x + i * sizeof(block_q8_0), n, t, g);
}

/* One group of 16 rows (nb blocks each) into y[0..15]: block u into
 * accumulator u % 16, then the canonical tree, all lane-wise.  p: the
 * prepared activations, or NULL to prepare them here from x. */
static inline __attribute__((always_inline)) void r16_rows(int64_t nb, const uint8_t *w, const grp32 *p,
                                                           const uint8_t *x, float *y, enum t32 t)
{
    __m512 acc[16];
    for (int j = 0; j < 16; j++)
        acc[j] = _mm512_setzero_ps();
    grp32 own;
    const int fetch = fetching();
    for (int64_t i = 0; i < nb; i += 16) {
        const int n = nb - i < 16 ? (int)(nb - i) : 16;
        const grp32 *g = p ? p + i / 16 : &own;
        if (!p)
            r16_prep_here(x, i, n, t, &own);
        const uint8_t *b = w + i * r16_bsz(t);
        if (n == 16) {
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++)
                acc[j] = r16_block(acc[j], b + j * r16_bsz(t), g, j, 1, t, fetch);
        } else {
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++)
                if (j < n)
                    acc[j] = r16_block(acc[j], b + j * r16_bsz(t), g, j, 0, t, fetch);
        }
    }
    for (int d = 8; d >= 1; d /= 2)
        for (int j = 0; j < d; j++)
            acc[j] = _mm512_add_ps(acc[j], acc[j + d]);
    _mm512_storeu_ps(y, acc[0]);
}

static inline __attribute__((always_inline)) void dot_r16_512(int64_t k, const void *w, int64_t groups,
                                                              const void *x, const void *p, float *y, enum t32 t)
{
    const int64_t nb = k / QK32;
    for (int64_t g = 0; g < groups; g++) {
        const uint8_t *wg = (const uint8_t *)w + g * nb * r16_bsz(t);
        if (p)
            r16_rows(nb, wg, p, NULL, y + R16_ROWS * g, t);
        else
            r16_rows(nb, wg, NULL, x, y + R16_ROWS * g, t);
    }
}

static void dot_r16_q4_0_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    dot_r16_512(k, w, groups, x, p, y, T_Q4_0);
}

static void dot_r16_q5_0_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    dot_r16_512(k, w, groups, x, p, y, T_Q5_0);
}

static void dot_r16_q8_0_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    dot_r16_512(k, w, groups, x, p, y, T_Q8_0);
}

static void dot_r16_iq4_nl_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    dot_r16_512(k, w, groups, x, p, y, T_IQ4_NL);
}

/* ---- K-quants: 512-bit super-block sums, canonical float part of dotK -- */

static inline __m512i nib_lo_hi(__m256i qb)
{
    __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(qb), _mm256_srli_epi16(qb, 4), 1);
    return _mm512_and_si512(z, _mm512_set1_epi8(0xF));
}

/* The 8 6-bit scales (bytes 0..7) and mins (bytes 8..15) of a Q4_K/Q5_K
 * block (s: its 12 scale bytes, followed by more of the block), unpacked
 * in a vector register.  With u0..u2 the 12 bytes as
 * 32-bit words: scales = u0 & 0x3f.., (u2 & 0x0f..) | ((u0 >> 6) & 3..) << 4;
 * mins = u1 & 0x3f.., ((u2 >> 4) & 0x0f..) | ((u1 >> 6) & 3..) << 4. */
static inline __m128i k4_scales_mins(const uint8_t *s)
{
    static const uint32_t shift_lo[4] = {0, 0, 0, 4}, mask_lo[4] = {0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f};
    static const uint32_t shift_hi[4] = {0, 6, 0, 6}, mask_hi[4] = {0, 0x03030303, 0, 0x03030303};
    /* 16 bytes: the 12 scale bytes and 4 of the quants that follow (unused) */
    __m128i v = _mm_loadu_si128((const __m128i *)s);
    __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)); /* u0 u2 u1 u2 */
    __m128i b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)); /* u0 u0 u1 u1 */
    __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_loadu_si128((const __m128i *)shift_lo)),
                               _mm_loadu_si128((const __m128i *)mask_lo));
    __m128i hi = _mm_and_si128(_mm_srlv_epi32(b, _mm_loadu_si128((const __m128i *)shift_hi)),
                               _mm_loadu_si128((const __m128i *)mask_hi));
    return _mm_or_si128(lo, _mm_slli_epi32(hi, 4));
}

/* vpshufb controls: for step h of Q4_K/Q5_K, int16 lanes of 128-bit lanes
 * 0, 1 take word 2h and those of lanes 2, 3 word 2h+1 */
static const __attribute__((aligned(64))) uint8_t k4_pick[4][64] = {
#define W2(w) (2 * (w)), (2 * (w) + 1)
#define L8(w) W2(w), W2(w), W2(w), W2(w), W2(w), W2(w), W2(w), W2(w)
    {L8(0), L8(0), L8(1), L8(1)},
    {L8(2), L8(2), L8(3), L8(3)},
    {L8(4), L8(4), L8(5), L8(5)},
    {L8(6), L8(6), L8(7), L8(7)},
};

/* for step s of Q6_K: every int16 lane takes word s of its 128-bit lane */
static const __attribute__((aligned(64))) uint8_t k6_pick[4][64] = {
    {L8(0), L8(0), L8(0), L8(0)},
    {L8(1), L8(1), L8(1), L8(1)},
    {L8(2), L8(2), L8(2), L8(2)},
    {L8(3), L8(3), L8(3), L8(3)},
#undef L8
#undef W2
};

/* 64 quants (u8) times 64 activations, products summed in pairs (int16;
 * never saturates for q < 64), times the per-pair scales, into int32. */
static inline __m512i qdot_scaled(__m512i isum, __m512i q, const int8_t *x, __m512i scales16)
{
    __m512i p16 = _mm512_maddubs_epi16(q, _mm512_loadu_si512(x));
    return _mm512_dpwssd_epi32(isum, p16, scales16);
}

/* Q4_K / Q5_K: 64 elements (two groups of 32) per step. */
static inline __attribute__((always_inline)) void sb_k4_512(const uint8_t *blk, const block_q8_K *b, int five,
                                                            __m512i *isum, __m256i *msum)
{
    const uint8_t *scales = blk + 4, *qs = blk + (five ? 48 : 16), *qh = blk + 16;
    __m128i sm = k4_scales_mins(scales);
    /* the 8 scales as int16 in every 128-bit lane: vpshufb can then pick a
     * lane's scale (cheaper than a cross-lane word permute) */
    __m512i sc16 = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sm));
    __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm)); /* m0 m0 m1 m1 .. */
    __m256i mins = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(b)), m16);
    __m512i acc = _mm512_setzero_si512();
    __m256i hbits = five ? load32(qh) : _mm256_setzero_si256();
    for (int h = 0; h < 4; h++) {
        __m512i q = nib_lo_hi(load32(qs + 32 * h));
        if (five) {
            __m512i hb = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(hbits, 2 * h)),
                                            _mm256_srli_epi16(hbits, 2 * h + 1), 1);
            q = _mm512_or_si512(q, _mm512_slli_epi16(_mm512_and_si512(hb, _mm512_set1_epi8(1)), 4));
        }
        acc = qdot_scaled(acc, q, b->qs + 64 * h, _mm512_shuffle_epi8(sc16, _mm512_load_si512(k4_pick[h])));
    }
    *isum = acc;
    *msum = mins;
}

static void sb_q4_K_512(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    sb_k4_512((const uint8_t *)w + i * sizeof(block_q4_K), (const block_q8_K *)x + i, 0, isum, msum);
}

static void sb_q5_K_512(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    sb_k4_512((const uint8_t *)w + i * sizeof(block_q5_K), (const block_q8_K *)x + i, 1, isum, msum);
}

/* vpshufb controls for the packed sums of quant vector h: 128-bit lanes 0
 * and 1 hold groups 4h and 4h + 1 (words 0-3, 4-7), lanes 2 and 3 groups
 * 4h + 2 and 4h + 3 */
static const __attribute__((aligned(64))) uint8_t k4_pick_wide[2][64] = {
#define W4(w) (2 * (w)), (2 * (w) + 1), (2 * (w)), (2 * (w) + 1), (2 * (w)), (2 * (w) + 1), (2 * (w)), (2 * (w) + 1)
    {W4(0), W4(1), W4(0), W4(1), W4(2), W4(3), W4(2), W4(3)},
    {W4(4), W4(5), W4(4), W4(5), W4(6), W4(7), W4(6), W4(7)},
#undef W4
};

/* A prepared super-block of activations for decoding: block_q8_K's
 * fields with the quants on a cache line (block_q8_K has them at offset 4,
 * and a vector load across two lines costs two). */
typedef struct {
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
    float d;
    uint8_t pad[28];
} __attribute__((aligned(64))) q8K_prep;
_Static_assert(sizeof(q8K_prep) == 320, "q8K_prep");
_Static_assert(CF_PREP_MAX_K / QK_K * sizeof(q8K_prep) <= CF_PREP_BYTES, "CF_PREP_BYTES holds the prepared blocks");

/* block b into o, its 32-element groups in the order order (NULL: as they are) */
static void prep_q8_K(const block_q8_K *b, q8K_prep *o, const int *order)
{
    for (int c = 0; c < 8; c++)
        memcpy(o->qs + 32 * c, b->qs + 32 * (order ? order[c] : c), 32);
    memcpy(o->bsums, q8k_bsums(b), sizeof o->bsums);
    o->d = b->d;
}

/* Decoding Q4_K: the activations prepared with their 32-element groups
 * in the order 0 2 1 3 4 6 5 7, the order of the low and high nibbles of
 * 64 quant bytes, so that a whole vector of quants unpacks with one shift
 * (the steps above put two 32-byte halves together, a shuffle each). */
static void prep_q4_K_512(int64_t k, const void *x, void *p)
{
    static const int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int64_t i = 0; i < k / QK_K; i++)
        prep_q8_K((const block_q8_K *)x + i, (q8K_prep *)p + i, order);
}

/* Q4_K / Q5_K against prep_q4_K_512's activations: vector h of quant
 * bytes holds groups 4h, 4h + 2 in its low nibbles, 4h + 1, 4h + 3 in its
 * high ones; Q5_K's bit g of qh[l] is element l of group g's fifth bit. */
static inline __attribute__((always_inline)) void sb_k4_wide(const uint8_t *blk, const q8K_prep *b, int five,
                                                             __m512i *isum, __m256i *msum)
{
    const uint8_t *qs = blk + (five ? 48 : 16);
    const __m512i m4 = _mm512_set1_epi8(0xF), m16 = _mm512_set1_epi8(0x10);
    const __m512i qh = five ? _mm512_broadcast_i64x4(load32(blk + 16)) : _mm512_setzero_si512();
    __m128i sm = k4_scales_mins(blk + 4);
    __m512i sc16 = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sm));
    __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));
    /* vpdpbusd's sums of 4 products (|s| <= 4 * 31 * 128) fit in int16:
     * two steps' sums pack into one vector, and one vpdpwssd applies the
     * scales of both (a lane's 4 words come from one group) */
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        __m512i q = _mm512_loadu_si512(qs + 64 * h);
        __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        if (five) {
            /* bits 4h + j (the first 32 bytes), 4h + 2 + j (the last 32) to bit 4 */
            for (int j = 0; j < 2; j++) {
                __m512i hb = _mm512_mask_srli_epi16(_mm512_srli_epi16(qh, 4 * h + j), 0xFFFF0000u, qh, 4 * h + 2 + j);
                __m512i *v = j ? &hi : &lo;
                *v = _mm512_ternarylogic_epi32(*v, _mm512_slli_epi16(hb, 4), m16, 0xF8);
            }
        }
        lo = dp(_mm512_setzero_si512(), lo, _mm512_load_si512(b->qs + 128 * h));
        hi = dp(_mm512_setzero_si512(), hi, _mm512_load_si512(b->qs + 128 * h + 64));
        acc = _mm512_dpwssd_epi32(acc, _mm512_packs_epi32(lo, hi),
                                  _mm512_shuffle_epi8(sc16, _mm512_load_si512(k4_pick_wide[h])));
    }
    *isum = acc;
    *msum = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(const void *)b->bsums), mins16);
}

static void sb_q4_K_wide(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    sb_k4_wide((const uint8_t *)w + i * sizeof(block_q4_K), (const q8K_prep *)x + i, 0, isum, msum);
}

static void sb_q5_K_wide(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    sb_k4_wide((const uint8_t *)w + i * sizeof(block_q5_K), (const q8K_prep *)x + i, 1, isum, msum);
}

/* 16 int16 scales of groups of 16 -> 128-bit lane L holds those of groups
 * L, L+4, L+8, L+12, so that vpshufb (k6_pick[s]) can pick group 4s + L
 * for lane L of the step s over elements 64s to 64s + 63 */
static inline __m512i scales16_by_step(__m256i sc16y)
{
    const __m512i spread = _mm512_set_epi16(15, 11, 7, 3, 15, 11, 7, 3, 14, 10, 6, 2, 14, 10, 6, 2,
                                            13, 9, 5, 1, 13, 9, 5, 1, 12, 8, 4, 0, 12, 8, 4, 0);
    return _mm512_permutexvar_epi16(spread, _mm512_castsi256_si512(sc16y));
}

/* Q6_K: 64 elements (four groups of 16) per step. */
static inline __attribute__((always_inline)) void sb_q6_K_core(const block_q6_K *a, const int8_t *xqs,
                                                               const int16_t *bsums, __m512i *isum, __m256i *msum)
{
    const __m512i m15 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    __m128i sc8 = _mm_loadu_si128((const __m128i *)a->scales);
    __m256i sc16y = _mm256_cvtepi8_epi16(sc8);
    __m512i sc16 = scales16_by_step(sc16y);
    __m256i off = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)bsums), sc16y);
    __m512i acc = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        __m512i ql = _mm512_loadu_si512(a->ql + 64 * h); /* low nibbles of s = 0 | s = 1 */
        __m256i qh = load32(a->qh + 32 * h);
        /* high bits of s = 0,1 (at bits 4,5) and of s = 2,3 */
        __m512i h01 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_slli_epi16(qh, 4)), _mm256_slli_epi16(qh, 2), 1);
        __m512i h23 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
        /* (a & 0x0f) | (b & 0x30) */
        __m512i q01 = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m15), h01, m30, 0xF8);
        __m512i q23 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m15), h23, m30, 0xF8);
        for (int st = 0; st < 2; st++) {
            acc = qdot_scaled(acc, st ? q23 : q01, xqs + 128 * h + 64 * st,
                              _mm512_shuffle_epi8(sc16, _mm512_load_si512(k6_pick[2 * h + st])));
        }
    }
    /* the -32 of the quants: minus 32 * sum sc * bsums, in lanes 0..7 */
    *isum = _mm512_sub_epi32(acc, _mm512_zextsi256_si512(_mm256_slli_epi32(off, 5)));
    *msum = _mm256_setzero_si256();
}

static void sb_q6_K_512(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    const block_q8_K *b = (const block_q8_K *)x + i;
    sb_q6_K_core((const block_q6_K *)w + i, b->qs, q8k_bsums(b), isum, msum);
}

static void sb_q6_K_prep(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    const q8K_prep *b = (const q8K_prep *)x + i;
    sb_q6_K_core((const block_q6_K *)w + i, b->qs, b->bsums, isum, msum);
}

/* v[i] -> the sums of their 16 lanes, in order (a transposing tree). */
static inline __m512i lane_sums16(const __m512i v[16])
{
    __m512i u[4], w[2];
    for (int i = 0; i < 4; i++)
        u[i] = sums4(v + 4 * i);
    for (int i = 0; i < 2; i++)
        w[i] = _mm512_add_epi32(_mm512_shuffle_i32x4(u[2 * i], u[2 * i + 1], 0x88),
                                _mm512_shuffle_i32x4(u[2 * i], u[2 * i + 1], 0xDD));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(w[0], w[1], 0x88), _mm512_shuffle_i32x4(w[0], w[1], 0xDD));
}

typedef void (*sbv_fn)(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum);

static inline float q8K_d(const void *x, int64_t i, int prepped)
{
    return prepped ? ((const q8K_prep *)x)[i].d : ((const block_q8_K *)x)[i].d;
}

/* The canonical float part over nsb super-blocks, 16 at a time, from the
 * unreduced integer sums; d (and dmin) of a weight block at doff (+2); x
 * block_q8_K, or (prepped) q8K_prep. */
static inline __attribute__((always_inline)) float dotK_512(int64_t nsb, const void *w, const void *x, sbv_fn sb,
                                                            size_t wsz, size_t doff, int with_min, int prepped)
{
    __m512 acc = _mm512_setzero_ps();
    const int fetch = fetching();
    for (int64_t i0 = 0; i0 < nsb; i0 += 16) {
        int n = nsb - i0 < 16 ? (int)(nsb - i0) : 16;
        __m512i v[16], mz[8];
        __m256i m[16];
        __m512 vdx = _mm512_setzero_ps();
        for (int j = 0; j < 16; j++) {
            if (j < n) {
                stream_ahead(fetch, (const uint8_t *)w + (i0 + j) * wsz, wsz, AHEAD_FAR);
                sb(w, x, i0 + j, &v[j], &m[j]);
                vdx = _mm512_mask_broadcastss_ps(vdx, (__mmask16)(1u << j), _mm_set_ss(q8K_d(x, i0 + j, prepped)));
            } else {
                v[j] = _mm512_setzero_si512();
                m[j] = _mm256_setzero_si256();
            }
        }
        __mmask16 mask = (__mmask16)((1u << n) - 1);
        const uint8_t *w0 = (const uint8_t *)w + i0 * wsz + doff;
        acc = _mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(lane_sums16(v)), _mm512_mul_ps(d16(w0, wsz, n), vdx), acc,
                                    mask);
        if (with_min) {
            for (int p = 0; p < 8; p++)
                mz[p] = _mm512_inserti64x4(_mm512_castsi256_si512(m[2 * p]), m[2 * p + 1], 1);
            acc = _mm512_mask3_fnmadd_ps(_mm512_cvtepi32_ps(block_sums16(mz)),
                                         _mm512_mul_ps(d16(w0 + 2, wsz, n), vdx), acc, mask);
        }
    }
    return canon16_sum(acc);
}

/* Q2_K / Q3_K: 64 elements per step, the same shift s of both halves of
 * qs (elements 32s + l and 128 + 32s + l); 128-bit lane L of a step's
 * int16 products is group 2s + L (L < 2) or 8 + 2s + L - 2. */
static inline __attribute__((always_inline)) void sb_k23_512(const uint8_t *qs, const uint8_t *hmask,
                                                             __m256i sc16y, const block_q8_K *b, __m512i *isum)
{
    /* lane L holds the scales of groups L, L+2, L+4, L+6 (L < 2) or
     * L+6, L+8, L+10, L+12 (L >= 2): word s is then step s's */
    const __m512i spread = _mm512_set_epi16(15, 13, 11, 9, 15, 13, 11, 9, 14, 12, 10, 8, 14, 12, 10, 8,
                                            7, 5, 3, 1, 7, 5, 3, 1, 6, 4, 2, 0, 6, 4, 2, 0);
    __m512i sc16 = _mm512_permutexvar_epi16(spread, _mm512_castsi256_si512(sc16y));
    __m512i q2 = _mm512_loadu_si512(qs);
    __m512i hm = hmask ? _mm512_broadcast_i64x4(load32(hmask)) : _mm512_setzero_si512();
    __m512i acc = *isum;
    for (int sh = 0; sh < 4; sh++) {
        __m512i q = _mm512_and_si512(_mm512_srli_epi16(q2, 2 * sh), _mm512_set1_epi8(3));
        if (hmask) {
            /* bit sh of hmask for the first half, bit 4 + sh for the second */
            __m512i hb = _mm512_mask_srli_epi16(_mm512_srli_epi16(hm, sh), 0xFFFF0000u, hm, 4 + sh);
            q = _mm512_or_si512(q, _mm512_slli_epi16(_mm512_and_si512(hb, _mm512_set1_epi8(1)), 2));
        }
        __m512i xs = _mm512_inserti64x4(_mm512_castsi256_si512(load32(b->qs + 32 * sh)), load32(b->qs + 128 + 32 * sh), 1);
        __m512i p16 = _mm512_maddubs_epi16(q, xs);
        acc = _mm512_dpwssd_epi32(acc, p16, _mm512_shuffle_epi8(sc16, _mm512_load_si512(k6_pick[sh])));
    }
    *isum = acc;
}

static void sb_q2_K_512(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    const block_q2_K *a = (const block_q2_K *)w + i;
    const block_q8_K *b = (const block_q8_K *)x + i;
    __m128i sc8 = _mm_loadu_si128((const __m128i *)a->scales);
    __m256i sc16y = _mm256_cvtepu8_epi16(_mm_and_si128(sc8, _mm_set1_epi8(0xF)));
    __m256i m16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0xF)));
    *msum = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(b)), m16);
    *isum = _mm512_setzero_si512();
    sb_k23_512(a->qs, NULL, sc16y, b, isum);
}

static void sb_q3_K_512(const void *w, const void *x, int64_t i, __m512i *isum, __m256i *msum)
{
    const block_q3_K *a = (const block_q3_K *)w + i;
    const block_q8_K *b = (const block_q8_K *)x + i;
    /* the 16 6-bit scales minus 32: low nibbles from bytes 0..7 (groups 0..7
     * low, 8..15 high), top 2 bits of group j at bit 2 (j / 4) of byte
     * 8 + j % 4 */
    uint32_t top;
    memcpy(&top, a->scales + 8, 4);
    __m128i v = _mm_insert_epi32(_mm_loadl_epi64((const __m128i *)a->scales), (int)top, 2);
    const __m128i m15 = _mm_set1_epi8(0xF);
    __m128i lo = _mm_unpacklo_epi64(_mm_and_si128(v, m15), _mm_and_si128(_mm_srli_epi16(v, 4), m15));
    __m128i hi = _mm_shuffle_epi8(v, _mm_set1_epi32(0x0b0a0908));
    hi = _mm_and_si128(_mm_srlv_epi32(hi, _mm_set_epi32(6, 4, 2, 0)), _mm_set1_epi8(3));
    __m128i sc8 = _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
    __m256i sc16y = _mm256_cvtepi8_epi16(sc8);
    __m256i off = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)q8k_bsums(b)), sc16y);
    /* the -4 of the quants: start from -4 * sum sc * bsums, in lanes 0..7 */
    *isum = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 2)));
    *msum = _mm256_setzero_si256();
    sb_k23_512(a->qs, a->hmask, sc16y, b, isum);
}

static float dot_q2_K_512(int64_t k, const void *w, const void *x)
{
    return dotK_512(k / QK_K, w, x, sb_q2_K_512, sizeof(block_q2_K), offsetof(block_q2_K, d), 1, 0);
}

static float dot_q3_K_512(int64_t k, const void *w, const void *x)
{
    return dotK_512(k / QK_K, w, x, sb_q3_K_512, sizeof(block_q3_K), offsetof(block_q3_K, d), 0, 0);
}

static float dot_q4_K_512(int64_t k, const void *w, const void *x)
{
    return dotK_512(k / QK_K, w, x, sb_q4_K_512, sizeof(block_q4_K), 0, 1, 0);
}

static float dot_q5_K_512(int64_t k, const void *w, const void *x)
{
    return dotK_512(k / QK_K, w, x, sb_q5_K_512, sizeof(block_q5_K), 0, 1, 0);
}

static float dot_q6_K_512(int64_t k, const void *w, const void *x)
{
    return dotK_512(k / QK_K, w, x, sb_q6_K_512, sizeof(block_q6_K), offsetof(block_q6_K, d), 0, 0);
}

/* Rows of fewer than 16 super-blocks (k = 2048: 8) leave most of dotK's
 * reductions empty, so rows that lie one after the other go through it
 * 16 / nsb at a time, as one row of 16 whose activations repeat; row q's
 * lanes then move down to where its own dotK has them (the other lanes
 * zero, as there), so each row keeps its bits. */
static inline __attribute__((always_inline)) void dotK_rows_512(int64_t k, const void *w, size_t w_stride,
                                                                int64_t rows, const void *p, float *y, sbv_fn sb,
                                                                size_t wsz, size_t doff, int with_min)
{
    const int64_t nsb = k / QK_K;
    const q8K_prep *b = p;
    const int fetch = fetching();
    int64_t r = 0;
    if (nsb < 16 && 16 % nsb == 0 && w_stride == (size_t)nsb * wsz) {
        const int per = (int)(16 / nsb);
        const __mmask16 own = (__mmask16)((1u << nsb) - 1);
        const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        __m512 vdx = _mm512_setzero_ps();
        for (int j = 0; j < 16; j++)
            vdx = _mm512_mask_broadcastss_ps(vdx, (__mmask16)(1u << j), _mm_set_ss(b[j % nsb].d));
        for (; r + per <= rows; r += per) {
            const uint8_t *wg = (const uint8_t *)w + r * w_stride;
            __m512i v[16], mz[8], dm = _mm512_setzero_si512();
            __m256i m[16];
            for (int j = 0; j < 16; j++) {
                stream_ahead(fetch, wg + j * wsz, wsz, AHEAD_FAR);
                sb(wg + j * wsz, b + j % nsb, 0, &v[j], &m[j]);
                /* d and (Q4_K) dmin, F16, in lane j (Q6_K's d ends its block) */
                dm = _mm512_mask_broadcastd_epi32(dm, (__mmask16)(1u << j),
                                                  with_min ? _mm_loadu_si32(wg + j * wsz + doff)
                                                           : _mm_loadu_si16(wg + j * wsz + doff));
            }
            __m512 acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lane_sums16(v)),
                                         _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm)), vdx),
                                         _mm512_setzero_ps());
            if (with_min) {
                for (int q = 0; q < 8; q++)
                    mz[q] = _mm512_inserti64x4(_mm512_castsi256_si512(m[2 * q]), m[2 * q + 1], 1);
                __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16)));
                acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(block_sums16(mz)), _mm512_mul_ps(dmin, vdx), acc);
            }
            for (int q = 0; q < per; q++)
                y[r + q] = canon16_sum(
                    _mm512_maskz_permutexvar_ps(own, _mm512_add_epi32(lanes, _mm512_set1_epi32(q * (int)nsb)), acc));
        }
    }
    for (; r < rows; r++)
        y[r] = dotK_512(nsb, (const uint8_t *)w + r * w_stride, p, sb, wsz, doff, with_min, 1);
}

static void dot_rows_q4_K_512(int64_t k, const void *w, size_t w_stride, int64_t rows, const void *p, float *y)
{
    dotK_rows_512(k, w, w_stride, rows, p, y, sb_q4_K_wide, sizeof(block_q4_K), offsetof(block_q4_K, d), 1);
}

static void dot_rows_q5_K_512(int64_t k, const void *w, size_t w_stride, int64_t rows, const void *p, float *y)
{
    dotK_rows_512(k, w, w_stride, rows, p, y, sb_q5_K_wide, sizeof(block_q5_K), offsetof(block_q5_K, d), 1);
}

/* ---- CF_LAYOUT_R16 Q4_K (layout.h): 16 rows at once, lane = row ------- */

/* Super-block i of 16 rows (b: its R16_K4_BLOCK bytes) into acc, lane by
 * lane dotK's canonical step: isum at d * dx, msum at -(dmin * dx).  The
 * activations x: block_q8_K, or (prepped) prep_q4_K_512's order of groups.
 * The chunks' quants times 4 activation bytes broadcast sum each group of
 * 32 in int32 (r16_block's way; the high nibbles left in place, 16 times
 * their value, and shifted back once), then times its scale. */
static inline __attribute__((always_inline)) __m512 r16_k4_block(__m512 acc, const uint8_t *b, const void *x,
                                                                 int64_t i, int prepped, int fetch)
{
    const int8_t *xq = prepped ? ((const q8K_prep *)x)[i].qs : ((const block_q8_K *)x)[i].qs;
    const int16_t *bsums = prepped ? ((const q8K_prep *)x)[i].bsums : q8k_bsums((const block_q8_K *)x + i);
    const __m512i m4 = _mm512_set1_epi8(0xF);
    __m512i sc[2], mn[2];
    stream_ahead(fetch, b, R16_K4_QS, AHEAD_FAR);
    r16_k4_scales_mins(b, sc, mn);
    __m512i isum = _mm512_setzero_si512(), isum16 = _mm512_setzero_si512();
    for (int h = 0; h < 4; h++) {
        /* groups 2h (low nibbles) and 2h + 1 (high); prepped, the groups
         * lie in the order 0 2 1 3 4 6 5 7 */
        const int8_t *xl = xq + (prepped ? 32 * (h < 2 ? h : h + 2) : 64 * h), *xh = xl + (prepped ? 64 : 32);
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        for (int c = 0; c < 8; c++) {
            stream_ahead(fetch, b + R16_K4_QS + 64 * (8 * h + c), 64, AHEAD_FAR);
            __m512i v = _mm512_loadu_si512(b + R16_K4_QS + 64 * (8 * h + c));
            /* in a register once, as in r16_block */
            __asm__("" : "+v"(v));
            int32_t al, ah;
            memcpy(&al, xl + 4 * c, 4);
            memcpy(&ah, xh + 4 * c, 4);
            lo = dp(lo, _mm512_and_si512(v, m4), _mm512_set1_epi32(al));
            hi = dp(hi, _mm512_andnot_si512(m4, v), _mm512_set1_epi32(ah));
        }
        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(lo, lane_byte(sc[h / 2], 2 * h % 4)));
        isum16 = _mm512_add_epi32(isum16, _mm512_mullo_epi32(hi, lane_byte(sc[h / 2], (2 * h + 1) % 4)));
    }
    isum = _mm512_add_epi32(isum, _mm512_srai_epi32(isum16, 4));
    /* msum: the mins of groups 4q + 2pr and 4q + 2pr + 1 as a pair of
     * int16 in each lane, against the groups' bsums sums, the same pair in
     * dword 4q + pr of bs */
    const __m512i pair0 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1));
    const __m512i pair1 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1, 15, -1));
    __m256i g32 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)bsums), _mm256_set1_epi16(1));
    __m512i bs = _mm512_castsi256_si512(_mm256_packs_epi32(g32, g32)); /* lane q: words of groups 4q..4q+3 twice */
    __m512i msum = _mm512_setzero_si512();
    for (int q = 0; q < 2; q++)
        for (int pr = 0; pr < 2; pr++)
            msum = _mm512_dpwssd_epi32(msum, _mm512_shuffle_epi8(mn[q], pr ? pair1 : pair0),
                                       _mm512_permutexvar_epi32(_mm512_set1_epi32(4 * q + pr), bs));
    const __m512i dm = _mm512_loadu_si512(b); /* d | dmin << 16 */
    const __m512 vdx = _mm512_set1_ps(q8K_d(x, i, prepped));
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm));
    const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, vdx), acc);
    return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, vdx), acc);
}

typedef __m512 (*r16_k_fn)(__m512 acc, const uint8_t *b, const void *x, int64_t i, int prepped, int fetch);

/* One group of 16 rows (nsb super-blocks of bsz bytes) into y[0..15]:
 * super-block i into accumulator i % 16, then the canonical tree, all
 * lane-wise. */
static inline __attribute__((always_inline)) void r16_k_rows(int64_t nsb, const uint8_t *w, const void *x,
                                                             int prepped, float *y, r16_k_fn block, size_t bsz)
{
    __m512 acc[16];
    for (int j = 0; j < 16; j++)
        acc[j] = _mm512_setzero_ps();
    const int fetch = fetching();
    for (int64_t i = 0; i < nsb; i++)
        acc[i % 16] = block(acc[i % 16], w + i * bsz, x, i, prepped, fetch);
    for (int d = 8; d >= 1; d /= 2)
        for (int j = 0; j < d; j++)
            acc[j] = _mm512_add_ps(acc[j], acc[j + d]);
    _mm512_storeu_ps(y, acc[0]);
}

/* groups of 16 rows; p: the activations prepared, or NULL (x as it is) */
static inline __attribute__((always_inline)) void r16_k_groups(int64_t k, const void *w, int64_t groups,
                                                               const void *x, const void *p, float *y,
                                                               r16_k_fn block, size_t bsz)
{
    const int64_t nsb = k / QK_K;
    for (int64_t g = 0; g < groups; g++) {
        const uint8_t *wg = (const uint8_t *)w + g * nsb * bsz;
        if (p)
            r16_k_rows(nsb, wg, p, 1, y + R16_ROWS * g, block, bsz);
        else
            r16_k_rows(nsb, wg, x, 0, y + R16_ROWS * g, block, bsz);
    }
}

static void dot_r16_q4_K_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    r16_k_groups(k, w, groups, x, p, y, r16_k4_block, R16_K4_BLOCK);
}

/* ---- CF_LAYOUT_R16 Q6_K (layout.h) ------------------------------------- */

/* Super-block i of 16 rows (b: its R16_Q6_BLOCK bytes) into acc, lane by
 * lane dotK's canonical step, isum at d * dx.  Each group of 16 elements
 * sums in int32 from -32 times its bsum (the quants' offset), its chunks'
 * 6-bit quants times 4 activation bytes broadcast, then times its scale. */
static inline __attribute__((always_inline)) __m512 r16_q6_block(__m512 acc, const uint8_t *b, const void *x,
                                                                 int64_t i, int prepped, int fetch)
{
    const int8_t *xq = prepped ? ((const q8K_prep *)x)[i].qs : ((const block_q8_K *)x)[i].qs;
    const int16_t *bsums = prepped ? ((const q8K_prep *)x)[i].bsums : q8k_bsums((const block_q8_K *)x + i);
    const __m512i m4 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    __m512i isum = _mm512_setzero_si512();
    stream_ahead(fetch, b, R16_Q6_STEPS, AHEAD_FAR);
    for (int h = 0; h < 2; h++)
        for (int half16 = 0; half16 < 2; half16++) {
            /* groups 8h + half16 + 2s, s = 0..3: l = 16 half16 .. + 15 of
             * elements 128h + 32s + l */
            const int g0 = 8 * h + half16;
            __m512i a[4];
            for (int s4 = 0; s4 < 4; s4++)
                a[s4] = _mm512_set1_epi32(-32 * bsums[g0 + 2 * s4]);
            for (int c = 4 * half16; c < 4 * half16 + 4; c++) {
                const uint8_t *step = b + R16_Q6_STEPS + R16_Q6_STEP * (8 * h + c);
                stream_ahead(fetch, step, R16_Q6_STEP, AHEAD_FAR);
                const __m512i v1 = _mm512_loadu_si512(step), v2 = _mm512_loadu_si512(step + 64);
                const __m512i qh = _mm512_loadu_si512(step + 128);
                /* a | (b & c): the nibble, and qh's 2 bits moved to bits 4-5 */
                const __m512i q[4] = {
                    _mm512_ternarylogic_epi32(_mm512_and_si512(v1, m4), _mm512_slli_epi32(qh, 4), m30, 0xF8),
                    _mm512_ternarylogic_epi32(_mm512_and_si512(v2, m4), _mm512_slli_epi32(qh, 2), m30, 0xF8),
                    _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi32(v1, 4), m4), qh, m30, 0xF8),
                    _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi32(v2, 4), m4),
                                              _mm512_srli_epi32(qh, 2), m30, 0xF8),
                };
                for (int s4 = 0; s4 < 4; s4++)
                    a[s4] = dp_bcast(a[s4], q[s4], xq + 128 * h + 32 * s4 + 4 * c);
            }
            for (int s4 = 0; s4 < 4; s4++) {
                const int g = g0 + 2 * s4;
                /* the int8 scale of group g, byte g % 4 of scale chunk g / 4 */
                const __m512i sc = _mm512_srai_epi32(
                    _mm512_slli_epi32(_mm512_loadu_si512(b + R16_Q6_SC + 64 * (g / 4)), 24 - 8 * (g % 4)), 24);
                isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(a[s4], sc));
            }
        }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)b));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, _mm512_set1_ps(q8K_d(x, i, prepped))), acc);
}

static void dot_r16_q6_K_512(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y)
{
    r16_k_groups(k, w, groups, x, p, y, r16_q6_block, R16_Q6_BLOCK);
}

/* Q6_K's quants unpack in element order */
static void prep_q6_K_512(int64_t k, const void *x, void *p)
{
    for (int64_t i = 0; i < k / QK_K; i++)
        prep_q8_K((const block_q8_K *)x + i, (q8K_prep *)p + i, NULL);
}

static void dot_rows_q6_K_512(int64_t k, const void *w, size_t w_stride, int64_t rows, const void *p, float *y)
{
    dotK_rows_512(k, w, w_stride, rows, p, y, sb_q6_K_prep, sizeof(block_q6_K), offsetof(block_q6_K, d), 0);
}

#include "dot_iq12_512.inc"
#include "dot_iq3_avx512.inc"
#include "dot_iq4_512.inc"

void cf_fill_avx512(cf_kernel_table *t, int vnni, int fetch)
{
    if (!vnni)
        return;
    __atomic_store_n(&fetch_ahead, fetch, __ATOMIC_RELAXED);
    simd_fill(t);
    t->dot[CF_TYPE_Q8_0] = dot_q8_0_512;
    t->dot[CF_TYPE_Q4_0] = dot_q4_0_512;
    t->dot[CF_TYPE_Q5_0] = dot_q5_0_512;
    t->dot[CF_TYPE_Q4_1] = dot_q4_1_512;
    t->dot[CF_TYPE_Q5_1] = dot_q5_1_512;
    t->prep[CF_TYPE_Q8_0] = prep_q8_0_512;
    t->dot_rows[CF_TYPE_Q8_0] = dot_rows_q8_0_512;
    t->layout[CF_TYPE_Q8_0] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_Q8_0] = dot_r16_q8_0_512;
    t->prep[CF_TYPE_Q4_0] = prep_q4_0_512;
    t->dot_rows[CF_TYPE_Q4_0] = dot_rows_q4_0_512;
    t->layout[CF_TYPE_Q4_0] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_Q4_0] = dot_r16_q4_0_512;
    t->layout[CF_TYPE_IQ4_NL] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_IQ4_NL] = dot_r16_iq4_nl_512;
    t->prep[CF_TYPE_Q5_0] = prep_q5_0_512;
    t->dot_rows[CF_TYPE_Q5_0] = dot_rows_q5_0_512;
    t->layout[CF_TYPE_Q5_0] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_Q5_0] = dot_r16_q5_0_512;
    t->prep[CF_TYPE_Q4_1] = prep_q4_1_512;
    t->dot_rows[CF_TYPE_Q4_1] = dot_rows_q4_1_512;
    t->prep[CF_TYPE_Q5_1] = prep_q5_1_512;
    t->dot_rows[CF_TYPE_Q5_1] = dot_rows_q5_1_512;
    t->dot[CF_TYPE_Q2_K] = dot_q2_K_512;
    t->dot[CF_TYPE_Q3_K] = dot_q3_K_512;
    t->dot[CF_TYPE_Q4_K] = dot_q4_K_512;
    t->prep[CF_TYPE_Q4_K] = prep_q4_K_512;
    t->dot_rows[CF_TYPE_Q4_K] = dot_rows_q4_K_512;
    t->layout[CF_TYPE_Q4_K] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_Q4_K] = dot_r16_q4_K_512;
    t->dot[CF_TYPE_Q5_K] = dot_q5_K_512;
    t->prep[CF_TYPE_Q5_K] = prep_q4_K_512;
    t->dot_rows[CF_TYPE_Q5_K] = dot_rows_q5_K_512;
    t->dot[CF_TYPE_Q6_K] = dot_q6_K_512;
    t->prep[CF_TYPE_Q6_K] = prep_q6_K_512;
    t->dot_rows[CF_TYPE_Q6_K] = dot_rows_q6_K_512;
    t->layout[CF_TYPE_Q6_K] = CF_LAYOUT_R16;
    t->dot_r16[CF_TYPE_Q6_K] = dot_r16_q6_K_512;
    fill_iq12_512(t);
    fill_iq3_512(t);
    fill_avx512_iq4(t);
    cf_fill_gemm_avx512(t);
}
CF_TARGET_END
#else
void cf_fill_avx512(cf_kernel_table *t, int vnni, int fetch)
{
    (void)t;
    (void)vnni;
    (void)fetch;
}
#endif
