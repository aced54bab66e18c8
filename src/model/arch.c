/* Reading a model's hyper-parameters and binding its tensors, per
 * architecture, with every shape and type checked at load time so the
 * forward pass can trust them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

static const char *arch_names[] = {
    [CF_ARCH_LLAMA] = "llama",
    [CF_ARCH_QWEN2] = "qwen2",
    [CF_ARCH_PHI3] = "phi3",
    [CF_ARCH_GPT2] = "gpt2",
};

const char *cf_arch_name(cf_arch a)
{
    return arch_names[a];
}

const char *cf_arch_supported(void)
{
    return "llama (Llama 2/3, Mistral, SmolLM, TinyLlama), qwen2, phi3, gpt2";
}

/* ---- hyper-parameters ------------------------------------------------------ */

typedef struct keyreader {
    const cf_gguf *g;
    const char *arch;
    cf_err *err;
    bool failed;
} keyreader;

static const char *akey(const keyreader *r, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%s", r->arch, suffix);
    return buf;
}

/* arch.<suffix> as a positive int; def < 0 means required. */
static int get_int(keyreader *r, const char *suffix, int def)
{
    char k[128];
    uint64_t v;
    akey(r, suffix, k, sizeof k);
    if (!cf_gguf_get_u64(r->g, k, &v)) {
        if (cf_gguf_find_kv(r->g, k)) {
            r->failed = true;
            cf_fail(r->err, "metadata %s has an unusable type (expected a non-negative integer)", k);
            return 0;
        }
        if (def < 0) {
            r->failed = true;
            cf_fail(r->err, "metadata %s is missing", k);
            return 0;
        }
        return def;
    }
    if (v == 0 || v > (1u << 30)) {
        r->failed = true;
        cf_fail(r->err, "metadata %s = %llu is out of range", k, (unsigned long long)v);
        return 0;
    }
    return (int)v;
}

static float get_float(keyreader *r, const char *suffix, float def)
{
    char k[128];
    double v;
    akey(r, suffix, k, sizeof k);
    if (!cf_gguf_get_f64(r->g, k, &v))
        return def;
    if (!isfinite(v) || v <= 0) {
        r->failed = true;
        cf_fail(r->err, "metadata %s = %g is out of range", k, v);
        return def;
    }
    return (float)v;
}

static int read_hparams(const cf_gguf *g, cf_hparams *hp, cf_err *err)
{
    cf_str arch;
    if (!cf_gguf_get_str(g, "general.architecture", &arch))
        return cf_fail(err, "metadata general.architecture is missing: not a model file");
    int found = -1;
    for (int a = 0; a < (int)(sizeof arch_names / sizeof arch_names[0]); a++)
        if (arch.len == strlen(arch_names[a]) && !memcmp(arch.ptr, arch_names[a], arch.len))
            found = a;
    if (found < 0)
        return cf_fail(err, "architecture '%.*s' is not supported; confab runs %s", (int)arch.len,
                       arch.ptr, cf_arch_supported());
    memset(hp, 0, sizeof *hp);
    hp->arch = (cf_arch)found;
    keyreader r = {g, arch_names[found], err, false};
    hp->n_ctx_train = get_int(&r, "context_length", -1);
    hp->n_embd = get_int(&r, "embedding_length", -1);
    hp->n_layer = get_int(&r, "block_count", -1);
    hp->n_ff = get_int(&r, "feed_forward_length", -1);
    hp->n_head = get_int(&r, "attention.head_count", -1);
    if (r.failed)
        return -1;
    hp->n_head_kv = get_int(&r, "attention.head_count_kv", hp->n_head);
    hp->head_dim = get_int(&r, "attention.key_length", hp->n_embd / hp->n_head);
    hp->n_rot = get_int(&r, "rope.dimension_count", hp->head_dim);
    if (hp->arch == CF_ARCH_GPT2)
        hp->norm_eps = get_float(&r, "attention.layer_norm_epsilon", 1e-5f);
    else
        hp->norm_eps = get_float(&r, "attention.layer_norm_rms_epsilon", 1e-5f);
    hp->rope_base = get_float(&r, "rope.freq_base", 10000.0f);
    hp->rope_freq_scale = 1.0f;
    hp->n_swa = hp->arch == CF_ARCH_PHI3 ? get_int(&r, "attention.sliding_window", 0) : 0;
    if (r.failed)
        return -1;
    hp->rope_style = hp->arch == CF_ARCH_GPT2   ? CF_ROPE_NONE
                     : hp->arch == CF_ARCH_LLAMA ? CF_ROPE_NORMAL
                                                 : CF_ROPE_NEOX;

    char k[128];
    cf_str scaling;
    if (cf_gguf_get_str(g, akey(&r, "rope.scaling.type", k, sizeof k), &scaling)) {
        if (scaling.len == 6 && !memcmp(scaling.ptr, "linear", 6)) {
            float factor = get_float(&r, "rope.scaling.factor", 1.0f);
            hp->rope_freq_scale = 1.0f / factor;
        } else if (!(scaling.len == 4 && !memcmp(scaling.ptr, "none", 4)) &&
                   !(scaling.len == 6 && !memcmp(scaling.ptr, "llama3", 6))) {
            /* llama3 scaling comes as the rope_freqs.weight tensor */
            return cf_fail(err, "rope scaling '%.*s' is not supported (confab does linear and llama3)",
                           (int)scaling.len, scaling.ptr);
        }
    }
    if (r.failed)
        return -1;

    if (hp->n_head_kv > hp->n_head || hp->n_head % hp->n_head_kv)
        return cf_fail(err, "%d attention heads cannot share %d KV heads", hp->n_head,
                       hp->n_head_kv);
    if (hp->n_rot > hp->head_dim || hp->n_rot % 2)
        return cf_fail(err, "rope dimension %d does not fit head size %d", hp->n_rot, hp->head_dim);
    if (hp->n_layer > 1024 || hp->n_embd > 65536 || hp->head_dim > 1024)
        return cf_fail(err, "implausible model size (%d layers, width %d, head size %d)",
                       hp->n_layer, hp->n_embd, hp->head_dim);
    return 0;
}

