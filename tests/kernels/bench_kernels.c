/* Kernel benchmark (not a test): per weight type, matvec GB/s (N = 1) for
 * 8192x2048 and 2048x8192 weights at 1 and 2 threads, for 256x2048
 * weights that stay in L2 (the kernel's compute ceiling), GEMM GFLOP/s at
 * N = 64 and 512, and the machine's STREAM-like read bandwidth.
 *   bench_kernels [--plain] [TYPE...]   (default: every computable type)
 *   bench_kernels --small-n [TYPE...]   the cost of N = 2..9 columns
 *     against one (a speculative check's batch), 8192x2048 from DRAM, one
 *     thread, in CPU time (which other programs' turns on a loaded
 *     machine do not add to)
 * Weights are in the layout a model load gives them (cf_layout_best), or
 * (--plain) as the file stores them.
 * Matvec weights are cycled through copies totalling > 128 MiB so they come
 * from DRAM, as in decoding a real model. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kt_util.h"

/* GB/s of summing a 512 MiB array with nth threads */
static double read_bandwidth(int nth)
{
    size_t n = (size_t)512 << 20 >> 3;
    uint64_t *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    double best = 0;
    for (int rep = 0; rep < 4; rep++) {
        uint64_t total = 0;
        double t0 = cf_now_ms();
        /* 8 independent sums so the adds never limit the loads */
#pragma omp parallel for num_threads(nth) reduction(+ : total) schedule(static)
        for (size_t i = 0; i < n; i += 8) {
            uint64_t s[8];
            for (int j = 0; j < 8; j++)
                s[j] = a[i + j];
            total += s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
        }
        double dt = (cf_now_ms() - t0) / 1e3;
        if (total == 42)
            puts("");
        if (n * 8 / dt / 1e9 > best)
            best = n * 8 / dt / 1e9;
    }
    free(a);
    return best;
}

static int plain_only;

typedef struct {
    cf_type t;
    cf_layout layout;
    int64_t m, k, n;
    int copies;
    char **w;
    char *x;
    float *y;
    size_t wrow, xrow;
} bench;

static void setup(bench *b, cf_type t, int64_t m, int64_t k, int64_t n, int copies)
{
    memset(b, 0, sizeof *b);
    b->t = t;
    b->m = m;
    b->k = k;
    b->n = n;
    b->copies = copies;
    cf_type xt = cf_vec_dot_type(t);
    b->wrow = cf_row_bytes(t, k);
    b->xrow = cf_row_bytes(xt, k);
    float *row = malloc(k * sizeof *row);
    b->w = malloc(copies * sizeof *b->w);
    b->w[0] = malloc(m * b->wrow);
    for (int64_t r = 0; r < m; r++) {
        /* a few distinct rows are enough to time; quantizing them all is slow */
        if (r < 64) {
            kt_fill_gauss(row, k, 0.02f);
            /* types confab cannot write (they need an importance matrix)
             * get random bits: the kernels' speed does not depend on them */
            if (cf_quantize_row(t, row, b->w[0] + r * b->wrow, k) != 0)
                for (size_t i = 0; i < b->wrow; i++)
                    b->w[0][r * b->wrow + i] = (char)kt_next();
        } else {
            memcpy(b->w[0] + r * b->wrow, b->w[0] + (r % 64) * b->wrow, b->wrow);
        }
    }
    b->layout = plain_only ? CF_LAYOUT_PLAIN : cf_layout_best(t);
    if (cf_repack(t, b->layout, b->w[0], k, m) != 0)
        b->layout = CF_LAYOUT_PLAIN;
    for (int c = 1; c < copies; c++) {
        b->w[c] = malloc(m * b->wrow);
        memcpy(b->w[c], b->w[0], m * b->wrow);
    }
    b->x = malloc(n * b->xrow);
    for (int64_t c = 0; c < n; c++) {
        kt_fill_gauss(row, k, 1.0f);
        cf_quantize_row(xt, row, b->x + c * b->xrow, k);
    }
    b->y = malloc(n * m * sizeof(float));
    free(row);
}

static void teardown(bench *b)
{
    for (int c = 0; c < b->copies; c++)
        free(b->w[c]);
    free(b->w);
    free(b->x);
    free(b->y);
}

/* seconds per multiply, best of a few timed runs of >= 0.15 s */
static double time_it(bench *b, int nth)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int iters = 0;
        double t0 = cf_now_ms(), dt;
        do {
            cf_matmul_args a = {.wtype = b->t, .w = b->w[iters % b->copies], .w_stride = b->wrow, .m = b->m,
                                .k = b->k, .n = b->n, .x = b->x, .x_stride = b->xrow, .y = b->y,
                                .y_stride = (size_t)b->m, .w_layout = b->layout, .w_rows = b->m};
#pragma omp parallel num_threads(nth)
            cf_matmul(&a, omp_get_thread_num(), omp_get_num_threads());
            iters++;
            dt = (cf_now_ms() - t0) / 1e3;
        } while (dt < 0.15 || iters < 2);
        if (dt / iters < best)
            best = dt / iters;
    }
    return best;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds per multiply of b at N = n on this thread, best of 3 runs of
 * >= 0.2 s */
