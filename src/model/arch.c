/* Reading a model's hyper-parameters and binding its tensors, per
 * architecture, with every shape and type checked at load time so the
 * forward pass can trust them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"

static const cf_arch_desc *const archs[CF_ARCH_COUNT] = {
    [CF_ARCH_LLAMA] = &cf_arch_llama,     [CF_ARCH_QWEN2] = &cf_arch_qwen2,
    [CF_ARCH_PHI3] = &cf_arch_phi3,       [CF_ARCH_GPT2] = &cf_arch_gpt2,
    [CF_ARCH_QWEN3] = &cf_arch_qwen3,     [CF_ARCH_GEMMA3] = &cf_arch_gemma3,
    [CF_ARCH_SMOLLM3] = &cf_arch_smollm3, [CF_ARCH_OLMO2] = &cf_arch_olmo2,
    [CF_ARCH_GRANITE] = &cf_arch_granite, [CF_ARCH_QWEN3MOE] = &cf_arch_qwen3moe,
    [CF_ARCH_GPT_OSS] = &cf_arch_gpt_oss, [CF_ARCH_LFM2] = &cf_arch_lfm2,
    [CF_ARCH_QWEN35] = &cf_arch_qwen35,   [CF_ARCH_QWEN35MOE] = &cf_arch_qwen35moe,
    [CF_ARCH_GEMMA4] = &cf_arch_gemma4,
    [CF_ARCH_MISTRAL3] = &cf_arch_mistral3,
    [CF_ARCH_LFM2MOE] = &cf_arch_lfm2moe,
    [CF_ARCH_GLM4MOE] = &cf_arch_glm4moe,
    [CF_ARCH_GRANITEHYBRID] = &cf_arch_granitehybrid,
    [CF_ARCH_NEMOTRON_H] = &cf_arch_nemotron_h,
    [CF_ARCH_NEMOTRON_H_MOE] = &cf_arch_nemotron_h_moe,
    [CF_ARCH_QWEN3NEXT] = &cf_arch_qwen3next,
    [CF_ARCH_DEEPSEEK2] = &cf_arch_deepseek2,
};

const char *cf_arch_name(cf_arch a)
{
    return (unsigned)a < CF_ARCH_COUNT ? archs[a]->name : "?";
}

const char *cf_arch_supported(void)
{
    static char list[1024]; /* 23 families take about 560 */
    if (!list[0]) {
        size_t n = 0;
        for (int a = 0; a < CF_ARCH_COUNT && n < sizeof list; a++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s (%s)", a ? ", " : "",
                                  archs[a]->name, archs[a]->models);
    }
    return list;
}

/* ---- the loader ------------------------------------------------------------ */

static const char *akey(const cf_loader *ld, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%s", ld->arch, suffix);
    return buf;
}

int cf_ld_int(cf_loader *ld, const char *suffix, int def)
{
    char k[128];
    uint64_t v;
    if (ld->failed)
        return def > 0 ? def : 0;
    akey(ld, suffix, k, sizeof k);
    if (!cf_gguf_get_u64(ld->g, k, &v)) {
        if (cf_gguf_find_kv(ld->g, k)) {
            ld->failed = true;
            cf_fail(ld->err, "metadata %s has an unusable type (expected a non-negative integer)", k);
            return 0;
        }
        if (def < 0) {
            ld->failed = true;
            cf_fail(ld->err, "metadata %s is missing", k);
            return 0;
        }
        return def;
    }
    if (v == 0 || v > (1u << 30)) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s = %llu is out of range", k, (unsigned long long)v);
        return 0;
    }
    return (int)v;
}

int cf_ld_count(cf_loader *ld, const char *suffix)
{
    char k[128];
    uint64_t v;
    if (ld->failed || !cf_gguf_get_u64(ld->g, akey(ld, suffix, k, sizeof k), &v))
        return 0;
    if (v > (1u << 30)) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s = %llu is out of range", k, (unsigned long long)v);
        return 0;
    }
    return (int)v;
}

