/* The sampler object: settings, the random generator (xoshiro256**), the
 * penalty history, drawing, and the saved state. */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confab/platform.h"
#include "sampler_internal.h"

void cf_sampler_params_default(cf_sampler_params *p)
{
    *p = (cf_sampler_params){
        .temp = 0.8f,
        .top_k = 40,
        .top_p = 0.95f,
        .min_p = 0.05f,
        .typical_p = 1.0f,
        .repeat_penalty = 1.0f,
        .repeat_last_n = 64,
        .presence_penalty = 0.0f,
        .frequency_penalty = 0.0f,
        .min_keep = 0,
    };
}

int cf_sampler_params_check(const cf_sampler_params *p, cf_err *err)
{
    if (!isfinite(p->temp))
        return cf_fail(err, "temperature must be a finite number");
    if (!(p->top_p >= 0 && p->top_p <= 1))
        return cf_fail(err, "top-p must be between 0 and 1 (got %g)", (double)p->top_p);
    if (!(p->min_p >= 0 && p->min_p <= 1))
        return cf_fail(err, "min-p must be between 0 and 1 (got %g)", (double)p->min_p);
    if (!(p->typical_p >= 0 && p->typical_p <= 1))
        return cf_fail(err, "typical-p must be between 0 and 1 (got %g)", (double)p->typical_p);
    if (!(p->repeat_penalty > 0 && isfinite(p->repeat_penalty)))
        return cf_fail(err, "the repeat penalty must be a positive number (got %g)",
                       (double)p->repeat_penalty);
    if (!isfinite(p->presence_penalty) || !isfinite(p->frequency_penalty))
        return cf_fail(err, "presence and frequency penalties must be finite numbers");
    if (p->repeat_last_n < 0 || p->repeat_last_n > CF_SAMPLER_MAX_LAST_N)
        return cf_fail(err, "repeat-last-n must be between 0 and %d (got %d)",
                       CF_SAMPLER_MAX_LAST_N, p->repeat_last_n);
    if (p->min_keep < 0)
        return cf_fail(err, "min-keep must not be negative (got %d)", p->min_keep);
    return 0;
}

/* ---- random numbers ------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cf_rng_next(cf_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static uint64_t system_seed(void)
{
    uint64_t v;
    if (cf_random_u64(&v) && v != CF_SAMPLER_SEED_RANDOM)
        return v;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

/* ---- history ------------------------------------------------------------- */

/* Recount the window (the last repeat_last_n accepted tokens). */
static void recount(cf_sampler *s)
{
    for (int32_t i = 0; i < s->hist_n; i++)
        s->count[s->hist[i]] = 0;
    int32_t w = s->hist_n < s->par.repeat_last_n ? s->hist_n : s->par.repeat_last_n;
    for (int32_t i = 0; i < w; i++)
        s->count[s->hist[(s->hist_pos - 1 - i + s->hist_cap) % s->hist_cap]]++;
}

/* Make room for cap tokens, keeping the newest ones in order. */
static int grow_history(cf_sampler *s, int32_t cap)
{
    if (cap <= s->hist_cap)
        return 0;
    int32_t *h = malloc((size_t)cap * sizeof *h), *pen = malloc((size_t)cap * sizeof *pen);
    if (!h || !pen) {
        free(h);
        free(pen);
        return -1;
    }
    for (int32_t i = 0; i < s->hist_n; i++) /* oldest first */
        h[i] = s->hist[(s->hist_pos - s->hist_n + i + s->hist_cap) % s->hist_cap];
    free(s->hist);
    free(s->pen_ids);
    s->hist = h;
    s->pen_ids = pen;
    s->hist_cap = cap;
    s->hist_pos = s->hist_n % cap;
    return 0;
}

void cf_sampler_accept(cf_sampler *s, int32_t token)
{
    if (token < 0 || token >= s->n_vocab)
        return;
    int32_t w = s->par.repeat_last_n;
    if (w > 0 && s->hist_n >= w) /* the token that leaves the window */
        s->count[s->hist[(s->hist_pos - w + s->hist_cap) % s->hist_cap]]--;
    s->hist[s->hist_pos] = token;
    s->hist_pos = (s->hist_pos + 1) % s->hist_cap;
    if (s->hist_n < s->hist_cap)
        s->hist_n++;
    if (w > 0)
        s->count[token]++;
}

void cf_sampler_reset(cf_sampler *s)
{
    for (int32_t i = 0; i < s->hist_n; i++)
        s->count[s->hist[i]] = 0;
    s->hist_n = s->hist_pos = 0;
}

