/* mkmodel: the type recipe, the files it writes and their contents.
 *   - the Q4_K_M recipe gives quant-Q4_K_M.gguf's (a real llama-quantize
 *     output) type for every tensor of its shape, and the pure types those
 *     of quant-IQ3_XXS/IQ3_S/IQ4_NL/IQ4_XS/MXFP4/TQ2_0.gguf (llama-quantize
 *     --pure);
 *   - the IQ2_M, IQ3_M and IQ3_XS mixtures choose as llama-quantize does;
 *   - the built-in shapes plan the types llama-quantize gives them
 *     (fallbacks for 576- and 896-wide rows, tied output);
 *   - every file type writes a file (small custom shapes, llama and qwen2;
 *     IQ2_M also --pure) that loads and decodes to finite logits, whose
 *     tensors have the planned types, and whose data dequantize back to
 *     the generator's rows within the type's error, except those that need
 *     an importance matrix, which are refused in one line;
 *   - files do not depend on the thread count; --dims errors are named. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/mkmodel.h"
#include "harness.h"

static const cf_mk_tensor *find(const cf_mk_tensor *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

/* The plan of shape s (--dims) for ft has every tensor of the file, with
 * its shape and type. */
static void test_plan_matches_file(const char *file, const char *dims, cf_mk_ftype ft)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(shared_path(file), &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_mk_shape s = {.name = "fixture", .arch = CF_ARCH_LLAMA, .n_ctx = 2048, .rope_base = 10000.0f,
                     .norm_eps = 1e-5f};
    CHECKF(cf_mk_shape_apply_dims(&s, dims, &err) == 0, "%s", err.msg);
    cf_mk_tensor *plan;
    int n;
    /* the quant-* fixtures but Q4_K_M were made with llama-quantize --pure */
    const bool pure = strstr(file, "/quant-") && ft != CF_MK_Q4_K_M;
    if (cf_mk_plan(&s, ft, pure, 512, &plan, &n, &err) != 0) {
        CHECKF(0, "%s: %s", file, err.msg);
        cf_gguf_close(g);
        return;
    }
    CHECKF(n == cf_gguf_n_tensors(g), "%d planned, %lld in the file", n,
           (long long)cf_gguf_n_tensors(g));
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        const cf_mk_tensor *p = find(plan, n, t->name);
        CHECKF(p != NULL, "%s is not planned", t->name);
        if (p)
            CHECKF(p->type == t->type && p->ne[0] == t->ne[0] && p->ne[1] == t->ne[1] &&
                       p->ne[2] == t->ne[2],
                   "%s %s: planned %s %lldx%lldx%lld, llama-quantize wrote %s %lldx%lldx%lld", file, t->name,
                   cf_type_name(p->type), (long long)p->ne[0], (long long)p->ne[1], (long long)p->ne[2],
                   cf_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2]);
    }
    free(plan);
    cf_gguf_close(g);
}

/* README-2026's fixture shapes: A (quant-*), QM, MX, GO, Q, G and part
 * C's granitehybridmoe */
#define SHAPE_A "embd=256,layers=2,heads=8,kv_heads=2,ff=768"
#define SHAPE_QM                                                                                          \
    "arch=qwen3moe,embd=128,layers=2,heads=4,kv_heads=2,head_dim=64,ff=64,experts=8,experts_used=4"
#define SHAPE_MX "embd=128,layers=2,heads=4,kv_heads=2,ff=256,experts=8,experts_used=2"
#define SHAPE_GO                                                                                          \
    "arch=gpt-oss,embd=128,layers=4,heads=4,kv_heads=2,head_dim=64,ff=128,experts=8,experts_used=4,"   \
    "swa=8,rope_base=150000,yarn_factor=32,yarn_orig_ctx=4096"
#define SHAPE_Q35                                                                                         \
    "arch=qwen35,embd=128,layers=8,heads=4,kv_heads=2,head_dim=32,rot=16,ff=192,rope_base=10000000,"   \
    "tied=1,ssm_conv=4,ssm_state=32,ssm_k_heads=2,ssm_v_heads=4"
#define SHAPE_GH                                                                                          \
    "arch=granitehybrid,embd=128,layers=4,heads=4,kv_heads=2,ff=32,experts=4,experts_used=2,ssm_conv=4,"  \
    "ssm_state=32,ssm_k_heads=1,ssm_v_heads=8,attn_period=2"

/* README-2026 D2 and D3's (glm4moe's file also has its MTP block) */
#define SHAPE_MS                                                                                          \
    "arch=mistral3,embd=128,layers=4,heads=4,kv_heads=1,head_dim=64,ff=128,tied=1,yarn_factor=16,"       \
    "yarn_orig_ctx=32,rope_base=1000000"
#define SHAPE_GL                                                                                          \
    "arch=glm4moe,embd=128,layers=3,heads=4,kv_heads=1,head_dim=32,rot=16,ff=192,experts=8,"            \
    "experts_used=2,expert_ff=32,dense_layers=1,rope_base=1000000"

#define SHAPE_G4                                                                                          \
    "arch=gemma4,embd=128,layers=6,heads=4,kv_heads=1,head_dim=64,head_dim_swa=32,ff=192,swa=12,"        \
    "swa_period=3,kv_shared=3,ple=32,rope_base=1000000,rope_base_swa=10000,tied=1"

/* README-2026's deepseek2-lite (D4) and qwen3next (C5c) */
#define SHAPE_DSL                                                                                         \
    "arch=deepseek2,embd=128,layers=4,heads=4,kv_heads=1,head_dim=80,rot=16,ff=96,experts=8,"            \
    "experts_used=2,expert_ff=32,shexp_ff=64,kv_lora=64,nope=32,v_mla=32,dense_layers=2,eps=1e-6"
#define SHAPE_Q3N                                                                                         \
    "arch=qwen3next,embd=128,layers=4,heads=4,kv_heads=2,head_dim=32,rot=8,ff=32,experts=4,"             \
    "experts_used=2,expert_ff=32,shexp_ff=32,ssm_conv=4,ssm_state=32,ssm_k_heads=2,ssm_v_heads=4"

static cf_type planned(const char *shape, cf_mk_ftype ft, const char *name)
{
    cf_mk_shape s;
    cf_mk_tensor *plan;
    int n;
    cf_err err;
    if (cf_mk_shape_named(shape, &s) != 0 || cf_mk_plan(&s, ft, false, 32000, &plan, &n, &err) != 0)
        return CF_TYPE_COUNT;
    const cf_mk_tensor *t = find(plan, n, name);
    cf_type ty = t ? t->type : CF_TYPE_COUNT;
    free(plan);
    return ty;
}

