/* Rotary position embeddings.  Angles follow ggml: theta_i is built by
 * repeated float multiplication by base^(-2/n_rot), divided by the optional
 * per-pair frequency factor, then scaled linearly (or by YaRN: see
 * cf_hparams).  Sliding layers with a base of their own (gemma3) are not
 * scaled, as in llama.cpp. */
#include <math.h>

#include "model_internal.h"

int cf_rope_table(const cf_hparams *hp, const cf_layer *L)
{
    return L->swa && hp->rope_base_swa > 0 ? 1 : 0;
}

/* ggml_rope_yarn_corr_dim: the dimension whose wavelength fits `rotations`
 * times into the original context. */
static float yarn_corr_dim(const cf_hparams *hp, float rotations)
{
    return (float)hp->n_rot * logf((float)hp->rope_yarn_orig_ctx / (rotations * 2.0f * (float)M_PI)) /
           (2.0f * logf(hp->rope_base));
}

void cf_rope_angles(const cf_hparams *hp, int table, float pos, bool magnitude, float *cos_out,
                    float *sin_out)
{
    const float base = table ? hp->rope_base_swa : hp->rope_base;
    const float freq_scale = table ? 1.0f : hp->rope_freq_scale;
    const float theta_scale = powf(base, -2.0f / (float)hp->n_rot);
    const bool yarn = !table && hp->rope_yarn_orig_ctx > 0;
    float lo = 0, hi = 0, mscale = 1.0f;
    if (yarn) {
        lo = fmaxf(0.0f, floorf(yarn_corr_dim(hp, hp->rope_yarn_beta_fast)));
        hi = fminf((float)hp->n_rot - 1, ceilf(yarn_corr_dim(hp, hp->rope_yarn_beta_slow)));
        if (magnitude)
            mscale = hp->rope_yarn_attn_factor * (1.0f + 0.1f * logf(1.0f / freq_scale));
    }
    float theta_base = pos;
    for (int i = 0; i < hp->n_rot / 2; i++) {
        float theta = theta_base;
        if (hp->rope_freqs)
            theta /= hp->rope_freqs[i];
        const float extrap = theta;
        theta *= freq_scale;
        if (yarn) {
            /* 1 below the correction range (keep extrap), 0 above */
            const float ramp = 1.0f - fminf(1.0f, fmaxf(0.0f, ((float)i - lo) / fmaxf(0.001f, hi - lo)));
            theta = theta * (1.0f - ramp) + extrap * ramp;
        }
        cos_out[i] = cosf(theta) * mscale;
        sin_out[i] = sinf(theta) * mscale;
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
