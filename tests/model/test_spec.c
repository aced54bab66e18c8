/* Speculative decoding: greedy output is plain decoding's tokens and leaves
 * the cache as plain decoding does (a draft model of the same or a lower-bit
 * type, n-gram lookup; recurrent models through their checkpoints), sampled
 * output is plain decoding's tokens for the same seed, and a draft of
 * another vocabulary is refused. */
#include "confab/spec.h"
#include "harness.h"

typedef struct run {
    cf_model *m;
    cf_tokenizer *tok;
    cf_ctx *ctx;
} run;

static int open_run(const char *file, run *r)
{
    cf_err err;
    *r = (run){0};
    cf_ctx_params cp = {.n_ctx = 256, .n_threads = 2};
    if (cf_model_load(shared_path(file), NULL, &r->m, &err) != 0 ||
        cf_tokenizer_create(cf_model_gguf(r->m), &r->tok, &err) != 0 || cf_ctx_new(r->m, &cp, &r->ctx, &err) != 0) {
        fprintf(stderr, "%s: %s\n", file, err.msg);
        return -1;
    }
    return 0;
}

static void close_run(run *r)
{
    cf_ctx_free(r->ctx);
    cf_tokenizer_free(r->tok);
    cf_model_free(r->m);
}

static bool is_eog(void *ud, int32_t tok)
{
    return cf_tok_is_eog(ud, tok);
}

/* Prompt then n tokens, plainly (spec NULL) or speculatively; the tokens
 * into out, and the logits after the last into tail. */
static int generate(run *r, cf_spec *spec, const cf_sampler_params *sp, uint64_t seed, const cf_tokens *prompt,
                    int n, int32_t *out, float *tail)
{
    cf_err err;
    const int n_vocab = cf_model_hparams(r->m)->n_vocab;
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    cf_sampler *smp = NULL;
    int got = -1;
    if (!logits || cf_sampler_create(n_vocab, sp, seed, &smp, &err) != 0 ||
        cf_ctx_kv_truncate(r->ctx, 0, &err) != 0 ||
        cf_ctx_decode(r->ctx, prompt->ids, (int)prompt->n, logits, false, &err) != 0)
        goto out;
    for (size_t i = 0; i < prompt->n; i++)
        cf_sampler_accept(smp, prompt->ids[i]);
    if (spec && cf_spec_begin(spec, prompt->ids, (int)prompt->n, &err) != 0)
        goto out;
    got = 0;
    int32_t x = cf_sampler_sample(smp, logits);
    cf_sampler_accept(smp, x);
    out[got++] = x;
    while (got < n && !cf_tok_is_eog(r->tok, x)) {
        if (!spec) {
            if (cf_ctx_decode(r->ctx, &x, 1, logits, false, &err) != 0)
                goto fail;
            x = cf_sampler_sample(smp, logits);
            if (!cf_tok_is_eog(r->tok, x))
                cf_sampler_accept(smp, x);
            out[got++] = x;
            continue;
        }
        int32_t step[64];
        int k = cf_spec_step(spec, smp, x, step, n - got < 64 ? n - got : 64, is_eog, r->tok, &err);
        if (k < 1)
            goto fail;
        memcpy(out + got, step, (size_t)k * sizeof *step);
        got += k;
        x = step[k - 1];
    }
    /* the cache is plain decoding's: the next token's logits say so */
    if (tail && !cf_tok_is_eog(r->tok, x) && cf_ctx_decode(r->ctx, &x, 1, tail, false, &err) != 0)
        goto fail;
    goto out;
fail:
    fprintf(stderr, "generate: %s\n", err.msg);
    got = -1;
out:
    cf_sampler_free(smp);
    free(logits);
    return got;
}