int cf_ld_per_layer(cf_loader *ld, const char *suffix, int n_layer, int l, int def)
{
    char k[128];
    const cf_gguf_kv *kv = ld->failed ? NULL : cf_gguf_find_kv(ld->g, akey(ld, suffix, k, sizeof k));
    if (!kv)
        return def;
    const bool array = kv->type == CF_GGUF_ARRAY;
    const cf_gguf_vtype t = array ? kv->elem : kv->type;
    const bool integer = t < CF_GGUF_FLOAT32 || t == CF_GGUF_BOOL || t == CF_GGUF_UINT64 || t == CF_GGUF_INT64;
    if (!integer || (array && kv->n != (uint64_t)n_layer)) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s must be an integer or one per layer (%d)", k, n_layer);
        return def;
    }
    const int64_t v = cf_gguf_kv_int(kv, array ? (uint64_t)l : 0);
    if (v < 0 || v > (1 << 30)) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s = %lld is out of range", k, (long long)v);
        return def;
    }
    return (int)v;
}

float cf_ld_float(cf_loader *ld, const char *suffix, float def)
{
    char k[128];
    double v;
    if (ld->failed || !cf_gguf_get_f64(ld->g, akey(ld, suffix, k, sizeof k), &v))
        return def;
    if (!isfinite(v) || v <= 0) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s = %g is out of range", k, v);
        return def;
    }
    return (float)v;
}

bool cf_ld_bool(cf_loader *ld, const char *suffix, bool def)
{
    char k[128];
    bool v;
    return !ld->failed && cf_gguf_get_bool(ld->g, akey(ld, suffix, k, sizeof k), &v) ? v : def;
}

bool cf_ld_str(cf_loader *ld, const char *suffix, cf_str *out)
{
    char k[128];
    return !ld->failed && cf_gguf_get_str(ld->g, akey(ld, suffix, k, sizeof k), out);
}

/* The names of the types confab computes, in ggml's order. */
static const char *computable_types(void)
{
    static char list[256];
    if (!list[0]) {
        size_t n = 0;
        for (uint32_t t = 0; t < CF_TYPE_COUNT && n < sizeof list; t++) {
            const cf_type_traits *tt = cf_type_get(t);
            if (tt && tt->computable)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? " " : "", tt->name);
        }
    }
    return list;
}

/* Matrices must be of a type confab computes; vectors, and the tensors
 * the forward pass reads as values, F32. */
static cf_weight bind(cf_loader *ld, const char *name, int64_t ne0, int64_t ne1, bool required, bool values)
{
    if (ld->failed)
        return NULL;
    cf_weight t = cf_gguf_find_tensor(ld->g, name);
    if (!t) {
        if (required) {
            ld->failed = true;
            cf_fail(ld->err, "tensor '%s' is missing", name);
        }
        return NULL;
    }
    int64_t nel_hi = t->ne[1] * t->ne[2] * t->ne[3];
    if (t->ne[0] != ne0 || nel_hi != ne1) {
        ld->failed = true;
        cf_fail(ld->err, "tensor '%s' has shape %lld x %lld, expected %lld x %lld", name,
                (long long)t->ne[0], (long long)nel_hi, (long long)ne0, (long long)ne1);
        return NULL;
    }
    const cf_type_traits *tt = cf_type_get(t->type);
    values |= ne1 == 1;
    if (values ? t->type != CF_TYPE_F32 : !tt->computable) {
        ld->failed = true;
        cf_fail(ld->err, "tensor '%s' has type %s, which confab cannot compute (%s%s)", name, tt->name,
                values ? (ne1 == 1 ? "vectors must be F32" : "its values must be F32") : "supported: ",
                values ? "" : computable_types());
        return NULL;
    }
    return t;
}

cf_weight cf_ld_tensor(cf_loader *ld, const char *name, int64_t ne0, int64_t ne1, bool required)
{
    return bind(ld, name, ne0, ne1, required, false);
}

cf_weight cf_ld_layer(cf_loader *ld, int l, const char *what, int64_t ne0, int64_t ne1, bool required)
{
    char name[96];
    snprintf(name, sizeof name, "blk.%d.%s", l, what);
    return bind(ld, name, ne0, ne1, required, false);
}

cf_weight cf_ld_values(cf_loader *ld, int l, const char *what, int64_t ne0, int64_t ne1, bool required)
{
    char name[96];
    snprintf(name, sizeof name, "blk.%d.%s", l, what);
    return bind(ld, name, ne0, ne1, required, true);
}

