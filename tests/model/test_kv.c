/* The KV cache operations the session relies on, and model-load errors:
 *   - truncate then decode == a fresh prefill of the kept tokens (exact);
 *   - discard a range (context shift, keys re-rotated) then decode ==
 *     a fresh prefill of the kept tokens, within the F32 tolerance;
 *   - save/load of the used positions continues exactly;
 *   - a full context or a bad id fails and leaves the cache as it was;
 *   - unsupported architectures and tensor types are named. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/kernels.h"
#include "confab/model.h"
#include "harness.h"

static double max_abs_diff(const float *a, const float *b, int n)
{
    double mx = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        mx = d > mx ? d : mx;
    }
    return mx;
}

/* deterministic token ids in [3, V) */
static void make_ids(int32_t *ids, int n, int V, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        ids[i] = 3 + (int32_t)((seed >> 8) % (unsigned)(V - 3));
    }
}

static void fresh(cf_ctx *c, const int32_t *ids, int n, float *lg)
{
    cf_err err;
    CHECK(cf_ctx_kv_truncate(c, 0, &err) == 0);
    CHECKF(cf_ctx_decode(c, ids, n, lg, false, &err) == 0, "%s", err.msg);
}

/* The first keys and values of a cache's saved positions [0, n) (its
 * first layer's: rows of the cache's types), widened. */
static float *widened(const cf_ctx *c, int n, size_t keys, size_t values)
{
    static const cf_type types[] = {
        [CF_KV_F32] = CF_TYPE_F32, [CF_KV_F16] = CF_TYPE_F16, [CF_KV_BF16] = CF_TYPE_BF16,
        [CF_KV_Q8_0] = CF_TYPE_Q8_0, [CF_KV_Q4_0] = CF_TYPE_Q4_0,
    };
    const uint64_t bytes = cf_ctx_kv_bytes(c, n);
    uint8_t *raw = malloc(bytes);
    float *out = malloc((keys + values) * sizeof *out);
    cf_err err;
    CHECK(cf_ctx_kv_save(c, n, raw, bytes, &err) == 0);
    const cf_type tk = types[cf_ctx_kv_type_k(c)], tv = types[cf_ctx_kv_type_v(c)];
    cf_dequantize_row(tk, raw, out, (int64_t)keys);
    if (values)
        cf_dequantize_row(tv, raw + cf_row_bytes(tk, (int64_t)keys), out + keys, (int64_t)values);
    free(raw);
    return out;
}

/* max |diff| of layer 0's K and V between two caches over n positions */
/* hd: layer 0's head size when it differs from the model's largest */
static void layer0_diff(const cf_ctx *a, const cf_ctx *b, int n, int hd, double *dk, double *dv)
{
    const cf_hparams *hp = cf_model_hparams(cf_ctx_model(a));
    const size_t half = (size_t)hp->n_head_kv * (size_t)n * (size_t)(hd ? hd : hp->head_dim); /* of K */
    const size_t values = hp->kv_lora ? 0 : half; /* latent attention caches keys only */
    float *x = widened(a, n, half, values), *y = widened(b, n, half, values);
    *dk = *dv = 0;
    for (size_t i = 0; i < half + values; i++) {
        double d = fabs((double)x[i] - (double)y[i]);
        double *slot = i < half ? dk : dv;
        *slot = d > *slot ? d : *slot;
    }
    free(x);
    free(y);
}

