/* Tiled GEMM for N >= 3 (batched prefill), AVX-512 VNNI.
 *
 * Quantized weights: a panel of 16 weight rows (the whole K) is unpacked
 * once into unsigned 8-bit quants interleaved so that one 512-bit vector
 * holds 4 consecutive k of all 16 rows (lane = row), plus per-row scales.
 * The micro-kernel streams 8 activation columns against it: each vpdpbusd
 * multiplies the 16 rows by 4 activation bytes broadcast from the Q8 block,
 * so a loaded weight vector serves 8 columns and the integer sums need no
 * horizontal reduction.  The unsigned quants' offsets (the -8 of Q4_0, the
 * -32 of Q6_K, the K-quants' mins) are applied through the activation block
 * sums: precomputed here for Q8_0, Q8_1's stored s, Q8_K's bsums.  The
 * Q8_0 and Q8_1 activations' quants are regrouped once per batch, so that
 * a tile reads them in the order it uses them.  A Q8_0, Q4_0, IQ4_NL,
 * Q5_0, Q4_K or Q6_K matrix repacked at load (CF_LAYOUT_R16) is
 * interleaved so already: its panels only take the nibbles apart (and add
 * Q5_0's fifth bits or Q6_K's high bits, unpack the K-quants' scales;
 * Q8_0's are copied).
 *
 * The float part follows the canonical order of internal.h exactly (units
 * visited by residue mod 16, one accumulator per residue, the same final
 * tree), so every output equals cf_vec_dot's bits: the result depends
 * neither on N nor on the thread split.  K above KMAX falls back to the
 * dot products, which give the same bits.
 *
 * F32/F16/BF16 weights: 4x4 register tiles of the canonical dot itself,
 * on rows widened to f32 once per tile. */
#include <pthread.h>
#include <stdlib.h>

#include "confab/target.h"
#include "internal.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include <immintrin.h>

#include "blocks.h"
#include "layout512.h"

#define GR 16      /* rows per panel = lanes */
#define KMAX CF_GEMM_MAX_K /* longest K a panel holds (a multiple of 256) */
#define KCP 1024   /* K chunk of the unpacking */
#define NSIDE 131072 /* side-info entries: activation columns x blocks (a multiple of 16)
                      * per chunk (all 512 columns of a batch for K up to 8192) */
#define NC 8       /* columns per micro-kernel call */

enum act { ACT_Q8_0, ACT_Q8_1, ACT_Q8_K };

typedef struct {
    _Alignas(64) uint8_t q[KMAX / 4][64]; /* k-step t, lane r: row r's quants 4t..4t+3 */
    float s[KMAX / 32][GR];           /* 32-element types: d of each block */
    float m[KMAX / 32][GR];           /* Q4_1/Q5_1: the block min */
    int32_t sc[KMAX / 16][GR];        /* K-quants: integer scale of each group */
    float d[KMAX / 256][GR];          /* K-quants: super-block d and dmin */
    float dmin[KMAX / 256][GR];
    int16_t mp[KMAX / 256][8][GR][2]; /* K-quants: int16 pairs against bsums pairs */
} panel;

/* One row's chunk, unpacked (then interleaved); every field a whole number
 * of 32-bit words so that rows can be transposed as such. */
typedef struct {
    uint8_t q[KCP];
    float s[KCP / 32];
    float m[KCP / 32];
    int32_t sc[KCP / 16];
    float d[KCP / 256];
    float dmin[KCP / 256];
    int16_t mp[KCP / 256][16];
} rowbuf;
_Static_assert(sizeof(rowbuf) % 4 == 0, "rowbuf words");

typedef struct {
    float dx;
    int32_t corr; /* Q8_0: -offset * sum q;  Q8_1: bits of the float s */
} side;

/* The float GEMM's widened rows share the panel's memory. */
#define FR 4
#define FC 4
#define FBUF (sizeof(panel) / sizeof(float))

typedef union {
    panel q;
    float f[FBUF];
} panel_mem;

