/* mkmodel: random weights, generated row by row in parallel and quantized
 * with the kernels' reference quantizers, streamed into a GGUF file. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "confab/mkmodel.h"

/* ---- random rows ----------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

void cf_mk_row(uint64_t seed, const cf_mk_tensor *t, int64_t row, float *dst)
{
    uint64_t state = seed;
    state = splitmix64(&state) ^ fnv1a(t->name);
    state = splitmix64(&state) ^ (uint64_t)row;
    splitmix64(&state);
    const float two_pi = 6.28318530717958647692f;
    const float mean = t->init_mean, sd = t->init_std;
    /* Box-Muller: each 64-bit draw gives two uniforms and two normals. */
    for (int64_t i = 0; i < t->ne[0]; i += 2) {
        const uint64_t r = splitmix64(&state);
        const float u1 = ((float)(uint32_t)(r >> 40) + 1.0f) * (1.0f / 16777216.0f); /* (0, 1] */
        const float u2 = (float)((uint32_t)r >> 8) * (1.0f / 16777216.0f);          /* [0, 1) */
        const float rad = sqrtf(-2.0f * logf(u1));
        float s, c;
        sincosf(two_pi * u2, &s, &c);
        dst[i] = mean + sd * rad * c;
        if (i + 1 < t->ne[0])
            dst[i + 1] = mean + sd * rad * s;
    }
    if (t->init_neg_exp)
        for (int64_t i = 0; i < t->ne[0]; i++)
            dst[i] = -expf(dst[i]);
    if (t->init_prope)
        for (int64_t i = 0; i < t->ne[0]; i++)
            dst[i] = i < t->ne[0] / 4 ? 1.0f : 1e30f;
}

/* ---- the file -------------------------------------------------------------- */

typedef struct job {
    const cf_mk_params *p;
    const cf_mk_tensor *plan;
    int n_tensors;
} job;

static int fill(void *user, int64_t i, void *dst, size_t nbytes, cf_err *err)
{
    const job *j = user;
    const cf_mk_tensor *t = &j->plan[i];
    const size_t row_bytes = cf_row_bytes(t->type, t->ne[0]);
    const int64_t n_rows = t->ne[1] * t->ne[2];
    if (row_bytes * (size_t)n_rows != nbytes)
        return cf_fail(err, "tensor '%s': %zu bytes planned, %zu asked", t->name, row_bytes * (size_t)n_rows,
                       nbytes);
    int failed = 0;
    const int nth = j->p->n_threads > 0 ? j->p->n_threads : omp_get_max_threads();
#pragma omp parallel num_threads(nth) reduction(| : failed)
    {
        float *row = malloc((size_t)t->ne[0] * sizeof *row);
        failed = !row;
#pragma omp for schedule(dynamic, 16)
        for (int64_t r = 0; r < n_rows; r++) {
            if (failed)
                continue;
            cf_mk_row(j->p->seed, t, r, row);
            failed = cf_quantize_row(t->type, row, (uint8_t *)dst + (size_t)r * row_bytes, t->ne[0]) != 0;
        }
        free(row);
    }
    if (failed)
        return cf_fail(err, "cannot quantize tensor '%s' to %s", t->name, cf_type_name(t->type));
    return 0;
}

/* general.file_type: llama.cpp knows MXFP4 files only as MXFP4_MOE */
static uint32_t llama_ftype(cf_mk_ftype ft)
{
    return (uint32_t)cf_gguf_file_type_id(ft == CF_MK_MXFP4 ? "MXFP4_MOE" : cf_mk_ftype_name(ft));
}

#define AKEY(suffix) (snprintf(key, sizeof key, "%s.%s", cf_arch_name(s->arch), suffix), key)

