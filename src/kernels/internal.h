/* What the kernel files share: the per-ISA function tables and the scalar
 * references the SIMD paths fall back to.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_INTERNAL_H
#define CONFAB_KERNELS_INTERNAL_H

#include "confab/kernels.h"

/* The canonical order of a dot product's float arithmetic, which every
 * kernel on every ISA follows (vec_dot and the tiled GEMM alike), so that a
 * result never depends on the ISA, the thread count or the batch size N:
 *
 * A row is cut into units: 32-element blocks (Q4_0..Q8_0, IQ4_NL, MXFP4),
 * 256-element super-blocks (K-quants, IQ1_*..IQ3_*, IQ4_XS, TQ2_0) or
 * single elements (F32/F16/BF16).  Each unit u yields exact values (integer
 * sums converted to float, scales products) that are added with fused
 * multiply-adds into accumulator u % 16, in increasing u:
 *   Q8_0, Q4_0, Q5_0      a = fma(isum, dw*dx, a)
 *   IQ4_NL, MXFP4         a = fma(isum, dw*dx, a)   (codebook values in isum;
 *                         MXFP4's dw = 2^(e-128) from its E8M0 byte)
 *   Q4_1, Q5_1            a = fma(isum, dw*dx, a); a = fma(m, s, a)
 *   Q2_K, Q4_K, Q5_K      a = fma(isum, d*dx, a); a = fma(msum, -(dmin*dx), a)
 *   Q3_K, Q6_K, TQ2_0     a = fma(isum, d*dx, a)   (offsets inside isum)
 *   IQ4_XS                a = fma(isum, d*dx, a)   (isum = sum over its 8
 *                         groups of (ls - 32) * the group's codebook sum)
 *   IQ3_S, IQ3_XXS        a = fma(isum, d*dx, a)   (IQ3_XXS: the result / 4)
 *   IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M
 *                         a = fma(isum, d*dx*0.125f, a)  (ggml's 1/8 and
 *                         IQ1's shifts +-1/8 folded: isum sums (2s+1) *
 *                         grid * sign * q, or (2s+1) * (8 grid +- 1) * q;
 *                         IQ1_M's d comes from its scale words)
 *   F32, F16, BF16        a = fma(w, x, a)
 * (isum: the integer sum of the unit, group scales applied, for the
 * i-quants their 2s + 1 times the sums of signed grid values times x;
 * msum: the mins times Q8_K's bsums.)  The 16 accumulators, initially +0,
 * are then summed pairwise at distance 8, 4, 2, 1: r[j] = a[j] + a[j+8],
 * and so on; IQ3_XXS's scale d * (2s + 1) / 4 leaves a final exact
 * r * 0.25. */
#define CF_CANON_LANES 16

/* dot(w, x) over k elements, w of the table's weight type, x already in
 * its vec_dot type. */
typedef float (*cf_dot_fn)(int64_t k, const void *w, const void *x);

/* Decoding (N <= 2) shares the work on the activations over the weight
 * rows: prep lays out activation row x once into p (at most
 * CF_PREP_BYTES, for k <= CF_PREP_MAX_K), then dot_rows gives y[i] =
 * dot(k, w + i * w_stride, x) for i < rows, each the single dot's bits. */
typedef void (*cf_prep_fn)(int64_t k, const void *x, void *p);
typedef void (*cf_dot_rows_fn)(int64_t k, const void *w, size_t w_stride, int64_t rows, const void *p, float *y);

#define CF_PREP_MAX_K 16384
#define CF_PREP_BYTES (CF_PREP_MAX_K / 512 * 704) /* 704 bytes per 16 blocks of 32 */
#define CF_PREP_BYTES_FOR(k) ((size_t)(((k) + 511) / 512) * 704) /* of one row of k */
#define CF_DOT_ROWS 4 /* rows a dot_rows kernel takes together */

/* Rows [r0, r1) of Y = X W^T by a tiled kernel (N >= 3), r0 a multiple of
 * CF_GEMM_ROWS; each output is the canonical dot's bits.  A CF_LAYOUT_R16
 * matrix (a->w_layout) comes as whole groups from its group 0, k at most
 * CF_GEMM_MAX_K. */
typedef void (*cf_gemm_fn)(const cf_matmul_args *a, int64_t r0, int64_t r1);

#define CF_GEMM_ROWS 16
#define CF_GEMM_MAX_K 16384

/* A CF_LAYOUT_R16 matrix (layout.h): y[16 g + j] = dot(row j of group g, x)
 * for groups whole groups from w.  p: x laid out by the table's prep, or
 * NULL (the table has none, or k > CF_PREP_MAX_K) to read x itself. */
typedef void (*cf_dot_r16_fn)(int64_t k, const void *w, int64_t groups, const void *x, const void *p, float *y);

typedef struct cf_kernel_table {
    cf_dot_fn dot[CF_TYPE_COUNT];
    cf_prep_fn prep[CF_TYPE_COUNT]; /* optional, with dot_rows */
    cf_dot_rows_fn dot_rows[CF_TYPE_COUNT];
    cf_gemm_fn gemm[CF_TYPE_COUNT];
    /* the layout these kernels read fastest (cf_layout_best), and the
     * reader of R16 matrices every level has for the types that have it */
    cf_layout layout[CF_TYPE_COUNT];
    cf_dot_r16_fn dot_r16[CF_TYPE_COUNT];
    /* N up to which a matrix goes row by row (dot_rows, dot_r16, the
     * dots: the columns ride on a row's one read while it is in L1 or L2)
     * rather than through the tiles (at least 2) */
    int small_n[CF_TYPE_COUNT];
} cf_kernel_table;

/* The table of the active ISA (cf_isa_active()). */
const cf_kernel_table *cf_kernels(void);

/* Each ISA file fills in what it accelerates, over the previous level's
 * entries. */
void cf_fill_scalar(cf_kernel_table *t);
void cf_fill_avx2(cf_kernel_table *t);
void cf_fill_avx512(cf_kernel_table *t, int vnni, int fetch_ahead);
void cf_fill_gemm_avx2(cf_kernel_table *t);
void cf_fill_gemv_avx2(cf_kernel_table *t);
void cf_fill_avxvnni(cf_kernel_table *t);
void cf_fill_gemv_avxvnni(cf_kernel_table *t);
void cf_fill_gemm_avx512(cf_kernel_table *t); /* needs VNNI */
void cf_fill_neon(cf_kernel_table *t);
void cf_fill_dotprod(cf_kernel_table *t);
void cf_fill_gemm_dotprod(cf_kernel_table *t);
void cf_fill_r16_dotprod(cf_kernel_table *t); /* and the layout it reads */
void cf_fill_gemm_i8mm(cf_kernel_table *t);

/* Whether the CPU (not $CONFAB_ISA) has what a level needs. */
int cf_cpu_has_vnni(void);
int cf_cpu_has_avxvnni(void);
int cf_cpu_has_f16c(void);
int cf_cpu_fetch_ahead(void);

#endif
