/* Tiled GEMM for N >= 3 (batched prefill), AVX-512 VNNI: the tiles over
 * gemm_panel.c's panels.
 *
 * The micro-kernel streams 8 activation columns against a panel of 16
 * rows: each vpdpbusd multiplies the 16 rows (one 512-bit lane each) by 4
 * activation bytes broadcast from the Q8 block, so a loaded weight vector
 * serves 8 columns and the integer sums need no horizontal reduction.  A
 * Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_K or Q6_K matrix repacked at load
 * (CF_LAYOUT_R16) is interleaved so already: its panels only take the
 * nibbles apart (and add Q5_0's fifth bits or Q6_K's high bits, unpack
 * the K-quants' scales; Q8_0's are copied).
 *
 * F32/F16/BF16 weights: 4x4 register tiles of the canonical dot itself. */
#include "confab/target.h"
#include "gemm_panel.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include <immintrin.h>

#include "blocks.h"
#include "iq4.h"
#include "layout512.h"

/* gemm_panel.h's 16 x 16 transpose in 512-bit registers. */
static void transpose16(const uint32_t *src, size_t sstride, uint32_t *dst, int j0, const slot_map *sm)
{
    {
        __m512i r[16], t[16];
        for (int i = 0; i < 16; i++)
            r[i] = _mm512_loadu_si512(src + i * sstride + j0);
        for (int i = 0; i < 8; i++) {
            t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
        }
        for (int i = 0; i < 4; i++) {
            r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
            r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
            r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
            r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
        }
        /* r[4g + e], 128-bit lane L: element 4L + e of rows 4g .. 4g+3 */
        for (int e = 0; e < 4; e++) {
            __m512i a = _mm512_shuffle_i32x4(r[e], r[4 + e], 0x88);
            __m512i b = _mm512_shuffle_i32x4(r[e], r[4 + e], 0xDD);
            __m512i c = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0x88);
            __m512i d = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0xDD);
            _mm512_store_si512(dst + 16 * slot_row(sm, j0 + e), _mm512_shuffle_i32x4(a, c, 0x88));
            _mm512_store_si512(dst + 16 * slot_row(sm, j0 + 8 + e), _mm512_shuffle_i32x4(a, c, 0xDD));
            _mm512_store_si512(dst + 16 * slot_row(sm, j0 + 4 + e), _mm512_shuffle_i32x4(b, d, 0x88));
            _mm512_store_si512(dst + 16 * slot_row(sm, j0 + 12 + e), _mm512_shuffle_i32x4(b, d, 0xDD));
        }
    }
}

/* A group of a CF_LAYOUT_R16 matrix (layout.h) holds the panel's quants
 * already interleaved: chunk c of block u is k-steps 8u + c (its low
 * nibbles) and 8u + 4 + c (the high ones) of the 16 rows; only the
 * residue order is left to do, and IQ4_NL's codebook plus 128 or Q5_0's
 * fifth bits.  Q8_0's 8 chunks are k-steps 8u + c as they are, plus 128. */
static void pack_panel_r16(const uint8_t *g, int64_t k, cf_type t, panel *p)
{
    const int nb = (int)(k / 32), per_res = (nb + 15) / 16;
    const __m512i m4 = _mm512_set1_epi8(0xF), plus128 = _mm512_set1_epi8((char)0x80);
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_xor_si128(_mm_loadu_si128((const __m128i *)cf_kvalues_iq4nl), _mm_set1_epi8((char)0x80)));
    const size_t bsz = R16_ROWS * cf_type_get(t)->type_size, qs = t == CF_TYPE_Q5_0 ? R16_Q5_QS : R16_QS;
    for (int u = 0; u < nb; u++, g += bsz) {
        const int slot = (u % 16) * per_res + u / 16;
        for (int c = 0; c < 4; c++) {
            const __m512i v = _mm512_loadu_si512(g + qs + 64 * c);
            __m512i lo, hi;
            if (t == CF_TYPE_Q8_0) {
                lo = _mm512_xor_si512(v, plus128);
                hi = _mm512_xor_si512(_mm512_loadu_si512(g + qs + 64 * (4 + c)), plus128);
            } else {
                lo = _mm512_and_si512(v, m4);
                hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                if (t == CF_TYPE_IQ4_NL) {
                    lo = _mm512_shuffle_epi8(table, lo);
                    hi = _mm512_shuffle_epi8(table, hi);
                } else if (t == CF_TYPE_Q5_0) {
                    const __m512i qh = _mm512_loadu_si512(g + R16_Q5_QH);
                    lo = r16_q5_quants(lo, qh, c);
                    hi = r16_q5_quants(hi, qh, 4 + c);
                }
            }
            _mm512_store_si512(p->q[8 * slot + c], lo);
            _mm512_store_si512(p->q[8 * slot + 4 + c], hi);
        }
        _mm512_store_ps(p->s[slot], _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g)));
    }
}