/* ---- life ------------------------------------------------------------------- */

int cf_sampler_create(int32_t n_vocab, const cf_sampler_params *p, uint64_t seed, cf_sampler **out,
                      cf_err *err)
{
    *out = NULL;
    if (n_vocab <= 0)
        return cf_fail(err, "a sampler needs a vocabulary (got %d tokens)", n_vocab);
    if (cf_sampler_params_check(p, err))
        return -1;
    cf_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return cf_fail(err, "out of memory");
    s->n_vocab = n_vocab;
    s->par = *p;
    s->cand = malloc((size_t)n_vocab * sizeof *s->cand);
    s->spare = malloc((size_t)n_vocab * sizeof *s->spare);
    s->count = calloc((size_t)n_vocab, sizeof *s->count);
    s->masked = malloc((size_t)n_vocab * sizeof *s->masked);
    if (!s->cand || !s->spare || !s->count || !s->masked || grow_history(s, p->repeat_last_n > 64 ? p->repeat_last_n : 64)) {
        cf_sampler_free(s);
        return cf_fail(err, "out of memory for a sampler over %d tokens", n_vocab);
    }
    s->seed = seed == CF_SAMPLER_SEED_RANDOM ? system_seed() : seed;
    uint64_t x = s->seed;
    for (int i = 0; i < 4; i++)
        s->rng.s[i] = splitmix64(&x);
    *out = s;
    return 0;
}

void cf_sampler_free(cf_sampler *s)
{
    if (!s)
        return;
    free(s->cand);
    free(s->spare);
    free(s->masked);
    free(s->count);
    free(s->hist);
    free(s->pen_ids);
    free(s);
}

int cf_sampler_set_params(cf_sampler *s, const cf_sampler_params *p, cf_err *err)
{
    if (cf_sampler_params_check(p, err))
        return -1;
    if (grow_history(s, p->repeat_last_n))
        return cf_fail(err, "out of memory for a %d-token penalty window", p->repeat_last_n);
    bool window_changed = p->repeat_last_n != s->par.repeat_last_n;
    s->par = *p;
    if (window_changed)
        recount(s);
    return 0;
}

void cf_sampler_set_mask(cf_sampler *s, const uint64_t *mask)
{
    s->mask = mask;
}

const cf_sampler_params *cf_sampler_get_params(const cf_sampler *s)
{
    return &s->par;
}

uint64_t cf_sampler_seed(const cf_sampler *s)
{
    return s->seed;
}

/* ---- sampling -------------------------------------------------------------- */

/* Draw from the n candidates the chain left (their p set). */
static int32_t draw(cf_sampler *s, size_t n)
{
    double u = (double)(cf_rng_next(&s->rng) >> 11) * 0x1.0p-53, acc = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        acc += s->cand[i].p;
        if (u < acc)
            return s->cand[i].id;
    }
    return s->cand[n - 1].id;
}

int32_t cf_sampler_sample(cf_sampler *s, const float *logits)
{
    size_t n = cf_sampler_run_chain(s, logits);
    if (n == 1)
        return s->cand[0].id;
    cf_cand_softmax(s->cand, n);
    return draw(s, n);
}

/* token's probability and the most likely few among the n candidates
 * (their p set), in one pass: each candidate is placed into the short
 * sorted list it beats. */
static void describe(const cf_sampler *s, size_t n, int32_t token, cf_token_prob *out)
{
    const cf_cand *c = s->cand;
    *out = (cf_token_prob){.id = token};
    for (size_t i = 0; i < n; i++) {
        if (c[i].id == token)
            out->p = c[i].p;
        int k = out->n_top;
        while (k > 0 && (c[i].p > out->top_p[k - 1] ||
                         (c[i].p == out->top_p[k - 1] && c[i].id < out->top_id[k - 1])))
            k--;
        if (k >= CF_TOP_PROBS)
            continue;
        int last = out->n_top < CF_TOP_PROBS ? out->n_top++ : CF_TOP_PROBS - 1;
        for (int j = last; j > k; j--) {
            out->top_id[j] = out->top_id[j - 1];
            out->top_p[j] = out->top_p[j - 1];
        }
        out->top_id[k] = c[i].id;
        out->top_p[k] = c[i].p;
    }
}

/* The chain's distribution into s->cand; greedy settings draw from a
 * point, so they are described by the chain at temperature 1 (the model's
 * own confidence after the filters). */
static size_t distribution(cf_sampler *s, const float *logits)
{
    float temp = s->par.temp;
    if (temp <= 0)
        s->par.temp = 1;
    size_t n = cf_sampler_run_chain(s, logits);
    s->par.temp = temp;
    cf_cand_softmax(s->cand, n);
    return n;
}