/* Thread-locals of the initial-exec model: an offset from %fs.  In the
 * position-independent objects of the library, the default model reaches
 * them through a call to __tls_get_addr, and although the link turns that
 * into a load, the compiler has already treated it as a call: each use in
 * a loop cost a vzeroupper and the spilling of every live vector. */
#define TLS static _Thread_local __attribute__((tls_model("initial-exec")))

TLS panel_mem tl_mem;
TLS rowbuf tl_rows[GR];
TLS side tl_side[NSIDE];

/* Entries of tl_side for a group of NC columns of nb blocks: kept as the
 * group's quants are (tl_xq), slot by slot in the panel's residue order
 * with the group's columns side by side, so that a tile reads a block's
 * side information from one cache line (read column by column, nb
 * entries apart, it cost the GEMM 3-4 %). */
static size_t side_group(int64_t nb)
{
    return (size_t)((nb + 15) / 16 * 16) * NC;
}

static inline float f16(uint16_t h) { return _cvtsh_ss(h); }

/* ---- unpacking a row's chunk [k0, k0 + kc) ----------------------------- */

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

static inline __m256i fifth_bits(const uint8_t *p)
{
    uint32_t bits;
    memcpy(&bits, p, 4);
    return _mm256_and_si256(_mm256_movm_epi8(bits), _mm256_set1_epi8(0x10));
}

static void unpack_q4_0(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q4_0 *b = (const block_q4_0 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), nib32(b[i].qs));
        o->s[i] = f16(b[i].d);
    }
}

static void unpack_q5_0(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q5_0 *b = (const block_q5_0 *)row + k0 / 32;
    for (int i = 0; i < kc / 32; i++) {
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), _mm256_or_si256(nib32(b[i].qs), fifth_bits(b[i].qh)));
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
        _mm256_storeu_si256((__m256i *)(o->q + 32 * i), _mm256_or_si256(nib32(b[i].qs), fifth_bits(b[i].qh)));
        o->s[i] = f16(b[i].d);
        o->m[i] = f16(b[i].m);
    }
}

/* Q4_K, and Q5_K with its fifth bit (five): blocks of wsz bytes. */
static inline void unpack_k4(const uint8_t *b, size_t wsz, int five, int64_t k0, int kc, rowbuf *o)
{
    const __m256i m15 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
    b += k0 / 256 * wsz;
    for (int i = 0; i < kc / 256; i++, b += wsz) {
        const uint8_t *qs = b + (five ? 48 : 16);
        __m256i qh = five ? _mm256_loadu_si256((const __m256i *)(b + 16)) : _mm256_setzero_si256();
        for (int h = 0; h < 4; h++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * h));
            __m256i lo = _mm256_and_si256(v, m15), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m15);
            if (five) {
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * h), one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * h + 1), one), 4));
            }
            _mm256_storeu_si256((__m256i *)(o->q + 256 * i + 64 * h), lo);
            _mm256_storeu_si256((__m256i *)(o->q + 256 * i + 64 * h + 32), hi);
        }
        for (int g = 0; g < 8; g++) {
            int sc, m;
            k4_scale_min(g, b + 4, &sc, &m);
            o->sc[8 * i + g] = sc;
            o->mp[i][2 * g] = o->mp[i][2 * g + 1] = (int16_t)m;
        }
        uint16_t d, dmin;
        memcpy(&d, b, 2);
        memcpy(&dmin, b + 2, 2);
        o->d[i] = f16(d);
        o->dmin[i] = f16(dmin);
    }
}

static void unpack_q4_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    unpack_k4(row, sizeof(block_q4_K), 0, k0, kc, o);
}

static void unpack_q5_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    unpack_k4(row, sizeof(block_q5_K), 1, k0, kc, o);
}

static void unpack_q6_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q6_K *b = (const block_q6_K *)row + k0 / 256;
    const __m256i m15 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int i = 0; i < kc / 256; i++) {
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
            o->sc[16 * i + g] = b[i].scales[g];
            o->mp[i][g] = b[i].scales[g];
        }
        o->d[i] = f16(b[i].d);
        o->dmin[i] = 0;
    }
}

