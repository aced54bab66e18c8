/* CPU time per sampled token at 32k and 152k vocabularies (one core), for the
 * default chain and a few other settings.  The logits are llama.cpp's real
 * reference logits of the llama-spm and qwen2 fixtures when ../shared is
 * there, else random ones; each also with the probabilities /set probs
 * records.  A benchmark, not a test:
 *   build/tests/sampler/bench_sampler [ITERATIONS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "confab/sampler.h"
#include "harness.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *load_logits(const char *rel, int32_t n)
{
    float *l = malloc((size_t)n * sizeof *l);
    FILE *f = shared_dir() ? fopen(shared_path(rel), "rb") : NULL;
    size_t got = f ? fread(l, sizeof *l, (size_t)n, f) : 0;
    if (f)
        fclose(f);
    if (got == (size_t)n)
        return l;
    uint64_t x = 88172645463325252ull; /* random: normal, sd 2 */
    for (int32_t i = 0; i < n; i++) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            u[k] = ((double)(x >> 11) + 1) * 0x1.0p-53;
        }
        l[i] = (float)(2 * sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]));
    }
    return l;
}

/* probs: draw with cf_sampler_sample_probs (what /set probs on costs) */
static void run_as(const char *what, const float *logits, int32_t n_vocab,
                   const cf_sampler_params *p, int iters, bool probs)
{
    cf_sampler *s;
    cf_err err;
    if (cf_sampler_create(n_vocab, p, 1234, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    for (int i = 0; i < 64; i++) /* a full penalty window, warm caches */
        cf_sampler_accept(s, cf_sampler_sample(s, logits));
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        cf_token_prob tp;
        for (int i = 0; i < iters; i++)
            cf_sampler_accept(s, probs ? cf_sampler_sample_probs(s, logits, &tp)
                                       : cf_sampler_sample(s, logits));
        double us = (now() - t0) / iters * 1e6;
        best = us < best ? us : best;
    }
    printf("  %-44s %8.1f us/token%s\n", what, best, probs ? "  (probs on)" : "");
    cf_sampler_free(s);
}

static void run(const char *what, const float *logits, int32_t n_vocab, const cf_sampler_params *p,
                int iters)
{
    run_as(what, logits, n_vocab, p, iters, false);
    run_as(what, logits, n_vocab, p, iters, true);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    const struct {
        int32_t n;
        const char *file;
    } vocabs[] = {{32000, "refs/llama-spm.Q8_0.story.logits.bin"},
                  {151936, "refs/qwen2.Q8_0.story.logits.bin"}};
    for (int v = 0; v < 2; v++) {
        float *logits = load_logits(vocabs[v].file, vocabs[v].n);
        printf("vocabulary %d (%s logits):\n", vocabs[v].n,
               shared_dir() ? "llama.cpp reference" : "random");
        cf_sampler_params p;
        cf_sampler_params_default(&p);
        run("default chain (top-k 40, top-p .95, min-p .05)", logits, vocabs[v].n, &p, iters);
        p.repeat_penalty = 1.1f;
        p.frequency_penalty = 0.1f;
        run("  + repeat/frequency penalties, last 64", logits, vocabs[v].n, &p, iters);
        cf_sampler_params_default(&p);
        p.top_k = 0;
        run("top-k off: top-p .95 + min-p .05 on all", logits, vocabs[v].n, &p, iters);
        p.min_p = 0;
        run("top-k off, min-p off: top-p .95 alone", logits, vocabs[v].n, &p, iters);
        cf_sampler_params_default(&p);
        p.typical_p = 0.9f;
        run("default + typical .9", logits, vocabs[v].n, &p, iters);
        cf_sampler_params_default(&p);
        p.temp = 0;
        run("greedy", logits, vocabs[v].n, &p, iters);
        free(logits);
    }
    return 0;
}
