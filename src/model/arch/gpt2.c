/* gpt2: LayerNorm, learned positions, biases everywhere, GELU. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->norm_eps = cf_ld_float(ld, "attention.layer_norm_epsilon", 1e-5f);
    hp->rope_style = CF_ROPE_NONE;
    hp->norm = CF_NORM_LAYER;
    hp->ffn = CF_FFN_GELU;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, F = hp->n_ff, Q = (int64_t)hp->n_head * hp->head_dim,
                  KV = (int64_t)hp->n_head_kv * hp->head_dim;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->attn_norm_b = cf_ld_layer(ld, l, "attn_norm.bias", E, 1, true);
    L->wqkv = cf_ld_layer(ld, l, "attn_qkv.weight", E, Q + 2 * KV, true);
    L->bqkv = cf_ld_layer(ld, l, "attn_qkv.bias", Q + 2 * KV, 1, true);
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", Q, E, true);
    L->bo = cf_ld_layer(ld, l, "attn_output.bias", E, 1, true);
    L->ffn_norm = cf_ld_layer(ld, l, "ffn_norm.weight", E, 1, true);
    L->ffn_norm_b = cf_ld_layer(ld, l, "ffn_norm.bias", E, 1, true);
    L->w_up = cf_ld_layer(ld, l, "ffn_up.weight", E, F, true);
    L->b_up = cf_ld_layer(ld, l, "ffn_up.bias", F, 1, true);
    L->w_down = cf_ld_layer(ld, l, "ffn_down.weight", F, E, true);
    L->b_down = cf_ld_layer(ld, l, "ffn_down.bias", E, 1, true);
}

const cf_arch_desc cf_arch_gpt2 = {"gpt2", "GPT-2", hparams, layer, NULL};
