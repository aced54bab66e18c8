/* cf_matmul: bit-identical for any thread count (1, 2, 3, and a real
 * OpenMP region) and bit for bit the per-row cf_vec_dot for every N (the
 * tiled kernels follow the dots' canonical order), for shapes with
 * remainders in every tile dimension, on every ISA. */
#include <omp.h>
#include <string.h>

#include "../harness.h"
#include "kt_util.h"

typedef struct {
    cf_matmul_args a;
    float *wf, *xf;
} problem;

static void run(const problem *p, float *y, int nth, int parallel)
{
    cf_matmul_args a = p->a;
    a.y = y;
    if (parallel) {
#pragma omp parallel num_threads(nth)
        cf_matmul(&a, omp_get_thread_num(), omp_get_num_threads());
    } else {
        for (int ith = 0; ith < nth; ith++)
            cf_matmul(&a, ith, nth);
    }
}

static void test_shape(cf_type t, int64_t m, int64_t k, int64_t n)
{
    cf_type xt = cf_vec_dot_type(t);
    size_t wrow = cf_row_bytes(t, k), xrow = cf_row_bytes(xt, k);
    problem p;
    memset(&p, 0, sizeof p);
    p.a.wtype = t;
    p.a.m = m;
    p.a.k = k;
    p.a.n = n;
    p.a.w_stride = wrow + 16; /* strides larger than a row */
    p.a.x_stride = xrow + 8;
    p.a.y_stride = (size_t)m + 3;
    char *w = calloc((size_t)m, p.a.w_stride), *x = calloc((size_t)n, p.a.x_stride);
    float *row = malloc(k * sizeof *row);
    for (int64_t r = 0; r < m; r++) {
        kt_fill_gauss(row, k, 0.05f);
        cf_quantize_row(t, row, w + r * p.a.w_stride, k);
    }
    for (int64_t c = 0; c < n; c++) {
        kt_fill_gauss(row, k, 1.0f);
        cf_quantize_row(xt, row, x + c * p.a.x_stride, k);
    }
    p.a.w = w;
    p.a.x = x;
    size_t ny = (size_t)n * p.a.y_stride;
    float *y1 = malloc(ny * sizeof(float)), *y2 = malloc(ny * sizeof(float));
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        memset(y1, 0, ny * sizeof(float));
        run(&p, y1, 1, 0);
        for (int nth = 2; nth <= 4; nth++) {
            memset(y2, 0, ny * sizeof(float));
            run(&p, y2, nth == 4 ? 2 : nth, nth == 4);
            CHECKF(!memcmp(y1, y2, ny * sizeof(float)), "%s %s %lldx%lldx%lld: nth=%d differs",
                   cf_isa_name(isa), cf_type_name(t), (long long)m, (long long)k, (long long)n,
                   nth == 4 ? 2 : nth);
        }
        int bad = 0;
        for (int64_t c = 0; c < n; c++)
            for (int64_t r = 0; r < m; r++) {
                const void *wr = w + r * p.a.w_stride, *xr = x + c * p.a.x_stride;
                float d = cf_vec_dot(t, k, wr, xr);
                float got = y1[c * p.a.y_stride + r];
                if (memcmp(&d, &got, sizeof d) != 0)
                    bad++;
            }
        CHECKF(bad == 0, "%s %s %lldx%lldx%lld: %d outputs differ from vec_dot", cf_isa_name(isa),
               cf_type_name(t), (long long)m, (long long)k, (long long)n, bad);
        /* the padding between rows of Y is never written */
        for (int64_t c = 0; c < n; c++)
            for (int64_t r = m; r < (int64_t)p.a.y_stride; r++)
                CHECK(y1[c * p.a.y_stride + r] == 0);
    }
    free(w);
    free(x);
    free(row);
    free(y1);
    free(y2);
}

/* A matrix that cf_repack rearranged (rows contiguous): rows [row0, row0 +
 * cnt) of it, as a caller multiplies a slab of a weight, give bit for bit
 * the plain rows' cf_vec_dot on every ISA and thread count; every row
 * unpacks back to its plain bytes. */
