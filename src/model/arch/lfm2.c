/* lfm2: layers whose head_count_kv is 0 mix tokens with a gated short
 * convolution (a recurrent state of the last conv_kernel - 1 inputs)
 * instead of attention; the others are qwen3-style attention (per-head q/k
 * norms, NeoX RoPE).  The final norm is token_embd_norm. */
#include "../arch.h"

void cf_ld_lfm2(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_HEAD;
    hp->conv_kernel = cf_ld_int(ld, "shortconv.l_cache", -1);
    if (!ld->failed && hp->conv_kernel > 16) { /* the forward pass keeps a window on the stack */
        ld->failed = true;
        cf_fail(ld->err, "a short convolution over %d tokens is not supported (at most 16)", hp->conv_kernel);
    }
}

void cf_ld_lfm2_mixer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd;
    if (cf_ld_per_layer(ld, "attention.head_count_kv", hp->n_layer, l, hp->n_head_kv) == 0) {
        L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
        L->conv_in = cf_ld_layer(ld, l, "shortconv.in_proj.weight", E, 3 * E, true);
        L->conv_w = cf_ld_values(ld, l, "shortconv.conv.weight", hp->conv_kernel, E, true);
        L->conv_out = cf_ld_layer(ld, l, "shortconv.out_proj.weight", E, E, true);
        L->rope = false;
    } else {
        cf_ld_attention(ld, hp, l, L, true);
        cf_ld_qk_norm(ld, hp, l, L);
    }
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_lfm2_mixer(ld, hp, l, L);
    cf_ld_swiglu(ld, hp, l, L, true);
}

const cf_arch_desc cf_arch_lfm2 = {"lfm2", "LFM2", cf_ld_lfm2, layer, "token_embd_norm.weight"};
