#version 450
// Softmax attention, first half: one query head of one token over one
// chunk of 256 absolute positions of its KV head's cache (F32, F16 or
// BF16; latent attention's keys only, a value the first vd floats of its
// key row), flash-style: tiles of 64 positions, one score a lane, a
// running maximum and sum (online softmax), each lane's output dims
// summed over the tile in position order.  The chunk's partial (its
// maximum m, sum l, and unnormalised output) goes to the scratch, and
// attn_merge.comp adds the chunks in order.  Every reduction is a fixed
// tree and the chunks are fixed by position, so a token's result is the
// same every run and in every batch.
#include "common.glsl"
#include "kv.glsl"

#define LANES 64u
#define MAX_HD 640u
#define DPL (MAX_HD / LANES)
#define CHUNK 256u
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer Kc { uint kc[]; };
layout(std430, binding = 2) readonly buffer Vc { uint vc[]; };
layout(std430, binding = 3) writeonly buffer Part { float part[]; };


layout(push_constant) uniform P {
    uint q_off, q_ld, q_hs, part_off;
    uint kc_off, vc_off; // words
    uint n_ctx, n_head, n_head_kv, hd, pos0, n, window, max_chunks;
    float scale, softcap;
    float temp_scale, temp_floor;
    uint type, vd, k_only;
} p;

shared float qs[MAX_HD];

// Keys e and e + 1 (e even), value e, of the cache by element index.
vec2 key_pair(uint e)
{
    if (p.type == KV_F32)
        return vec2(uintBitsToFloat(kc[p.kc_off + e]), uintBitsToFloat(kc[p.kc_off + e + 1u]));
    return unpack2(p.type, kc[p.kc_off + e / 2u]);
}

float value_at(uint e)
{
    if (p.type == KV_F32)
        return uintBitsToFloat(vc[p.vc_off + e]);
    const vec2 v = unpack2(p.type, vc[p.vc_off + e / 2u]);
    return (e & 1u) != 0u ? v.y : v.x;
}
shared float ps[LANES];
shared float red[LANES];

float reduce(float v, bool is_max)
{
    const uint lane = gl_LocalInvocationID.x;
    red[lane] = v;
    barrier();
    for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            red[lane] = is_max ? max(red[lane], red[lane + s]) : red[lane] + red[lane + s];
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main()
{
    const uint gi = group_index(), lane = gl_LocalInvocationID.x;
    if (gi >= p.n * p.n_head * p.max_chunks)
        return;
    const uint th = gi / p.max_chunks, j = gi % p.max_chunks;
    const uint t = th / p.n_head, h = th % p.n_head, g = h / (p.n_head / p.n_head_kv);
    const uint pos = p.pos0 + t;
    const uint first = p.window > 0u && pos + 1u > p.window ? pos + 1u - p.window : 0u;
    const uint c = first / CHUNK + j;
    if (c > pos / CHUNK)
        return;
    const uint lo = max(first, c * CHUNK), hi = min(pos, c * CHUNK + CHUNK - 1u);
    const uint qa = p.q_off + t * p.q_ld + h * p.q_hs;
    // mistral3's temperature, on the queries as the CPU has it
    float temp = 1.0;
    if (p.temp_scale > 0.0)
        temp = log(floor(float(pos) / p.temp_floor) + 1.0) * p.temp_scale + 1.0;
    for (uint d = lane; d < p.hd; d += LANES)
        qs[d] = p.temp_scale > 0.0 ? q[qa + d] * temp : q[qa + d];
    barrier();
    const uint row0 = g * p.n_ctx, vstride = p.k_only != 0u ? p.hd : p.vd;
    float m = -1.0 / 0.0, l = 0.0, acc[DPL];
    for (uint k = 0u; k < DPL; k++)
        acc[k] = 0.0;
    for (uint p0 = lo; p0 <= hi; p0 += LANES) {
        const uint at = p0 + lane;
        float s = -1.0 / 0.0;
        if (at <= hi) {
            const uint ke = (row0 + at) * p.hd;
            float dot = 0.0;
            for (uint d = 0u; d < p.hd; d += 2u) {
                const vec2 kv = key_pair(ke + d);
                dot += qs[d] * kv.x + qs[d + 1u] * kv.y;
            }
            s = dot * p.scale;
            if (p.softcap > 0.0)
                s = p.softcap * tanh(s / p.softcap);
        }
        const float m_new = max(m, reduce(s, true));
        const float e = at <= hi ? exp(s - m_new) : 0.0;
        const float back = exp(m - m_new);
        ps[lane] = e;
        l = l * back + reduce(e, false);
        m = m_new;
        const uint np = min(LANES, hi + 1u - p0);
        for (uint k = 0u; k < DPL; k++) {
            const uint d = lane + k * LANES;
            if (d >= p.vd)
                break;
            float sum = 0.0;
            for (uint i = 0u; i < np; i++)
                sum += ps[i] * value_at((row0 + p0 + i) * vstride + d);
            acc[k] = acc[k] * back + sum;
        }
        barrier();
    }
    const uint pa = p.part_off + gi * (2u + p.vd);
    if (lane == 0u) {
        part[pa] = m;
        part[pa + 1u] = l;
    }
    for (uint k = 0u; k < DPL; k++) {
        const uint d = lane + k * LANES;
        if (d < p.vd)
            part[pa + 2u + d] = acc[k];
    }
}
