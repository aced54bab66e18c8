/* The IQ3 quantizers are llama.cpp's: llama-quantize made the fixtures
 * quant-IQ3_XXS/IQ3_S.gguf from quant-F32.gguf with an importance matrix
 * that is all ones for token_embd.weight and output.weight (refs
 * README-2026, Part A 1); given the same, confab writes the same bytes. */
#include "../../src/kernels/blocks.h"
#include "../../src/kernels/quant.h"
#include "../harness.h"
#include "confab/gguf.h"

typedef int (*quantizer)(const float *x, void *dst, int64_t k, const float *imatrix);

static void test_file(const cf_gguf *master, const char *type, quantizer q)
{
    char rel[64];
    snprintf(rel, sizeof rel, "models/quant-%s.gguf", type);
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(shared_path(rel), &g, &err) < 0) {
        CHECKF(0, "%s: %s", rel, err.msg);
        return;
    }
    static const char *names[] = {"token_embd.weight", "output.weight"};
    for (int n = 0; n < 2; n++) {
        const cf_gguf_tensor *t = cf_gguf_find_tensor(g, names[n]), *m = cf_gguf_find_tensor(master, names[n]);
        if (!t || !m) {
            CHECKF(0, "%s: no %s", rel, names[n]);
            continue;
        }
        const int64_t k = t->ne[0];
        const size_t rb = cf_row_bytes(t->type, k);
        float *ones = malloc((size_t)k * sizeof *ones);
        uint8_t *row = malloc(rb);
        for (int64_t i = 0; i < k; i++)
            ones[i] = 1.0f;
        int64_t differ = 0;
        for (int64_t r = 0; r < t->ne[1]; r++) {
            CHECK(q((const float *)m->data + r * k, row, k, ones) == 0);
            differ += memcmp(row, (const uint8_t *)t->data + r * rb, rb) != 0;
        }
        fprintf(stderr, "  %-7s %-17s %lld rows, %lld differ from llama-quantize's\n", type, names[n],
                (long long)t->ne[1], (long long)differ);
        CHECKF(differ == 0, "%s %s: %lld rows differ", rel, names[n], (long long)differ);
        free(ones);
        free(row);
    }
    cf_gguf_close(g);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    cf_gguf *master;
    cf_err err;
    if (cf_gguf_open(shared_path("models/quant-F32.gguf"), &master, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_file(master, "IQ3_XXS", cf_quantize_iq3_xxs);
    test_file(master, "IQ3_S", cf_quantize_iq3_s);
    cf_gguf_close(master);
    return test_summary("kernels_iq3_quant");
}
