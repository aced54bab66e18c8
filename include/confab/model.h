/* model: a transformer read from a GGUF (or llama2.c) file, and contexts
 * that evaluate tokens through it with a KV cache.
 *
 * Architectures: cf_arch_supported() lists them; each family is a file in
 * src/model/arch/ that reads its hyper-parameters and binds its tensors,
 * leaving the recipe (the fields below) that the one forward pass follows.
 * Weights are used straight from the file mapping. */
#ifndef CONFAB_MODEL_H
#define CONFAB_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/gguf.h"

typedef enum cf_arch {
    CF_ARCH_LLAMA,
    CF_ARCH_QWEN2,
    CF_ARCH_PHI3,
    CF_ARCH_GPT2,
    CF_ARCH_QWEN3,
    CF_ARCH_GEMMA3,
    CF_ARCH_SMOLLM3,
    CF_ARCH_OLMO2,
    CF_ARCH_GRANITE,
    CF_ARCH_QWEN3MOE,
    CF_ARCH_GPT_OSS,
    CF_ARCH_LFM2,
    CF_ARCH_QWEN35,
    CF_ARCH_QWEN35MOE,
    CF_ARCH_GEMMA4,
    CF_ARCH_MISTRAL3,
    CF_ARCH_LFM2MOE,
    CF_ARCH_GLM4MOE,
    CF_ARCH_GRANITEHYBRID,
    CF_ARCH_NEMOTRON_H,
    CF_ARCH_NEMOTRON_H_MOE,
    CF_ARCH_QWEN3NEXT,
    CF_ARCH_DEEPSEEK2,
    CF_ARCH_COUNT
} cf_arch;

typedef enum cf_rope_style {
    CF_ROPE_NONE,   /* learned positions (gpt2) */
    CF_ROPE_NORMAL, /* rotates pairs (2i, 2i+1): llama */
    CF_ROPE_NEOX,   /* rotates (i, i + n_rot/2): qwen2, phi3 */
} cf_rope_style;

typedef enum cf_norm_kind {
    CF_NORM_RMS,   /* x / rms(x) * w */
    CF_NORM_LAYER, /* (x - mean) / sd * w + b: gpt2 */
} cf_norm_kind;

typedef enum cf_ffn_kind {
    CF_FFN_SWIGLU, /* down(silu(gate x) * up x); phi3 fuses gate|up in up */
    CF_FFN_GEGLU,  /* down(gelu(gate x) * up x): gemma */
    CF_FFN_GELU,   /* down(gelu(up x + b)): gpt2 */
    CF_FFN_SWIGLU_OAI, /* gpt-oss's experts: SwiGLU with clamps and up + 1 */
    CF_FFN_RELU2,  /* down(relu(up x)^2), no gate: nemotron_h */
} cf_ffn_kind;

typedef enum cf_moe_gating {
    CF_MOE_SOFTMAX,        /* softmax over all experts, then the top k (mixtral, qwen3moe) */
    CF_MOE_SOFTMAX_WEIGHT, /* the top k logits, then a softmax over them (gpt-oss) */
    CF_MOE_SIGMOID,        /* sigmoid of each logit, then the top k, plus a choice bias where given (GLM-4.5, LFM2-MoE, nemotron_h_moe, deepseek-v3) */
} cf_moe_gating;

typedef enum cf_qk_norm {
    CF_QK_NORM_NONE,
    CF_QK_NORM_HEAD, /* RMS norm of each head of q and k (qwen3, gemma3) */
    CF_QK_NORM_FULL, /* RMS norm of the whole q and k projections (olmo2) */
} cf_qk_norm;

