/* Element-wise and row ops of the forward pass, written to follow
 * llama.cpp's CPU numerics (sums in double where ggml uses ggml_float). */
#include <math.h>

#include "model_internal.h"

/* y = x / sqrt(mean(x^2) + eps) * w  (the scaled row is rounded to float
 * before the weight multiplies it, as ggml's separate rms_norm and mul do) */
void cf_rmsnorm(float *y, const float *x, const float *w, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / sqrtf((float)(sum / n) + eps);
    for (int i = 0; i < n; i++)
        y[i] = (x[i] * scale) * w[i];
}

/* y = (x - mean) / sqrt(var + eps) * w + b */
void cf_layernorm(float *y, const float *x, const float *w, const float *b, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)x[i];
    const float mean = (float)(sum / n);
    double sum2 = 0.0;
    for (int i = 0; i < n; i++) {
        y[i] = x[i] - mean;
        sum2 += (double)(y[i] * y[i]);
    }
    const float scale = 1.0f / sqrtf((float)(sum2 / n) + eps);
    for (int i = 0; i < n; i++)
        y[i] = (y[i] * scale) * w[i] + b[i];
}

float cf_gelu(float x)
{
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    const float coef_a = 0.044715f;
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    const float h = cf_f16_to_f32(cf_f32_to_f16(x));
    const float g = 0.5f * h * (1.0f + tanhf(sqrt_2_over_pi * h * (1.0f + coef_a * h * h)));
    return cf_f16_to_f32(cf_f32_to_f16(g));
}
