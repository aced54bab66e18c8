/* mkmodel: GGUF files with deterministic random weights in a real model's
 * shape, quantized with llama-quantize's recipe, for benchmarks and tests.
 *
 * Weights: matrices N(0, 1/fan_in) (fan_in = ne0), norm weights
 * 1 + N(0, 0.1^2), biases N(0, 0.1^2); as in the shared fixtures
 * (README-2026), routers (ffn_gate_inp) gain 3, N(0, 9/fan_in), so that
 * tokens prefer some experts clearly, and gpt-oss's attention sinks
 * N(0, 1.5^2); qwen35's delta nets as README-2026's fixture: decays
 * ssm_a = -exp(N(ln 3, 0.5^2)), ssm_dt.bias N(-3.5, 0.5^2) (time steps
 * about 0.03), conv kernels N(0, 1/kernel); gemma4's as its fixture, so
 * that random models do not collapse onto one token: post-sublayer norms
 * 4 + N(0, 0.1^2), q/k norms 0.7 + N(0, 0.1^2), layer_output_scale
 * N(0.8, 0.1^2), per_layer_token_embd N(0, 1/ple).  Every row comes from its own random
 * stream keyed by (seed, tensor name, row), so a file does not depend on the
 * thread count and the same tensor has the same values in every type. */
#ifndef CONFAB_MKMODEL_H
#define CONFAB_MKMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/kernels.h"
#include "confab/model.h"

typedef struct cf_mk_shape {
    char name[64];
    cf_arch arch; /* one of cf_mk_arch_list()'s */
    int n_embd, n_layer, n_head, n_head_kv, n_ff;
    int n_ctx; /* context_length written to the file */
    float rope_base, norm_eps;
    bool tied;           /* no output.weight: token_embd.weight is the output matrix */
    int head_dim;        /* 0: n_embd / n_head */
    int n_swa;           /* gemma3's, gemma4's and gpt-oss's sliding window; 0: none */
    float rope_base_swa; /* their RoPE base (written with n_swa); 0: the engine's default */
    int n_expert;        /* a mixture of experts in every layer (llama: Mixtral); 0: none */
    int n_expert_used;   /* experts per token */
    int n_ff_exp;        /* one expert's FFN width; 0: n_ff */
    int n_rot;           /* dims RoPE rotates; 0: all of head_dim */
    /* qwen35's gated delta nets (three of every four layers): conv kernel,
     * head size (state_size), key heads (group_count), value heads;
     * granitehybrid's Mamba2 mixers (2 n_embd channels): conv kernel,
     * states, B/C groups (group_count), heads (time_step_rank) */
    int ssm_conv, ssm_state, ssm_k_heads, ssm_v_heads;
    /* granitehybrid: layer l attends when l % attn_period is attn_period / 2,
     * the others are Mamba2; its experts' shared one is n_ff wide */
    int attn_period;
    /* gemma4: the sliding layers' head size (0: head_dim), every
     * swa_period-th layer global and the rest sliding (0: all global),
     * the last kv_shared layers reading an earlier layer's cache, and
     * per-layer embeddings of ple dims (0: none) */
    int head_dim_swa, swa_period, n_kv_shared, ple_dim;
    /* deepseek2's latent attention: the latent's rank, the q LoRA's (0:
     * none), a head's unrotated query/key dims and its value dims (head_dim
     * is kv_lora + n_rot, the cache row) */
    int kv_lora, q_lora, mla_nope, mla_v;
    int n_dense_lead;    /* glm4moe, deepseek2: the first layers' FFNs dense (n_ff), the others experts */
    int n_ff_shexp;      /* the shared expert's width (qwen3next), or the shared experts' (deepseek2) */
    float yarn_factor;   /* YaRN context extension (gpt-oss, mistral3, deepseek2); 0: none */
    int yarn_orig_ctx;   /* the context YaRN extends */
    const char *vocab;   /* the default vocabulary, a path under the shared folder
                            (NULL: vocab/ggml-vocab-llama-spm.gguf) */
} cf_mk_shape;

/* qwen35 and qwen3next: layer l is attention when (l + 1) % 4 == 0, else
 * a delta net */
#define CF_MK_ATTN_INTERVAL 4

/* granitehybrid: whether layer l is a Mamba2 mixer */
bool cf_mk_mamba2(const cf_mk_shape *s, int l);

/* gemma4's layers: whether layer l is sliding, whether it has no cache of
 * its own (one of the last kv_shared), its FFN width (twice n_ff in
 * those, Gemma 4's double-wide MLP) and its head size. */