/* A Q4_K group (layout.h) likewise: chunk 8h + i of super-block u is
 * k-steps 8 (2h) + i (its low nibbles) and 8 (2h + 1) + i (the high ones)
 * of the 16 rows; the scales, mins, d and dmin unpacked lane by lane. */
static void pack_panel_r16_k4(const uint8_t *g, int64_t k, panel *p)
{
    const int nsb = (int)(k / 256), per_res = (nsb + 15) / 16;
    const __m512i m4 = _mm512_set1_epi8(0xF);
    for (int u = 0; u < nsb; u++, g += R16_K4_BLOCK) {
        const int slot = (u % 16) * per_res + u / 16;
        for (int c = 0; c < 32; c++) {
            __m512i v = _mm512_loadu_si512(g + R16_K4_QS + 64 * c);
            _mm512_store_si512(p->q[64 * slot + 16 * (c / 8) + c % 8], _mm512_and_si512(v, m4));
            _mm512_store_si512(p->q[64 * slot + 16 * (c / 8) + 8 + c % 8],
                               _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
        }
        __m512i sc[2], mn[2];
        r16_k4_scales_mins(g, sc, mn);
        for (int j = 0; j < 8; j++) {
            _mm512_store_si512(p->sc[8 * slot + j], lane_byte(sc[j / 4], j % 4));
            const __m512i m = lane_byte(mn[j / 4], j % 4);
            _mm512_store_si512(p->mp[slot][j], _mm512_or_si512(m, _mm512_slli_epi32(m, 16)));
        }
        const __m512i dm = _mm512_loadu_si512(g);
        _mm512_store_ps(p->d[slot], _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm)));
        _mm512_store_ps(p->dmin[slot], _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16))));
    }
}

/* A Q6_K group (layout.h) likewise: step 8h + c of a super-block is
 * k-steps 32h + 8s + c, s = 0..3, of the 16 rows
 * (the quants put together as the decoding kernel does); the int8 scales
 * widened lane by lane. */
static void pack_panel_r16_q6(const uint8_t *g, int64_t k, panel *p)
{
    const int nsb = (int)(k / 256), per_res = (nsb + 15) / 16;
    const __m512i m4 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    for (int u = 0; u < nsb; u++, g += R16_Q6_BLOCK) {
        const int slot = (u % 16) * per_res + u / 16;
        for (int h = 0; h < 2; h++)
            for (int c = 0; c < 8; c++) {
                const uint8_t *step = g + R16_Q6_STEPS + R16_Q6_STEP * (8 * h + c);
                const __m512i v1 = _mm512_loadu_si512(step), v2 = _mm512_loadu_si512(step + 64);
                const __m512i qh = _mm512_loadu_si512(step + 128);
                const __m512i lo[4] = {_mm512_and_si512(v1, m4), _mm512_and_si512(v2, m4),
                                       _mm512_and_si512(_mm512_srli_epi32(v1, 4), m4),
                                       _mm512_and_si512(_mm512_srli_epi32(v2, 4), m4)};
                const __m512i hi[4] = {_mm512_slli_epi32(qh, 4), _mm512_slli_epi32(qh, 2), qh,
                                       _mm512_srli_epi32(qh, 2)};
                for (int s = 0; s < 4; s++)
                    _mm512_store_si512(p->q[64 * slot + 32 * h + 8 * s + c],
                                       _mm512_ternarylogic_epi32(lo[s], hi[s], m30, 0xF8));
            }
        __m512i sc[16];
        for (int j = 0; j < 16; j++) {
            sc[j] = _mm512_srai_epi32(_mm512_slli_epi32(_mm512_loadu_si512(g + R16_Q6_SC + 64 * (j / 4)), 24 - 8 * (j % 4)),
                                      24);
            _mm512_store_si512(p->sc[16 * slot + j], sc[j]);
        }
        for (int w = 0; w < 8; w++)
            _mm512_store_si512(p->mp[slot][w], _mm512_or_si512(_mm512_and_si512(sc[2 * w], _mm512_set1_epi32(0xFFFF)),
                                                                _mm512_slli_epi32(sc[2 * w + 1], 16)));
        _mm512_store_ps(p->d[slot], _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g)));
        _mm512_store_ps(p->dmin[slot], _mm512_setzero_ps());
    }
}

