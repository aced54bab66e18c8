/* The sampler chain: the worked example, a plain full-sort implementation
 * of llama.cpp's chain to compare candidates with, draws against the
 * probabilities (chi-square), seeds and saved states, settings changed
 * between tokens, penalties, greedy ties, bad settings, masks. */
#include <math.h>
#include <string.h>

#include "confab/sampler.h"
#include "harness.h"

static cf_sampler *make(int32_t n_vocab, const cf_sampler_params *p, uint64_t seed)
{
    cf_sampler *s;
    cf_err err;
    CHECKF(cf_sampler_create(n_vocab, p, seed, &s, &err) == 0, "%s", err.msg);
    return s;
}

static void check_defaults(void)
{
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    CHECK(p.temp == 0.8f && p.top_k == 40 && p.top_p == 0.95f && p.min_p == 0.05f);
    CHECK(p.typical_p == 1.0f && p.repeat_penalty == 1.0f && p.repeat_last_n == 64);
    CHECK(p.presence_penalty == 0.0f && p.frequency_penalty == 0.0f);
}

/* logits (0.5, 2.0, 1.5, 0.0, 1.0, -0.5, 3.0, 0.2, 2.5, 1.8), temp 0.9,
 * top-k 5, top-p 0.9: top-k keeps 6 8 1 9 2; top-p over their softmax
 * (0.400 0.243 0.147 0.121 0.089, cumulative 0.911 at the fourth) keeps four;
 * min-p 0.05 (threshold 0.02 of the best) keeps them all; the temperature
 * then gives softmax(logit / 0.9).  The same set comes out with the
 * temperature first, and for any min-p up to 0.30 (token 9 / token 6 at
 * temperature 0.9 is 0.26). */
static void check_worked_example(void)
{
    static const float logits[10] = {0.5f, 2.0f, 1.5f, 0.0f, 1.0f, -0.5f, 3.0f, 0.2f, 2.5f, 1.8f};
    static const int32_t want_ids[4] = {6, 8, 1, 9};
    static const float want_p[4] = {0.4617f, 0.2650f, 0.1519f, 0.1219f};
    const float min_ps[] = {0.0f, 0.05f, 0.25f};
    for (size_t m = 0; m < 3; m++) {
        cf_sampler_params p;
        cf_sampler_params_default(&p);
        p.temp = 0.9f;
        p.top_k = 5;
        p.top_p = 0.9f;
        p.min_p = min_ps[m];
        cf_sampler *s = make(10, &p, 1);
        int32_t ids[10];
        float probs[10];
        size_t n = cf_sampler_candidates(s, logits, ids, probs, 10);
        CHECKF(n == 4, "min-p %g: %zu candidates", (double)min_ps[m], n);
        for (size_t i = 0; i < 4 && i < n; i++) {
            CHECK(ids[i] == want_ids[i]);
            CHECKF(fabsf(probs[i] - want_p[i]) < 5e-4f, "p[%zu] = %.4f", i, (double)probs[i]);
        }
        if (m == 1)
            printf("worked example: %d %.4f, %d %.4f, %d %.4f, %d %.4f\n", ids[0],
                   (double)probs[0], ids[1], (double)probs[1], ids[2], (double)probs[2], ids[3],
                   (double)probs[3]);
        cf_sampler_free(s);
    }
}

/* ---- a plain implementation to compare with ---------------------------- */

typedef struct ref_cand {
    int32_t id;
    float logit, p, key;
} ref_cand;

static int ref_by_key(const void *a, const void *b)
{
    const ref_cand *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void ref_softmax(ref_cand *c, size_t n)
{
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++)
        max = fmaxf(max, c[i].logit);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += c[i].p = expf(c[i].logit - max);
    for (size_t i = 0; i < n; i++)
        c[i].p = (float)(c[i].p / sum);
}

/* The chain with full sorts; returns the candidate count, sorted by
 * probability (ties: id). */