static void test_builtin_shapes(void)
{
    static const struct {
        const char *shape;
        cf_mk_ftype ft;
        const char *tensor;
        cf_type want;
    } cases[] = {
        /* 576 is not a multiple of 256: Q4_K -> Q5_0, Q6_K -> Q8_0 */
        {"smollm2-135m", CF_MK_Q4_K_M, "token_embd.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.0.attn_q.weight", CF_TYPE_Q5_0},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.0.attn_v.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.3.attn_v.weight", CF_TYPE_Q5_0},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.0.ffn_down.weight", CF_TYPE_Q6_K},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.3.ffn_down.weight", CF_TYPE_Q4_K},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.5.ffn_down.weight", CF_TYPE_Q6_K},
        {"smollm2-135m", CF_MK_Q4_K_M, "blk.29.ffn_down.weight", CF_TYPE_Q6_K},
        {"smollm2-135m", CF_MK_Q4_0, "token_embd.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_Q4_0, "blk.7.ffn_down.weight", CF_TYPE_Q4_0},
        {"smollm2-135m", CF_MK_Q8_0, "token_embd.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_Q6_K, "blk.0.attn_k.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_Q6_K, "blk.0.ffn_down.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q4_K_M, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q4_K_M, "blk.2.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q4_K_M, "blk.4.attn_v.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q4_K_M, "blk.14.ffn_down.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q4_0, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_F16, "token_embd.weight", CF_TYPE_F16},
        {"qwen2.5-0.5b", CF_MK_Q4_K_M, "token_embd.weight", CF_TYPE_Q8_0},
        {"qwen2.5-0.5b", CF_MK_Q4_K_M, "blk.0.attn_q.bias", CF_TYPE_F32},
        {"qwen2.5-0.5b", CF_MK_Q4_K_M, "blk.1.ffn_gate.weight", CF_TYPE_Q5_0},
        {"qwen2.5-0.5b", CF_MK_Q4_K_M, "blk.1.ffn_down.weight", CF_TYPE_Q6_K},
        /* llama-1b: 16 layers, n_head = 4 n_head_kv, tied */
        {"llama-1b", CF_MK_IQ2_M, "token_embd.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_IQ2_M, "blk.0.attn_q.weight", CF_TYPE_IQ2_S},
        {"llama-1b", CF_MK_IQ2_M, "blk.0.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_IQ2_M, "blk.1.ffn_down.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ2_M, "blk.2.ffn_down.weight", CF_TYPE_IQ2_S},
        {"llama-1b", CF_MK_IQ3_M, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_IQ3_M, "blk.0.attn_q.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_M, "blk.9.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_IQ3_M, "blk.5.attn_output.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_IQ3_M, "blk.1.ffn_down.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_IQ3_M, "blk.2.ffn_down.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_M, "blk.2.ffn_up.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_XS, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_IQ3_XS, "blk.3.attn_q.weight", CF_TYPE_IQ3_XXS},
        {"llama-1b", CF_MK_IQ3_XS, "blk.3.attn_k.weight", CF_TYPE_IQ3_XXS},
        {"llama-1b", CF_MK_IQ3_XS, "blk.0.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_IQ3_XS, "blk.0.attn_output.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_XS, "blk.1.ffn_gate.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_XS, "blk.2.ffn_up.weight", CF_TYPE_IQ3_XXS},
        {"llama-1b", CF_MK_IQ3_XS, "blk.13.ffn_gate.weight", CF_TYPE_IQ3_XXS},
        {"llama-1b", CF_MK_IQ3_XS, "blk.14.ffn_up.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_XS, "blk.7.ffn_down.weight", CF_TYPE_IQ3_S},
        /* the K-quant mixtures (llama-1b: 4 heads a KV head, 16 layers) */
        {"llama-1b", CF_MK_Q2_K, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q2_K, "blk.3.attn_q.weight", CF_TYPE_Q2_K},
        {"llama-1b", CF_MK_Q2_K, "blk.3.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q2_K, "blk.3.attn_output.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q2_K, "blk.3.ffn_down.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q2_K, "blk.3.ffn_up.weight", CF_TYPE_Q2_K},
        {"llama-1b", CF_MK_Q3_K_S, "blk.0.attn_v.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q3_K_S, "blk.0.ffn_down.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q3_K_M, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.1.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.2.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.0.ffn_down.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.1.ffn_down.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.5.attn_output.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.5.attn_q.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q3_K_M, "blk.5.ffn_gate.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q3_K_L, "blk.7.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q3_K_L, "blk.7.attn_output.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q3_K_L, "blk.7.ffn_down.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q3_K_L, "blk.7.ffn_up.weight", CF_TYPE_Q3_K},
        {"llama-1b", CF_MK_Q4_K_S, "blk.3.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q4_K_S, "blk.4.attn_v.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q4_K_S, "blk.1.ffn_down.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q4_K_S, "blk.2.ffn_down.weight", CF_TYPE_Q4_K},
        {"llama-1b", CF_MK_Q5_K_S, "blk.0.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q5_K_S, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q5_K_M, "blk.2.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q5_K_M, "blk.4.attn_v.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_Q5_K_M, "blk.3.ffn_down.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_Q5_K_M, "blk.14.ffn_down.weight", CF_TYPE_Q6_K},
        /* 576-wide rows: Q2_K and Q3_K -> IQ4_NL; 1536-wide ffn_down stays */
        {"smollm2-135m", CF_MK_Q3_K_M, "blk.3.attn_q.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_Q2_K, "blk.3.ffn_down.weight", CF_TYPE_Q3_K},
        {"smollm2-135m", CF_MK_Q2_K, "blk.3.ffn_up.weight", CF_TYPE_IQ4_NL},
        /* qwen3.5's attn_v counted over its attention layers (3, 7, ...) */
        {"qwen3.5-0.8b", CF_MK_Q3_K_M, "blk.7.attn_v.weight", CF_TYPE_Q5_K},
        {"qwen3.5-0.8b", CF_MK_Q3_K_M, "blk.11.attn_v.weight", CF_TYPE_Q4_K},
        /* 576-wide rows are not whole 256-blocks: IQ2_S and IQ3_S -> IQ4_NL */
        {"smollm2-135m", CF_MK_IQ3_M, "blk.0.attn_q.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_IQ2_M, "token_embd.weight", CF_TYPE_Q8_0},
        {"smollm2-135m", CF_MK_IQ2_M, "blk.0.attn_v.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_IQ2_M, "blk.0.ffn_up.weight", CF_TYPE_IQ4_NL},
        /* the pure types: no Q6_K output; 576 and 896 fall back from 256-blocks */
        {"llama-1b", CF_MK_IQ3_S, "token_embd.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_S, "blk.0.attn_v.weight", CF_TYPE_IQ3_S},
        {"llama-1b", CF_MK_IQ3_XXS, "token_embd.weight", CF_TYPE_IQ3_XXS},
        {"llama-1b", CF_MK_IQ3_XXS, "blk.15.ffn_down.weight", CF_TYPE_IQ3_XXS},
        /* IQ4_XS: tied output Q6_K, attn_v Q5_K (4 heads a KV head), the first eighth's ffn_down Q5_K */
        {"llama-1b", CF_MK_IQ4_XS, "token_embd.weight", CF_TYPE_Q6_K},
        {"llama-1b", CF_MK_IQ4_XS, "blk.3.attn_v.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_IQ4_XS, "blk.1.ffn_down.weight", CF_TYPE_Q5_K},
        {"llama-1b", CF_MK_IQ4_XS, "blk.2.ffn_down.weight", CF_TYPE_IQ4_XS},
        {"llama-1b", CF_MK_IQ4_XS, "blk.2.attn_q.weight", CF_TYPE_IQ4_XS},
        {"llama-1b", CF_MK_TQ2_0, "blk.3.ffn_down.weight", CF_TYPE_TQ2_0},
        {"llama-1b", CF_MK_MXFP4, "token_embd.weight", CF_TYPE_MXFP4},
        {"smollm2-135m", CF_MK_IQ3_XXS, "blk.0.ffn_down.weight", CF_TYPE_IQ3_XXS}, /* ne0 1536 */
        {"smollm2-135m", CF_MK_IQ4_NL, "token_embd.weight", CF_TYPE_Q8_0}, /* tied output of 576 */
        {"smollm2-135m", CF_MK_IQ4_XS, "blk.0.attn_q.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_IQ4_XS, "blk.0.ffn_down.weight", CF_TYPE_Q5_K}, /* first eighth */
        {"smollm2-135m", CF_MK_IQ4_XS, "blk.9.ffn_down.weight", CF_TYPE_IQ4_XS}, /* ne0 1536 */
        {"smollm2-135m", CF_MK_TQ2_0, "token_embd.weight", CF_TYPE_Q4_0},
        {"qwen2.5-0.5b", CF_MK_MXFP4, "blk.0.attn_k.bias", CF_TYPE_F32},
        {"qwen2.5-0.5b", CF_MK_TQ2_0, "blk.0.ffn_down.weight", CF_TYPE_TQ2_0}, /* ne0 4864 */
        /* 1152 is not a multiple of 256 either; q's 1024-wide output rows are */
        {"gemma3-1b", CF_MK_Q4_K_M, "token_embd.weight", CF_TYPE_Q8_0},
        {"gemma3-1b", CF_MK_Q4_K_M, "blk.0.attn_q.weight", CF_TYPE_Q5_0},
        {"gemma3-1b", CF_MK_Q4_K_M, "blk.0.attn_output.weight", CF_TYPE_Q4_K},
        {"gemma3-1b", CF_MK_Q4_K_M, "blk.0.attn_v.weight", CF_TYPE_Q8_0},
        {"gemma3-1b", CF_MK_Q4_K_M, "blk.3.ffn_down.weight", CF_TYPE_Q4_K},
        {"gemma3-1b", CF_MK_Q4_K_M, "blk.0.post_ffw_norm.weight", CF_TYPE_F32},
        {"qwen3-0.6b", CF_MK_Q4_K_M, "token_embd.weight", CF_TYPE_Q6_K},
        {"qwen3-0.6b", CF_MK_Q4_K_M, "blk.0.attn_k_norm.weight", CF_TYPE_F32},
        {"qwen3-4b", CF_MK_Q4_K_M, "blk.35.ffn_down.weight", CF_TYPE_Q6_K},
        {"smollm3-3b", CF_MK_Q4_K_M, "blk.4.attn_v.weight", CF_TYPE_Q4_K},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_type got = planned(cases[i].shape, cases[i].ft, cases[i].tensor);
        CHECKF(got == cases[i].want, "%s %s %s: %s, expected %s", cases[i].shape,
               cf_mk_ftype_name(cases[i].ft), cases[i].tensor, cf_type_name(got),
               cf_type_name(cases[i].want));
    }
    CHECK(planned("llama-1b", CF_MK_Q8_0, "output.weight") == CF_TYPE_COUNT); /* tied */
}

/* relative RMS error a type's quantization may leave on N(0,1) data */
static double max_rel_err(cf_type t)
{
    switch (t) {
    case CF_TYPE_F32: return 0;
    case CF_TYPE_F16: return 1e-3;
    case CF_TYPE_BF16: return 5e-3;
    case CF_TYPE_Q8_0: return 0.01;
    case CF_TYPE_Q6_K: return 0.03;
    case CF_TYPE_Q5_0:
    case CF_TYPE_Q5_1: return 0.06;
    case CF_TYPE_Q4_K: return 0.1;
    case CF_TYPE_Q3_K: return 0.2;
    case CF_TYPE_Q2_K: return 0.38; /* 2 bits and a 4-bit scale a group of 16 */
    case CF_TYPE_IQ2_S: return 0.35;
    case CF_TYPE_IQ3_S: return 0.22;
    case CF_TYPE_IQ3_XXS: return 0.28;
    case CF_TYPE_IQ4_NL:
    case CF_TYPE_IQ4_XS: return 0.1;
    case CF_TYPE_MXFP4: return 0.16;
    case CF_TYPE_TQ2_0: return 1.0; /* ternary at max|x|: nearly all round to 0, never worse */
    default: return 0.13; /* Q4_0, Q4_1 */
    }
}

/* Every tensor of the file has the planned type and its rows dequantize to
 * cf_mk_row's within the type's error (a few rows of each). */
static void check_contents(const char *path, const cf_mk_params *p, int n_vocab)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(path, &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_mk_tensor *plan;
    int n;
    CHECK(cf_mk_plan(&p->shape, p->ftype, p->pure, n_vocab, &plan, &n, &err) == 0);
    CHECK(n == cf_gguf_n_tensors(g));
    for (int i = 0; i < n && i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        CHECKF(!strcmp(t->name, plan[i].name) && t->type == plan[i].type, "%s %s vs planned %s %s",
               t->name, cf_type_name(t->type), plan[i].name, cf_type_name(plan[i].type));
        const int64_t k = t->ne[0];
        float *want = malloc((size_t)k * sizeof *want), *got = malloc((size_t)k * sizeof *got);
        const size_t rb = cf_row_bytes(t->type, k);
        for (int64_t r = 0; r < t->ne[1]; r += 1 + t->ne[1] / 3) {
            cf_mk_row(p->seed, &plan[i], r, want);
            cf_dequantize_row(t->type, (const uint8_t *)t->data + (size_t)r * rb, got, k);
            double e2 = 0, x2 = 0;
            for (int64_t j = 0; j < k; j++) {
                e2 += ((double)got[j] - want[j]) * ((double)got[j] - want[j]);
                x2 += ((double)want[j] - plan[i].init_mean) * ((double)want[j] - plan[i].init_mean);
            }
            double rel = sqrt(e2 / x2);
            CHECKF(rel <= max_rel_err(t->type), "%s row %lld (%s): relative error %.4f", t->name,
                   (long long)r, cf_type_name(t->type), rel);
        }
        free(want);
        free(got);
    }
    free(plan);
    cf_gguf_close(g);
}

/* The file loads with the shape's hyper-parameters, and a batch of tokens
 * (more than a sliding window) gives finite logits with the same bits as
 * decoding them one at a time, at every position. */
static void load_and_decode(const char *path, const cf_mk_shape *s)
{
    enum { N = 12 };
    static const int32_t ids[N] = {1, 17, 300, 42, 5, 99, 256, 7, 411, 3, 64, 128};
    cf_model *m;
    cf_err err;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    const cf_hparams *hp = cf_model_hparams(m);
    CHECKF(hp->arch == s->arch && hp->n_embd == s->n_embd && hp->n_layer == s->n_layer &&
               hp->head_dim == cf_mk_head_dim(s) && hp->n_rot == (s->n_rot ? s->n_rot : hp->head_dim) &&
               hp->n_swa == s->n_swa && hp->tied_output == s->tied,
           "%s: loaded %s, %d wide, %d layers, head %d, rot %d, window %d, tied %d", path,
           cf_arch_name(hp->arch), hp->n_embd, hp->n_layer, hp->head_dim, hp->n_rot, hp->n_swa,
           hp->tied_output);
    const int V = hp->n_vocab;
    cf_ctx_params cp = {.n_ctx = 64, .n_threads = 2};
    cf_ctx *c;
    float *batch = malloc((size_t)N * V * sizeof *batch), *one = malloc((size_t)V * sizeof *one);
    if (cf_ctx_new(m, &cp, &c, &err) == 0) {
        CHECKF(cf_ctx_decode(c, ids, N, batch, true, &err) == 0, "%s", err.msg);
        bool finite = true;
        double s2 = 0;
        for (int i = 0; i < N * V; i++) {
            finite = finite && isfinite(batch[i]);
            s2 += (double)batch[i] * batch[i];
        }
        CHECKF(finite && s2 > 0, "%s: logits not finite or all zero", path);
        CHECK(cf_ctx_kv_truncate(c, 0, &err) == 0);
        for (int i = 0; i < N; i++) {
            CHECKF(cf_ctx_decode(c, &ids[i], 1, one, false, &err) == 0, "%s", err.msg);
            CHECKF(!memcmp(one, batch + (size_t)i * V, (size_t)V * sizeof *one),
                   "%s: token %d alone differs from the batch", path, i);
        }
        cf_ctx_free(c);
    } else {
        CHECKF(0, "%s", err.msg);
    }
    free(batch);
    free(one);
    cf_model_free(m);
}

static char *tmp_path(const char *tag)
{
    static char buf[8][256];
    static int next;
    char *b = buf[next++ & 7];
    snprintf(b, 256, "%s/confab-test-mk-%d-%s.gguf", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid(), tag);
    return b;
}

static void test_every_type(void)
{
    const char *vocab = shared_path("models/stories260K.gguf"); /* 512 tokens: fast */
    cf_err err;
    for (int ft = 0; ft < CF_MK_FTYPE_COUNT; ft++) {
        if (ft >= CF_MK_IQ2_XXS && ft <= CF_MK_IQ1_M)
            continue; /* refused: test_iq_types */
        cf_mk_params p = {.ftype = (cf_mk_ftype)ft, .vocab_path = vocab, .seed = 7, .n_threads = 2};
        /* llama with 256-wide rows; qwen2 with 288-wide rows (K-quant fallbacks) */
        for (int arch = 0; arch < 2; arch++) {
            p.shape = (cf_mk_shape){.name = "t", .arch = CF_ARCH_LLAMA, .n_ctx = 512,
                                    .rope_base = 10000.0f, .norm_eps = 1e-5f};
            const char *dims = arch ? "arch=qwen2,embd=288,layers=2,heads=6,kv_heads=2,ff=512,tied=1"
                                    : "embd=256,layers=2,heads=4,kv_heads=2,ff=512";
            CHECKF(cf_mk_shape_apply_dims(&p.shape, dims, &err) == 0, "%s", err.msg);
            p.out_path = tmp_path(cf_mk_ftype_name(p.ftype));
            if (cf_mkmodel(&p, &err) != 0) {
                CHECKF(0, "%s: %s", cf_mk_ftype_name(p.ftype), err.msg);
                continue;
            }
            check_contents(p.out_path, &p, 512);
            load_and_decode(p.out_path, &p.shape);
            unlink(p.out_path);
        }
    }
}

/* The 2-bit i-quant file types: IQ2_M --pure writes IQ2_S matrices that
 * load and decode (its mixture, IQ3_S and all, is in test_every_type); the
 * others need an importance matrix: each refused in one line. */
static void test_iq_types(void)
{
    const char *vocab = shared_path("models/stories260K.gguf");
    cf_err err;
    cf_mk_params p = {.ftype = CF_MK_IQ2_M, .pure = true, .vocab_path = vocab, .seed = 7, .n_threads = 2};
    p.shape = (cf_mk_shape){.name = "t", .arch = CF_ARCH_LLAMA, .n_ctx = 512, .rope_base = 10000.0f,
                            .norm_eps = 1e-5f};
    CHECKF(cf_mk_shape_apply_dims(&p.shape, "embd=256,layers=2,heads=4,kv_heads=2,ff=512", &err) == 0, "%s",
           err.msg);
    cf_mk_tensor *plan;
    int n;
    CHECKF(cf_mk_plan(&p.shape, p.ftype, true, 512, &plan, &n, &err) == 0, "%s", err.msg);
    for (int i = 0; i < n; i++)
        CHECKF(plan[i].type == (plan[i].n_dims == 2 ? CF_TYPE_IQ2_S : CF_TYPE_F32), "%s: %s", plan[i].name,
               cf_type_name(plan[i].type));
    free(plan);
    p.out_path = tmp_path("IQ2_M");
    if (cf_mkmodel(&p, &err) == 0) {
        check_contents(p.out_path, &p, 512);
        load_and_decode(p.out_path, &p.shape);
        unlink(p.out_path);
    } else {
        CHECKF(0, "IQ2_M --pure: %s", err.msg);
    }
    for (int ft = CF_MK_IQ2_XXS; ft <= CF_MK_IQ1_M; ft++)
        for (int pure = 0; pure < 2; pure++) {
            CHECK(cf_mk_plan(&p.shape, (cf_mk_ftype)ft, pure, 512, &plan, &n, &err) != 0);
            CHECKF(strstr(err.msg, "importance matrix") && !strchr(err.msg, '\n'), "%s", err.msg);
        }
}

/* Each family mkmodel learned after llama and qwen2, at a tiny shape that
 * keeps its features: q wider than the embedding (qwen3, gemma3), a
 * 4-token window on gemma3's sliding layers (5 of 6), smollm3's NoPE
 * layer, olmo2's post-norms, granite's multipliers; the experts of
 * qwen3moe, Mixtral (llama) and gpt-oss (with its 8-token window on
 * alternate layers, sinks and YaRN), qwen35's delta nets and gated
 * attention (rotating 16 of 32 dims), granitehybrid's Mamba2 mixers
 * (with experts and a shared one, and dense with two groups), in the
 * fixtures' shapes. */
static void test_families(void)
{
    static const struct {
        const char *dims;
        cf_mk_ftype ft;
    } cases[] = {
        {"arch=qwen3,embd=128,layers=2,heads=4,kv_heads=2,head_dim=64,ff=256", CF_MK_Q8_0},
        {"arch=gemma3,embd=128,layers=6,heads=4,kv_heads=1,head_dim=64,ff=256,swa=4,"
         "rope_base_swa=20000,tied=1",
         CF_MK_Q8_0},
        {"arch=smollm3,embd=128,layers=4,heads=4,kv_heads=2,ff=256,tied=1", CF_MK_Q8_0},
        {"arch=olmo2,embd=128,layers=2,heads=4,ff=256", CF_MK_Q8_0},
        {"arch=granite,embd=128,layers=2,heads=4,kv_heads=2,ff=256", CF_MK_Q8_0},
        {SHAPE_QM, CF_MK_Q8_0},
        {SHAPE_QM ",embd=256,expert_ff=256", CF_MK_Q4_K_M}, /* Q4_K and Q6_K experts */
        {SHAPE_MX, CF_MK_Q8_0},
        {SHAPE_MX ",embd=256", CF_MK_Q4_K_M},
        {SHAPE_GO, CF_MK_Q8_0},
        {SHAPE_GO, CF_MK_MXFP4_MOE},
        {SHAPE_Q35, CF_MK_Q8_0},
        {SHAPE_Q35 ",embd=256,ff=512", CF_MK_Q4_K_M}, /* Q5_K attn_qkv */
        {SHAPE_G4 ",swa=4", CF_MK_Q8_0}, /* a window shorter than the batch */
        {SHAPE_G4 ",swa=4,embd=256,ff=256", CF_MK_Q4_K_M},
        {SHAPE_MS, CF_MK_Q8_0},
        {SHAPE_GL, CF_MK_Q8_0},
        {SHAPE_GH, CF_MK_Q8_0},
        {"arch=granitehybrid,embd=128,layers=4,heads=4,kv_heads=2,ff=64,ssm_conv=4,ssm_state=32,"
         "ssm_k_heads=2,ssm_v_heads=8,attn_period=4",
         CF_MK_Q4_K_M}, /* dense, two groups */
        {SHAPE_DSL, CF_MK_Q8_0},
        {SHAPE_DSL ",q_lora=32,yarn_factor=40,yarn_orig_ctx=4096", CF_MK_Q8_0}, /* V3's q LoRA */
        {SHAPE_DSL ",embd=256,expert_ff=256,shexp_ff=512", CF_MK_Q4_K_M},
        {SHAPE_Q3N, CF_MK_Q8_0},
    };
    cf_err err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *dims = cases[i].dims;
        cf_mk_params p = {.ftype = cases[i].ft, .vocab_path = shared_path("models/stories260K.gguf"),
                          .seed = 11, .n_threads = 2, .out_path = tmp_path("family")};
        p.shape = (cf_mk_shape){.name = "t", .arch = CF_ARCH_LLAMA, .n_ctx = 512,
                                .rope_base = 10000.0f, .norm_eps = 1e-6f};
        CHECKF(cf_mk_shape_apply_dims(&p.shape, dims, &err) == 0, "%s", err.msg);
        if (cf_mkmodel(&p, &err) != 0) {
            CHECKF(0, "%s: %s", dims, err.msg);
            continue;
        }
        check_contents(p.out_path, &p, 512);
        load_and_decode(p.out_path, &p.shape);
        unlink(p.out_path);
    }
}

/* The built-in shapes of the newer families, planned with their models'
 * vocabulary sizes: the published parameter counts, llama.cpp's tensor
 * counts, the Q8_0 bytes those give (matrices 34 bytes per 32 weights,
 * norms F32) and the attention widths. */
static void test_builtin_plans(void)
{
    static const struct {
        const char *shape;
        int n_vocab, n_tensors;
        uint64_t n_params, q8_bytes;
        int64_t q, kv, qk_norm; /* attn_q and attn_k rows, attn_q_norm width (0: none) */
        bool post_norms;
    } cases[] = {
        {"qwen3-0.6b", 151936, 310, 596049920, 633495552, 2048, 1024, 128, false},
        {"qwen3-4b", 151936, 398, 4022468096, 4274448384, 4096, 1024, 128, false},
        {"gemma3-1b", 262144, 340, 999885952, 1062773248, 1024, 256, 256, true},
        {"smollm3-3b", 128256, 326, 3075098624, 3267731456, 2048, 512, 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_mk_shape s;
        cf_mk_tensor *plan;
        int n;
        cf_err err;
        if (cf_mk_shape_named(cases[i].shape, &s) != 0 ||
            cf_mk_plan(&s, CF_MK_Q8_0, false, cases[i].n_vocab, &plan, &n, &err) != 0) {
            CHECKF(0, "%s: no plan", cases[i].shape);
            continue;
        }
        uint64_t params = 0, bytes = 0;
        for (int j = 0; j < n; j++) {
            params += (uint64_t)(plan[j].ne[0] * plan[j].ne[1]);
            bytes += cf_row_bytes(plan[j].type, plan[j].ne[0]) * (uint64_t)plan[j].ne[1];
        }
        CHECKF(n == cases[i].n_tensors && params == cases[i].n_params && bytes == cases[i].q8_bytes,
               "%s: %d tensors, %llu parameters, %llu bytes", cases[i].shape, n,
               (unsigned long long)params, (unsigned long long)bytes);
        const int64_t E = s.n_embd, last = s.n_layer - 1;
        char name[48];
        const cf_mk_tensor *q = find(plan, n, "blk.0.attn_q.weight");
        const cf_mk_tensor *k = find(plan, n, "blk.0.attn_k.weight");
        snprintf(name, sizeof name, "blk.%lld.attn_output.weight", (long long)last);
        const cf_mk_tensor *o = find(plan, n, name);
        const cf_mk_tensor *qn = find(plan, n, "blk.0.attn_q_norm.weight");
        CHECKF(q && q->ne[0] == E && q->ne[1] == cases[i].q && k && k->ne[0] == E &&
                   k->ne[1] == cases[i].kv && o && o->ne[0] == cases[i].q && o->ne[1] == E,
               "%s: attention widths", cases[i].shape);
        CHECKF(cases[i].qk_norm ? qn && qn->ne[0] == cases[i].qk_norm && qn->type == CF_TYPE_F32 &&
                                      qn->init_mean == 1.0f
                                : !qn,
               "%s: attn_q_norm", cases[i].shape);
        CHECKF(!find(plan, n, "blk.0.post_ffw_norm.weight") == !cases[i].post_norms,
               "%s: post_ffw_norm", cases[i].shape);
        CHECK(!find(plan, n, "output.weight"));
        free(plan);
    }
}

/* gemma4-e2b, planned with Gemma 4's 262144 tokens: 4.63 B parameters
 * (the published 5.1 B less the vision and audio encoders; 2.3 B without
 * the per-layer embeddings), 6 tensors outside the layers, 17 in the 15
 * with their own cache and 14 in the 20 shared ones (no attn_k, attn_v,
 * attn_k_norm); sliding layers' heads of 256, global ones' of 512, the
 * shared layers' FFNs twice as wide, F32 per_layer_model_proj and
 * rope_freqs (64 of 256 pairs rotated). */
static void test_gemma4_plan(void)
{
    cf_mk_shape s;
    cf_mk_tensor *plan;
    int n;
    cf_err err;
    if (cf_mk_shape_named("gemma4-e2b", &s) != 0 ||
        cf_mk_plan(&s, CF_MK_Q8_0, false, 262144, &plan, &n, &err) != 0) {
        CHECK(0);
        return;
    }
    uint64_t params = 0;
    for (int j = 0; j < n; j++)
        params += (uint64_t)(plan[j].ne[0] * plan[j].ne[1]);
    CHECKF(n == 6 + 15 * 17 + 20 * 14 && params == 4628569635ull, "gemma4-e2b: %d tensors, %llu parameters",
           n, (unsigned long long)params);
    const cf_mk_tensor *q0 = find(plan, n, "blk.0.attn_q.weight"), *q4 = find(plan, n, "blk.4.attn_q.weight");
    const cf_mk_tensor *k14 = find(plan, n, "blk.14.attn_k.weight");
    const cf_mk_tensor *up15 = find(plan, n, "blk.15.ffn_up.weight");
    const cf_mk_tensor *proj = find(plan, n, "per_layer_model_proj.weight");
    const cf_mk_tensor *rf = find(plan, n, "rope_freqs.weight");
    CHECK(q0 && q0->ne[1] == 8 * 256 && q4 && q4->ne[1] == 8 * 512 && k14 && k14->ne[1] == 512);
    CHECK(!find(plan, n, "blk.15.attn_k.weight") && !find(plan, n, "blk.34.attn_v.weight") &&
          !find(plan, n, "blk.15.attn_k_norm.weight") && find(plan, n, "blk.15.attn_q_norm.weight"));
    CHECK(up15 && up15->ne[1] == 2 * 6144 && find(plan, n, "blk.14.ffn_up.weight")->ne[1] == 6144);
    CHECK(proj && proj->type == CF_TYPE_F32 && proj->ne[0] == 1536 && proj->ne[1] == 35 * 256);
    CHECK(rf && rf->ne[0] == 256 && rf->init_prope && !find(plan, n, "output.weight"));
    float freqs[256];
    cf_mk_row(1, rf, 0, freqs);
    CHECK(freqs[63] == 1.0f && freqs[64] == 1e30f);
    free(plan);
    /* Q4_K_M's attn_v: the more-bits layers of the 15 that have one */
    CHECK(planned("gemma4-e2b", CF_MK_Q4_K_M, "blk.14.attn_v.weight") == CF_TYPE_Q6_K &&
          planned("gemma4-e2b", CF_MK_Q4_K_M, "blk.4.attn_v.weight") == CF_TYPE_Q4_K &&
          planned("gemma4-e2b", CF_MK_Q4_K_M, "per_layer_token_embd.weight") == CF_TYPE_Q4_K &&
          planned("gemma4-e2b", CF_MK_Q4_K_M, "token_embd.weight") == CF_TYPE_Q6_K);
}

/* granite-4.0-h-tiny, planned with Granite 4's 100352 tokens: 6.94 B
 * parameters (the published 7 B), 2 tensors outside the layers, 17 in each
 * of the 36 Mamba2 layers and 13 in the attention layers 5, 15, 25, 35;
 * ssm_in gives z, x|B|C and dt (2 x 3072 + 2 x 128 + 48 rows), the experts
 * are 512 wide, the shared one 1024. */
static void test_granite_tiny_plan(void)
{
    cf_mk_shape s;
    cf_mk_tensor *plan;
    int n;
    cf_err err;
    if (cf_mk_shape_named("granite-4.0-h-tiny", &s) != 0 ||
        cf_mk_plan(&s, CF_MK_Q4_K_M, false, 100352, &plan, &n, &err) != 0) {
        CHECK(0);
        return;
    }
    uint64_t params = 0;
    for (int j = 0; j < n; j++)
        params += (uint64_t)(plan[j].ne[0] * plan[j].ne[1] * plan[j].ne[2]);
    CHECKF(n == 2 + 36 * 17 + 4 * 13 && params == 6939037248ull,
           "granite-4.0-h-tiny: %d tensors, %llu parameters", n, (unsigned long long)params);
    const cf_mk_tensor *in0 = find(plan, n, "blk.0.ssm_in.weight"), *a0 = find(plan, n, "blk.0.ssm_a");
    const cf_mk_tensor *up = find(plan, n, "blk.5.ffn_up_exps.weight");
    const cf_mk_tensor *sh = find(plan, n, "blk.5.ffn_up_shexp.weight");
    CHECK(in0 && in0->ne[1] == 2 * 3072 + 2 * 128 + 48 && a0 && a0->ne[0] == 1 && a0->ne[1] == 48 &&
          a0->type == CF_TYPE_F32 && a0->init_neg_exp);
    CHECK(find(plan, n, "blk.5.attn_q.weight") && !find(plan, n, "blk.5.ssm_in.weight") &&
          !find(plan, n, "blk.6.attn_q.weight") && find(plan, n, "blk.35.attn_k.weight"));
    CHECK(up && up->ne[1] == 512 && up->ne[2] == 64 && sh && sh->ne[1] == 1024 &&
          !find(plan, n, "output.weight"));
    free(plan);
}

/* The MoE and hybrid shapes, planned with their models' vocabulary sizes:
 * the published parameter counts (gpt-oss-20b's 20.9 B, half of
 * Qwen3-30B-A3B's layers, Qwen3.5's text models), llama.cpp's tensor
 * counts (19 and 12 a layer; qwen35: 14 a delta-net layer, 11 an
 * attention layer), the expert and delta-net tensors' shapes and types,
 * and qwen3-30b-a3b-24l's Q4_K_M under 12 GB. */
static void test_moe_and_hybrid_plans(void)
{
    static const struct {
        const char *shape;
        int n_vocab, n_tensors;
        uint64_t n_params;
        cf_mk_ftype ft;
        const char *tensor;
        int64_t ne[3];
        cf_type want;
    } cases[] = {
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.0.ffn_gate_exps.weight",
         {2880, 2880, 32}, CF_TYPE_MXFP4},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.23.ffn_down_exps.weight",
         {2880, 2880, 32}, CF_TYPE_MXFP4},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.0.ffn_up_exps.bias", {2880, 32, 1},
         CF_TYPE_F32},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.0.attn_q.weight", {2880, 4096, 1},
         CF_TYPE_Q8_0},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "output.weight", {2880, 201088, 1},
         CF_TYPE_Q8_0},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.5.attn_sinks.weight", {64, 1, 1},
         CF_TYPE_F32},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_MXFP4_MOE, "blk.5.ffn_gate_inp.weight", {2880, 32, 1},
         CF_TYPE_F32},
        /* 2880 is not a multiple of 256: Q4_K -> Q5_0, Q6_K -> Q8_0 */
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_Q4_K_M, "blk.1.ffn_up_exps.weight", {2880, 2880, 32},
         CF_TYPE_Q5_0},
        {"gpt-oss-20b", 201088, 459, 20914757184, CF_MK_Q4_K_M, "blk.0.ffn_down_exps.weight",
         {2880, 2880, 32}, CF_TYPE_Q8_0},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q4_K_M, "blk.0.ffn_down_exps.weight",
         {768, 2048, 128}, CF_TYPE_Q6_K},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q4_K_M, "blk.3.ffn_down_exps.weight",
         {768, 2048, 128}, CF_TYPE_Q4_K},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q4_K_M, "blk.5.ffn_down_exps.weight",
         {768, 2048, 128}, CF_TYPE_Q6_K},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q4_K_M, "blk.3.ffn_gate_exps.weight",
         {2048, 768, 128}, CF_TYPE_Q4_K},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q4_K_M, "blk.3.ffn_gate_inp.weight",
         {2048, 128, 1}, CF_TYPE_F32},
        {"qwen3-30b-a3b-24l", 151936, 291, 15577227264, CF_MK_Q8_0, "blk.3.ffn_up_exps.weight",
         {2048, 768, 128}, CF_TYPE_Q8_0},
        /* 8 experts (Mixtral, llama-quantize's rule for it) */
        {"mixtral-8x7b", 32000, 323, 46702792704, CF_MK_Q4_K_M, "blk.0.attn_v.weight", {4096, 1024, 1},
         CF_TYPE_Q8_0},
        {"mixtral-8x7b", 32000, 323, 46702792704, CF_MK_IQ3_M, "blk.9.attn_output.weight", {4096, 4096, 1},
         CF_TYPE_Q5_K},
        {"mixtral-8x7b", 32000, 323, 46702792704, CF_MK_Q4_K_M, "blk.31.ffn_down_exps.weight",
         {14336, 4096, 8}, CF_TYPE_Q6_K},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.0.attn_qkv.weight", {1024, 6144, 1},
         CF_TYPE_Q5_K},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.0.ssm_conv1d.weight", {4, 6144, 1},
         CF_TYPE_F32},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.1.ssm_a", {16, 1, 1}, CF_TYPE_F32},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.3.attn_q.weight", {1024, 4096, 1},
         CF_TYPE_Q4_K},
        /* attn_v's more-bits layers count the 6 attention layers: the 3rd and the last */
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.3.attn_v.weight", {1024, 512, 1},
         CF_TYPE_Q4_K},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.11.attn_v.weight", {1024, 512, 1},
         CF_TYPE_Q6_K},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "blk.23.attn_v.weight", {1024, 512, 1},
         CF_TYPE_Q6_K},
        {"qwen3.5-0.8b", 248320, 320, 752393024, CF_MK_Q4_K_M, "token_embd.weight", {1024, 248320, 1},
         CF_TYPE_Q6_K},
        {"qwen3.5-4b", 248320, 426, 4205751296, CF_MK_Q8_0, "blk.30.ssm_out.weight", {4096, 2560, 1},
         CF_TYPE_Q8_0},
        /* tied, 9 tensors a layer */
        {"ministral3-3b", 131072, 236, 3429006336, CF_MK_Q4_K_M, "token_embd.weight", {3072, 131072, 1},
         CF_TYPE_Q6_K},
        /* 12 tensors in the dense layer, 17 in the others; 1408 and 10944
         * are not multiples of 256: Q4_K -> Q5_0, Q6_K -> Q8_0 */
        {"glm-4.5-air-7l", 151552, 117, 15534029568, CF_MK_Q4_K_M, "blk.1.ffn_down_exps.weight",
         {1408, 4096, 128}, CF_TYPE_Q5_0},
        {"glm-4.5-air-7l", 151552, 117, 15534029568, CF_MK_Q4_K_M, "blk.2.ffn_down_exps.weight",
         {1408, 4096, 128}, CF_TYPE_Q8_0},
        {"glm-4.5-air-7l", 151552, 117, 15534029568, CF_MK_Q4_K_M, "blk.0.ffn_down.weight", {10944, 4096, 1},
         CF_TYPE_Q5_0},
        {"glm-4.5-air-7l", 151552, 117, 15534029568, CF_MK_Q4_K_M, "blk.6.exp_probs_b.bias", {128, 1, 1},
         CF_TYPE_F32},
        {"glm-4.5-air-7l", 151552, 117, 15534029568, CF_MK_Q4_K_M, "blk.3.ffn_up_shexp.weight",
         {4096, 1408, 1}, CF_TYPE_Q4_K},
        {"qwen3.5-4b", 248320, 426, 4205751296, CF_MK_Q8_0, "blk.31.attn_k_norm.weight", {256, 1, 1},
         CF_TYPE_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_mk_shape s;
        cf_mk_tensor *plan;
        int n;
        cf_err err;
        if (cf_mk_shape_named(cases[i].shape, &s) != 0 ||
            cf_mk_plan(&s, cases[i].ft, false, cases[i].n_vocab, &plan, &n, &err) != 0) {
            CHECKF(0, "%s: no plan", cases[i].shape);
            continue;
        }
        uint64_t params = 0, bytes = 0;
        for (int j = 0; j < n; j++) {
            params += (uint64_t)(plan[j].ne[0] * plan[j].ne[1] * plan[j].ne[2]);
            bytes += cf_row_bytes(plan[j].type, plan[j].ne[0]) * (uint64_t)(plan[j].ne[1] * plan[j].ne[2]);
        }
        CHECKF(n == cases[i].n_tensors && params == cases[i].n_params, "%s: %d tensors, %llu parameters",
               cases[i].shape, n, (unsigned long long)params);
        const cf_mk_tensor *t = find(plan, n, cases[i].tensor);
        CHECKF(t && t->type == cases[i].want && !memcmp(t->ne, cases[i].ne, sizeof t->ne) &&
                   t->n_dims == (t->ne[2] > 1 ? 3 : t->ne[1] > 1 ? 2 : 1),
               "%s %s %s: %s", cases[i].shape, cf_mk_ftype_name(cases[i].ft), cases[i].tensor,
               t ? cf_type_name(t->type) : "missing");
        if ((s.arch == CF_ARCH_QWEN3MOE || s.arch == CF_ARCH_GLM4MOE) && cases[i].ft == CF_MK_Q4_K_M)
            CHECKF(bytes < 12000000000u, "%s Q4_K_M: %llu bytes", cases[i].shape, (unsigned long long)bytes);
        free(plan);
    }
}