/* A group of 16 rows of an R16 matrix into a panel. */
static bool pack_r16(const uint8_t *g, int64_t k, cf_type t, panel *p)
{
    if (t == CF_TYPE_Q4_K)
        pack_panel_r16_k4(g, k, p);
    else if (t == CF_TYPE_Q6_K)
        pack_panel_r16_q6(g, k, p);
    else
        pack_panel_r16(g, k, t, p);
    return true;
}

/* 4 bytes at p in every lane: kernel_q8_K's operand, where dp_bcast
 * (layout512.h) measured 2-4 % slower than this */
static inline __m512i bcast32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

/* The canonical tree over the 16 residue accumulators of each lane. */
static inline __m512 canon_tree(__m512 part[16])
{
    for (int j = 0; j < 8; j++)
        part[j] = _mm512_add_ps(part[j], part[j + 8]);
    for (int j = 0; j < 4; j++)
        part[j] = _mm512_add_ps(part[j], part[j + 4]);
    for (int j = 0; j < 2; j++)
        part[j] = _mm512_add_ps(part[j], part[j + 2]);
    return _mm512_add_ps(part[0], part[1]);
}

/* Q8_0 / Q8_1 activations: the nc columns of a group (xg, regrouped as
 * tl_xq says) against the panel; block b goes to accumulator b % 16
 * (visited residue by residue). */
static inline __attribute__((always_inline)) void kernel_q8_0(const panel *p, const uint8_t *xg,
                                                              const side *sd, int nb, enum act act, int nc,
                                                              __m512 *out)
{
    const int per_res = (nb + 15) / 16;
    __m512 part[NC][16];
    for (int j = 0; j < 16; j++) {
        __m512 acc[NC];
        for (int c = 0; c < nc; c++)
            acc[c] = _mm512_setzero_ps();
        for (int b = j, slot = j * per_res; b < nb; b += 16, slot++) {
            __m512i P[NC];
            for (int c = 0; c < nc; c++)
                P[c] = act == ACT_Q8_0 ? _mm512_set1_epi32(sd[slot * NC + c].corr) : _mm512_setzero_si512();
            for (int t = 0; t < 8; t++) {
                __m512i W = _mm512_load_si512(p->q[8 * slot + t]);
                for (int c = 0; c < nc; c++)
                    P[c] = dp_bcast(P[c], W, xg + ((size_t)slot * NC + c) * 32 + 4 * t);
            }
            __m512 S = _mm512_load_ps(p->s[slot]);
            for (int c = 0; c < nc; c++) {
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(P[c]), _mm512_mul_ps(S, _mm512_set1_ps(sd[slot * NC + c].dx)),
                                         acc[c]);
                if (act == ACT_Q8_1) {
                    float sx;
                    memcpy(&sx, &sd[slot * NC + c].corr, 4);
                    acc[c] = _mm512_fmadd_ps(_mm512_load_ps(p->m[slot]), _mm512_set1_ps(sx), acc[c]);
                }
            }
        }
        for (int c = 0; c < nc; c++)
            part[c][j] = acc[c];
    }
    for (int c = 0; c < nc; c++)
        out[c] = canon_tree(part[c]);
}

