/* Shared by the GPU tests: the device (or a skip when there is none),
 * buffers filled from the host, and seeded random values. */
#ifndef CONFAB_TESTS_GPU_TEST_H
#define CONFAB_TESTS_GPU_TEST_H

#include <math.h>

#include "confab/gpu.h"
#include "harness.h"

/* The first device, or exit "skipped" with the reason when there is none. */
static inline cf_gpu *test_gpu(void)
{
    cf_err err = {0};
    if (cf_gpu_count(&err) == 0) {
        fprintf(stderr, "skipped: %s\n", err.msg);
        exit(TEST_SKIP);
    }
    cf_gpu *g = cf_gpu_open(-1, &err);
    if (!g) {
        fprintf(stderr, "cf_gpu_open: %s\n", err.msg);
        exit(1);
    }
    fprintf(stderr, "device: %s (%s)\n", cf_gpu_device(g)->name, cf_gpu_device(g)->type);
    return g;
}

/* A device buffer holding bytes bytes of src (zeros when src is NULL). */
static inline cf_gpu_buf *test_upload(cf_gpu *g, const void *src, size_t bytes)
{
    cf_err err = {0};
    cf_gpu_buf *b = cf_gpu_alloc(g, bytes, &err);
    if (!b) {
        fprintf(stderr, "cf_gpu_alloc: %s\n", err.msg);
        exit(1);
    }
    void *zero = src ? NULL : calloc(1, bytes);
    if (cf_gpu_write(g, (cf_gpu_view){b, 0}, src ? src : zero, bytes, &err)) {
        fprintf(stderr, "cf_gpu_write: %s\n", err.msg);
        exit(1);
    }
    free(zero);
    return b;
}

static inline void test_download(cf_gpu *g, cf_gpu_buf *b, void *dst, size_t bytes)
{
    cf_err err = {0};
    if (cf_gpu_read(g, (cf_gpu_view){b, 0}, dst, bytes, &err)) {
        fprintf(stderr, "cf_gpu_read: %s\n", err.msg);
        exit(1);
    }
}

static inline int test_submit(cf_gpu *g)
{
    cf_err err = {0};
    int rc = cf_gpu_submit(g, &err);
    if (rc)
        fprintf(stderr, "cf_gpu_submit: %s\n", err.msg);
    return rc;
}

static inline float test_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static inline void test_fill(float *v, size_t n, unsigned seed, float scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = test_rand(&seed) * scale;
}

/* How many of got differ from want by more than tol times want's largest
 * magnitude (the first few said on stderr, named what). */
static inline int close_all(const float *got, const float *want, size_t n, float tol, const char *what)
{
    float big = 0;
    for (size_t i = 0; i < n; i++)
        big = fmaxf(big, fabsf(want[i]));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol * big) && bad++ < 3)
            fprintf(stderr, "  %s [%zu]: %.9g, want %.9g\n", what, i, got[i], want[i]);
    return bad;
}

static inline cf_gpu_view view(cf_gpu_buf *b)
{
    return (cf_gpu_view){b, 0};
}

#endif
