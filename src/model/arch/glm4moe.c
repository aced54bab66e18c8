/* glm4moe (GLM-4.5, 4.5-Air, 4.6, 4.7): attention with q/k/v biases,
 * optional per-head q/k norms and NeoX RoPE over the first n_rot dims of
 * each head; the first leading_dense_block_count FFNs dense, the others
 * experts chosen by sigmoid scores plus a bias (exp_probs_b) and weighed by
 * the unbiased scores, renormalised and scaled (routed_scaling_factor),
 * beside an ungated shared expert.  The file's last nextn_predict_layers
 * blocks predict further tokens (MTP) and are not run. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->n_layer -= cf_ld_count(ld, "nextn_predict_layers");
    if (cf_gguf_find_tensor(ld->g, "blk.0.attn_q_norm.weight"))
        hp->qk_norm = CF_QK_NORM_HEAD;
    cf_ld_moe_hparams(ld, hp);
    hp->moe_gating = cf_ld_moe_gating(ld);
    hp->moe_norm_w = cf_ld_count(ld, "expert_weights_norm") != 0;
    hp->moe_w_scale = cf_ld_float(ld, "expert_weights_scale", 0.0f);
    hp->n_ff_shexp = hp->n_ff_exp * cf_ld_count(ld, "expert_shared_count");
    if (ld->failed)
        return;
    if (hp->n_layer <= 0 || hp->n_expert == 0 || cf_ld_count(ld, "expert_group_count") > 1) {
        ld->failed = true;
        cf_fail(ld->err, "glm4moe: %d layers besides the MTP ones, %d experts in %d groups: not supported "
                "(experts in one group)", hp->n_layer, hp->n_expert, cf_ld_count(ld, "expert_group_count"));
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qkv_bias(ld, hp, l, L);
    if (hp->qk_norm == CF_QK_NORM_HEAD)
        cf_ld_qk_norm(ld, hp, l, L);
    /* despite its name, the norm before the FFN */
    L->ffn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", hp->n_embd, 1, true);
    if (cf_ld_moe_layer(ld, hp, l)) {
        cf_ld_moe(ld, hp, l, L, false);
        L->moe_choice_b = cf_ld_layer(ld, l, "exp_probs_b.bias", hp->n_expert, 1, true);
        if (hp->n_ff_shexp)
            cf_ld_shared_expert(ld, hp, l, L, false);
    } else {
        cf_ld_swiglu(ld, hp, l, L, false);
    }
}

const cf_arch_desc cf_arch_glm4moe = {"glm4moe", "GLM-4.5/4.6/4.7", hparams, layer, NULL};
