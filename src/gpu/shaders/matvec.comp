#version 450
// y[t][r] = dot(weight row r, x[t]) for up to NV tokens a workgroup (the
// decode path), in the order every matmul shader sums (sum_order.glsl):
// 16 lanes a row, lane q adding its runs of 32 values in order, then the
// 16 partial sums added in order.  MUL_ID: a mixture of experts' pairs,
// one a column, each with its expert's matrix and its own input row.
#include "common.glsl"
#include "dequant.glsl"
#include "sum_order.glsl"

#define ROWS_WG 4u
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
    uint ldx, ldy; // floats between rows of x, of y
} p;

shared float part[ROWS_WG][PARTS][NV];

void main()
{
    const uint gi = group_index(), lane = gl_LocalInvocationID.x, rr = lane / PARTS, q = lane % PARTS;
    const uint row_groups = (p.rows + ROWS_WG - 1u) / ROWS_WG;
    const uint r = (gi % row_groups) * ROWS_WG + rr, t0 = (gi / row_groups) * NV;
    if (t0 >= p.n)
        return;
    const uint nt = min(NV, p.n - t0);
    precise float acc[NV];
    for (uint t = 0u; t < NV; t++)
        acc[t] = 0.0;
    if (r < p.rows) {
#ifdef MUL_ID
        const uint row_b = p.w_off + uint(ids[p.ids_off + t0]) * p.expert_bytes + r * p.row_bytes;
        const uint x0 = p.x_off + uint(xrow[p.xrow_off + t0]) * p.ldx;
#else
        const uint row_b = p.w_off + r * p.row_bytes;
        const uint x0 = p.x_off + t0 * p.ldx;
#endif
        const uint runs = (p.k + 31u) / 32u;
        for (uint u = q; u < runs; u += PARTS) {
            const uint i0 = u * 32u;
            if (i0 + 32u <= p.k) {
                const uint b = run_block(row_b, i0);
                for (uint j = 0u; j < 32u; j++) {
                    const float wv = run_at(b, i0, j);
                    for (uint t = 0u; t < nt; t++)
                        acc[t] = fma(wv, x[x0 + t * p.ldx + i0 + j], acc[t]);
                }
            } else { // the row's last, partial run (F32, F16, BF16 rows of any length)
                for (uint i = i0; i < p.k; i++) {
                    const float wv = weight_at(row_b, i);
                    for (uint t = 0u; t < nt; t++)
                        acc[t] = fma(wv, x[x0 + t * p.ldx + i], acc[t]);
                }
            }
        }
    }
    for (uint t = 0u; t < NV; t++)
        part[rr][q][t] = acc[t];
    barrier();
    if (r < p.rows && q == 0u)
        for (uint t = 0u; t < nt; t++) {
            precise float s = part[rr][0][t];
            for (uint i = 1u; i < PARTS; i++)
                s += part[rr][i][t];
            y[p.y_off + (t0 + t) * p.ldy + r] = s;
        }
}
