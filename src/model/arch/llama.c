/* llama: Llama 2/3, Mistral, SmolLM, TinyLlama, llama2.c checkpoints. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    (void)hp;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_llama = {"llama", "Llama 2/3, Mistral, SmolLM, TinyLlama", hparams, layer};