int32_t cf_sampler_sample_probs(cf_sampler *s, const float *logits, cf_token_prob *out)
{
    int32_t t;
    if (s->par.temp <= 0) {
        t = cf_sampler_sample(s, logits);
        describe(s, distribution(s, logits), t, out);
        return t;
    }
    size_t n = distribution(s, logits);
    t = n == 1 ? s->cand[0].id : draw(s, n);
    describe(s, n, t, out);
    return t;
}

void cf_sampler_token_prob(cf_sampler *s, const float *logits, int32_t token, cf_token_prob *out)
{
    describe(s, distribution(s, logits), token, out);
}

static int by_prob(const void *a, const void *b)
{
    const cf_cand *x = a, *y = b;
    if (x->p != y->p)
        return x->p > y->p ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

size_t cf_sampler_candidates(cf_sampler *s, const float *logits, int32_t *ids, float *probs,
                             size_t cap)
{
    size_t n = cf_sampler_run_chain(s, logits);
    cf_cand_softmax(s->cand, n);
    qsort(s->cand, n, sizeof *s->cand, by_prob);
    for (size_t i = 0; i < n && i < cap; i++) {
        ids[i] = s->cand[i].id;
        probs[i] = s->cand[i].p;
    }
    return n;
}

/* ---- state ------------------------------------------------------------------ */

void cf_sampler_get_rng(const cf_sampler *s, cf_rng *out)
{
    *out = s->rng;
}

void cf_sampler_set_rng(cf_sampler *s, const cf_rng *rng)
{
    s->rng = *rng;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define STATE_MAGIC "CFSM"
#define STATE_VERSION 1
#define STATE_HEAD (4 + 4 + 32 + 4)

size_t cf_sampler_state_save(const cf_sampler *s, void *buf, size_t cap)
{
    size_t need = STATE_HEAD + 4 * (size_t)s->hist_n;
    if (cap < need)
        return need;
    uint8_t *p = buf;
    memcpy(p, STATE_MAGIC, 4);
    put_u32(p + 4, STATE_VERSION);
    for (int i = 0; i < 4; i++) {
        put_u32(p + 8 + 8 * i, (uint32_t)s->rng.s[i]);
        put_u32(p + 12 + 8 * i, (uint32_t)(s->rng.s[i] >> 32));
    }
    put_u32(p + 40, (uint32_t)s->hist_n);
    for (int32_t i = 0; i < s->hist_n; i++) /* oldest first */
        put_u32(p + STATE_HEAD + 4 * (size_t)i,
                (uint32_t)s->hist[(s->hist_pos - s->hist_n + i + s->hist_cap) % s->hist_cap]);
    return need;
}

int cf_sampler_state_load(cf_sampler *s, const void *buf, size_t len, cf_err *err)
{
    const uint8_t *p = buf;
    if (len < STATE_HEAD || memcmp(p, STATE_MAGIC, 4) != 0)
        return cf_fail(err, "not a saved sampler state");
    if (get_u32(p + 4) != STATE_VERSION)
        return cf_fail(err, "saved sampler state has version %u (this build reads %d)",
                       get_u32(p + 4), STATE_VERSION);
    uint32_t n = get_u32(p + 40);
    if (n > CF_SAMPLER_MAX_LAST_N || len != STATE_HEAD + 4 * (size_t)n)
        return cf_fail(err, "saved sampler state: %u history tokens in %zu bytes", n, len);
    for (uint32_t i = 0; i < n; i++)
        if (get_u32(p + STATE_HEAD + 4 * (size_t)i) >= (uint32_t)s->n_vocab)
            return cf_fail(err, "saved sampler state: token %u is outside this %d-token vocabulary",
                           get_u32(p + STATE_HEAD + 4 * (size_t)i), s->n_vocab);
    if (grow_history(s, (int32_t)n))
        return cf_fail(err, "out of memory restoring %u history tokens", n);
    cf_sampler_reset(s);
    for (int i = 0; i < 4; i++)
        s->rng.s[i] = get_u32(p + 8 + 8 * i) | (uint64_t)get_u32(p + 12 + 8 * i) << 32;
    for (uint32_t i = 0; i < n; i++)
        s->hist[i] = (int32_t)get_u32(p + STATE_HEAD + 4 * (size_t)i);
    s->hist_n = (int32_t)n;
    s->hist_pos = (int32_t)(n % (uint32_t)s->hist_cap);
    recount(s);
    return 0;
}
