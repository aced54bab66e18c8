/* mistral3 (Ministral 3): the llama block with YaRN RoPE and Llama 4's
 * attention temperature, q scaled by 1 + t ln(floor(pos / n) + 1) past
 * the original context n (YaRN's), so that long contexts keep sharp
 * attention; head size from key_length. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->attn_temp_scale = cf_ld_float(ld, "attention.temperature_scale", 0.0f);
    hp->attn_temp_floor = hp->rope_yarn_orig_ctx > 0 ? hp->rope_yarn_orig_ctx : hp->n_ctx_train;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_mistral3 = {"mistral3", "Ministral 3", hparams, layer, NULL};
