#version 450
// Softmax attention, second half: one query head of one token, its
// chunks' partials (attention.comp) added in order of position, with the
// sink's share of the softmax (gpt-oss), normalised, times the head's
// output gate (q_gate) when there is one.  Every lane takes the chunks'
// maxima and sums the same way, and adds its dims' outputs in order.
#include "common.glsl"

#define LANES 64u
#define CHUNK 256u
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) readonly buffer S { float sinks[]; };
layout(std430, binding = 2) readonly buffer Gt { float gates[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };

layout(push_constant) uniform P {
    uint part_off, o_off, o_ld, o_hs, g_off, g_ld, g_hs, has_gate, sinks_off, has_sinks;
    uint n, n_head, pos0, window, max_chunks, vd;
} p;

void main()
{
    const uint th = group_index(), lane = gl_LocalInvocationID.x;
    if (th >= p.n * p.n_head)
        return;
    const uint t = th / p.n_head, h = th % p.n_head, pos = p.pos0 + t;
    const uint first = p.window > 0u && pos + 1u > p.window ? pos + 1u - p.window : 0u;
    const uint nc = pos / CHUNK - first / CHUNK + 1u, stride = 2u + p.vd, base = p.part_off + th * p.max_chunks * stride;
    float mx = part[base];
    for (uint j = 1u; j < nc; j++)
        mx = max(mx, part[base + j * stride]);
    const float sink = p.has_sinks != 0u ? sinks[p.sinks_off + h] : -1.0 / 0.0;
    mx = max(mx, sink);
    float l = part[base + 1u] * exp(part[base] - mx);
    for (uint j = 1u; j < nc; j++)
        l += part[base + j * stride + 1u] * exp(part[base + j * stride] - mx);
    if (p.has_sinks != 0u)
        l += exp(sink - mx);
    const uint oa = p.o_off + t * p.o_ld + h * p.o_hs, ga = p.g_off + t * p.g_ld + h * p.g_hs;
    for (uint d = lane; d < p.vd; d += LANES) {
        float v = part[base + 2u + d] * exp(part[base] - mx);
        for (uint j = 1u; j < nc; j++)
            v += part[base + j * stride + 2u + d] * exp(part[base + j * stride] - mx);
        v /= l;
        if (p.has_gate != 0u)
            v *= 1.0 / (1.0 + exp(-gates[ga + d]));
        o[oa + d] = v;
    }
}
