/* Tiled GEMM for N > 1 (batched prefill), AVX-512 VNNI.
 *
 * A panel of 16 weight rows x a chunk of K is unpacked once into unsigned
 * 8-bit quants interleaved so that one 512-bit vector holds 4 consecutive
 * k of all 16 rows (lane = row), plus float scales per group and row.  The
 * micro-kernel then streams NC activation columns against it: each
 * vpdpbusd multiplies the 16 rows by 4 activation bytes broadcast straight
 * from the Q8 block, so a loaded weight vector serves NC columns and the
 * integer sums need no horizontal reduction.  Offsets of the unsigned
 * quants (the -8 of Q4_0, the mins of the K-quants) are applied with the
 * activation block sums: precomputed here for Q8_0, the stored s of Q8_1,
 * and Q8_K's bsums through vpdpwssd.
 *
 * Every output element is one lane's fixed sequence of operations, so the
 * result does not depend on the thread split or on N. */
#include "internal.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include <immintrin.h>

#include "blocks.h"

#define GR 16      /* rows per panel = lanes */
#define KC 4096    /* K chunk (a multiple of 256) */
#define NCH 128    /* activation columns per side-info chunk */
#define NC 6       /* columns per micro-kernel call */

enum act { ACT_Q8_0, ACT_Q8_1, ACT_Q8_K };

typedef struct {
    uint8_t q[KC / 4][64];           /* k-step t, lane r: row r's quants 4t..4t+3 */
    float s[KC / 16][GR];            /* scale of group g for each row */
    float m[KC / 32][GR];            /* Q4_1/Q5_1: the block min */
    int16_t mp[KC / 256][8][GR][2];  /* K-quants: int16 pairs against bsums pairs */
    float mc[KC / 256][GR];          /* K-quants: coefficient of that integer sum */
} panel;

/* Per row, what unpacking a chunk of it yields (then interleaved). */
typedef struct {
    uint8_t q[KC];
    float s[KC / 16];
    float m[KC / 32];
    int16_t mp[KC / 256][16];
    float mc[KC / 256];
} rowbuf;

typedef struct {
    float dx;
    int32_t corr; /* Q8_0: -offset * sum q;  Q8_1: bits of the float s */
} side;

static _Thread_local panel tl_panel;
static _Thread_local rowbuf tl_row;
static _Thread_local side tl_side[NCH][KC / 32];

/* ---- unpacking one row's chunk [k0, k0 + kc) --------------------------- */

static inline float f16(uint16_t h) { return _cvtsh_ss(h); }

static void unpack_q8_0(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q8_0 *b = (const block_q8_0 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)b[i].qs);
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80)));
        o->s[i] = f16(b[i].d);
    }
}

static inline __m256i nib32(const uint8_t *p)
{
    __m128i b = _mm_loadu_si128((const __m128i *)p);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0xF));
}

static void unpack_q4_0(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q4_0 *b = (const block_q4_0 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), nib32(b[i].qs));
        o->s[i] = f16(b[i].d);
    }
}

static inline __m256i fifth_bits(const uint8_t *p)
{
    uint32_t bits;
    memcpy(&bits, p, 4);
    __m256i m = _mm256_movm_epi8(bits);
    return _mm256_and_si256(m, _mm256_set1_epi8(0x10));
}

static void unpack_q5_0(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q5_0 *b = (const block_q5_0 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        __m256i q = _mm256_or_si256(nib32(b[i].qs), fifth_bits(b[i].qh));
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), q);
        o->s[i] = f16(b[i].d);
    }
}

static void unpack_q4_1(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q4_1 *b = (const block_q4_1 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), nib32(b[i].qs));
        o->s[i] = f16(b[i].d);
        o->m[i] = f16(b[i].m);
    }
}

static void unpack_q5_1(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q5_1 *b = (const block_q5_1 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        __m256i q = _mm256_or_si256(nib32(b[i].qs), fifth_bits(b[i].qh));
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), q);
        o->s[i] = f16(b[i].d);
        o->m[i] = f16(b[i].m);
    }
}

