/* gpt-oss: attention with biases, a learned sink score per head, YaRN
 * RoPE (NeoX), a sliding window on every other layer; then a mixture of
 * experts with biases everywhere, routed by the top k raw logits and a
 * softmax over just those, each expert a clamped SwiGLU (swiglu_oai).
 * Its post_attention_norm is the ordinary norm before the FFN. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->n_swa = cf_ld_int(ld, "attention.sliding_window", 0);
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = CF_MOE_SOFTMAX_WEIGHT;
    hp->ffn = CF_FFN_SWIGLU_OAI;
    if (!ld->failed && hp->n_expert == 0) {
        ld->failed = true;
        cf_fail(ld->err, "metadata gpt-oss.expert_count is missing");
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, F = hp->n_ff_exp, X = hp->n_expert;
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qkv_bias(ld, hp, l, L);
    L->bo = cf_ld_layer(ld, l, "attn_output.bias", E, 1, true);
    L->attn_sinks = cf_ld_layer(ld, l, "attn_sinks.weight", hp->n_head, 1, true);
    L->ffn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", E, 1, true);
    cf_ld_moe(ld, hp, l, L, false);
    L->moe_router_b = cf_ld_layer(ld, l, "ffn_gate_inp.bias", X, 1, true);
    L->moe_gate_b = cf_ld_values(ld, l, "ffn_gate_exps.bias", F, X, true);
    L->moe_up_b = cf_ld_values(ld, l, "ffn_up_exps.bias", F, X, true);
    L->moe_down_b = cf_ld_values(ld, l, "ffn_down_exps.bias", E, X, true);
    L->swa = hp->n_swa > 0 && l % 2 == 0;
}

const cf_arch_desc cf_arch_gpt_oss = {"gpt-oss", "gpt-oss", hparams, layer, NULL};