void cf_ld_attention(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm)
{
    const int64_t E = hp->n_embd, Q = (int64_t)hp->n_head * L->head_dim,
                  KV = (int64_t)L->n_head_kv * L->head_dim;
    if (norm)
        L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->wq = cf_ld_layer(ld, l, "attn_q.weight", E, Q, true);
    L->wk = cf_ld_layer(ld, l, "attn_k.weight", E, KV, true);
    L->wv = cf_ld_layer(ld, l, "attn_v.weight", E, KV, true);
    L->wo = cf_ld_layer(ld, l, "attn_output.weight", Q, E, true);
}

void cf_ld_qkv_bias(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t Q = (int64_t)hp->n_head * L->head_dim, KV = (int64_t)L->n_head_kv * L->head_dim;
    L->bq = cf_ld_layer(ld, l, "attn_q.bias", Q, 1, true);
    L->bk = cf_ld_layer(ld, l, "attn_k.bias", KV, 1, true);
    L->bv = cf_ld_layer(ld, l, "attn_v.bias", KV, 1, true);
}

void cf_ld_swiglu(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm)
{
    const int64_t E = hp->n_embd, F = L->n_ff;
    if (F == 0 && !ld->failed) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s.feed_forward_length is missing", ld->arch);
        return;
    }
    if (norm)
        L->ffn_norm = cf_ld_layer(ld, l, "ffn_norm.weight", E, 1, true);
    L->w_gate = cf_ld_layer(ld, l, "ffn_gate.weight", E, F, true);
    L->w_up = cf_ld_layer(ld, l, "ffn_up.weight", E, F, true);
    L->w_down = cf_ld_layer(ld, l, "ffn_down.weight", F, E, true);
}

void cf_ld_qk_norm(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const bool full = hp->qk_norm == CF_QK_NORM_FULL;
    const int64_t q = full ? (int64_t)hp->n_head * L->head_dim : L->head_dim;
    const int64_t k = full ? (int64_t)L->n_head_kv * L->head_dim : L->head_dim;
    L->q_norm = cf_ld_layer(ld, l, "attn_q_norm.weight", q, 1, true);
    L->k_norm = cf_ld_layer(ld, l, "attn_k_norm.weight", k, 1, true);
}

void cf_ld_moe_hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->n_expert = cf_ld_count(ld, "expert_count");
    if (hp->n_expert == 0)
        return;
    hp->n_expert_used = cf_ld_int(ld, "expert_used_count", -1);
    hp->n_ff_exp = cf_ld_int(ld, "expert_feed_forward_length", hp->n_ff > 0 ? hp->n_ff : -1);
    if (!ld->failed && (hp->n_expert > CF_MAX_EXPERTS || hp->n_expert_used > hp->n_expert)) {
        ld->failed = true;
        cf_fail(ld->err, "%d of %d experts per token is out of range (at most %d experts)",
                hp->n_expert_used, hp->n_expert, CF_MAX_EXPERTS);
    }
}

void cf_ld_moe(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool norm)
{
    const int64_t E = hp->n_embd, F = hp->n_ff_exp, X = hp->n_expert;
    if (norm)
        L->ffn_norm = cf_ld_layer(ld, l, "ffn_norm.weight", E, 1, true);
    L->moe_router = cf_ld_layer(ld, l, "ffn_gate_inp.weight", E, X, true);
    L->moe_choice_b = cf_ld_layer(ld, l, "exp_probs_b.bias", X, 1, false);
    if (hp->ffn != CF_FFN_RELU2) /* relu(up)^2 has no gate */
        L->moe_gate = cf_ld_layer(ld, l, "ffn_gate_exps.weight", E, F * X, true);
    L->moe_up = cf_ld_layer(ld, l, "ffn_up_exps.weight", E, F * X, true);
    L->moe_down = cf_ld_layer(ld, l, "ffn_down_exps.weight", F, E * X, true);
    /* the experts read one gathered input: gate and up must round it alike */
    if (!ld->failed && L->moe_gate &&
        cf_vec_dot_type(L->moe_gate->type) != cf_vec_dot_type(L->moe_up->type)) {
        ld->failed = true;
        cf_fail(ld->err, "blk.%d: expert gate (%s) and up (%s) matrices of different kinds are not supported",
                l, cf_type_name(L->moe_gate->type), cf_type_name(L->moe_up->type));
    }
}