static void unpack_q4_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q4_K *b = (const block_q4_K *)row + k0 / 256;
    const __m256i m15 = _mm256_set1_epi8(0xF);
    for (int i = 0; i < kc / 256; i++) {
        float d = f16(b[i].d), dmin = f16(b[i].dmin);
        for (int h = 0; h < 4; h++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(b[i].qs + 32 * h));
            uint8_t *q = o->q + 256 * i + 64 * h;
            _mm256_storeu_si256((__m256i *)q, _mm256_and_si256(v, m15));
            _mm256_storeu_si256((__m256i *)(q + 32), _mm256_and_si256(_mm256_srli_epi16(v, 4), m15));
        }
        for (int g = 0; g < 8; g++) {
            int sc, m;
            k4_scale_min(g, b[i].scales, &sc, &m);
            o->s[8 * i + g] = d * sc;
            o->mp[i][2 * g] = o->mp[i][2 * g + 1] = (int16_t)m;
        }
        o->mc[i] = -dmin;
    }
}

static void unpack_q5_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q5_K *b = (const block_q5_K *)row + k0 / 256;
    for (int i = 0; i < kc / 256; i++) {
        float d = f16(b[i].d), dmin = f16(b[i].dmin);
        for (int g = 0; g < 8; g++) {
            const uint8_t *qs = b[i].qs + 32 * (g / 2);
            for (int l = 0; l < 32; l++)
                o->q[256 * i + 32 * g + l] =
                    (uint8_t)((g & 1 ? qs[l] >> 4 : qs[l] & 0xF) | (((b[i].qh[l] >> g) & 1) << 4));
            int sc, m;
            k4_scale_min(g, b[i].scales, &sc, &m);
            o->s[8 * i + g] = d * sc;
            o->mp[i][2 * g] = o->mp[i][2 * g + 1] = (int16_t)m;
        }
        o->mc[i] = -dmin;
    }
}

static void unpack_q6_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q6_K *b = (const block_q6_K *)row + k0 / 256;
    const __m256i m15 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int i = 0; i < kc / 256; i++) {
        float d = f16(b[i].d);
        for (int h = 0; h < 2; h++) {
            __m256i la = _mm256_loadu_si256((const __m256i *)(b[i].ql + 64 * h));
            __m256i lb = _mm256_loadu_si256((const __m256i *)(b[i].ql + 64 * h + 32));
            __m256i qh = _mm256_loadu_si256((const __m256i *)(b[i].qh + 32 * h));
            for (int s = 0; s < 4; s++) {
                __m256i lo = s & 1 ? lb : la;
                lo = _mm256_and_si256(s & 2 ? _mm256_srli_epi16(lo, 4) : lo, m15);
                __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * s), m3);
                _mm256_storeu_si256((__m256i *)(o->q + 256 * i + 128 * h + 32 * s),
                                    _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)));
            }
        }
        for (int g = 0; g < 16; g++) {
            o->s[16 * i + g] = d * b[i].scales[g];
            o->mp[i][g] = b[i].scales[g];
        }
        o->mc[i] = -32 * d;
    }
}

static void unpack_q2_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q2_K *b = (const block_q2_K *)row + k0 / 256;
    for (int i = 0; i < kc / 256; i++) {
        float d = f16(b[i].d), dmin = f16(b[i].dmin);
        for (int e = 0; e < 256; e++)
            o->q[256 * i + e] = (uint8_t)((b[i].qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3);
        for (int g = 0; g < 16; g++) {
            o->s[16 * i + g] = d * (b[i].scales[g] & 0xF);
            o->mp[i][g] = (int16_t)(b[i].scales[g] >> 4);
        }
        o->mc[i] = -dmin;
    }
}

static void unpack_q3_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q3_K *b = (const block_q3_K *)row + k0 / 256;
    for (int i = 0; i < kc / 256; i++) {
        float d = f16(b[i].d);
        for (int e = 0; e < 256; e++) {
            int q = (b[i].qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
            q |= ((b[i].hmask[e % 32] >> (e / 32)) & 1) << 2; /* 0..7, value q - 4 */
            o->q[256 * i + e] = (uint8_t)q;
        }
        for (int g = 0; g < 16; g++) {
            int sc = k3_scale(g, b[i].scales);
            o->s[16 * i + g] = d * sc;
            o->mp[i][g] = (int16_t)sc;
        }
        o->mc[i] = -4 * d;
    }
}