static void test_cache_ops(const char *model_rel, cf_kv_type kv_type, double shift_tol, int layer0_hd)
{
    cf_model *m;
    cf_err err;
    if (cf_model_load(shared_path(model_rel), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    const int V = cf_model_hparams(m)->n_vocab;
    cf_ctx_params p = {.n_ctx = 512, .n_batch = 64, .n_threads = 2, .type_k = kv_type, .type_v = kv_type};
    cf_ctx *c, *d;
    CHECK(cf_ctx_new(m, &p, &c, &err) == 0 && cf_ctx_new(m, &p, &d, &err) == 0);
    enum { A = 40, B = 150, C = 90, D = 20 };
    int32_t ids[A + B + C + D], kept[A + C + D];
    make_ids(ids, A + B + C + D, V, 7);
    memcpy(kept, ids, A * sizeof *ids);
    memcpy(kept + A, ids + A + B, (C + D) * sizeof *ids);
    float *l1 = malloc((size_t)V * sizeof *l1), *l2 = malloc((size_t)V * sizeof *l2);

    /* truncate: A+B, keep A, then C  ==  A+C */
    fresh(c, ids, A + B, NULL);
    CHECK(cf_ctx_kv_truncate(c, A, &err) == 0 && cf_ctx_n_past(c) == A);
    CHECK(cf_ctx_decode(c, ids + A + B, C, l1, false, &err) == 0);
    fresh(d, kept, A + C, l2);
    CHECKF(max_abs_diff(l1, l2, V) == 0, "truncate: differs by %.3g", max_abs_diff(l1, l2, V));

    /* shift: A+B+C, drop B.  The kept tokens' deeper layers attended to B,
     * so only layer 0 (which depends on token and position alone) can match
     * a fresh prefill of A+C: its V exactly, its re-rotated K closely.  A
     * one-layer model (test_shift_one_layer) checks the logits. */
    fresh(c, ids, A + B + C, NULL);
    CHECK(cf_ctx_kv_discard(c, A, A + B, &err) == 0 && cf_ctx_n_past(c) == A + C);
    fresh(d, kept, A + C, NULL);
    double dk, dv;
    layer0_diff(c, d, A + C, layer0_hd, &dk, &dv);
    CHECKF(dk <= shift_tol && dv == 0, "%s: layer-0 cache after a shift differs from a fresh "
           "prefill: K %.3g V %.3g", model_rel, dk, dv);
    fprintf(stderr, "%s kv %s: shifted layer-0 keys vs fresh prefill: max |diff| %.3g\n", model_rel,
            cf_kv_type_name(kv_type), dk);

    /* save the used positions, load them into another context, continue
     * (A + B + C positions: more than one slab of the cache) */
    fresh(c, ids, A + B + C, NULL);
    uint64_t bytes = cf_ctx_kv_bytes(c, A + B + C);
    void *buf = malloc(bytes);
    CHECK(cf_ctx_kv_save(c, A + B + C, buf, bytes, &err) == 0);
    CHECK(cf_ctx_kv_truncate(d, 0, &err) == 0);
    CHECK(cf_ctx_kv_load(d, A + B + C, buf, bytes, &err) == 0 && cf_ctx_n_past(d) == A + B + C);
    CHECK(cf_ctx_kv_load(d, A + B + C, buf, bytes - 1, &err) != 0); /* wrong size: refused */
    CHECK(cf_ctx_n_past(d) == A + B + C);
    CHECK(cf_ctx_decode(c, ids + A + B + C, 5, l1, false, &err) == 0);
    CHECK(cf_ctx_decode(d, ids + A + B + C, 5, l2, false, &err) == 0);
    CHECKF(max_abs_diff(l1, l2, V) == 0, "restored cache differs");
    free(buf);

    /* errors leave the cache alone */
    int before = cf_ctx_n_past(c);
    int32_t big[600];
    make_ids(big, 600, V, 3);
    CHECK(cf_ctx_decode(c, big, 600, l1, false, &err) != 0 && strstr(err.msg, "context full"));
    CHECK(cf_ctx_n_past(c) == before);
    int32_t bad = V;
    CHECK(cf_ctx_decode(c, &bad, 1, l1, false, &err) != 0 && strstr(err.msg, "outside the vocabulary"));
    CHECK(cf_ctx_kv_discard(c, 5, before + 1, &err) != 0);
    CHECK(cf_ctx_kv_truncate(c, before + 1, &err) != 0);
    CHECK(cf_ctx_n_past(c) == before);

    free(l1);
    free(l2);
    cf_ctx_free(c);
    cf_ctx_free(d);
    cf_model_free(m);
}

/* A one-layer llama of width 256 with attn_q of type q_type.  nan_tensor
 * (if any) holds one NaN, at row 3 (F32) or, nan_type Q4_0, Q5_0, Q8_0 or
 * Q4_K, in a block scale of row 19 (whose matrix a load repacks: the blame
 * must still name the row). */
static void write_tiny(const char *path, const char *arch, cf_type q_type, const char *nan_tensor,
                       cf_type nan_type)
{
    cf_gguf_writer *w = cf_gguf_writer_new();
    char k[64];
    cf_gguf_w_str(w, "general.architecture", arch, strlen(arch));
#define U32(key, v)                                  \
    snprintf(k, sizeof k, "%s." key, arch);          \
    cf_gguf_w_u32(w, k, v)
    U32("context_length", 64);
    U32("embedding_length", 256);
    U32("block_count", 1);
    U32("feed_forward_length", 256);
    U32("attention.head_count", 4);
#undef U32
    static float zeros[256 * 256], one_nan[256 * 256];
    /* 256 rows of Q4_0 (8 blocks of 18), Q5_0 (8 of 22), Q8_0 (8 of 34) or
     * Q4_K (one of 144) */
    static uint8_t q_nan[256 * 8 * 34];
    one_nan[3 * 256 + 5] = NAN;
    memset(q_nan, 0, sizeof q_nan);
    /* an F16 NaN as the d of block 2 (Q4_0, Q5_0, Q8_0) or of the super-block */
    q_nan[(nan_type == CF_TYPE_Q4_K ? 19 * 144 : (19 * 8 + 2) * cf_type_get(nan_type)->type_size) + 1] = 0x7E;
    int64_t mat[2] = {256, 256}, vec[1] = {256}, emb[2] = {256, 16};
    cf_gguf_w_tensor(w, "token_embd.weight", CF_TYPE_F32, 2, emb, zeros);
    cf_gguf_w_tensor(w, "output_norm.weight", CF_TYPE_F32, 1, vec, zeros);
    cf_gguf_w_tensor(w, "blk.0.attn_norm.weight", CF_TYPE_F32, 1, vec, zeros);
    cf_gguf_w_tensor(w, "blk.0.ffn_norm.weight", CF_TYPE_F32, 1, vec, zeros);
    cf_gguf_w_tensor(w, "blk.0.attn_q.weight", q_type, 2, mat, zeros);
    static const char *rest[] = {"attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
    for (int i = 0; i < 6; i++) {
        snprintf(k, sizeof k, "blk.0.%s.weight", rest[i]);
        const bool nan = nan_tensor && !strcmp(k, nan_tensor);
        const bool q = nan && nan_type != CF_TYPE_F32;
        cf_gguf_w_tensor(w, k, q ? nan_type : CF_TYPE_F32, 2, mat, q ? (const void *)q_nan : nan ? one_nan : zeros);
    }
    cf_err err;
    CHECKF(cf_gguf_writer_write_file(w, path, NULL, NULL, &err) == 0, "%s", err.msg);
    cf_gguf_writer_free(w);
}

/* quant-F32 cut down to its first layer: a shift must then give exactly
 * the logits of a fresh prefill of the kept tokens (within F32 tolerance). */
static void test_shift_one_layer(void)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(shared_path("models/quant-F32.gguf"), &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_gguf_writer *w = cf_gguf_writer_new();
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        cf_gguf_w_copy_kv(w, cf_gguf_kv_at(g, i));
    cf_gguf_w_u32(w, "llama.block_count", 1);
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        if (strncmp(t->name, "blk.", 4) != 0 || strncmp(t->name, "blk.0.", 6) == 0)
            cf_gguf_w_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data);
    }
    char path[] = "/tmp/confab-1layer-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECKF(cf_gguf_writer_write_file(w, path, NULL, NULL, &err) == 0, "%s", err.msg);
    cf_gguf_writer_free(w);
    cf_gguf_close(g);

    cf_model *m;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        unlink(path);
        return;
    }
    const int V = cf_model_hparams(m)->n_vocab;
    cf_ctx_params p = {.n_ctx = 512, .n_threads = 1};
    cf_ctx *c, *d;
    CHECK(cf_ctx_new(m, &p, &c, &err) == 0 && cf_ctx_new(m, &p, &d, &err) == 0);
    enum { A = 30, B = 200, C = 60, D = 10 };
    int32_t ids[A + B + C + D], kept[A + C + D];
    make_ids(ids, A + B + C + D, V, 11);
    memcpy(kept, ids, A * sizeof *ids);
    memcpy(kept + A, ids + A + B, (C + D) * sizeof *ids);
    float *l1 = malloc((size_t)V * sizeof *l1), *l2 = malloc((size_t)V * sizeof *l2);
    fresh(c, ids, A + B + C, NULL);
    CHECK(cf_ctx_kv_discard(c, A, A + B, &err) == 0);
    CHECK(cf_ctx_decode(c, ids + A + B + C, D, l1, false, &err) == 0);
    fresh(d, kept, A + C + D, l2);
    double dd = max_abs_diff(l1, l2, V);
    CHECKF(dd <= 2e-4, "one layer: logits after a shift differ from a fresh prefill by %.3g", dd);
    fprintf(stderr, "one-layer model: logits after a shift vs fresh prefill: max |diff| %.3g\n", dd);
    free(l1);
    free(l2);
    cf_ctx_free(c);
    cf_ctx_free(d);
    cf_model_free(m);
    unlink(path);
}