/* ---- tensors --------------------------------------------------------------- */

typedef struct binder {
    const cf_gguf *g;
    cf_err *err;
    bool failed;
} binder;

/* Find a tensor of shape ne0 x ne1 (ne1 = 1 for vectors); optional ones may
 * be absent.  Matrices must be of a type confab computes; vectors F32. */
static cf_weight bind(binder *b, const char *name, int64_t ne0, int64_t ne1, bool required)
{
    if (b->failed)
        return NULL;
    cf_weight t = cf_gguf_find_tensor(b->g, name);
    if (!t) {
        if (required) {
            b->failed = true;
            cf_fail(b->err, "tensor '%s' is missing", name);
        }
        return NULL;
    }
    int64_t nel_hi = t->ne[1] * t->ne[2] * t->ne[3];
    if (t->ne[0] != ne0 || nel_hi != ne1) {
        b->failed = true;
        cf_fail(b->err, "tensor '%s' has shape %lld x %lld, expected %lld x %lld", name,
                (long long)t->ne[0], (long long)nel_hi, (long long)ne0, (long long)ne1);
        return NULL;
    }
    const cf_type_traits *tt = cf_type_get(t->type);
    bool vector = ne1 == 1;
    if (vector ? t->type != CF_TYPE_F32 : !tt->computable) {
        b->failed = true;
        cf_fail(b->err, "tensor '%s' has type %s, which confab cannot compute%s", name, tt->name,
                vector ? " (vectors must be F32)"
                       : " (supported: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K IQ3_XXS IQ3_S)");
        return NULL;
    }
    return t;
}

static cf_weight bind_l(binder *b, int l, const char *what, int64_t ne0, int64_t ne1, bool required)
{
    char name[96];
    snprintf(name, sizeof name, "blk.%d.%s", l, what);
    return bind(b, name, ne0, ne1, required);
}

