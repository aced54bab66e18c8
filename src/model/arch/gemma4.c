/* gemma4 (E2B-like, and MoE 26B-A4B-like): gemma3's block (sandwich norms, GELU-gated FFN,
 * per-head q/k norms, embedding times sqrt(n_embd)) with sliding layers by
 * a pattern, each kind with its own head size, rotated dims and RoPE base
 * (the global layers' frequencies divided by rope_freqs); V RMS-normalised
 * without a weight; attention scale 1; the last shared_kv_layers layers
 * read the cache of the last own layer of their kind; per-layer embeddings
 * added after each FFN; every layer's output scaled; logits soft-capped. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_ld_gemma(ld, hp);
    hp->n_rot_swa = cf_ld_int(ld, "rope.dimension_count_swa", hp->n_rot);
    const int hd_swa = cf_ld_int(ld, "attention.key_length_swa", hp->head_dim);
    hp->head_dim = hd_swa > hp->head_dim ? hd_swa : hp->head_dim;
    hp->kq_scale = 1.0f;
    hp->logit_softcap = cf_ld_float(ld, "final_logit_softcapping", 0.0f);
    hp->ple_dim = cf_ld_count(ld, "embedding_length_per_layer_input");
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = CF_MOE_SOFTMAX;
    hp->moe_norm_w = true;
}

/* Gemma 4 MoE's FFN: the dense one and the experts side by side. */
static void experts(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd;
    cf_ld_moe(ld, hp, l, L, false);
    L->dense_norm = cf_ld_layer(ld, l, "post_ffw_norm_1.weight", E, 1, true);
    L->exp_pre_norm = cf_ld_layer(ld, l, "pre_ffw_norm_2.weight", E, 1, true);
    L->exp_norm = cf_ld_layer(ld, l, "post_ffw_norm_2.weight", E, 1, true);
    L->router_scale = cf_ld_layer(ld, l, "ffn_gate_inp.scale", E, 1, true);
    L->exp_scale = cf_ld_layer(ld, l, "ffn_down_exps.scale", hp->n_expert, 1, true);
    if (!ld->failed && L->moe_router->type != CF_TYPE_F32) {
        ld->failed = true;
        cf_fail(ld->err, "blk.%d: a router of type %s is not supported (F32 only)", l,
                cf_type_name(L->moe_router->type));
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd;
    L->swa = cf_ld_per_layer(ld, "attention.sliding_window_pattern", hp->n_layer, l, 0) != 0;
    L->head_dim = L->swa ? cf_ld_int(ld, "attention.key_length_swa", hp->head_dim)
                         : cf_ld_int(ld, "attention.key_length", hp->head_dim);
    L->n_rot = L->swa ? hp->n_rot_swa : hp->n_rot;
    /* the last shared layers read the last own layer of their kind */
    const int own = hp->n_layer - cf_ld_count(ld, "attention.shared_kv_layers");
    if (l >= own)
        L->kv_src = L->swa ? own - 2 : own - 1;
    const int64_t Q = (int64_t)hp->n_head * L->head_dim, KV = (int64_t)L->n_head_kv * L->head_dim;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->wq = cf_ld_layer(ld, l, "attn_q.weight", E, Q, true);
    L->q_norm = cf_ld_layer(ld, l, "attn_q_norm.weight", L->head_dim, 1, true);
    if (L->kv_src == l) {
        L->wk = cf_ld_layer(ld, l, "attn_k.weight", E, KV, true);
        /* without attn_v, V is the raw K projection (normalised as every V) */
        L->wv = cf_ld_layer(ld, l, "attn_v.weight", E, KV, false);
        L->k_norm = cf_ld_layer(ld, l, "attn_k_norm.weight", L->head_dim, 1, true);
    }
    L->v_norm = true;
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", Q, E, true);
    L->post_attn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", E, 1, true);
    cf_ld_swiglu(ld, hp, l, L, true);
    L->post_ffn_norm = cf_ld_layer(ld, l, "post_ffw_norm.weight", E, 1, true);
    if (hp->n_expert)
        experts(ld, hp, l, L);
    if (hp->ple_dim) {
        L->ple_gate = cf_ld_layer(ld, l, "inp_gate.weight", E, hp->ple_dim, true);
        L->ple_proj = cf_ld_layer(ld, l, "proj.weight", hp->ple_dim, E, true);
        L->ple_norm = cf_ld_layer(ld, l, "post_norm.weight", E, 1, true);
    }
    L->out_scale = cf_ld_layer(ld, l, "layer_output_scale.weight", 1, 1, false);
    if (!ld->failed && (L->kv_src < 0 || L->kv_src >= own)) {
        ld->failed = true;
        cf_fail(ld->err, "blk.%d: no earlier layer to share a cache with", l);
    }
}

const cf_arch_desc cf_arch_gemma4 = {"gemma4", "Gemma 4", hparams, layer, NULL};