static size_t ref_chain(const cf_sampler_params *p, const float *logits, int32_t n_vocab,
                        const int32_t *hist, int n_hist, ref_cand *c)
{
    size_t n = (size_t)n_vocab, keep = p->min_keep > 1 ? (size_t)p->min_keep : 1;
    for (int32_t i = 0; i < n_vocab; i++)
        c[i] = (ref_cand){i, logits[i], 0, 0};
    int first = n_hist > p->repeat_last_n ? n_hist - p->repeat_last_n : 0;
    for (int32_t i = 0; i < n_vocab && p->repeat_last_n > 0; i++) {
        int count = 0;
        for (int h = first; h < n_hist; h++)
            count += hist[h] == i;
        if (!count)
            continue;
        float l = c[i].logit;
        l = l <= 0 ? l * p->repeat_penalty : l / p->repeat_penalty;
        c[i].logit = l - (float)count * p->frequency_penalty - p->presence_penalty;
    }
    for (size_t i = 0; i < n; i++)
        c[i].key = c[i].logit;
    qsort(c, n, sizeof *c, ref_by_key);
    if (p->top_k > 0 && (size_t)p->top_k < n)
        n = (size_t)p->top_k > keep ? (size_t)p->top_k : keep;
    if (p->typical_p < 1 && n > 1) {
        ref_softmax(c, n);
        double h = 0;
        for (size_t i = 0; i < n; i++)
            if (c[i].p > 0)
                h -= c[i].p * log(c[i].p);
        for (size_t i = 0; i < n; i++)
            c[i].key = -fabsf(-logf(c[i].p) - (float)h);
        qsort(c, n, sizeof *c, ref_by_key);
        double cum = 0;
        size_t m = n;
        for (size_t i = 0; i < n; i++) {
            cum += c[i].p;
            if (cum > p->typical_p && i + 1 >= keep) {
                m = i + 1;
                break;
            }
        }
        n = m;
        for (size_t i = 0; i < n; i++)
            c[i].key = c[i].logit;
        qsort(c, n, sizeof *c, ref_by_key);
    }
    if (p->top_p < 1 && n > 1) {
        ref_softmax(c, n);
        double cum = 0;
        size_t m = n;
        for (size_t i = 0; i < n; i++) {
            cum += c[i].p;
            if (cum >= p->top_p && i + 1 >= keep) {
                m = i + 1;
                break;
            }
        }
        n = m;
    }
    if (p->min_p > 0 && n > 1) {
        float min_logit = c[0].logit + logf(p->min_p);
        size_t m = 1;
        while (m < n && (c[m].logit >= min_logit || m < keep))
            m++;
        n = m;
    }
    if (p->temp <= 0)
        n = 1;
    else
        for (size_t i = 0; i < n; i++)
            c[i].logit /= p->temp;
    ref_softmax(c, n);
    for (size_t i = 0; i < n; i++)
        c[i].key = c[i].p;
    qsort(c, n, sizeof *c, ref_by_key);
    return n;
}

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) * 0x1.0p-53;
}

static float nrand(void)
{
    return (float)(sqrt(-2 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()));
}

/* Random settings and logits (with ties and a few -inf), the chain against
 * the plain one.  Sets near a cut-off can differ by float rounding in the
 * sums, so a differing case must be one of those. */