/* 256 2-bit quants as Q2_K/Q3_K pack them (element 128h + 32s + l at bits
 * 2s of qs[32h + l]), plus Q3_K's third bit (bit 4h + s of hmask[l]) */
static void unpack_2bit(const uint8_t *qs, const uint8_t *hmask, uint8_t *q)
{
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    __m256i hm = hmask ? _mm256_loadu_si256((const __m256i *)hmask) : _mm256_setzero_si256();
    for (int h = 0; h < 2; h++) {
        __m256i qb = _mm256_loadu_si256((const __m256i *)(qs + 32 * h));
        for (int sh = 0; sh < 4; sh++) {
            __m256i v = _mm256_and_si256(_mm256_srli_epi16(qb, 2 * sh), m3);
            if (hmask)
                v = _mm256_or_si256(v, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + sh), one), 2));
            _mm256_storeu_si256((__m256i *)(q + 128 * h + 32 * sh), v);
        }
    }
}

static void unpack_q2_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q2_K *b = (const block_q2_K *)row + k0 / 256;
    for (int i = 0; i < kc / 256; i++) {
        unpack_2bit(b[i].qs, NULL, o->q + 256 * i);
        for (int g = 0; g < 16; g++) {
            o->sc[16 * i + g] = b[i].scales[g] & 0xF;
            o->mp[i][g] = (int16_t)(b[i].scales[g] >> 4);
        }
        o->d[i] = f16(b[i].d);
        o->dmin[i] = f16(b[i].dmin);
    }
}

static void unpack_q3_K(const void *row, int64_t k0, int kc, rowbuf *o)
{
    const block_q3_K *b = (const block_q3_K *)row + k0 / 256;
    for (int i = 0; i < kc / 256; i++) {
        unpack_2bit(b[i].qs, b[i].hmask, o->q + 256 * i); /* 0..7, value q - 4 */
        for (int g = 0; g < 16; g++) {
            int sc = k3_scale(g, b[i].scales);
            o->sc[16 * i + g] = sc;
            o->mp[i][g] = (int16_t)sc;
        }
        o->d[i] = f16(b[i].d);
        o->dmin[i] = 0;
    }
}

#include "gemm_iq4.inc"

typedef void (*unpack_fn)(const void *row, int64_t k0, int kc, rowbuf *o);

typedef struct {
    unpack_fn unpack;
    enum act act;
    int group;  /* K-quants: elements per group scale, 32 or 16 */
    int offset; /* Q8_0 activations: the quants' bias; Q3_K/Q6_K: 4/32, IQ4_XS 128, TQ2_0 1 */
    int mins;   /* K-quants with dmin * mins */
} gemm_type;

static const gemm_type *gemm_type_of(cf_type t)
{
    static const gemm_type q8_0 = {unpack_q8_0, ACT_Q8_0, 32, 128, 0};
    static const gemm_type q4_0 = {unpack_q4_0, ACT_Q8_0, 32, 8, 0};
    static const gemm_type q5_0 = {unpack_q5_0, ACT_Q8_0, 32, 16, 0};
    static const gemm_type q4_1 = {unpack_q4_1, ACT_Q8_1, 32, 0, 0};
    static const gemm_type q5_1 = {unpack_q5_1, ACT_Q8_1, 32, 0, 0};
    static const gemm_type q2_K = {unpack_q2_K, ACT_Q8_K, 16, 0, 1};
    static const gemm_type q3_K = {unpack_q3_K, ACT_Q8_K, 16, 4, 0};
    static const gemm_type q4_K = {unpack_q4_K, ACT_Q8_K, 32, 0, 1};
    static const gemm_type q5_K = {unpack_q5_K, ACT_Q8_K, 32, 0, 1};
    static const gemm_type q6_K = {unpack_q6_K, ACT_Q8_K, 16, 32, 0};
    static const gemm_type iq4_nl = {unpack_iq4_nl, ACT_Q8_0, 32, 128, 0};
    static const gemm_type mxfp4 = {unpack_mxfp4, ACT_Q8_0, 32, 128, 0};
    static const gemm_type iq4_xs = {unpack_iq4_xs, ACT_Q8_K, 32, 128, 0};
    static const gemm_type tq2_0 = {unpack_tq2_0, ACT_Q8_K, 32, 1, 0};
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
    case CF_TYPE_IQ4_NL: return &iq4_nl;
    case CF_TYPE_MXFP4: return &mxfp4;
    case CF_TYPE_IQ4_XS: return &iq4_xs;
    case CF_TYPE_TQ2_0: return &tq2_0;
    default: return NULL;
    }
}

