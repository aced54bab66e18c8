/* -ngl: layers offloaded to a GPU (docs/gpu.md), on any Vulkan device
 * (lavapipe here); skipped without one.  Two runs give the same bits; the
 * cache's operations (a turn after a turn, undo, a context shift, save
 * and load) work with layers offloaded; a cache saved with the GPU loads
 * on the CPU and back; a partial -ngl offloads the last layers, and too
 * little device memory fewer; where the pass changes sides, the residual
 * takes the other side's block output with its bias and post-norm; hybrid
 * models' recurrent state and latent attention's cache work there as on
 * the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/gpu.h"
#include "confab/model.h"
#include "harness.h"

enum { N_PROMPT = 12, N_MORE = 4 };

/* The GPU's matmuls read F32 where the CPU's read rounded rows, and both
 * caches are F16 here: the F16 tolerance of ../shared/refs (0.02) for an
 * F32 model. */
static const double TOL = 0.02;

static const cf_model *model;
static int V;

static cf_ctx *ctx(int n_gpu_layers)
{
    cf_ctx_params p = {.n_ctx = 64, .n_batch = 8, .n_threads = 2, .type_k = CF_KV_F16, .type_v = CF_KV_F16,
                       .n_gpu_layers = n_gpu_layers};
    cf_ctx *c = NULL;
    cf_err err;
    CHECKF(cf_ctx_new(model, &p, &c, &err) == 0, "%s", err.msg);
    return c;
}

static double max_diff(const float *a, const float *b)
{
    double mx = 0;
    for (int i = 0; i < V; i++) {
        const double d = fabs((double)a[i] - (double)b[i]);
        mx = d > mx ? d : mx;
    }
    return mx;
}

static const int32_t *tokens(void)
{
    static int32_t t[N_PROMPT + N_MORE];
    for (int i = 0; i < N_PROMPT + N_MORE; i++)
        t[i] = (int32_t)((i * 7919 + 13) % V);
    return t;
}

/* The prompt in one batch (longer than n_batch), then N_MORE tokens one
 * at a time: the last one's logits. */
static void run(cf_ctx *c, float *out)
{
    cf_err err;
    CHECKF(cf_ctx_decode(c, tokens(), N_PROMPT, out, false, &err) == 0, "%s", err.msg);
    for (int i = 0; i < N_MORE; i++)
        CHECKF(cf_ctx_decode(c, tokens() + N_PROMPT + i, 1, out, false, &err) == 0, "%s", err.msg);
}

/* The cache of c moved into a context d (its bytes saved and loaded), and
 * d's logits of the next token. */
static void move_cache(cf_ctx *c, cf_ctx *d, float *next)
{
    cf_err err;
    const int n = cf_ctx_n_past(c);
    const uint64_t bytes = cf_ctx_kv_bytes(c, n);
    void *buf = malloc(bytes);
    CHECKF(cf_ctx_kv_save(c, n, buf, bytes, &err) == 0, "save: %s", err.msg);
    CHECKF(cf_ctx_kv_load(d, n, buf, bytes, &err) == 0, "load: %s", err.msg);
    free(buf);
    const int32_t t = 5;
    CHECKF(cf_ctx_decode(d, &t, 1, next, false, &err) == 0, "%s", err.msg);
}

