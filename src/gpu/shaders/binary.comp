#version 450
// y[t][i] = a[t][i] op b[t % b_rows][i]: OP 0 adds, 1 multiplies, 2 scales
// by s (b unused).
#include "common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Yb { float y[]; };

layout(push_constant) uniform P {
    uint a_off, b_off, y_off, ld, b_rows, n, width, op;
    float s;
} p;

void main()
{
    const uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.n * p.width)
        return;
    const uint t = idx / p.width, i = idx % p.width;
    const float av = a[p.a_off + t * p.ld + i];
    float v;
    if (p.op == 2u)
        v = av * p.s;
    else {
        const float bv = b[p.b_off + (t % p.b_rows) * p.width + i];
        v = p.op == 0u ? av + bv : av * bv;
    }
    y[p.y_off + t * p.ld + i] = v;
}