/* Where the kernels visit units in residue order (u % 16, then u / 16),
 * the panel stores them in that order too: unit u sits in slot
 * (u % 16) * per_res + u / 16, per_res = ceil(units / 16). */
typedef struct {
    int64_t base;  /* global index of the chunk's first row of 32-bit values */
    int per_unit;  /* rows of 32-bit values per unit */
    int per_res;
} slot_map;

static inline int64_t slot_row(const slot_map *sm, int64_t j)
{
    int64_t g = sm->base + j, u = g / sm->per_unit;
    return ((u % 16) * sm->per_res + u / 16) * sm->per_unit + g % sm->per_unit;
}

/* dst[slot_row(j)][lane] = src[lane][j] for 16 lanes of n 32-bit values
 * (src rows sstride apart, dst rows 16 apart): 16x16 register transposes. */
static void transpose_lanes(const uint32_t *src, size_t sstride, uint32_t *dst, int n, const slot_map *sm)
{
    int j0 = 0;
    for (; j0 + 16 <= n; j0 += 16) {
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
    for (; j0 < n; j0++)
        for (int i = 0; i < 16; i++)
            dst[16 * slot_row(sm, j0) + i] = src[i * sstride + j0];
}

#define TRANSPOSE(field, dstfield, n, first, per_unit, per_res)                                    \
    do {                                                                                           \
        slot_map sm_ = {(first), (per_unit), (per_res)};                                           \
        transpose_lanes((const uint32_t *)(const void *)o[0].field, sizeof(rowbuf) / 4,            \
                        (uint32_t *)(void *)(dstfield), (n), &sm_);                                \
    } while (0)

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

/* Unpack rows [r, r + nr) (nr <= 16; missing rows are zero), whole K, the
 * units in residue order. */
static void pack_panel(const cf_matmul_args *a, const gemm_type *gt, int64_t r, int nr, panel *p)
{
    if (a->w_layout == CF_LAYOUT_R16 && a->wtype == CF_TYPE_Q4_K) {
        pack_panel_r16_k4((const uint8_t *)a->w + r * a->w_stride, a->k, p);
        return;
    }
    if (a->w_layout == CF_LAYOUT_R16 && a->wtype == CF_TYPE_Q6_K) {
        pack_panel_r16_q6((const uint8_t *)a->w + r * a->w_stride, a->k, p);
        return;
    }
    if (a->w_layout == CF_LAYOUT_R16) {
        pack_panel_r16((const uint8_t *)a->w + r * a->w_stride, a->k, a->wtype, p);
        return;
    }
    rowbuf *o = tl_rows;
    const int kq = gt->act == ACT_Q8_K;                   /* units: super-blocks or blocks */
    const int usz = kq ? 256 : 32;
    const int per_res = (int)((a->k / usz + 15) / 16);
    for (int64_t k0 = 0; k0 < a->k; k0 += KCP) {
        int kc = a->k - k0 < KCP ? (int)(a->k - k0) : KCP;
        for (int lane = 0; lane < GR; lane++) {
            if (lane < nr)
                gt->unpack((const char *)a->w + (r + lane) * a->w_stride, k0, kc, &o[lane]);
            else
                memset(&o[lane], 0, sizeof o[lane]);
        }
        TRANSPOSE(q, p->q, kc / 4, k0 / 4, usz / 4, per_res);
        if (!kq) {
            TRANSPOSE(s, p->s, kc / 32, k0 / 32, 1, per_res);
            if (gt->act == ACT_Q8_1)
                TRANSPOSE(m, p->m, kc / 32, k0 / 32, 1, per_res);
        } else {
            int ng = 256 / gt->group;
            TRANSPOSE(sc, p->sc, kc / gt->group, k0 / gt->group, ng, per_res);
            TRANSPOSE(d, p->d, kc / 256, k0 / 256, 1, per_res);
            TRANSPOSE(dmin, p->dmin, kc / 256, k0 / 256, 1, per_res);
            TRANSPOSE(mp, p->mp, 8 * (kc / 256), 8 * (k0 / 256), 8, per_res);
        }
    }
}

/* What tl_side holds: columns [c0, c0 + nc) of the activations that
 * cf_matmul_args.x_serial names (serial 0: nothing). */
typedef struct {
    uint64_t serial;
    const void *x;
    size_t stride;
    int64_t k, c0, nc;
    enum act act;
    int offset;
} side_key;

TLS side_key tl_side_key;

/* The side's columns' quants, NC columns a group: slot s of a group (the
 * panel's residue order) holds its columns' 32 bytes of that block one
 * after another, so that a tile reads its activations as one stream (read
 * where they lay, eight columns a block apart, they cost Zen 4 about a
 * tenth of the GEMM's time).  One buffer a thread, on the heap so that a
 * thread that never multiplies a batch carries none, grown to the largest
 * batch it has seen and freed when the thread ends. */
TLS uint8_t *tl_xq;
TLS size_t tl_xq_bytes;
static pthread_key_t xq_key;
static bool xq_key_ok;
static pthread_once_t xq_once = PTHREAD_ONCE_INIT;

static void xq_key_make(void) { xq_key_ok = pthread_key_create(&xq_key, free) == 0; }

/* bytes of the quants of a group of NC columns of nb blocks */
static size_t xq_group_bytes(int64_t nb)
{
    return side_group(nb) * 32;
}

static uint8_t *xq_buffer(size_t bytes)
{
    if (bytes <= tl_xq_bytes)
        return tl_xq;
    pthread_once(&xq_once, xq_key_make);
    if (!xq_key_ok)
        return NULL; /* it could not be freed with the thread */
    uint8_t *b = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!b || pthread_setspecific(xq_key, b) != 0) {
        free(b);
        return NULL;
    }
    free(tl_xq);
    tl_xq = b;
    tl_xq_bytes = bytes;
    tl_side_key.serial = 0; /* what it held is gone */
    return b;
}

