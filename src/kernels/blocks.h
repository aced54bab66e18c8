/* Block layouts of the quantized tensor types, byte for byte as ggml and
 * GGUF store them (ggml-common.h).  Private to src/kernels.
 *
 * Every multi-byte field is little-endian; the structs are packed so that
 * sizeof matches the type table and a block may sit at any address. */
#ifndef CONFAB_KERNELS_BLOCKS_H
#define CONFAB_KERNELS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "confab/kernels.h"

#define QK32 32  /* elements per block of the 32-element types */
#define QK_K 256 /* elements per super-block of the K-quants */
#define K_SCALE_SIZE 12

#define CF_PACKED __attribute__((packed))

/* x = d * (q - 8), q: 4 bits; element j in the low nibble of qs[j],
 * element j + 16 in the high nibble. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[QK32 / 2];
} block_q4_0;

/* x = d * q + m */
typedef struct CF_PACKED {
    uint16_t d, m;
    uint8_t qs[QK32 / 2];
} block_q4_1;

/* x = d * (q - 16), q: 5 bits; bit 4 of element j is bit j of qh. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[QK32 / 2];
} block_q5_0;

/* x = d * q + m, q: 5 bits */
typedef struct CF_PACKED {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[QK32 / 2];
} block_q5_1;

/* x = d * q */
typedef struct CF_PACKED {
    uint16_t d;
    int8_t qs[QK32];
} block_q8_0;

/* x = d * q; s = d * sum(q) (used with the weight's min) */
typedef struct CF_PACKED {
    uint16_t d, s;
    int8_t qs[QK32];
} block_q8_1;

/* 16 groups of 16: x = d * (scales & 15) * q - dmin * (scales >> 4), q: 2 bits.
 * qs[32*h + l] holds, at bit 2*j, element 128*h + 32*j + l. */
typedef struct CF_PACKED {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    uint16_t d, dmin;
} block_q2_K;

/* 16 groups of 16: x = d * (s - 32) * (q - 4), q: 2 low bits like Q2_K plus
 * a high bit (set = no -4) at bit j of hmask[l] for element 32*j + l;
 * s: 6-bit scales packed in 12 bytes (low nibbles in 0..7, high 2 bits in
 * 8..11). */
typedef struct CF_PACKED {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} block_q3_K;

/* 8 groups of 32: x = d * sc * q - dmin * m, sc and m 6 bits packed in 12
 * bytes; qs[32*h + l]: low nibble element 64*h + l, high nibble 64*h+32+l. */
typedef struct CF_PACKED {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} block_q4_K;