bool cf_mk_sliding(const cf_mk_shape *s, int l);
bool cf_mk_kv_shared(const cf_mk_shape *s, int l);
int cf_mk_layer_ff(const cf_mk_shape *s, int l);
int cf_mk_layer_head_dim(const cf_mk_shape *s, int l);

/* A built-in shape ("smollm2-135m", "llama-1b", "qwen3-0.6b", ...); -1 when
 * there is none by that name. */
int cf_mk_shape_named(const char *name, cf_mk_shape *out);
/* The built-in shape names, comma-separated. */
const char *cf_mk_shape_list(void);
/* Apply a --dims spec to s: comma-separated KEY=VALUE with keys
 *   arch (cf_mk_arch_list()'s), embd, layers, heads, kv_heads, head_dim,
 *   ff, ctx, rope_base, eps, tied (0|1), swa, rope_base_swa, experts,
 *   experts_used, expert_ff, yarn_factor, yarn_orig_ctx, rot, ssm_conv,
 *   ssm_state, ssm_k_heads, ssm_v_heads, attn_period, head_dim_swa,
 *   swa_period, kv_shared, ple, dense_layers, kv_lora, q_lora, nope, v_mla,
 *   shexp_ff, name.
 * Unknown keys and bad values fail with a message naming them. */
int cf_mk_shape_apply_dims(cf_mk_shape *s, const char *dims, cf_err *err);
/* Check a shape is complete and consistent. */
int cf_mk_shape_check(const cf_mk_shape *s, cf_err *err);
/* The width of one attention head: head_dim, else n_embd / n_head. */
int cf_mk_head_dim(const cf_mk_shape *s);

/* The architectures mkmodel writes, "llama, qwen2, ..." (arch.c's names);
 * whether it writes a. */
const char *cf_mk_arch_list(void);
bool cf_mk_arch_writes(cf_arch a);

/* File types, as llama-quantize names them.  Q4_K_M, IQ2_M, IQ3_M and
 * IQ3_XS are llama.cpp's mixtures (IQ2_M: IQ2_S matrices, the tensor type
 * (llama-quantize's IQ2_S file type is IQ2_XS), with IQ3_S for an untied
 * token_embd, attn_v and the first eighth of ffn_down, Q4_K for attn_v
 * when n_head >= 4 n_head_kv and a Q5_K output matrix; IQ3_M: IQ3_S with
 * Q4_K for attn_v, attn_output and the first eighth of ffn_down; IQ3_XS:
 * IQ3_S with IQ3_XXS for attn_q, attn_k and the middle layers'
 * ffn_gate/ffn_up, Q4_K for attn_v when n_head >= 4 n_head_kv; IQ4_NL and
 * IQ4_XS without an importance matrix: Q5_K for attn_v when n_head >= 4
 * n_head_kv and for the first eighth of ffn_down).  The K-quant
 * mixtures follow llama_tensor_get_type too: Q2_K has Q3_K ffn_down,
 * attn_output and attn_v (Q4_K when n_head >= 4 n_head_kv); Q3_K_M Q4_K
 * attn_output and ffn_down (Q5_K in the first sixteenth) and attn_v (Q5_K
 * in the first two that have one); Q3_K_L Q5_K attn_v, attn_output and
 * ffn_down; Q4_K_S Q5_K attn_v in the first four and ffn_down in the
 * first eighth; Q5_K_M Q4_K_M's with Q5_K; Q3_K_S and Q5_K_S none (the
 * 70B rule, attn_v Q5_K in a 70B model, has no shape here).  For the
 * others every matrix has that type, except that the output matrix
 * (token_embd when tied) becomes Q6_K (Q8_0 stays Q8_0; the IQ3 mixtures
 * do the same).  A row length that is not a multiple of the block size
 * falls back (Q4_K -> Q5_0, Q6_K -> Q8_0, Q2_K, Q3_K, the IQ1/IQ2/IQ3
 * types and IQ4_XS -> IQ4_NL, TQ2_0 -> Q4_0, output -> Q8_0), as llama-quantize
 * does.  IQ3_XXS, IQ3_S, MXFP4 and TQ2_0 are always pure
 * (llama-quantize --pure): the output matrix too has the type, and only
 * the fallbacks apply.  IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M files need
 * an importance matrix (cf_type_needs_imatrix): cf_mk_plan refuses them.
 * MXFP4 files say general.file_type 38 (MOSTLY_MXFP4_MOE, llama.cpp's only
 * MXFP4 file type): MXFP4 is MXFP4_MOE --pure.  MXFP4_MOE is its recipe
 * for gpt-oss: the 3-D expert tensors MXFP4, every other matrix Q8_0.
 * Expert tensors take the type of the layer's dense FFN matrix of their
 * kind (ffn_down_exps: Q6_K in Q4_K_M's more-bits layers); with exactly 8
 * experts (Mixtral) attn_k and attn_v are Q8_0, and attn_output Q5_K in
 * Q2_K, Q3_K_S, Q3_K_M, Q4_K_S, Q4_K_M, IQ3_M and IQ3_XS.  Routers (ffn_gate_inp), gemma4's
 * per_layer_model_proj and 1-D tensors are always F32; gemma4's attn_v
 * more-bits layers are counted over the layers that have one. */
