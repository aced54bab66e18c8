/* mkmodel's tensor plan: which tensors a shape has, in file order, and the
 * type llama-quantize (b4748, llama_tensor_get_type; IQ2_M and the IQ3
 * file types as its src/llama-quant.cpp of 2026, without an importance
 * matrix) would give each for a file type, with or without --pure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confab/mkmodel.h"

static const struct {
    const char *name;
    cf_type base; /* the type of most matrices */
    bool pure;    /* every matrix, as llama-quantize --pure */
} ftypes[CF_MK_FTYPE_COUNT] = {
    [CF_MK_F32] = {"F32", CF_TYPE_F32},      [CF_MK_F16] = {"F16", CF_TYPE_F16},
    [CF_MK_BF16] = {"BF16", CF_TYPE_BF16},   [CF_MK_Q8_0] = {"Q8_0", CF_TYPE_Q8_0},
    [CF_MK_Q4_0] = {"Q4_0", CF_TYPE_Q4_0},   [CF_MK_Q4_1] = {"Q4_1", CF_TYPE_Q4_1},
    [CF_MK_Q5_0] = {"Q5_0", CF_TYPE_Q5_0},   [CF_MK_Q5_1] = {"Q5_1", CF_TYPE_Q5_1},
    [CF_MK_Q6_K] = {"Q6_K", CF_TYPE_Q6_K},   [CF_MK_Q4_K_M] = {"Q4_K_M", CF_TYPE_Q4_K},
    [CF_MK_IQ2_M] = {"IQ2_M", CF_TYPE_IQ2_S}, [CF_MK_IQ2_XXS] = {"IQ2_XXS", CF_TYPE_IQ2_XXS},
    [CF_MK_IQ2_XS] = {"IQ2_XS", CF_TYPE_IQ2_XS}, [CF_MK_IQ2_S] = {"IQ2_S", CF_TYPE_IQ2_XS},
    [CF_MK_IQ1_S] = {"IQ1_S", CF_TYPE_IQ1_S}, [CF_MK_IQ1_M] = {"IQ1_M", CF_TYPE_IQ1_M},
    [CF_MK_IQ3_XXS] = {"IQ3_XXS", CF_TYPE_IQ3_XXS, true},
    [CF_MK_IQ3_S] = {"IQ3_S", CF_TYPE_IQ3_S, true},
    [CF_MK_IQ3_M] = {"IQ3_M", CF_TYPE_IQ3_S},
    [CF_MK_IQ3_XS] = {"IQ3_XS", CF_TYPE_IQ3_S},
    [CF_MK_IQ4_NL] = {"IQ4_NL", CF_TYPE_IQ4_NL},
    [CF_MK_IQ4_XS] = {"IQ4_XS", CF_TYPE_IQ4_XS},
    [CF_MK_MXFP4] = {"MXFP4", CF_TYPE_MXFP4, true},
    [CF_MK_TQ2_0] = {"TQ2_0", CF_TYPE_TQ2_0, true},
    [CF_MK_MXFP4_MOE] = {"MXFP4_MOE", CF_TYPE_MXFP4},
    [CF_MK_Q2_K] = {"Q2_K", CF_TYPE_Q2_K},     [CF_MK_Q3_K_S] = {"Q3_K_S", CF_TYPE_Q3_K},
    [CF_MK_Q3_K_M] = {"Q3_K_M", CF_TYPE_Q3_K}, [CF_MK_Q3_K_L] = {"Q3_K_L", CF_TYPE_Q3_K},
    [CF_MK_Q4_K_S] = {"Q4_K_S", CF_TYPE_Q4_K}, [CF_MK_Q5_K_S] = {"Q5_K_S", CF_TYPE_Q5_K},
    [CF_MK_Q5_K_M] = {"Q5_K_M", CF_TYPE_Q5_K},
};

int cf_mk_ftype_parse(const char *name)
{
    for (int i = 0; i < CF_MK_FTYPE_COUNT; i++)
        if (!strcasecmp(name, ftypes[i].name))
            return i;
    return -1;
}

const char *cf_mk_ftype_name(cf_mk_ftype ft)
{
    return (unsigned)ft < CF_MK_FTYPE_COUNT ? ftypes[ft].name : "?";
}

const char *cf_mk_ftype_list(void)
{
    return "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, "
           "Q5_K_S, Q5_K_M, Q6_K, IQ2_M, IQ3_XXS, IQ3_S, IQ3_M, IQ3_XS, IQ4_NL, IQ4_XS, MXFP4, MXFP4_MOE, TQ2_0";
}

