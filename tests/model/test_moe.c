/* Mixture-of-experts routing (cf_moe_route) against a float64 reading of
 * llama.cpp's build_moe_ffn, on random router logits with planted
 * near-ties (and, for sigmoid routing, a random choice bias): the chosen
 * experts are the reference's, best first, wherever the k-th and (k+1)-th
 * scores are more than 1e-5 apart, and the weights agree to 1e-6; ties go
 * to the lower index. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model_internal.h"

typedef struct ref_choice {
    int sel[64];
    double w[64];
    double margin; /* between the k-th and the (k+1)-th score */
} ref_choice;

static void reference(const cf_hparams *hp, const float *logits, const float *choice_b, ref_choice *r)
{
    const int n = hp->n_expert, k = hp->n_expert_used;
    const bool sigmoid = hp->moe_gating == CF_MOE_SIGMOID;
    double score[CF_MAX_EXPERTS], choice[CF_MAX_EXPERTS], mx = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++)
        mx = logits[i] > mx ? logits[i] : mx;
    for (int i = 0; i < n; i++) {
        score[i] = hp->moe_gating == CF_MOE_SOFTMAX ? exp(logits[i] - mx)
                   : sigmoid                        ? 1 / (1 + exp(-(double)logits[i]))
                                                    : logits[i];
        sum += hp->moe_gating == CF_MOE_SOFTMAX ? score[i] : 0;
    }
    for (int i = 0; hp->moe_gating == CF_MOE_SOFTMAX && i < n; i++)
        score[i] /= sum;
    for (int i = 0; i < n; i++)
        choice[i] = score[i] + (choice_b ? choice_b[i] : 0);
    bool taken[CF_MAX_EXPERTS] = {false};
    for (int j = 0; j <= k && j < n; j++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (best < 0 || choice[i] > choice[best]))
                best = i;
        taken[best] = true;
        if (j < k)
            r->sel[j] = best;
        else
            r->margin = choice[r->sel[k - 1]] - choice[best];
    }
    double wsum = 0, smax = -INFINITY;
    for (int j = 0; j < k; j++)
        smax = score[r->sel[j]] > smax ? score[r->sel[j]] : smax;
    for (int j = 0; j < k; j++) {
        r->w[j] = hp->moe_gating != CF_MOE_SOFTMAX_WEIGHT ? score[r->sel[j]] : exp(score[r->sel[j]] - smax);
        wsum += r->w[j];
    }
    for (int j = 0; j < k; j++)
        r->w[j] = (hp->moe_gating == CF_MOE_SOFTMAX_WEIGHT || hp->moe_norm_w ? r->w[j] / wsum : r->w[j]) *
                  (hp->moe_w_scale ? hp->moe_w_scale : 1);
}

static float urand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f;
}

static void check_config(cf_moe_gating gating, bool norm_w, float w_scale, int n, int k)
{
    cf_hparams hp = {
        .n_expert = n, .n_expert_used = k, .moe_gating = gating, .moe_norm_w = norm_w, .moe_w_scale = w_scale};
    unsigned seed = 1234u + (unsigned)(n * 31 + k);
    float bias[CF_MAX_EXPERTS];
    for (int i = 0; gating == CF_MOE_SIGMOID && i < n; i++)
        bias[i] = 0.6f * (urand(&seed) - 0.5f);
    const float *choice_b = gating == CF_MOE_SIGMOID ? bias : NULL;
    int compared = 0, skipped = 0;
    for (int trial = 0; trial < 2000; trial++) {
        float logits[CF_MAX_EXPERTS];
        for (int i = 0; i < n; i++)
            logits[i] = 6.0f * (urand(&seed) - 0.5f);
        if (trial % 3 == 0) /* plant a near-tie at the k-th place */
            logits[(trial / 3) % n] = logits[(trial / 3 + 1) % n] + 1e-7f * (float)(trial % 5);
        int32_t sel[64];
        float w[64];
        cf_moe_route(&hp, logits, choice_b, sel, w);
        ref_choice r = {.margin = 0};
        reference(&hp, logits, choice_b, &r);
        if (r.margin <= 1e-5) {
            skipped++;
            continue;
        }
        compared++;
        for (int j = 0; j < k; j++) {
            CHECKF(sel[j] == r.sel[j], "n %d k %d trial %d: choice %d is %d, reference %d", n, k, trial,
                   j, sel[j], r.sel[j]);
            CHECKF(fabs(w[j] - r.w[j]) <= 1e-6 * (w_scale ? w_scale : 1),
                   "n %d k %d trial %d: weight %d %.9g vs %.9g", n, k, trial, j, w[j], r.w[j]);
        }
    }
    CHECK(compared > 1000);
    fprintf(stderr, "gating %d norm %d, %d of %d experts: %d routes compared, %d near-ties skipped\n",
            gating, norm_w, k, n, compared, skipped);
}