static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    char x[4096], y[4096];
    while (same && (na = fread(x, 1, sizeof x, fa)) > 0) {
        nb = fread(y, 1, sizeof y, fb);
        same = na == nb && !memcmp(x, y, na);
    }
    same = same && fread(y, 1, 1, fb) == 0;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static void test_threads_and_seed(void)
{
    cf_err err;
    cf_mk_params p = {.ftype = CF_MK_Q4_K_M, .vocab_path = shared_path("models/stories260K.gguf"),
                      .seed = 3};
    CHECK(cf_mk_shape_named("smollm2-135m", &p.shape) == 0);
    CHECK(cf_mk_shape_apply_dims(&p.shape, "layers=2,ff=512", &err) == 0);
    const char *a = tmp_path("t1"), *b = tmp_path("t2"), *c = tmp_path("seed");
    p.n_threads = 1;
    p.out_path = a;
    CHECKF(cf_mkmodel(&p, &err) == 0, "%s", err.msg);
    p.n_threads = 2;
    p.out_path = b;
    CHECKF(cf_mkmodel(&p, &err) == 0, "%s", err.msg);
    p.seed = 4;
    p.out_path = c;
    CHECKF(cf_mkmodel(&p, &err) == 0, "%s", err.msg);
    CHECK(same_file(a, b));
    CHECK(!same_file(a, c));
    unlink(a);
    unlink(b);
    unlink(c);
}

