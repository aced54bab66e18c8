/* Element-wise and row ops of the forward pass, written to follow
 * llama.cpp's CPU numerics (sums in double where ggml uses ggml_float). */
#include <math.h>
#include <pthread.h>

#include "model_internal.h"

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

void cf_swiglu_oai(float *g, const float *u, int n)
{
    const float alpha = 1.702f, limit = 7.0f;
    for (int i = 0; i < n; i++) {
        const float x = g[i] < limit ? g[i] : limit;
        const float y = u[i] < -limit ? -limit : u[i] > limit ? limit : u[i];
        g[i] = x / (1.0f + expf(alpha * -x)) * (y + 1.0f);
    }
}

/* GELU of every F16 value, as ggml tabulates it: the forward pass looks
 * values up instead of calling tanhf (gemma3 runs it on every FFN row). */
static float gelu_table[1 << 16];
static pthread_once_t gelu_once = PTHREAD_ONCE_INIT;

static void gelu_fill(void)
{
    const float sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    const float coef_a = 0.044715f;
    for (uint32_t i = 0; i < 1u << 16; i++) {
        const float h = cf_f16_to_f32((uint16_t)i);
        const float g = 0.5f * h * (1.0f + tanhf(sqrt_2_over_pi * h * (1.0f + coef_a * h * h)));
        gelu_table[i] = cf_f16_to_f32(cf_f32_to_f16(g));
    }
}

void cf_gelu_init(void)
{
    pthread_once(&gelu_once, gelu_fill);
}

float cf_gelu(float x)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    return gelu_table[cf_f32_to_f16(x)];
}

void cf_rms_unweighted(float *x, int n, float eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float scale = 1.0f / sqrtf((float)(sum / n) + eps);
    for (int i = 0; i < n; i++)
        x[i] *= scale;
}

void cf_relu_squared(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] * x[i] : 0.0f;
}