typedef struct cf_hparams {
    cf_arch arch;
    int n_vocab;
    int n_ctx_train;
    int n_embd;
    int n_layer;
    int n_head;
    int n_head_kv;
    int head_dim;
    int n_ff;
    int n_rot;
    float norm_eps;
    cf_rope_style rope_style;
    float rope_base;
    float rope_freq_scale;   /* linear scaling: positions are multiplied by it */
    /* YaRN (rope_yarn_orig_ctx > 0): dims below the correction range keep
     * the unscaled angle, those above are interpolated, a ramp between;
     * cos and sin are multiplied by attn_factor * (1 + 0.1 ln(1/scale)) */
    int rope_yarn_orig_ctx;
    float rope_yarn_beta_fast, rope_yarn_beta_slow, rope_yarn_attn_factor;
    const float *rope_freqs; /* per-pair divisors of theta (llama3 scaling), or NULL */
    float rope_base_swa;     /* sliding layers' base when it differs, else 0 */
    int n_rot_swa;           /* the sliding layers' rotated dims (gemma4), else n_rot */
    int n_swa;               /* sliding attention window (of the layers that slide), 0 = none */
    bool tied_output;
    /* the recipe */
    cf_norm_kind norm;
    cf_ffn_kind ffn;
    cf_qk_norm qk_norm;
    float embd_scale;     /* the input embedding is multiplied by it */
    float residual_scale; /* each block's output is multiplied by it before the residual add */
    float q_scale;        /* q is multiplied by it after RoPE */
    /* and by 1 + attn_temp_scale ln(floor(pos / attn_temp_floor) + 1),
     * Llama 4's attention temperature (0: none) */
    float attn_temp_scale;
    int attn_temp_floor;
    float kq_scale;       /* scores = q.k * kq_scale */
    float logit_scale;    /* logits are multiplied by it */
    float logit_softcap;  /* 0, or logits become cap * tanh(logits / cap) */
    int ple_dim;          /* per-layer embeddings of this size per layer (gemma4), 0 for none */
    /* recurrent layers: short convolutions over this many tokens (lfm2,
     * and the gated delta nets' input) */
    int conv_kernel;
    /* gated delta nets (qwen35): head size ssm_d (of keys and values),
     * ssm_k_heads query/key heads, ssm_v_heads value heads (tiled over
     * the key heads), the state of each value head ssm_d x ssm_d */
    int ssm_d, ssm_k_heads, ssm_v_heads;
    /* Mamba2 (granitehybrid, nemotron_h): ssm_inner channels in ssm_v_heads
     * heads, ssm_k_heads groups of B and C of ssm_d states each; 0: none */
    int ssm_inner;
    /* qwen3next: the value heads come grouped by key head (value head h
     * reads key head h / (ssm_v_heads / ssm_k_heads)), and so do the rows
     * of the fused ssm_ba: each key head's betas, then its alphas */
    bool ssm_v_grouped;
    bool q_gate; /* attn_q also gives each head a sigmoid output gate, interleaved */
    /* mixture of experts (n_expert 0: a dense FFN) */
    int n_expert, n_expert_used, n_ff_exp;
    int n_ff_shexp; /* the shared expert's width (qwen35moe), 0 for none */
    cf_moe_gating moe_gating;
    bool moe_norm_w; /* the kept weights are divided by their sum */
    float moe_w_scale; /* then multiplied by it (0: not) */
    /* experts in moe_groups equal groups (0 or 1: none): only the
     * moe_groups_used groups with the best two experts each are chosen from */
    int moe_groups, moe_groups_used;
    /* multi-head latent attention (deepseek2; kv_lora > 0): a position
     * caches one row, its latent (kv_lora) then its RoPE part (n_rot), read
     * by every head as its key, the latent as its value; a query head,
     * mla_nope dims then n_rot rotated ones, has its first part absorbed
     * into the latent's space, and each head's output goes to mla_v values.
     * q_lora > 0: the queries come through a rank-q_lora bottleneck. */
    int kv_lora, q_lora, mla_nope, mla_v;
} cf_hparams;

typedef struct cf_model cf_model;

/* Load a GGUF or llama2.c file (tokenizer_path: llama2.c's tokenizer.bin,
 * NULL to look beside the checkpoint).  Errors name the problem: an
 * unsupported architecture lists the supported ones, an unsupported tensor
 * type names the tensor. */