/* Side information of activation columns c0.. (Q8_0 / Q8_1), whole K. */
static void prep_side(const cf_matmul_args *a, const gemm_type *gt, int64_t c0, int64_t nc)
{
    const int64_t nb = a->k / 32, per_res = (nb + 15) / 16, qo = gt->act == ACT_Q8_0 ? 2 : 4;
    const size_t bs = gt->act == ACT_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q8_1);
    for (int64_t c = 0; c < nc; c++) {
        const char *xr = (const char *)a->x + (c0 + c) * a->x_stride;
        /* the column's group, in which block b is entry slot * NC + c % NC,
         * slot its place in the panel's residue order */
        uint8_t *xg = tl_xq + (size_t)(c / NC) * xq_group_bytes(nb);
        side *sg = tl_side + (size_t)(c / NC) * side_group(nb);
        for (int b = 0; b < nb; b++) {
            const size_t e = (size_t)((b % 16) * per_res + b / 16) * NC + (size_t)(c % NC);
            memcpy(xg + e * 32, xr + (size_t)b * bs + qo, 32);
            side *sd = &sg[e];
            if (gt->act == ACT_Q8_0) {
                const block_q8_0 *xb = (const block_q8_0 *)(const void *)xr + b;
                __m256i v = _mm256_loadu_si256((const __m256i *)xb->qs);
                __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), v);
                __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
                h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
                h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 1));
                sd->dx = f16(xb->d);
                sd->corr = -gt->offset * _mm_cvtsi128_si32(h);
            } else {
                const block_q8_1 *xb = (const block_q8_1 *)(const void *)xr + b;
                float s = f16(xb->s);
                sd->dx = f16(xb->d);
                memcpy(&sd->corr, &s, 4);
            }
        }
    }
}

