/* Rotary position embeddings.  Angles follow ggml: theta_i is built by
 * repeated float multiplication by base^(-2/n_rot), divided by the optional
 * per-pair frequency factor, then scaled linearly. */
#include <math.h>

#include "model_internal.h"

void cf_rope_angles(const cf_hparams *hp, float pos, float *cos_out, float *sin_out)
{
    const float theta_scale = powf(hp->rope_base, -2.0f / (float)hp->n_rot);
    float theta_base = pos;
    for (int i = 0; i < hp->n_rot / 2; i++) {
        float theta = theta_base;
        if (hp->rope_freqs)
            theta /= hp->rope_freqs[i];
        theta *= hp->rope_freq_scale;
        cos_out[i] = cosf(theta);
        sin_out[i] = sinf(theta);
        theta_base *= theta_scale;
    }
}

void cf_rope_apply(cf_rope_style style, int n_rot, float *v, const float *cos_t, const float *sin_t)
{
    const int half = n_rot / 2;
    for (int i = 0; i < half; i++) {
        float *a = style == CF_ROPE_NEOX ? &v[i] : &v[2 * i];
        float *b = style == CF_ROPE_NEOX ? &v[i + half] : &v[2 * i + 1];
        const float x0 = *a, x1 = *b;
        *a = x0 * cos_t[i] - x1 * sin_t[i];
        *b = x0 * sin_t[i] + x1 * cos_t[i];
    }
}