/* As Q4_K with a fifth bit: bit 2h (low nibble) / 2h+1 (high nibble) of qh[l]. */
typedef struct CF_PACKED {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

/* 16 groups of 16: x = d * sc * (q - 32), q: 6 bits = 4 in ql, 2 in qh. */
typedef struct CF_PACKED {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
} block_q6_K;

/* Activations for the K-quants: x = d * q, plus the sums of each 16 q. */
typedef struct CF_PACKED {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

/* IQ3_XXS: 8 groups of 32.  qs[8g + j] picks grid entry j (4 magnitudes)
 * of group g; the word at qs + 64 + 4g holds the group's 4 sign codes
 * (7 bits each, cf_iq_signs) and, in its top 4 bits, s:
 * x = d * (2s + 1) / 4 * grid * sign. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[3 * QK_K / 8];
} block_iq3_xxs;

/* IQ3_S: 8 groups of 32.  Entry j of group g has the 9-bit index
 * qs[8g + j] | (bit j of qh[g]) << 8; signs holds one bit per weight
 * (set: negative); scales[g / 2] the 4-bit s of group g (low nibble for
 * even g): x = d * (2s + 1) * grid * sign. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
} block_iq3_s;

/* x = d * kvalues_iq4nl[q], q: 4 bits, nibbles as Q4_0. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[QK32 / 2];
} block_iq4_nl;

/* 8 groups of 32, each as IQ4_NL with d * (ls - 32), ls: 6 bits, the low 4
 * in scales_l (group j's in nibble j % 2 of byte j / 2), the high 2 at bit
 * 2j of scales_h; qs[16*j .. 16*j+15] are group j's nibbles. */
typedef struct CF_PACKED {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;

/* x = 2^(e - 128) * kvalues_mxfp4[q] (e: E8M0, the codebook twice E2M1),
 * nibbles as Q4_0. */
typedef struct CF_PACKED {
    uint8_t e;
    uint8_t qs[QK32 / 2];
} block_mxfp4;

/* Ternary: x = d * (q - 1), q: 2 bits laid out as Q2_K's. */
typedef struct CF_PACKED {
    uint8_t qs[QK_K / 4];
    uint16_t d;
} block_tq2_0;

_Static_assert(sizeof(block_q4_0) == 18, "q4_0");
_Static_assert(sizeof(block_q4_1) == 20, "q4_1");
_Static_assert(sizeof(block_q5_0) == 22, "q5_0");
_Static_assert(sizeof(block_q5_1) == 24, "q5_1");
_Static_assert(sizeof(block_q8_0) == 34, "q8_0");
_Static_assert(sizeof(block_q8_1) == 36, "q8_1");
_Static_assert(sizeof(block_q2_K) == 84, "q2_K");
_Static_assert(sizeof(block_q3_K) == 110, "q3_K");
_Static_assert(sizeof(block_q4_K) == 144, "q4_K");
_Static_assert(sizeof(block_q5_K) == 176, "q5_K");
_Static_assert(sizeof(block_q6_K) == 210, "q6_K");
_Static_assert(sizeof(block_q8_K) == 292, "q8_K");
_Static_assert(sizeof(block_iq3_xxs) == 98, "iq3_xxs");
_Static_assert(sizeof(block_iq3_s) == 110, "iq3_s");
_Static_assert(sizeof(block_iq4_nl) == 18, "iq4_nl");
_Static_assert(sizeof(block_iq4_xs) == 136, "iq4_xs");
_Static_assert(sizeof(block_mxfp4) == 17, "mxfp4");
_Static_assert(sizeof(block_tq2_0) == 66, "tq2_0");

/* The 6-bit scale and min of group j (0..7) of a Q4_K/Q5_K block. */
static inline void k4_scale_min(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* The 6-bit scale of group j (0..15) of a Q3_K block, minus its bias 32. */
static inline int k3_scale(int j, const uint8_t *s)
{
    int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
    int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

/* The bsums of a Q8_K block, without taking a packed member's address. */
static inline const int16_t *q8k_bsums(const block_q8_K *b)
{
    return (const int16_t *)(const void *)((const uint8_t *)b + offsetof(block_q8_K, bsums));
}

static inline float ldh(uint16_t h) { return cf_f16_to_f32(h); }

/* ---- i-quants with 2- and 1-bit grids (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S,
 * IQ1_M): each group of 8 weights is one entry of a grid (grids_iq12.h),
 * 8 groups of 32 per super-block. */

/* x = d * (0.5 + s) / 4 * grid * sign; per 32: 4 grid indices (bytes 0..3
 * of its 8 bytes), then 4 x 7 sign bits (cf_iq_signs) and the 4-bit s. */
typedef struct CF_PACKED {
    uint16_t d;
    uint16_t qs[QK_K / 8];
} block_iq2_xxs;

/* qs[g]: 9-bit grid index, 7 sign bits; scales[ib]: s of the first 16
 * (low nibble) and the last 16 of 32. */
typedef struct CF_PACKED {
    uint16_t d;
    uint16_t qs[QK_K / 8];
    uint8_t scales[QK_K / 32];
} block_iq2_xs;

/* qs[0..31]: low 8 bits of the 10-bit grid indices, qh[ib] their high 2
 * bits (group l at bit 2l); qs[32..63]: one byte of 8 plain signs per
 * group; scales as IQ2_XS. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;

/* x = d * (2s + 1) * (grid +- 1/8), grid in {-1, 0, 1}; qh[ib]: the high
 * 3 bits of the 4 11-bit indices (group l at bit 3l), s at bits 12..14,
 * the sign of the shift at bit 15. */
typedef struct CF_PACKED {
    uint16_t d;
    uint8_t qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
} block_iq1_s;

/* As IQ1_S with a scale s (3 bits) per 16 and a shift sign per 8: qh[2ib
 * + h] holds the high index bits of groups 2h (bits 0..2) and 2h+1 (4..6),
 * their shift signs at bits 3 and 7.  No d field: its 16 bits are the top
 * nibbles of the four 16-bit scale words (iq1m_d). */
typedef struct CF_PACKED {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
} block_iq1_m;

_Static_assert(sizeof(block_iq2_xxs) == 66, "iq2_xxs");
_Static_assert(sizeof(block_iq2_xs) == 74, "iq2_xs");
_Static_assert(sizeof(block_iq2_s) == 82, "iq2_s");
_Static_assert(sizeof(block_iq1_s) == 50, "iq1_s");
_Static_assert(sizeof(block_iq1_m) == 56, "iq1_m");

#endif
