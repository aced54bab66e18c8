#version 450
// y[t][i] = a[t][i] op b[r][i]: OP 0 adds and 1 multiplies b's row
// r = t % b_rows, 2 scales by s (b unused), 3 adds b's row idx[t] (an
// expert's bias for pair t), 4 adds b's row t times sigmoid(gate[t]) (a
// shared expert gated per token), 5 multiplies by b's row idx[t] (an
// expert's scale).
#include "common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Yb { float y[]; };
layout(std430, binding = 3) readonly buffer I { int idx[]; };
layout(std430, binding = 4) readonly buffer G { float gate[]; };

layout(push_constant) uniform P {
    uint a_off, b_off, y_off, ld, b_rows, n, width, op;
    float s;
    uint i_off, g_off;
} p;

void main()
{
    const uint id = group_index() * 256u + gl_LocalInvocationID.x;
    if (id >= p.n * p.width)
        return;
    const uint t = id / p.width, i = id % p.width;
    const float av = a[p.a_off + t * p.ld + i];
    float v;
    if (p.op == 2u)
        v = av * p.s;
    else if (p.op == 3u || p.op == 5u) {
        const float bv = b[p.b_off + uint(idx[p.i_off + t]) * p.width + i];
        v = p.op == 3u ? av + bv : av * bv;
    }
    else if (p.op == 4u)
        v = av + b[p.b_off + t * p.width + i] * (1.0 / (1.0 + exp(-gate[p.g_off + t])));
    else {
        const float bv = b[p.b_off + (t % p.b_rows) * p.width + i];
        v = p.op == 0u ? av + bv : av * bv;
    }
    y[p.y_off + t * p.ld + i] = v;
}
