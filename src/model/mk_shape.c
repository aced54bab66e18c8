/* mkmodel's model shapes: the built-in ones (real models' hyper-parameters)
 * and the --dims KEY=VALUE syntax for custom ones. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confab/mkmodel.h"
#include "model_internal.h" /* CF_MAX_EXPERTS */

/* Qwen3's whole vocabulary travels in this fixture */
#define QWEN3_VOCAB "models/qwen3-bpe.Q8_0.gguf"

static const cf_mk_shape builtin[] = {
    /* HuggingFaceTB/SmolLM2-135M */
    {.name = "smollm2-135m", .arch = CF_ARCH_LLAMA, .n_embd = 576, .n_layer = 30, .n_head = 9,
     .n_head_kv = 3, .n_ff = 1536, .n_ctx = 8192, .rope_base = 100000.0f, .norm_eps = 1e-5f,
     .tied = true},
    /* meta-llama/Llama-3.2-1B (without its llama3 RoPE scaling) */
    {.name = "llama-1b", .arch = CF_ARCH_LLAMA, .n_embd = 2048, .n_layer = 16, .n_head = 32,
     .n_head_kv = 8, .n_ff = 8192, .n_ctx = 131072, .rope_base = 500000.0f, .norm_eps = 1e-5f,
     .tied = true},
    /* Qwen/Qwen2.5-0.5B */
    {.name = "qwen2.5-0.5b", .arch = CF_ARCH_QWEN2, .n_embd = 896, .n_layer = 24, .n_head = 14,
     .n_head_kv = 2, .n_ff = 4864, .n_ctx = 32768, .rope_base = 1000000.0f, .norm_eps = 1e-6f,
     .tied = true},
    /* Qwen/Qwen3-0.6B: q is 2048 wide, twice the embedding */
    {.name = "qwen3-0.6b", .arch = CF_ARCH_QWEN3, .n_embd = 1024, .n_layer = 28, .n_head = 16,
     .n_head_kv = 8, .head_dim = 128, .n_ff = 3072, .n_ctx = 40960, .rope_base = 1000000.0f,
     .norm_eps = 1e-6f, .tied = true, .vocab = QWEN3_VOCAB},
    /* Qwen/Qwen3-4B */
    {.name = "qwen3-4b", .arch = CF_ARCH_QWEN3, .n_embd = 2560, .n_layer = 36, .n_head = 32,
     .n_head_kv = 8, .head_dim = 128, .n_ff = 9728, .n_ctx = 40960, .rope_base = 1000000.0f,
     .norm_eps = 1e-6f, .tied = true, .vocab = QWEN3_VOCAB},
    /* google/gemma-3-1b-pt: five 512-token sliding layers to each global one */
    {.name = "gemma3-1b", .arch = CF_ARCH_GEMMA3, .n_embd = 1152, .n_layer = 26, .n_head = 4,
     .n_head_kv = 1, .head_dim = 256, .n_ff = 6912, .n_ctx = 32768, .rope_base = 1000000.0f,
     .norm_eps = 1e-6f, .tied = true, .n_swa = 512, .rope_base_swa = 10000.0f,
     .vocab = "vocab/ggml-vocab-gemma3.gguf"},
    /* HuggingFaceTB/SmolLM3-3B (the Llama 3 vocabulary) */
    {.name = "smollm3-3b", .arch = CF_ARCH_SMOLLM3, .n_embd = 2048, .n_layer = 36, .n_head = 16,
     .n_head_kv = 4, .n_ff = 11008, .n_ctx = 65536, .rope_base = 5000000.0f, .norm_eps = 1e-6f,
     .tied = true, .vocab = "vocab/ggml-vocab-llama-bpe.gguf"},
    /* mistralai/Mixtral-8x7B-v0.1 (the Llama 2 vocabulary it shares) */
    {.name = "mixtral-8x7b", .arch = CF_ARCH_LLAMA, .n_embd = 4096, .n_layer = 32, .n_head = 32,
     .n_head_kv = 8, .n_ff = 14336, .n_expert = 8, .n_expert_used = 2, .n_ctx = 32768,
     .rope_base = 1000000.0f, .norm_eps = 1e-5f},
    /* Qwen/Qwen3-30B-A3B with 24 of its 48 layers (Q4_K_M: about 9 GB);
     * feed_forward_length 6144 is its config's intermediate_size */
    {.name = "qwen3-30b-a3b-24l", .arch = CF_ARCH_QWEN3MOE, .n_embd = 2048, .n_layer = 24, .n_head = 32,
     .n_head_kv = 4, .head_dim = 128, .n_ff = 6144, .n_expert = 128, .n_expert_used = 8, .n_ff_exp = 768,
     .n_ctx = 40960, .rope_base = 1000000.0f, .norm_eps = 1e-6f, .vocab = QWEN3_VOCAB},
    /* openai/gpt-oss-20b; no o200k vocabulary is at hand: Qwen3's 151936
     * tokens stand in for its 201088 */
    {.name = "gpt-oss-20b", .arch = CF_ARCH_GPT_OSS, .n_embd = 2880, .n_layer = 24, .n_head = 64,
     .n_head_kv = 8, .head_dim = 64, .n_ff = 2880, .n_expert = 32, .n_expert_used = 4, .n_swa = 128,
     .n_ctx = 131072, .rope_base = 150000.0f, .yarn_factor = 32.0f, .yarn_orig_ctx = 4096,
     .norm_eps = 1e-5f, .vocab = QWEN3_VOCAB},
    /* Qwen/Qwen3.5-0.8B (its text model; Qwen3's vocabulary stands in for
     * its 248320 tokens): delta nets of 16 key and 16 value heads of 128 */
    {.name = "qwen3.5-0.8b", .arch = CF_ARCH_QWEN35, .n_embd = 1024, .n_layer = 24, .n_head = 8,
     .n_head_kv = 2, .head_dim = 256, .n_rot = 64, .n_ff = 3584, .n_ctx = 262144, .rope_base = 10000000.0f,
     .norm_eps = 1e-6f, .tied = true, .ssm_conv = 4, .ssm_state = 128, .ssm_k_heads = 16, .ssm_v_heads = 16,
     .vocab = QWEN3_VOCAB},
    /* Qwen/Qwen3.5-4B: 32 value heads over 16 key heads */
    {.name = "qwen3.5-4b", .arch = CF_ARCH_QWEN35, .n_embd = 2560, .n_layer = 32, .n_head = 16,
     .n_head_kv = 4, .head_dim = 256, .n_rot = 64, .n_ff = 9216, .n_ctx = 262144, .rope_base = 10000000.0f,
     .norm_eps = 1e-6f, .tied = true, .ssm_conv = 4, .ssm_state = 128, .ssm_k_heads = 16, .ssm_v_heads = 32,
     .vocab = QWEN3_VOCAB},
    /* ibm-granite/granite-4.0-h-tiny: Mamba2 mixers of 48 heads of 64 (128
     * states, one group) in all but layers 5, 15, 25 and 35, 64 experts of
     * 512 (6 a token) beside a shared one of 1024 in every layer; Qwen3's
     * vocabulary stands in for its 100352 tokens */
    {.name = "granite-4.0-h-tiny", .arch = CF_ARCH_GRANITEHYBRID, .n_embd = 1536, .n_layer = 40, .n_head = 12,
     .n_head_kv = 4, .n_ff = 1024, .n_expert = 64, .n_expert_used = 6, .n_ff_exp = 512, .n_ctx = 131072,
     .rope_base = 10000.0f, .norm_eps = 1e-5f, .ssm_conv = 4, .ssm_state = 128, .ssm_k_heads = 1,
     .ssm_v_heads = 48, .attn_period = 10, .tied = true, .vocab = QWEN3_VOCAB},
    /* google/gemma-4-E2B (its text model): four 512-token sliding layers
     * (heads of 256) to each global one (heads of 512, a quarter of them
     * rotated), the last 20 layers reading the first 15's caches with
     * FFNs twice as wide, 256-dim per-layer embeddings; Gemma 3's
     * vocabulary stands in for its 262144 tokens */
    {.name = "gemma4-e2b", .arch = CF_ARCH_GEMMA4, .n_embd = 1536, .n_layer = 35, .n_head = 8,
     .n_head_kv = 1, .head_dim = 512, .head_dim_swa = 256, .n_ff = 6144, .n_ctx = 131072,
     .rope_base = 1000000.0f, .norm_eps = 1e-6f, .tied = true, .n_swa = 512, .rope_base_swa = 10000.0f,
     .swa_period = 5, .n_kv_shared = 20, .ple_dim = 256, .vocab = "vocab/ggml-vocab-gemma3.gguf"},
    /* mistralai/Ministral-3-3B (its text model; the Llama 3 vocabulary
     * stands in for its 131072 tokens): YaRN x16 over 16384 positions,
     * the attention temperature past them */
    {.name = "ministral3-3b", .arch = CF_ARCH_MISTRAL3, .n_embd = 3072, .n_layer = 26, .n_head = 32,
     .n_head_kv = 8, .head_dim = 128, .n_ff = 9216, .n_ctx = 262144, .rope_base = 1000000.0f,
     .norm_eps = 1e-5f, .tied = true, .yarn_factor = 16.0f, .yarn_orig_ctx = 16384,
     .vocab = "vocab/ggml-vocab-llama-bpe.gguf"},
    /* zai-org/GLM-4.5-Air with 7 of its 46 layers (Q4_K_M: about 11 GB;
     * its MTP layer left out): half of each head rotated, the first FFN
     * dense, then 8 of 128 experts and a shared one; Qwen3's vocabulary
     * stands in for its 151552 tokens */
    {.name = "glm-4.5-air-7l", .arch = CF_ARCH_GLM4MOE, .n_embd = 4096, .n_layer = 7, .n_head = 96,
     .n_head_kv = 8, .head_dim = 128, .n_rot = 64, .n_ff = 10944, .n_expert = 128, .n_expert_used = 8,
     .n_ff_exp = 1408, .n_dense_lead = 1, .n_ctx = 131072, .rope_base = 1000000.0f, .norm_eps = 1e-5f,
     .vocab = QWEN3_VOCAB},
    /* deepseek-ai/DeepSeek-V2-Lite: latent attention of rank 512 (heads of
     * 128 + 64 rotated, values 128), no q LoRA; the first layer dense, then
     * 64 experts, 6 a token, beside 2 shared; DeepSeek-V3's vocabulary
     * (129280 tokens) stands in for its 102400 */
    {.name = "deepseek-v2-lite", .arch = CF_ARCH_DEEPSEEK2, .n_embd = 2048, .n_layer = 27, .n_head = 16,
     .n_head_kv = 1, .head_dim = 576, .n_rot = 64, .n_ff = 10944, .n_expert = 64, .n_expert_used = 6,
     .n_ff_exp = 1408, .n_ff_shexp = 2816, .kv_lora = 512, .mla_nope = 128, .mla_v = 128, .n_dense_lead = 1,
     .n_ctx = 163840, .rope_base = 10000.0f, .yarn_factor = 40.0f, .yarn_orig_ctx = 4096, .norm_eps = 1e-6f,
     .vocab = "vocab/ggml-vocab-deepseek-v3.gguf"},
    /* Qwen/Qwen3-Next-80B-A3B with 8 of its 48 layers (Q4_K_M: about 7 GB):
     * delta nets of 16 key and 32 value heads of 128, gated attention every
     * fourth layer (16 heads of 256 over 2, a quarter rotated), 512 experts
     * of 512, 10 a token, and a gated shared one */
    {.name = "qwen3-next-80b-a3b-8l", .arch = CF_ARCH_QWEN3NEXT, .n_embd = 2048, .n_layer = 8, .n_head = 16,
     .n_head_kv = 2, .head_dim = 256, .n_rot = 64, .n_ff = 5120, .n_expert = 512, .n_expert_used = 10,
     .n_ff_exp = 512, .n_ff_shexp = 512, .n_ctx = 262144, .rope_base = 10000000.0f, .norm_eps = 1e-6f,
     .ssm_conv = 4, .ssm_state = 128, .ssm_k_heads = 16, .ssm_v_heads = 32, .vocab = QWEN3_VOCAB},
};