static void test_layout(cf_type t, cf_layout layout, int64_t m, int64_t k, int64_t n, int64_t row0, int64_t cnt)
{
    cf_type xt = cf_vec_dot_type(t);
    size_t wrow = cf_row_bytes(t, k), xrow = cf_row_bytes(xt, k);
    char *plain = malloc((size_t)m * wrow), *packed = malloc((size_t)m * wrow), *x = malloc((size_t)n * xrow);
    char *back = malloc(wrow);
    float *row = malloc(k * sizeof *row);
    for (int64_t r = 0; r < m; r++) {
        kt_fill_gauss(row, k, 0.05f);
        cf_quantize_row(t, row, plain + r * wrow, k);
    }
    for (int64_t c = 0; c < n; c++) {
        kt_fill_gauss(row, k, 1.0f);
        cf_quantize_row(xt, row, x + c * xrow, k);
    }
    memcpy(packed, plain, (size_t)m * wrow);
    CHECK(cf_repack(t, layout, packed, k, m) == 0);
    for (int64_t r = 0; r < m; r++) {
        CHECK(cf_unpack_row(t, layout, packed, k, m, r, back) == 0);
        CHECKF(!memcmp(back, plain + r * wrow, wrow), "%s %lldx%lld: row %lld unpacks wrong", cf_type_name(t),
               (long long)m, (long long)k, (long long)r);
    }
    problem p;
    memset(&p, 0, sizeof p);
    const size_t ys = (size_t)cnt + 3;
    p.a = (cf_matmul_args){.wtype = t, .w = packed + row0 * wrow, .w_stride = wrow, .m = cnt, .k = k, .n = n,
                           .x = x, .x_stride = xrow, .y_stride = ys, .w_layout = layout, .w_row = row0,
                           .w_rows = m};
    float *y = malloc(n * ys * sizeof *y);
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        for (int nth = 1; nth <= 4; nth++) {
            memset(y, 0, n * ys * sizeof *y);
            run(&p, y, nth == 4 ? 2 : nth, nth == 4);
            int bad = 0, spill = 0;
            for (int64_t c = 0; c < n; c++) {
                for (int64_t r = 0; r < cnt; r++) {
                    float d = cf_vec_dot(t, k, plain + (row0 + r) * wrow, x + c * xrow);
                    bad += memcmp(&d, &y[c * ys + r], sizeof d) != 0;
                }
                for (size_t r = (size_t)cnt; r < ys; r++)
                    spill += y[c * ys + r] != 0;
            }
            CHECKF(bad == 0 && spill == 0,
                   "%s %s rows %lld..%lld of %lldx%lld, N=%lld, nth=%d: %d outputs differ from vec_dot, %d "
                   "written past the rows",
                   cf_isa_name(isa), cf_type_name(t), (long long)row0, (long long)(row0 + cnt), (long long)m,
                   (long long)k, (long long)n, nth == 4 ? 2 : nth, bad, spill);
        }
    }
    free(plain);
    free(packed);
    free(x);
    free(back);
    free(row);
    free(y);
}

static void test_layouts(cf_type t)
{
    const cf_layout l = CF_LAYOUT_R16;
    const int64_t b = cf_type_get(t)->blck_size;
    /* every length of a short last group of 16 blocks, whole groups only
     * and with plain rows after them, decode and prefill */
    for (int64_t units = 1; units <= 40; units++)
        for (int64_t n = 1; n <= 3; n++)
            test_layout(t, l, units % 2 ? 37 : 32, b * units, n, 0, units % 2 ? 37 : 32);
    /* the small batches that go group by group (a level's small_n) and
     * the first ones past them, prepared and (K above a prep) not */
    for (int64_t n = 4; n <= 10; n++)
        test_layout(t, l, 53, 33 * b, n, 5, 40);
    test_layout(t, l, 37, 16384 + 512, 5, 3, 34);
    static const int64_t ns[] = {1, 2, 3, 17};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        test_layout(t, l, 64, 64 * b, ns[i], 0, 64);
        test_layout(t, l, 48, 18 * b, ns[i], 0, 48);
        test_layout(t, l, 5, 16 * b, ns[i], 0, 5);           /* no whole group */
        test_layout(t, l, 53, 33 * b, ns[i], 5, 40);         /* cut groups at both ends */
        test_layout(t, l, 53, 33 * b, ns[i], 16, 16);        /* one group */
        test_layout(t, l, 53, 33 * b, ns[i], 19, 3);         /* inside one group */
        test_layout(t, l, 53, 33 * b, ns[i], 40, 13);        /* a cut group, then plain rows */
        test_layout(t, l, 37, 16384 + 512, ns[i], 3, 34);    /* longer than a panel or a prep */
    }
}

/* outputs of cf_matmul (2 threads) that differ from cf_vec_dot */
static int wrong(const cf_matmul_args *a, const char *w, const char *x)
{
    float *y = calloc((size_t)(a->n * a->m), sizeof *y);
    cf_matmul_args b = *a;
    b.x = x;
    b.y = y;
    for (int ith = 0; ith < 2; ith++)
        cf_matmul(&b, ith, 2);
    int bad = 0;
    for (int64_t c = 0; c < a->n; c++)
        for (int64_t r = 0; r < a->m; r++) {
            const float d = cf_vec_dot(a->wtype, a->k, w + r * a->w_stride, x + c * a->x_stride);
            bad += memcmp(&d, &y[c * a->m + r], sizeof d) != 0;
        }
    free(y);
    return bad;
}

