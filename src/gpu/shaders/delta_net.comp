#version 450
// qwen35's gated delta net, one value head a workgroup, the batch's
// tokens in order (the CPU's delta_head): each lane owns columns j of the
// head's state S (key dim i, value dim j) and sums over i in order, as
// the CPU does; the norms' sums go through fixed trees.
#include "common.glsl"

#define LANES 128u
#define MAXD 256u
layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer Qkv { float qkv[]; };
layout(std430, binding = 1) readonly buffer Z { float zs[]; };
layout(std430, binding = 2) readonly buffer Beta { float betas[]; };
layout(std430, binding = 3) readonly buffer Alpha { float alphas[]; };
layout(std430, binding = 4) readonly buffer DtBias { float dt_biases[]; };
layout(std430, binding = 5) readonly buffer A { float as[]; };
layout(std430, binding = 6) readonly buffer Norm { float norm[]; };
layout(std430, binding = 7) buffer St { float S[]; };
layout(std430, binding = 8) writeonly buffer O { float o[]; };

layout(push_constant) uniform P {
    uint qkv_off, qkv_ld, z_off, beta_off, alpha_off, dt_off, a_off, norm_off, s_off, out_off;
    uint n, D, Hk, Hv, grouped;
    float eps;
} p;

shared float qs[MAXD], ks[MAXD], red[LANES];

float total(float v)
{
    const uint lane = gl_LocalInvocationID.x;
    red[lane] = v;
    barrier();
    for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            red[lane] += red[lane + s];
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main()
{
    const uint h = group_index(), lane = gl_LocalInvocationID.x, D = p.D, Hk = p.Hk, Hv = p.Hv;
    if (h >= Hv)
        return;
    const uint kh = p.grouped != 0u ? h / (Hv / Hk) : h % Hk, s0 = p.s_off + h * D * D;
    const float q_scale = 1.0 / sqrt(float(D));
    const float dt_bias = dt_biases[p.dt_off + h], a = as[p.a_off + h];
    for (uint t = 0u; t < p.n; t++) {
        const uint row = p.qkv_off + t * p.qkv_ld;
        const uint qa = row + kh * D, ka = row + (Hk + kh) * D, va = row + (2u * Hk + h) * D;
        float sq = 0.0, sk = 0.0;
        for (uint i = lane; i < D; i += LANES) {
            sq += qkv[qa + i] * qkv[qa + i];
            sk += qkv[ka + i] * qkv[ka + i];
        }
        const float nq = 1.0 / max(sqrt(total(sq)), p.eps), nk = 1.0 / max(sqrt(total(sk)), p.eps);
        for (uint i = lane; i < D; i += LANES) {
            qs[i] = qkv[qa + i] * nq * q_scale;
            ks[i] = qkv[ka + i] * nk;
        }
        barrier();
        float b_raw, a_raw;
        if (p.grouped != 0u) {
            const uint r = Hv / Hk, ba = p.beta_off + t * 2u * Hv + (h / r) * 2u * r;
            b_raw = betas[ba + h % r];
            a_raw = betas[ba + r + h % r];
        } else {
            b_raw = betas[p.beta_off + t * Hv + h];
            a_raw = alphas[p.alpha_off + t * Hv + h];
        }
        const float beta = 1.0 / (1.0 + exp(-b_raw)), x = a_raw + dt_bias;
        const float decay = exp((x > 20.0 ? x : log(1.0 + exp(x))) * a);
        float ov[MAXD / LANES], ss = 0.0;
        for (uint c = 0u; c < MAXD / LANES; c++) {
            const uint j = lane + c * LANES;
            ov[c] = 0.0;
            if (j >= D)
                continue;
            float d = 0.0;
            for (uint i = 0u; i < D; i++) {
                const float s = S[s0 + i * D + j] * decay;
                S[s0 + i * D + j] = s;
                d += s * ks[i];
            }
            d = beta * (qkv[va + j] - d);
            float acc = 0.0;
            for (uint i = 0u; i < D; i++) {
                const float s = S[s0 + i * D + j] + ks[i] * d;
                S[s0 + i * D + j] = s;
                acc += s * qs[i];
            }
            ov[c] = acc;
            ss += acc * acc;
        }
        const float scale = 1.0 / sqrt(total(ss) / float(D) + p.eps);
        const uint oa = t * Hv * D + h * D;
        for (uint c = 0u; c < MAXD / LANES; c++) {
            const uint j = lane + c * LANES;
            if (j < D) {
                const float z = zs[p.z_off + oa + j];
                o[p.out_off + oa + j] = ov[c] * scale * norm[p.norm_off + j] * (z / (1.0 + exp(-z)));
            }
        }
        barrier();
    }
}
