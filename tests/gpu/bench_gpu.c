/* GPU kernel benchmark (not a test): per weight type, the decode shader's
 * GB/s of weights read (n = 1, a 4096 x 4096 and a 14336 x 4096 matrix)
 * and the tiled shader's GFLOP/s (n = 512), each timed as one pass of
 * many dispatches so that the submission's cost is shared out.
 *   bench_gpu [--device N] [TYPE...]   (default: the 16 types the shaders take)
 * On lavapipe the figures are the CPU's, not a GPU's: correctness runs
 * only. */
#include "gpu_test.h"

#include "confab/kernels.h"

static const cf_type all[] = {
    CF_TYPE_F32,  CF_TYPE_F16,  CF_TYPE_BF16, CF_TYPE_Q4_0, CF_TYPE_Q4_1, CF_TYPE_Q5_0,   CF_TYPE_Q5_1,   CF_TYPE_Q8_0,
    CF_TYPE_Q2_K, CF_TYPE_Q3_K, CF_TYPE_Q4_K, CF_TYPE_Q5_K, CF_TYPE_Q6_K, CF_TYPE_IQ4_NL, CF_TYPE_IQ4_XS, CF_TYPE_MXFP4,
};

/* Seconds a pass of reps matmuls takes, the best of three. */
static double time_pass(cf_gpu *g, cf_type t, cf_gpu_buf *w, int64_t rows, int64_t k, cf_gpu_buf *x, int n,
                        cf_gpu_buf *y, int reps)
{
    double best = 1e30;
    for (int trial = 0; trial < 3; trial++) {
        cf_gpu_begin(g);
        for (int r = 0; r < reps; r++)
            cf_gpu_matmul(g, t, view(w), rows, k, view(x), n, view(y));
        const double t0 = cf_now_ms();
        if (test_submit(g))
            exit(1);
        const double s = (cf_now_ms() - t0) / 1e3;
        best = s < best ? s : best;
    }
    return best;
}

/* Weights of random rows, quantized (one row copied: the values do not
 * change the time). */
static cf_gpu_buf *weights(cf_gpu *g, cf_type t, int64_t rows, int64_t k)
{
    const size_t rb = cf_row_bytes(t, k);
    uint8_t *w = malloc(rb * (size_t)rows);
    float *row = malloc(sizeof(float) * (size_t)k);
    test_fill(row, (size_t)k, 1u, 1.0f);
    cf_quantize_row(t, row, w, k);
    for (int64_t r = 1; r < rows; r++)
        memcpy(w + (size_t)r * rb, w, rb);
    cf_gpu_buf *b = test_upload(g, w, rb * (size_t)rows);
    free(w);
    free(row);
    return b;
}

int main(int argc, char **argv)
{
    int device = -1, nt = 0;
    cf_type types[sizeof all / sizeof all[0]];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = atoi(argv[++i]);
        else if (cf_type_from_name(argv[i]) >= 0 && nt < (int)(sizeof types / sizeof types[0]))
            types[nt++] = (cf_type)cf_type_from_name(argv[i]);
        else {
            fprintf(stderr, "usage: bench_gpu [--device N] [TYPE...]\n");
            return 2;
        }
    }
    if (!nt)
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            types[nt++] = all[i];
    cf_err err = {0};
    if (cf_gpu_count(&err) == 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    cf_gpu *g = cf_gpu_open(device, &err);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const cf_gpu_info *info = cf_gpu_device(g);
    printf("%s (%s, %.1f GiB, subgroup %u%s)\n", info->name, info->type, (double)info->mem_bytes / (1 << 30),
           info->subgroup, info->coopmat ? ", cooperative matrices" : "");
    if (!strcmp(info->type, "cpu"))
        printf("a CPU implementation: these figures are the CPU's, not a GPU's\n");
    const int64_t K = 4096, R1 = 4096, R2 = 14336, NB = 512;
    float *xh = malloc(sizeof(float) * (size_t)(NB * K));
    test_fill(xh, (size_t)(NB * K), 2u, 1.0f);
    cf_gpu_buf *x = test_upload(g, xh, sizeof(float) * (size_t)(NB * K));
    cf_gpu_buf *y = test_upload(g, NULL, sizeof(float) * (size_t)(NB * R2));
    const bool slow = !strcmp(info->type, "cpu");
    printf("%-8s %14s %14s %16s\n", "type", "4096x4096 GB/s", "14336x4096 GB/s", "n=512 GFLOP/s");
    for (int i = 0; i < nt; i++) {
        const cf_type t = types[i];
        const size_t bytes = cf_row_bytes(t, K) * (size_t)R2;
        if (bytes > cf_gpu_max_buffer(g)) {
            printf("%-8s (a %zu-byte matrix is past the device's buffer limit)\n", cf_type_name((uint32_t)t), bytes);
            continue;
        }
        cf_gpu_buf *w = weights(g, t, R2, K);
        const int reps = slow ? 1 : 50;
        const double s1 = time_pass(g, t, w, R1, K, x, 1, y, reps), s2 = time_pass(g, t, w, R2, K, x, 1, y, reps);
        const double s3 = time_pass(g, t, w, R1, K, x, slow ? 64 : (int)NB, y, slow ? 1 : 10);
        const double gb1 = (double)cf_row_bytes(t, K) * R1 * reps / s1 / 1e9;
        const double gb2 = (double)cf_row_bytes(t, K) * R2 * reps / s2 / 1e9;
        const double gf = 2.0 * (double)R1 * K * (slow ? 64 : NB) * (slow ? 1 : 10) / s3 / 1e9;
        printf("%-8s %14.3g %14.3g %16.3g\n", cf_type_name((uint32_t)t), gb1, gb2, gf);
        cf_gpu_free(g, w);
    }
    cf_gpu_free(g, x);
    cf_gpu_free(g, y);
    free(xh);
    cf_gpu_close(g);
    return 0;
}