static void test_load_errors(void)
{
    char path[] = "/tmp/confab-tiny-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    cf_model *m;
    cf_err err;

    write_tiny(path, "llama", CF_TYPE_F32, NULL, CF_TYPE_F32);
    CHECKF(cf_model_load(path, NULL, &m, &err) == 0, "tiny llama: %s", err.msg);
    if (m) {
        CHECK(cf_model_hparams(m)->tied_output && cf_model_hparams(m)->n_vocab == 16);
        cf_model_free(m);
    }
    write_tiny(path, "mamba", CF_TYPE_F32, NULL, CF_TYPE_F32);
    CHECK(cf_model_load(path, NULL, &m, &err) != 0 && strstr(err.msg, "'mamba' is not supported") &&
          strstr(err.msg, "qwen2"));
    write_tiny(path, "llama", CF_TYPE_TQ1_0, NULL, CF_TYPE_F32);
    CHECK(cf_model_load(path, NULL, &m, &err) != 0 && strstr(err.msg, "blk.0.attn_q.weight") &&
          strstr(err.msg, "TQ1_0"));
    unlink(path);
}

/* A well-formed file with a NaN weight: decoding fails with a model error
 * naming the tensor (no NaN reaches an int conversion on the way), and
 * leaves the cache as it was. */