/* ../shared's file, the model the contexts take; NULL (said) if it fails. */
static cf_model *load(const char *file)
{
    cf_err err;
    cf_model *m;
    if (cf_model_load(shared_path(file), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return NULL;
    }
    model = m;
    V = cf_model_hparams(m)->n_vocab;
    return m;
}

/* A model with every layer offloaded and a state of its own kind on the
 * device (a hybrid's recurrent state: lfm2's short convolutions, qwen35's
 * delta nets; latent attention's keys-only cache, deepseek2; caches
 * read by later layers, gemma4): the next
 * turn after an undo (for a hybrid a checkpoint restored, the tokens
 * evaluated again) and its state moved to the CPU and back. */
static void whole(const char *file)
{
    cf_err err;
    cf_model *m = load(file);
    if (!m)
        return;
    float *cpu = malloc((size_t)V * sizeof *cpu), *a = malloc((size_t)V * sizeof *a);
    float *b = malloc((size_t)V * sizeof *b);
    cf_ctx *c0 = ctx(0), *g1 = ctx(99), *g2 = ctx(99), *c1 = ctx(0);
    bool out;
    CHECKF(cf_ctx_gpu_layers(g1, &out) == cf_model_hparams(m)->n_layer && out, "%s: %s", file,
           cf_ctx_gpu_note(g1));
    run(c0, cpu);
    run(g1, a);
    CHECKF(max_diff(cpu, a) <= TOL, "%s: GPU vs CPU: %.3g", file, max_diff(cpu, a));
    CHECK(cf_ctx_kv_truncate(g1, N_PROMPT, &err) == 0);
    for (int i = 0; i < N_MORE; i++)
        CHECK(cf_ctx_decode(g1, tokens() + N_PROMPT + i, 1, b, false, &err) == 0);
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "%s: undo and again differ by %.3g", file, max_diff(a, b));
    move_cache(g1, c1, cpu);
    CHECK(cf_ctx_decode(g1, &(int32_t){5}, 1, a, false, &err) == 0);
    CHECKF(max_diff(cpu, a) <= TOL, "%s: the GPU's state on the CPU: %.3g", file, max_diff(cpu, a));
    CHECK(cf_ctx_kv_truncate(g1, cf_ctx_n_past(g1) - 1, &err) == 0 && cf_ctx_decode(g1, &(int32_t){5}, 1, a, false, &err) == 0);
    CHECK(cf_ctx_kv_truncate(g1, cf_ctx_n_past(g1) - 1, &err) == 0);
    move_cache(g1, g2, b);
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "%s: GPU -> GPU differs by %.3g", file, max_diff(a, b));
    cf_ctx *all[] = {c0, c1, g1, g2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        cf_ctx_free(all[i]);
    free(cpu);
    free(a);
    free(b);
    cf_model_free(m);
}

/* The pass crossing over after layer `split` - 1 (-ngl NL - split), or
 * to the output alone (split < 0: the layers do not fit), near the
 * CPU: the residual there adds the previous side's output by its bias
 * (gpt2), post-norm (gemma3) or per-layer embeddings' norm (gemma4). */