static int bind_tensors(cf_model *m, cf_err *err)
{
    cf_hparams *hp = &m->hp;
    binder b = {m->g, err, false};
    const cf_gguf_tensor *emb = cf_gguf_find_tensor(m->g, "token_embd.weight");
    if (!emb)
        return cf_fail(err, "tensor 'token_embd.weight' is missing");
    if (emb->ne[1] <= 0 || emb->ne[1] > (1 << 24))
        return cf_fail(err, "token_embd.weight has an implausible vocabulary of %lld", (long long)emb->ne[1]);
    hp->n_vocab = (int)emb->ne[1];
    int64_t E = hp->n_embd, V = hp->n_vocab, F = hp->n_ff;
    int64_t Q = (int64_t)hp->n_head * hp->head_dim, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    bool gpt2 = hp->arch == CF_ARCH_GPT2;

    m->tok_embd = bind(&b, "token_embd.weight", E, V, true);
    if (gpt2)
        m->pos_embd = bind(&b, "position_embd.weight", E, hp->n_ctx_train, true);
    m->out_norm = bind(&b, "output_norm.weight", E, 1, true);
    if (gpt2)
        m->out_norm_b = bind(&b, "output_norm.bias", E, 1, true);
    m->output = bind(&b, "output.weight", E, V, false);
    hp->tied_output = !m->output && !b.failed;
    if (hp->tied_output)
        m->output = m->tok_embd;

    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers)
        return cf_fail(err, "out of memory");
    for (int l = 0; l < hp->n_layer && !b.failed; l++) {
        cf_layer *L = &m->layers[l];
        L->attn_norm = bind_l(&b, l, "attn_norm.weight", E, 1, true);
        L->ffn_norm = bind_l(&b, l, "ffn_norm.weight", E, 1, true);
        L->wo = bind_l(&b, l, "attn_output.weight", Q, E, true);
        L->w_down = bind_l(&b, l, "ffn_down.weight", F, E, true);
        switch (hp->arch) {
        case CF_ARCH_LLAMA:
        case CF_ARCH_QWEN2:
            L->wq = bind_l(&b, l, "attn_q.weight", E, Q, true);
            L->wk = bind_l(&b, l, "attn_k.weight", E, KV, true);
            L->wv = bind_l(&b, l, "attn_v.weight", E, KV, true);
            L->w_gate = bind_l(&b, l, "ffn_gate.weight", E, F, true);
            L->w_up = bind_l(&b, l, "ffn_up.weight", E, F, true);
            L->bq = bind_l(&b, l, "attn_q.bias", Q, 1, hp->arch == CF_ARCH_QWEN2);
            L->bk = bind_l(&b, l, "attn_k.bias", KV, 1, hp->arch == CF_ARCH_QWEN2);
            L->bv = bind_l(&b, l, "attn_v.bias", KV, 1, hp->arch == CF_ARCH_QWEN2);
            break;
        case CF_ARCH_PHI3:
            L->wqkv = bind_l(&b, l, "attn_qkv.weight", E, Q + 2 * KV, true);
            L->w_up = bind_l(&b, l, "ffn_up.weight", E, 2 * F, true);
            break;
        case CF_ARCH_GPT2:
            L->attn_norm_b = bind_l(&b, l, "attn_norm.bias", E, 1, true);
            L->ffn_norm_b = bind_l(&b, l, "ffn_norm.bias", E, 1, true);
            L->wqkv = bind_l(&b, l, "attn_qkv.weight", E, Q + 2 * KV, true);
            L->bqkv = bind_l(&b, l, "attn_qkv.bias", Q + 2 * KV, 1, true);
            L->bo = bind_l(&b, l, "attn_output.bias", E, 1, true);
            L->w_up = bind_l(&b, l, "ffn_up.weight", E, F, true);
            L->b_up = bind_l(&b, l, "ffn_up.bias", F, 1, true);
            L->b_down = bind_l(&b, l, "ffn_down.bias", E, 1, true);
            break;
        }
    }
    if (b.failed)
        return -1;

    cf_weight rf = bind(&b, "rope_freqs.weight", hp->n_rot / 2, 1, false);
    if (b.failed)
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

int cf_model_from_gguf(cf_gguf *g, cf_model **out, cf_err *err)
{
    *out = NULL;
    cf_model *m = calloc(1, sizeof *m);
    if (!m) {
        cf_gguf_close(g);
        return cf_fail(err, "out of memory");
    }
    m->g = g;
    if (read_hparams(g, &m->hp, err) != 0 || bind_tensors(m, err) != 0) {
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
    uint64_t sum = matrix_bytes(m->output) + cf_row_bytes(m->tok_embd->type, m->hp.n_embd);
    for (int l = 0; l < m->hp.n_layer; l++) {
        const cf_layer *L = &m->layers[l];
        sum += matrix_bytes(L->wq) + matrix_bytes(L->wk) + matrix_bytes(L->wv) +
               matrix_bytes(L->wqkv) + matrix_bytes(L->wo) + matrix_bytes(L->w_gate) +
               matrix_bytes(L->w_up) + matrix_bytes(L->w_down);
    }
    return sum;
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
