/* IQ4_NL, IQ4_XS, MXFP4 and TQ2_0 beyond the generic kernel tests:
 *   - the formats through cf_dequantize_row on hand-made blocks: the two
 *     codebooks (IQ4_NL's by its checksums, MXFP4's derived from E2M1),
 *     E8M0 scales down to the subnormals, IQ4_XS's 6-bit group scales;
 *   - MXFP4's dots with those scales on every ISA;
 *   - on llama.cpp's fixtures (models/quant-<TYPE>.gguf): every row's dot
 *     on every ISA gives the scalar bits and the dequantized product, and
 *     the matrix multiply gives the dots' bits;
 *   - quantizing the fixtures' dequantized rows gives them back (exactly
 *     for MXFP4 and TQ2_0, whose values lie on the grid they came from;
 *     within a small error for the fitted scales of IQ4_NL and IQ4_XS). */
#include <string.h>

#include "../harness.h"
#include "confab/gguf.h"
#include "kt_util.h"

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

/* block bytes with element j (0..31) at index idx[j], Q4_0's nibble order */
static void nibbles(uint8_t *qs, const uint8_t idx[32])
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)(idx[j] | idx[j + 16] << 4);
}

static void test_codebooks(void)
{
    uint8_t idx[32], b[18];
    float y[32];
    for (int j = 0; j < 32; j++)
        idx[j] = (uint8_t)(j % 16);

    /* IQ4_NL with d = 1: the codebook itself, increasing, with the sums of
     * ggml's kvalues_iq4nl */
    put16(b, 0x3C00);
    nibbles(b + 2, idx);
    CHECK(cf_dequantize_row(CF_TYPE_IQ4_NL, b, y, 32) == 0);
    double sum = 0, wsum = 0, sq = 0;
    int increasing = 1;
    for (int i = 0; i < 16; i++) {
        sum += y[i];
        wsum += (i + 1) * y[i];
        sq += y[i] * y[i];
        increasing &= i == 0 || y[i] > y[i - 1];
        CHECKF(y[i] == y[i + 16] && y[i] == rintf(y[i]), "IQ4_NL level %d: %g", i, y[i]);
    }
    CHECKF(increasing && y[0] == -127 && y[15] == 113, "IQ4_NL levels %g .. %g", y[0], y[15]);
    CHECKF(sum == -94 && wsum == 4135 && sq == 72768, "IQ4_NL codebook sums %g %g %g", sum, wsum, sq);

    /* MXFP4 with e = 128 (scale 1): twice the E2M1 value of each code, bit
     * 3 the sign, bits 1-2 the exponent (bias 1), bit 0 the mantissa */
    b[0] = 128;
    nibbles(b + 1, idx);
    CHECK(cf_dequantize_row(CF_TYPE_MXFP4, b, y, 32) == 0);
    for (int i = 0; i < 16; i++) {
        int e = (i >> 1) & 3, m = i & 1;
        float v = e ? ldexpf(1.0f + 0.5f * m, e - 1) : 0.5f * m;
        v *= i & 8 ? -2.0f : 2.0f;
        CHECKF(y[i] == v && y[i + 16] == v, "MXFP4 code %d: %g, E2M1 says %g", i, y[i], v);
    }
    /* E8M0: 2^(e - 128), exact down to e = 0 (a subnormal) */
    static const int es[] = {0, 1, 2, 100, 127, 200, 254};
    for (size_t k = 0; k < sizeof es / sizeof es[0]; k++) {
        b[0] = (uint8_t)es[k];
        cf_dequantize_row(CF_TYPE_MXFP4, b, y, 32);
        CHECKF(y[7] == ldexpf(12.0f, es[k] - 128) && y[1] == ldexpf(1.0f, es[k] - 128), "MXFP4 e = %d: %g",
               es[k], y[1]);
    }
}

/* IQ4_XS: group g's 6-bit scale ls (low 4 bits in nibble g % 2 of
 * scales_l[g / 2], high 2 at bit 2g of scales_h) gives d * (ls - 32). */