/* prep_side, unless this thread's last call left the same columns of the
 * same activations: a phase gives a thread one piece of rows after
 * another, all against one batch (computing them anew cost 5-10 % of a
 * piece of 4-6 panels) */
static void prep_side_once(const cf_matmul_args *a, const gemm_type *gt, int64_t c0, int64_t nc)
{
    const side_key *h = &tl_side_key;
    if (a->x_serial && h->serial == a->x_serial && h->x == a->x && h->stride == a->x_stride && h->k == a->k &&
        h->c0 == c0 && h->nc == nc && h->act == gt->act && h->offset == gt->offset)
        return;
    prep_side(a, gt, c0, nc);
    tl_side_key = (side_key){a->x_serial, a->x, a->x_stride, a->k, c0, nc, gt->act, gt->offset};
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
                                                              int group, int offset, int mins, int nc,
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
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(I[c]), _mm512_mul_ps(D, vdx), acc[c]);
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
                 int nc, int64_t cside)
{
    const char *xs[NC];
    for (int j = 0; j < nc; j++)
        xs[j] = (const char *)a->x + (c + j) * a->x_stride;
    __m512 out[NC];
    int nb = (int)(a->k / 32), nsb = (int)(a->k / 256);
    const side *sd = tl_side + (size_t)((c - cside) / NC) * side_group(nb);
    const uint8_t *xg = tl_xq + (size_t)((c - cside) / NC) * xq_group_bytes(nb);
#define KERNEL(n)                                                                                  \
    case n:                                                                                        \
        if (gt->act == ACT_Q8_0)                                                                   \
            kernel_q8_0(p, xg, sd, nb, ACT_Q8_0, n, out);                                          \
        else if (gt->act == ACT_Q8_1)                                                              \
            kernel_q8_0(p, xg, sd, nb, ACT_Q8_1, n, out);                                          \
        else if (gt->group == 32 && gt->mins)                                                      \
            kernel_q8_K(p, xs, nsb, 32, 0, 1, n, out);                                             \
        else if (gt->group == 32)                                                                  \
            kernel_q8_K(p, xs, nsb, 32, gt->offset, 0, n, out);                                    \
        else if (gt->mins)                                                                         \
            kernel_q8_K(p, xs, nsb, 16, 0, 1, n, out);                                             \
        else                                                                                       \
            kernel_q8_K(p, xs, nsb, 16, gt->offset, 0, n, out);                                    \
        break;
    switch (nc) {
        KERNEL(1) KERNEL(2) KERNEL(3) KERNEL(4) KERNEL(5) KERNEL(6) KERNEL(7) KERNEL(8)
    }
#undef KERNEL
    __mmask16 mask = (__mmask16)((1u << nr) - 1);
    for (int j = 0; j < nc; j++)
        _mm512_mask_storeu_ps(a->y + (c + j) * a->y_stride + r, mask, out[j]);
}

/* rows [r0, r1) by the dot products, which give the same bits */
static void gemm_by_dots(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    cf_dot_fn dot = cf_kernels()->dot[a->wtype];
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = 0; c < a->n; c++)
            a->y[c * a->y_stride + r] =
                dot(a->k, (const char *)a->w + r * a->w_stride, (const char *)a->x + c * a->x_stride);
}

static void gemm_quant(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    const gemm_type *gt = gemm_type_of(a->wtype);
    panel *p = &tl_mem.q;
    /* Q8_K activations need no side information: all columns at once */
    int64_t cmax = gt->act == ACT_Q8_K ? a->n : (int64_t)(NSIDE / side_group(a->k / 32)) * NC;
    if (gt->act != ACT_Q8_K &&
        !xq_buffer((size_t)(((a->n < cmax ? a->n : cmax) + NC - 1) / NC) * xq_group_bytes(a->k / 32))) {
        gemm_by_dots(a, r0, r1);
        return;
    }
    for (int64_t c0 = 0; c0 < a->n; c0 += cmax) {
        int64_t nch = a->n - c0 < cmax ? a->n - c0 : cmax;
        if (gt->act != ACT_Q8_K)
            prep_side_once(a, gt, c0, nch);
        for (int64_t r = r0; r < r1; r += GR) {
            int nr = r1 - r < GR ? (int)(r1 - r) : GR;
            pack_panel(a, gt, r, nr, p);
            for (int64_t c = c0; c < c0 + nch; c += NC) {
                int nc = c0 + nch - c < NC ? (int)(c0 + nch - c) : NC;
                tile(a, gt, p, r, nr, c, nc, c0);
            }
        }
    }
}