/* x_serial: what a thread keeps from one call is used again only for the
 * same serial and the same activations (another buffer, or the same one
 * rewritten under a new serial, is read anew) */
static void test_serial(cf_type t)
{
    const cf_type xt = cf_vec_dot_type(t);
    const int64_t m = 40, k = 2048, n = 9;
    const size_t wrow = cf_row_bytes(t, k), xrow = cf_row_bytes(xt, k);
    char *w = malloc((size_t)m * wrow), *x1 = malloc((size_t)n * xrow), *x2 = malloc((size_t)n * xrow);
    float *row = malloc((size_t)k * sizeof *row);
    for (int64_t r = 0; r < m; r++) {
        kt_fill_gauss(row, k, 0.05f);
        cf_quantize_row(t, row, w + r * wrow, k);
    }
    char *xs[2] = {x1, x2};
    for (int i = 0; i < 2; i++)
        for (int64_t c = 0; c < n; c++) {
            kt_fill_gauss(row, k, 1.0f + (float)i);
            cf_quantize_row(xt, row, xs[i] + c * xrow, k);
        }
    cf_matmul_args a = {.wtype = t, .w = w, .w_stride = wrow, .m = m, .k = k, .n = n, .x_stride = xrow,
                        .y_stride = (size_t)m, .x_serial = 5};
    CHECKF(wrong(&a, w, x1) == 0, "%s: serial 5, first activations", cf_type_name(t));
    CHECKF(wrong(&a, w, x1) == 0, "%s: serial 5 again", cf_type_name(t));
    CHECKF(wrong(&a, w, x2) == 0, "%s: serial 5, other activations", cf_type_name(t));
    memcpy(x1, x2, (size_t)n * xrow);
    for (int64_t c = 0; c < n; c++) { /* x1 rewritten: new values, new serial */
        kt_fill_gauss(row, k, 3.0f);
        cf_quantize_row(xt, row, x1 + c * xrow, k);
    }
    a.x_serial = 6;
    CHECKF(wrong(&a, w, x1) == 0, "%s: serial 6, the first buffer rewritten", cf_type_name(t));
    free(w);
    free(x1);
    free(x2);
    free(row);
}

/* The types with a CF_LAYOUT_R16 GEMV. */
static const cf_type r16_types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_IQ4_NL,
                                    CF_TYPE_Q5_0, CF_TYPE_Q4_K, CF_TYPE_Q6_K};

/* The GEMVs (N = 1 and 2) of every type, in both layouts: what
 * `test_matmul gemv` runs, once with their fetches ahead and once without
 * ($CONFAB_FETCH_AHEAD), since a CPU runs only one of the two by itself. */
static void test_gemvs(void)
{
    for (int i = 0; i < KT_N_WEIGHT_TYPES; i++) {
        cf_type t = kt_weight_types[i];
        static const int64_t units[] = {1, 17, 33}; /* groups of 16 and short last ones */
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
            for (int64_t n = 1; n <= 2; n++)
                test_shape(t, 37, units[u] * cf_type_get(t)->blck_size, n);
    }
    for (size_t i = 0; i < sizeof r16_types / sizeof r16_types[0]; i++)
        for (int64_t n = 1; n <= 2; n++) {
            const int64_t b = cf_type_get(r16_types[i])->blck_size;
            test_layout(r16_types[i], CF_LAYOUT_R16, 37, 33 * b, n, 0, 37);
            test_layout(r16_types[i], CF_LAYOUT_R16, 48, 18 * b, n, 0, 48);
        }
}

/* The types with NEON GEMM tiles (gemm_neon.inc, the dotprod and i8mm
 * levels). */
static const cf_type neon_gemm_types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q5_0, CF_TYPE_IQ4_NL, CF_TYPE_Q4_1,
                                          CF_TYPE_Q5_1, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K};

/* Their tiles: every column count a group of 4 (two SMMLA pairs) can end
 * with, 13 rows (a short last panel of 8), and units past one round of 16
 * residues (33 blocks, 17 super-blocks) against short ones. */
