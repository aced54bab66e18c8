/* llama: Llama 2/3, Mistral, SmolLM, TinyLlama, llama2.c checkpoints, and
 * with experts (expert_count > 0) Mixtral: softmax over all experts, the
 * top k, their weights renormalised to sum 1. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = CF_MOE_SOFTMAX;
    hp->moe_norm_w = true;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    if (hp->n_expert)
        cf_ld_moe(ld, hp, l, L, true);
    else
        cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_llama = {"llama", "Llama 2/3, Mistral, Mixtral, SmolLM, TinyLlama", hparams,
                                    layer, NULL};