static double cpu_time_it(bench *b, int64_t n)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int iters = 0;
        double t0 = cpu_s(), dt;
        do {
            cf_matmul_args a = {.wtype = b->t, .w = b->w[iters % b->copies], .w_stride = b->wrow, .m = b->m,
                                .k = b->k, .n = n, .x = b->x, .x_stride = b->xrow, .y = b->y,
                                .y_stride = (size_t)b->m, .w_layout = b->layout, .w_rows = b->m};
            cf_matmul(&a, 0, 1);
            iters++;
            dt = cpu_s() - t0;
        } while (dt < 0.2 || iters < 2);
        if (dt / iters < best)
            best = dt / iters;
    }
    return best;
}

static int small_n(const cf_type *types, int nt)
{
    printf("ISA %s; 8192x2048, 1 thread, CPU ms per multiply at N = 1, then x that at N = 2..9\n",
           cf_isa_name(cf_isa_active()));
    for (int i = 0; i < nt; i++) {
        bench b;
        const size_t bytes = cf_row_bytes(types[i], 2048) * 8192;
        setup(&b, types[i], 8192, 2048, 9, (int)((128u << 20) / bytes) + 1);
        const double one = cpu_time_it(&b, 1);
        printf("%-7s %7.2f ms |", cf_type_name(types[i]), one * 1e3);
        for (int64_t n = 2; n <= 9; n++)
            printf(" %5.2f", cpu_time_it(&b, n) / one);
        printf("\n");
        fflush(stdout);
        teardown(&b);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int small = 0;
    cf_type types[CF_TYPE_COUNT];
    int nt = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plain")) {
            plain_only = 1;
            continue;
        }
        if (!strcmp(argv[i], "--small-n")) {
            small = 1;
            continue;
        }
        int t = cf_type_from_name(argv[i]);
        if (t < 0) {
            fprintf(stderr, "unknown type %s\n", argv[i]);
            return 2;
        }
        types[nt++] = (cf_type)t;
    }
    if (!nt)
        for (int i = 0; i < KT_N_WEIGHT_TYPES; i++)
            types[nt++] = kt_weight_types[i];
    kt_seed(1);
    if (small)
        return small_n(types, nt);
    double bw1 = read_bandwidth(1), bw2 = read_bandwidth(2);
    printf("ISA %s; read bandwidth: %.1f GB/s (1 thread), %.1f GB/s (2 threads)\n",
           cf_isa_name(cf_isa_active()), bw1, bw2);
    printf("%-5s | matvec GB/s (%% of read bw)      8192x2048        2048x8192   | in L2 | GEMM GFLOP/s "
           "8192x2048, 2 threads\n", "type");
    printf("%-5s | %16s %16s %16s %16s | %5s | %8s %8s\n", "", "1 thr", "2 thr", "1 thr", "2 thr", "1 thr",
           "N=64", "N=512");
    for (int i = 0; i < nt; i++) {
        cf_type t = types[i];
        const int repacked = !plain_only && cf_layout_best(t) != CF_LAYOUT_PLAIN;
        const int pad = 5 - (int)strlen(cf_type_name(t));
        printf("%s%-*s |", cf_type_name(t), pad > 0 ? pad : 0, repacked ? "*" : "");
        static const int64_t shapes[2][2] = {{8192, 2048}, {2048, 8192}};
        for (int s = 0; s < 2; s++) {
            bench b;
            size_t bytes = cf_row_bytes(t, shapes[s][1]) * shapes[s][0];
            int copies = (int)((128u << 20) / bytes) + 1;
            setup(&b, t, shapes[s][0], shapes[s][1], 1, copies);
            for (int nth = 1; nth <= 2; nth++) {
                double gbs = bytes / time_it(&b, nth) / 1e9;
                printf(" %7.1f (%3.0f%%)", gbs, 100 * gbs / (nth == 1 ? bw1 : bw2));
            }
            teardown(&b);
            fflush(stdout);
        }
        bench l2;
        setup(&l2, t, 256, 2048, 1, 1);
        printf(" | %5.1f |", cf_row_bytes(t, 2048) * 256 / time_it(&l2, 1) / 1e9);
        teardown(&l2);
        for (int n = 64; n <= 512; n *= 8) {
            bench b;
            setup(&b, t, 8192, 2048, n, 1);
            double flop = 2.0 * b.m * b.k * n;
            printf(" %8.1f", flop / time_it(&b, 2) / 1e9);
            teardown(&b);
            fflush(stdout);
        }
        printf("\n");
    }
    printf("* weights repacked as a model load does (cf_layout_best; --plain: as stored)\n");
    return 0;
}
