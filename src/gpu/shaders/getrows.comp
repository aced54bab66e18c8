#version 450
// y[t] = weight row ids[t] widened to F32: the token embeddings.
#include "common.glsl"
#include "dequant.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform P {
    uint w_off, row_bytes, k, ids_off, y_off, n;
} p;

void main()
{
    const uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.n * p.k)
        return;
    const uint t = idx / p.k, i = idx % p.k;
    y[p.y_off + idx] = weight_at(p.w_off + uint(ids[p.ids_off + t]) * p.row_bytes, i);
}
