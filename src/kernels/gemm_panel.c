/* The driver of the tiled GEMMs (gemm_panel.h): unpacking weight rows
 * into panels, the activations' side information, and the walk over
 * panels and column groups that a level's tiles do the arithmetic of.
 * AVX2 code, shared by every x86 level that tiles.
 *
 * The float part of every tile follows the canonical order of internal.h
 * exactly (units visited by residue mod 16, one accumulator per residue,
 * the same final tree), so every output equals cf_vec_dot's bits: the
 * result depends neither on N, the level nor on the thread split.  K
 * above KMAX falls back to the dot products, which give the same bits.
 *
 * F32/F16/BF16 weights: 4x4 register tiles of the canonical dot itself,
 * on rows widened to f32 once per tile. */
#include <pthread.h>
#include <stdlib.h>

#include "confab/target.h"
#include "gemm_panel.h"

#if defined(__x86_64__)
CF_TARGET_BEGIN("avx2,fma,f16c")
#include <immintrin.h>

#include "blocks.h"
#include "layout.h"
#include "simd256.h"

#define KCP 1024     /* K chunk of the unpacking */
#define NSIDE 131072 /* side-info entries: activation columns x blocks (a multiple of 16)
                      * per chunk (all 512 columns of a batch for K up to 8192) */
/* One row's chunk, unpacked (then interleaved); every field a whole number
 * of 32-bit words so that rows can be transposed as such. */
typedef struct rowbuf {
    uint8_t q[KCP];
    float s[KCP / 32];
    float m[KCP / 32];
    int32_t sc[KCP / 16];
    float d[KCP / 256];
    float dmin[KCP / 256];
    int16_t mp[KCP / 256][16];
} rowbuf;

/* The float GEMM's widened rows share the panel's memory. */
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
#define R16_CHUNK (KCP / 32 * sizeof(block_q8_0)) /* the most bytes of a row's chunk */
TLS _Alignas(32) uint8_t tl_r16[R16_ROWS][R16_CHUNK]; /* an R16 group's rows' chunks in their plain bytes */
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

/* ---- unpacking a row's chunk [k0, k0 + kc) ----------------------------- */

/* Scale sc of group g of super-block i (groups of 16 or 32 elements) and,
 * for a type with an offset and no mins, the same scale against the
 * group's bsums (one a 16 elements) */
static inline void group_scale(rowbuf *o, int i, int group, int g, int sc)
{
    o->sc[256 / group * i + g] = sc;
    for (int j = 0; j < group / 16; j++)
        o->mp[i][group / 16 * g + j] = (int16_t)sc;
}

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

/* 32 bits -> 32 bytes, byte j 0x10 if bit j is set */
static inline __m256i fifth_bits(const uint8_t *p)
{
    uint32_t bits;
    memcpy(&bits, p, 4);
    return _mm256_and_si256(bits32_mask(bits), _mm256_set1_epi8(0x10));
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
        for (int g = 0; g < 16; g++)
            group_scale(o, i, 16, g, b[i].scales[g]);
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
        for (int g = 0; g < 16; g++)
            group_scale(o, i, 16, g, k3_scale(g, b[i].scales));
        o->d[i] = f16(b[i].d);
        o->dmin[i] = 0;
    }
}

#include "gemm_iq12.inc"
#include "gemm_iq3.inc"
#include "gemm_iq4.inc"


