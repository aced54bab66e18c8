/* The forward pass's invariants, on small mkmodel files (F32 and F16 KV,
 * llama, qwen2, gemma3 and granitehybrid's Mamba2 with experts, a context
 * past several attention chunks):
 *   - 1, 2 and 3 threads give bit-identical logits, batched and per token,
 *     also when the count changes between calls (cf_ctx_set_threads);
 *   - a prompt gives the same bits batched (any batch size) or token by
 *     token, at every position, and so do the tokens generated after it;
 *   - weights repacked at load (a copied file) give the bits of the file's
 *     layout (a mapped one), also when another ISA reads them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/mkmodel.h"
#include "harness.h"

enum { N_PROMPT = 300, N_GEN = 24 };

static void ids(int32_t *out, int n, int V)
{
    unsigned x = 99;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        out[i] = 1 + (int32_t)((x >> 8) % (unsigned)(V - 1));
    }
}

/* logits of every prompt position, then of N_GEN single-token steps;
 * threads < 0: -threads for the prompt, then 3 */
static float *run(const cf_model *m, int threads, int n_batch, bool token_by_token, cf_kv_type kv)
{
    const int V = cf_model_hparams(m)->n_vocab, total = N_PROMPT + N_GEN;
    cf_ctx_params cp = {.n_ctx = 512, .n_batch = n_batch, .n_threads = threads < 0 ? -threads : threads,
                        .type_k = kv, .type_v = kv};
    cf_ctx *c;
    cf_err err;
    if (cf_ctx_new(m, &cp, &c, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return NULL;
    }
    float *lg = malloc(sizeof(float) * (size_t)V * total);
    int32_t tok[N_PROMPT + N_GEN];
    ids(tok, total, V);
    bool ok = true;
    if (token_by_token)
        for (int i = 0; ok && i < N_PROMPT; i++)
            ok = cf_ctx_decode(c, tok + i, 1, lg + (size_t)i * V, false, &err) == 0;
    else
        ok = cf_ctx_decode(c, tok, N_PROMPT, lg, true, &err) == 0;
    if (threads < 0)
        cf_ctx_set_threads(c, 3);
    for (int i = N_PROMPT; ok && i < total; i++)
        ok = cf_ctx_decode(c, tok + i, 1, lg + (size_t)i * V, false, &err) == 0;
    CHECKF(ok, "%s", err.msg);
    cf_ctx_free(c);
    return lg;
}

static void check_model(const char *path, cf_kv_type kv)
{
    cf_model *m;
    cf_err err;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    const size_t n = (size_t)cf_model_hparams(m)->n_vocab * (N_PROMPT + N_GEN);
    float *base = run(m, 1, 512, false, kv);
    struct {
        int threads, n_batch;
        bool tbt;
    } variants[] = {{2, 512, false}, {3, 512, false}, {2, 64, false}, {1, 37, false},
                    {1, 512, true}, {2, 512, true}, {3, 512, true}, {-1, 512, false}};
    for (size_t i = 0; base && i < sizeof variants / sizeof variants[0]; i++) {
        float *lg = run(m, variants[i].threads, variants[i].n_batch, variants[i].tbt, kv);
        CHECKF(lg && memcmp(base, lg, n * sizeof *lg) == 0,
               "%s kv %s: %d threads, batch %d%s differ from 1 thread batched", path,
               cf_kv_type_name(kv), variants[i].threads, variants[i].n_batch,
               variants[i].tbt ? ", token by token" : "");
        free(lg);
    }
    free(base);
    cf_model_free(m);
}

/* The same logits from the file copied (its matrices repacked where the
 * kernels have a layout for them) and mapped (as stored), on the best ISA
 * and on AVX2 (whose attention may round otherwise, but reads either
 * layout to the same bits). */
static void check_layouts(const char *path, cf_type t)
{
    cf_model *copied, *mapped;
    cf_err err;
    if (cf_model_load_as(path, NULL, CF_LOAD_COPY, &copied, &err) != 0 ||
        cf_model_load_as(path, NULL, CF_LOAD_MMAP, &mapped, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    const cf_gguf_tensor *wq = cf_gguf_find_tensor(cf_model_gguf(copied), "blk.0.attn_q.weight");
    CHECKF(wq && wq->type == t && wq->layout == cf_layout_best(t), "%s: attn_q not in the best layout", path);
    CHECK(cf_gguf_find_tensor(cf_model_gguf(mapped), "blk.0.attn_q.weight")->layout == CF_LAYOUT_PLAIN);
    const size_t n = (size_t)cf_model_hparams(copied)->n_vocab * (N_PROMPT + N_GEN);
    float *a = run(mapped, 2, 512, false, CF_KV_F32), *b = run(copied, 2, 512, false, CF_KV_F32);
    CHECKF(a && b && !memcmp(a, b, n * sizeof *a), "%s: repacked weights give other logits", path);
    const cf_isa best = cf_isa_active();
    if (cf_isa_set(CF_ISA_AVX2) == CF_ISA_AVX2) {
        float *c = run(mapped, 3, 64, false, CF_KV_F32), *d = run(copied, 3, 64, false, CF_KV_F32);
        CHECKF(c && d && !memcmp(c, d, n * sizeof *c), "%s: repacked weights on AVX2 give other logits", path);
        free(c);
        free(d);
    }
    cf_isa_set(best);
    free(a);
    free(b);
    cf_model_free(copied);
    cf_model_free(mapped);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    /* the middle four only for the layouts: K and V matrices (40 rows)
     * that end in rows left plain, IQ4_NL, Q4_K_M (K and V of 40 rows
     * again, rows of 5 super-blocks), and Q4_K_M 576 wide, whose rows of
     * 576 and 160 fall back to Q5_0 (as smollm2-135m's; K and V of 40
     * rows); the last, gemma3 with a window shorter than the prompt and a
     * KV head per query head, for a batch's runs of tokens, which read a
     * chunk together only where their spans of it agree; then deepseek2's
     * latent attention, 16 heads on one K-only cache row of 64 + 32, the
     * values read out of the key blocks; then granitehybrid, Mamba2 of two
     * groups beside attention and experts; q8_0 caches on the first two and
     * gemma3, q4_0 on the first */
    static const char *dims[] = {"embd=256,layers=2,heads=4,kv_heads=2,ff=512",
                                 "arch=qwen2,embd=192,layers=2,heads=6,kv_heads=2,ff=384,tied=1",
                                 "embd=320,layers=2,heads=8,kv_heads=1,ff=640",
                                 "embd=256,layers=2,heads=4,kv_heads=2,ff=512",
                                 "embd=1280,layers=2,heads=32,kv_heads=1,ff=512",
                                 "embd=576,layers=2,heads=4,kv_heads=1,head_dim=40,ff=1536",
                                 "arch=gemma3,embd=256,layers=2,heads=4,kv_heads=4,ff=512,swa=100",
                                 "arch=deepseek2,embd=128,layers=2,heads=16,kv_heads=1,head_dim=96,rot=32,ff=128,"
                                 "experts=4,experts_used=2,expert_ff=32,shexp_ff=32,kv_lora=64,nope=32,v_mla=32,"
                                 "dense_layers=1",
                                 "arch=granitehybrid,embd=128,layers=4,heads=4,kv_heads=2,ff=64,experts=4,"
                                 "experts_used=2,ssm_conv=4,ssm_state=32,ssm_k_heads=2,ssm_v_heads=8,"
                                 "attn_period=2"};
    static const cf_mk_ftype types[] = {CF_MK_Q4_0,   CF_MK_Q8_0, CF_MK_Q4_0, CF_MK_IQ4_NL, CF_MK_Q4_K_M,
                                        CF_MK_Q4_K_M, CF_MK_Q8_0, CF_MK_Q8_0, CF_MK_Q8_0};
    static const cf_type q_types[] = {CF_TYPE_Q4_0, CF_TYPE_Q8_0, CF_TYPE_Q4_0, CF_TYPE_IQ4_NL,
                                      CF_TYPE_Q4_K, CF_TYPE_Q5_0, CF_TYPE_Q8_0, CF_TYPE_Q8_0};
    for (int i = 0; i < 9; i++) {
        cf_mk_params p = {.ftype = types[i], .vocab_path = shared_path("models/stories260K.gguf"),
                          .seed = 5};
        p.shape = (cf_mk_shape){.name = "t", .arch = CF_ARCH_LLAMA, .n_ctx = 4096,
                                .rope_base = 10000.0f, .norm_eps = 1e-5f};
        cf_err err;
        CHECK(cf_mk_shape_apply_dims(&p.shape, dims[i], &err) == 0);
        char path[256];
        snprintf(path, sizeof path, "/tmp/confab-identity-%d-%d.gguf", (int)getpid(), i);
        p.out_path = path;
        if (cf_mkmodel(&p, &err) != 0) {
            CHECKF(0, "%s", err.msg);
            continue;
        }
        if (i < 2 || i >= 6) {
            check_model(path, CF_KV_F32);
            check_model(path, CF_KV_F16);
        }
        /* quantized caches, rotated (head size 64) and not (32) */
        if (i < 2 || i == 6)
            check_model(path, CF_KV_Q8_0);
        if (i == 0)
            check_model(path, CF_KV_Q4_0);
        if (i < 8) /* granitehybrid's layer 0 has no attn_q */
            check_layouts(path, q_types[i]);
        unlink(path);
    }
    return test_summary("identity");
}
