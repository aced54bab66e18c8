/* Mixture-of-experts routing on the device against the CPU's
 * cf_moe_route, for each gating (softmax, top logits then softmax,
 * sigmoid with a choice bias and expert groups), with the weights
 * normalised and scaled: the same experts, the weights within 1e-6
 * relative (the GPU's softmax sums in F32, the CPU's in double); then the
 * experts' outputs summed by those weights; the same bits on a second
 * run. */
#include "gpu_test.h"

#include "model_internal.h"

enum { N = 5, MAXE = 64, MAXK = 8, W = 37 };

static void test_route(cf_gpu *g, const cf_hparams *hp, bool with_bias)
{
    const int ne = hp->n_expert, k = hp->n_expert_used;
    float logits[N * MAXE], bias[MAXE];
    test_fill(logits, (size_t)(N * ne), 40u + (unsigned)ne, 4.0f);
    test_fill(bias, (size_t)ne, 41u, 0.5f);
    cf_gpu_buf *lb = test_upload(g, logits, sizeof logits), *bb = test_upload(g, bias, sizeof bias);
    cf_gpu_buf *sb = test_upload(g, NULL, N * MAXK * 4), *wb = test_upload(g, NULL, N * MAXK * 4);
    cf_gpu_buf *xb = test_upload(g, NULL, N * MAXK * 4);
    int32_t sel[2][N * MAXK], xrow[N * MAXK];
    float w[2][N * MAXK];
    for (int run = 0; run < 2; run++) {
        cf_gpu_begin(g);
        cf_gpu_moe_route(g, hp, view(lb), with_bias ? view(bb) : (cf_gpu_view){0}, N, view(sb), view(wb), view(xb));
        CHECK(test_submit(g) == 0);
        test_download(g, sb, sel[run], N * MAXK * 4);
        test_download(g, wb, w[run], N * MAXK * 4);
    }
    test_download(g, xb, xrow, N * MAXK * 4);
    int bad_sel = 0, bad_w = 0, bad_row = 0;
    for (int t = 0; t < N; t++) {
        int32_t want_sel[MAXK];
        float want_w[MAXK];
        cf_moe_route(hp, logits + t * ne, with_bias ? bias : NULL, want_sel, want_w);
        for (int j = 0; j < k; j++) {
            bad_sel += sel[0][t * k + j] != want_sel[j];
            bad_w += !(fabsf(w[0][t * k + j] - want_w[j]) <= 1e-6f * fabsf(want_w[j]));
            bad_row += xrow[t * k + j] != t;
        }
    }
    CHECKF(bad_sel == 0 && bad_w == 0 && bad_row == 0, "gating %d, %d of %d experts: %d choices, %d weights, %d rows differ",
           (int)hp->moe_gating, k, ne, bad_sel, bad_w, bad_row);
    CHECKF(!memcmp(sel[0], sel[1], sizeof sel[0]) && !memcmp(w[0], w[1], sizeof w[0]), "routing: two runs differ");
    cf_gpu_buf *bufs[] = {lb, bb, sb, wb, xb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_gpu_free(g, bufs[i]);
}

static void test_sum(cf_gpu *g)
{
    enum { K = 3, LD = 41 };
    float y[N * K * W], w[N * K], out[N * LD];
    test_fill(y, N * K * W, 50u, 1.0f);
    test_fill(w, N * K, 51u, 1.0f);
    cf_gpu_buf *yb = test_upload(g, y, sizeof y), *wb = test_upload(g, w, sizeof w), *ob = test_upload(g, NULL, sizeof out);
    cf_gpu_begin(g);
    cf_gpu_moe_sum(g, view(yb), view(wb), N, K, W, view(ob), LD);
    CHECK(test_submit(g) == 0);
    test_download(g, ob, out, sizeof out);
    int bad = 0;
    for (int t = 0; t < N; t++)
        for (int i = 0; i < W; i++) {
            double want = 0, mag = 0;
            for (int j = 0; j < K; j++) {
                want += (double)w[t * K + j] * y[(t * K + j) * W + i];
                mag += fabs((double)w[t * K + j] * y[(t * K + j) * W + i]);
            }
            bad += !(fabs(out[t * LD + i] - want) <= 1e-6 * mag);
        }
    CHECKF(bad == 0, "moe_sum: %d values differ", bad);
    cf_gpu_free(g, yb);
    cf_gpu_free(g, wb);
    cf_gpu_free(g, ob);
}

int main(void)
{
    cf_gpu *g = test_gpu();
    cf_hparams hp = {0};
    hp.n_expert = 8, hp.n_expert_used = 2, hp.moe_gating = CF_MOE_SOFTMAX, hp.moe_norm_w = true;
    test_route(g, &hp, false);
    hp.n_expert = 32, hp.n_expert_used = 4, hp.moe_gating = CF_MOE_SOFTMAX_WEIGHT, hp.moe_norm_w = false;
    test_route(g, &hp, false);
    hp.n_expert = 64, hp.n_expert_used = 8, hp.moe_gating = CF_MOE_SIGMOID, hp.moe_norm_w = true;
    hp.moe_w_scale = 2.5f, hp.moe_groups = 8, hp.moe_groups_used = 4;
    test_route(g, &hp, true);
    test_sum(g);
    cf_gpu_close(g);
    return test_summary("gpu_moe");
}