void cf_ld_shared_expert(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L, bool gated)
{
    const int64_t E = hp->n_embd, F = hp->n_ff_shexp;
    if (gated)
        L->sh_inp = cf_ld_layer(ld, l, "ffn_gate_inp_shexp.weight", E, 1, true);
    if (L->moe_gate)
        L->sh_gate = cf_ld_layer(ld, l, "ffn_gate_shexp.weight", E, F, true);
    L->sh_up = cf_ld_layer(ld, l, "ffn_up_shexp.weight", E, F, true);
    L->sh_down = cf_ld_layer(ld, l, "ffn_down_shexp.weight", F, E, true);
    /* it reads the experts' rounded input, and its gate the router's F32 one */
    const cf_weight first = L->moe_gate ? L->moe_gate : L->moe_up;
    const cf_type dot = ld->failed ? CF_TYPE_F32 : cf_vec_dot_type(first->type);
    if (!ld->failed && ((gated && L->moe_router->type != CF_TYPE_F32) ||
                        (L->sh_gate && cf_vec_dot_type(L->sh_gate->type) != dot) ||
                        cf_vec_dot_type(L->sh_up->type) != dot)) {
        ld->failed = true;
        cf_fail(ld->err, "blk.%d: a shared expert whose matrices differ in kind from the experts' (or a gated "
                "one beside an F16/quantized router) is not supported", l);
    }
}

void cf_ld_mamba2_hparams(cf_loader *ld, cf_hparams *hp)
{
    hp->conv_kernel = cf_ld_int(ld, "ssm.conv_kernel", -1);
    hp->ssm_inner = cf_ld_int(ld, "ssm.inner_size", -1);
    hp->ssm_d = cf_ld_int(ld, "ssm.state_size", -1);
    hp->ssm_v_heads = cf_ld_int(ld, "ssm.time_step_rank", -1); /* Mamba2's head count */
    hp->ssm_k_heads = cf_ld_int(ld, "ssm.group_count", 1);
    if (ld->failed)
        return;
    /* the scan sums states 8 at a time (cpu_mixers.c) */
    if (hp->conv_kernel > 16 || hp->ssm_inner % hp->ssm_v_heads || hp->ssm_v_heads % hp->ssm_k_heads ||
        hp->ssm_inner > 65536 || hp->ssm_d > 1024 || hp->ssm_d % 8) {
        ld->failed = true;
        cf_fail(ld->err, "%s: a Mamba2 mixer of %d channels in %d heads, %d groups of %d states, kernel %d, "
                "is not supported", ld->arch, hp->ssm_inner, hp->ssm_v_heads, hp->ssm_k_heads, hp->ssm_d,
                hp->conv_kernel);
    }
}

/* blk.<l>.<what>, which the forward pass reads as floats itself */
static cf_weight ld_layer_f32(cf_loader *ld, int l, const char *what, int64_t ne0, int64_t ne1)
{
    cf_weight t = cf_ld_layer(ld, l, what, ne0, ne1, true);
    if (t && t->type != CF_TYPE_F32) {
        ld->failed = true;
        cf_fail(ld->err, "tensor 'blk.%d.%s' has type %s (it must be F32)", l, what, cf_type_name(t->type));
        return NULL;
    }
    return t;
}

void cf_ld_mamba2(cf_loader *ld, const cf_hparams *hp, int l, cf_layer *L)
{
    const int64_t E = hp->n_embd, D = hp->ssm_inner, H = hp->ssm_v_heads, G = hp->ssm_k_heads;
    const int64_t BC = 2 * G * hp->ssm_d;
    L->attn_norm = cf_ld_layer(ld, l, "attn_norm.weight", E, 1, true);
    L->m2_in = cf_ld_layer(ld, l, "ssm_in.weight", E, 2 * D + BC + H, true);
    L->m2_conv = ld_layer_f32(ld, l, "ssm_conv1d.weight", hp->conv_kernel, D + BC);
    L->m2_conv_b = cf_ld_layer(ld, l, "ssm_conv1d.bias", D + BC, 1, true);
    L->m2_dt_b = cf_ld_layer(ld, l, "ssm_dt.bias", H, 1, true);
    L->m2_a = ld_layer_f32(ld, l, "ssm_a", 1, H);
    L->m2_skip = ld_layer_f32(ld, l, "ssm_d", 1, H);
    L->m2_norm = ld_layer_f32(ld, l, "ssm_norm.weight", D / G, G);
    L->m2_out = cf_ld_layer(ld, l, "ssm_out.weight", D, E, true);
    L->rope = false;
}

