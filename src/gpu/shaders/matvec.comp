#version 450
// y[t][r] = dot(weight row r, x[t]) for up to NV tokens a workgroup (the
// decode path): 64 lanes take the row's runs of 32 values in turn, each
// summing its runs in order; then a fixed tree adds the lanes, so the
// result is the same every run.  MUL_ID: a mixture of experts' pairs, one
// a workgroup, each with its expert's matrix and its own input row.
#include "common.glsl"
#include "dequant.glsl"

#define LANES 64u
#ifdef MUL_ID
#define NV 1u
#else
#define NV 8u
#endif
layout(local_size_x = 64) in;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(std430, binding = 3) readonly buffer Ids { int ids[]; };
layout(std430, binding = 4) readonly buffer Xrow { int xrow[]; };

layout(push_constant) uniform P {
    uint w_off, row_bytes, rows, k;
    uint x_off, y_off, n;
    uint ids_off, xrow_off, expert_bytes;
} p;

shared float part[NV][LANES];

void main()
{
    const uint gi = group_index(), lane = gl_LocalInvocationID.x;
    const uint r = gi % p.rows, t0 = (gi / p.rows) * NV;
    if (t0 >= p.n)
        return;
    const uint nt = min(NV, p.n - t0);
#ifdef MUL_ID
    const uint row_b = p.w_off + uint(ids[p.ids_off + t0]) * p.expert_bytes + r * p.row_bytes;
    const uint x0 = p.x_off + uint(xrow[p.xrow_off + t0]) * p.k;
#else
    const uint row_b = p.w_off + r * p.row_bytes;
    const uint x0 = p.x_off + t0 * p.k;
#endif
    float acc[NV];
    for (uint t = 0u; t < NV; t++)
        acc[t] = 0.0;
    for (uint i0 = lane * 32u; i0 < p.k; i0 += LANES * 32u) {
        const uint i1 = min(i0 + 32u, p.k);
        for (uint i = i0; i < i1; i++) {
            const float wv = weight_at(row_b, i);
            for (uint t = 0u; t < nt; t++)
                acc[t] += wv * x[x0 + t * p.k + i];
        }
    }
    for (uint t = 0u; t < NV; t++)
        part[t][lane] = acc[t];
    barrier();
    for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            for (uint t = 0u; t < nt; t++)
                part[t][lane] += part[t][lane + s];
        barrier();
    }
    if (lane < nt)
        y[p.y_off + (t0 + lane) * p.rows + r] = part[lane][0];
}