static void test_iq4_xs_scales(void)
{
    uint8_t b[136] = {0};
    static const int ls[8] = {0, 63, 32, 31, 17, 48, 5, 40};
    put16(b, 0x3C00); /* d = 1 */
    uint16_t h = 0;
    for (int g = 0; g < 8; g++) {
        b[4 + g / 2] |= (uint8_t)((ls[g] & 0xF) << 4 * (g % 2));
        h |= (uint16_t)((ls[g] >> 4) << 2 * g);
    }
    put16(b + 2, h);
    memset(b + 8, 0x88, 128); /* every weight at level 8 (= 1) */
    float y[256];
    CHECK(cf_dequantize_row(CF_TYPE_IQ4_XS, b, y, 256) == 0);
    for (int e = 0; e < 256; e++)
        if (y[e] != ls[e / 32] - 32) {
            CHECKF(0, "IQ4_XS element %d: %g, group scale %d", e, y[e], ls[e / 32] - 32);
            break;
        }
}

/* MXFP4 rows whose blocks all have scale exponent e, down to the
 * subnormal scales: the SIMD kernels build 2^(e - 128) from the bits
 * themselves (16 blocks at once and the short last group), and must give
 * the scalar dot's bits; with normal scales, the dequantized product. */
static void test_mxfp4_scales(void)
{
    static const int es[] = {0, 1, 2, 3, 60, 127, 128, 131, 200};
    enum { NB = 17, K = NB * 32 };
    uint8_t w[NB * 17], x[NB * 34];
    float xf[K], wd[K], xd[K];
    kt_seed(5);
    kt_fill_gauss(xf, K, 1.0f);
    cf_quantize_row(CF_TYPE_Q8_0, xf, x, K);
    cf_dequantize_row(CF_TYPE_Q8_0, x, xd, K);
    for (size_t i = 0; i < sizeof es / sizeof es[0]; i++) {
        for (int b = 0; b < NB; b++) {
            w[17 * b] = (uint8_t)es[i];
            for (int j = 1; j < 17; j++)
                w[17 * b + j] = (uint8_t)kt_next();
        }
        cf_dequantize_row(CF_TYPE_MXFP4, w, wd, K);
        double ref = 0, mag = 0;
        for (int j = 0; j < K; j++) {
            ref += (double)wd[j] * xd[j];
            mag += fabs((double)wd[j] * xd[j]);
        }
        for (int64_t k = K - 32; k <= K; k += 32) { /* 16 blocks, then 17 */
            cf_isa_set(CF_ISA_SCALAR);
            float want = cf_vec_dot(CF_TYPE_MXFP4, k, w, x);
            if (k == K && es[i] >= 60)
                CHECKF(fabs(want - ref) <= 1e-5 * mag, "MXFP4 e = %d: %.9g vs %.9g", es[i], want, ref);
            for (int isa = CF_ISA_SCALAR + 1; isa < CF_ISA_COUNT; isa++) {
                if ((int)cf_isa_set((cf_isa)isa) != isa)
                    continue;
                float got = cf_vec_dot(CF_TYPE_MXFP4, k, w, x);
                CHECKF(!memcmp(&got, &want, sizeof got), "MXFP4 e = %d k = %lld %s: %.9g vs scalar %.9g", es[i],
                       (long long)k, cf_isa_name((cf_isa)isa), got, want);
            }
        }
    }
}

static const char *fixtures[] = {"IQ4_NL", "IQ4_XS", "MXFP4", "TQ2_0"};

/* Every row of every matrix: the dot on each ISA against the scalar bits
 * and the dequantized product; cf_matmul for N = 1, 2, 3 against the dots. */
