/* The forward pass's vector loops (src/model/vec.h) on every ISA against
 * plain double-precision references:
 *   - attention over one chunk: head sizes 8..128, 1..11 query rows, F32
 *     and F16 keys/values, chunks starting anywhere in a key block; each
 *     row's result the same bits whether it went alone or with others;
 *   - merging a chunked attention gives the unchunked result;
 *   - silu(g) * u, the residual add and RMSNorm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/kernels.h"
#include "harness.h"
#include "model_internal.h"
#include "vec.h"

static unsigned rng = 12345;

static float frand(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* a value exactly representable in F16, so both cache types hold it */
static float hrand(float scale)
{
    return cf_f16_to_f32(cf_f32_to_f16(frand() * scale));
}

typedef struct keys {
    int hd, n_pos; /* positions 0 .. n_pos-1 */
    float *k, *v;  /* rows, [pos][hd] */
    void *kb, *vb; /* the cache layouts */
} keys;

static keys make_keys(int hd, int n_pos, bool f16)
{
    keys K = {hd, n_pos, malloc(sizeof(float) * (size_t)(hd * n_pos)),
              malloc(sizeof(float) * (size_t)(hd * n_pos)), NULL, NULL};
    const int blocks = (n_pos + CF_KV_BLOCK - 1) / CF_KV_BLOCK;
    const size_t es = f16 ? 2 : 4;
    K.kb = calloc((size_t)blocks * CF_KV_BLOCK * (size_t)hd, es);
    K.vb = calloc((size_t)n_pos * (size_t)hd, es);
    for (int p = 0; p < n_pos; p++)
        for (int d = 0; d < hd; d++) {
            const float k = hrand(1.0f), v = hrand(2.0f);
            K.k[p * hd + d] = k;
            K.v[p * hd + d] = v;
            const size_t at = ((size_t)(p / CF_KV_BLOCK) * (size_t)hd + (size_t)d) * CF_KV_BLOCK +
                              (size_t)(p % CF_KV_BLOCK);
            if (f16) {
                ((uint16_t *)K.kb)[at] = cf_f32_to_f16(k);
                ((uint16_t *)K.vb)[p * hd + d] = cf_f32_to_f16(v);
            } else {
                ((float *)K.kb)[at] = k;
                ((float *)K.vb)[p * hd + d] = v;
            }
        }
    return K;
}

static void free_keys(keys *K)
{
    free(K->k);
    free(K->v);
    free(K->kb);
    free(K->vb);
}

/* softmax(q.k * scale) V over positions [lo, lo + n) in double */
static void reference(const keys *K, const float *q, int lo, int n, float scale, double *out)
{
    double *s = malloc(sizeof(double) * (size_t)n), m = -INFINITY, sum = 0;
    for (int p = 0; p < n; p++) {
        double dot = 0;
        for (int d = 0; d < K->hd; d++)
            dot += (double)q[d] * K->k[(lo + p) * K->hd + d];
        s[p] = dot * scale;
        m = s[p] > m ? s[p] : m;
    }
    for (int p = 0; p < n; p++)
        sum += (s[p] = exp(s[p] - m));
    for (int d = 0; d < K->hd; d++) {
        out[d] = 0;
        for (int p = 0; p < n; p++)
            out[d] += s[p] / sum * K->v[(lo + p) * K->hd + d];
    }
    free(s);
}

/* attention of n_q heads over [lo, hi), cut into chunks at multiples of
 * `cut`, merged; rows of `alone` go to the kernel one at a time */
static void chunked(const cf_vec_ops *vo, const keys *K, bool f16, const float *q, int n_q, int lo,
                    int hi, int cut, float scale, bool alone, float *out)
{
    const size_t pb = cf_attn_part_bytes(K->hd), es = f16 ? 2 : 4;
    const int max_parts = (hi - lo) / cut + 2;
    uint8_t *parts = aligned_alloc(64, pb * (size_t)max_parts * (size_t)n_q);
    float *scores = malloc(sizeof(float) * CF_ATTN_ROWS * CF_ATTN_CHUNK);
    const float *rows[n_q];
    cf_attn_part *part[n_q];
    int np = 0;
    for (int a = lo; a < hi; np++) {
        const int b = (a / cut + 1) * cut < hi ? (a / cut + 1) * cut : hi;
        const uint8_t *kb = (const uint8_t *)K->kb + (size_t)(a / CF_KV_BLOCK) * CF_KV_BLOCK * K->hd * es;
        const uint8_t *next =
            b < hi ? (const uint8_t *)K->kb + (size_t)(b / CF_KV_BLOCK) * CF_KV_BLOCK * K->hd * es : NULL;
        for (int h = 0; h < n_q; h++) {
            rows[h] = q + h * K->hd;
            part[h] = (cf_attn_part *)(parts + ((size_t)h * max_parts + (size_t)np) * pb);
        }
        for (int h = 0; h < n_q; h += alone ? 1 : n_q)
            vo->attn_chunk(alone ? 1 : n_q, K->hd, rows + h, kb, a % CF_KV_BLOCK,
                           (const uint8_t *)K->vb + (size_t)a * K->hd * es, f16, b - a, scale, scores, part + h,
                           next);
        a = b;
    }
    for (int h = 0; h < n_q; h++)
        vo->attn_merge(K->hd, parts + (size_t)h * max_parts * pb, pb, np, -INFINITY, out + h * K->hd);
    free(parts);
    free(scores);
}