typedef enum kind {
    EMBD,
    OUTPUT,
    ATTN_Q,
    ATTN_K,
    ATTN_V,
    ATTN_OUT,
    FFN_GATE,
    FFN_UP,
    FFN_DOWN,
    ROUTER, /* ffn_gate_inp: llama-quantize never quantizes it */
    ATTN_QKV, /* qwen35's delta-net input */
    PLAIN,    /* a matrix no rule of the mixtures names: the base type */
    CONV,     /* ssm_conv1d: llama-quantize never quantizes it */
    DECAY,    /* ssm_a, -exp(A_log) */
    DT_BIAS,  /* ssm_dt.bias: softplus of it is the delta net's time step */
    PLE_PROJ, /* gemma4's per_layer_model_proj: llama-quantize keeps it F32 */
    NORM,
    BIAS,
    SINKS,
} kind;

/* llama.cpp's layers that get more bits in the _M mixtures: the first and
 * last eighth, and every third one between. */
static bool use_more_bits(int layer, int n_layer)
{
    return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

/* A row length the type's blocks do not divide falls back to a type whose
 * blocks do, then to F16. */
static cf_type fall_back(cf_type t, int64_t ne0)
{
    if (ne0 % cf_type_get(t)->blck_size == 0)
        return t;
    switch (t) {
    case CF_TYPE_Q4_K: t = CF_TYPE_Q5_0; break;
    case CF_TYPE_Q5_K: t = CF_TYPE_Q5_1; break;
    case CF_TYPE_Q6_K: t = CF_TYPE_Q8_0; break;
    case CF_TYPE_IQ2_XXS:
    case CF_TYPE_IQ2_XS:
    case CF_TYPE_IQ2_S:
    case CF_TYPE_IQ1_S:
    case CF_TYPE_IQ1_M:
    case CF_TYPE_IQ3_XXS:
    case CF_TYPE_IQ3_S:
    case CF_TYPE_Q2_K:
    case CF_TYPE_Q3_K:
    case CF_TYPE_IQ4_XS: t = CF_TYPE_IQ4_NL; break;
    case CF_TYPE_TQ2_0: t = CF_TYPE_Q4_0; break;
    default: break;
    }
    return ne0 % cf_type_get(t)->blck_size == 0 ? t : CF_TYPE_F16;
}

/* The mixtures' choices for a llama-shaped model (no experts): the first
 * row that applies to a matrix gives its type (OUTPUT: the output matrix,
 * token_embd when tied, whose rows are whole 256-blocks). */
typedef enum when { ALL, FIRST_EIGHTH, MIDDLE, GQA4, FIRST_SIXTEENTH, NOT_GQA4, MORE_BITS } when;
static const struct {
    cf_mk_ftype ft;
    kind k;
    when w;
    cf_type t;
} mixture[] = {
    {CF_MK_IQ2_M, OUTPUT, ALL, CF_TYPE_Q5_K},
    {CF_MK_IQ2_M, EMBD, ALL, CF_TYPE_IQ3_S},
    {CF_MK_IQ2_M, ATTN_V, GQA4, CF_TYPE_Q4_K},
    {CF_MK_IQ2_M, ATTN_V, ALL, CF_TYPE_IQ3_S},
    {CF_MK_IQ2_M, FFN_DOWN, FIRST_EIGHTH, CF_TYPE_IQ3_S},
    {CF_MK_IQ3_M, ATTN_V, ALL, CF_TYPE_Q4_K},
    {CF_MK_IQ3_M, ATTN_OUT, ALL, CF_TYPE_Q4_K},
    {CF_MK_IQ3_M, FFN_DOWN, FIRST_EIGHTH, CF_TYPE_Q4_K},
    {CF_MK_IQ3_XS, ATTN_V, GQA4, CF_TYPE_Q4_K},
    {CF_MK_IQ3_XS, ATTN_Q, ALL, CF_TYPE_IQ3_XXS},
    {CF_MK_IQ3_XS, ATTN_K, ALL, CF_TYPE_IQ3_XXS},
    {CF_MK_IQ3_XS, FFN_GATE, MIDDLE, CF_TYPE_IQ3_XXS},
    {CF_MK_IQ3_XS, FFN_UP, MIDDLE, CF_TYPE_IQ3_XXS},
    {CF_MK_Q2_K, ATTN_V, GQA4, CF_TYPE_Q4_K},
    {CF_MK_Q2_K, ATTN_V, NOT_GQA4, CF_TYPE_Q3_K},
    {CF_MK_Q2_K, FFN_DOWN, ALL, CF_TYPE_Q3_K},
    {CF_MK_Q2_K, ATTN_OUT, ALL, CF_TYPE_Q3_K},
    {CF_MK_Q3_K_M, FFN_DOWN, FIRST_SIXTEENTH, CF_TYPE_Q5_K},
    {CF_MK_Q3_K_M, FFN_DOWN, ALL, CF_TYPE_Q4_K},
    {CF_MK_Q3_K_M, ATTN_OUT, ALL, CF_TYPE_Q4_K},
    {CF_MK_Q3_K_M, ATTN_QKV, ALL, CF_TYPE_Q4_K},
    {CF_MK_Q3_K_L, ATTN_V, ALL, CF_TYPE_Q5_K},
    {CF_MK_Q3_K_L, FFN_DOWN, ALL, CF_TYPE_Q5_K},
    {CF_MK_Q3_K_L, ATTN_OUT, ALL, CF_TYPE_Q5_K},
    {CF_MK_Q3_K_L, ATTN_QKV, ALL, CF_TYPE_Q4_K},
    {CF_MK_Q4_K_S, FFN_DOWN, FIRST_EIGHTH, CF_TYPE_Q5_K},
    {CF_MK_Q4_K_M, FFN_DOWN, MORE_BITS, CF_TYPE_Q6_K},
    {CF_MK_Q4_K_M, ATTN_QKV, ALL, CF_TYPE_Q5_K},
    {CF_MK_Q5_K_M, FFN_DOWN, MORE_BITS, CF_TYPE_Q6_K},
    {CF_MK_Q5_K_M, ATTN_QKV, ALL, CF_TYPE_Q6_K},
    /* without an importance matrix */
    {CF_MK_IQ4_NL, ATTN_V, GQA4, CF_TYPE_Q5_K},
    {CF_MK_IQ4_NL, FFN_DOWN, FIRST_EIGHTH, CF_TYPE_Q5_K},
    {CF_MK_IQ4_XS, ATTN_V, GQA4, CF_TYPE_Q5_K},
    {CF_MK_IQ4_XS, FFN_DOWN, FIRST_EIGHTH, CF_TYPE_Q5_K},
};

static cf_type mixed(cf_mk_ftype ft, kind k, int layer, const cf_mk_shape *s, cf_type t)
{
    const int n = s->n_layer, gqa = s->n_head / (s->n_head_kv ? s->n_head_kv : s->n_head);
    for (size_t i = 0; i < sizeof mixture / sizeof mixture[0]; i++) {
        when w = mixture[i].w;
        bool applies = w == ALL || (w == FIRST_EIGHTH && layer < n / 8) || (w == FIRST_SIXTEENTH && layer < n / 16) ||
                       (w == MIDDLE && layer >= n / 8 && layer < 7 * n / 8) || (w == GQA4 && gqa >= 4) ||
                       (w == NOT_GQA4 && gqa < 4) || (w == MORE_BITS && use_more_bits(layer, n));
        if (mixture[i].ft == ft && mixture[i].k == k && applies)
            return mixture[i].t;
    }
    return t;
}

/* Mixtral's: with exactly 8 experts llama-quantize gives the attention
 * more bits, the experts being most of the file (attn_output Q5_K in the
 * mixtures its list names: not Q3_K_L, Q5_K_S or Q5_K_M). */
static cf_type eight_experts(cf_mk_ftype ft, kind k, cf_type t)
{
    if (k == ATTN_K || k == ATTN_V)
        return CF_TYPE_Q8_0;
    if (k == ATTN_OUT && (ft == CF_MK_Q4_K_M || ft == CF_MK_IQ3_M || ft == CF_MK_IQ3_XS || ft == CF_MK_Q2_K ||
                          ft == CF_MK_Q3_K_S || ft == CF_MK_Q3_K_M || ft == CF_MK_Q4_K_S))
        return CF_TYPE_Q5_K;
    return t;
}

/* attn_v's index among the layers that have one, and their number:
 * qwen35's and qwen3next's attention layers, gemma4's with a cache of
 * their own (the first ones) */
static int attn_v_index(const cf_mk_shape *s, int layer, int *n)
{
    if (s->arch == CF_ARCH_QWEN35 || s->arch == CF_ARCH_QWEN3NEXT) {
        *n = s->n_layer / CF_MK_ATTN_INTERVAL;
        return layer / CF_MK_ATTN_INTERVAL;
    }
    *n = s->arch == CF_ARCH_GEMMA4 ? s->n_layer - s->n_kv_shared : s->n_layer;
    return layer;
}

/* The K-quant mixtures' attn_v, which count the layers that have one
 * (t: what the table gave) */
static cf_type kquant_attn_v(const cf_mk_shape *s, cf_mk_ftype ft, int layer, cf_type t)
{
    int n;
    const int i = attn_v_index(s, layer, &n);
    if (ft == CF_MK_Q3_K_M)
        return i < 2 ? CF_TYPE_Q5_K : CF_TYPE_Q4_K;
    if ((ft == CF_MK_Q4_K_M || ft == CF_MK_Q5_K_M) && use_more_bits(i, n))
        return CF_TYPE_Q6_K;
    if (ft == CF_MK_Q4_K_S && i < 4)
        return CF_TYPE_Q5_K;
    return t;
}

/* experts: a 3-D expert tensor (MXFP4_MOE's MXFP4 ones) */
static cf_type recipe(const cf_mk_shape *s, cf_mk_ftype ft, bool pure, kind k, int layer, int64_t ne0,
                      bool experts)
{
    if (k == NORM || k == BIAS || k == ROUTER || k == SINKS || k == CONV || k == DECAY || k == DT_BIAS ||
        k == PLE_PROJ)
        return CF_TYPE_F32;
    cf_type t = ftypes[ft].base;
    if (t == CF_TYPE_F32 || t == CF_TYPE_F16 || t == CF_TYPE_BF16)
        return t;
    if (pure || ftypes[ft].pure)
        return fall_back(t, ne0);
    if (ft == CF_MK_MXFP4_MOE)
        return fall_back(experts ? CF_TYPE_MXFP4 : CF_TYPE_Q8_0, ne0);
    if (k == OUTPUT || (s->tied && k == EMBD))
        t = ne0 % 256 ? CF_TYPE_Q8_0 : t == CF_TYPE_Q8_0 ? t : mixed(ft, OUTPUT, layer, s, CF_TYPE_Q6_K);
    else if (k == ATTN_V)
        t = kquant_attn_v(s, ft, layer, mixed(ft, k, layer, s, t));
    else
        t = mixed(ft, k, layer, s, t);
    if (s->n_expert == 8)
        t = eight_experts(ft, k, t);
    return fall_back(t, ne0);
}

/* What each family adds to (or takes from) the llama block: the tensors its
 * file in arch/ binds (the experts come with shape->n_expert). */
static const struct family {
    bool writes;
    bool qkv_bias;
    bool no_pre_norms; /* no attn_norm / ffn_norm */
    bool post_norms;   /* post_attention_norm, post_ffw_norm */
    cf_qk_norm qk;     /* attn_q_norm / attn_k_norm: head_dim, or the whole q and k */
    bool oss;          /* gpt-oss: biases everywhere, sinks, post_attention_norm before the FFN */
    bool hybrid;       /* qwen35: delta nets and gated attention, post_attention_norm before the FFN */
    bool gemma4;       /* two kinds of layer, shared caches, per-layer embeddings */
    bool glm;          /* glm4moe: post_attention_norm before the FFN, a choice bias, a shared expert */
    bool mamba2;       /* granitehybrid: Mamba2 mixers in place of attention, a shared expert */
    bool mla;          /* deepseek2: latent attention, dense then MoE layers, shared experts */
} families[CF_ARCH_COUNT] = {
    [CF_ARCH_LLAMA] = {.writes = true},
    [CF_ARCH_QWEN2] = {.writes = true, .qkv_bias = true},
    [CF_ARCH_QWEN3] = {.writes = true, .qk = CF_QK_NORM_HEAD},
    [CF_ARCH_GEMMA3] = {.writes = true, .post_norms = true, .qk = CF_QK_NORM_HEAD},
    [CF_ARCH_SMOLLM3] = {.writes = true},
    [CF_ARCH_OLMO2] = {.writes = true, .no_pre_norms = true, .post_norms = true,
                       .qk = CF_QK_NORM_FULL},
    [CF_ARCH_GRANITE] = {.writes = true},
    [CF_ARCH_QWEN3MOE] = {.writes = true, .qk = CF_QK_NORM_HEAD},
    [CF_ARCH_GPT_OSS] = {.writes = true, .oss = true},
    [CF_ARCH_QWEN35] = {.writes = true, .hybrid = true},
    [CF_ARCH_GEMMA4] = {.writes = true, .gemma4 = true},
    [CF_ARCH_MISTRAL3] = {.writes = true},
    [CF_ARCH_GLM4MOE] = {.writes = true, .qkv_bias = true, .glm = true},
    [CF_ARCH_GRANITEHYBRID] = {.writes = true, .mamba2 = true},
    [CF_ARCH_QWEN3NEXT] = {.writes = true, .hybrid = true},
    [CF_ARCH_DEEPSEEK2] = {.writes = true, .mla = true},
};

/* the most tensors a layer has (gpt-oss), and outside the layers (gemma4) */
#define MAX_LAYER_TENSORS 19
#define MAX_GLOBAL_TENSORS 7

bool cf_mk_arch_writes(cf_arch a)
{
    return (unsigned)a < CF_ARCH_COUNT && families[a].writes;
}

const char *cf_mk_arch_list(void)
{
    return "llama, qwen2, qwen3, gemma3, smollm3, olmo2, granite, qwen3moe, gpt-oss, qwen35, gemma4, mistral3, "
           "glm4moe, granitehybrid, qwen3next, deepseek2";
}

typedef struct planner {
    const cf_mk_shape *s;
    cf_mk_ftype ft;
    bool pure;
    cf_mk_tensor *t;
    int n;
} planner;

/* A tensor of ne0 x ne1 x ne2; ne2 > 1: ne2 experts' matrices. */
static void add3(planner *p, kind k, int layer, const char *what, int64_t ne0, int64_t ne1, int64_t ne2)
{
    cf_mk_tensor *t = &p->t[p->n++];
    memset(t, 0, sizeof *t);
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "blk.%d.%s", layer, what);
    else
        snprintf(t->name, sizeof t->name, "%s", what);
    t->n_dims = ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
    t->type = recipe(p->s, p->ft, p->pure, k, layer, ne0, ne2 > 1);
    t->init_mean = k == NORM ? 1.0f : k == DECAY ? logf(3.0f) : k == DT_BIAS ? -3.5f : 0.0f;
    t->init_std = k == NORM || k == BIAS      ? 0.1f
                  : k == SINKS                ? 1.5f
                  : k == DECAY || k == DT_BIAS ? 0.5f
                  : k == ROUTER               ? 3.0f / sqrtf((float)ne0)
                                              : 1.0f / sqrtf((float)ne0);
    t->init_neg_exp = k == DECAY;
}

