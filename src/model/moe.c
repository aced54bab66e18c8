/* Mixture-of-experts routing, as llama.cpp's build_moe_ffn: which experts a
 * token goes to and with what weight (softmax or sigmoid scores, chosen
 * with a bias that the weights then leave out).  Near-ties in the router
 * decide between experts, so the arithmetic follows ggml's (softmax with a
 * double sum, the top k by a stable descending sort). */
#include <math.h>

#include "model_internal.h"

/* ggml_soft_max: exp(x - max), summed in double, scaled by 1/sum. */
static void softmax(float *p, const float *x, int n)
{
    float mx = -INFINITY;
    for (int i = 0; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        p[i] = expf(x[i] - mx);
        sum += (double)p[i];
    }
    const float inv = (float)(1.0 / sum);
    for (int i = 0; i < n; i++)
        p[i] *= inv;
}

/* The k largest of v (ties: the lower index first), largest first. */
static void top_k(const float *v, int n, int k, int32_t *sel)
{
    bool taken[CF_MAX_EXPERTS] = {false};
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (best < 0 || v[i] > v[best]))
                best = i;
        taken[best] = true;
        sel[j] = best;
    }
}

/* The top k of the scores s, from the best moe_groups_used groups only
 * when the experts come in groups: a group's score is the sum of its two
 * best (DeepSeek-V3's rule, which llama.cpp applies to every gating). */
static void choose(const cf_hparams *hp, const float *s, int n, int k, int32_t *sel)
{
    const int G = hp->moe_groups, per = G > 1 ? n / G : n;
    if (G <= 1) {
        top_k(s, n, k, sel);
        return;
    }
    float group[CF_MAX_EXPERTS], masked[CF_MAX_EXPERTS];
    int32_t best[CF_MAX_EXPERTS];
    for (int g = 0; g < G; g++) {
        int32_t two[2] = {0, 0};
        top_k(s + g * per, per, per < 2 ? per : 2, two);
        group[g] = s[g * per + two[0]] + (per < 2 ? 0.0f : s[g * per + two[1]]);
    }
    top_k(group, G, hp->moe_groups_used, best);
    for (int i = 0; i < n; i++)
        masked[i] = -INFINITY;
    for (int j = 0; j < hp->moe_groups_used; j++)
        for (int i = best[j] * per; i < (best[j] + 1) * per; i++)
            masked[i] = s[i];
    top_k(masked, n, k, sel);
}

/* The kept weights divided by their sum (llama.cpp clamps it at the
 * smallest normal F16), then scaled, as the recipe says. */
static void finish_weights(const cf_hparams *hp, float *w, int k)
{
    if (hp->moe_norm_w) {
        float sum = 0.0f;
        for (int j = 0; j < k; j++)
            sum += w[j];
        sum = sum < 6.103515625e-5f ? 6.103515625e-5f : sum;
        for (int j = 0; j < k; j++)
            w[j] /= sum;
    }
    if (hp->moe_w_scale > 0)
        for (int j = 0; j < k; j++)
            w[j] *= hp->moe_w_scale;
}

void cf_moe_route(const cf_hparams *hp, const float *logits, const float *bias, int32_t *sel, float *w)
{
    const int n = hp->n_expert, k = hp->n_expert_used;
    float p[CF_MAX_EXPERTS];
    if (hp->moe_gating == CF_MOE_SOFTMAX_WEIGHT) {
        float chosen[CF_MAX_EXPERTS];
        top_k(logits, n, k, sel);
        for (int j = 0; j < k; j++)
            chosen[j] = logits[sel[j]];
        softmax(w, chosen, k);
    } else {
        if (hp->moe_gating == CF_MOE_SIGMOID)
            for (int i = 0; i < n; i++)
                p[i] = 1.0f / (1.0f + expf(-logits[i]));
        else
            softmax(p, logits, n);
        if (bias) {
            float biased[CF_MAX_EXPERTS];
            for (int i = 0; i < n; i++)
                biased[i] = p[i] + bias[i];
            choose(hp, biased, n, k, sel);
        } else {
            choose(hp, p, n, k, sel);
        }
        for (int j = 0; j < k; j++)
            w[j] = p[sel[j]];
    }
    finish_weights(hp, w, k);
}