static void check_against_reference(void)
{
    enum { V = 3000 };
    static float logits[V];
    static ref_cand ref[V];
    static int32_t ids[V];
    static float probs[V];
    int mismatches = 0, trials = 400;
    for (int t = 0; t < trials; t++) {
        cf_sampler_params p;
        cf_sampler_params_default(&p);
        p.temp = urand() < 0.1 ? 0.0f : (float)(0.2 + urand() * 1.5);
        p.top_k = urand() < 0.3 ? 0 : (int32_t)(1 + urand() * (urand() < 0.5 ? 60 : 2000));
        p.top_p = urand() < 0.3 ? 1.0f : (float)(0.5 + urand() * 0.5);
        p.min_p = urand() < 0.3 ? 0.0f : (float)(urand() * 0.2);
        p.typical_p = urand() < 0.7 ? 1.0f : (float)(0.3 + urand() * 0.7);
        p.repeat_penalty = urand() < 0.5 ? 1.0f : (float)(1 + urand());
        p.frequency_penalty = urand() < 0.5 ? 0.0f : (float)(urand() - 0.3);
        p.presence_penalty = urand() < 0.5 ? 0.0f : (float)(urand() - 0.3);
        p.repeat_last_n = (int32_t)(urand() * 100);
        p.min_keep = urand() < 0.8 ? 0 : (int32_t)(urand() * 20);
        float scale = (float)(0.5 + urand() * 4);
        for (int i = 0; i < V; i++)
            logits[i] = urand() < 0.01 ? -INFINITY : roundf(nrand() * scale * 8) / 8;
        cf_sampler *s = make(V, &p, 7);
        int32_t hist[200];
        int n_hist = (int)(urand() * 200);
        for (int h = 0; h < n_hist; h++) {
            hist[h] = (int32_t)(urand() * (urand() < 0.5 ? 50 : V));
            cf_sampler_accept(s, hist[h]);
        }
        size_t n_ref = ref_chain(&p, logits, V, hist, n_hist, ref);
        size_t n = cf_sampler_candidates(s, logits, ids, probs, V);
        bool same = n == n_ref;
        for (size_t i = 0; same && i < n; i++)
            same = ids[i] == ref[i].id && fabsf(probs[i] - ref[i].p) < 1e-5f;
        if (!same) {
            mismatches++;
            fprintf(stderr, "trial %d: temp %g k %d p %g min-p %g typ %g rep %g/%d: %zu vs %zu\n",
                    t, (double)p.temp, p.top_k, (double)p.top_p, (double)p.min_p,
                    (double)p.typical_p, (double)p.repeat_penalty, p.repeat_last_n, n, n_ref);
        }
        /* the greedy pick is the reference's first */
        if (p.temp <= 0)
            CHECK(cf_sampler_sample(s, logits) == ref[0].id);
        cf_sampler_free(s);
    }
    printf("chain vs full-sort reference: %d/%d random cases differ\n", mismatches, trials);
    CHECK(mismatches == 0);
}

/* ---- draws ------------------------------------------------------------------- */

/* Pearson's chi-square of draws against the candidates' probabilities. */
static double chi_square(cf_sampler *s, const float *logits, int32_t n_vocab, int draws,
                         size_t *n_cells)
{
    static int32_t ids[4096];
    static float probs[4096];
    static int hits[4096];
    size_t n = cf_sampler_candidates(s, logits, ids, probs, 4096);
    memset(hits, 0, sizeof hits);
    int outside = 0;
    for (int d = 0; d < draws; d++) {
        int32_t id = cf_sampler_sample(s, logits);
        size_t i = 0;
        while (i < n && ids[i] != id)
            i++;
        if (i < n)
            hits[i]++;
        else
            outside++;
    }
    CHECKF(outside == 0, "%d draws outside the candidates", outside);
    (void)n_vocab;
    double chi = 0;
    for (size_t i = 0; i < n; i++) {
        double e = draws * (double)probs[i];
        chi += (hits[i] - e) * (hits[i] - e) / e;
    }
    *n_cells = n;
    return chi;
}

static void check_draws(void)
{
    /* ten tokens, no filter: df 9, the 0.001 critical value is 27.88 */
    static const float logits[10] = {0.5f, 2.0f, 1.5f, 0.0f, 1.0f, -0.5f, 3.0f, 0.2f, 2.5f, 1.8f};
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.temp = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    cf_sampler *s = make(10, &p, 42);
    size_t cells;
    double chi = chi_square(s, logits, 10, 200000, &cells);
    printf("chi-square, 10 tokens, 200000 draws: %.2f (df %zu)\n", chi, cells - 1);
    CHECK(cells == 10 && chi < 27.88);
    cf_sampler_free(s);

    /* the default chain over 32000 logits: what is left, drawn as its
     * probabilities say (df <= 39: critical value at 0.001 is 72.05) */
    static float big[32000];
    for (int i = 0; i < 32000; i++)
        big[i] = nrand() * 2;
    big[123] = 9, big[456] = 8.5f, big[789] = 8.2f;
    cf_sampler_params_default(&p);
    s = make(32000, &p, 43);
    chi = chi_square(s, big, 32000, 200000, &cells);
    printf("chi-square, default chain over 32000 logits, 200000 draws: %.2f (df %zu)\n", chi,
           cells - 1);
    CHECK(cells > 1 && cells <= 40 && chi < 72.05);
    cf_sampler_free(s);
}

