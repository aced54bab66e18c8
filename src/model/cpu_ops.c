/* The CPU's ops (backend.h): the table, and the small ops that only name
 * the CPU's buffers. */
#include <math.h>

#include "cpu_pass.h"

static void matmul(cf_exec *e, cf_weight w, int first, int n, cf_dst dst)
{
    const cf_pass *P = e->P;
    cf_ctx *c = P->c;
    float *y = dst == CF_DST_OUT ? c->tmp : dst == CF_DST_ROUTER ? c->moe_logits : P->logits;
    const int width = dst == CF_DST_OUT ? P->hp->n_embd : dst == CF_DST_ROUTER ? P->hp->n_expert : P->hp->n_vocab;
    thr *T = cpu_thr(e);
    cpu_matmul_rows(T, w, act(T, 0, first), n, y, (size_t)width);
}

static void round_ff(cf_exec *e, cf_weight w)
{
    cpu_round(cpu_thr(e), w, e->P->c->ff, (size_t)w->ne[0]);
}

static void logit_scale(cf_exec *e, int rows)
{
    const thr *T = cpu_thr(e);
    const cf_pass *P = e->P;
    const float scale = P->hp->logit_scale, cap = P->hp->logit_softcap;
    const int V = P->hp->n_vocab;
    int v0, v1;
    split(V, T->ith, T->nth, &v0, &v1);
    for (int r = 0; r < rows; r++)
        for (int v = v0; v < v1; v++) {
            float *y = &P->logits[(size_t)r * V + v];
            *y *= scale;
            if (cap > 0)
                *y = tanhf(*y * (1.0f / cap)) * cap;
        }
}

/* A barrier; decoding, each thread fetches the start of its share of the
 * rows it multiplies next while it waits. */
static void sync(cf_exec *e, cf_next next, int l)
{
    const thr *T = cpu_thr(e);
    if (next == CF_NEXT_NONE) {
        sync_all(T);
        return;
    }
    if (next == CF_NEXT_QKV) {
        const cf_fetch f = cpu_qkv_start(T, l);
        cpu_sync_fetching(T, &f, 1);
        return;
    }
    const cf_layer *L = &e->P->m->layers[l];
    if (next == CF_NEXT_FFN_DOWN) {
        const cf_fetch f = cpu_share_start(T, L->w_down, 0, L->w_down->ne[1]);
        cpu_sync_fetching(T, &f, 1);
        return;
    }
    const bool gpt2 = e->P->hp->ffn == CF_FFN_GELU, fused = !gpt2 && !L->w_gate;
    cf_weight qkv[3], ff[3];
    cf_layer_groups(L, qkv, ff);
    const int64_t F = L->n_ff;
    const cf_fetch f[2] = {cpu_share_start(T, ff[0], 0, F),
                           gpt2 ? (cf_fetch){0} : cpu_share_start(T, fused ? L->w_up : ff[1], fused ? F : 0, F)};
    cpu_sync_fetching(T, f, gpt2 ? 1 : 2);
}

const cf_ops cf_cpu_ops = {
    .name = "CPU",
    .embed = cpu_embed,
    .ple_inputs = cpu_ple_inputs,
    .residual_norm = cpu_residual_norm,
    .qkv = cpu_qkv,
    .latent_qkv = cpu_latent_qkv,
    .attention = cpu_attention,
    .matmul = matmul,
    .glu = cpu_glu,
    .round_ff = round_ff,
    .conv = cpu_conv,
    .delta_net = cpu_delta_net,
    .mamba2 = cpu_mamba2,
    .moe_route = cpu_moe_route,
    .experts_up = cpu_experts_up,
    .experts_down = cpu_experts_down,
    .shared_expert = cpu_shared_expert,
    .dual_ffn_inputs = cpu_dual_ffn_inputs,
    .dual_ffn_sum = cpu_dual_ffn_sum,
    .ple = cpu_ple,
    .logit_scale = logit_scale,
    .sync = sync,
};
