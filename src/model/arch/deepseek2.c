/* deepseek2 (DeepSeek-V2, V2-Lite, V3-style files): multi-head latent
 * attention, the files' split layout (attn_k_b / attn_v_b): one cached row
 * a position, its normed latent then a RoPE part every head shares (NORM
 * pairs, YaRN); queries straight from attn_q or through a LoRA (attn_q_a,
 * its norm, attn_q_b), their nope part absorbed by attn_k_b, each head's
 * output taken out of the latent by attn_v_b.  The scores' scale is YaRN's
 * mscale squared over sqrt(nope + rope); the rotations themselves are not
 * scaled.  Leading dense layers, then experts (softmax or sigmoid with a
 * selection bias, groups, normalised and scaled weights) with always-added
 * shared experts. */
#include <math.h>

#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->kv_lora = cf_ld_int(ld, "attention.kv_lora_rank", -1);
    hp->q_lora = cf_ld_count(ld, "attention.q_lora_rank");
    const int k_mla = cf_ld_count(ld, "attention.key_length_mla");
    hp->mla_v = cf_ld_count(ld, "attention.value_length_mla");
    hp->mla_nope = k_mla - hp->n_rot;
    if (ld->failed)
        return;
    if (!k_mla || !hp->mla_v) {
        ld->failed = true;
        cf_fail(ld->err, "deepseek2 without key_length_mla / value_length_mla (one attn_kv_b, not split "
                "into attn_k_b and attn_v_b) is not supported: convert the model again");
        return;
    }
    if (hp->mla_nope <= 0 || hp->head_dim != hp->kv_lora + hp->n_rot || hp->mla_v > hp->kv_lora ||
        hp->n_head_kv != 1) {
        ld->failed = true;
        cf_fail(ld->err, "deepseek2: latent attention of rank %d, key %d (%d rotated), value %d and cache row "
                "%d over %d KV heads is not supported", hp->kv_lora, k_mla, hp->n_rot, hp->mla_v,
                hp->head_dim, hp->n_head_kv);
        return;
    }
    /* rope_yarn's magnitude factor is cancelled (llama.cpp's attn_factor);
     * YaRN's mscale goes into the scores' scale instead */
    const float ext = 1.0f / hp->rope_freq_scale;
    const float log_mul = cf_ld_float(ld, "rope.scaling.yarn_log_multiplier", 0.0f) / 0.1f;
    const float mscale = 1.0f + 0.1f * log_mul * logf(ext);
    if (hp->rope_yarn_orig_ctx > 0)
        hp->rope_yarn_attn_factor = 1.0f / (1.0f + 0.1f * logf(ext));
    hp->kq_scale = mscale * mscale / sqrtf((float)k_mla);

    cf_ld_moe_hparams(ld, hp);
    hp->n_ff_shexp = hp->n_ff_exp * cf_ld_count(ld, "expert_shared_count");
    hp->moe_gating = cf_ld_count(ld, "expert_gating_func") == 2 ? CF_MOE_SIGMOID : CF_MOE_SOFTMAX;
    hp->moe_w_scale = cf_ld_float(ld, "expert_weights_scale", 0.0f);
    bool norm = false;
    hp->moe_norm_w = cf_gguf_get_bool(ld->g, "deepseek2.expert_weights_norm", &norm) && norm;
    hp->moe_groups = cf_ld_count(ld, "expert_group_count");
    hp->moe_groups_used = cf_ld_count(ld, "expert_group_used_count");
    if (!ld->failed && hp->moe_groups > 1 &&
        (hp->n_expert % hp->moe_groups || hp->moe_groups_used < 1 || hp->moe_groups_used > hp->moe_groups ||
         hp->n_expert_used > hp->moe_groups_used * (hp->n_expert / hp->moe_groups))) {
        ld->failed = true;
        cf_fail(ld->err, "deepseek2: %d experts in %d groups, %d of them used, for %d experts a token is not "
                "supported", hp->n_expert, hp->moe_groups, hp->moe_groups_used, hp->n_expert_used);
    }
}

static void attention(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, H = hp->n_head, R = hp->kv_lora;
    const int64_t Q = H * (hp->mla_nope + hp->n_rot);
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    if (hp->q_lora) {
        L->wq_a = cf_ld_layer(ld, l, "attn_q_a.weight", E, hp->q_lora, true);
        L->q_a_norm = cf_ld_layer(ld, l, "attn_q_a_norm.weight", hp->q_lora, 1, true);
        L->wq = cf_ld_layer(ld, l, "attn_q_b.weight", hp->q_lora, Q, true);
    } else {
        L->wq = cf_ld_layer(ld, l, "attn_q.weight", E, Q, true);
    }
    L->wk = cf_ld_layer(ld, l, "attn_kv_a_mqa.weight", E, R + hp->n_rot, true);
    L->kv_a_norm = cf_ld_layer(ld, l, "attn_kv_a_norm.weight", R, 1, true);
    L->wk_b = cf_ld_layer(ld, l, "attn_k_b.weight", hp->mla_nope, R * H, true);
    L->wv_b = cf_ld_layer(ld, l, "attn_v_b.weight", R, hp->mla_v * H, true);
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", H * hp->mla_v, E, true);
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    attention(ld, hp, l, L);
    if (l < cf_ld_count(ld, "leading_dense_block_count") || !hp->n_expert) {
        cf_ld_swiglu(ld, hp, l, L, true);
        return;
    }
    cf_ld_moe(ld, hp, l, L, true);
    L->moe_choice_b = cf_ld_layer(ld, l, "exp_probs_b.bias", hp->n_expert, 1, false);
    if (hp->n_ff_shexp)
        cf_ld_shared_expert(ld, hp, l, L, false);
}

const cf_arch_desc cf_arch_deepseek2 = {"deepseek2", "DeepSeek-V2/V3, Kimi", hparams, layer, NULL};