int cf_model_load(const char *path, const char *tokenizer_path, cf_model **out, cf_err *err);
/* The same with the weights loaded as mode says (cf_model_load: AUTO).
 * Copied weights (CF_LOAD_COPY) are rearranged in place for the kernels
 * where they have a faster layout (cf_gguf_repack; Q8_0, Q4_0, IQ4_NL, Q5_0
 * and Q4_K on AVX-512), mapped ones stay as the file has them; the logits are the
 * same bits. */
int cf_model_load_as(const char *path, const char *tokenizer_path, cf_load_mode mode, cf_model **out,
                     cf_err *err);
/* Build a model over an open file; the model takes ownership of g. */
int cf_model_from_gguf(cf_gguf *g, cf_model **out, cf_err *err);
void cf_model_free(cf_model *m);

const cf_gguf *cf_model_gguf(const cf_model *m);
const cf_hparams *cf_model_hparams(const cf_model *m);
const char *cf_arch_name(cf_arch a);
/* "llama, qwen2, phi3, gpt2" */
const char *cf_arch_supported(void);
/* The model's name (general.name, else the file name). */
const char *cf_model_name(const cf_model *m);
/* Bytes of weights one decoded token reads (every matrix once, one
 * embedding row): the numerator of the memory-bandwidth roofline. */
uint64_t cf_model_bytes_per_token(const cf_model *m);
uint64_t cf_model_n_params(const cf_model *m);
/* Whether some layers carry a recurrent state (lfm2, qwen35, Mamba2): going back in
 * the cache then evaluates tokens again from a checkpoint, and a context
 * shift evaluates the kept tokens again instead of moving them. */
bool cf_model_recurrent(const cf_model *m);

/* ---- contexts ----------------------------------------------------------- */
/* The element types of a KV cache (the values are the session file's). */
typedef enum cf_kv_type {
    CF_KV_F32,
    CF_KV_F16,
    CF_KV_BF16,
    CF_KV_Q8_0,
    CF_KV_Q4_0,
} cf_kv_type;

/* "f16" etc. (llama.cpp's -ctk names); -1 when name is none of them. */
int cf_kv_type_parse(const char *name);
const char *cf_kv_type_name(cf_kv_type t);

typedef struct cf_ctx_params {
    int n_ctx;     /* cache positions; 0 = the model's, capped at 4096 */
    int n_batch;   /* tokens per forward pass of a long prompt; 0 = 512 */
    int n_threads; /* 0 = 1 */
    cf_kv_type type_k, type_v;
    /* A quantized cache is kept rotated by a Walsh-Hadamard matrix per
     * head where the head size allows (docs/kv-cache.md): true leaves it
     * unrotated (llama.cpp's LLAMA_ATTN_ROT_DISABLE). */
    bool kv_no_rotate;
    /* Layers to offload to a GPU, as llama.cpp's -ngl: the last n (more
     * than the model has: every layer and the output); 0 none.  The ones
     * the GPU cannot run (docs/gpu.md), or that do not fit in its memory,
     * stay on the CPU; cf_ctx_gpu_note says how it went. */
    int n_gpu_layers;
    int gpu_device; /* which of cf_gpu_count's devices (0: the first) */
} cf_ctx_params;

typedef struct cf_ctx cf_ctx;

int cf_ctx_new(const cf_model *m, const cf_ctx_params *p, cf_ctx **out, cf_err *err);
void cf_ctx_free(cf_ctx *c);
const cf_model *cf_ctx_model(const cf_ctx *c);
int cf_ctx_n_ctx(const cf_ctx *c);
int cf_ctx_n_threads(const cf_ctx *c);
/* The threads single-token decoding runs on now: fewer than
 * cf_ctx_n_threads while other programs keep the cores busy. */
