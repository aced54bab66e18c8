/* The activation quantizers (Q8_0, Q8_1, Q8_K) bit for bit against a plain
 * reimplementation of llama.cpp's rules (refs README section 8), including
 * exact ties (round half to even) and Q8_K's sign rule. */
#include <string.h>

#include "../harness.h"
#include "kt_util.h"

/* round half to even, written out */
static int rne(float v)
{
    float f = floorf(v);
    float frac = v - f;
    int q = (int)f;
    if (frac > 0.5f || (frac == 0.5f && (q & 1)))
        q++;
    return q;
}

static void ref_q8_0(const float *x, uint8_t *out, int with_sum)
{
    float amax = 0;
    for (int j = 0; j < 32; j++)
        amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    float d = amax / 127.0f;
    float id = amax != 0 ? 127.0f / amax : 0.0f;
    int8_t q[32];
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        float v = x[j] * id;
        q[j] = (int8_t)rne(v);
        sum += q[j];
    }
    uint16_t dh = cf_f32_to_f16(d), sh = cf_f32_to_f16(d * (float)sum);
    memcpy(out, &dh, 2);
    if (with_sum)
        memcpy(out + 2, &sh, 2);
    memcpy(out + (with_sum ? 4 : 2), q, 32);
}

static void ref_q8_K(const float *x, uint8_t *out)
{
    float amax = 0, vmax = 0;
    for (int j = 0; j < 256; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            vmax = x[j];
        }
    float d = 0;
    int8_t q[256] = {0};
    int16_t bs[16] = {0};
    if (amax != 0) {
        float iscale = -127.0f / vmax;
        for (int j = 0; j < 256; j++) {
            float v = iscale * x[j];
            int r = rne(v);
            q[j] = (int8_t)(r > 127 ? 127 : r);
            bs[j / 16] = (int16_t)(bs[j / 16] + q[j]);
        }
        d = 1.0f / iscale;
    }
    memcpy(out, &d, 4);
    memcpy(out + 4, q, 256);
    memcpy(out + 260, bs, 32);
}

static void check_row(const float *x, int64_t k, const char *what)
{
    uint8_t *got = malloc(cf_row_bytes(CF_TYPE_Q8_K, k) + cf_row_bytes(CF_TYPE_Q8_1, k));
    uint8_t exp[292];
    cf_quantize_row(CF_TYPE_Q8_0, x, got, k);
    for (int64_t b = 0; b < k / 32; b++) {
        ref_q8_0(x + 32 * b, exp, 0);
        CHECKF(!memcmp(got + 34 * b, exp, 34), "%s: Q8_0 block %lld", what, (long long)b);
    }
    cf_quantize_row(CF_TYPE_Q8_1, x, got, k);
    for (int64_t b = 0; b < k / 32; b++) {
        ref_q8_0(x + 32 * b, exp, 1);
        CHECKF(!memcmp(got + 36 * b, exp, 36), "%s: Q8_1 block %lld", what, (long long)b);
    }
    cf_quantize_row(CF_TYPE_Q8_K, x, got, k);
    for (int64_t b = 0; b < k / 256; b++) {
        ref_q8_K(x + 256 * b, exp);
        CHECKF(!memcmp(got + 292 * b, exp, 292), "%s: Q8_K block %lld", what, (long long)b);
    }
    free(got);
}

int main(void)
{
    enum { K = 8192 };
    static float x[K];
    for (int seed = 0; seed < 20; seed++) {
        kt_seed(1000 + seed);
        kt_fill_gauss(x, K, seed % 4 == 0 ? 1e-4f : 3.0f);
        check_row(x, K, "gaussian");
    }

    /* exact ties: with max|x| = 127 the Q8_0 multiplier is 1 and Q8_K's
     * (max -127) is 1 too, so x = n + 0.5 lands exactly on a half */
    for (int i = 0; i < 256; i++)
        x[i] = (float)((i % 40) - 20) + 0.5f;
    for (int b = 0; b < 256; b += 32)
        x[b + 7] = 127.0f;
    x[3] = -127.0f; /* Q8_K: the first largest magnitude is negative */
    check_row(x, 256, "ties");
    uint8_t q[292], big[2 * 292], want[292];
    cf_quantize_row(CF_TYPE_Q8_0, x, q, 32);
    CHECK((int8_t)q[2 + 0] == -20); /* -19.5 -> -20 (even) */
    CHECK((int8_t)q[2 + 1] == -18); /* -18.5 -> -18 */
    CHECK((int8_t)q[2 + 2] == -18); /* -17.5 -> -18 */
    cf_quantize_row(CF_TYPE_Q8_K, x, q, 256);
    float d;
    memcpy(&d, q, 4);
    CHECKF(d == 1.0f, "Q8_K d %g", d); /* iscale = -127 / -127 = 1 */
    CHECK((int8_t)q[4 + 0] == -20);

    /* sign rule: +3 comes before -3, so iscale = -127/3 and every q flips
     * sign; a later larger magnitude wins */
    memset(x, 0, sizeof x);
    x[5] = 3.0f;
    x[9] = -3.0f;
    x[11] = 1.5f;
    check_row(x, 256, "sign");
    cf_quantize_row(CF_TYPE_Q8_K, x, q, 256);
    CHECK((int8_t)q[4 + 5] == -127 && (int8_t)q[4 + 9] == 127);
    x[200] = -3.5f;
    check_row(x, 256, "sign2");

    /* a NaN or an infinity: that block's scale is NaN and its quants 0
     * (the NaN's bits are the FPU's), the other blocks are as ever */
    for (int inf = 0; inf < 2; inf++) {
        kt_seed(77);
        kt_fill_gauss(x, 512, 1.0f);
        x[300] = inf ? -INFINITY : NAN; /* Q8_K block 1; Q8_0 block 1 of x + 256 */
        cf_quantize_row(CF_TYPE_Q8_0, x + 256, q, 64);
        uint16_t dh;
        memcpy(&dh, q + 34, 2);
        CHECKF(isnan(cf_f16_to_f32(dh)), "Q8_0 nonfinite d %#x", dh);
        for (int j = 0; j < 32; j++)
            CHECK(q[34 + 2 + j] == 0);
        ref_q8_0(x + 256, want, 0);
        CHECK(!memcmp(q, want, 34));
        cf_quantize_row(CF_TYPE_Q8_K, x, big, 512);
        memcpy(&d, big + 292, 4);
        CHECKF(isnan(d), "Q8_K nonfinite d %g", d);
        int nz = 0;
        for (int j = 4; j < 292; j++)
            nz += big[292 + j] != 0;
        CHECKF(nz == 0, "Q8_K nonfinite block: %d bytes not 0", nz);
        ref_q8_K(x, want);
        CHECK(!memcmp(big, want, 292));
    }

    /* all zeros: d = 0, q = 0, sums 0 */
    memset(x, 0, sizeof x);
    check_row(x, 512, "zeros");
    return test_summary("kernels_actquant");
}
