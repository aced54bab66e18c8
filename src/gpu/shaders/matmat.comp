#version 450
// y[t][r] = dot(weight row r, x[t]) in tiles of 64 rows by 64 tokens (the
// prefill path): each step widens one run of 32 columns of the weights
// into shared memory once for all 64 tokens; each thread keeps 4 x 4
// sums.  The runs are taken in the order of sum_order.glsl, one partial
// sum at a time, so the results are the decode shader's bits.
#include "common.glsl"
#include "dequant.glsl"
#include "sum_order.glsl"

#define BM 64u
#define BN 64u
#define BK 32u
layout(local_size_x = 256) in;

layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform P {
    uint w_off, row_bytes, rows, k;
    uint x_off, y_off, n;
    uint ids_off, xrow_off, expert_bytes; // (matvec's MUL_ID: unused here)
    uint ldx, ldy;                        // floats between rows of x, of y
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
    const uint tr = tid % 16u, tc = tid / 16u, runs = (p.k + BK - 1u) / BK;
    precise float res[4][4], acc[4][4];
    for (uint q = 0u; q < PARTS; q++) {
        for (uint i = 0u; i < 4u; i++)
            for (uint j = 0u; j < 4u; j++)
                acc[i][j] = 0.0;
        for (uint u = q; u < runs; u += PARTS) {
            const uint k0 = u * BK;
            for (uint e = tid; e < BM * BK; e += 256u) {
                const uint rr = e / BK, kk = e % BK, r = r0 + rr, i = k0 + kk;
                ws[kk][rr] = r < p.rows && i < p.k ? weight_at(p.w_off + r * p.row_bytes, i) : 0.0;
            }
            for (uint e = tid; e < BN * BK; e += 256u) {
                const uint tt = e / BK, kk = e % BK, t = t0 + tt, i = k0 + kk;
                xs[kk][tt] = t < p.n && i < p.k ? x[p.x_off + t * p.ldx + i] : 0.0;
            }
            barrier();
            // a run past k (the last of F32, F16, BF16 rows of any length)
            // stops there, as the decode shader's does
            const uint kn = min(BK, p.k - k0);
            for (uint kk = 0u; kk < kn; kk++) {
                float a[4], b[4];
                for (uint i = 0u; i < 4u; i++)
                    a[i] = ws[kk][tr + 16u * i];
                for (uint j = 0u; j < 4u; j++)
                    b[j] = xs[kk][tc + 16u * j];
                for (uint i = 0u; i < 4u; i++)
                    for (uint j = 0u; j < 4u; j++)
                        acc[i][j] = fma(a[i], b[j], acc[i][j]);
            }
            barrier();
        }
        for (uint i = 0u; i < 4u; i++)
            for (uint j = 0u; j < 4u; j++)
                res[i][j] = q == 0u ? acc[i][j] : res[i][j] + acc[i][j];
    }
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++) {
            const uint r = r0 + tr + 16u * i, t = t0 + tc + 16u * j;
            if (r < p.rows && t < p.n)
                y[p.y_off + t * p.ldy + r] = res[i][j];
        }
}
