/* smollm3: the llama block, but every 4th layer has no RoPE at all (the
 * period is fixed in llama.cpp, not stored in the file). */
#include "../arch.h"

#define NO_ROPE_EVERY 4

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    (void)hp;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_swiglu(ld, hp, l, L, true);
    L->rope = (l + 1) % NO_ROPE_EVERY != 0;
}

const cf_arch_desc cf_arch_smollm3 = {"smollm3", "SmolLM3", hparams, layer, NULL};