/* Q8_K activations: super-block sb goes to accumulator sb % 16. */
static inline __attribute__((always_inline)) void kernel_q8_K(const panel *p, const char *const *xs, int nsb,
                                                              int group, int offset, int mins, float unit, int nc,
                                                              __m512 *out)
{
    const int steps = group / 4, ng = 256 / group, per_res = (nsb + 15) / 16;
    __m512 part[NC][16];
    for (int j = 0; j < 16; j++) {
        __m512 acc[NC];
        for (int c = 0; c < nc; c++)
            acc[c] = _mm512_setzero_ps();
        for (int sb = j, slot = j * per_res; sb < nsb; sb += 16, slot++) {
            __m512i I[NC], P[NC];
            for (int c = 0; c < nc; c++)
                I[c] = _mm512_setzero_si512();
            for (int g = 0; g < ng; g++) {
                for (int c = 0; c < nc; c++)
                    P[c] = _mm512_setzero_si512();
                for (int t = 0; t < steps; t++) {
                    __m512i W = _mm512_load_si512(p->q[64 * slot + steps * g + t]);
                    for (int c = 0; c < nc; c++)
                        P[c] = _mm512_dpbusd_epi32(P[c], W,
                                                   bcast32(xs[c] + sb * sizeof(block_q8_K) + 4 + group * g + 4 * t));
                }
                __m512i SC = _mm512_load_si512(p->sc[ng * slot + g]);
                for (int c = 0; c < nc; c++)
                    I[c] = _mm512_add_epi32(I[c], _mm512_mullo_epi32(P[c], SC));
            }
            /* mins (or scales, for the offsets) times the bsums pairs */
            for (int c = 0; c < nc; c++)
                P[c] = _mm512_setzero_si512();
            for (int pr = 0; pr < 8; pr++) {
                __m512i M = _mm512_load_si512(p->mp[slot][pr]);
                for (int c = 0; c < nc; c++)
                    P[c] = _mm512_dpwssd_epi32(P[c], M, bcast32(xs[c] + sb * sizeof(block_q8_K) + 260 + 4 * pr));
            }
            __m512 D = _mm512_load_ps(p->d[slot]), DM = _mm512_load_ps(p->dmin[slot]);
            for (int c = 0; c < nc; c++) {
                float dx;
                memcpy(&dx, xs[c] + sb * sizeof(block_q8_K), 4);
                __m512 vdx = _mm512_set1_ps(dx);
                if (!mins)
                    I[c] = _mm512_sub_epi32(I[c], _mm512_mullo_epi32(P[c], _mm512_set1_epi32(offset)));
                __m512 ddx = _mm512_mul_ps(D, vdx);
                if (unit)
                    ddx = _mm512_mul_ps(ddx, _mm512_set1_ps(unit));
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(I[c]), ddx, acc[c]);
                if (mins)
                    acc[c] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(P[c]), _mm512_mul_ps(DM, vdx), acc[c]);
            }
        }
        for (int c = 0; c < nc; c++)
            part[c][j] = acc[c];
    }
    for (int c = 0; c < nc; c++)
        out[c] = canon_tree(part[c]);
}