typedef void (*unpack_fn)(const void *row, int64_t k0, int kc, rowbuf *o);

typedef struct {
    unpack_fn unpack;
    enum act act;
    int group;  /* elements per scale: 32 or 16 */
    int offset; /* Q8_0 activations: the unsigned quants' bias */
} gemm_type;

static const gemm_type *gemm_type_of(cf_type t)
{
    static const gemm_type q8_0 = {unpack_q8_0, ACT_Q8_0, 32, 128};
    static const gemm_type q4_0 = {unpack_q4_0, ACT_Q8_0, 32, 8};
    static const gemm_type q5_0 = {unpack_q5_0, ACT_Q8_0, 32, 16};
    static const gemm_type q4_1 = {unpack_q4_1, ACT_Q8_1, 32, 0};
    static const gemm_type q5_1 = {unpack_q5_1, ACT_Q8_1, 32, 0};
    static const gemm_type q2_K = {unpack_q2_K, ACT_Q8_K, 16, 0};
    static const gemm_type q3_K = {unpack_q3_K, ACT_Q8_K, 16, 0};
    static const gemm_type q4_K = {unpack_q4_K, ACT_Q8_K, 32, 0};
    static const gemm_type q5_K = {unpack_q5_K, ACT_Q8_K, 32, 0};
    static const gemm_type q6_K = {unpack_q6_K, ACT_Q8_K, 16, 0};
    switch (t) {
    case CF_TYPE_Q8_0: return &q8_0;
    case CF_TYPE_Q4_0: return &q4_0;
    case CF_TYPE_Q5_0: return &q5_0;
    case CF_TYPE_Q4_1: return &q4_1;
    case CF_TYPE_Q5_1: return &q5_1;
    case CF_TYPE_Q2_K: return &q2_K;
    case CF_TYPE_Q3_K: return &q3_K;
    case CF_TYPE_Q4_K: return &q4_K;
    case CF_TYPE_Q5_K: return &q5_K;
    case CF_TYPE_Q6_K: return &q6_K;
    default: return NULL;
    }
}

/* Unpack rows [r, r + nr) (nr <= 16; missing rows are zero) of chunk k0. */
static void pack_panel(const cf_matmul_args *a, const gemm_type *gt, int64_t r, int nr, int64_t k0,
                       int kc, panel *p)
{
    int ng = kc / gt->group, nsb = kc / 256;
    for (int lane = 0; lane < GR; lane++) {
        rowbuf *o = &tl_row;
        if (lane < nr) {
            gt->unpack((const char *)a->w + (r + lane) * a->w_stride, k0, kc, o);
        } else {
            memset(o->q, 0, (size_t)kc);
            memset(o->s, 0, sizeof o->s);
            memset(o->m, 0, sizeof o->m);
            memset(o->mp, 0, sizeof o->mp);
            memset(o->mc, 0, sizeof o->mc);
        }
        const uint32_t *src = (const uint32_t *)(const void *)o->q;
        for (int t = 0; t < kc / 4; t++)
            memcpy(&p->q[t][4 * lane], &src[t], 4);
        for (int g = 0; g < ng; g++)
            p->s[g][lane] = o->s[g];
        if (gt->act == ACT_Q8_1)
            for (int g = 0; g < kc / 32; g++)
                p->m[g][lane] = o->m[g];
        if (gt->act == ACT_Q8_K)
            for (int sb = 0; sb < nsb; sb++) {
                for (int pr = 0; pr < 8; pr++) {
                    p->mp[sb][pr][lane][0] = o->mp[sb][2 * pr];
                    p->mp[sb][pr][lane][1] = o->mp[sb][2 * pr + 1];
                }
                p->mc[sb][lane] = o->mc[sb];
            }
    }
}