static void add(planner *p, kind k, int layer, const char *what, int64_t ne0, int64_t ne1)
{
    add3(p, k, layer, what, ne0, ne1, 1);
}

/* The last tensor added gets its own distribution. */
static void init_last(planner *p, float mean, float sd)
{
    p->t[p->n - 1].init_mean = mean;
    p->t[p->n - 1].init_std = sd;
}

/* One line on the first tensor whose type confab cannot write. */
static int check_writable(const cf_mk_tensor *t, int n, cf_mk_ftype ft, cf_err *err)
{
    float zero[256] = {0};
    unsigned char block[1024];
    for (int i = 0; i < n; i++) {
        const cf_type ty = t[i].type;
        if (cf_type_needs_imatrix(ty))
            return cf_fail(err, "%s needs an importance matrix (%s tensors), which confab does not compute",
                           cf_mk_ftype_name(ft), cf_type_name(ty));
        if (cf_quantize_row(ty, zero, block, cf_type_get(ty)->blck_size) != 0)
            return cf_fail(err, "%s puts %s in %s, which confab cannot quantize", cf_mk_ftype_name(ft), t[i].name,
                           cf_type_name(ty));
    }
    return 0;
}

/* The router and the experts, with gpt-oss's biases; ffn_down_exps is
 * planned as the layer's ffn_down. */
