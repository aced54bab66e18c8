/* qwen2: the llama block with q/k/v biases and NeoX RoPE. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    hp->rope_style = CF_ROPE_NEOX;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qkv_bias(ld, hp, l, L);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_qwen2 = {"qwen2", "Qwen2, Qwen2.5", hparams, layer, NULL};