static void test_nonfinite(cf_type nan_type, const char *blame)
{
    char path[] = "/tmp/confab-nan-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_tiny(path, "llama", CF_TYPE_F32, "blk.0.ffn_down.weight", nan_type);
    cf_model *m;
    cf_ctx *c;
    cf_err err;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        unlink(path);
        return;
    }
    cf_ctx_params p = {.n_ctx = 64, .n_threads = 2};
    CHECK(cf_ctx_new(m, &p, &c, &err) == 0);
    float lg[16];
    int32_t ids[4] = {1, 2, 3, 4};
    CHECKF(cf_ctx_decode(c, ids, 4, lg, false, &err) != 0 && err.code == CF_E_MODEL && strstr(err.msg, blame),
           "%s: %s", cf_type_name(nan_type), err.msg);
    CHECK(cf_ctx_n_past(c) == 0);
    cf_ctx_free(c);
    cf_model_free(m);
    unlink(path);
}

/* deepseek2's latent cache stays f16 or f32: a quantized one is refused
 * with the reason, before anything is allocated. */
static void test_latent_refuses_quantized(void)
{
    cf_model *m;
    cf_err err;
    if (cf_model_load(shared_path("models/deepseek2-lite.F32.gguf"), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_ctx_params p = {.n_ctx = 64, .type_k = CF_KV_Q8_0, .type_v = CF_KV_Q8_0};
    cf_ctx *c = NULL;
    CHECKF(cf_ctx_new(m, &p, &c, &err) != 0 && strstr(err.msg, "latent attention"), "%s",
           c ? "a q8_0 latent cache was made" : err.msg);
    cf_model_free(m);
}

int main(void)
{
    test_load_errors();
    test_nonfinite(CF_TYPE_F32, "'blk.0.ffn_down.weight' holds NaN or Inf (row 3)");
    test_nonfinite(CF_TYPE_Q4_0, "'blk.0.ffn_down.weight' holds NaN or Inf (row 19)");
    test_nonfinite(CF_TYPE_Q5_0, "'blk.0.ffn_down.weight' holds NaN or Inf (row 19)");
    test_nonfinite(CF_TYPE_Q8_0, "'blk.0.ffn_down.weight' holds NaN or Inf (row 19)");
    test_nonfinite(CF_TYPE_Q4_K, "'blk.0.ffn_down.weight' holds NaN or Inf (row 19)");
    if (!shared_dir())
        return test_summary("test_kv");
    test_shift_one_layer();
    test_cache_ops("models/quant-F32.gguf", CF_KV_F32, 1e-4, 0);
    test_cache_ops("models/quant-F32.gguf", CF_KV_F16, 0.01, 0);
    /* quantized caches: a shift widens the keys, takes them out of the
     * Hadamard basis (qwen3: H_128), moves and quantizes them again, within
     * about a quantization step of a fresh prefill; save/load is exact */
    test_cache_ops("models/quant-F32.gguf", CF_KV_Q8_0, 0.1, 0);
    test_cache_ops("models/qwen3.Q8_0.gguf", CF_KV_Q8_0, 0.1, 0);
    test_cache_ops("models/qwen3.Q8_0.gguf", CF_KV_Q4_0, 1.0, 0);
    test_cache_ops("models/gemma4.F32.gguf", CF_KV_Q8_0, 0.1, 32);
    test_latent_refuses_quantized();
    test_cache_ops("models/qwen2-shape.Q8_0.gguf", CF_KV_F32, 1e-4, 0);
    test_cache_ops("models/phi3.Q8_0.gguf", CF_KV_F32, 1e-4, 0);
    /* gemma3 slides (window 8) on layers 0-4 with a RoPE base of their own:
     * truncating back 150 positions is exact because its caches are kept
     * whole, and the shift re-rotates by the sliding layers' angles */
    test_cache_ops("models/gemma3.Q8_0.gguf", CF_KV_F32, 1e-4, 0);
    test_cache_ops("models/smollm3.Q8_0.gguf", CF_KV_F32, 1e-4, 0);
    test_cache_ops("models/olmo2.Q8_0.gguf", CF_KV_F32, 1e-4, 0);
    /* gemma4: sliding and global layers of different head sizes and RoPE
     * dims, the last three reading earlier layers' caches */
    test_cache_ops("models/gemma4.F32.gguf", CF_KV_F32, 1e-4, 32);
    /* deepseek2: one latent row a position, its rope part after the latent */
    test_cache_ops("models/deepseek2-lite.F32.gguf", CF_KV_F32, 1e-4, 0);
    test_cache_ops("models/deepseek2-v3.F32.gguf", CF_KV_F16, 0.01, 0);
    return test_summary("test_kv");
}
