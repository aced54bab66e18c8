/* cf_vec_dot and cf_matmul: dispatch to the active ISA's kernels and the
 * split of a matrix multiply over threads, in whole CF_GEMM_ROWS panels.
 * Every kernel follows the canonical order (internal.h), so each output is
 * the same bits for any nth, N, layout or path. */
#include <math.h>

#include "internal.h"
#include "layout.h"

float cf_vec_dot(cf_type t, int64_t k, const void *w, const void *x)
{
    cf_dot_fn f = (unsigned)t < CF_TYPE_COUNT ? cf_kernels()->dot[t] : NULL;
    return f ? f(k, w, x) : NAN;
}

/* Whether N columns go through the tiles rather than row by row. */
static bool tiled(const cf_matmul_args *a, const cf_kernel_table *kt)
{
    /* two columns are still cheaper as plain dots than packing a panel */
    return a->n > 2 && a->n > kt->small_n[a->wtype] && kt->gemm[a->wtype];
}

/* The columns laid out by the level's prep at p, one CF_PREP_BYTES_FOR(k)
 * apart, when it has one and they fit in bytes. */
static bool prep_columns(const cf_matmul_args *a, const cf_kernel_table *kt, unsigned char *p, size_t bytes)
{
    const size_t pb = CF_PREP_BYTES_FOR(a->k);
    if (!kt->prep[a->wtype] || a->k > CF_PREP_MAX_K || (size_t)a->n * pb > bytes)
        return false;
    for (int64_t c = 0; c < a->n; c++)
        kt->prep[a->wtype](a->k, (const char *)a->x + c * a->x_stride, p + c * pb);
    return true;
}

/* Rows [r0, r1) of a plain matrix. */
static void matmul_plain(const cf_matmul_args *a, const cf_kernel_table *kt, int64_t r0, int64_t r1)
{
    _Alignas(64) unsigned char p[2 * CF_PREP_BYTES];
    const bool tiles = tiled(a, kt), prepped = !tiles && prep_columns(a, kt, p, sizeof p);
    /* a small batch whose columns the prep cannot all hold (long rows)
     * costs less through the tiles than through the plain dots */
    if (tiles || (!prepped && a->n > 2 && kt->gemm[a->wtype])) {
        kt->gemm[a->wtype](a, r0, r1);
        return;
    }
    const char *w = a->w;
    const char *x = a->x;
    if (prepped) {
        const size_t pb = CF_PREP_BYTES_FOR(a->k);
        /* a few rows at a time for all columns while they are in L1 */
        int64_t step = a->n == 1 ? r1 - r0 : CF_DOT_ROWS;
        for (int64_t r = r0; r < r1; r += step)
            for (int64_t c = 0; c < a->n; c++)
                kt->dot_rows[a->wtype](a->k, w + r * a->w_stride, a->w_stride, r1 - r < step ? r1 - r : step,
                                       p + c * pb, a->y + c * a->y_stride + r);
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

/* Whole groups of an R16 matrix from w into y (row 0 of column 0). */
static void r16_groups(const cf_matmul_args *a, const cf_kernel_table *kt, const char *w, int64_t groups, float *y)
{
    const cf_type t = a->wtype;
    const char *x = a->x;
    if (tiled(a, kt) && a->k <= CF_GEMM_MAX_K) {
        cf_matmul_args g = *a;
        g.w = w;
        g.m = groups * R16_ROWS;
        g.y = y;
        kt->gemm[t](&g, 0, g.m);
        return;
    }
    const size_t gb = R16_ROWS * a->w_stride, pb = CF_PREP_BYTES_FOR(a->k);
    _Alignas(64) unsigned char p[2 * CF_PREP_BYTES];
    const bool prepped = prep_columns(a, kt, p, sizeof p);
    /* several columns a group at a time, while it is in L1 or L2 */
    int64_t step = a->n == 1 ? groups : 1;
    for (int64_t g = 0; g < groups; g += step)
        for (int64_t c = 0; c < a->n; c++)
            kt->dot_r16[t](a->k, w + g * gb, step, x + c * a->x_stride, prepped ? p + c * pb : NULL,
                           y + c * a->y_stride + g * R16_ROWS);
}

/* Rows [r0, r1) of an R16 matrix (y[i]: its row w_row + i): the whole
 * groups in the range by the kernels that read the layout, a group the
 * range cuts whole into a buffer (then the rows wanted), the plain rows
 * after the groups as a plain matrix. */
static void matmul_r16(const cf_matmul_args *a, const cf_kernel_table *kt, int64_t r0, int64_t r1)
{
    if (!kt->dot_r16[a->wtype])
        return;
    const char *w0 = (const char *)a->w - a->w_row * a->w_stride; /* the matrix's row 0 */
    const int64_t lo = a->w_row + r0, hi = a->w_row + r1, grouped = a->w_rows / R16_ROWS * R16_ROWS;
    const int64_t ghi = hi < grouped ? hi : grouped;
    for (int64_t g = lo / R16_ROWS * R16_ROWS; g < ghi;) {
        if (g >= lo && g + R16_ROWS <= ghi) {
            const int64_t end = ghi / R16_ROWS * R16_ROWS;
            r16_groups(a, kt, w0 + g * a->w_stride, (end - g) / R16_ROWS, a->y + (g - a->w_row));
            g = end;
            continue;
        }
        const int64_t s = g > lo ? g : lo, e = g + R16_ROWS < ghi ? g + R16_ROWS : ghi;
        float buf[R16_ROWS];
        cf_matmul_args one = *a;
        one.n = 1;
        one.y_stride = 0;
        for (int64_t c = 0; c < a->n; c++) {
            one.x = (const char *)a->x + c * a->x_stride;
            r16_groups(&one, kt, w0 + g * a->w_stride, 1, buf);
            for (int64_t r = s; r < e; r++)
                a->y[c * a->y_stride + (r - a->w_row)] = buf[r - g];
        }
        g += R16_ROWS;
    }
    const int64_t p0 = lo > grouped ? lo : grouped;
    if (p0 < hi) {
        cf_matmul_args plain = *a;
        plain.w = w0 + p0 * a->w_stride;
        plain.m = hi - p0;
        plain.y = a->y + (p0 - a->w_row);
        plain.w_layout = CF_LAYOUT_PLAIN;
        matmul_plain(&plain, kt, 0, plain.m);
    }
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
    if (a->w_layout == CF_LAYOUT_R16)
        matmul_r16(a, kt, r0, r1);
    else if (a->w_layout == CF_LAYOUT_PLAIN)
        matmul_plain(a, kt, r0, r1);
}
