/* gemma3: the input embedding scaled by sqrt(n_embd); sandwich norms
 * (a norm before and after each block); GELU-gated FFN; per-head q/k
 * norms, q scaled by 1/sqrt(head_dim) instead of the scores; and five
 * sliding-window layers (with their own RoPE base) to every global one. */
#include <math.h>

#include "../arch.h"

/* llama.cpp's default for gemma3 files without sliding_window_pattern */
#define SWA_PERIOD 6

void cf_ld_gemma(cf_loader *ld, cf_hparams *hp)
{
    hp->rope_style = CF_ROPE_NEOX;
    hp->qk_norm = CF_QK_NORM_HEAD;
    hp->ffn = CF_FFN_GEGLU;
    hp->n_swa = cf_ld_int(ld, "attention.sliding_window", 0);
    hp->rope_base_swa = cf_ld_float(ld, "rope.freq_base_swa", 10000.0f);
    hp->embd_scale = sqrtf((float)hp->n_embd);
}

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_ld_gemma(ld, hp);
    /* llama.cpp scales q itself (by n_embd / n_head instead for the 27B,
     * which it recognises by its layer count) and scores by 1 */
    hp->q_scale = 1.0f / sqrtf((float)(hp->n_layer == 62 ? hp->n_embd / hp->n_head : hp->head_dim));
    hp->kq_scale = 1.0f;
}

static void layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    cf_ld_attention(ld, hp, l, L, true);
    cf_ld_qk_norm(ld, hp, l, L);
    L->post_attn_norm = cf_ld_layer(ld, l, "post_attention_norm.weight", hp->n_embd, 1, true);
    cf_ld_swiglu(ld, hp, l, L, true);
    L->post_ffn_norm = cf_ld_layer(ld, l, "post_ffw_norm.weight", hp->n_embd, 1, true);
    L->swa = hp->n_swa > 0 && l % SWA_PERIOD < SWA_PERIOD - 1;
}

const cf_arch_desc cf_arch_gemma3 = {"gemma3", "Gemma 3", hparams, layer, NULL};
