#version 450
// Mamba2's scan (scalar A), one head a workgroup, the batch's tokens in
// order (the CPU's mamba2_head): each lane owns a channel p of the head
// and its state row S[p][0 .. N), and sums S C in 8 partial sums (state i
// in sum i % 8, added in order at the end) as the CPU does.
#include "common.glsl"

#define LANES 64u
#define MAXN 256u
#define MAXP 256u
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer R { float rows[]; };
layout(std430, binding = 1) readonly buffer Dt { float dt_b[]; };
layout(std430, binding = 2) readonly buffer A { float as[]; };
layout(std430, binding = 3) readonly buffer Sk { float skips[]; };
layout(std430, binding = 4) buffer St { float S[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };

layout(push_constant) uniform P {
    uint rows_off, rows_ld, dt_off, a_off, skip_off, s_off, out_off, n, D, H, G, N;
} p;

shared float Bs[MAXN], Cs[MAXN];

void main()
{
    const uint h = group_index(), lane = gl_LocalInvocationID.x;
    if (h >= p.H)
        return;
    const uint D = p.D, N = p.N, G = p.G, hd = D / p.H, g = h / (p.H / G);
    const float db = dt_b[p.dt_off + h], a = as[p.a_off + h], skip = skips[p.skip_off + h];
    for (uint t = 0u; t < p.n; t++) {
        const uint row = p.rows_off + t * p.rows_ld, b0 = row + 2u * D + g * N, c0 = b0 + G * N;
        for (uint i = lane; i < N; i += LANES) {
            Bs[i] = rows[b0 + i];
            Cs[i] = rows[c0 + i];
        }
        barrier();
        const float raw = rows[row + 2u * D + 2u * G * N + h] + db;
        const float dt = raw > 20.0 ? raw : log(1.0 + exp(raw)), decay = exp(dt * a);
        for (uint c = lane; c < hd; c += LANES) {
            const float x = rows[row + D + h * hd + c], z = rows[row + h * hd + c], xdt = x * dt;
            const uint s0 = p.s_off + (h * hd + c) * N;
            float part[8];
            for (uint j = 0u; j < 8u; j++)
                part[j] = 0.0;
            for (uint i = 0u; i < N; i += 8u)
                for (uint j = 0u; j < 8u; j++) {
                    const float s = S[s0 + i + j] * decay + Bs[i + j] * xdt;
                    S[s0 + i + j] = s;
                    part[j] += s * Cs[i + j];
                }
            float sum = 0.0;
            for (uint j = 0u; j < 8u; j++)
                sum += part[j];
            o[p.out_off + t * D + h * hd + c] = (sum + skip * x) * (z / (1.0 + exp(-z)));
        }
        barrier();
    }
}
