/* qwen3: the llama block with NeoX RoPE and each head of q and k
 * RMS-normalised before RoPE (head_dim from attention.key_length, so q may
 * be wider than the embedding). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_HEAD;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qk_norm(ld, hp, l, L);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_qwen3 = {"qwen3", "Qwen3", hparams, layer, NULL};