static void check_dots(const cf_gguf_tensor *t, const char *file)
{
    const int64_t k = t->ne[0], m = t->ne[1];
    const cf_type xt = cf_vec_dot_type(t->type);
    const size_t rb = cf_row_bytes(t->type, k), xb = cf_row_bytes(xt, k);
    float *xf = malloc(k * sizeof *xf), *xd = malloc(3 * k * sizeof *xd), *wd = malloc(k * sizeof *wd);
    float *dots = malloc(3 * m * sizeof *dots), *y = malloc(3 * m * sizeof *y);
    uint8_t *x = malloc(3 * xb);
    for (int c = 0; c < 3; c++) {
        kt_fill_gauss(xf, k, 1.0f);
        for (int64_t i = c; i < k; i += 61)
            xf[i] *= 20.0f;
        cf_quantize_row(xt, xf, x + c * xb, k);
        cf_dequantize_row(xt, x + c * xb, xd + c * k, k);
    }
    int bad = 0, off = 0;
    for (int64_t r = 0; r < m; r++) {
        const uint8_t *w = (const uint8_t *)t->data + r * rb;
        cf_dequantize_row(t->type, w, wd, k);
        for (int c = 0; c < 3; c++) {
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < k; i++) {
                ref += (double)wd[i] * xd[c * k + i];
                mag += fabs((double)wd[i] * xd[c * k + i]);
            }
            cf_isa_set(CF_ISA_SCALAR);
            dots[c * m + r] = cf_vec_dot(t->type, k, w, x + c * xb);
            off += fabs(dots[c * m + r] - ref) > 1e-5 * mag + 1e-30;
            for (int isa = CF_ISA_SCALAR + 1; isa < CF_ISA_COUNT; isa++) {
                if ((int)cf_isa_set((cf_isa)isa) != isa)
                    continue;
                float got = cf_vec_dot(t->type, k, w, x + c * xb);
                bad += memcmp(&got, &dots[c * m + r], sizeof got) != 0;
            }
        }
    }
    CHECKF(bad == 0 && off == 0, "%s %s: %d dots differ between ISAs, %d from the dequantized product", file,
           t->name, bad, off);
    for (int isa = CF_ISA_SCALAR; isa < CF_ISA_COUNT; isa++) {
        if ((int)cf_isa_set((cf_isa)isa) != isa)
            continue;
        for (int64_t n = 1; n <= 3; n++) {
            cf_matmul_args a = {.wtype = t->type, .w = t->data, .w_stride = rb, .m = m, .k = k, .n = n,
                                .x = x, .x_stride = xb, .y = y, .y_stride = (size_t)m};
            for (int th = 0; th < 2; th++)
                cf_matmul(&a, th, 2);
            CHECKF(!memcmp(y, dots, n * m * sizeof *y), "%s %s: %s matmul N=%lld differs from the dots", file,
                   t->name, cf_isa_name((cf_isa)isa), (long long)n);
        }
    }
    free(xf);
    free(xd);
    free(wd);
    free(dots);
    free(y);
    free(x);
}

/* RMS of deq(quantize(y)) - y over RMS of y, y the tensor's dequantized rows */
static double requant_err(const cf_gguf_tensor *t)
{
    const int64_t k = t->ne[0];
    const size_t rb = cf_row_bytes(t->type, k);
    float *y = malloc(k * sizeof *y), *y2 = malloc(k * sizeof *y2);
    void *q = malloc(rb);
    double e = 0, s = 0;
    for (int64_t r = 0; r < t->ne[1]; r++) {
        cf_dequantize_row(t->type, (const uint8_t *)t->data + r * rb, y, k);
        cf_quantize_row(t->type, y, q, k);
        cf_dequantize_row(t->type, q, y2, k);
        for (int64_t i = 0; i < k; i++) {
            e += ((double)y2[i] - y[i]) * ((double)y2[i] - y[i]);
            s += (double)y[i] * y[i];
        }
    }
    free(y);
    free(y2);
    free(q);
    return sqrt(e / s);
}

static void test_fixtures(void)
{
    kt_seed(11);
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        char rel[64];
        snprintf(rel, sizeof rel, "models/quant-%s.gguf", fixtures[f]);
        cf_gguf *g;
        cf_err err;
        if (cf_gguf_open(shared_path(rel), &g, &err) != 0) {
            CHECKF(0, "%s", err.msg);
            continue;
        }
        const cf_type want = (cf_type)cf_type_from_name(fixtures[f]);
        /* the IQ4 scales are refitted (about 1 %, a seventh of the format's
         * own error), the others land on the same grid */
        const double bound = want == CF_TYPE_IQ4_NL || want == CF_TYPE_IQ4_XS ? 0.015 : 0;
        double worst = 0;
        int n = 0;
        for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
            const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
            if (t->type != want)
                continue;
            check_dots(t, rel);
            double e = requant_err(t);
            CHECKF(e <= bound, "%s %s: re-quantized rows differ by %g (bound %g)", rel, t->name, e, bound);
            worst = e > worst ? e : worst;
            n++;
        }
        CHECKF(n == 16, "%s: %d tensors of type %s", rel, n, fixtures[f]);
        fprintf(stderr, "  %-6s %d tensors: dots identical on every ISA; re-quantized rms rel diff <= %.4f\n",
                fixtures[f], n, worst);
        cf_gguf_close(g);
    }
}

int main(void)
{
    test_codebooks();
    test_iq4_xs_scales();
    test_mxfp4_scales();
    if (shared_dir())
        test_fixtures();
    return test_summary("kernels_iq4");
}