static void test_attention(cf_isa isa)
{
    const cf_vec_ops *vo = cf_vec();
    static const int hds[] = {8, 32, 64, 80, 128}, nqs[] = {1, 3, 4, 6, 8, 11};
    static const int spans[][2] = {{0, 1}, {0, 16}, {5, 12}, {15, 49}, {3, 259}, {0, 256}, {17, 530}};
    double worst = 0;
    int apart = 0; /* rows whose result changed with the rows beside them */
    for (size_t a = 0; a < 5; a++)
        for (int f16 = 0; f16 < 2; f16++) {
            const int hd = hds[a];
            keys K = make_keys(hd, 544, f16);
            for (size_t b = 0; b < sizeof nqs / sizeof nqs[0]; b++)
                for (size_t c = 0; c < sizeof spans / sizeof spans[0]; c++) {
                    const int n_q = nqs[b], lo = spans[c][0], hi = spans[c][1];
                    float *q = malloc(sizeof(float) * (size_t)(n_q * hd));
                    float *o1 = malloc(sizeof(float) * (size_t)(n_q * hd));
                    float *o2 = malloc(sizeof(float) * (size_t)(n_q * hd));
                    float *o3 = malloc(sizeof(float) * (size_t)(n_q * hd));
                    double *ref = malloc(sizeof(double) * (size_t)hd);
                    for (int i = 0; i < n_q * hd; i++)
                        q[i] = frand() * 3.0f;
                    const float scale = 1.0f / sqrtf((float)hd);
                    chunked(vo, &K, f16, q, n_q, lo, hi, CF_ATTN_CHUNK, scale, false, o1);
                    chunked(vo, &K, f16, q, n_q, lo, hi, 64, scale, false, o2); /* more parts */
                    chunked(vo, &K, f16, q, n_q, lo, hi, CF_ATTN_CHUNK, scale, true, o3);
                    apart += memcmp(o1, o3, sizeof(float) * (size_t)(n_q * hd)) != 0;
                    for (int h = 0; h < n_q; h++) {
                        reference(&K, q + h * hd, lo, hi - lo, scale, ref);
                        for (int d = 0; d < hd; d++) {
                            const double e1 = fabs(o1[h * hd + d] - ref[d]);
                            const double e2 = fabs(o2[h * hd + d] - ref[d]);
                            worst = e1 > worst ? e1 : worst;
                            worst = e2 > worst ? e2 : worst;
                        }
                    }
                    free(q);
                    free(o1);
                    free(o2);
                    free(o3);
                    free(ref);
                }
            free_keys(&K);
        }
    CHECKF(worst < 2e-5, "%s: attention differs from the reference by %.3g", cf_isa_name(isa), worst);
    CHECKF(apart == 0, "%s: %d cases where a row's attention depends on the rows beside it", cf_isa_name(isa),
           apart);
}

static void test_elementwise(cf_isa isa)
{
    const cf_vec_ops *vo = cf_vec();
    enum { N = 77 };
    float g[N], u[N], x[N], y[N], b[N];
    double worst_silu = 0, worst_add = 0;
    for (int i = 0; i < N; i++) {
        g[i] = frand() * (i < 4 ? 120.0f : 9.0f); /* beyond exp's range at the start */
        u[i] = frand();
        x[i] = frand();
        b[i] = frand();
    }
    float h[N];
    memcpy(h, g, sizeof h);
    vo->silu_mul(h, u, N);
    for (int i = 0; i < N; i++) {
        const double want = g[i] / (1.0 + exp(-(double)g[i])) * u[i];
        const double err = fabs(h[i] - want) / (fabs(want) + 1e-6);
        worst_silu = err > worst_silu ? err : worst_silu;
    }
    vo->add(y, x, u, b, N);
    /* the maxima as conditionals: aarch64 GCC 12 fails (an internal error)
     * vectorising these loops' fmax */
    for (int i = 0; i < N; i++) {
        const double e = fabs((double)y[i] - ((double)(x[i] + u[i]) + b[i]));
        worst_add = e > worst_add ? e : worst_add;
    }
    double ss = 0, worst_norm = 0;
    for (int i = 0; i < N; i++)
        ss += (double)x[i] * x[i];
    vo->rmsnorm(y, x, b, N, 1e-5f);
    for (int i = 0; i < N; i++) {
        const double e = fabs(y[i] - x[i] / sqrt(ss / N + 1e-5) * b[i]);
        worst_norm = e > worst_norm ? e : worst_norm;
    }
    CHECKF(worst_norm < 1e-6, "%s: rmsnorm error %.3g", cf_isa_name(isa), worst_norm);
    CHECKF(worst_silu < 1e-5, "%s: silu*up relative error %.3g", cf_isa_name(isa), worst_silu);
    CHECKF(worst_add < 1e-6, "%s: add error %.3g", cf_isa_name(isa), worst_add);
}

int main(void)
{
    for (int i = CF_ISA_SCALAR; i < CF_ISA_COUNT; i++) {
        if (cf_isa_set((cf_isa)i) != (cf_isa)i)
            continue; /* the CPU lacks it */
        test_attention((cf_isa)i);
        test_elementwise((cf_isa)i);
    }
    return test_summary("vec");
}
