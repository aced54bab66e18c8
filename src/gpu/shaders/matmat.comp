#version 450
// y[t][r] = dot(weight row r, x[t]) in tiles of 64 rows by 64 tokens (the
// prefill path): each step widens 32 columns of the weights into shared
// memory once for all 64 tokens; each thread keeps 4 x 4 sums, added in
// the order of k.
#include "common.glsl"
#include "dequant.glsl"

#define BM 64u
#define BN 64u
#define BK 32u
layout(local_size_x = 256) in;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform P {
    uint w_off, row_bytes, rows, k;
    uint x_off, y_off, n;
} p;

shared float ws[BK][BM + 1u];
shared float xs[BK][BN + 1u];

void main()
{
    const uint gi = group_index(), tid = gl_LocalInvocationID.x;
    const uint row_tiles = (p.rows + BM - 1u) / BM;
    const uint r0 = (gi % row_tiles) * BM, t0 = (gi / row_tiles) * BN;
    if (t0 >= p.n)
        return;
    const uint tr = tid % 16u, tc = tid / 16u;
    float acc[4][4];
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++)
            acc[i][j] = 0.0;
    for (uint k0 = 0u; k0 < p.k; k0 += BK) {
        for (uint q = tid; q < BM * BK; q += 256u) {
            const uint rr = q / BK, kk = q % BK, r = r0 + rr, i = k0 + kk;
            ws[kk][rr] = r < p.rows && i < p.k ? weight_at(p.w_off + r * p.row_bytes, i) : 0.0;
        }
        for (uint q = tid; q < BN * BK; q += 256u) {
            const uint tt = q / BK, kk = q % BK, t = t0 + tt, i = k0 + kk;
            xs[kk][tt] = t < p.n && i < p.k ? x[p.x_off + t * p.k + i] : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk++) {
            float a[4], b[4];
            for (uint i = 0u; i < 4u; i++)
                a[i] = ws[kk][tr + 16u * i];
            for (uint j = 0u; j < 4u; j++)
                b[j] = xs[kk][tc + 16u * j];
            for (uint i = 0u; i < 4u; i++)
                for (uint j = 0u; j < 4u; j++)
                    acc[i][j] += a[i] * b[j];
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++) {
            const uint r = r0 + tr + 16u * i, t = t0 + tc + 16u * j;
            if (r < p.rows && t < p.n)
                y[p.y_off + t * p.rows + r] = acc[i][j];
        }
}