static const gemm_type *gemm_type_of(cf_type t)
{
    static const gemm_type q8_0 = {unpack_q8_0, ACT_Q8_0, 32, 128, 0, 255, 0, 0};
    static const gemm_type q4_0 = {unpack_q4_0, ACT_Q8_0, 32, 8, 0, 15, 0, 0};
    static const gemm_type q5_0 = {unpack_q5_0, ACT_Q8_0, 32, 16, 0, 31, 0, 0};
    static const gemm_type q4_1 = {unpack_q4_1, ACT_Q8_1, 32, 0, 0, 15, 0, 0};
    static const gemm_type q5_1 = {unpack_q5_1, ACT_Q8_1, 32, 0, 0, 31, 0, 0};
    static const gemm_type q2_K = {unpack_q2_K, ACT_Q8_K, 16, 0, 1, 3, 0, 0};
    static const gemm_type q3_K = {unpack_q3_K, ACT_Q8_K, 16, 4, 0, 7, 0, 0};
    static const gemm_type q4_K = {unpack_q4_K, ACT_Q8_K, 32, 0, 1, 15, 0, 0};
    static const gemm_type q5_K = {unpack_q5_K, ACT_Q8_K, 32, 0, 1, 31, 0, 0};
    static const gemm_type q6_K = {unpack_q6_K, ACT_Q8_K, 16, 32, 0, 63, 0, 0};
    static const gemm_type iq4_nl = {unpack_iq4_nl, ACT_Q8_0, 32, 128, 0, 255, 0, 0};
    static const gemm_type mxfp4 = {unpack_mxfp4, ACT_Q8_0, 32, 128, 0, 255, 0, 0};
    static const gemm_type iq4_xs = {unpack_iq4_xs, ACT_Q8_K, 32, 128, 0, 255, 0, 0};
    static const gemm_type tq2_0 = {unpack_tq2_0, ACT_Q8_K, 32, 1, 0, 2, 0, 0};
    static const gemm_type iq3_xxs = {unpack_iq3_xxs, ACT_Q8_K, 32, 32, 0, 63, 0.25f, 0};
    static const gemm_type iq3_s = {unpack_iq3_s, ACT_Q8_K, 32, 16, 0, 31, 0, 0};
    static const gemm_type iq2_xxs = {unpack_iq2_xxs, ACT_Q8_K, 32, 43, 0, 86, 0, 0.125f};
    static const gemm_type iq2_xs = {unpack_iq2_xs, ACT_Q8_K, 16, 43, 0, 86, 0, 0.125f};
    static const gemm_type iq2_s = {unpack_iq2_s, ACT_Q8_K, 16, 43, 0, 86, 0, 0.125f};
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
    case CF_TYPE_IQ3_XXS: return &iq3_xxs;
    case CF_TYPE_IQ3_S: return &iq3_s;
    case CF_TYPE_IQ2_XXS: return &iq2_xxs;
    case CF_TYPE_IQ2_XS: return &iq2_xs;
    case CF_TYPE_IQ2_S: return &iq2_s;
    default: return NULL;
    }
}

const cf_type cf_gemm_types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q5_0, CF_TYPE_Q4_1, CF_TYPE_Q5_1,
                                 CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K,
                                 CF_TYPE_F32,  CF_TYPE_F16,  CF_TYPE_BF16, CF_TYPE_IQ4_NL, CF_TYPE_MXFP4,
                                 CF_TYPE_IQ4_XS, CF_TYPE_TQ2_0, CF_TYPE_IQ3_XXS, CF_TYPE_IQ3_S,
                                 CF_TYPE_IQ2_XXS, CF_TYPE_IQ2_XS, CF_TYPE_IQ2_S};
const size_t cf_gemm_n_types = sizeof cf_gemm_types / sizeof cf_gemm_types[0];

/* The level's 16 x 16 transposes of the rows' n values, the rest one by
 * one. */
static void transpose_lanes(const gemm_isa *isa, const uint32_t *src, size_t sstride, uint32_t *dst, int n,
                            const slot_map *sm)
{
    int j0 = 0;
    for (; j0 + 16 <= n; j0 += 16)
        isa->transpose16(src, sstride, dst, j0, sm);
    for (; j0 < n; j0++)
        for (int i = 0; i < 16; i++)
            dst[16 * slot_row(sm, j0) + i] = src[i * sstride + j0];
}

#define TRANSPOSE(field, dstfield, n, first, per_unit, per_res)                                    \
    do {                                                                                           \
        slot_map sm_ = {(first), (per_unit), (per_res)};                                           \
        transpose_lanes(isa, (const uint32_t *)(const void *)o[0].field, sizeof(rowbuf) / 4,       \
                        (uint32_t *)(void *)(dstfield), (n), &sm_);                                \
    } while (0)

/* The plain bytes of chunk [k0, k0 + kc) of the 16 rows of an R16 group
 * g, row j's in b[j]: all rows at once, since one row at a time a chunk's
 * lines had left L1 before the next row came back to them (the AVX2
 * level's R16 GEMM spent as long on these copies as on its tiles at
 * N = 16). */