static void add_experts(planner *p, int l, bool biases)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, F = s->n_ff_exp ? s->n_ff_exp : s->n_ff, X = s->n_expert;
    add(p, ROUTER, l, "ffn_gate_inp.weight", E, X);
    if (biases)
        add(p, BIAS, l, "ffn_gate_inp.bias", X, 1);
    add3(p, FFN_GATE, l, "ffn_gate_exps.weight", E, F, X);
    if (biases)
        add(p, BIAS, l, "ffn_gate_exps.bias", F, X);
    add3(p, FFN_UP, l, "ffn_up_exps.weight", E, F, X);
    if (biases)
        add(p, BIAS, l, "ffn_up_exps.bias", F, X);
    add3(p, FFN_DOWN, l, "ffn_down_exps.weight", F, E, X);
    if (biases)
        add(p, BIAS, l, "ffn_down_exps.bias", E, X);
}

/* glm4moe's beside its experts: the bias that chooses them, and the
 * shared expert (one expert's width) */
static void add_glm_extras(planner *p, int l)
{
    const int64_t E = p->s->n_embd, F = p->s->n_ff_exp ? p->s->n_ff_exp : p->s->n_ff;
    add(p, BIAS, l, "exp_probs_b.bias", p->s->n_expert, 1);
    add(p, FFN_GATE, l, "ffn_gate_shexp.weight", E, F);
    add(p, FFN_UP, l, "ffn_up_shexp.weight", E, F);
    add(p, FFN_DOWN, l, "ffn_down_shexp.weight", F, E);
}

