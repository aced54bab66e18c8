/* kernels: tensor element types (ggml's numbering and block layouts),
 * conversions, (de)quantization, dot products and the matrix multiply.
 *
 * Conventions (as in ggml/GGUF): a 2-D weight has ne0 = K input features
 * (contiguous) and ne1 = M output rows; a row of K elements of type t takes
 * cf_row_bytes(t, K) bytes.  y = W x computes y[m] = dot(W[m,:], x). */
#ifndef CONFAB_KERNELS_H
#define CONFAB_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"

/* ggml_type ids, as stored in GGUF tensor infos. */
typedef enum cf_type {
    CF_TYPE_F32 = 0,
    CF_TYPE_F16 = 1,
    CF_TYPE_Q4_0 = 2,
    CF_TYPE_Q4_1 = 3,
    CF_TYPE_Q5_0 = 6,
    CF_TYPE_Q5_1 = 7,
    CF_TYPE_Q8_0 = 8,
    CF_TYPE_Q8_1 = 9,
    CF_TYPE_Q2_K = 10,
    CF_TYPE_Q3_K = 11,
    CF_TYPE_Q4_K = 12,
    CF_TYPE_Q5_K = 13,
    CF_TYPE_Q6_K = 14,
    CF_TYPE_Q8_K = 15,
    CF_TYPE_IQ2_XXS = 16,
    CF_TYPE_IQ2_XS = 17,
    CF_TYPE_IQ3_XXS = 18,
    CF_TYPE_IQ1_S = 19,
    CF_TYPE_IQ4_NL = 20,
    CF_TYPE_IQ3_S = 21,
    CF_TYPE_IQ2_S = 22,
    CF_TYPE_IQ4_XS = 23,
    CF_TYPE_I8 = 24,
    CF_TYPE_I16 = 25,
    CF_TYPE_I32 = 26,
    CF_TYPE_I64 = 27,
    CF_TYPE_F64 = 28,
    CF_TYPE_IQ1_M = 29,
    CF_TYPE_BF16 = 30,
    CF_TYPE_TQ1_0 = 34,
    CF_TYPE_TQ2_0 = 35,
    CF_TYPE_MXFP4 = 39,
    CF_TYPE_COUNT = 40
} cf_type;

typedef struct cf_type_traits {
    const char *name;   /* "Q4_K"; NULL for ids that are not a type */
    uint32_t blck_size; /* elements per block */
    uint32_t type_size; /* bytes per block */
    bool computable;    /* confab can dequantize and multiply it */
} cf_type_traits;

/* NULL when t is not a known ggml type id. */
const cf_type_traits *cf_type_get(uint32_t t);
const char *cf_type_name(uint32_t t); /* "?" when unknown */
/* Bytes of a row of k elements; k must be a multiple of the block size. */
size_t cf_row_bytes(cf_type t, int64_t k);
/* Parse "Q4_K" etc. (case-insensitive); returns -1 when unknown. */
int cf_type_from_name(const char *name);

/* IEEE half and bfloat16 conversions (round to nearest even). */
float cf_f16_to_f32(uint16_t h);
uint16_t cf_f32_to_f16(float f);
float cf_bf16_to_f32(uint16_t h);
uint16_t cf_f32_to_bf16(float f);
/* Whole rows of n values (F16C / AVX-512 when available; same bits). */
void cf_f16_to_f32_row(const uint16_t *src, float *dst, int64_t n);
void cf_f32_to_f16_row(const float *src, uint16_t *dst, int64_t n);
void cf_bf16_to_f32_row(const uint16_t *src, float *dst, int64_t n);
void cf_f32_to_bf16_row(const float *src, uint16_t *dst, int64_t n);

/* ---- CPU features and dispatch ------------------------------------------ */
/* Two families of levels, each level including the one before: x86's
 * (scalar, AVX2, AVX-VNNI, AVX-512) and ARM's (scalar, NEON, dotprod,
 * i8mm).  AVX-512 needs no AVX-VNNI: a CPU with AVX-512 but not AVX-VNNI
 * has both levels but AVX-VNNI, which goes down to AVX2. */
