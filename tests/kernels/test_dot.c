/* Every vec_dot on every ISA this CPU has: matches the dequantized weight
 * times the dequantized activation in double within 1e-4 of sum |w x|,
 * and the SIMD paths give exactly the scalar path's bits. */
#include <string.h>

#include "../harness.h"
#include "kt_util.h"

/* sum over i of deq(w)_i * deq(x)_i in double, and of |...|.  For the
 * Q8_1 activations the min term uses the stored s = F16(d * sum q), as
 * llama.cpp's kernels do (its rounding is part of the format). */
static void reference(cf_type t, const void *w, const void *x, int64_t k, double *dot,
                      double *mag)
{
    cf_type xt = cf_vec_dot_type(t);
    float *dw = malloc(k * sizeof *dw), *dx = malloc(k * sizeof *dx);
    cf_dequantize_row(t, w, dw, k);
    cf_dequantize_row(xt, x, dx, k);
    *dot = *mag = 0;
    if (xt == CF_TYPE_Q8_1) {
        /* w = d q + m: the d q part per element, the m part via s */
        size_t wb = cf_type_get(t)->type_size;
        for (int64_t b = 0; b < k / 32; b++) {
            const uint8_t *wp = (const uint8_t *)w + b * wb, *xp = (const uint8_t *)x + b * 36;
            uint16_t m16, s16;
            memcpy(&m16, wp + 2, 2);
            memcpy(&s16, xp + 2, 2);
            double m = cf_f16_to_f32(m16), s = cf_f16_to_f32(s16);
            for (int64_t i = 32 * b; i < 32 * b + 32; i++) {
                double v = ((double)dw[i] - m) * dx[i];
                *dot += v;
                *mag += fabs(v) + fabs(m * dx[i]);
            }
            *dot += m * s;
        }
    } else {
        for (int64_t i = 0; i < k; i++) {
            double v = (double)dw[i] * dx[i];
            *dot += v;
            *mag += fabs(v);
        }
    }
    free(dw);
    free(dx);
}

static void test_type(cf_type t, int64_t k, float wscale)
{
    float *wf = malloc(k * sizeof *wf), *xf = malloc(k * sizeof *xf);
    kt_fill_gauss(wf, k, wscale);
    kt_fill_gauss(xf, k, 1.0f);
    for (int64_t i = 0; i < k; i += 97)
        xf[i] *= 20.0f; /* a few large activations, as real models have */
    void *w = kt_quantize(t, wf, k), *x = kt_quantize(cf_vec_dot_type(t), xf, k);
    double ref, mag;
    reference(t, w, x, k, &ref, &mag);
    cf_isa_set(CF_ISA_SCALAR);
    float scalar = cf_vec_dot(t, k, w, x);
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        float got = cf_vec_dot(t, k, w, x);
        double tol = 1e-4 * mag + 1e-30;
        CHECKF(fabs(got - ref) <= tol, "%s %s k=%lld: %.9g vs %.9g (tol %.3g)", cf_isa_name(isa),
               cf_type_name(t), (long long)k, got, ref, tol);
        /* the canonical order (src/kernels/internal.h): the same bits */
        CHECKF(!memcmp(&got, &scalar, sizeof got), "%s %s k=%lld: %.9g vs scalar %.9g", cf_isa_name(isa),
               cf_type_name(t), (long long)k, got, scalar);
    }
    free(w);
    free(x);
    free(wf);
    free(xf);
}

int main(void)
{
    kt_seed(42);
    cf_isa best = cf_isa_set(cf_isa_best());
    fprintf(stderr, "best ISA here: %s\n", cf_isa_name(best));
    static const int64_t ks[] = {32, 64, 96, 160, 256, 512, 544, 768, 4096, 4352, 8448};
    for (int i = 0; i < KT_N_WEIGHT_TYPES; i++) {
        cf_type t = kt_weight_types[i];
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            if (ks[j] % cf_type_get(t)->blck_size)
                continue;
            for (int rep = 0; rep < 3; rep++)
                test_type(t, ks[j], rep == 2 ? 1e-3f : 1.0f);
        }
    }
    return test_summary("kernels_dot");
}