/* gpt-oss's block, in llama.cpp's order */
static void add_oss_layer(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, hd = cf_mk_head_dim(s);
    const int64_t Q = s->n_head * hd, KV = (s->n_head_kv ? s->n_head_kv : s->n_head) * hd;
    add(p, NORM, l, "attn_norm.weight", E, 1);
    add(p, ATTN_Q, l, "attn_q.weight", E, Q);
    add(p, BIAS, l, "attn_q.bias", Q, 1);
    add(p, ATTN_K, l, "attn_k.weight", E, KV);
    add(p, BIAS, l, "attn_k.bias", KV, 1);
    add(p, ATTN_V, l, "attn_v.weight", E, KV);
    add(p, BIAS, l, "attn_v.bias", KV, 1);
    add(p, ATTN_OUT, l, "attn_output.weight", Q, E);
    add(p, BIAS, l, "attn_output.bias", E, 1);
    add(p, SINKS, l, "attn_sinks.weight", s->n_head, 1);
    add(p, NORM, l, "post_attention_norm.weight", E, 1);
    add_experts(p, l, true);
}

/* qwen35's gated delta net, in llama.cpp's order */
static void add_delta_net(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, D = s->ssm_state, Hv = s->ssm_v_heads;
    const int64_t conv_dim = 2 * s->ssm_k_heads * D + Hv * D;
    add(p, ATTN_QKV, l, "attn_qkv.weight", E, conv_dim);
    add(p, PLAIN, l, "attn_gate.weight", E, Hv * D);
    add(p, CONV, l, "ssm_conv1d.weight", s->ssm_conv, conv_dim);
    add(p, DT_BIAS, l, "ssm_dt.bias", Hv, 1);
    add(p, DECAY, l, "ssm_a", Hv, 1);
    if (s->arch == CF_ARCH_QWEN3NEXT) {
        add(p, PLAIN, l, "ssm_ba.weight", E, 2 * Hv);
    } else {
        add(p, PLAIN, l, "ssm_beta.weight", E, Hv);
        add(p, PLAIN, l, "ssm_alpha.weight", E, Hv);
    }
    add(p, NORM, l, "ssm_norm.weight", D, 1);
    add(p, PLAIN, l, "ssm_out.weight", Hv * D, E);
}