typedef enum cf_isa {
    CF_ISA_SCALAR = 0,
    CF_ISA_AVX2 = 1,    /* AVX2 + FMA + F16C */
    CF_ISA_AVXVNNI = 2, /* + AVX-VNNI (256-bit vpdpbusd, VEX) */
    CF_ISA_AVX512 = 3,  /* F, BW, VL, DQ (+ VNNI used when present) */
    CF_ISA_NEON = 4,    /* ARMv8.0 Advanced SIMD */
    CF_ISA_DOTPROD = 5, /* + SDOT/UDOT (ARMv8.2) */
    CF_ISA_I8MM = 6,    /* + SMMLA (ARMv8.6) */
    CF_ISA_COUNT
} cf_isa;

/* The ISA in use: the best the CPU has, lowered by $CONFAB_ISA
 * ("scalar", "avx2", "avxvnni", "avx512", "neon", "dotprod", "i8mm") so that every
 * path stays testable. */
cf_isa cf_isa_active(void);
/* The best level the CPU has, whatever $CONFAB_ISA says. */
cf_isa cf_isa_best(void);
const char *cf_isa_name(cf_isa isa);
/* Force an ISA (tests): a level the CPU lacks gives the best level below
 * it in its family that it has, one of the other family scalar.  Returns
 * the one set. */
cf_isa cf_isa_set(cf_isa isa);

/* ---- (de)quantization ----------------------------------------------------- */
/* Reference dequantization of k elements (k a multiple of the block size).
 * Supports F32 F16 BF16 Q8_0 Q8_1 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K..Q6_K Q8_K
 * IQ2_XXS IQ2_XS IQ2_S IQ1_S IQ1_M IQ3_XXS IQ3_S IQ4_NL IQ4_XS MXFP4 TQ2_0;
 * returns -1 for any other type or a bad k. */
int cf_dequantize_row(cf_type t, const void *src, float *dst, int64_t k);
/* Reference quantization f32 -> t (for mkmodel and tests): F32 F16 BF16
 * Q8_0 Q8_1 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K Q8_K IQ2_S IQ3_XXS
 * IQ3_S IQ4_NL IQ4_XS MXFP4 TQ2_0; -1 otherwise (and for the types of
 * cf_type_needs_imatrix, or when the i-quants' first-use grid searches
 * cannot be had).
 * The weight types follow llama-quantize's reference algorithms (no
 * importance matrix): tests/kernels/test_models.c checks the result is as
 * accurate as llama.cpp's on its own fixtures (IQ3_*: within 25 %, as
 * those were made with one; given llama's weights, test_iq3_quant.c gets
 * its bytes).  Q8_0, Q8_1 and Q8_K are the
 * activation rounding of llama.cpp's CPU backend, bit for bit:
 *   Q8_0: d = amax/127 (F16), q = rne(x * (127/amax));
 *   Q8_1: the same plus s = F16(d * sum q);
 *   Q8_K: iscale = -127/v, v the first element of largest |x| (sign kept),
 *         q = min(127, rne(iscale * x)), d = 1/iscale (F32), 16 bsums.
 * (So Q8_0 as a weight type rounds halves to even where llama-quantize
 * rounds them away from zero: a tie is rare and either is within the
 * format's error.) */
int cf_quantize_row(cf_type t, const float *src, void *dst, int64_t k);
/* Whether llama-quantize refuses t without an importance matrix (IQ2_XXS,
 * IQ2_XS, IQ1_S, IQ1_M), which confab does not compute: cf_quantize_row
 * cannot write them. */
bool cf_type_needs_imatrix(cf_type t);

/* ---- weight layouts ------------------------------------------------------- */
/* How a matrix's rows lie in memory.  PLAIN: one after the other, as GGUF
 * stores them.  R16 (Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_K, Q6_K): every whole group of 16 rows
 * rearranged so that one vector load holds the same 4 bytes of all 16 rows
 * (of 4 rows on NEON; the AVX-512 and ARM dotprod decode kernels read a
 * group as one stream, with no horizontal sums); the last rows % 16 rows stay plain.  A group takes the bytes of its 16 plain
 * rows, so row r of either layout starts its group's (or its own) bytes at
 * r / 16 * 16 rows in: rows are addressed the same way in both. */