/* Side information of activation columns c0.. (Q8_0 / Q8_1) for chunk k0. */
static void prep_side(const cf_matmul_args *a, const gemm_type *gt, int64_t c0, int nc, int64_t k0,
                      int kc)
{
    for (int c = 0; c < nc; c++) {
        const char *xr = (const char *)a->x + (c0 + c) * a->x_stride;
        for (int b = 0; b < kc / 32; b++) {
            side *sd = &tl_side[c][b];
            if (gt->act == ACT_Q8_0) {
                const block_q8_0 *xb = (const block_q8_0 *)(const void *)xr + k0 / 32 + b;
                __m256i v = _mm256_loadu_si256((const __m256i *)xb->qs);
                __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), v);
                __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
                h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
                h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
                sd->dx = f16(xb->d);
                sd->corr = -gt->offset * _mm_cvtsi128_si32(h);
            } else {
                const block_q8_1 *xb = (const block_q8_1 *)(const void *)xr + k0 / 32 + b;
                float s = f16(xb->s);
                sd->dx = f16(xb->d);
                memcpy(&sd->corr, &s, 4);
            }
        }
    }
}

static inline __m512i bcast32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

/* Q8_0 / Q8_1 activations: columns xs[0..nc) against the panel. */
static inline __attribute__((always_inline)) void kernel_q8_0(const panel *p, const char *const *xs,
                                                              const side (*sd)[KC / 32], int nb,
                                                              enum act act, int nc, __m512 *acc)
{
    for (int c = 0; c < nc; c++)
        acc[c] = _mm512_setzero_ps();
    for (int b = 0; b < nb; b++) {
        __m512i P[NC];
        for (int c = 0; c < nc; c++)
            P[c] = act == ACT_Q8_0 ? _mm512_set1_epi32(sd[c][b].corr) : _mm512_setzero_si512();
        const size_t bs = act == ACT_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q8_1);
        const size_t qo = act == ACT_Q8_0 ? 2 : 4;
        for (int t = 0; t < 8; t++) {
            __m512i W = _mm512_load_si512(p->q[8 * b + t]);
            for (int c = 0; c < nc; c++)
                P[c] = _mm512_dpbusd_epi32(P[c], W, bcast32(xs[c] + b * bs + qo + 4 * t));
        }
        __m512 S = _mm512_load_ps(p->s[b]);
        for (int c = 0; c < nc; c++) {
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(P[c]), _mm512_mul_ps(S, _mm512_set1_ps(sd[c][b].dx)),
                                     acc[c]);
            if (act == ACT_Q8_1) {
                float sx;
                memcpy(&sx, &sd[c][b].corr, 4);
                acc[c] = _mm512_fmadd_ps(_mm512_load_ps(p->m[b]), _mm512_set1_ps(sx), acc[c]);
            }
        }
    }
}

/* Q8_K activations: super-blocks of 256, groups of 16 or 32. */
static inline __attribute__((always_inline)) void kernel_q8_K(const panel *p, const char *const *xs, int nsb,
                                                              int group, int nc, __m512 *acc)
{
    for (int c = 0; c < nc; c++)
        acc[c] = _mm512_setzero_ps();
    const int steps = group / 4, ng = 256 / group;
    for (int sb = 0; sb < nsb; sb++) {
        __m512 A[NC];
        __m512i P[NC];
        for (int c = 0; c < nc; c++)
            A[c] = _mm512_setzero_ps();
        for (int g = 0; g < ng; g++) {
            for (int c = 0; c < nc; c++)
                P[c] = _mm512_setzero_si512();
            for (int t = 0; t < steps; t++) {
                __m512i W = _mm512_load_si512(p->q[64 * sb + steps * g + t]);
                for (int c = 0; c < nc; c++)
                    P[c] = _mm512_dpbusd_epi32(P[c], W,
                                               bcast32(xs[c] + sb * sizeof(block_q8_K) + 4 + group * g + 4 * t));
            }
            __m512 S = _mm512_load_ps(p->s[ng * sb + g]);
            for (int c = 0; c < nc; c++)
                A[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(P[c]), S, A[c]);
        }
        for (int c = 0; c < nc; c++)
            P[c] = _mm512_setzero_si512();
        for (int pr = 0; pr < 8; pr++) {
            __m512i M = _mm512_load_si512(p->mp[sb][pr]);
            for (int c = 0; c < nc; c++)
                P[c] = _mm512_dpwssd_epi32(P[c], M, bcast32(xs[c] + sb * sizeof(block_q8_K) + 260 + 4 * pr));
        }
        __m512 MC = _mm512_load_ps(p->mc[sb]);
        for (int c = 0; c < nc; c++) {
            float dx;
            memcpy(&dx, xs[c] + sb * sizeof(block_q8_K), 4);
            A[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(P[c]), MC, A[c]);
            acc[c] = _mm512_fmadd_ps(A[c], _mm512_set1_ps(dx), acc[c]);
        }
    }
}

