#version 450
// out[t][i] = sum over j < k of w[t][j] y[t k + j][i]: the routed
// experts' outputs of each token summed by their weights, in order of j.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Yb { float y[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };

layout(push_constant) uniform P {
    uint y_off, w_off, o_off, n, k, width, ld;
} p;

void main()
{
    const uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.n * p.width)
        return;
    const uint t = idx / p.width, i = idx % p.width;
    float acc = 0.0;
    for (uint j = 0u; j < p.k; j++)
        acc += w[p.w_off + t * p.k + j] * y[p.y_off + (t * p.k + j) * p.width + i];
    o[p.o_off + t * p.ld + i] = acc;
}