/* Columns [c, c + nc) into Y rows r.. (nr valid lanes). */
static void tile(const cf_matmul_args *a, const gemm_type *gt, const panel *p, int64_t r, int nr, int64_t c,
                 int nc, const uint8_t *xg, const side *sd)
{
    const char *xs[NC];
    for (int j = 0; j < nc; j++)
        xs[j] = (const char *)a->x + (c + j) * a->x_stride;
    __m512 out[NC];
    int nb = (int)(a->k / 32), nsb = (int)(a->k / 256);
#define KERNEL(n)                                                                                  \
    case n:                                                                                        \
        if (gt->act == ACT_Q8_0)                                                                   \
            kernel_q8_0(p, xg, sd, nb, ACT_Q8_0, n, out);                                          \
        else if (gt->act == ACT_Q8_1)                                                              \
            kernel_q8_0(p, xg, sd, nb, ACT_Q8_1, n, out);                                          \
        else if (gt->group == 32 && gt->mins)                                                      \
            kernel_q8_K(p, xs, nsb, 32, 0, 1, gt->unit, n, out);                                   \
        else if (gt->group == 32)                                                                  \
            kernel_q8_K(p, xs, nsb, 32, gt->offset, 0, gt->unit, n, out);                          \
        else if (gt->mins)                                                                         \
            kernel_q8_K(p, xs, nsb, 16, 0, 1, gt->unit, n, out);                                   \
        else                                                                                       \
            kernel_q8_K(p, xs, nsb, 16, gt->offset, 0, gt->unit, n, out);                          \
        break;
    switch (nc) {
        KERNEL(1) KERNEL(2) KERNEL(3) KERNEL(4) KERNEL(5) KERNEL(6) KERNEL(7) KERNEL(8)
    }
#undef KERNEL
    __mmask16 mask = (__mmask16)((1u << nr) - 1);
    for (int j = 0; j < nc; j++)
        _mm512_mask_storeu_ps(a->y + (c + j) * a->y_stride + r, mask,
                              gt->post ? _mm512_mul_ps(out[j], _mm512_set1_ps(gt->post)) : out[j]);
}

/* ---- F32 / F16 / BF16: 4x4 tiles of the canonical dot ------------------ */

static inline float canon16_sum(__m512 a)
{
    __m256 r8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_movehdup_ps(r2)));
}

/* Rows w[0..nr) times columns x[0..nc) (f32, k long), element i into
 * lane i % 16 of each pair's accumulator; y[j * ys + i] = the sums. */
static inline __attribute__((always_inline)) void ftile(const float *const *w, const float *const *x, int64_t k,
                                                        int nr, int nc, float *y, size_t ys)
{
    __m512 acc[FR][FC];
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++)
            acc[i][j] = _mm512_setzero_ps();
    for (int64_t e = 0; e < k; e += 16) {
        __mmask16 m = k - e >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - e)) - 1);
        __m512 W[FR], X[FC];
        for (int i = 0; i < nr; i++)
            W[i] = _mm512_maskz_loadu_ps(m, w[i] + e);
        for (int j = 0; j < nc; j++)
            X[j] = _mm512_maskz_loadu_ps(m, x[j] + e);
        for (int i = 0; i < nr; i++)
            for (int j = 0; j < nc; j++)
                acc[i][j] = _mm512_mask3_fmadd_ps(W[i], X[j], acc[i][j], m);
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++)
            y[j * ys + i] = canon16_sum(acc[i][j]);
}

static void ftile_any(const float *const *w, const float *const *x, int64_t k, int nr, int nc, float *y, size_t ys)
{
    if (nr == FR && nc == FC)
        ftile(w, x, k, FR, FC, y, ys);
    else
        ftile(w, x, k, nr, nc, y, ys);
}

static void gemm(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    static const gemm_isa isa = {transpose16, tile, ftile_any, pack_r16};
    cf_gemm_run(a, r0, r1, &isa);
}

void cf_fill_gemm_avx512(cf_kernel_table *t)
{
    for (size_t i = 0; i < cf_gemm_n_types; i++)
        t->gemm[cf_gemm_types[i]] = gemm;
    /* Up to 4 columns (a speculative check of 3 guesses) cost less row by
     * row where the level has a prepared GEMV (bench_kernels --small-n,
     * docs/performance.md); Q6_K's tiles were cheaper from 3 */
    static const cf_type rows[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q5_0, CF_TYPE_Q4_1, CF_TYPE_Q5_1,
                                   CF_TYPE_Q4_K, CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_IQ4_XS};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        t->small_n[rows[i]] = 4;
    t->small_n[CF_TYPE_Q6_K] = 0; /* not the AVX2 level's, which it inherits */
}
CF_TARGET_END
#else
void cf_fill_gemm_avx512(cf_kernel_table *t) { (void)t; }
#endif
