#version 450
// Store n tokens' key and value heads into a layer's cache (F32, F16 or
// BF16), keys [n_head_kv][n_ctx][hd] and values [n_head_kv][n_ctx][vd]
// (vd 0: keys only) at positions pos0..: one pair of values a thread, the
// keys' pairs first.
#include "common.glsl"
#include "kv.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Kin { float kin[]; };
layout(std430, binding = 1) readonly buffer Vin { float vin[]; };
layout(std430, binding = 2) writeonly buffer Kc { uint kc[]; };
layout(std430, binding = 3) writeonly buffer Vc { uint vc[]; };

layout(push_constant) uniform P {
    uint k_off, k_ld, k_hs, v_off, v_ld, v_hs;
    uint kc_off, vc_off; // words
    uint n, heads, hd, n_ctx, pos0, type, vd;
} p;

void main()
{
    const uint kpairs = p.hd / 2u, kper = p.n * p.heads * kpairs, vper = p.n * p.heads * (p.vd / 2u);
    uint idx = group_index() * 256u + gl_LocalInvocationID.x;
    if (idx >= kper + vper)
        return;
    const bool value = idx >= kper;
    if (value)
        idx -= kper;
    const uint pairs = value ? p.vd / 2u : kpairs, dim = value ? p.vd : p.hd;
    const uint t = idx / (p.heads * pairs), g = (idx / pairs) % p.heads, d = 2u * (idx % pairs);
    const uint e = (g * p.n_ctx + p.pos0 + t) * dim + d; // the pair's first element
    const uint src = value ? p.v_off + t * p.v_ld + g * p.v_hs + d : p.k_off + t * p.k_ld + g * p.k_hs + d;
    const float a = value ? vin[src] : kin[src], b = value ? vin[src + 1u] : kin[src + 1u];
    const uint c0 = value ? p.vc_off : p.kc_off;
    if (p.type == KV_F32) {
        if (value) {
            vc[c0 + e] = floatBitsToUint(a);
            vc[c0 + e + 1u] = floatBitsToUint(b);
        } else {
            kc[c0 + e] = floatBitsToUint(a);
            kc[c0 + e + 1u] = floatBitsToUint(b);
        }
    } else if (value)
        vc[c0 + e / 2u] = pack2(p.type, a, b);
    else
        kc[c0 + e / 2u] = pack2(p.type, a, b);
}
