/* cf_vec_dot and cf_matmul: dispatch to the active ISA's kernels and the
 * split of a matrix multiply over threads, in whole CF_GEMM_ROWS panels.
 * Every kernel follows the canonical order (internal.h), so each output is
 * the same bits for any nth, N or path. */
#include <math.h>

#include "internal.h"

float cf_vec_dot(cf_type t, int64_t k, const void *w, const void *x)
{
    cf_dot_fn f = (unsigned)t < CF_TYPE_COUNT ? cf_kernels()->dot[t] : NULL;
    return f ? f(k, w, x) : NAN;
}

void cf_matmul(const cf_matmul_args *a, int ith, int nth)
{
    if ((unsigned)a->wtype >= CF_TYPE_COUNT || nth < 1 || ith < 0 || ith >= nth)
        return;
    const cf_kernel_table *kt = cf_kernels();
    int64_t panels = (a->m + CF_GEMM_ROWS - 1) / CF_GEMM_ROWS;
    int64_t r0 = panels * ith / nth * CF_GEMM_ROWS;
    int64_t r1 = panels * (ith + 1) / nth * CF_GEMM_ROWS;
    if (r1 > a->m)
        r1 = a->m;
    if (r0 >= r1)
        return;
    /* two columns are still cheaper as plain dots than packing a panel */
    if (a->n >= 3 && kt->gemm[a->wtype]) {
        kt->gemm[a->wtype](a, r0, r1);
        return;
    }
    const char *w = a->w;
    const char *x = a->x;
    if (a->n <= 2 && kt->prep[a->wtype] && a->k <= CF_PREP_MAX_K) {
        _Alignas(64) unsigned char p[2][CF_PREP_BYTES];
        for (int64_t c = 0; c < a->n; c++)
            kt->prep[a->wtype](a->k, x + c * a->x_stride, p[c]);
        /* a few rows at a time for both columns while they are in L1 */
        int64_t step = a->n == 1 ? r1 - r0 : CF_DOT_ROWS;
        for (int64_t r = r0; r < r1; r += step)
            for (int64_t c = 0; c < a->n; c++)
                kt->dot_rows[a->wtype](a->k, w + r * a->w_stride, a->w_stride, r1 - r < step ? r1 - r : step, p[c],
                                       a->y + c * a->y_stride + r);
        return;
    }
    cf_dot_fn dot = kt->dot[a->wtype];
    if (!dot)
        return;
    /* Each weight row is dotted with every activation row while it is in L1
     * (one row at a time: interleaving rows slowed the stream from DRAM). */
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = 0; c < a->n; c++)
            a->y[c * a->y_stride + r] = dot(a->k, w + r * a->w_stride, x + c * a->x_stride);
}