/* qwen35's gated attention: attn_q gives each head its query and its
 * output gate */
static void add_gated_attention(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, hd = cf_mk_head_dim(s);
    const int64_t Q = s->n_head * hd, KV = (s->n_head_kv ? s->n_head_kv : s->n_head) * hd;
    add(p, ATTN_Q, l, "attn_q.weight", E, 2 * Q);
    add(p, ATTN_K, l, "attn_k.weight", E, KV);
    add(p, ATTN_V, l, "attn_v.weight", E, KV);
    add(p, ATTN_OUT, l, "attn_output.weight", Q, E);
    add(p, NORM, l, "attn_q_norm.weight", hd, 1);
    add(p, NORM, l, "attn_k_norm.weight", hd, 1);
}

/* The shared expert(s) beside the routed ones, gated per token by
 * ffn_gate_inp_shexp when gated (qwen3next) */
static void add_shared_expert(planner *p, int l, bool gated)
{
    const int64_t E = p->s->n_embd, F = p->s->n_ff_shexp;
    if (gated)
        add(p, ROUTER, l, "ffn_gate_inp_shexp.weight", E, 1);
    add(p, FFN_GATE, l, "ffn_gate_shexp.weight", E, F);
    add(p, FFN_UP, l, "ffn_up_shexp.weight", E, F);
    add(p, FFN_DOWN, l, "ffn_down_shexp.weight", F, E);
}

static void add_hybrid_layer(planner *p, int l)
{
    const int64_t E = p->s->n_embd, F = p->s->n_ff;
    add(p, NORM, l, "attn_norm.weight", E, 1);
    if ((l + 1) % CF_MK_ATTN_INTERVAL)
        add_delta_net(p, l);
    else
        add_gated_attention(p, l);
    add(p, NORM, l, "post_attention_norm.weight", E, 1);
    if (p->s->n_expert) {
        add_experts(p, l, false);
        add_shared_expert(p, l, true);
        return;
    }
    add(p, FFN_GATE, l, "ffn_gate.weight", E, F);
    add(p, FFN_UP, l, "ffn_up.weight", E, F);
    add(p, FFN_DOWN, l, "ffn_down.weight", F, E);
}

/* granitehybrid's Mamba2 mixer (2 n_embd channels), in llama.cpp's order */
static void add_mamba2(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, D = 2 * E, H = s->ssm_v_heads, G = s->ssm_k_heads;
    const int64_t conv_dim = D + 2 * G * s->ssm_state;
    add(p, PLAIN, l, "ssm_in.weight", E, 2 * D + 2 * G * s->ssm_state + H);
    add(p, CONV, l, "ssm_conv1d.weight", s->ssm_conv, conv_dim);
    add(p, BIAS, l, "ssm_conv1d.bias", conv_dim, 1);
    add(p, DT_BIAS, l, "ssm_dt.bias", H, 1);
    add(p, DECAY, l, "ssm_a", 1, H);
    add(p, NORM, l, "ssm_d", 1, H);
    add(p, NORM, l, "ssm_norm.weight", D / G, G);
    add(p, PLAIN, l, "ssm_out.weight", D, E);
}