int cf_mk_shape_named(const char *name, cf_mk_shape *out)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (!strcasecmp(name, builtin[i].name)) {
            *out = builtin[i];
            return 0;
        }
    return -1;
}

const char *cf_mk_shape_list(void)
{
    return "smollm2-135m, llama-1b, qwen2.5-0.5b, qwen3-0.6b, qwen3-4b, gemma3-1b, smollm3-3b, "
           "mixtral-8x7b, qwen3-30b-a3b-24l, gpt-oss-20b, qwen3.5-0.8b, qwen3.5-4b, gemma4-e2b, ministral3-3b, "
           "glm-4.5-air-7l, granite-4.0-h-tiny, deepseek-v2-lite, qwen3-next-80b-a3b-8l";
}

int cf_mk_head_dim(const cf_mk_shape *s)
{
    return s->head_dim ? s->head_dim : s->n_head ? s->n_embd / s->n_head : 0;
}

bool cf_mk_mamba2(const cf_mk_shape *s, int l)
{
    return s->arch == CF_ARCH_GRANITEHYBRID && l % s->attn_period != s->attn_period / 2;
}

bool cf_mk_sliding(const cf_mk_shape *s, int l)
{
    return s->swa_period && (l + 1) % s->swa_period;
}

bool cf_mk_kv_shared(const cf_mk_shape *s, int l)
{
    return l >= s->n_layer - s->n_kv_shared;
}

