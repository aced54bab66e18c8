/* granitehybrid (IBM Granite 4.0-H): granite's four multipliers over
 * layers that mix tokens with Mamba2 (those with no KV heads) or with
 * attention, without positions unless rope.scaling.finetuned says so;
 * each has a SwiGLU FFN, or experts routed as Mixtral's beside an
 * always-on shared expert (the -H Tiny/Small files). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_arch_granite.hparams(ld, hp);
    cf_ld_mamba2_hparams(ld, hp);
    cf_ld_moe_hparams(ld, hp);
    if (hp->n_expert)
        hp->n_ff_shexp = cf_ld_count(ld, "expert_shared_feed_forward_length");
    hp->moe_gating = CF_MOE_SOFTMAX;
    hp->moe_norm_w = true;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    if (L->n_head_kv == 0) {
        cf_ld_mamba2(ld, hp, l, L);
    } else {
        cf_ld_attention(ld, hp, l, L, true);
        L->rope = cf_ld_bool(ld, "rope.scaling.finetuned", false);
    }
    if (hp->n_expert) {
        cf_ld_moe(ld, hp, l, L, true);
        if (hp->n_ff_shexp)
            cf_ld_shared_expert(ld, hp, l, L, false);
    } else {
        cf_ld_swiglu(ld, hp, l, L, true);
    }
}

const cf_arch_desc cf_arch_granitehybrid = {"granitehybrid", "Granite 4.0-H", hparams, layer, NULL};