static void test_dims_errors(void)
{
    cf_mk_shape s = {0};
    cf_err err;
    CHECK(cf_mk_shape_apply_dims(&s, "embd=256,bogus=1", &err) != 0 && strstr(err.msg, "bogus"));
    CHECK(cf_mk_shape_apply_dims(&s, "embd=abc", &err) != 0 && strstr(err.msg, "embd"));
    CHECK(cf_mk_shape_apply_dims(&s, "arch=gpt2", &err) != 0 && strstr(err.msg, "gpt2"));
    CHECK(cf_mk_shape_apply_dims(&s, "layers", &err) != 0 && strstr(err.msg, "KEY=VALUE"));
    CHECK(cf_mk_shape_apply_dims(&s, "embd=256,layers=2,heads=3,ff=512", &err) == 0);
    CHECK(cf_mk_shape_check(&s, &err) != 0); /* 256 is not 3 heads */
    CHECK(cf_mk_shape_apply_dims(&s, "heads=4", &err) == 0 && cf_mk_shape_check(&s, &err) == 0);
    CHECK(cf_mk_shape_named("no-such-model", &s) != 0);
    /* with head_dim the heads need not divide the embedding */
    CHECK(cf_mk_shape_apply_dims(&s, "heads=3", &err) == 0 && cf_mk_shape_check(&s, &err) != 0);
    CHECK(cf_mk_shape_apply_dims(&s, "head_dim=64", &err) == 0 && cf_mk_shape_check(&s, &err) == 0);
    CHECK(cf_mk_shape_apply_dims(&s, "head_dim=63", &err) == 0 && cf_mk_shape_check(&s, &err) != 0);
    CHECK(cf_mk_shape_apply_dims(&s, "arch=phi3", &err) != 0 && strstr(err.msg, "gemma3"));
    CHECK(cf_mk_shape_apply_dims(&s, "head_dim=64,swa=512", &err) == 0 &&
          cf_mk_shape_check(&s, &err) != 0 && strstr(err.msg, "gemma3"));
    CHECK(cf_mk_shape_apply_dims(&s, "arch=gemma3", &err) == 0 && cf_mk_shape_check(&s, &err) == 0);
    /* 0 gives back the defaults: embd / heads, no sliding layers */
    CHECK(cf_mk_shape_named("gemma3-1b", &s) == 0 &&
          cf_mk_shape_apply_dims(&s, "head_dim=0,swa=0,heads=8", &err) == 0 &&
          cf_mk_shape_check(&s, &err) == 0 && cf_mk_head_dim(&s) == 144 && !s.n_swa);
    CHECK(cf_mk_shape_apply_dims(&s, "arch=qwen3", &err) == 0 && cf_mk_shape_check(&s, &err) == 0);
    /* gemma4's keys: its own; a shared layer needs a global last own layer
     * and a sliding one before it */
    cf_mk_shape g = s;
    CHECK(cf_mk_shape_apply_dims(&g, "ple=32", &err) == 0 && cf_mk_shape_check(&g, &err) != 0 &&
          strstr(err.msg, "gemma4"));
    CHECK(cf_mk_shape_named("gemma4-e2b", &g) == 0 && cf_mk_shape_apply_dims(&g, "kv_shared=21", &err) == 0 &&
          cf_mk_shape_check(&g, &err) != 0 && strstr(err.msg, "kv_shared"));
    CHECK(cf_mk_shape_apply_dims(&g, "kv_shared=0,swa=0", &err) == 0 && cf_mk_shape_check(&g, &err) != 0 &&
          strstr(err.msg, "swa_period"));
    CHECK(cf_mk_ftype_parse("q4_k_m") == CF_MK_Q4_K_M && cf_mk_ftype_parse("Q3_K") < 0);
    CHECK(cf_mk_ftype_parse("iq4_xs") == CF_MK_IQ4_XS && cf_mk_ftype_parse("mxfp4") == CF_MK_MXFP4);
    CHECK(cf_mk_ftype_parse("mxfp4_moe") == CF_MK_MXFP4_MOE);
    /* experts: qwen3moe and gpt-oss need them, llama may have them, qwen3 not */
    CHECK(cf_mk_shape_apply_dims(&s, "arch=qwen3moe", &err) == 0 && cf_mk_shape_check(&s, &err) != 0 &&
          strstr(err.msg, "experts"));
    CHECK(cf_mk_shape_apply_dims(&s, "experts=8,experts_used=2", &err) == 0 &&
          cf_mk_shape_check(&s, &err) == 0);
    CHECK(cf_mk_shape_apply_dims(&s, "experts_used=9", &err) == 0 && cf_mk_shape_check(&s, &err) != 0);
    CHECK(cf_mk_shape_apply_dims(&s, "arch=qwen3,experts_used=2", &err) == 0 &&
          cf_mk_shape_check(&s, &err) != 0 && strstr(err.msg, "qwen3"));
    CHECK(cf_mk_shape_apply_dims(&s, "arch=llama,head_dim=0,heads=8,swa=0", &err) == 0 &&
          cf_mk_shape_check(&s, &err) == 0);
    CHECK(cf_mk_shape_apply_dims(&s, "yarn_factor=32", &err) == 0 && cf_mk_shape_check(&s, &err) != 0 &&
          strstr(err.msg, "yarn_orig_ctx"));
    CHECK(cf_mk_shape_apply_dims(&s, "experts=1000", &err) != 0);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_plan_matches_file("models/quant-Q4_K_M.gguf", SHAPE_A, CF_MK_Q4_K_M);
    test_plan_matches_file("models/quant-IQ3_XXS.gguf", SHAPE_A, CF_MK_IQ3_XXS);
    test_plan_matches_file("models/quant-IQ3_S.gguf", SHAPE_A, CF_MK_IQ3_S);
    test_plan_matches_file("models/quant-IQ4_NL.gguf", SHAPE_A, CF_MK_IQ4_NL);
    test_plan_matches_file("models/quant-IQ4_XS.gguf", SHAPE_A, CF_MK_IQ4_XS);
    test_plan_matches_file("models/quant-MXFP4.gguf", SHAPE_A, CF_MK_MXFP4);
    test_plan_matches_file("models/quant-TQ2_0.gguf", SHAPE_A, CF_MK_TQ2_0);
    test_plan_matches_file("models/qwen3moe.Q8_0.gguf", SHAPE_QM, CF_MK_Q8_0);
    test_plan_matches_file("models/mixtral.Q8_0.gguf", SHAPE_MX, CF_MK_Q8_0);
    test_plan_matches_file("models/gpt-oss.MXFP4_MOE.gguf", SHAPE_GO, CF_MK_MXFP4_MOE);
    test_plan_matches_file("models/qwen35.Q8_0.gguf", SHAPE_Q35, CF_MK_Q8_0);
    test_plan_matches_file("models/gemma4.Q8_0.gguf", SHAPE_G4, CF_MK_Q8_0);
    test_plan_matches_file("models/mistral3.Q8_0.gguf", SHAPE_MS, CF_MK_Q8_0);
    test_plan_matches_file("models/granitehybridmoe.Q8_0.gguf", SHAPE_GH, CF_MK_Q8_0);
    test_plan_matches_file("models/deepseek2-lite.Q8_0.gguf", SHAPE_DSL, CF_MK_Q8_0);
    test_plan_matches_file("models/qwen3next.Q8_0.gguf", SHAPE_Q3N, CF_MK_Q8_0);
    test_builtin_shapes();
    test_every_type();
    test_iq_types();
    test_families();
    test_builtin_plans();
    test_moe_and_hybrid_plans();
    test_gemma4_plan();
    test_granite_tiny_plan();
    test_threads_and_seed();
    test_dims_errors();
    return test_summary("mkmodel");
}
