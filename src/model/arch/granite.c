/* granite: the llama block with four multipliers from the file: the
 * input embedding's, the residual branches', the attention scores' (in
 * place of 1/sqrt(head_dim)) and the logits' (a divisor). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->embd_scale = cf_ld_float(ld, "embedding_scale", 1.0f);
    hp->residual_scale = cf_ld_float(ld, "residual_scale", 1.0f);
    hp->kq_scale = cf_ld_float(ld, "attention.scale", hp->kq_scale);
    hp->logit_scale = 1.0f / cf_ld_float(ld, "logit_scale", 1.0f);
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_granite = {"granite", "Granite 3", hparams, layer, NULL};