/* The experts' keys, and YaRN's (gpt-oss). */
static int put_moe_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int rc = 0;
    if (s->n_expert) {
        rc |= cf_gguf_w_u32(w, AKEY("expert_count"), (uint32_t)s->n_expert);
        rc |= cf_gguf_w_u32(w, AKEY("expert_used_count"), (uint32_t)s->n_expert_used);
        rc |= cf_gguf_w_u32(w, AKEY("expert_feed_forward_length"),
                            (uint32_t)(s->n_ff_exp ? s->n_ff_exp : s->n_ff));
    }
    if (s->n_ff_shexp && s->arch == CF_ARCH_QWEN3NEXT)
        rc |= cf_gguf_w_u32(w, AKEY("expert_shared_feed_forward_length"), (uint32_t)s->n_ff_shexp);
    if (s->yarn_factor > 0) {
        rc |= cf_gguf_w_str(w, AKEY("rope.scaling.type"), "yarn", 4);
        rc |= cf_gguf_w_f32(w, AKEY("rope.scaling.factor"), s->yarn_factor);
        rc |= cf_gguf_w_u32(w, AKEY("rope.scaling.original_context_length"), (uint32_t)s->yarn_orig_ctx);
    }
    return rc;
}

/* granitehybrid's Mamba2 mixers (2 n_embd channels; the layers without KV
 * heads), attention without positions, and the shared expert's width */
static int put_mamba2_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int32_t kv[1024];
    int rc = 0;
    for (int l = 0; l < s->n_layer; l++)
        kv[l] = cf_mk_mamba2(s, l) ? 0 : s->n_head_kv ? s->n_head_kv : s->n_head;
    rc |= cf_gguf_w_arr(w, AKEY("attention.head_count_kv"), CF_GGUF_INT32, kv, (uint64_t)s->n_layer);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.conv_kernel"), (uint32_t)s->ssm_conv);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.state_size"), (uint32_t)s->ssm_state);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.group_count"), (uint32_t)s->ssm_k_heads);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.time_step_rank"), (uint32_t)s->ssm_v_heads);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.inner_size"), (uint32_t)(2 * s->n_embd));
    rc |= cf_gguf_w_bool(w, AKEY("rope.scaling.finetuned"), false);
    if (s->n_expert)
        rc |= cf_gguf_w_u32(w, AKEY("expert_shared_feed_forward_length"), (uint32_t)s->n_ff);
    return rc;
}

/* qwen35's delta nets; its M-RoPE sections, which llama.cpp needs (for
 * text every section carries the position: confab reads none), split the
 * rotated pairs in three as Qwen3.5's [11, 11, 10] does its 32. */
static int put_ssm_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int rc = 0;
    if (s->arch == CF_ARCH_GRANITEHYBRID)
        return put_mamba2_keys(w, s);
    if (s->arch != CF_ARCH_QWEN35 && s->arch != CF_ARCH_QWEN3NEXT)
        return 0;
    const int pairs = (s->n_rot ? s->n_rot : cf_mk_head_dim(s)) / 2;
    const int32_t sections[4] = {(pairs + 2) / 3, (pairs + 1) / 3, pairs / 3, 0};
    if (s->arch == CF_ARCH_QWEN35) /* qwen3next's RoPE is plain NeoX */
        rc |= cf_gguf_w_arr(w, AKEY("rope.dimension_sections"), CF_GGUF_INT32, sections, 4);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.conv_kernel"), (uint32_t)s->ssm_conv);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.state_size"), (uint32_t)s->ssm_state);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.group_count"), (uint32_t)s->ssm_k_heads);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.time_step_rank"), (uint32_t)s->ssm_v_heads);
    rc |= cf_gguf_w_u32(w, AKEY("ssm.inner_size"), (uint32_t)(s->ssm_v_heads * s->ssm_state));
    rc |= cf_gguf_w_u32(w, AKEY("full_attention_interval"), CF_MK_ATTN_INTERVAL);
    return rc;
}

/* deepseek2's: the latent attention's widths (key_length the cache row,
 * value_length the latent, as its converter writes them), the dense
 * layers, the shared experts, V2's softmax routing, and YaRN's mscale as
 * V2-Lite's (mscale_all_dim 0.707, in the key's x0.1 encoding). */