typedef enum cf_layout { CF_LAYOUT_PLAIN = 0, CF_LAYOUT_R16 = 1 } cf_layout;

/* The layout the active ISA's kernels multiply matrices of type t fastest
 * in: R16 for Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_K and Q6_K on AVX-512 VNNI, for
 * Q8_0, Q4_0, IQ4_NL and Q4_K on ARM's dotprod and i8mm, else PLAIN.  (Any
 * ISA multiplies any layout, with the same bits.) */
cf_layout cf_layout_best(cf_type t);
/* Rearrange a plain matrix of rows rows of k elements (contiguous) into
 * layout, in place.  -1 when t has no such layout or memory for one
 * group runs out. */
int cf_repack(cf_type t, cf_layout layout, void *w, int64_t k, int64_t rows);
/* Row r of such a matrix, in its plain bytes (cf_row_bytes(t, k)), to dst:
 * what dequantizing or inspecting one row needs.  -1 for a bad layout. */
int cf_unpack_row(cf_type t, cf_layout layout, const void *w, int64_t k, int64_t rows, int64_t r, void *dst);

/* ---- dot products and matrix multiply ------------------------------------ */
/* The format activations are rounded to before multiplying with a weight of
 * type t, as llama.cpp does: Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4, Q8_1 for
 * Q4_1/Q5_1, Q8_K for the K-quants, the 256-element i-quants (IQ4_XS,
 * IQ3/IQ2/IQ1) and TQ2_0, F16 for F16, BF16 for BF16, F32 for F32. */
cf_type cf_vec_dot_type(cf_type t);

/* dot(w, x) where w is a row of type t and x a row already converted with
 * cf_quantize_row(cf_vec_dot_type(t), ...): exact integer sums per block
 * times the block scales, accumulated in float in one canonical order
 * (src/kernels/internal.h) that every ISA follows, so the result is the
 * same bits on scalar, AVX2 and AVX-512.  NaN when t is not computable. */
float cf_vec_dot(cf_type t, int64_t k, const void *w, const void *x);

/* One matrix multiply Y = X W^T, split over threads by output rows (in
 * panels of 16).  Every output is bit for bit cf_vec_dot of its weight row
 * and activation row, whatever the thread count, N or ISA: N <= 2 computes
 * those dots (decode: weights streamed once); N >= 3 on AVX-512 VNNI runs a
 * tiled GEMM (16 rows x 8 columns per micro-kernel, K up to 16384 per
 * panel), on ARM's dotprod and i8mm one of 8 rows x 4 columns, that
 * follow the same canonical order.  No allocation (per-thread
 * static buffers, about 0.7 MiB a thread, 0.8 on ARM) and no OpenMP inside; a
 * non-computable wtype leaves Y untouched.
 *   W: M rows of K elements of type wtype, row stride w_stride bytes
 *   X: N activation rows already quantized to cf_vec_dot_type(wtype),
 *      row stride x_stride bytes
 *   Y: N rows of M floats, row stride y_stride floats
 * Called by every thread of a parallel region with (ith, nth); no barrier
 * inside. */
typedef struct cf_matmul_args {
    cf_type wtype;
    const void *w;
    size_t w_stride;
    int64_t m, k, n;
    const void *x;
    size_t x_stride;
    float *y;
    size_t y_stride;
    /* A matrix that cf_repack rearranged (w_layout not PLAIN, w_stride its
     * row bytes): w is its row w_row, and it has w_rows rows in all (any
     * w_row and m: groups cut by the range are computed whole aside). */
    cf_layout w_layout;
    int64_t w_row, w_rows;
    /* Names x's contents (0: unknown): calls with the same nonzero x_serial
     * and x multiply the same activations, so a thread may keep what it
     * derived from them for its next call (the GEMM's block sums, for the
     * next piece of a matrix's rows). */
    uint64_t x_serial;
} cf_matmul_args;

void cf_matmul(const cf_matmul_args *a, int ith, int nth);

#endif