cf_moe_gating cf_ld_moe_gating(cf_loader *ld)
{
    const int f = cf_ld_int(ld, "expert_gating_func", 1);
    if (!ld->failed && f > 2) {
        ld->failed = true;
        cf_fail(ld->err, "metadata %s.expert_gating_func = %d is not supported (1 softmax, 2 sigmoid)",
                ld->arch, f);
    }
    return f == 2 ? CF_MOE_SIGMOID : CF_MOE_SOFTMAX;
}

bool cf_ld_moe_layer(cf_loader *ld, const cf_hparams *hp, int l)
{
    return hp->n_expert > 0 && l >= cf_ld_count(ld, "leading_dense_block_count");
}

/* ---- hyper-parameters ------------------------------------------------------ */

static int read_hparams(const cf_gguf *g, cf_hparams *hp, cf_err *err)
{
    cf_str arch;
    if (!cf_gguf_get_str(g, "general.architecture", &arch))
        return cf_fail(err, "metadata general.architecture is missing: not a model file");
    int found = -1;
    for (int a = 0; a < CF_ARCH_COUNT; a++)
        if (arch.len == strlen(archs[a]->name) && !memcmp(arch.ptr, archs[a]->name, arch.len))
            found = a;
    if (found < 0)
        return cf_fail(err, "architecture '%.*s' is not supported; confab runs %s", (int)arch.len,
                       arch.ptr, cf_arch_supported());
    memset(hp, 0, sizeof *hp);
    hp->arch = (cf_arch)found;
    cf_loader r = {g, archs[found]->name, err, false};
    hp->n_ctx_train = cf_ld_int(&r, "context_length", -1);
    hp->n_embd = cf_ld_int(&r, "embedding_length", -1);
    hp->n_layer = cf_ld_int(&r, "block_count", -1);
    /* before the loops over the layers: a hostile count kept them busy for minutes */
    if (hp->n_layer > 1024)
        return cf_fail(err, "implausible model size (%d layers)", hp->n_layer);
    /* one width or one per layer (the largest sizes the buffers); MoE files
     * may have only the experts' */
    for (int l = 0; l < hp->n_layer; l++) {
        const int ff = cf_ld_per_layer(&r, "feed_forward_length", hp->n_layer, l, 0);
        hp->n_ff = ff > hp->n_ff ? ff : hp->n_ff;
    }
    hp->n_head = cf_ld_int(&r, "attention.head_count", -1);
    if (r.failed)
        return -1;
    /* one count, or one per layer (0: a layer without attention) */
    hp->n_head_kv = 0;
    for (int l = 0; l < hp->n_layer; l++) {
        const int kv = cf_ld_per_layer(&r, "attention.head_count_kv", hp->n_layer, l, hp->n_head);
        hp->n_head_kv = kv > hp->n_head_kv ? kv : hp->n_head_kv;
    }
    if (hp->n_head_kv == 0)
        hp->n_head_kv = hp->n_head;
    hp->head_dim = cf_ld_int(&r, "attention.key_length", hp->n_embd / hp->n_head);
    hp->n_rot = cf_ld_int(&r, "rope.dimension_count", hp->head_dim);
    hp->n_rot_swa = hp->n_rot;
    hp->norm_eps = cf_ld_float(&r, "attention.layer_norm_rms_epsilon", 1e-5f);
    hp->rope_base = cf_ld_float(&r, "rope.freq_base", 10000.0f);
    hp->rope_freq_scale = 1.0f;
    hp->rope_style = CF_ROPE_NORMAL;
    hp->norm = CF_NORM_RMS;
    hp->ffn = CF_FFN_SWIGLU;
    hp->embd_scale = hp->residual_scale = hp->q_scale = hp->logit_scale = 1.0f;
    hp->kq_scale = 1.0f / sqrtf((float)hp->head_dim);

    cf_str scaling;
    if (cf_ld_str(&r, "rope.scaling.type", &scaling)) {
        if (scaling.len == 6 && !memcmp(scaling.ptr, "linear", 6)) {
            float factor = cf_ld_float(&r, "rope.scaling.factor", 1.0f);
            hp->rope_freq_scale = 1.0f / factor;
        } else if (scaling.len == 4 && !memcmp(scaling.ptr, "yarn", 4)) {
            hp->rope_freq_scale = 1.0f / cf_ld_float(&r, "rope.scaling.factor", 1.0f);
            hp->rope_yarn_orig_ctx = cf_ld_int(&r, "rope.scaling.original_context_length", hp->n_ctx_train);
            hp->rope_yarn_beta_fast = cf_ld_float(&r, "rope.scaling.yarn_beta_fast", 32.0f);
            hp->rope_yarn_beta_slow = cf_ld_float(&r, "rope.scaling.yarn_beta_slow", 1.0f);
            hp->rope_yarn_attn_factor = cf_ld_float(&r, "rope.scaling.yarn_attn_factor", 1.0f);
            /* with a log multiplier (DeepSeek's mscale_all_dim) the
             * magnitude is m(s, 1) / m(s, mul), m(s, u) = 1 + 0.1 u ln s:
             * the factor cancels YaRN's own 1 + 0.1 ln s */
            const float mul = cf_ld_float(&r, "rope.scaling.yarn_log_multiplier", 0.0f);
            if (mul > 0) {
                const float ln_s = logf(1.0f / hp->rope_freq_scale);
                hp->rope_yarn_attn_factor = 1.0f / (1.0f + 0.1f * mul * ln_s);
            }
        } else if (!(scaling.len == 4 && !memcmp(scaling.ptr, "none", 4)) &&
                   !(scaling.len == 6 && !memcmp(scaling.ptr, "llama3", 6))) {
            /* llama3 scaling comes as the rope_freqs.weight tensor */
            return cf_fail(err, "rope scaling '%.*s' is not supported (confab does linear, yarn and llama3)",
                           (int)scaling.len, scaling.ptr);
        }
    }
    archs[found]->hparams(&r, hp);
    if (r.failed)
        return -1;

    if (hp->n_head_kv > hp->n_head || hp->n_head % hp->n_head_kv)
        return cf_fail(err, "%d attention heads cannot share %d KV heads", hp->n_head,
                       hp->n_head_kv);
    if (hp->n_rot > hp->head_dim || hp->n_rot % 2)
        return cf_fail(err, "rope dimension %d does not fit head size %d", hp->n_rot, hp->head_dim);
    if (hp->n_rot_swa > hp->head_dim || hp->n_rot_swa % 2)
        return cf_fail(err, "sliding-window rope dimension %d does not fit head size %d", hp->n_rot_swa,
                       hp->head_dim);
    if (hp->n_embd > 65536 || hp->head_dim > 1024)
        return cf_fail(err, "implausible model size (width %d, head size %d)", hp->n_embd,
                       hp->head_dim);
    return 0;
}