static void check_seeds_and_state(void)
{
    static float logits[1000];
    for (int i = 0; i < 1000; i++)
        logits[i] = nrand();
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.top_k = 0;
    p.top_p = 0.99f;
    p.repeat_penalty = 1.3f;
    cf_sampler *a = make(1000, &p, 2024), *b = make(1000, &p, 2024), *c = make(1000, &p, 2025);
    int32_t seq_a[200], seq_b[200], seq_c[200];
    for (int i = 0; i < 200; i++) {
        seq_a[i] = cf_sampler_sample(a, logits);
        seq_b[i] = cf_sampler_sample(b, logits);
        seq_c[i] = cf_sampler_sample(c, logits);
        cf_sampler_accept(a, seq_a[i]);
        cf_sampler_accept(b, seq_b[i]);
        cf_sampler_accept(c, seq_c[i]);
    }
    CHECK(memcmp(seq_a, seq_b, sizeof seq_a) == 0);
    CHECK(memcmp(seq_a, seq_c, sizeof seq_a) != 0);
    CHECK(cf_sampler_seed(a) == 2024);

    /* the RNG alone: save, draw, restore, the same draws again */
    cf_rng r;
    cf_sampler_get_rng(a, &r);
    int32_t x[50], y[50];
    for (int i = 0; i < 50; i++)
        x[i] = cf_sampler_sample(a, logits);
    cf_sampler_set_rng(a, &r);
    for (int i = 0; i < 50; i++)
        y[i] = cf_sampler_sample(a, logits);
    CHECK(memcmp(x, y, sizeof x) == 0);

    /* the whole state as bytes, into a fresh sampler with another seed:
     * the penalties see the same history, so the sequences go on alike */
    unsigned char buf[4096];
    size_t need = cf_sampler_state_save(a, NULL, 0);
    CHECK(need == 44 + 4 * 64 && cf_sampler_state_save(a, buf, sizeof buf) == need);
    cf_sampler *d = make(1000, &p, 1);
    cf_err err;
    CHECKF(cf_sampler_state_load(d, buf, need, &err) == 0, "%s", err.msg);
    for (int i = 0; i < 100; i++) {
        int32_t ta = cf_sampler_sample(a, logits), td = cf_sampler_sample(d, logits);
        CHECK(ta == td);
        cf_sampler_accept(a, ta);
        cf_sampler_accept(d, td);
    }
    /* bad bytes */
    CHECK(cf_sampler_state_load(d, buf, need - 1, &err) != 0);
    buf[0] = 'X';
    CHECK(cf_sampler_state_load(d, buf, need, &err) != 0 && strstr(err.msg, "not a saved"));
    cf_sampler *small = make(10, &p, 1);
    buf[0] = 'C';
    CHECK(cf_sampler_state_load(small, buf, need, &err) != 0 && strstr(err.msg, "outside"));
    cf_sampler_free(small);
    cf_sampler_free(a);
    cf_sampler_free(b);
    cf_sampler_free(c);
    cf_sampler_free(d);
}

