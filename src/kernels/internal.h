/* What the kernel files share: the per-ISA function tables and the scalar
 * references the SIMD paths fall back to.  Private to src/kernels. */
#ifndef CONFAB_KERNELS_INTERNAL_H
#define CONFAB_KERNELS_INTERNAL_H

#include "confab/kernels.h"

/* dot(w, x) over k elements, w of the table's weight type, x already in
 * its vec_dot type. */
typedef float (*cf_dot_fn)(int64_t k, const void *w, const void *x);

/* Rows [r0, r1) of Y = X W^T by a tiled kernel (N > 1).  r0 is a multiple
 * of CF_GEMM_ROWS so the work split never changes a row's arithmetic. */
typedef void (*cf_gemm_fn)(const cf_matmul_args *a, int64_t r0, int64_t r1);

#define CF_GEMM_ROWS 16

typedef struct cf_kernel_table {
    cf_dot_fn dot[CF_TYPE_COUNT];
    cf_gemm_fn gemm[CF_TYPE_COUNT];
} cf_kernel_table;

/* The table of the active ISA (cf_isa_active()). */
const cf_kernel_table *cf_kernels(void);

/* Each ISA file fills in what it accelerates, over the previous level's
 * entries. */
void cf_fill_scalar(cf_kernel_table *t);
void cf_fill_avx2(cf_kernel_table *t);
void cf_fill_avx512(cf_kernel_table *t, int vnni);
void cf_fill_gemm_avx512(cf_kernel_table *t); /* needs VNNI */

/* Whether the CPU (not $CONFAB_ISA) has what a level needs. */
int cf_cpu_has_vnni(void);

#endif