/* ---- tensors --------------------------------------------------------------- */

static int bind_tensors(cf_model *m, cf_err *err)
{
    cf_hparams *hp = &m->hp;
    cf_loader ld = {m->g, archs[hp->arch]->name, err, false};
    const cf_gguf_tensor *emb = cf_gguf_find_tensor(m->g, "token_embd.weight");
    if (!emb)
        return cf_fail(err, "tensor 'token_embd.weight' is missing");
    if (emb->ne[1] <= 0 || emb->ne[1] > (1 << 24))
        return cf_fail(err, "token_embd.weight has an implausible vocabulary of %lld", (long long)emb->ne[1]);
    hp->n_vocab = (int)emb->ne[1];
    const int64_t E = hp->n_embd, V = hp->n_vocab;
    const bool layernorm = hp->norm == CF_NORM_LAYER;

    m->tok_embd = cf_ld_tensor(&ld, "token_embd.weight", E, V, true);
    if (hp->rope_style == CF_ROPE_NONE)
        m->pos_embd = cf_ld_tensor(&ld, "position_embd.weight", E, hp->n_ctx_train, true);
    const char *out_norm = archs[hp->arch]->output_norm;
    m->out_norm = cf_ld_tensor(&ld, out_norm ? out_norm : "output_norm.weight", E, 1, true);
    if (layernorm)
        m->out_norm_b = cf_ld_tensor(&ld, "output_norm.bias", E, 1, true);
    m->output = cf_ld_tensor(&ld, "output.weight", E, V, false);
    if (hp->ple_dim) {
        const int64_t PL = (int64_t)hp->ple_dim * hp->n_layer;
        m->ple_embd = cf_ld_tensor(&ld, "per_layer_token_embd.weight", PL, V, true);
        m->ple_model_proj = cf_ld_tensor(&ld, "per_layer_model_proj.weight", E, PL, true);
        m->ple_model_norm = cf_ld_tensor(&ld, "per_layer_proj_norm.weight", hp->ple_dim, 1, true);
    }
    hp->tied_output = !m->output && !ld.failed;
    if (hp->tied_output)
        m->output = m->tok_embd;

    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers)
        return cf_fail(err, "out of memory");
    for (int l = 0; l < hp->n_layer && !ld.failed; l++) {
        cf_layer *L = &m->layers[l];
        L->rope = hp->rope_style != CF_ROPE_NONE;
        L->head_dim = hp->head_dim;
        L->n_rot = hp->n_rot;
        L->n_head_kv = cf_ld_per_layer(&ld, "attention.head_count_kv", hp->n_layer, l, hp->n_head);
        L->n_ff = cf_ld_per_layer(&ld, "feed_forward_length", hp->n_layer, l, hp->n_ff);
        L->kv_src = l;
        archs[hp->arch]->layer(&ld, hp, l, L);
        if (!ld.failed && L->n_head_kv && hp->n_head % L->n_head_kv)
            return cf_fail(err, "blk.%d: %d attention heads cannot share %d KV heads", l, hp->n_head,
                           L->n_head_kv);
        if (!ld.failed && L->bo && L->post_attn_norm)
            return cf_fail(err, "blk.%d: an output bias and a post-norm together are not supported", l);
        if (!ld.failed && L->n_rot > L->head_dim)
            return cf_fail(err, "blk.%d: rope dimension %d does not fit head size %d", l, L->n_rot, L->head_dim);
    }
    if (ld.failed)
        return -1;

    cf_weight rf = cf_ld_tensor(&ld, "rope_freqs.weight", hp->n_rot / 2, 1, false);
    if (!ld.failed && hp->ple_dim && m->ple_model_proj->type != CF_TYPE_F32)
        return cf_fail(err, "per_layer_model_proj.weight of type %s is not supported (F32 only)",
                       cf_type_name(m->ple_model_proj->type));
    if (ld.failed)
        return -1;
    if (rf) {
        m->rope_freqs = malloc((size_t)hp->n_rot / 2 * sizeof(float));
        if (!m->rope_freqs)
            return cf_fail(err, "out of memory");
        memcpy(m->rope_freqs, rf->data, (size_t)hp->n_rot / 2 * sizeof(float));
        hp->rope_freqs = m->rope_freqs;
    }
    return 0;
}