static void check_settings_change(void)
{
    static float logits[500];
    for (int i = 0; i < 500; i++)
        logits[i] = nrand();
    logits[77] = 5;
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.temp = 5.0f; /* nearly uniform over the top 40 */
    cf_sampler *s = make(500, &p, 9);
    int not_best = 0;
    for (int i = 0; i < 200; i++)
        not_best += cf_sampler_sample(s, logits) != 77;
    CHECK(not_best > 50);
    cf_err err;
    p.temp = 0.0f; /* greedy from the very next token */
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    CHECK(cf_sampler_sample(s, logits) == 77);
    p.temp = 1.0f;
    p.top_k = 1;
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    for (int i = 0; i < 20; i++)
        CHECK(cf_sampler_sample(s, logits) == 77);
    /* a repeat penalty switched on mid-sequence applies to what came before */
    p.top_k = 40;
    p.temp = 0.0f;
    p.repeat_penalty = 100.0f;
    cf_sampler_accept(s, 77);
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    CHECK(cf_sampler_sample(s, logits) != 77);
    CHECK(cf_sampler_get_params(s)->repeat_penalty == 100.0f);
    cf_sampler_free(s);
}

static void check_penalties_and_greedy(void)
{
    float logits[6] = {2.0f, 1.9f, -1.0f, 1.9f, 0.5f, NAN};
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.temp = 0.0f;
    cf_sampler *s = make(6, &p, 1);
    CHECK(cf_sampler_sample(s, logits) == 0);
    logits[0] = 1.9f; /* three-way tie: the lowest id */
    CHECK(cf_sampler_sample(s, logits) == 0);
    logits[0] = 2.0f;
    cf_err err;
    p.repeat_penalty = 1.5f; /* 2.0 / 1.5 = 1.33 < 1.9 */
    p.repeat_last_n = 2;
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    cf_sampler_accept(s, 0);
    CHECK(cf_sampler_sample(s, logits) == 1);
    cf_sampler_accept(s, 4);
    cf_sampler_accept(s, 4); /* token 0 has left the 2-token window */
    CHECK(cf_sampler_sample(s, logits) == 0);
    /* frequency: 1.9 - 2 * 0.1 < 1.8; presence on token 1 too */
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    p.frequency_penalty = 0.1f;
    p.presence_penalty = 0.05f;
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    logits[0] = 1.8f;
    cf_sampler_reset(s);
    cf_sampler_accept(s, 1);
    cf_sampler_accept(s, 1);
    cf_sampler_accept(s, 3);
    CHECK(cf_sampler_sample(s, logits) == 0); /* 1: 1.65, 3: 1.75, 0: 1.8 */
    /* a negative logit is multiplied by the repeat penalty */
    p.frequency_penalty = p.presence_penalty = 0;
    p.repeat_penalty = 2.0f;
    CHECK(cf_sampler_set_params(s, &p, &err) == 0);
    float neg[6] = {-1.0f, -1.5f, -3.0f, -4.0f, -4.0f, -4.0f};
    cf_sampler_reset(s);
    cf_sampler_accept(s, 0);
    CHECK(cf_sampler_sample(s, neg) == 1);
    cf_sampler_free(s);
}

static void check_bad_settings(void)
{
    cf_sampler_params p;
    cf_err err;
    cf_sampler *s;
    cf_sampler_params_default(&p);
    p.top_p = 1.5f;
    CHECK(cf_sampler_create(10, &p, 1, &s, &err) != 0 && strstr(err.msg, "top-p"));
    cf_sampler_params_default(&p);
    p.min_p = -0.1f;
    CHECK(cf_sampler_params_check(&p, &err) != 0 && strstr(err.msg, "min-p"));
    cf_sampler_params_default(&p);
    p.repeat_last_n = -1;
    CHECK(cf_sampler_params_check(&p, &err) != 0 && strstr(err.msg, "repeat-last-n"));
    cf_sampler_params_default(&p);
    p.temp = NAN;
    CHECK(cf_sampler_params_check(&p, &err) != 0);
    cf_sampler_params_default(&p);
    CHECK(cf_sampler_create(0, &p, 1, &s, &err) != 0);
    s = make(10, &p, CF_SAMPLER_SEED_RANDOM);
    CHECK(cf_sampler_seed(s) != CF_SAMPLER_SEED_RANDOM);
    p.typical_p = 2;
    CHECK(cf_sampler_set_params(s, &p, &err) != 0 && strstr(err.msg, "typical"));
    CHECK(cf_sampler_get_params(s)->typical_p == 1.0f); /* unchanged */
    cf_sampler_accept(s, -1); /* ignored */
    cf_sampler_accept(s, 10);
    cf_sampler_free(s);
}