static int put_mla_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int rc = 0;
    if (s->arch != CF_ARCH_DEEPSEEK2)
        return 0;
    rc |= cf_gguf_w_u32(w, AKEY("attention.kv_lora_rank"), (uint32_t)s->kv_lora);
    if (s->q_lora)
        rc |= cf_gguf_w_u32(w, AKEY("attention.q_lora_rank"), (uint32_t)s->q_lora);
    rc |= cf_gguf_w_u32(w, AKEY("attention.key_length"), (uint32_t)(s->kv_lora + s->n_rot));
    rc |= cf_gguf_w_u32(w, AKEY("attention.value_length"), (uint32_t)s->kv_lora);
    rc |= cf_gguf_w_u32(w, AKEY("attention.key_length_mla"), (uint32_t)(s->mla_nope + s->n_rot));
    rc |= cf_gguf_w_u32(w, AKEY("attention.value_length_mla"), (uint32_t)s->mla_v);
    rc |= cf_gguf_w_u32(w, AKEY("leading_dense_block_count"), (uint32_t)s->n_dense_lead);
    const int ff = s->n_ff_exp ? s->n_ff_exp : s->n_ff;
    rc |= cf_gguf_w_u32(w, AKEY("expert_shared_count"), (uint32_t)(s->n_ff_shexp / ff));
    rc |= cf_gguf_w_u32(w, AKEY("expert_gating_func"), 1);
    rc |= cf_gguf_w_f32(w, AKEY("expert_weights_scale"), 1.0f);
    if (s->yarn_factor > 0)
        rc |= cf_gguf_w_f32(w, AKEY("rope.scaling.yarn_log_multiplier"), 0.0707f);
    return rc;
}

/* gemma4's: the sliding layers' heads and RoPE, which layers slide, the
 * shared caches, the per-layer embeddings and Gemma's logit soft-cap. */
static int put_gemma4_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int rc = 0;
    if (s->arch != CF_ARCH_GEMMA4)
        return 0;
    uint8_t pattern[1024];
    for (int l = 0; l < s->n_layer; l++)
        pattern[l] = cf_mk_sliding(s, l);
    const int hd_swa = s->head_dim_swa ? s->head_dim_swa : cf_mk_head_dim(s);
    rc |= cf_gguf_w_u32(w, AKEY("attention.key_length_swa"), (uint32_t)hd_swa);
    rc |= cf_gguf_w_u32(w, AKEY("attention.value_length_swa"), (uint32_t)hd_swa);
    rc |= cf_gguf_w_u32(w, AKEY("rope.dimension_count_swa"), (uint32_t)hd_swa);
    rc |= cf_gguf_w_arr(w, AKEY("attention.sliding_window_pattern"), CF_GGUF_BOOL, pattern,
                        (uint64_t)s->n_layer);
    rc |= cf_gguf_w_u32(w, AKEY("attention.shared_kv_layers"), (uint32_t)s->n_kv_shared);
    rc |= cf_gguf_w_u32(w, AKEY("embedding_length_per_layer_input"), (uint32_t)s->ple_dim);
    rc |= cf_gguf_w_f32(w, AKEY("final_logit_softcapping"), 30.0f); /* Gemma 2 to 4's */
    return rc;
}

/* One FFN width, or one per layer when they differ (gemma4's shared
 * layers); granitehybrid's experts are feed_forward_length wide, as
 * llama.cpp reads them. */
static int put_ff(cf_gguf_writer *w, const cf_mk_shape *s)
{
    char key[96];
    int32_t ff[1024];
    bool same = true;
    for (int l = 0; l < s->n_layer; l++) {
        ff[l] = cf_mk_layer_ff(s, l);
        same = same && ff[l] == s->n_ff;
    }
    if (s->arch == CF_ARCH_GRANITEHYBRID && s->n_expert)
        return cf_gguf_w_u32(w, AKEY("feed_forward_length"), (uint32_t)(s->n_ff_exp ? s->n_ff_exp : s->n_ff));
    if (same)
        return cf_gguf_w_u32(w, AKEY("feed_forward_length"), (uint32_t)s->n_ff);
    return cf_gguf_w_arr(w, AKEY("feed_forward_length"), CF_GGUF_INT32, ff, (uint64_t)s->n_layer);
}