/* ---- F32 / F16 / BF16: 4x4 tiles of the canonical dot ------------------ */

static inline float canon16_sum(__m512 a)
{
    __m256 r8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    __m128 r2 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    return _mm_cvtss_f32(_mm_add_ss(r2, _mm_movehdup_ps(r2)));
}

static void widen(cf_type t, const void *src, float *dst, int64_t k)
{
    if (t == CF_TYPE_F16)
        cf_f16_to_f32_row(src, dst, k);
    else if (t == CF_TYPE_BF16)
        cf_bf16_to_f32_row(src, dst, k);
    else
        memcpy(dst, src, (size_t)k * sizeof(float));
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

/* Activation columns widened in chunks that fit the buffer beside FR
 * widened weight rows; each weight row tile is widened once per chunk. */
static void gemm_float(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    float *buf = tl_mem.f;
    int64_t k = a->k, kpad = (k + 15) & ~(int64_t)15;
    int64_t fch = (int64_t)(FBUF / (size_t)kpad) - FR;
    if (fch > 64)
        fch = 64;
    float *wrow[FR], *xcol[64];
    for (int i = 0; i < FR; i++)
        wrow[i] = buf + i * kpad;
    for (int64_t c0 = 0; c0 < a->n; c0 += fch) {
        int64_t c1 = a->n - c0 < fch ? a->n : c0 + fch;
        for (int64_t c = c0; c < c1; c++) {
            xcol[c - c0] = buf + (FR + c - c0) * kpad;
            widen(a->wtype, (const char *)a->x + c * a->x_stride, xcol[c - c0], k);
        }
        for (int64_t r = r0; r < r1; r += FR) {
            int nr = r1 - r < FR ? (int)(r1 - r) : FR;
            for (int i = 0; i < nr; i++)
                widen(a->wtype, (const char *)a->w + (r + i) * a->w_stride, wrow[i], k);
            for (int64_t c = c0; c < c1; c += FC) {
                int nc = c1 - c < FC ? (int)(c1 - c) : FC;
                float *y = a->y + c * a->y_stride + r;
                if (nr == FR && nc == FC)
                    ftile((const float *const *)wrow, (const float *const *)xcol + (c - c0), k, FR, FC, y,
                          a->y_stride);
                else
                    ftile((const float *const *)wrow, (const float *const *)xcol + (c - c0), k, nr, nc, y,
                          a->y_stride);
            }
        }
    }
}

static void gemm(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    int is_float = a->wtype == CF_TYPE_F32 || a->wtype == CF_TYPE_F16 || a->wtype == CF_TYPE_BF16;
    if (is_float && (int64_t)(FBUF / (size_t)((a->k + 15) & ~15)) >= FR + FC) {
        gemm_float(a, r0, r1);
    } else if (!is_float && a->k <= KMAX) {
        gemm_quant(a, r0, r1);
    } else {
        gemm_by_dots(a, r0, r1); /* too long for the buffers */
    }
}

void cf_fill_gemm_avx512(cf_kernel_table *t)
{
    static const cf_type types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q5_0, CF_TYPE_Q4_1, CF_TYPE_Q5_1,
                                    CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K,
                                    CF_TYPE_F32,  CF_TYPE_F16,  CF_TYPE_BF16, CF_TYPE_IQ4_NL, CF_TYPE_MXFP4,
                                    CF_TYPE_IQ4_XS, CF_TYPE_TQ2_0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        t->gemm[types[i]] = gemm;
}
CF_TARGET_END
#else
void cf_fill_gemm_avx512(cf_kernel_table *t) { (void)t; }
#endif