/* settings by name: every field in the table, values parsed and ranged,
 * a bad value leaves the params as they were */
static void check_settings_by_name(void)
{
    cf_sampler_params p, before;
    cf_err err;
    char buf[32];
    cf_sampler_params_default(&p);
    size_t n = 0;
    for (const char *const *name = cf_sampler_setting_names(); *name; name++, n++)
        CHECKF(cf_sampler_setting_get(&p, *name, buf, sizeof buf) != NULL, "%s", *name);
    CHECK(n == 9);
    CHECK(cf_sampler_setting_set(&p, "temp", "0.3", &err) == 0 && p.temp == 0.3f);
    CHECK(cf_sampler_setting_set(&p, "top-k", "7", &err) == 0 && p.top_k == 7);
    CHECK(cf_sampler_setting_set(&p, "repeat-last-n", "128", &err) == 0 && p.repeat_last_n == 128);
    CHECK(cf_sampler_setting_set(&p, "frequency-penalty", "-1.5", &err) == 0 && p.frequency_penalty == -1.5f);
    CHECK(strcmp(cf_sampler_setting_get(&p, "top-k", buf, sizeof buf), "7") == 0);
    CHECK(strcmp(cf_sampler_setting_get(&p, "temp", buf, sizeof buf), "0.3") == 0);
    before = p;
    CHECK(cf_sampler_setting_set(&p, "top-k", "2.5", &err) != 0 && strstr(err.msg, "top-k: '2.5'") &&
          strstr(err.msg, "whole number from 0 to 1000000"));
    CHECK(cf_sampler_setting_set(&p, "temp", "warm", &err) != 0 && strstr(err.msg, "from 0 to 100"));
    CHECK(cf_sampler_setting_set(&p, "presence-penalty", "3", &err) != 0 && strstr(err.msg, "-2 to 2"));
    CHECK(cf_sampler_setting_set(&p, "repeat-penalty", "0", &err) != 0 && strstr(err.msg, "above 0"));
    CHECK(cf_sampler_setting_set(&p, "top-p", "", &err) != 0);
    CHECK(cf_sampler_setting_set(&p, "seed", "1", &err) != 0 && strstr(err.msg, "not a sampler setting"));
    CHECK(cf_sampler_setting_get(&p, "seed", buf, sizeof buf) == NULL);
    CHECK(memcmp(&p, &before, sizeof p) == 0);
}

/* Probabilities: the same draws as without them, p the drawn token's
 * share of the candidates' distribution, the top list sorted and led by
 * the most likely; greedy described at temperature 1. */
