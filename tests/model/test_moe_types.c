/* A MoE model whose experts are F32, F16 or BF16 computes the model its
 * quantized file holds: the shared Q8_0 (or MXFP4) fixture is written out
 * again with its matrices dequantized (the experts only, and every
 * matrix), and the logits of each prompt's batched prefill must stay
 * within what rounding the activations and the weights moves them by;
 * a mix-up of the experts' and the router's inputs (gemma4's, which read
 * different rows: both F32 shared one buffer) moved them by more than
 * the logits' spread.  Routers and vectors stay F32, as llama-quantize
 * keeps them; the tensors read as F32 values (the experts' biases,
 * convolution kernels) written as F16 are refused with one line.
 * usage: test_moe_types MODEL_STEM   (e.g. gemma4moe.Q8_0) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/model.h"
#include "harness.h"
#include "json_file.h"

static bool is_expert(const char *name)
{
    return strstr(name, "_exps.weight") || strstr(name, "_shexp.weight");
}

/* A weight matrix llama-quantize would convert (not a router, a bias or
 * a convolution kernel). */
static bool is_matrix(const cf_gguf_tensor *t)
{
    const size_t n = strlen(t->name);
    return t->n_dims >= 2 && n > 7 && !strcmp(t->name + n - 7, ".weight") &&
           !strstr(t->name, "ffn_gate_inp") && !strstr(t->name, "conv");
}

/* The tensor's rows dequantized and stored as `type` (malloc'ed). */
static void *retyped(const cf_gguf_tensor *t, cf_type type)
{
    const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
    const size_t src_row = cf_row_bytes(t->type, t->ne[0]), dst_row = cf_row_bytes(type, t->ne[0]);
    uint8_t *out = malloc(dst_row * (size_t)rows);
    float *row = malloc((size_t)t->ne[0] * sizeof *row);
    for (int64_t r = 0; out && row && r < rows; r++) {
        CHECK(cf_dequantize_row(t->type, (const uint8_t *)t->data + (size_t)r * src_row, row, t->ne[0]) == 0);
        CHECK(cf_quantize_row(type, row, out + (size_t)r * dst_row, t->ne[0]) == 0);
    }
    free(row);
    return out;
}

/* Which tensors a copy converts: the experts' matrices, every weight
 * matrix, or the other tensors of two dimensions (biases of the experts,
 * convolution kernels), which the forward pass reads as F32 values. */
typedef enum { EXPERTS, MATRICES, VALUES } which;

static bool converts(const cf_gguf_tensor *t, which w)
{
    if (w == VALUES)
        return t->n_dims >= 2 && !is_matrix(t) && !strstr(t->name, "ffn_gate_inp");
    return is_matrix(t) && (w == MATRICES || is_expert(t->name));
}

/* A copy of the model file with the tensors `w` says as type; false (and
 * no file) when there are none. */
static bool write_retyped(const char *src, const char *dst, cf_type type, which w)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(src, &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return false;
    }
    cf_gguf_writer *gw = cf_gguf_writer_new();
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        cf_gguf_w_copy_kv(gw, cf_gguf_kv_at(g, i));
    const int64_t n = cf_gguf_n_tensors(g);
    void **own = calloc((size_t)n, sizeof *own);
    int converted = 0;
    for (int64_t i = 0; i < n; i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        const bool convert = t->type != type && converts(t, w);
        own[i] = convert ? retyped(t, type) : NULL;
        converted += convert;
        cf_gguf_w_tensor(gw, t->name, convert ? type : t->type, t->n_dims, t->ne, convert ? own[i] : t->data);
    }
    const bool ok = converted && cf_gguf_writer_write_file(gw, dst, NULL, NULL, &err) == 0;
    CHECKF(ok || !converted, "%s", err.msg);
    for (int64_t i = 0; i < n; i++)
        free(own[i]);
    free(own);
    cf_gguf_writer_free(gw);
    cf_gguf_close(g);
    return ok;
}

/* The recurrent and the gemma4 MoE files, whose activations' rounding
 * moves the logits most (README-2026 B7 and C7, an engine that does not
 * round as llama.cpp: RMS 1.5, 2.5 and 0.4) */
static bool flip_prone(const char *stem)
{
    return !strncmp(stem, "qwen35moe", 9) || !strncmp(stem, "gemma4moe", 9) || !strncmp(stem, "lfm2moe", 7);
}