int cf_mk_layer_ff(const cf_mk_shape *s, int l)
{
    return cf_mk_kv_shared(s, l) ? 2 * s->n_ff : s->n_ff;
}

int cf_mk_layer_head_dim(const cf_mk_shape *s, int l)
{
    return cf_mk_sliding(s, l) && s->head_dim_swa ? s->head_dim_swa : cf_mk_head_dim(s);
}

static int parse_int(const char *key, const char *v, int lo, int hi, int *out, cf_err *err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return cf_fail(err, "--dims %s=%s: expected an integer in [%d, %d]", key, v, lo, hi);
    *out = (int)x;
    return 0;
}

static int parse_float(const char *key, const char *v, float *out, cf_err *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x <= 0 || x > 1e12)
        return cf_fail(err, "--dims %s=%s: expected a positive number", key, v);
    *out = (float)x;
    return 0;
}

static int parse_arch(const char *v, cf_arch *out, cf_err *err)
{
    for (int a = 0; a < CF_ARCH_COUNT; a++)
        if (cf_mk_arch_writes((cf_arch)a) && !strcmp(v, cf_arch_name((cf_arch)a))) {
            *out = (cf_arch)a;
            return 0;
        }
    return cf_fail(err, "--dims arch=%s: mkmodel writes %s", v, cf_mk_arch_list());
}

