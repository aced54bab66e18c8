/* qwen2: the llama block with q/k/v biases and NeoX RoPE. */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    (void)ld;
    hp->rope_style = CF_ROPE_NEOX;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t Q = (int64_t)hp->n_head * hp->head_dim, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    cf_ld_attention(ld, hp, l, L, true);
    L->bq = cf_ld_layer(ld, l, "attn_q.bias", Q, 1, true);
    L->bk = cf_ld_layer(ld, l, "attn_k.bias", KV, 1, true);
    L->bv = cf_ld_layer(ld, l, "attn_v.bias", KV, 1, true);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_qwen2 = {"qwen2", "Qwen2, Qwen2.5", hparams, layer, NULL};
