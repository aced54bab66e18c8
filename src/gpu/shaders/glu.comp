#version 450
// out[t][i] = act(gate[t][i], up[t][i]): the gated activations and the
// plain ones (ACT 3, 4: up unused); ACT as cf_gpu_act numbers them.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer G { float gate[]; };
layout(std430, binding = 1) readonly buffer U { float up[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };

layout(push_constant) uniform P {
    uint g_off, u_off, ld_in, o_off, ld_out, n, width, act;
} p;

// GELU's tanh form through F16 in and out, as the CPU's table has it;
// 0.5 (1 + tanh z) written as 1 / (1 + exp(-2z)), which keeps its
// precision where tanh z is near -1 (the CPU's tanhf is exact there, a
// GPU's tanh need not be).
float gelu(float v)
{
    if (v <= -10.0)
        return 0.0;
    if (v >= 10.0)
        return v;
    const float h = unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
    const float z = 0.79788456080286535587989211986876 * h * (1.0 + 0.044715 * h * h);
    const float g = h / (1.0 + exp(-2.0 * z));
    return unpackHalf2x16(packHalf2x16(vec2(g, 0.0))).x;
}

void main()
{
    const uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= p.n * p.width)
        return;
    const uint t = idx / p.width, i = idx % p.width;
    const float g = gate[p.g_off + t * p.ld_in + i];
    float v;
    if (p.act == 0u) {
        v = g / (1.0 + exp(-g)) * up[p.u_off + t * p.ld_in + i];
    } else if (p.act == 1u) {
        v = gelu(g) * up[p.u_off + t * p.ld_in + i];
    } else if (p.act == 2u) {
        const float a = min(g, 7.0), u = clamp(up[p.u_off + t * p.ld_in + i], -7.0, 7.0);
        v = a / (1.0 + exp(-1.702 * a)) * (u + 1.0);
    } else if (p.act == 3u) {
        v = gelu(g);
    } else {
        const float r = max(g, 0.0);
        v = r * r;
    }
    o[p.o_off + t * p.ld_out + i] = v;
}