static int tokenize(run *r, const char *text, cf_tokens *out)
{
    cf_err err;
    *out = (cf_tokens){0};
    if (cf_tokenize(r->tok, text, strlen(text), true, false, out, &err) != 0) {
        fprintf(stderr, "tokenize: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static const char *PROMPT = "Once upon a time, there was a little dog. The little dog liked to play. "
                            "Once upon a time, there was a little";

/* Greedy: the same tokens and the same cache with each drafter. */
static void greedy_same(const char *target, const char *draft_file, int draft_max)
{
    enum { N = 40 };
    run t, d = {0};
    if (open_run(target, &t) != 0 || (draft_file && open_run(draft_file, &d) != 0)) {
        CHECKF(0, "%s: cannot open", target);
        return;
    }
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    sp.temp = 0.0f;
    cf_tokens prompt;
    if (tokenize(&t, PROMPT, &prompt) != 0) {
        CHECK(0);
        goto out;
    }
    const int n_vocab = cf_model_hparams(t.m)->n_vocab;
    float *tail_a = calloc((size_t)n_vocab, sizeof(float)), *tail_b = calloc((size_t)n_vocab, sizeof(float));
    int32_t a[N], b[N];
    int na = generate(&t, NULL, &sp, 1, &prompt, N, a, tail_a);
    int past_a = cf_ctx_n_past(t.ctx);

    cf_spec_params p;
    cf_spec_params_default(&p);
    p.draft_max = draft_max;
    p.p_min = 0.0f;
    cf_spec *spec = NULL;
    cf_err err;
    CHECKF(cf_spec_new(t.ctx, draft_file ? d.ctx : NULL, &p, &spec, &err) == 0, "%s", err.msg);
    int nb = spec ? generate(&t, spec, &sp, 1, &prompt, N, b, tail_b) : -1;
    CHECKF(na > 0 && na == nb, "%s / %s: %d tokens plainly, %d speculatively", target,
           draft_file ? draft_file : "lookup", na, nb);
    CHECKF(nb == na && memcmp(a, b, (size_t)na * sizeof *a) == 0, "%s / %s: other tokens", target,
           draft_file ? draft_file : "lookup");
    CHECKF(cf_ctx_n_past(t.ctx) == past_a, "%s: cache of %d positions, plainly %d", target, cf_ctx_n_past(t.ctx),
           past_a);
    CHECKF(memcmp(tail_a, tail_b, (size_t)n_vocab * sizeof(float)) == 0, "%s / %s: the next logits differ", target,
           draft_file ? draft_file : "lookup");
    if (spec) {
        const cf_spec_stats *st = cf_spec_get_stats(spec);
        printf("%-22s %-22s drafted %3lld accepted %3lld in %3lld passes: %.2f tokens a pass\n", target,
               draft_file ? draft_file : "lookup", (long long)st->drafted, (long long)st->accepted,
               (long long)st->steps, st->steps ? (double)st->tokens / (double)st->steps : 0.0);
        /* a draft of the same weights always agrees */
        if (draft_file && !strcmp(draft_file, target))
            CHECKF(st->accepted == st->drafted, "%s: its own draft rejected", target);
        CHECK(st->drafted > 0 || !draft_file);
    }
    cf_spec_free(spec);
    free(tail_a);
    free(tail_b);
    cf_tokens_free(&prompt);
out:
    close_run(&t);
    if (draft_file)
        close_run(&d);
}

/* Sampled: each position is drawn from the target's logits by the caller's
 * sampler as plain decoding draws it, one draw a token, so the same seed
 * gives the same tokens, guesses kept or not (and so, across seeds, the
 * same distribution). */
static void sampled_same(bool lookup)
{
    enum { SEEDS = 300, N = 12 };
    run t, d = {0};
    if (open_run("models/stories260K.gguf", &t) != 0 || (!lookup && open_run("models/stories260K.gguf", &d) != 0)) {
        CHECK(0);
        return;
    }
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    sp.temp = 1.0f;
    cf_tokens prompt = {0};
    cf_spec_params p;
    cf_spec_params_default(&p);
    p.p_min = 0.0f;
    cf_spec *spec = NULL;
    cf_err err;
    CHECKF(cf_spec_new(t.ctx, lookup ? NULL : d.ctx, &p, &spec, &err) == 0, "%s", err.msg);
    if (!spec || tokenize(&t, PROMPT, &prompt) != 0)
        goto out;
    int differ = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        int32_t a[N], b[N];
        int na = generate(&t, NULL, &sp, seed, &prompt, N, a, NULL);
        int nb = generate(&t, spec, &sp, seed, &prompt, N, b, NULL);
        differ += na < 1 || na != nb || memcmp(a, b, (size_t)na * sizeof *a) != 0;
    }
    const cf_spec_stats *st = cf_spec_get_stats(spec);
    printf("sampled, %s draft: %d of %d seeds differ; accepted %lld of %lld guesses\n", lookup ? "lookup" : "model",
           differ, SEEDS, (long long)st->accepted, (long long)st->drafted);
    CHECKF(differ == 0, "%d seeds gave other tokens", differ);
    /* both outcomes of a guess were met */
    CHECK(st->accepted > 0 && st->accepted < st->drafted);
out:
    cf_spec_free(spec);
    cf_tokens_free(&prompt);
    close_run(&t);
    if (!lookup)
        close_run(&d);
}

static void vocab_refused(void)
{
    run a, b;
    if (open_run("models/stories260K.gguf", &a) != 0 || open_run("models/llama-spm.Q8_0.gguf", &b) != 0) {
        CHECK(0);
        return;
    }
    cf_err err;
    CHECK(cf_spec_vocab_check(a.tok, a.tok, &err) == 0);
    CHECK(cf_spec_vocab_check(a.tok, b.tok, &err) != 0 && strstr(err.msg, "vocabulary"));
    cf_spec_params p;
    cf_spec_params_default(&p);
    cf_spec *s = NULL;
    CHECK(cf_spec_new(a.ctx, b.ctx, &p, &s, &err) != 0 && !s && strstr(err.msg, "vocabulary"));
    p.draft_max = 0;
    CHECK(cf_spec_params_check(&p, &err) != 0 && strstr(err.msg, "draft-max"));
    close_run(&a);
    close_run(&b);
}

int main(void)
{
    if (!shared_dir()) {
        printf("no ../shared: skipped\n");
        return TEST_SKIP;
    }
    greedy_same("models/stories260K.gguf", "models/stories260K.gguf", 8);
    greedy_same("models/stories260K.gguf", NULL, 8);
    greedy_same("models/quant-Q8_0.gguf", "models/quant-Q4_0.gguf", 4);
    greedy_same("models/quant-Q8_0.gguf", NULL, 16);
    greedy_same("models/qwen35.Q8_0.gguf", "models/qwen35.Q8_0.gguf", 4);
    greedy_same("models/qwen35.Q8_0.gguf", NULL, 4);
    greedy_same("models/lfm2.Q8_0.gguf", NULL, 4);
    sampled_same(false);
    sampled_same(true);
    vocab_refused();
    printf("%d checks, %d failed\n", harness_checks, harness_failures);
    return harness_failures ? 1 : 0;
}
