/* qwen3moe: qwen3's attention (per-head q/k norms, NeoX RoPE) over a
 * mixture of experts routed as Mixtral's: softmax over all experts, the
 * top k, renormalised. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_HEAD;
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = CF_MOE_SOFTMAX;
    hp->moe_norm_w = true;
    if (!ld->failed && hp->n_expert == 0) {
        ld->failed = true;
        cf_fail(ld->err, "metadata qwen3moe.expert_count is missing");
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qk_norm(ld, hp, l, L);
    cf_ld_moe(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_qwen3moe = {"qwen3moe", "Qwen3 MoE", hparams, layer, NULL};
