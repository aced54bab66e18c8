/* quantize -> dequantize round trips of every type, within a bound on the
 * RMS error relative to the data's RMS, and the F16/BF16 conversions. */
#include <string.h>

#include "../harness.h"
#include "kt_util.h"

static double rel_rms_err(cf_type t, const float *x, int64_t k)
{
    void *q = kt_quantize(t, x, k);
    float *y = malloc((size_t)k * sizeof *y);
    CHECK(cf_dequantize_row(t, q, y, k) == 0);
    double e = 0, s = 0;
    for (int64_t i = 0; i < k; i++) {
        e += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        s += (double)x[i] * x[i];
    }
    free(q);
    free(y);
    return s > 0 ? sqrt(e / s) : sqrt(e);
}

static void test_type(cf_type t)
{
    const int64_t k = 4096;
    float *x = malloc(k * sizeof *x);
    double worst = 0;
    for (int seed = 1; seed <= 8; seed++) {
        kt_seed((uint64_t)seed * 131 + t);
        kt_fill_gauss(x, k, seed == 3 ? 1e-3f : seed == 4 ? 50.0f : 1.0f);
        double e = rel_rms_err(t, x, k);
        if (e > worst)
            worst = e;
    }
    fprintf(stderr, "  %-5s rms rel err %.5f (bound %.4f)\n", cf_type_name(t), worst, kt_err_bound(t));
    CHECKF(worst <= kt_err_bound(t), "%s: %g > %g", cf_type_name(t), worst, kt_err_bound(t));

    /* all zeros: exact zeros back */
    memset(x, 0, k * sizeof *x);
    CHECKF(rel_rms_err(t, x, k) == 0, "%s zeros", cf_type_name(t));

    /* one huge outlier per row and a negative maximum: finite, and the
     * outlier itself is reproduced to the type's precision */
    kt_seed(99 + t);
    kt_fill_gauss(x, k, 1.0f);
    x[77] = 1000.0f;
    x[300] = -2000.0f;
    void *q = kt_quantize(t, x, k);
    float *y = malloc(k * sizeof *y);
    cf_dequantize_row(t, q, y, k);
    int finite = 1;
    for (int64_t i = 0; i < k; i++)
        finite &= isfinite(y[i]) != 0;
    CHECKF(finite, "%s outlier: non-finite output", cf_type_name(t));
    CHECKF(fabsf(y[77] - 1000.0f) <= 1000.0f * (kt_err_bound(t) + 1e-3) * 2,
           "%s outlier: %g", cf_type_name(t), y[77]);
    CHECKF(fabsf(y[300] + 2000.0f) <= 2000.0f * (kt_err_bound(t) + 1e-3) * 2,
           "%s negative max: %g", cf_type_name(t), y[300]);
    /* all-negative rows (the min/offset types must keep the min) */
    kt_fill_gauss(x, k, 1.0f);
    for (int64_t i = 0; i < k; i++)
        x[i] = -1.0f - fabsf(x[i]);
    CHECKF(rel_rms_err(t, x, k) <= 1.5 * kt_err_bound(t), "%s all-negative", cf_type_name(t));
    free(q);
    free(y);
    free(x);
}

static void test_half(void)
{
    /* every F16 value goes to F32 and back unchanged (NaNs stay NaN) */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = cf_f16_to_f32((uint16_t)h);
        uint16_t back = cf_f32_to_f16(f);
        if (isnan(f) ? !isnan(cf_f16_to_f32(back)) : back != h)
            bad++;
    }
    CHECKF(bad == 0, "%d f16 values do not round-trip", bad);
    CHECK(cf_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(cf_f32_to_f16(65520.0f) == 0x7c00);   /* tie at max rounds to inf */
    CHECK(cf_f32_to_f16(65519.0f) == 0x7bff);
    CHECK(cf_f32_to_f16(0x1p-25f) == 0x0000);   /* tie to even: 0 */
    CHECK(cf_f32_to_f16(0x1.8p-24f) == 0x0002); /* 1.5 units -> 2 */
    CHECK(cf_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);           /* tie, even */
    CHECK(cf_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02);       /* tie, up */
    CHECK(cf_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);           /* tie, even */
    CHECK(cf_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);
    CHECK(isnan(cf_bf16_to_f32(cf_f32_to_bf16(NAN))));

    /* the row conversions (SIMD where available) give the scalar bits */
    enum { N = 4099 };
    static float x[N], y[N], z[N];
    static uint16_t h[N], b[N];
    kt_seed(5);
    for (int i = 0; i < N; i++) {
        uint32_t u = (uint32_t)kt_next();
        if (i % 3 == 0)
            u &= 0x87ffffffu; /* small exponents: subnormal halves */
        memcpy(&x[i], &u, 4);
    }
    x[0] = NAN;
    x[1] = INFINITY;
    x[2] = -0.0f;
    cf_f32_to_f16_row(x, h, N);
    cf_f32_to_bf16_row(x, b, N);
    cf_f16_to_f32_row(h, y, N);
    cf_bf16_to_f32_row(b, z, N);
    for (int i = 0; i < N; i++) {
        CHECKF(h[i] == cf_f32_to_f16(x[i]), "f16 row %d", i);
        CHECKF(b[i] == cf_f32_to_bf16(x[i]), "bf16 row %d", i);
        float fy = cf_f16_to_f32(h[i]), fz = cf_bf16_to_f32(b[i]);
        CHECKF(!memcmp(&y[i], &fy, 4) || (isnan(fy) && isnan(y[i])), "f16->f32 row %d", i);
        CHECKF(!memcmp(&z[i], &fz, 4), "bf16->f32 row %d", i);
    }
}

int main(void)
{
    test_half();
    for (int i = 0; i < KT_N_WEIGHT_TYPES; i++)
        test_type(kt_weight_types[i]);
    test_type(CF_TYPE_Q8_1);
    test_type(CF_TYPE_Q8_K);
    /* bad arguments are refused */
    float x[32] = {0};
    char buf[64];
    CHECK(cf_quantize_row(CF_TYPE_Q4_0, x, buf, 31) < 0);
    CHECK(cf_quantize_row((cf_type)4, x, buf, 32) < 0);
    CHECK(cf_dequantize_row(CF_TYPE_TQ1_0, buf, x, 256) < 0);
    return test_summary("kernels_roundtrip");
}