/* deepseek2's block: latent attention (a q LoRA or not; attn_k_b and
 * attn_v_b, one slice per head), then a dense FFN or the experts with the
 * shared ones */
static void add_mla_layer(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, H = s->n_head, R = s->kv_lora, Q = H * (s->mla_nope + s->n_rot);
    add(p, NORM, l, "attn_norm.weight", E, 1);
    if (s->q_lora) {
        add(p, ATTN_Q, l, "attn_q_a.weight", E, s->q_lora);
        add(p, NORM, l, "attn_q_a_norm.weight", s->q_lora, 1);
        add(p, ATTN_Q, l, "attn_q_b.weight", s->q_lora, Q);
    } else {
        add(p, ATTN_Q, l, "attn_q.weight", E, Q);
    }
    add(p, PLAIN, l, "attn_kv_a_mqa.weight", E, R + s->n_rot);
    add(p, NORM, l, "attn_kv_a_norm.weight", R, 1);
    add3(p, PLAIN, l, "attn_k_b.weight", s->mla_nope, R, H);
    add3(p, PLAIN, l, "attn_v_b.weight", R, s->mla_v, H);
    add(p, ATTN_OUT, l, "attn_output.weight", H * s->mla_v, E);
    add(p, NORM, l, "ffn_norm.weight", E, 1);
    if (l >= s->n_dense_lead) {
        add_experts(p, l, false);
        add_shared_expert(p, l, false);
        return;
    }
    add(p, FFN_GATE, l, "ffn_gate.weight", E, s->n_ff);
    add(p, FFN_UP, l, "ffn_up.weight", E, s->n_ff);
    add(p, FFN_DOWN, l, "ffn_down.weight", s->n_ff, E);
}

/* gemma4's block, in llama.cpp's order: the shared layers have no attn_k,
 * attn_v or attn_k_norm; the norms' values as mkmodel.h says */
static void add_gemma4_layer(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const int64_t E = s->n_embd, F = cf_mk_layer_ff(s, l), hd = cf_mk_layer_head_dim(s, l);
    const int64_t Q = s->n_head * hd, KV = (s->n_head_kv ? s->n_head_kv : s->n_head) * hd;
    const bool own = !cf_mk_kv_shared(s, l);
    add(p, NORM, l, "attn_norm.weight", E, 1);
    add(p, ATTN_Q, l, "attn_q.weight", E, Q);
    if (own) {
        add(p, ATTN_K, l, "attn_k.weight", E, KV);
        add(p, ATTN_V, l, "attn_v.weight", E, KV);
    }
    add(p, NORM, l, "attn_q_norm.weight", hd, 1);
    init_last(p, 0.7f, 0.1f);
    if (own) {
        add(p, NORM, l, "attn_k_norm.weight", hd, 1);
        init_last(p, 0.7f, 0.1f);
    }
    add(p, ATTN_OUT, l, "attn_output.weight", Q, E);
    add(p, NORM, l, "post_attention_norm.weight", E, 1);
    init_last(p, 4.0f, 0.1f);
    add(p, NORM, l, "ffn_norm.weight", E, 1);
    add(p, FFN_GATE, l, "ffn_gate.weight", E, F);
    add(p, FFN_UP, l, "ffn_up.weight", E, F);
    add(p, FFN_DOWN, l, "ffn_down.weight", F, E);
    add(p, NORM, l, "post_ffw_norm.weight", E, 1);
    init_last(p, 4.0f, 0.1f);
    if (s->ple_dim) {
        add(p, PLAIN, l, "inp_gate.weight", E, s->ple_dim);
        add(p, PLAIN, l, "proj.weight", s->ple_dim, E);
        add(p, NORM, l, "post_norm.weight", E, 1);
        init_last(p, 4.0f, 0.1f);
    }
    add(p, NORM, l, "layer_output_scale.weight", 1, 1);
    init_last(p, 0.8f, 0.1f);
}

/* gemma4's tensors before the layers: the per-layer embeddings and the
 * global layers' RoPE frequency divisors */
static void add_gemma4_globals(planner *p, int n_vocab)
{
    const cf_mk_shape *s = p->s;
    const int64_t PL = (int64_t)s->ple_dim * s->n_layer;
    if (s->ple_dim) {
        add(p, PLAIN, -1, "per_layer_token_embd.weight", PL, n_vocab);
        init_last(p, 0.0f, 1.0f / sqrtf((float)s->ple_dim));
        add(p, PLE_PROJ, -1, "per_layer_model_proj.weight", s->n_embd, PL);
        add(p, NORM, -1, "per_layer_proj_norm.weight", s->ple_dim, 1);
    }
    add(p, NORM, -1, "rope_freqs.weight", (s->n_rot ? s->n_rot : cf_mk_head_dim(s)) / 2, 1);
    p->t[p->n - 1].init_prope = true;
}