static void check_ties(void)
{
    /* exact ties go to the lower index, as a stable descending sort */
    cf_hparams hp = {.n_expert = 4, .n_expert_used = 2, .moe_gating = CF_MOE_SOFTMAX, .moe_norm_w = true};
    const float logits[4] = {1.0f, 2.0f, 2.0f, 2.0f};
    int32_t sel[2];
    float w[2];
    cf_moe_route(&hp, logits, NULL, sel, w);
    CHECK(sel[0] == 1 && sel[1] == 2 && w[0] == 0.5f && w[1] == 0.5f);
}

/* DeepSeek-V3's routing: sigmoid scores, chosen with a selection bias from
 * the best group only (by its two best), weighed unbiased, normalised and
 * scaled.  Here expert 0 alone scores best, but group 1 wins, and the bias
 * puts expert 5 before expert 4. */
static void check_sigmoid_groups(void)
{
    cf_hparams hp = {.n_expert = 8, .n_expert_used = 2, .moe_gating = CF_MOE_SIGMOID, .moe_norm_w = true,
                     .moe_w_scale = 2.5f, .moe_groups = 2, .moe_groups_used = 1};
    const float logits[8] = {3.0f, -3.0f, -3.0f, -3.0f, 1.0f, 0.8f, -3.0f, -3.0f};
    const float bias[8] = {0, 0, 0, 0, 0, 0.3f, 0, 0};
    int32_t sel[2];
    float w[2];
    cf_moe_route(&hp, logits, bias, sel, w);
    const double p5 = 1.0 / (1.0 + exp(-0.8)), p4 = 1.0 / (1.0 + exp(-1.0));
    CHECKF(sel[0] == 5 && sel[1] == 4, "chose %d %d, expected 5 4", sel[0], sel[1]);
    CHECKF(fabs(w[0] - 2.5 * p5 / (p4 + p5)) <= 1e-6 && fabs(w[1] - 2.5 * p4 / (p4 + p5)) <= 1e-6,
           "weights %.9g %.9g", w[0], w[1]);
}

int main(void)
{
    check_config(CF_MOE_SOFTMAX, true, 0, 8, 2);    /* mixtral */
    check_config(CF_MOE_SOFTMAX, true, 0, 128, 8);  /* qwen3moe 30B */
    check_config(CF_MOE_SOFTMAX, false, 0, 64, 6);
    check_config(CF_MOE_SOFTMAX_WEIGHT, false, 0, 32, 4); /* gpt-oss 20B */
    check_config(CF_MOE_SIGMOID, true, 2.5f, 128, 6);    /* Nemotron 3 Nano */
    check_config(CF_MOE_SIGMOID, false, 1.5f, 8, 2);
    check_config(CF_MOE_SIGMOID, true, 2.5f, 160, 8);   /* GLM-4.5 */
    check_config(CF_MOE_SIGMOID, true, 0, 32, 4);       /* LFM2-MoE */
    check_ties();
    check_sigmoid_groups();
    return test_summary("model-moe");
}