static void crossing(const char *file, int split, double tol)
{
    cf_model *m = load(file);
    if (!m)
        return;
    const int NL = cf_model_hparams(m)->n_layer;
    float *cpu = malloc((size_t)V * sizeof *cpu), *a = malloc((size_t)V * sizeof *a);
    if (split < 0) /* the layers do not fit, the output does (uploaded first) */
        setenv("CONFAB_TEST_GPU_MEM", "1000", 1);
    cf_ctx *c0 = ctx(0), *g = ctx(split < 0 ? 99 : NL - split);
    unsetenv("CONFAB_TEST_GPU_MEM");
    bool out;
    const int on = cf_ctx_gpu_layers(g, &out);
    CHECKF(split < 0 ? on == 0 && out : on == NL - split && !out, "%s: %s", file, cf_ctx_gpu_note(g));
    run(c0, cpu);
    run(g, a);
    CHECKF(max_diff(cpu, a) <= tol, "%s (%s): GPU vs CPU %.3g", file, cf_ctx_gpu_note(g), max_diff(cpu, a));
    cf_ctx_free(c0);
    cf_ctx_free(g);
    free(cpu);
    free(a);
    cf_model_free(m);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    cf_err err;
    if (cf_gpu_count(&err) == 0) {
        printf("skipped: %s\n", err.msg);
        return TEST_SKIP;
    }
    cf_model *m;
    if (cf_model_load(shared_path("models/stories260K.gguf"), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return test_summary("offload");
    }
    model = m;
    V = cf_model_hparams(m)->n_vocab;
    const int NL = cf_model_hparams(m)->n_layer;
    float *cpu = malloc((size_t)V * sizeof *cpu), *a = malloc((size_t)V * sizeof *a);
    float *b = malloc((size_t)V * sizeof *b), *x = malloc((size_t)V * sizeof *x);

    /* every layer and the output; the CPU's logits near; two runs the same */
    cf_ctx *c0 = ctx(0), *g1 = ctx(99), *g2 = ctx(99);
    bool out;
    CHECKF(cf_ctx_gpu_layers(g1, &out) == NL && out, "%s", cf_ctx_gpu_note(g1));
    printf("%s\n", cf_ctx_gpu_note(g1));
    CHECK(cf_ctx_gpu_note(c0)[0] == '\0');
    run(c0, cpu);
    run(g1, a);
    run(g2, b);
    CHECKF(max_diff(cpu, a) <= TOL, "GPU vs CPU: %.3g", max_diff(cpu, a));
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "two GPU runs differ by %.3g", max_diff(a, b));

    /* the next turn on the kept cache, and an undone one, as from scratch */
    CHECK(cf_ctx_kv_truncate(g2, N_PROMPT, &err) == 0);
    for (int i = 0; i < N_MORE; i++)
        CHECK(cf_ctx_decode(g2, tokens() + N_PROMPT + i, 1, b, false, &err) == 0);
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "undo and again differ by %.3g", max_diff(a, b));

    /* GPU -> CPU -> GPU through saved caches; GPU -> GPU gives the same bits */
    cf_ctx *c1 = ctx(0), *g3 = ctx(99), *g4 = ctx(99);
    move_cache(g1, c1, x);
    const int32_t t5 = 5;
    CHECK(cf_ctx_decode(g1, &t5, 1, a, false, &err) == 0);
    CHECKF(max_diff(a, x) <= TOL, "GPU cache on the CPU: %.3g", max_diff(a, x));
    CHECK(cf_ctx_kv_truncate(c1, cf_ctx_n_past(c1) - 1, &err) == 0);
    move_cache(c1, g3, b);
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "GPU -> CPU -> GPU differs by %.3g", max_diff(a, b));
    CHECK(cf_ctx_kv_truncate(g1, cf_ctx_n_past(g1) - 1, &err) == 0);
    move_cache(g1, g4, b);
    CHECKF(memcmp(a, b, (size_t)V * sizeof *a) == 0, "GPU -> GPU differs by %.3g", max_diff(a, b));

    /* a context shift: positions [2, 6) dropped, on the GPU and the CPU
     * (both given t5 after the prompt) */
    CHECK(cf_ctx_decode(c0, &t5, 1, cpu, false, &err) == 0 && cf_ctx_decode(g1, &t5, 1, a, false, &err) == 0);
    CHECK(cf_ctx_kv_discard(g1, 2, 6, &err) == 0 && cf_ctx_kv_discard(c0, 2, 6, &err) == 0);
    CHECK(cf_ctx_decode(g1, &t5, 1, a, false, &err) == 0 && cf_ctx_decode(c0, &t5, 1, cpu, false, &err) == 0);
    CHECKF(max_diff(cpu, a) <= TOL, "after a context shift, GPU vs CPU: %.3g", max_diff(cpu, a));

    /* -ngl 2: the last two layers, not the output */
    cf_ctx *g5 = ctx(2), *c2 = ctx(0);
    CHECKF(cf_ctx_gpu_layers(g5, &out) == 2 && !out, "%s", cf_ctx_gpu_note(g5));
    run(g5, a);
    run(c2, cpu);
    CHECKF(max_diff(cpu, a) <= TOL, "-ngl 2 vs CPU: %.3g", max_diff(cpu, a));

    /* too little device memory: the layers stay on the CPU, said, and the
     * output (uploaded first) still runs there */
    setenv("CONFAB_TEST_GPU_MEM", "1000", 1);
    cf_ctx *g6 = ctx(99);
    unsetenv("CONFAB_TEST_GPU_MEM");
    CHECKF(cf_ctx_gpu_layers(g6, &out) == 0 && out && strstr(cf_ctx_gpu_note(g6), "5 did not fit"), "%s",
           cf_ctx_gpu_note(g6));
    run(g6, a);
    CHECKF(max_diff(cpu, a) <= TOL, "the output alone on the GPU vs CPU: %.3g", max_diff(cpu, a));

    cf_ctx *all[] = {c0, c1, c2, g1, g2, g3, g4, g5, g6};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        cf_ctx_free(all[i]);
    free(cpu);
    free(a);
    free(b);
    free(x);
    cf_model_free(m);
    crossing("models/gpt2.F16.gguf", 1, TOL);
    crossing("models/gemma3.Q8_0.gguf", 1, 0.3); /* refs' Q8_0 tolerance */
    crossing("models/gemma4.F32.gguf", -1, 2e-4);
    whole("models/lfm2.F32.gguf");
    whole("models/qwen35.F32.gguf");
    whole("models/deepseek2-lite.F32.gguf");
    whole("models/gemma4.F32.gguf");
    return test_summary("offload");
}