static int apply_one(cf_mk_shape *s, const char *key, const char *v, cf_err *err)
{
    static const struct {
        const char *key;
        size_t off;
        int lo, hi;
    } ints[] = {
        {"embd", offsetof(cf_mk_shape, n_embd), 32, 65536},
        {"layers", offsetof(cf_mk_shape, n_layer), 1, 1024},
        {"heads", offsetof(cf_mk_shape, n_head), 1, 1024},
        {"kv_heads", offsetof(cf_mk_shape, n_head_kv), 1, 1024},
        {"head_dim", offsetof(cf_mk_shape, head_dim), 0, 1024}, /* 0: embd / heads */
        {"ff", offsetof(cf_mk_shape, n_ff), 32, 1 << 20},
        {"ctx", offsetof(cf_mk_shape, n_ctx), 1, 1 << 24},
        {"swa", offsetof(cf_mk_shape, n_swa), 0, 1 << 24}, /* 0: no sliding layers */
        {"experts", offsetof(cf_mk_shape, n_expert), 0, CF_MAX_EXPERTS}, /* 0: dense */
        {"experts_used", offsetof(cf_mk_shape, n_expert_used), 1, CF_MAX_EXPERTS},
        {"expert_ff", offsetof(cf_mk_shape, n_ff_exp), 0, 1 << 20}, /* 0: ff */
        {"yarn_orig_ctx", offsetof(cf_mk_shape, yarn_orig_ctx), 1, 1 << 24},
        {"rot", offsetof(cf_mk_shape, n_rot), 0, 1024}, /* 0: head_dim */
        {"ssm_conv", offsetof(cf_mk_shape, ssm_conv), 2, 16},
        {"ssm_state", offsetof(cf_mk_shape, ssm_state), 32, 256},
        {"ssm_k_heads", offsetof(cf_mk_shape, ssm_k_heads), 1, 1024},
        {"ssm_v_heads", offsetof(cf_mk_shape, ssm_v_heads), 1, 1024},
        {"attn_period", offsetof(cf_mk_shape, attn_period), 1, 1024},
        {"head_dim_swa", offsetof(cf_mk_shape, head_dim_swa), 0, 1024}, /* 0: head_dim */
        {"swa_period", offsetof(cf_mk_shape, swa_period), 0, 1024},    /* 0: no sliding layers */
        {"kv_shared", offsetof(cf_mk_shape, n_kv_shared), 0, 1023},
        {"ple", offsetof(cf_mk_shape, ple_dim), 0, 65536},
        {"dense_layers", offsetof(cf_mk_shape, n_dense_lead), 0, 1024},
        {"kv_lora", offsetof(cf_mk_shape, kv_lora), 0, 65536},
        {"q_lora", offsetof(cf_mk_shape, q_lora), 0, 65536}, /* 0: none */
        {"nope", offsetof(cf_mk_shape, mla_nope), 0, 1024},
        {"v_mla", offsetof(cf_mk_shape, mla_v), 0, 1024},
        {"shexp_ff", offsetof(cf_mk_shape, n_ff_shexp), 0, 1 << 20}, /* 0: none */
    };
    static const struct {
        const char *key;
        size_t off;
    } floats[] = {
        {"rope_base", offsetof(cf_mk_shape, rope_base)},
        {"eps", offsetof(cf_mk_shape, norm_eps)},
        {"rope_base_swa", offsetof(cf_mk_shape, rope_base_swa)},
        {"yarn_factor", offsetof(cf_mk_shape, yarn_factor)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].key))
            return parse_int(key, v, ints[i].lo, ints[i].hi, (int *)((char *)s + ints[i].off), err);
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        if (!strcmp(key, floats[i].key))
            return parse_float(key, v, (float *)((char *)s + floats[i].off), err);
    if (!strcmp(key, "tied")) {
        int t = 0;
        if (parse_int(key, v, 0, 1, &t, err) != 0)
            return -1;
        s->tied = t;
        return 0;
    }
    if (!strcmp(key, "arch"))
        return parse_arch(v, &s->arch, err);
    if (!strcmp(key, "name")) {
        if (!*v || strlen(v) >= sizeof s->name)
            return cf_fail(err, "--dims name: 1 to %zu characters", sizeof s->name - 1);
        strcpy(s->name, v);
        return 0;
    }
    return cf_fail(err, "--dims: unknown key '%s' (keys: arch embd layers heads kv_heads head_dim "
                        "ff ctx rope_base eps tied swa rope_base_swa experts experts_used expert_ff "
                        "yarn_factor yarn_orig_ctx rot ssm_conv ssm_state ssm_k_heads ssm_v_heads "
                        "attn_period head_dim_swa swa_period kv_shared ple dense_layers kv_lora q_lora nope v_mla "
                        "shexp_ff name)",
                   key);
}