/* ffn_norm and the FFN (or the experts, with granitehybrid's shared one) */
static void add_ffn(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const struct family *f = &families[s->arch];
    const int64_t E = s->n_embd, F = s->n_ff;
    if (f->glm)
        add(p, NORM, l, "post_attention_norm.weight", E, 1);
    else if (!f->no_pre_norms)
        add(p, NORM, l, "ffn_norm.weight", E, 1);
    if (s->n_expert && l >= s->n_dense_lead) {
        add_experts(p, l, false);
        if (f->glm)
            add_glm_extras(p, l);
        if (f->mamba2) {
            add(p, FFN_GATE, l, "ffn_gate_shexp.weight", E, F);
            add(p, FFN_UP, l, "ffn_up_shexp.weight", E, F);
            add(p, FFN_DOWN, l, "ffn_down_shexp.weight", F, E);
        }
        return;
    }
    add(p, FFN_GATE, l, "ffn_gate.weight", E, F);
    add(p, FFN_UP, l, "ffn_up.weight", E, F);
    add(p, FFN_DOWN, l, "ffn_down.weight", F, E);
    if (f->post_norms)
        add(p, NORM, l, "post_ffw_norm.weight", E, 1);
}

static void add_layer(planner *p, int l)
{
    const cf_mk_shape *s = p->s;
    const struct family *f = &families[s->arch];
    const int64_t E = s->n_embd, hd = cf_mk_head_dim(s);
    const int64_t Q = s->n_head * hd, KV = (s->n_head_kv ? s->n_head_kv : s->n_head) * hd;
    if (f->oss || f->hybrid || f->gemma4 || f->mla) {
        (f->oss      ? add_oss_layer
         : f->hybrid ? add_hybrid_layer
         : f->mla    ? add_mla_layer
                     : add_gemma4_layer)(p, l);
        return;
    }
    if (!f->no_pre_norms)
        add(p, NORM, l, "attn_norm.weight", E, 1);
    if (cf_mk_mamba2(s, l)) {
        add_mamba2(p, l);
        add_ffn(p, l);
        return;
    }
    add(p, ATTN_Q, l, "attn_q.weight", E, Q);
    if (f->qkv_bias)
        add(p, BIAS, l, "attn_q.bias", Q, 1);
    add(p, ATTN_K, l, "attn_k.weight", E, KV);
    if (f->qkv_bias)
        add(p, BIAS, l, "attn_k.bias", KV, 1);
    add(p, ATTN_V, l, "attn_v.weight", E, KV);
    if (f->qkv_bias)
        add(p, BIAS, l, "attn_v.bias", KV, 1);
    if (f->qk != CF_QK_NORM_NONE) {
        add(p, NORM, l, "attn_q_norm.weight", f->qk == CF_QK_NORM_FULL ? Q : hd, 1);
        add(p, NORM, l, "attn_k_norm.weight", f->qk == CF_QK_NORM_FULL ? KV : hd, 1);
    }
    add(p, ATTN_OUT, l, "attn_output.weight", Q, E);
    if (f->post_norms)
        add(p, NORM, l, "post_attention_norm.weight", E, 1);
    add_ffn(p, l);
}

int cf_mk_plan(const cf_mk_shape *s, cf_mk_ftype ft, bool pure, int n_vocab, cf_mk_tensor **out, int *n,
               cf_err *err)
{
    *out = NULL;
    *n = 0;
    if ((unsigned)ft >= CF_MK_FTYPE_COUNT)
        return cf_fail(err, "unknown file type %d", (int)ft);
    if (cf_mk_shape_check(s, err) != 0)
        return -1;
    if (n_vocab < 1 || n_vocab > (1 << 24))
        return cf_fail(err, "a vocabulary of %d tokens is out of range", n_vocab);
    const int64_t E = s->n_embd;
    const size_t most = (size_t)s->n_layer * MAX_LAYER_TENSORS + MAX_GLOBAL_TENSORS;
    planner p = {s, ft, pure, calloc(most, sizeof *p.t), 0};
    if (!p.t)
        return cf_fail(err, "out of memory");
    add(&p, EMBD, -1, "token_embd.weight", E, n_vocab);
    if (families[s->arch].gemma4)
        add_gemma4_globals(&p, n_vocab);
    for (int l = 0; l < s->n_layer; l++)
        add_layer(&p, l);
    add(&p, NORM, -1, "output_norm.weight", E, 1);
    if (!s->tied)
        add(&p, OUTPUT, -1, "output.weight", E, n_vocab);
    if (check_writable(p.t, p.n, ft, err) != 0) {
        free(p.t);
        return -1;
    }
    *out = p.t;
    *n = p.n;
    return 0;
}
