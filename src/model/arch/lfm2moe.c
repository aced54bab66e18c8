/* lfm2moe (LFM2-8B-A1B): lfm2's short convolutions and attention, the
 * first leading_dense_block_count FFNs dense and the others experts chosen
 * by sigmoid scores plus a bias (exp_probs_b), weighed by the unbiased
 * scores renormalised.  The weights are always renormalised and never
 * scaled, whatever the file says (llama.cpp reads neither key). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_ld_lfm2(ld, hp);
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = cf_ld_moe_gating(ld);
    hp->moe_norm_w = true;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_lfm2_mixer(ld, hp, l, L);
    if (cf_ld_moe_layer(ld, hp, l)) {
        cf_ld_moe(ld, hp, l, L, true);
        L->moe_choice_b = cf_ld_layer(ld, l, "exp_probs_b.bias", hp->n_expert, 1, true);
    } else {
        cf_ld_swiglu(ld, hp, l, L, true);
    }
}

const cf_arch_desc cf_arch_lfm2moe = {"lfm2moe", "LFM2-MoE", hparams, layer, "token_embd_norm.weight"};