int cf_ctx_decode_threads(const cf_ctx *c);
void cf_ctx_set_threads(cf_ctx *c, int n_threads);
cf_kv_type cf_ctx_kv_type_k(const cf_ctx *c);
cf_kv_type cf_ctx_kv_type_v(const cf_ctx *c);
/* Whether the cache's keys or values are stored rotated (kv_no_rotate). */
bool cf_ctx_kv_rotated(const cf_ctx *c);
/* How offloading went, one line ("offloaded 12/12 layers and the output
 * to ...", or why it did not); "" when no layers were asked for. */
const char *cf_ctx_gpu_note(const cf_ctx *c);
/* Layers running on the GPU, and whether the output does. */
int cf_ctx_gpu_layers(const cf_ctx *c, bool *output);
/* The n_gpu_layers and gpu_device the context was made with. */
void cf_ctx_gpu_asked(const cf_ctx *c, int *n_gpu_layers, int *gpu_device);
/* Positions held in the cache; the next token goes at this position. */
int cf_ctx_n_past(const cf_ctx *c);

/* Evaluate n tokens at positions n_past .. n_past+n-1 and append them to
 * the cache.  logits: NULL (none wanted), n_vocab floats for the last token,
 * or n * n_vocab floats (all_logits).  Fails without touching the cache when
 * the tokens do not fit or an id is out of range. */
int cf_ctx_decode(cf_ctx *c, const int32_t *tokens, int n, float *logits, bool all_logits,
                  cf_err *err);

/* Decode n contexts' next tokens in one pass over the weights: token i
 * goes at ctxs[i]'s position n_past and into its cache (and recurrent
 * state), as cf_ctx_decode(ctxs[i], &tokens[i], 1, ...) would put it, with
 * the same bits in its n_vocab logits (logits + i * n_vocab; NULL: none).
 * Decoding is memory-bound, so n sequences cost little more than one
 * (serve's parallel slots).  The contexts are n different ones of one
 * model; the pass runs on the first one's threads and buffers, so n is at
 * most its n_batch.  Fails changing nothing when a context is full or a
 * token is out of range (the message names which). */
int cf_ctx_decode_group(cf_ctx *const *ctxs, const int32_t *tokens, int n, float *logits,
                        cf_err *err);

/* A pause that a decode of more tokens than n_batch makes between its
 * batches: pause(ud) is called on the decoding thread, outside the
 * parallel region, so that it may run other contexts' passes there
 * (serve lets the other slots' decoding step go between a long prompt's
 * batches).  NULL: none. */
void cf_ctx_set_pause(cf_ctx *c, void (*pause)(void *ud), void *ud);

/* A check that a long evaluation asks whether to stop: a decode of more
 * than one token calls cancel(ud) before each layer of each batch (a
 * layer of a 512-token batch, not a whole prompt, is the longest wait).
 * When it returns true the decode stops, the cache (a recurrent state
 * too) is as before it, and it fails with CF_E_CANCELLED.  NULL: never
 * stop.  Called on the thread that called cf_ctx_decode.  (Test-only:
 * CONFAB_TEST_PREFILL_DELAY_MS, read at cf_ctx_new, sleeps that long
 * before each such call, so that tests can stop a prefill.) */
void cf_ctx_set_cancel(cf_ctx *c, bool (*cancel)(void *ud), void *ud);

/* Keep only the first n_keep positions (undo, regenerate). */
int cf_ctx_kv_truncate(cf_ctx *c, int n_keep, cf_err *err);
/* Remove positions [p0, p1) and move the later ones down by p1 - p0,
 * re-rotating their keys to the new positions (context shift). */
int cf_ctx_kv_discard(cf_ctx *c, int p0, int p1, cf_err *err);

/* The cache contents of the first n positions as bytes (session files). */
uint64_t cf_ctx_kv_bytes(const cf_ctx *c, int n);
int cf_ctx_kv_save(const cf_ctx *c, int n, void *dst, uint64_t size, cf_err *err);
/* Replace the cache with n positions saved by cf_ctx_kv_save from a
 * context of the same model and KV type. */
int cf_ctx_kv_load(cf_ctx *c, int n, const void *src, uint64_t size, cf_err *err);

#endif
