/* qwen35 / qwen35moe (Qwen3.5): three of every four layers are gated delta
 * nets (a recurrent state per value head instead of a KV cache), the
 * fourth gated attention: attn_q gives each head its query and a sigmoid
 * gate on its output, q/k per-head norms, NeoX RoPE over the first n_rot
 * dims (the M-RoPE sections all carry the token's position for text).
 * The FFN is SwiGLU; qwen35moe routes as qwen3moe and adds a shared
 * expert, gated per token. */
#include "../arch.h"

#define DEFAULT_INTERVAL 4

void cf_ld_qwen35(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_HEAD;
    hp->q_gate = true;
    hp->conv_kernel = cf_ld_int(ld, "ssm.conv_kernel", -1);
    hp->ssm_d = cf_ld_int(ld, "ssm.state_size", -1);
    hp->ssm_k_heads = cf_ld_int(ld, "ssm.group_count", -1);
    hp->ssm_v_heads = cf_ld_int(ld, "ssm.time_step_rank", -1);
    const int inner = cf_ld_int(ld, "ssm.inner_size", -1);
    cf_ld_moe_hparams(ld, hp);
    if (hp->n_expert)
        hp->n_ff_shexp = cf_ld_int(ld, "expert_shared_feed_forward_length", hp->n_ff_exp);
    hp->moe_gating = CF_MOE_SOFTMAX;
    hp->moe_norm_w = true;
    if (ld->failed)
        return;
    if (inner != hp->ssm_v_heads * hp->ssm_d || hp->conv_kernel > 16 || hp->ssm_d > 256 ||
        hp->ssm_v_heads % hp->ssm_k_heads) {
        ld->failed = true;
        cf_fail(ld->err, "%s: a delta net of %d value heads of %d (inner %d) over %d key heads, "
                "kernel %d, is not supported", ld->arch, hp->ssm_v_heads, hp->ssm_d, inner,
                hp->ssm_k_heads, hp->conv_kernel);
    }
}

static void delta_net(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, D = hp->ssm_d, Hv = hp->ssm_v_heads;
    const int64_t conv_dim = 2 * hp->ssm_k_heads * D + Hv * D;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->dn_qkv = cf_ld_layer(ld, l, "attn_qkv.weight", E, conv_dim, true);
    L->dn_z = cf_ld_layer(ld, l, "attn_gate.weight", E, Hv * D, true);
    if (hp->ssm_v_grouped) { /* beta and alpha fused (dn_alpha stays NULL) */
        L->dn_beta = cf_ld_layer(ld, l, "ssm_ba.weight", E, 2 * Hv, true);
    } else {
        L->dn_beta = cf_ld_layer(ld, l, "ssm_beta.weight", E, Hv, true);
        L->dn_alpha = cf_ld_layer(ld, l, "ssm_alpha.weight", E, Hv, true);
    }
    L->dn_conv = cf_ld_values(ld, l, "ssm_conv1d.weight", hp->conv_kernel, conv_dim, true);
    L->dn_dt_bias = cf_ld_layer(ld, l, "ssm_dt.bias", Hv, 1, true);
    L->dn_a = cf_ld_layer(ld, l, "ssm_a", Hv, 1, true);
    L->dn_norm = cf_ld_layer(ld, l, "ssm_norm.weight", D, 1, true);
    L->dn_out = cf_ld_layer(ld, l, "ssm_out.weight", Hv * D, E, true);
    L->rope = false;
    /* alpha is rounded with the group {qkv, z, beta}: one of them must take the same kind */
    if (!ld->failed && L->dn_alpha &&
        cf_vec_dot_type(L->dn_alpha->type) != cf_vec_dot_type(L->dn_beta->type)) {
        ld->failed = true;
        cf_fail(ld->err, "blk.%d: ssm_alpha (%s) and ssm_beta (%s) of different kinds are not supported",
                l, cf_type_name(L->dn_alpha->type), cf_type_name(L->dn_beta->type));
    }
}

static void gated_attention(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, Q = (int64_t)hp->n_head * hp->head_dim,
                  KV = (int64_t)hp->n_head_kv * hp->head_dim;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->wq = cf_ld_layer(ld, l, "attn_q.weight", E, 2 * Q, true);
    L->wk = cf_ld_layer(ld, l, "attn_k.weight", E, KV, true);
    L->wv = cf_ld_layer(ld, l, "attn_v.weight", E, KV, true);
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", Q, E, true);
    cf_ld_qk_norm(ld, hp, l, L);
}

void cf_ld_qwen35_layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int interval = cf_ld_int(ld, "full_attention_interval", DEFAULT_INTERVAL);
    if ((l + 1) % interval != 0)
        delta_net(ld, hp, l, L);
    else
        gated_attention(ld, hp, l, L);
    if (hp->n_expert) {
        cf_ld_moe(ld, hp, l, L, false);
        cf_ld_shared_expert(ld, hp, l, L, true);
    } else {
        cf_ld_swiglu(ld, hp, l, L, false);
    }
    L->ffn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", hp->n_embd, 1, true);
}

const cf_arch_desc cf_arch_qwen35 = {"qwen35", "Qwen3.5", cf_ld_qwen35, cf_ld_qwen35_layer, NULL};
const cf_arch_desc cf_arch_qwen35moe = {"qwen35moe", "Qwen3.5 MoE", cf_ld_qwen35, cf_ld_qwen35_layer, NULL};
