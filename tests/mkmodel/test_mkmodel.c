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

static void test_recipe_matches_llama_quantize(const char *file, cf_mk_ftype ft)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(shared_path(file), &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    cf_mk_shape s = {"fixture", CF_ARCH_LLAMA, 256, 2, 8, 2, 768, 2048, 10000.0f, 1e-5f, false};
    cf_mk_tensor *plan;
    int n;
    if (cf_mk_plan(&s, ft, false, 512, &plan, &n, &err) != 0) {
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
            CHECKF(p->type == t->type && p->ne[0] == t->ne[0] && p->ne[1] == t->ne[1],
                   "%s %s: planned %s %lldx%lld, llama-quantize wrote %s %lldx%lld", file, t->name,
                   cf_type_name(p->type), (long long)p->ne[0], (long long)p->ne[1],
                   cf_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1]);
    }
    free(plan);
    cf_gguf_close(g);
}

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
        {"llama-1b", CF_MK_IQ4_XS, "token_embd.weight", CF_TYPE_IQ4_XS},
        {"llama-1b", CF_MK_TQ2_0, "blk.3.ffn_down.weight", CF_TYPE_TQ2_0},
        {"llama-1b", CF_MK_MXFP4, "token_embd.weight", CF_TYPE_MXFP4},
        {"smollm2-135m", CF_MK_IQ3_XXS, "blk.0.ffn_down.weight", CF_TYPE_IQ3_XXS}, /* ne0 1536 */
        {"smollm2-135m", CF_MK_IQ4_NL, "token_embd.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_IQ4_XS, "blk.0.attn_q.weight", CF_TYPE_IQ4_NL},
        {"smollm2-135m", CF_MK_IQ4_XS, "blk.0.ffn_down.weight", CF_TYPE_IQ4_XS}, /* ne0 1536 */
        {"smollm2-135m", CF_MK_TQ2_0, "token_embd.weight", CF_TYPE_Q4_0},
        {"qwen2.5-0.5b", CF_MK_MXFP4, "blk.0.attn_k.bias", CF_TYPE_F32},
        {"qwen2.5-0.5b", CF_MK_TQ2_0, "blk.0.ffn_down.weight", CF_TYPE_TQ2_0}, /* ne0 4864 */
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

static void load_and_decode(const char *path)
{
    cf_model *m;
    cf_err err;
    if (cf_model_load(path, NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    const int V = cf_model_hparams(m)->n_vocab;
    cf_ctx_params cp = {.n_ctx = 64, .n_threads = 2};
    cf_ctx *c;
    float *logits = malloc((size_t)V * sizeof *logits);
    int32_t ids[5] = {1, 17, 300, 42, 5};
    if (cf_ctx_new(m, &cp, &c, &err) == 0) {
        CHECKF(cf_ctx_decode(c, ids, 4, logits, false, &err) == 0, "%s", err.msg);
        CHECKF(cf_ctx_decode(c, ids + 4, 1, logits, false, &err) == 0, "%s", err.msg);
        bool finite = true;
        double s2 = 0;
        for (int i = 0; i < V; i++) {
            finite = finite && isfinite(logits[i]);
            s2 += (double)logits[i] * logits[i];
        }
        CHECKF(finite && s2 > 0, "%s: logits not finite or all zero", path);
        cf_ctx_free(c);
    } else {
        CHECKF(0, "%s", err.msg);
    }
    free(logits);
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
            p.shape = (cf_mk_shape){"t", CF_ARCH_LLAMA, 0, 0, 0, 0, 0, 512, 10000.0f, 1e-5f, false};
            const char *dims = arch ? "arch=qwen2,embd=288,layers=2,heads=6,kv_heads=2,ff=512,tied=1"
                                    : "embd=256,layers=2,heads=4,kv_heads=2,ff=512";
            CHECKF(cf_mk_shape_apply_dims(&p.shape, dims, &err) == 0, "%s", err.msg);
            p.out_path = tmp_path(cf_mk_ftype_name(p.ftype));
            if (cf_mkmodel(&p, &err) != 0) {
                CHECKF(0, "%s: %s", cf_mk_ftype_name(p.ftype), err.msg);
                continue;
            }
            check_contents(p.out_path, &p, 512);
            load_and_decode(p.out_path);
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
    p.shape = (cf_mk_shape){"t", CF_ARCH_LLAMA, 0, 0, 0, 0, 0, 512, 10000.0f, 1e-5f, false};
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
        load_and_decode(p.out_path);
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
    CHECK(cf_mk_ftype_parse("q4_k_m") == CF_MK_Q4_K_M && cf_mk_ftype_parse("Q3_K") < 0);
    CHECK(cf_mk_ftype_parse("iq4_xs") == CF_MK_IQ4_XS && cf_mk_ftype_parse("mxfp4") == CF_MK_MXFP4);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_recipe_matches_llama_quantize("models/quant-Q4_K_M.gguf", CF_MK_Q4_K_M);
    test_recipe_matches_llama_quantize("models/quant-IQ3_XXS.gguf", CF_MK_IQ3_XXS);
    test_recipe_matches_llama_quantize("models/quant-IQ3_S.gguf", CF_MK_IQ3_S);
    test_recipe_matches_llama_quantize("models/quant-IQ4_NL.gguf", CF_MK_IQ4_NL);
    test_recipe_matches_llama_quantize("models/quant-IQ4_XS.gguf", CF_MK_IQ4_XS);
    test_recipe_matches_llama_quantize("models/quant-MXFP4.gguf", CF_MK_MXFP4);
    test_recipe_matches_llama_quantize("models/quant-TQ2_0.gguf", CF_MK_TQ2_0);
    test_builtin_shapes();
    test_every_type();
    test_iq_types();
    test_threads_and_seed();
    test_dims_errors();
    return test_summary("mkmodel");
}