/* ---- load ------------------------------------------------------------------ */

/* The matrices of layer L the forward pass multiplies by (cf_matmul),
 * absent ones NULL; the experts' stacked matrices are the last
 * EXPERT_MATRICES. */
enum { LAYER_MATRICES = 29, EXPERT_MATRICES = 3 };

static void layer_matrices(const cf_layer *L, cf_weight ws[LAYER_MATRICES])
{
    const cf_weight all[] = {L->wq,      L->wk,       L->wv,     L->wqkv,     L->wo,      L->w_gate,
                             L->w_up,    L->w_down,   L->moe_router, L->conv_in, L->conv_out, L->dn_qkv,
                             L->dn_z,    L->dn_beta,  L->dn_alpha, L->dn_out,  L->m2_in,    L->m2_out,
                             L->sh_gate, L->sh_up,    L->sh_down, L->ple_gate, L->ple_proj, L->wq_a,
                             L->wk_b,    L->wv_b,     L->moe_gate, L->moe_up,  L->moe_down};
    _Static_assert(sizeof all / sizeof all[0] == LAYER_MATRICES, "the list's size");
    memcpy(ws, all, sizeof all);
}

/* The matrices into the kernels' fastest layout.  The token embeddings
 * only when the output is tied to them: then the logits read them whole
 * each token, and the lookup unpacks its row; gemma4's per-layer
 * embeddings are only ever read by row. */
