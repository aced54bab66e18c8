/* phi3: fused Q|K|V and gate|up matrices, NeoX RoPE, and (Phi-3 mini 4k)
 * a sliding window on every layer. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->n_swa = cf_ld_int(ld, "attention.sliding_window", 0);
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, F = hp->n_ff, Q = (int64_t)hp->n_head * hp->head_dim,
                  KV = (int64_t)hp->n_head_kv * hp->head_dim;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->wqkv = cf_ld_layer(ld, l, "attn_qkv.weight", E, Q + 2 * KV, true);
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", Q, E, true);
    L->ffn_norm = cf_ld_layer(ld, l, "ffn_norm.weight", E, 1, true);
    L->w_up = cf_ld_layer(ld, l, "ffn_up.weight", E, 2 * F, true);
    L->w_down = cf_ld_layer(ld, l, "ffn_down.weight", F, E, true);
    L->swa = hp->n_swa > 0;
}

const cf_arch_desc cf_arch_phi3 = {"phi3", "Phi-3", hparams, layer, NULL};
