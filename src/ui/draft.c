/* Speculative decoding options and the draft model's loading (draft.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "draft.h"

void ui_draft_init(ui_draft *d)
{
    memset(d, 0, sizeof *d);
    cf_spec_params_default(&d->p);
}

bool ui_draft_takes_value(const char *name)
{
    return !strcmp(name, "model-draft") || !strcmp(name, "draft-max") || !strcmp(name, "draft-min") ||
           !strcmp(name, "draft-p-min");
}

int ui_draft_option(ui_draft *d, const char *name, const char *value)
{
    long long v;
    double f;
    if (!strcmp(name, "lookup")) {
        d->lookup = true;
        return 1;
    }
    if (!ui_draft_takes_value(name))
        return 0;
    char label[32];
    snprintf(label, sizeof label, "--%s", name);
    if (!strcmp(name, "model-draft")) {
        d->model = value;
    } else if (!strcmp(name, "draft-min")) {
        if (!cli_parse_int(label, value, 0, 64, &v))
            return -1;
        d->p.draft_min = (int)v;
    } else if (!strcmp(name, "draft-p-min")) {
        if (!cli_parse_float(label, value, 0.0, 1.0, &f))
            return -1;
        d->p.p_min = (float)f;
    } else {
        if (!cli_parse_int(label, value, 1, 64, &v))
            return -1;
        d->p.draft_max = (int)v;
    }
    return 1;
}

void ui_draft_argv(int argc, char **argv)
{
    static char long_name[] = "--model-draft";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-md"))
            argv[i] = long_name;
}

void ui_draft_usage(FILE *f)
{
    fputs("  -md, --model-draft FILE  speculative decoding: a smaller model of the same\n"
          "                           vocabulary guesses, the model checks its guesses in\n"
          "                           one pass (the same tokens as without it)\n"
          "      --lookup             speculative decoding with guesses from the context\n"
          "                           itself (n-grams of the prompt and the reply)\n"
          "      --draft-max N        guesses checked at most in one pass (default 16)\n"
          "      --draft-min N        fewer guesses are not checked (default 0)\n"
          "      --draft-p-min P      the draft model stops guessing below this\n"
          "                           probability (default 0.75)\n",
          f);
}

int ui_draft_open(ui_draft *d, cf_ctx *target, const cf_tokenizer *target_tok, int threads)
{
    cf_err err;
    if (!d->model && !d->lookup)
        return 0;
    if (d->model && d->lookup) {
        cli_error("-md and --lookup: choose one way to guess");
        return CF_EXIT_USAGE;
    }
    if (d->model) {
        char *path = cli_model_path(d->model);
        if (!path)
            return CF_EXIT_MODEL;
        cf_ctx_params cp = {.n_ctx = cf_ctx_n_ctx(target), .n_threads = threads, .type_k = CF_KV_F16, .type_v = CF_KV_F16};
        int rc = cf_model_load(path, NULL, &d->m, &err);
        free(path);
        if (rc != 0 || cf_tokenizer_create(cf_model_gguf(d->m), &d->tok, &err) != 0) {
            cli_error("draft model: %s", err.msg);
            return CF_EXIT_MODEL;
        }
        if (cf_spec_vocab_check(target_tok, d->tok, &err) != 0) {
            cli_error("-md %s: %s", d->model, err.msg);
            return CF_EXIT_USAGE;
        }
        if (cf_ctx_new(d->m, &cp, &d->ctx, &err) != 0) {
            cli_error("draft model: %s", err.msg);
            return CF_EXIT_ERROR;
        }
    }
    if (cf_spec_new(target, d->ctx, &d->p, &d->spec, &err) != 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_USAGE;
    }
    return 0;
}

void ui_draft_close(ui_draft *d)
{
    cf_spec_free(d->spec);
    cf_ctx_free(d->ctx);
    cf_tokenizer_free(d->tok);
    cf_model_free(d->m);
    d->spec = NULL;
    d->ctx = NULL;
    d->tok = NULL;
    d->m = NULL;
}

void ui_draft_summary(const ui_draft *d, char *buf, size_t n)
{
    const cf_spec_stats *st = d->spec ? cf_spec_get_stats(d->spec) : NULL;
    if (!st) {
        snprintf(buf, n, "no speculation");
        return;
    }
    snprintf(buf, n, "drafted %lld, accepted %lld (%.0f %%), %lld tokens in %lld passes (%.2f a pass)",
             (long long)st->drafted, (long long)st->accepted,
             st->drafted ? 100.0 * (double)st->accepted / (double)st->drafted : 0.0, (long long)st->tokens,
             (long long)st->steps, st->steps ? (double)st->tokens / (double)st->steps : 0.0);
}
