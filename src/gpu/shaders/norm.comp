#version 450
// One row a workgroup: y = x / sqrt(mean(x^2) + eps) * w, or with
// LAYER_NORM y = (x - mean) / sqrt(var + eps) * w + b.  The sums go through
// a fixed tree of 128 lanes.
#include "common.glsl"

#define LANES 128u
layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer Wt { float w[]; };
layout(std430, binding = 3) readonly buffer Bs { float bias[]; };

layout(push_constant) uniform P {
    uint x_off, x_ld, x_hs, y_off, y_ld, y_hs;
    uint heads, nrows, dim, w_off, b_off, has_w, has_b;
    float eps;
} p;

shared float red[LANES];

float row_sum(float v)
{
    const uint lane = gl_LocalInvocationID.x;
    red[lane] = v;
    barrier();
    for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            red[lane] += red[lane + s];
        barrier();
    }
    const float total = red[0];
    barrier();
    return total;
}

void main()
{
    const uint row = group_index(), lane = gl_LocalInvocationID.x;
    if (row >= p.nrows)
        return;
    const uint t = row / p.heads, h = row % p.heads;
    const uint xa = p.x_off + t * p.x_ld + h * p.x_hs, ya = p.y_off + t * p.y_ld + h * p.y_hs;
    float mean = 0.0;
#ifdef LAYER_NORM
    float s1 = 0.0;
    for (uint i = lane; i < p.dim; i += LANES)
        s1 += x[xa + i];
    mean = row_sum(s1) / float(p.dim);
#endif
    float s2 = 0.0;
    for (uint i = lane; i < p.dim; i += LANES) {
        const float d = x[xa + i] - mean;
        s2 += d * d;
    }
    const float scale = 1.0 / sqrt(row_sum(s2) / float(p.dim) + p.eps);
    for (uint i = lane; i < p.dim; i += LANES) {
        float v = (x[xa + i] - mean) * scale;
        if (p.has_w != 0u)
            v *= w[p.w_off + i];
        if (p.has_b != 0u)
            v += bias[p.b_off + i];
        y[ya + i] = v;
    }
}