/* Each prompt's last logits after one batched prefill (n_prompts x V). */
static float *prompt_logits(const char *path, const cf_json *prompts, int *V)
{
    cf_model *m;
    cf_ctx *c;
    cf_err err;
    cf_ctx_params p = {.n_ctx = 1024, .n_threads = 2};
    if (cf_model_load(path, NULL, &m, &err) != 0 || cf_ctx_new(m, &p, &c, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return NULL;
    }
    *V = cf_model_hparams(m)->n_vocab;
    float *lg = malloc(prompts->n * (size_t)*V * sizeof *lg);
    for (size_t i = 0; i < prompts->n; i++) {
        const cf_json *tok = cf_json_get(prompts->items[i], "tokens");
        int32_t *ids = malloc(tok->n * sizeof *ids);
        for (size_t k = 0; k < tok->n; k++)
            ids[k] = (int32_t)tok->items[k]->i;
        cf_ctx_kv_truncate(c, 0, &err);
        CHECKF(cf_ctx_decode(c, ids, (int)tok->n, lg + i * (size_t)*V, false, &err) == 0, "%s", err.msg);
        free(ids);
    }
    cf_ctx_free(c);
    cf_model_free(m);
    return lg;
}

/* Over all prompts: max |a - b| and the RMS of a - b, and of b alone. */
static void compare(const float *a, const float *b, size_t n, double *mx, double *rms, double *spread)
{
    double sq = 0, bs = 0, mean = 0;
    *mx = 0;
    for (size_t i = 0; i < n; i++)
        mean += b[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - b[i]);
        *mx = d > *mx ? d : *mx;
        sq += d * d;
        bs += (b[i] - mean) * (b[i] - mean);
    }
    *rms = sqrt(sq / (double)n);
    *spread = sqrt(bs / (double)n);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_moe_types MODEL_STEM\n");
        return 2;
    }
    if (!shared_dir())
        return TEST_SKIP;
    const char *stem = argv[1], *src;
    cf_json *j = refs_load(stem, &src);
    CHECKF(j != NULL, "cannot read the refs of %s", stem);
    if (!j)
        return test_summary(stem);
    const cf_json *prompts = cf_json_get(j, "prompts");
    int V = 0;
    float *base = prompt_logits(src, prompts, &V);
    const size_t n = prompts->n * (size_t)V;
    static const struct {
        cf_type type;
        which w;
    } cases[] = {
        {CF_TYPE_F32, EXPERTS}, {CF_TYPE_F16, EXPERTS}, {CF_TYPE_BF16, EXPERTS}, {CF_TYPE_F32, MATRICES},
        {CF_TYPE_F16, MATRICES},
    };
    enum { N_CASES = sizeof cases / sizeof cases[0] };
    float *lg[N_CASES] = {NULL};
    char dst[] = "/tmp/confab-moe-types-XXXXXX";
    const int fd = mkstemp(dst);
    close(fd);
    for (int k = 0; base && k < N_CASES; k++) {
        int V2 = 0;
        if (!write_retyped(src, dst, cases[k].type, cases[k].w) ||
            !(lg[k] = prompt_logits(dst, prompts, &V2)))
            continue;
        double mx, rms, spread;
        compare(lg[k], base, n, &mx, &rms, &spread);
        const char *what = cases[k].w == MATRICES ? "matrices" : "experts";
        CHECKF(rms <= 0.75 * spread, "%s: %s %s: rms %.3g against the file's logits, whose spread is %.3g",
               stem, cf_type_name(cases[k].type), what, rms, spread);
        printf("%-18s %-4s %-8s vs the file: max |diff| %.3g rms %.3g (the logits' spread %.3g)\n", stem,
               cf_type_name(cases[k].type), what, mx, rms, spread);
    }
    /* the same weights but for F16's rounding of them and of the
     * activations: as close as the flips of near-tied routers allow */
    if (lg[3] && lg[4]) {
        double mx, rms, spread;
        compare(lg[4], lg[3], n, &mx, &rms, &spread);
        const double tol = flip_prone(stem) ? 0.6 : 0.05;
        CHECKF(rms <= tol, "%s: F16 matrices vs F32: rms %.3g (tol %.3g)", stem, rms, tol);
        printf("%-18s F16 vs F32 (all): max |diff| %.3g rms %.3g\n", stem, mx, rms);
    }
    for (int k = 0; k < N_CASES; k++)
        free(lg[k]);
    /* values in F16: one line naming the tensor, not a model of noise */
    cf_model *m;
    cf_err err;
    if (write_retyped(src, dst, CF_TYPE_F16, VALUES)) {
        CHECKF(cf_model_load(dst, NULL, &m, &err) != 0 && strstr(err.msg, "its values must be F32"),
               "%s: F16 biases or kernels are not refused", stem);
        fprintf(stderr, "%s, its values as F16: %s\n", stem, err.msg);
    }
    unlink(dst);
    free(base);
    cf_json_free(j);
    return test_summary(stem);
}
