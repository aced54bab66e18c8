/* nemotron_h / nemotron_h_moe (NVIDIA Nemotron-H, Nemotron Nano 2 and 3):
 * each layer is one block under its one norm (attn_norm): Mamba2 (no FFN
 * width, no KV heads), attention without positions (KV heads), or else
 * an FFN of relu(up)^2 without a gate.  nemotron_h_moe's FFNs are experts
 * of that kind beside a shared one, routed by sigmoid with a choice bias,
 * renormalised when the file says so and scaled. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->ffn = CF_FFN_RELU2;
    cf_ld_mamba2_hparams(ld, hp);
    cf_ld_moe_hparams(ld, hp);
    if (!hp->n_expert)
        return;
    hp->n_ff_shexp = cf_ld_count(ld, "expert_shared_feed_forward_length");
    hp->moe_gating = CF_MOE_SIGMOID;
    hp->moe_norm_w = cf_ld_bool(ld, "expert_weights_norm", false);
    hp->moe_w_scale = cf_ld_float(ld, "expert_weights_scale", 1.0f);
    if (!ld->failed && (cf_ld_count(ld, "expert_group_count") > 1 || cf_ld_count(ld, "moe_latent_size"))) {
        ld->failed = true;
        cf_fail(ld->err, "%s: group-limited routing and latent experts are not supported", ld->arch);
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd;
    if (L->n_ff == 0 && L->n_head_kv == 0) {
        cf_ld_mamba2(ld, hp, l, L);
    } else if (L->n_ff == 0) {
        cf_ld_attention(ld, hp, l, L, true);
        L->rope = false;
    } else if (hp->n_expert) {
        L->ffn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
        cf_ld_moe(ld, hp, l, L, false);
        if (hp->n_ff_shexp)
            cf_ld_shared_expert(ld, hp, l, L, false);
    } else {
        L->ffn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
        L->w_up = cf_ld_layer(ld, l, "ffn_up.weight", E, L->n_ff, true);
        L->w_down = cf_ld_layer(ld, l, "ffn_down.weight", L->n_ff, E, true);
    }
}

const cf_arch_desc cf_arch_nemotron_h = {"nemotron_h", "Nemotron-H, Nemotron Nano 2", hparams, layer, NULL};
const cf_arch_desc cf_arch_nemotron_h_moe = {"nemotron_h_moe", "Nemotron 3 Nano", hparams, layer, NULL};