int cf_mk_shape_apply_dims(cf_mk_shape *s, const char *dims, cf_err *err)
{
    char buf[512];
    if (strlen(dims) >= sizeof buf)
        return cf_fail(err, "--dims: the spec is too long");
    strcpy(buf, dims);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return cf_fail(err, "--dims: '%s' is not KEY=VALUE", item);
        *eq = '\0';
        if (apply_one(s, item, eq + 1, err) != 0)
            return -1;
    }
    return 0;
}

/* qwen3moe, gpt-oss, glm4moe, qwen3next and deepseek2 always have experts,
 * llama (Mixtral) and granitehybrid may, the others never; qwen3next's and
 * deepseek2's shared experts have their own width; glm4moe and deepseek2
 * may have leading dense layers. */
static int check_experts(const cf_mk_shape *s, cf_err *err)
{
    const bool moe = s->arch == CF_ARCH_QWEN3MOE || s->arch == CF_ARCH_GPT_OSS || s->arch == CF_ARCH_GLM4MOE ||
                     s->arch == CF_ARCH_QWEN3NEXT || s->arch == CF_ARCH_DEEPSEEK2;
    const bool shared = s->arch == CF_ARCH_QWEN3NEXT || s->arch == CF_ARCH_DEEPSEEK2;
    if (s->n_dense_lead && ((s->arch != CF_ARCH_GLM4MOE && s->arch != CF_ARCH_DEEPSEEK2) ||
                            s->n_dense_lead >= s->n_layer))
        return cf_fail(err, "dense_layers %d: glm4moe's and deepseek2's leading dense layers, fewer than the layers",
                       s->n_dense_lead);
    if (s->n_ff_shexp && !shared)
        return cf_fail(err, "shexp_ff: %s has no shared expert (qwen3next and deepseek2 have)",
                       cf_arch_name(s->arch));
    if (s->n_ff_shexp % 32 || (s->arch == CF_ARCH_DEEPSEEK2 && s->n_ff_exp && s->n_ff_shexp % s->n_ff_exp))
        return cf_fail(err, "shexp_ff %d: a multiple of 32 (deepseek2: of expert_ff, one per shared expert)",
                       s->n_ff_shexp);
    if (moe && !s->n_expert)
        return cf_fail(err, "%s needs experts (experts=N, experts_used=K)", cf_arch_name(s->arch));
    if (s->n_expert && !moe && s->arch != CF_ARCH_LLAMA && s->arch != CF_ARCH_GRANITEHYBRID)
        return cf_fail(err, "experts: %s has none (llama, qwen3moe, gpt-oss, glm4moe and granitehybrid have; "
                            "experts=0 removes them)",
                       cf_arch_name(s->arch));
    if (s->n_expert_used < (s->n_expert > 0) || s->n_expert_used > s->n_expert)
        return cf_fail(err, "%d of %d experts per token: 1 to all of them (experts_used)", s->n_expert_used,
                       s->n_expert);
    if (s->n_ff_exp % 32)
        return cf_fail(err, "expert_ff %d is not a multiple of 32 (the quantization block)", s->n_ff_exp);
    return 0;
}

