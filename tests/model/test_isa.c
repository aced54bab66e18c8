/* Every ISA level gives the same logits, byte for byte: a prompt's and
 * then single tokens', for models of the float and quantized types, on
 * each level this CPU has, and the same bytes as the x86 build (FNV-1a of
 * the logits, recorded there): the canonical order of the kernels
 * (src/kernels/internal.h) and of the vector ops (src/model/vec_simd.inc),
 * with no multiply-add fused that the code does not fuse. */
#include <stdlib.h>
#include <string.h>

#include "confab/kernels.h"
#include "confab/model.h"
#include "harness.h"

enum { N_PROMPT = 16, N_GEN = 4 };

static const struct {
    const char *file;
    uint64_t fnv; /* of the logits on x86 (AVX-512) */
} models[] = {
    {"models/stories260K.gguf", 0x6863694b4fe934d8ull},
    {"models/quant-F32.gguf", 0xcb75e9056cc12b27ull},
    {"models/quant-F16.gguf", 0x21b912e369f84c79ull},
    {"models/quant-Q8_0.gguf", 0x2011cfec9de79c82ull},
    {"models/quant-Q4_K.gguf", 0xb8de9e14fb5d6beaull},
    {"models/quant-Q6_K.gguf", 0xe8310417ccf60b76ull},
    /* the types whose ARM dots came last (docs/arm.md) */
    {"models/quant-Q2_K.gguf", 0xf284102019000032ull},
    {"models/quant-Q3_K.gguf", 0xf24cec27daceb4a3ull},
    {"models/quant-IQ1_S.gguf", 0x8396b69bca018d7bull},
    {"models/quant-IQ1_M.gguf", 0x3586591107daba09ull},
    {"models/quant-IQ2_XXS.gguf", 0xd4e3a9a84d983b83ull},
    {"models/quant-IQ2_XS.gguf", 0x7773b403adcec1a6ull},
    {"models/quant-IQ2_S.gguf", 0x514be4801aab2a10ull},
    {"models/quant-IQ3_XXS.gguf", 0xa5d3a7d381787b13ull},
    {"models/quant-IQ3_S.gguf", 0xf4bfb547f2816c88ull},
    {"models/quant-IQ4_NL.gguf", 0x3130195880996409ull},
    {"models/quant-IQ4_XS.gguf", 0xba5db5d1ba5f5e82ull},
    {"models/quant-MXFP4.gguf", 0xcfc60877619a9fefull},
    {"models/quant-TQ2_0.gguf", 0xb0c70b3c552d3ddaull},
};

static uint64_t fnv1a(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return h;
}

/* the logits of a prompt, batched, then of N_GEN single tokens */
static float *logits(const cf_model *m, size_t *n)
{
    const int V = cf_model_hparams(m)->n_vocab;
    cf_ctx_params p = {.n_ctx = 64, .n_threads = 1};
    cf_ctx *c;
    cf_err err;
    float *lg = malloc(sizeof(float) * (size_t)V * (N_PROMPT + N_GEN));
    if (!lg || cf_ctx_new(m, &p, &c, &err) != 0) {
        free(lg);
        return NULL;
    }
    int32_t tk[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++)
        tk[i] = (i * 37) % (V - 1) + 1;
    int rc = cf_ctx_decode(c, tk, N_PROMPT, lg, true, &err);
    for (int i = 0; i < N_GEN && !rc; i++) {
        const int32_t t = i + 3;
        rc = cf_ctx_decode(c, &t, 1, lg + (size_t)V * (N_PROMPT + i), false, &err);
    }
    cf_ctx_free(c);
    CHECKF(rc == 0, "decode: %s", err.msg);
    *n = sizeof(float) * (size_t)V * (N_PROMPT + N_GEN);
    return lg;
}

int main(int argc, char **argv)
{
    if (!shared_dir())
        return TEST_SKIP;
    const cf_isa best = cf_isa_best();
    const bool print = argc > 1 && !strcmp(argv[1], "print"); /* the hashes to record */
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        cf_model *m;
        cf_err err;
        if (cf_model_load(shared_path(models[i].file), NULL, &m, &err) != 0) {
            CHECKF(0, "%s", err.msg);
            continue;
        }
        cf_isa_set(CF_ISA_SCALAR);
        size_t n = 0;
        float *want = logits(m, &n);
        const uint64_t h = want ? fnv1a(want, n) : 0;
        if (print)
            printf("%s %016llx\n", models[i].file, (unsigned long long)h);
        else
            CHECKF(h == models[i].fnv, "%s: logits %016llx, on x86 %016llx", models[i].file,
                   (unsigned long long)h, (unsigned long long)models[i].fnv);
        for (int isa = CF_ISA_SCALAR + 1; isa < CF_ISA_COUNT && want; isa++) {
            if ((int)cf_isa_set((cf_isa)isa) != isa)
                continue;
            size_t n2;
            float *got = logits(m, &n2);
            CHECKF(got && n2 == n && !memcmp(got, want, n), "%s: %s gives other logits than scalar",
                   models[i].file, cf_isa_name((cf_isa)isa));
            free(got);
        }
        free(want);
        cf_model_free(m);
    }
    cf_isa_set(best);
    return test_summary("isa");
}
