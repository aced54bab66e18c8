/* confab bench --draft (bench_spec.h): first the cost of checking k guesses,
 * one pass of k + 1 tokens with every position's logits, against a pass
 * of one token (while decoding is memory-bound it stays near 1x); then,
 * with -md or --lookup, greedy generation plainly and speculatively from
 * the same prompt: the speeds, whether the tokens are the same, and what
 * the guesses did. */
#include <stdlib.h>
#include <string.h>

#include "bench_spec.h"
#include "cli.h"

enum { VERIFY_DEPTH = 256, MAX_K = 8 };

/* Text whose continuation repeats itself, for --lookup to find. */
static const char PROMPT[] =
    "The list of colours: red, green, blue, yellow, red, green, blue, yellow, red, green, blue, yellow, "
    "red, green, blue, yellow. The list of numbers: one, two, three, four, one, two, three, four, one, two,";

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* Seconds of the fastest of reps passes of n tokens at VERIFY_DEPTH. */
static double verify_pass(cf_ctx *c, const int32_t *fill, int n, int reps, float *logits, cf_err *err)
{
    double best = -1;
    for (int r = 0; r <= reps; r++) {
        if (cf_ctx_kv_truncate(c, VERIFY_DEPTH, err) != 0)
            return -1;
        const double t0 = cf_now_ms();
        if (cf_ctx_decode(c, fill + VERIFY_DEPTH, n, logits, true, err) != 0)
            return -1;
        const double dt = (cf_now_ms() - t0) / 1e3;
        if (r > 0) /* the first warms up */
            best = best < 0 || dt < best ? dt : best;
    }
    return best;
}

/* Greedy tokens after the prompt, plainly (spec NULL) or speculatively;
 * seconds of the generation into *secs. */
static int greedy(cf_ctx *c, cf_spec *spec, const cf_tokens *prompt, int n, int32_t *out, double *secs,
                  cf_err *err)
{
    const int n_vocab = cf_model_hparams(cf_ctx_model(c))->n_vocab;
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    sp.temp = 0.0f;
    cf_sampler *smp = NULL;
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    int got = -1;
    if (!logits || cf_sampler_create(n_vocab, &sp, 1, &smp, err) != 0 || cf_ctx_kv_truncate(c, 0, err) != 0 ||
        cf_ctx_decode(c, prompt->ids, (int)prompt->n, logits, false, err) != 0 ||
        (spec && cf_spec_begin(spec, prompt->ids, (int)prompt->n, err) != 0))
        goto out;
    const double t0 = cf_now_ms();
    int32_t x = cf_sampler_sample(smp, logits);
    cf_sampler_accept(smp, x);
    out[0] = x;
    got = 1;
    while (got < n) {
        if (spec) {
            int k = cf_spec_step(spec, smp, x, out + got, n - got, NULL, NULL, err);
            if (k < 1) {
                got = -1;
                break;
            }
            got += k;
        } else {
            if (cf_ctx_decode(c, &x, 1, logits, false, err) != 0) {
                got = -1;
                break;
            }
            out[got] = cf_sampler_sample(smp, logits);
            cf_sampler_accept(smp, out[got++]);
        }
        x = out[got - 1];
    }
    *secs = (cf_now_ms() - t0) / 1e3;
out:
    cf_sampler_free(smp);
    free(logits);
    return got;
}

static int generation(cf_ctx *c, const cf_tokenizer *tok, ui_draft *d, int n, int reps, cf_err *err)
{
    cf_tokens prompt = {0};
    int32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    double *ta = calloc((size_t)reps, sizeof *ta), *tb = calloc((size_t)reps, sizeof *tb);
    int rc = -1;
    if (!a || !b || !ta || !tb) {
        cf_fail(err, "out of memory");
        goto out;
    }
    if (cf_tokenize(tok, PROMPT, sizeof PROMPT - 1, true, false, &prompt, err) != 0)
        goto out;
    bool same = true;
    for (int r = 0; r < reps; r++) { /* alternating, so drift hits both */
        if (greedy(c, NULL, &prompt, n, a, &ta[r], err) != n || greedy(c, d->spec, &prompt, n, b, &tb[r], err) != n)
            goto out;
        same = same && !memcmp(a, b, (size_t)n * sizeof *a);
    }
    const double plain = n / min_of(ta, reps), fast = n / min_of(tb, reps);
    char line[200];
    ui_draft_summary(d, line, sizeof line);
    printf("\ngreedy tg%d after a %zu-token prompt, the best of %d runs each:\n"
           "  plain        %8.2f t/s\n"
           "  speculative  %8.2f t/s (%.2fx), %s: %s\n"
           "  the same tokens: %s\n",
           n, prompt.n, reps, plain, fast, fast / plain, d->model ? d->model : "lookup", line, same ? "yes" : "NO");
    rc = same ? 0 : -1;
    if (!same)
        cf_fail(err, "speculative decoding gave other tokens than plain decoding");
out:
    cf_tokens_free(&prompt);
    free(a);
    free(b);
    free(ta);
    free(tb);
    return rc;
}

int bench_spec(const char *model, int threads, int n_gen, int reps, ui_draft *d)
{
    cf_err err;
    cf_model *m = NULL;
    cf_tokenizer *tok = NULL;
    cf_ctx *c = NULL;
    int32_t *fill = NULL;
    float *logits = NULL;
    int rc = CF_EXIT_MODEL;
    if (cf_model_load(model, NULL, &m, &err) != 0 || cf_tokenizer_create(cf_model_gguf(m), &tok, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    rc = CF_EXIT_ERROR;
    const int n_vocab = cf_model_hparams(m)->n_vocab;
    cf_ctx_params cp = {.n_ctx = VERIFY_DEPTH + MAX_K + 1 + 512 + n_gen, .n_threads = threads,
                        .type_k = CF_KV_F16, .type_v = CF_KV_F16};
    if (cf_ctx_new(m, &cp, &c, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    fill = malloc((VERIFY_DEPTH + MAX_K + 1) * sizeof *fill);
    logits = malloc((size_t)(MAX_K + 1) * (size_t)n_vocab * sizeof *logits);
    if (!fill || !logits) {
        cli_error("out of memory");
        goto out;
    }
    for (int i = 0; i < VERIFY_DEPTH + MAX_K + 1; i++)
        fill[i] = 1 + (int32_t)((unsigned)(i * 2654435761u) % (unsigned)(n_vocab - 1));
    if (cf_ctx_decode(c, fill, VERIFY_DEPTH, NULL, false, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    printf("checking k guesses: one pass of k + 1 tokens (each position's logits) after %d tokens,\n"
           "against a pass of one token; the best of %d, %d threads\n\n  k   ms a pass   x one token\n",
           VERIFY_DEPTH, reps, threads);
    double one = 0;
    for (int k = 0; k <= MAX_K; k++) {
        const double s = verify_pass(c, fill, k + 1, reps, logits, &err);
        if (s < 0) {
            cli_error("%s", err.msg);
            goto out;
        }
        one = k ? one : s;
        printf("  %d   %9.3f   %11.2f\n", k, s * 1e3, s / one);
    }
    if (d->model || d->lookup) {
        if ((rc = ui_draft_open(d, c, tok)) != 0)
            goto out;
        rc = CF_EXIT_ERROR;
        if (generation(c, tok, d, n_gen, reps, &err) != 0) {
            cli_error("%s", err.msg);
            goto out;
        }
    }
    rc = CF_EXIT_OK;
out:
    ui_draft_close(d);
    free(fill);
    free(logits);
    cf_ctx_free(c);
    cf_tokenizer_free(tok);
    cf_model_free(m);
    return rc;
}