static void test_neon_tiles(void)
{
    for (size_t i = 0; i < sizeof neon_gemm_types / sizeof neon_gemm_types[0]; i++) {
        const cf_type t = neon_gemm_types[i];
        const int64_t b = cf_type_get(t)->blck_size;
        for (int64_t n = 3; n <= 17; n++)
            test_shape(t, 13, (b == 256 ? 2 + n % 2 : 16 + n % 2 * 17) * b, n);
        test_shape(t, 9, 17 * b, 6);
    }
    /* the dotprod and i8mm levels load Q8_0, Q4_0, IQ4_NL and Q4_K as R16
     * (their decoding kernels read it, as the tiles do) */
    static const cf_type r16_neon[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_IQ4_NL, CF_TYPE_Q4_K};
    for (size_t i = 0; i < sizeof r16_neon / sizeof r16_neon[0]; i++) {
        const cf_type t = r16_neon[i];
        for (int isa = CF_ISA_NEON; isa <= CF_ISA_I8MM; isa++)
            if ((int)cf_isa_set((cf_isa)isa) == isa)
                CHECKF(cf_layout_best(t) == (isa == CF_ISA_NEON ? CF_LAYOUT_PLAIN : CF_LAYOUT_R16), "%s: %s's layout",
                       cf_isa_name((cf_isa)isa), cf_type_name(t));
        test_layout(t, CF_LAYOUT_R16, 37, (t == CF_TYPE_Q4_K ? 3 : 33) * cf_type_get(t)->blck_size, 2, 0, 37);
    }
    cf_isa_set(cf_isa_best());
}

/* Emulated (test_emulated): every type at every level and thread count,
 * decode and prefill, a short last group of 16 units, and the R16 layouts
 * whole and cut, in the fewest shapes that have them (the NEON levels'
 * tiles as test_neon_tiles says; what the tiles and layouts of x86 do the
 * native run checks at full size). */
static int test_emulated_shapes(void)
{
    test_neon_tiles();
    for (int i = 0; i < KT_N_WEIGHT_TYPES; i++) {
        const cf_type t = kt_weight_types[i];
        const int64_t b = cf_type_get(t)->blck_size, k = b == 256 ? 512 : 160;
        test_shape(t, 37, k, 1);
        test_shape(t, 37, k, 7);
        test_shape(t, 11, 17 * b, 2);
    }
    test_serial(CF_TYPE_Q8_0);
    for (size_t i = 0; i < sizeof r16_types / sizeof r16_types[0]; i++) {
        const int64_t b = cf_type_get(r16_types[i])->blck_size;
        test_layout(r16_types[i], CF_LAYOUT_R16, 37, 17 * b, 1, 0, 37);
        test_layout(r16_types[i], CF_LAYOUT_R16, 53, 33 * b, 3, 5, 40);
    }
    return test_summary("kernels_matmul (emulated)");
}

int main(int argc, char **argv)
{
    kt_seed(7);
    if (argc > 1 && !strcmp(argv[1], "gemv")) {
        test_gemvs();
        return test_summary("kernels_matmul gemv");
    }
    if (test_emulated())
        return test_emulated_shapes();
    static const int64_t ns[] = {1, 2, 7, 64};
    for (int i = 0; i < KT_N_WEIGHT_TYPES; i++) {
        cf_type t = kt_weight_types[i];
        int64_t k = cf_type_get(t)->blck_size == 256 ? 512 : 160;
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
            test_shape(t, 37, k, ns[j]);
        test_shape(t, 16, 1024, 9);
        if (cf_type_get(t)->blck_size > 1)
            test_shape(t, 20, 8448, 130); /* several unpack chunks */
        if (cf_type_get(t)->blck_size == 32)
            test_shape(t, 3, 16384, 260); /* several column chunks */
        if (cf_type_get(t)->blck_size == 256)
            test_shape(t, 17, 16640, 4); /* longer than a panel: the dot products */
        test_shape(t, 5, k, 3);
        /* every N from the GEMVs through the small batches (row by row on
         * some levels) to two column groups of the tiles, on rows that
         * fill one half of a panel's last 8 rows and part of the other */
        for (int64_t n = 1; n <= 17; n++)
            test_shape(t, 29, k, n);
        /* small batches whose preps just fill the buffer, and do not */
        test_shape(t, 29, 8192, 4);
        test_shape(t, 29, 8192, 5);
        /* decode: rows in groups and one by one, every length of a short
         * last group of 16 units */
        for (int64_t units = 1; units <= 33; units++)
            for (int64_t n = 1; n <= 2; n++)
                test_shape(t, 11, units * cf_type_get(t)->blck_size, n);
    }
    static const cf_type serial_types[] = {CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_Q4_1, CF_TYPE_Q4_K};
    for (size_t i = 0; i < sizeof serial_types / sizeof serial_types[0]; i++)
        test_serial(serial_types[i]);
    CHECK(cf_repack(CF_TYPE_Q5_K, CF_LAYOUT_R16, NULL, 256, 16) == -1);
    for (size_t i = 0; i < sizeof r16_types / sizeof r16_types[0]; i++)
        test_layouts(r16_types[i]);
    return test_summary("kernels_matmul");
}
