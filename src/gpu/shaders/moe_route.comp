#version 450
// Mixture-of-experts routing of one token a workgroup, as
// src/model/moe.c's cf_moe_route: softmax or sigmoid scores (or the top
// logits then their softmax), a choice bias, expert groups, the weights
// normalised and scaled.  One invocation does it in the CPU's order, so
// that near-ties go the same way every run.  Unlike the CPU, the softmax
// sums in float (not every device has doubles).
#include "common.glsl"

#define MAXE 512u
#define MAXK 64u
layout(local_size_x = 1) in;

layout(std430, binding = 0) readonly buffer L { float logits[]; };
layout(std430, binding = 1) readonly buffer Bs { float bias[]; };
layout(std430, binding = 2) writeonly buffer S { int sel[]; };
layout(std430, binding = 3) writeonly buffer Wt { float w[]; };
layout(std430, binding = 4) writeonly buffer Xr { int xrow[]; };

layout(push_constant) uniform P {
    uint l_off, b_off, sel_off, w_off, xrow_off, n, n_expert, k;
    uint gating, has_bias, groups, groups_used, norm_w;
    float w_scale;
} p;

shared float prob[MAXE], score[MAXE], a[MAXE];
shared uint taken[MAXE / 32u];
shared uint pick[MAXE], best[MAXE];

// The k largest of a[base .. base + n) (ties: the lower index first),
// largest first, into pick (to_best: best), as indices from base.
void top_k(uint base, uint n, uint k, bool to_best)
{
    for (uint i = 0u; i < MAXE / 32u; i++)
        taken[i] = 0u;
    for (uint j = 0u; j < k; j++) {
        int b = -1;
        for (uint i = 0u; i < n; i++)
            if ((taken[i / 32u] & (1u << (i % 32u))) == 0u && (b < 0 || a[base + i] > a[base + uint(b)]))
                b = int(i);
        taken[uint(b) / 32u] |= 1u << (uint(b) % 32u);
        if (to_best)
            best[j] = uint(b);
        else
            pick[j] = uint(b);
    }
}

// prob[0 .. n) = softmax of a[0 .. n)
void softmax_a(uint n)
{
    float mx = -1.0 / 0.0, sum = 0.0;
    for (uint i = 0u; i < n; i++)
        mx = max(mx, a[i]);
    for (uint i = 0u; i < n; i++) {
        prob[i] = exp(a[i] - mx);
        sum += prob[i];
    }
    const float inv = 1.0 / sum;
    for (uint i = 0u; i < n; i++)
        prob[i] *= inv;
}

// pick = the top k of score, from the best groups_used groups only when
// the experts come in groups (a group's score: the sum of its best two).
void choose(uint n, uint k)
{
    const uint G = p.groups;
    for (uint i = 0u; i < n; i++)
        a[i] = score[i];
    if (G <= 1u) {
        top_k(0u, n, k, false);
        return;
    }
    const uint per = n / G;
    for (uint g = 0u; g < G; g++) {
        top_k(g * per, per, min(per, 2u), false);
        best[MAXE / 2u + g] = floatBitsToUint(score[g * per + pick[0]] + (per < 2u ? 0.0 : score[g * per + pick[1]]));
    }
    for (uint g = 0u; g < G; g++)
        a[g] = uintBitsToFloat(best[MAXE / 2u + g]);
    top_k(0u, G, p.groups_used, true);
    for (uint i = 0u; i < n; i++)
        a[i] = -1.0 / 0.0;
    for (uint j = 0u; j < p.groups_used; j++)
        for (uint i = best[j] * per; i < (best[j] + 1u) * per; i++)
            a[i] = score[i];
    top_k(0u, n, k, false);
}

void main()
{
    const uint t = group_index();
    if (t >= p.n)
        return;
    const uint n = p.n_expert, k = p.k, lo = p.l_off + t * n;
    float wk[MAXK];
    if (p.gating == 1u) { // the top k logits, then their softmax
        for (uint i = 0u; i < n; i++)
            a[i] = logits[lo + i];
        top_k(0u, n, k, false);
        for (uint j = 0u; j < k; j++)
            a[j] = logits[lo + pick[j]];
        softmax_a(k);
        for (uint j = 0u; j < k; j++)
            wk[j] = prob[j];
    } else {
        if (p.gating == 2u)
            for (uint i = 0u; i < n; i++)
                prob[i] = 1.0 / (1.0 + exp(-logits[lo + i]));
        else {
            for (uint i = 0u; i < n; i++)
                a[i] = logits[lo + i];
            softmax_a(n);
        }
        for (uint i = 0u; i < n; i++)
            score[i] = p.has_bias != 0u ? prob[i] + bias[p.b_off + i] : prob[i];
        choose(n, k);
        for (uint j = 0u; j < k; j++)
            wk[j] = prob[pick[j]];
    }
    if (p.norm_w != 0u) {
        float sum = 0.0;
        for (uint j = 0u; j < k; j++)
            sum += wk[j];
        sum = max(sum, 6.103515625e-5);
        for (uint j = 0u; j < k; j++)
            wk[j] /= sum;
    }
    for (uint j = 0u; j < k; j++) {
        sel[p.sel_off + t * k + j] = int(pick[j]);
        w[p.w_off + t * k + j] = p.w_scale > 0.0 ? wk[j] * p.w_scale : wk[j];
        xrow[p.xrow_off + t * k + j] = int(t);
    }
}
