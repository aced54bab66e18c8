/* What the JSON grammar costs a token: random logits sampled through the
 * mask (temperature 1, so the walk wanders through strings, numbers,
 * nesting), the mask asked, the sample drawn and the token accepted, on
 * the 152k (qwen3-bpe) and 262k (gemma3) vocabularies and any others named.
 * Times are the thread's CPU time.  Prints the constraint's creation, the mean and slowest token with the
 * grammar, and the same sampling without it.  A benchmark, not a test:
 *   build/tests/grammar/bench_grammar [TOKENS] [FILE.gguf ...] */
#include <math.h>
#include <string.h>
#include <time.h>

#include "confab/grammar.h"
#include "confab/sampler.h"
#include "harness.h"
#include "../tokenizer/tok_util.h"

/* This thread's CPU time: the machine is shared, and a token that waits
 * for a core is not the grammar's cost. */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static float rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (float)(rs >> 40) * 0x1.0p-24f;
}

static void bench(const char *path, int n_tokens)
{
    cf_tokenizer *t = tok_open(path);
    if (!t)
        return;
    int32_t V = cf_tok_n_vocab(t);
    cf_err err;
    cf_grammar *g;
    cf_constraint *c;
    double t0 = cpu_ms();
    if (cf_grammar_json(&g, &err) || cf_constraint_create(g, t, &c, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return;
    }
    double t_create = cpu_ms() - t0;
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.temp = 1.0f;
    cf_sampler *with, *without;
    if (cf_sampler_create(V, &p, 1, &with, &err) || cf_sampler_create(V, &p, 1, &without, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    float *logits = malloc((size_t)V * sizeof *logits);
    double total = 0, worst = 0, plain = 0;
    int restarts = 0, over_1ms = 0, over_10ms = 0;
    for (int i = 0; i < n_tokens; i++) {
        for (int32_t j = 0; j < V; j++)
            logits[j] = 4 * rnd();
        double a = cpu_ms();
        cf_sampler_sample(without, logits);
        double b = cpu_ms();
        cf_sampler_set_mask(with, cf_constraint_mask(c));
        int32_t id = cf_sampler_sample(with, logits);
        bool end = cf_tok_is_eog(t, id);
        if (!end && cf_constraint_accept(c, id, &err)) {
            fprintf(stderr, "%s: %s\n", path, err.msg);
            break;
        }
        double ms = cpu_ms() - b;
        plain += b - a;
        total += ms;
        worst = ms > worst ? ms : worst;
        over_1ms += ms > 1;
        over_10ms += ms > 10;
        if (end) { /* a whole object: begin another */
            cf_constraint_reset(c);
            restarts++;
        }
    }
    printf("%s: %d tokens, constraint made in %.1f ms; a token: %.3f ms with the JSON grammar "
           "(slowest %.2f ms; %d over 1 ms, %d over 10 ms: a state's first walk), %.3f ms without; "
           "%d objects finished\n",
           path, V, t_create, total / n_tokens, worst, over_1ms, over_10ms, plain / n_tokens,
           restarts);
    free(logits);
    cf_sampler_free(with);
    cf_sampler_free(without);
    cf_constraint_free(c);
    cf_grammar_free(g);
    cf_tokenizer_free(t);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (argc > 2) {
        for (int i = 2; i < argc; i++)
            bench(argv[i], n);
        return 0;
    }
    if (!shared_dir()) {
        fprintf(stderr, "bench_grammar: no ../shared; name vocabulary files\n");
        return 0;
    }
    bench(shared_path("models/qwen3-bpe.Q8_0.gguf"), n);
    bench(shared_path("vocab/ggml-vocab-gemma3.gguf"), n);
    return 0;
}