/* qwen35 needs its delta nets' four numbers (value heads tile over key
 * heads, state rows whole quantization blocks), granitehybrid its Mamba2
 * mixers' (heads split 2 n_embd channels, groups split the heads) and
 * which layers attend; no other family has them. */
static int check_delta_nets(const cf_mk_shape *s, cf_err *err)
{
    const bool any = s->ssm_conv || s->ssm_state || s->ssm_k_heads || s->ssm_v_heads;
    if (s->arch == CF_ARCH_GRANITEHYBRID) {
        if (!s->ssm_conv || !s->ssm_state || !s->ssm_k_heads || !s->ssm_v_heads || !s->attn_period)
            return cf_fail(err, "granitehybrid needs ssm_conv, ssm_state, ssm_k_heads, ssm_v_heads and "
                                "attn_period");
        if ((2 * s->n_embd) % s->ssm_v_heads || s->ssm_v_heads % s->ssm_k_heads)
            return cf_fail(err, "%d Mamba2 heads cannot split %d channels, or %d groups cannot split them",
                           s->ssm_v_heads, 2 * s->n_embd, s->ssm_k_heads);
        return 0;
    }
    if (s->attn_period)
        return cf_fail(err, "attn_period: %s has no Mamba2 layers (granitehybrid has)",
                       cf_arch_name(s->arch));
    if (s->arch != CF_ARCH_QWEN35 && s->arch != CF_ARCH_QWEN3NEXT)
        return any ? cf_fail(err, "ssm_*: %s has no delta nets (qwen35 and qwen3next have)", cf_arch_name(s->arch))
                   : 0;
    if (!s->ssm_conv || !s->ssm_state || !s->ssm_k_heads || !s->ssm_v_heads)
        return cf_fail(err, "%s needs ssm_conv, ssm_state, ssm_k_heads and ssm_v_heads", cf_arch_name(s->arch));
    if (s->ssm_v_heads % s->ssm_k_heads || s->ssm_state % 32)
        return cf_fail(err, "%d value heads cannot tile %d key heads, or state %d is not a multiple of 32",
                       s->ssm_v_heads, s->ssm_k_heads, s->ssm_state);
    return 0;
}

/* gemma4's own numbers, which no other family has; a shared layer reads
 * the last own layer of its kind (arch/gemma4.c): the last own layer must
 * be global and the one before it sliding. */