static void r16_chunks(const uint8_t *g, cf_type t, int64_t k0, int kc, uint8_t (*b)[R16_CHUNK])
{
    size_t head;
    int q6;
    const size_t bsz = r16_block_size(t, &head, &q6);
    const int64_t bs = cf_type_get(t)->blck_size;
    for (int64_t u = 0; u < kc / bs; u++)
        r16_get_rows(g, k0 / bs + u, 0, R16_ROWS, b[0] + u * bsz, R16_CHUNK, bsz, head, q6);
}

/* Unpack rows [r, r + nr) (nr <= 16; missing rows are zero), whole K, the
 * units in residue order.  An R16 group goes through the level's packer,
 * or where it has none, row by row as the plain rows do. */
static void pack_panel(const cf_matmul_args *a, const gemm_type *gt, int64_t r, int nr, panel *p,
                       const gemm_isa *isa)
{
    const int r16 = a->w_layout == CF_LAYOUT_R16;
    if (r16 && isa->pack_r16 && isa->pack_r16((const uint8_t *)a->w + r * a->w_stride, a->k, a->wtype, p))
        return;
    rowbuf *o = tl_rows;
    const int kq = gt->act == ACT_Q8_K;                   /* units: super-blocks or blocks */
    const int usz = kq ? 256 : 32;
    const int per_res = (int)((a->k / usz + 15) / 16);
    for (int64_t k0 = 0; k0 < a->k; k0 += KCP) {
        int kc = a->k - k0 < KCP ? (int)(a->k - k0) : KCP;
        if (r16)
            r16_chunks((const uint8_t *)a->w + r * a->w_stride, a->wtype, k0, kc, tl_r16);
        for (int lane = 0; lane < GR; lane++) {
            if (lane >= nr) {
                memset(&o[lane], 0, sizeof o[lane]);
            } else if (r16) {
                gt->unpack(tl_r16[lane], 0, kc, &o[lane]);
            } else {
                gt->unpack((const char *)a->w + (r + lane) * a->w_stride, k0, kc, &o[lane]);
            }
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
                const __m256i ones = _mm256_set1_epi16(1);
                __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), v), ones);
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

/* rows [r0, r1) by the dot products, which give the same bits */
static void gemm_by_dots(const cf_matmul_args *a, int64_t r0, int64_t r1)
{
    cf_dot_fn dot = cf_kernels()->dot[a->wtype];
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = 0; c < a->n; c++)
            a->y[c * a->y_stride + r] =
                dot(a->k, (const char *)a->w + r * a->w_stride, (const char *)a->x + c * a->x_stride);
}

static void gemm_quant(const cf_matmul_args *a, int64_t r0, int64_t r1, const gemm_isa *isa)
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
            pack_panel(a, gt, r, nr, p, isa);
            for (int64_t c = c0; c < c0 + nch; c += NC) {
                int nc = c0 + nch - c < NC ? (int)(c0 + nch - c) : NC;
                const int64_t g = (c - c0) / NC;
                isa->tile(a, gt, p, r, nr, c, nc, tl_xq + (size_t)g * xq_group_bytes(a->k / 32),
                          tl_side + (size_t)g * side_group(a->k / 32));
            }
        }
    }
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

/* Activation columns widened in chunks that fit the buffer beside FR
 * widened weight rows; each weight row tile is widened once per chunk. */
static void gemm_float(const cf_matmul_args *a, int64_t r0, int64_t r1, gemm_ftile_fn ftile)
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
                ftile((const float *const *)wrow, (const float *const *)xcol + (c - c0), k, nr, nc, y,
                      a->y_stride);
            }
        }
    }
}

void cf_gemm_run(const cf_matmul_args *a, int64_t r0, int64_t r1, const gemm_isa *isa)
{
    int is_float = a->wtype == CF_TYPE_F32 || a->wtype == CF_TYPE_F16 || a->wtype == CF_TYPE_BF16;
    if (is_float && (int64_t)(FBUF / (size_t)((a->k + 15) & ~15)) >= FR + FC) {
        gemm_float(a, r0, r1, isa->ftile);
    } else if (!is_float && a->k <= KMAX) {
        gemm_quant(a, r0, r1, isa);
    } else {
        gemm_by_dots(a, r0, r1); /* too long for the buffers */
    }
}

CF_TARGET_END
#endif