static int repack_matrices(cf_model *m, cf_err *err)
{
    cf_weight *list = malloc(((size_t)m->hp.n_layer * LAYER_MATRICES + 2) * sizeof *list);
    if (!list)
        return cf_fail(err, "out of memory");
    int64_t n = 0;
    list[n++] = m->output;
    list[n++] = m->ple_model_proj;
    for (int l = 0; l < m->hp.n_layer; l++, n += LAYER_MATRICES)
        layer_matrices(&m->layers[l], list + n);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++)
        if (list[i] && list[i] != m->ple_embd)
            list[kept++] = list[i];
    int rc = cf_gguf_repack(m->g, list, kept, err);
    free(list);
    return rc < 0 ? -1 : 0;
}

int cf_model_from_gguf(cf_gguf *g, cf_model **out, cf_err *err)
{
    *out = NULL;
    cf_model *m = calloc(1, sizeof *m);
    if (!m) {
        cf_gguf_close(g);
        return cf_fail(err, "out of memory");
    }
    m->g = g;
    if (read_hparams(g, &m->hp, err) != 0 || bind_tensors(m, err) != 0 || repack_matrices(m, err) != 0) {
        cf_model_free(m);
        return -1;
    }
    cf_str name;
    if (cf_gguf_get_str(g, "general.name", &name) && name.len)
        m->name = strndup(name.ptr, name.len);
    else
        m->name = strdup(m->hp.n_layer ? cf_arch_name(m->hp.arch) : "model");
    if (!m->name) {
        cf_model_free(m);
        return cf_fail(err, "out of memory");
    }
    *out = m;
    return 0;
}

int cf_model_load(const char *path, const char *tokenizer_path, cf_model **out, cf_err *err)
{
    return cf_model_load_as(path, tokenizer_path, CF_LOAD_AUTO, out, err);
}

int cf_model_load_as(const char *path, const char *tokenizer_path, cf_load_mode mode, cf_model **out,
                     cf_err *err)
{
    cf_gguf *g;
    int rc = tokenizer_path ? cf_gguf_open_llama2c(path, tokenizer_path, &g, err)
                            : cf_gguf_open_as(path, mode, &g, err);
    if (rc != 0)
        return -1;
    cf_err inner;
    if (cf_model_from_gguf(g, out, &inner) != 0)
        return cf_fail(err, "%s: %s", path, inner.msg);
    return 0;
}

void cf_model_free(cf_model *m)
{
    if (!m)
        return;
    cf_gguf_close(m->g);
    free(m->layers);
    free(m->rope_freqs);
    free(m->name);
    free(m);
}

const cf_gguf *cf_model_gguf(const cf_model *m) { return m->g; }
const cf_hparams *cf_model_hparams(const cf_model *m) { return &m->hp; }
const char *cf_model_name(const cf_model *m) { return m->name; }

static uint64_t matrix_bytes(cf_weight t)
{
    return t ? t->nbytes : 0;
}

uint64_t cf_model_bytes_per_token(const cf_model *m)
{
    const cf_hparams *hp = &m->hp;
    uint64_t sum = matrix_bytes(m->output) + cf_row_bytes(m->tok_embd->type, hp->n_embd) +
                   matrix_bytes(m->ple_model_proj);
    for (int l = 0; l < hp->n_layer; l++) {
        const cf_layer *L = &m->layers[l];
        cf_weight ws[LAYER_MATRICES];
        layer_matrices(L, ws);
        int i = 0;
        for (; i < LAYER_MATRICES - EXPERT_MATRICES; i++)
            sum += matrix_bytes(ws[i]);
        uint64_t experts = 0;
        for (; i < LAYER_MATRICES; i++)
            experts += matrix_bytes(ws[i]);
        /* a token reads k of the n experts */
        if (L->moe_router)
            sum += experts / (uint64_t)hp->n_expert * (uint64_t)hp->n_expert_used;
        sum += matrix_bytes(L->sh_inp);
    }
    return sum;
}

bool cf_model_recurrent(const cf_model *m)
{
    for (int l = 0; l < m->hp.n_layer; l++)
        if (m->layers[l].conv_in || m->layers[l].dn_qkv || m->layers[l].m2_in)
            return true;
    return false;
}

uint64_t cf_model_n_params(const cf_model *m)
{
    uint64_t n = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(m->g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(m->g, i);
        n += (uint64_t)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
    }
    return n;
}