static int check_gemma4(const cf_mk_shape *s, cf_err *err)
{
    const bool any = s->head_dim_swa || s->swa_period || s->n_kv_shared || s->ple_dim;
    if (s->arch != CF_ARCH_GEMMA4)
        return any ? cf_fail(err, "head_dim_swa, swa_period, kv_shared, ple: %s has none (gemma4 has)",
                             cf_arch_name(s->arch))
                   : 0;
    if (!s->n_swa != !s->swa_period)
        return cf_fail(err, "gemma4's sliding layers need both swa (the window) and swa_period");
    if (s->head_dim_swa % 2 || (s->n_head * s->head_dim_swa) % 32 || s->head_dim_swa > cf_mk_head_dim(s))
        return cf_fail(err, "head_dim_swa %d: even, heads x it a multiple of 32, at most head_dim",
                       s->head_dim_swa);
    const int own = s->n_layer - s->n_kv_shared;
    if (s->n_kv_shared && (own < 2 || cf_mk_sliding(s, own - 1) || !cf_mk_sliding(s, own - 2)))
        return cf_fail(err, "kv_shared %d: the last layer with its own cache (%d) must be global and the one "
                            "before it sliding",
                       s->n_kv_shared, own - 1);
    return 0;
}

/* deepseek2's latent attention, which no other family has: a cache row
 * of kv_lora + rot (head_dim), whole quantization blocks in every row. */
static int check_mla(const cf_mk_shape *s, cf_err *err)
{
    const bool any = s->kv_lora || s->q_lora || s->mla_nope || s->mla_v;
    if (s->arch != CF_ARCH_DEEPSEEK2)
        return any ? cf_fail(err, "kv_lora, q_lora, nope, v_mla: %s has none (deepseek2 has)",
                             cf_arch_name(s->arch))
                   : 0;
    if (!s->kv_lora || !s->mla_nope || !s->mla_v || !s->n_rot || cf_mk_head_dim(s) != s->kv_lora + s->n_rot ||
        s->mla_v > s->kv_lora || s->kv_lora % 32 || s->q_lora % 32 || s->mla_nope % 32 || (s->n_head * s->mla_v) % 32)
        return cf_fail(err, "deepseek2 needs kv_lora, nope, v_mla (at most kv_lora), rot and head_dim = kv_lora + "
                            "rot, the ranks and nope multiples of 32");
    if (s->n_head_kv != 1)
        return cf_fail(err, "deepseek2's latent is one KV head (kv_heads=1)");
    return 0;
}

int cf_mk_shape_check(const cf_mk_shape *s, cf_err *err)
{
    if (!s->n_embd || !s->n_layer || !s->n_head || !s->n_ff)
        return cf_fail(err, "the shape needs at least embd, layers, heads and ff");
    if (!cf_mk_arch_writes(s->arch))
        return cf_fail(err, "mkmodel writes %s, not %s", cf_mk_arch_list(), cf_arch_name(s->arch));
    const int kv = s->n_head_kv ? s->n_head_kv : s->n_head, hd = cf_mk_head_dim(s);
    if (!s->head_dim && s->n_embd % s->n_head)
        return cf_fail(err, "embd %d is not a multiple of %d heads (or give head_dim)", s->n_embd,
                       s->n_head);
    if (hd % 2)
        return cf_fail(err, "head size %d is odd (RoPE rotates pairs)", hd);
    if (hd > 1024)
        return cf_fail(err, "head size %d is larger than 1024", hd);
    if (s->n_head % kv)
        return cf_fail(err, "%d heads cannot share %d KV heads", s->n_head, kv);
    /* attn_output's rows are n_head * head_dim long */
    if (s->n_embd % 32 || s->n_ff % 32 || (s->n_head * hd) % 32)
        return cf_fail(err, "embd, ff and heads x head size must be multiples of 32 (the "
                            "quantization block)");
    if (s->n_swa && s->arch != CF_ARCH_GEMMA3 && s->arch != CF_ARCH_GPT_OSS && s->arch != CF_ARCH_GEMMA4)
        return cf_fail(err, "swa: %s has no sliding layers (gemma3, gemma4 and gpt-oss have; swa=0 "
                            "removes them)",
                       cf_arch_name(s->arch));
    if (s->yarn_factor > 0 && !s->yarn_orig_ctx)
        return cf_fail(err, "yarn_factor needs yarn_orig_ctx, the context YaRN extends");
    if (s->n_rot % 2 || s->n_rot > hd)
        return cf_fail(err, "rot %d: RoPE rotates an even number of dims, at most the head size %d", s->n_rot,
                       hd);
    if (check_delta_nets(s, err) != 0 || check_gemma4(s, err) != 0 || check_mla(s, err) != 0)
        return -1;
    return check_experts(s, err);
}