typedef enum cf_mk_ftype {
    CF_MK_F32,
    CF_MK_F16,
    CF_MK_BF16,
    CF_MK_Q8_0,
    CF_MK_Q4_0,
    CF_MK_Q4_1,
    CF_MK_Q5_0,
    CF_MK_Q5_1,
    CF_MK_Q6_K,
    CF_MK_Q4_K_M,
    CF_MK_IQ2_M,
    CF_MK_IQ2_XXS,
    CF_MK_IQ2_XS,
    CF_MK_IQ2_S,
    CF_MK_IQ1_S,
    CF_MK_IQ1_M,
    CF_MK_IQ3_XXS,
    CF_MK_IQ3_S,
    CF_MK_IQ3_M,
    CF_MK_IQ3_XS,
    CF_MK_IQ4_NL,
    CF_MK_IQ4_XS,
    CF_MK_MXFP4,
    CF_MK_TQ2_0,
    CF_MK_MXFP4_MOE,
    CF_MK_Q2_K,
    CF_MK_Q3_K_S,
    CF_MK_Q3_K_M,
    CF_MK_Q3_K_L,
    CF_MK_Q4_K_S,
    CF_MK_Q5_K_S,
    CF_MK_Q5_K_M,
    CF_MK_FTYPE_COUNT
} cf_mk_ftype;

/* Parse a file type name (case-insensitive); -1 when unknown. */
int cf_mk_ftype_parse(const char *name);
const char *cf_mk_ftype_name(cf_mk_ftype ft);
/* "F32, F16, BF16, Q8_0, ..." */
const char *cf_mk_ftype_list(void);

/* One tensor of a planned file. */
typedef struct cf_mk_tensor {
    char name[48];
    int n_dims;
    int64_t ne[3]; /* 1 beyond n_dims; 3-D: ne[2] experts of ne[1] rows */
    cf_type type;
    float init_std;   /* of the random part */
    float init_mean;  /* 1 for norm weights, 0 otherwise */
    bool init_neg_exp; /* -exp(the normal value): qwen35's ssm_a, -exp(A_log) */
    bool init_prope;   /* gemma4's rope_freqs: 1 for the first quarter, 1e30 (no
                          rotation) for the rest, its proportional RoPE */
} cf_mk_tensor;

/* The tensors of a file of shape s and type ft with an n_vocab vocabulary,
 * in file order; pure: every matrix of ft's type (llama-quantize --pure),
 * only the fallbacks of row lengths apply.  Fails with one line when a
 * tensor's type is one confab cannot write.  *out is malloc'ed; the caller
 * frees it. */
int cf_mk_plan(const cf_mk_shape *s, cf_mk_ftype ft, bool pure, int n_vocab, cf_mk_tensor **out, int *n,
               cf_err *err);

/* The f32 values of one row (of ne[1] * ne[2]) of a planned tensor (ne[0]
 * floats). */
void cf_mk_row(uint64_t seed, const cf_mk_tensor *t, int64_t row, float *dst);

typedef struct cf_mk_params {
    cf_mk_shape shape;
    cf_mk_ftype ftype;
    bool pure; /* llama-quantize --pure: see cf_mk_plan */
    const char *vocab_path; /* a GGUF whose tokenizer.* keys are copied */
    const char *out_path;
    uint64_t seed;
    int n_threads; /* 0 = all */
} cf_mk_params;

/* Write the file.  Tensors are generated one at a time, their rows in
 * parallel, so memory stays at about the largest quantized tensor. */
int cf_mkmodel(const cf_mk_params *p, cf_err *err);

#endif
