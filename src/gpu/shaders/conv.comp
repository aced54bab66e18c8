#version 450
// A causal convolution over time, one channel a thread, time in order:
// qwen35's and Mamba2's (silu of it plus a bias) or lfm2's (the row is [B | C | X]; u = B X is
// convolved, C times it comes out).  The window, the layer's state, holds
// the K - 1 inputs before the batch and is left with its last K - 1.
#include "common.glsl"

#define MAXK 16u
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Seq { float seq[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 2) buffer Win { float window[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };

layout(push_constant) uniform P {
    uint seq_off, ld, n, channels, w_off, K, win_off, out_off, ld_out, gated, bias_off, has_bias;
} p;

void main()
{
    const uint ch = group_index() * 64u + gl_LocalInvocationID.x;
    if (ch >= p.channels)
        return;
    const uint C = p.channels, K = p.K;
    const float b = p.has_bias != 0u ? bias[p.bias_off + ch] : 0.0;
    float win[MAXK];
    for (uint j = 0u; j + 1u < K; j++)
        win[j] = window[p.win_off + j * C + ch];
    for (uint t = 0u; t < p.n; t++) {
        const uint row = p.seq_off + t * p.ld;
        win[K - 1u] = p.gated != 0u ? seq[row + ch] * seq[row + 2u * C + ch] : seq[row + ch];
        float sum = 0.0;
        for (uint j = 0u; j < K; j++)
            sum += win[j] * w[p.w_off + ch * K + j];
        const float u = sum + b;
        o[p.out_off + t * p.ld_out + ch] = p.gated != 0u ? seq[row + C + ch] * sum : u / (1.0 + exp(-u));
        for (uint j = 0u; j + 1u < K; j++)
            win[j] = win[j + 1u];
    }
    for (uint j = 0u; j + 1u < K; j++)
        window[p.win_off + j * C + ch] = win[j];
}
