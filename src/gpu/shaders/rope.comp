#version 450
// Rotate pair i of each row by its position's angle, from the CPU's cos
// and sin tables [position][n_rot / 2]: pairs (2i, 2i + 1), or with NEOX
// (i, i + n_rot / 2).
#include "common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Cos { float cos_t[]; };
layout(std430, binding = 2) readonly buffer Sin { float sin_t[]; };

layout(push_constant) uniform P {
    uint x_off, x_ld, x_hs, heads, nrows, n_rot, cos_off, sin_off, pos0, neox;
} p;

void main()
{
    const uint half_rot = p.n_rot / 2u;
    const uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.nrows * half_rot)
        return;
    const uint row = idx / half_rot, i = idx % half_rot;
    const uint t = row / p.heads, h = row % p.heads;
    const uint base = p.x_off + t * p.x_ld + h * p.x_hs;
    const uint a = base + (p.neox != 0u ? i : 2u * i), b = base + (p.neox != 0u ? i + half_rot : 2u * i + 1u);
    const uint at = (p.pos0 + t) * half_rot + i;
    const float c = cos_t[p.cos_off + at], s = sin_t[p.sin_off + at];
    const float x0 = x[a], x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
}
