/* The interface of an architecture family (one file each in arch/): it
 * reads the hyper-parameters its GGUF keys add, sets the recipe fields of
 * cf_hparams, and binds each layer's tensors.  arch.c reads the keys every
 * family shares first and checks the result after.  Private to src/model. */
#ifndef CONFAB_MODEL_ARCH_H
#define CONFAB_MODEL_ARCH_H

#include "model_internal.h"

/* Reads keys "<arch>.<suffix>" and binds tensors, remembering the first
 * failure (later calls then do nothing and return defaults). */
typedef struct cf_loader {
    const cf_gguf *g;
    const char *arch;
    cf_err *err;
    bool failed;
} cf_loader;

/* A positive integer key; def < 0 means required. */
int cf_ld_int(cf_loader *ld, const char *suffix, int def);
/* A count that may be 0 (absent: 0). */
int cf_ld_count(cf_loader *ld, const char *suffix);
/* Layer l's value of a key that is one integer or one per layer (an
 * array of n_layer); def when absent. */
int cf_ld_per_layer(cf_loader *ld, const char *suffix, int n_layer, int l, int def);
/* A positive float key, def when absent. */
float cf_ld_float(cf_loader *ld, const char *suffix, float def);
/* A boolean key, def when absent. */
bool cf_ld_bool(cf_loader *ld, const char *suffix, bool def);
/* A string key; false when absent. */
bool cf_ld_str(cf_loader *ld, const char *suffix, cf_str *out);
/* The tensor `name` of shape ne0 x ne1 (ne1 = 1: a vector, which must be
 * F32); NULL when absent and not required, or on failure. */
cf_weight cf_ld_tensor(cf_loader *ld, const char *name, int64_t ne0, int64_t ne1, bool required);
/* blk.<l>.<what> */
cf_weight cf_ld_layer(cf_loader *ld, int l, const char *what, int64_t ne0, int64_t ne1, bool required);
/* The same for a tensor the forward pass reads as F32 values whatever its
 * shape (the experts' biases, convolution kernels): F32 only. */
cf_weight cf_ld_values(cf_loader *ld, int l, const char *what, int64_t ne0, int64_t ne1, bool required);

/* The llama block every family starts from: attn_norm, q k v, output,
 * ffn_norm, gate, up, down (norms optional when a family has none). */
void cf_ld_attention(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm);
void cf_ld_swiglu(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm);
/* attn_q.bias, attn_k.bias, attn_v.bias */
void cf_ld_qkv_bias(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);
/* attn_q_norm / attn_k_norm of hp->qk_norm's width */
void cf_ld_qk_norm(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);
/* expert_count, expert_used_count and the experts' FFN width (the key
 * expert_feed_forward_length, else feed_forward_length) */
void cf_ld_moe_hparams(cf_loader *ld, cf_hparams *hp);
/* ffn_norm (when norm), the router ffn_gate_inp and the experts'
 * ffn_{gate,up,down}_exps */
void cf_ld_moe(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm);

/* The shared expert beside the routed ones, n_ff_shexp wide; gated: by
 * sigmoid(ffn_gate_inp_shexp . x) per token (qwen35moe), else added whole. */
void cf_ld_shared_expert(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool gated);
/* Mamba2's ssm.* keys (conv_kernel, inner_size, state_size, group_count,
 * and time_step_rank: the head count) and its tensors in layer l, under
 * attn_norm */
void cf_ld_mamba2_hparams(cf_loader *ld, cf_hparams *hp);
void cf_ld_mamba2(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);

/* What gemma3 and gemma4 share: NeoX RoPE, per-head q/k norms, GELU-gated
 * FFN, the sliding window and its own RoPE base, embedding x sqrt(n_embd). */
void cf_ld_gemma(cf_loader *ld, cf_hparams *hp);

/* lfm2's recipe, and a layer's mixer: a gated short convolution where
 * head_count_kv is 0, else attention with per-head q/k norms (lfm2moe
 * shares both). */
void cf_ld_lfm2(cf_loader *ld, cf_hparams *hp);
void cf_ld_lfm2_mixer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);

/* Sigmoid routing (expert_gating_func 2; 1 is softmax) and the first
 * leading_dense_block_count layers dense: the gating, and whether layer l
 * has experts. */
cf_moe_gating cf_ld_moe_gating(cf_loader *ld);
bool cf_ld_moe_layer(cf_loader *ld, const cf_hparams *hp, int l);

/* What qwen35 and qwen3next share: the delta nets' hyper-parameters, and
 * a layer (a delta net, or gated attention every full_attention_interval,
 * then the FFN or the experts with their gated shared expert). */
void cf_ld_qwen35(cf_loader *ld, cf_hparams *hp);
void cf_ld_qwen35_layer(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);

typedef struct cf_arch_desc {
    const char *name;   /* general.architecture */
    const char *models; /* what it runs, for the list of supported ones */
    /* Called after the shared keys are read and the recipe is set to the
     * llama defaults (RMS norms, SwiGLU, NORM RoPE, scales 1). */
    void (*hparams)(cf_loader *ld, cf_hparams *hp);
    /* Layer l's tensors and recipe (L->rope is true, L->swa false). */
    void (*layer)(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L);
    /* the final norm's tensor when it is not output_norm.weight */
    const char *output_norm;
} cf_arch_desc;

extern const cf_arch_desc cf_arch_llama, cf_arch_qwen2, cf_arch_phi3, cf_arch_gpt2, cf_arch_qwen3,
    cf_arch_gemma3, cf_arch_smollm3, cf_arch_olmo2, cf_arch_granite, cf_arch_qwen3moe,
    cf_arch_gpt_oss, cf_arch_lfm2, cf_arch_qwen35, cf_arch_qwen35moe, cf_arch_gemma4,
    cf_arch_granitehybrid, cf_arch_nemotron_h, cf_arch_nemotron_h_moe,
    cf_arch_qwen3next, cf_arch_deepseek2;
extern const cf_arch_desc cf_arch_mistral3;
extern const cf_arch_desc cf_arch_lfm2moe;
extern const cf_arch_desc cf_arch_glm4moe;

#endif
