/* olmo2: no pre-norms; each block's output is RMS-normalised before the
 * residual add, and q and k are normalised over the whole projection
 * (not per head) before RoPE (NeoX). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_FULL;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, false);
    cf_ld_qk_norm(ld, hp, l, L);
    L->post_attn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", hp->n_embd, 1, true);
    cf_ld_swiglu(ld, hp, l, L, false);
    L->post_ffn_norm = cf_ld_layer(ld, l, "post_ffw_norm.weight", hp->n_embd, 1, true);
}

const cf_arch_desc cf_arch_olmo2 = {"olmo2", "OLMo 2", hparams, layer, NULL};