static void check_probs(void)
{
    static float logits[1000];
    for (int i = 0; i < 1000; i++)
        logits[i] = 2 * nrand();
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    p.repeat_penalty = 1.2f;
    cf_sampler *a = make(1000, &p, 7), *b = make(1000, &p, 7);
    for (int i = 0; i < 300; i++) {
        cf_token_prob tp;
        int32_t ta = cf_sampler_sample(a, logits), tb = cf_sampler_sample_probs(b, logits, &tp);
        CHECK(ta == tb && tp.id == tb && tp.p > 0 && tp.p <= 1);
        CHECK(tp.n_top >= 1 && tp.n_top <= CF_TOP_PROBS && tp.top_p[0] >= tp.p);
        float sum = 0;
        bool in_top = false;
        for (int k = 0; k < tp.n_top; k++) {
            sum += tp.top_p[k];
            in_top |= tp.top_id[k] == tb;
            CHECK(k == 0 || tp.top_p[k] <= tp.top_p[k - 1]);
        }
        CHECK(sum <= 1.0001f && (in_top || tp.p <= tp.top_p[tp.n_top - 1]));
        cf_sampler_accept(a, ta);
        cf_sampler_accept(b, tb);
    }
    /* greedy: the top token, with its temperature-1 share */
    float small[4] = {1.0f, 3.0f, 2.0f, 3.0f};
    cf_err err;
    p = (cf_sampler_params){.temp = 0, .top_k = 0, .top_p = 1, .typical_p = 1, .repeat_penalty = 1};
    cf_sampler_free(a);
    a = make(4, &p, 1);
    cf_token_prob tp;
    CHECK(cf_sampler_sample_probs(a, small, &tp) == 1);
    double z = exp(1) + 2 * exp(3) + exp(2);
    CHECK(fabs(tp.p - exp(3) / z) < 1e-6 && tp.n_top == 4 && tp.top_id[0] == 1 &&
          tp.top_id[1] == 3 && tp.top_id[2] == 2 && tp.top_id[3] == 0);
    cf_sampler_token_prob(a, small, 0, &tp);
    CHECK(tp.id == 0 && fabs(tp.p - exp(1) / z) < 1e-6);
    /* a token the filters removed has p 0 */
    p.top_k = 2;
    CHECK(cf_sampler_set_params(a, &p, &err) == 0);
    cf_sampler_token_prob(a, small, 2, &tp);
    CHECK(tp.p == 0 && tp.n_top == 2);
    cf_sampler_free(a);
    cf_sampler_free(b);
}

/* A mask (cf_sampler_set_mask): every token allowed draws exactly what no
 * mask draws; a few allowed are the only candidates and draws, greedy the
 * best of them, top-k off or on. */
static void check_mask(void)
{
    enum { V = 1000 };
    static float logits[V];
    static uint64_t all[(V + 63) / 64], some[(V + 63) / 64];
    uint64_t x = 3;
    for (int i = 0; i < V; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        logits[i] = (float)(x >> 40) / (float)(1 << 22);
    }
    memset(all, 0xff, sizeof all);
    static const int32_t allowed[] = {3, 77, 500, 998};
    for (size_t i = 0; i < 4; i++)
        some[allowed[i] / 64] |= 1ull << (allowed[i] % 64);
    const float temps[] = {0.8f, 0.0f};
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < 2; t++) {
            cf_sampler_params p;
            cf_sampler_params_default(&p);
            p.temp = temps[t];
            p.top_k = k ? 40 : 0;
            cf_sampler *a = make(V, &p, 9), *b = make(V, &p, 9), *c = make(V, &p, 9);
            cf_sampler_set_mask(b, all);
            cf_sampler_set_mask(c, some);
            for (int i = 0; i < 300; i++) {
                CHECK(cf_sampler_sample(a, logits) == cf_sampler_sample(b, logits));
                int32_t id = cf_sampler_sample(c, logits);
                CHECKF(id == 3 || id == 77 || id == 500 || id == 998, "drew %d", id);
            }
            int32_t ids[V];
            float probs[V];
            size_t n = cf_sampler_candidates(c, logits, ids, probs, V);
            CHECKF(n >= 1 && n <= 4, "%zu candidates", n);
            for (size_t i = 0; i < n; i++)
                CHECK(some[ids[i] / 64] >> (ids[i] % 64) & 1);
            if (t == 1) {
                int32_t best = allowed[0];
                for (size_t i = 1; i < 4; i++)
                    best = logits[allowed[i]] > logits[best] ? allowed[i] : best;
                CHECK(n == 1 && ids[0] == best);
            }
            cf_sampler_set_mask(c, NULL);
            CHECK(cf_sampler_sample(a, logits) == cf_sampler_sample(c, logits) || t == 0);
            cf_sampler_free(a);
            cf_sampler_free(b);
            cf_sampler_free(c);
        }
}

int main(void)
{
    check_defaults();
    check_worked_example();
    check_against_reference();
    check_draws();
    check_seeds_and_state();
    check_settings_change();
    check_penalties_and_greedy();
    check_bad_settings();
    check_settings_by_name();
    check_probs();
    check_mask();
    return test_summary("sampler");
}