/* The keys only some families read: the head width when it is not
 * n_embd / n_head, the sliding layers, granite's multipliers. */
static int put_family_keys(cf_gguf_writer *w, const cf_mk_shape *s)
{
    const int hd = cf_mk_head_dim(s);
    char key[96];
    int rc = 0;
    if ((int64_t)hd * s->n_head != s->n_embd && s->arch != CF_ARCH_DEEPSEEK2) { /* put_mla_keys */
        rc |= cf_gguf_w_u32(w, AKEY("attention.key_length"), (uint32_t)hd);
        rc |= cf_gguf_w_u32(w, AKEY("attention.value_length"), (uint32_t)hd);
    }
    if (s->n_swa)
        rc |= cf_gguf_w_u32(w, AKEY("attention.sliding_window"), (uint32_t)s->n_swa);
    if (s->n_swa && s->rope_base_swa > 0)
        rc |= cf_gguf_w_f32(w, AKEY("rope.freq_base_swa"), s->rope_base_swa);
    if (s->arch == CF_ARCH_MISTRAL3 && s->yarn_factor > 0) {
        /* Ministral 3's: YaRN's magnitude cancelled, Llama 4's temperature */
        rc |= cf_gguf_w_f32(w, AKEY("rope.scaling.yarn_beta_fast"), 32.0f);
        rc |= cf_gguf_w_f32(w, AKEY("rope.scaling.yarn_beta_slow"), 1.0f);
        rc |= cf_gguf_w_f32(w, AKEY("rope.scaling.yarn_log_multiplier"), 1.0f);
        rc |= cf_gguf_w_f32(w, AKEY("attention.temperature_scale"), 0.1f);
    }
    if (s->arch == CF_ARCH_GLM4MOE) {
        /* GLM-4.5-Air's routing: sigmoid, renormalised, scale 1, one group */
        rc |= cf_gguf_w_u32(w, AKEY("leading_dense_block_count"), (uint32_t)s->n_dense_lead);
        rc |= cf_gguf_w_u32(w, AKEY("expert_shared_count"), 1);
        rc |= cf_gguf_w_u32(w, AKEY("expert_gating_func"), 2);
        rc |= cf_gguf_w_bool(w, AKEY("expert_weights_norm"), true);
        rc |= cf_gguf_w_f32(w, AKEY("expert_weights_scale"), 1.0f);
        rc |= cf_gguf_w_u32(w, AKEY("expert_group_count"), 1);
        rc |= cf_gguf_w_u32(w, AKEY("expert_group_used_count"), 1);
        rc |= cf_gguf_w_u32(w, AKEY("nextn_predict_layers"), 0);
    }
    if (s->arch == CF_ARCH_GRANITE || s->arch == CF_ARCH_GRANITEHYBRID) {
        /* Granite 3.x's (granite-3.1-2b: 12, 0.22, 1/64 = 1/head_dim, 8) */
        rc |= cf_gguf_w_f32(w, AKEY("embedding_scale"), 12.0f);
        rc |= cf_gguf_w_f32(w, AKEY("residual_scale"), 0.22f);
        rc |= cf_gguf_w_f32(w, AKEY("attention.scale"), 1.0f / (float)hd);
        rc |= cf_gguf_w_f32(w, AKEY("logit_scale"), 8.0f);
    }
    return rc;
}