/* Columns [c, c + nc) of the chunk into Y rows r.. (nr valid lanes). */
static void tile(const cf_matmul_args *a, const gemm_type *gt, const panel *p, int64_t r, int nr,
                 int64_t c, int nc, int64_t cside, int64_t k0, int kc, int first)
{
    const char *xs[NC];
    cf_type xt = cf_vec_dot_type(a->wtype);
    for (int j = 0; j < nc; j++)
        xs[j] = (const char *)a->x + (c + j) * a->x_stride + cf_row_bytes(xt, k0);
    __m512 acc[NC];
    const side (*sd)[KC / 32] = (const side (*)[KC / 32])tl_side[c - cside];
#define KERNEL(n)                                                                                  \
    case n:                                                                                        \
        if (gt->act == ACT_Q8_0)                                                                   \
            kernel_q8_0(p, xs, sd, kc / 32, ACT_Q8_0, n, acc);                                     \
        else if (gt->act == ACT_Q8_1)                                                              \
            kernel_q8_0(p, xs, sd, kc / 32, ACT_Q8_1, n, acc);                                     \
        else if (gt->group == 32)                                                                  \
            kernel_q8_K(p, xs, kc / 256, 32, n, acc);                                              \
        else                                                                                       \
            kernel_q8_K(p, xs, kc / 256, 16, n, acc);                                              \
        break;
    switch (nc) {
        KERNEL(1) KERNEL(2) KERNEL(3) KERNEL(4) KERNEL(5) KERNEL(6)
    }
#undef KERNEL
    __mmask16 mask = (__mmask16)((1u << nr) - 1);
    for (int j = 0; j < nc; j++) {
        float *y = a->y + (c + j) * a->y_stride + r;
        __m512 v = first ? acc[j] : _mm512_add_ps(acc[j], _mm512_maskz_loadu_ps(mask, y));
        _mm512_mask_storeu_ps(y, mask, v);
    }
}

static void gemm(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    const gemm_type *gt = gemm_type_of(a->wtype);
    panel *p = &tl_panel;
    for (int64_t k0 = 0; k0 < a->k; k0 += KC) {
        int kc = a->k - k0 < KC ? (int)(a->k - k0) : KC;
        for (int64_t c0 = 0; c0 < a->n; c0 += NCH) {
            int nch = a->n - c0 < NCH ? (int)(a->n - c0) : NCH;
            if (gt->act != ACT_Q8_K)
                prep_side(a, gt, c0, nch, k0, kc);
            for (int64_t r = r0; r < r1; r += GR) {
                int nr = r1 - r < GR ? (int)(r1 - r) : GR;
                pack_panel(a, gt, r, nr, k0, kc, p);
                for (int64_t c = c0; c < c0 + nch; c += NC) {
                    int nc = c0 + nch - c < NC ? (int)(c0 + nch - c) : NC;
                    tile(a, gt, p, r, nr, c, nc, c0, k0, kc, k0 == 0);
                }
            }
        }
    }
}

void cf_fill_gemm_avx512(cf_kernel_table *t)
{
    static const cf_type types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q5_0, CF_TYPE_Q4_1, CF_TYPE_Q5_1,
                                    CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        t->gemm[types[i]] = gemm;
}
#else
void cf_fill_gemm_avx512(cf_kernel_table *t) { (void)t; }
#endif