static int put_metadata(cf_gguf_writer *w, const cf_mk_params *p, const cf_gguf *vocab, int n_vocab)
{
    const cf_mk_shape *s = &p->shape;
    const char *a = cf_arch_name(s->arch);
    char key[96], name[128];
    int rc = 0;
    rc |= cf_gguf_w_str(w, "general.architecture", a, strlen(a));
    snprintf(name, sizeof name, "confab-mkmodel %s %s", s->name, cf_mk_ftype_name(p->ftype));
    rc |= cf_gguf_w_str(w, "general.name", name, strlen(name));
    rc |= cf_gguf_w_u32(w, "general.file_type", llama_ftype(p->ftype));
    rc |= cf_gguf_w_u32(w, "general.quantization_version", 2);
    rc |= cf_gguf_w_u32(w, AKEY("context_length"), (uint32_t)s->n_ctx);
    rc |= cf_gguf_w_u32(w, AKEY("embedding_length"), (uint32_t)s->n_embd);
    rc |= cf_gguf_w_u32(w, AKEY("block_count"), (uint32_t)s->n_layer);
    rc |= put_ff(w, s);
    rc |= cf_gguf_w_u32(w, AKEY("attention.head_count"), (uint32_t)s->n_head);
    if (s->arch != CF_ARCH_GRANITEHYBRID) /* one per layer: put_ssm_keys */
        rc |= cf_gguf_w_u32(w, AKEY("attention.head_count_kv"),
                            (uint32_t)(s->n_head_kv ? s->n_head_kv : s->n_head));
    rc |= cf_gguf_w_f32(w, AKEY("attention.layer_norm_rms_epsilon"), s->norm_eps);
    rc |= cf_gguf_w_u32(w, AKEY("rope.dimension_count"), (uint32_t)(s->n_rot ? s->n_rot : cf_mk_head_dim(s)));
    rc |= cf_gguf_w_f32(w, AKEY("rope.freq_base"), s->rope_base);
    rc |= cf_gguf_w_u32(w, AKEY("vocab_size"), (uint32_t)n_vocab);
    rc |= put_family_keys(w, s);
    rc |= put_moe_keys(w, s);
    rc |= put_ssm_keys(w, s);
    rc |= put_gemma4_keys(w, s);
    rc |= put_mla_keys(w, s);
    for (int64_t i = 0; i < cf_gguf_n_kv(vocab); i++) {
        const cf_gguf_kv *kv = cf_gguf_kv_at(vocab, i);
        if (!strncmp(kv->key, "tokenizer.", 10))
            rc |= cf_gguf_w_copy_kv(w, kv);
    }
    return rc;
}
#undef AKEY

int cf_mkmodel(const cf_mk_params *p, cf_err *err)
{
    cf_gguf *vocab;
    if (cf_gguf_open(p->vocab_path, &vocab, err) != 0)
        return -1;
    const cf_gguf_kv *tokens = cf_gguf_get_arr(vocab, "tokenizer.ggml.tokens", CF_GGUF_STRING);
    if (!tokens || tokens->n == 0 || tokens->n > (1u << 24)) {
        cf_gguf_close(vocab);
        return cf_fail(err, "%s has no tokenizer.ggml.tokens: not a vocabulary", p->vocab_path);
    }
    const int n_vocab = (int)tokens->n;
    cf_mk_tensor *plan;
    int n;
    if (cf_mk_plan(&p->shape, p->ftype, p->pure, n_vocab, &plan, &n, err) != 0) {
        cf_gguf_close(vocab);
        return -1;
    }
    cf_gguf_writer *w = cf_gguf_writer_new();
    int rc = w ? put_metadata(w, p, vocab, n_vocab) : -1;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = cf_gguf_w_tensor(w, plan[i].name, plan[i].type, (uint32_t)plan[i].n_dims, plan[i].ne,
                              NULL);
    if (rc != 0) {
        cf_fail(err, "out of memory building the GGUF header");
    } else {
        job j = {p, plan, n};
        rc = cf_gguf_writer_write_file(w, p->out_path, fill, &j, err);
    }
    cf_gguf_writer_free(w);
    free(plan);
    cf_gguf_close(vocab);
    return rc;
}
