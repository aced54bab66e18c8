/* The stages of the sampler chain, in llama.cpp's order: penalties, top-k,
 * typical-p, top-p, min-p, temperature.  The candidates live in one array;
 * every stage shrinks its live prefix using selection in linear expected
 * time (quickselect by key, or by accumulated probability for the p-stages)
 * instead of sorting the vocabulary. */
#include <math.h>
#include <string.h>

#include "sampler_internal.h"

static inline bool better(const cf_cand *a, const cf_cand *b)
{
    return a->key > b->key || (a->key == b->key && a->id < b->id);
}

static inline void swap(cf_cand *a, cf_cand *b)
{
    cf_cand t = *a;
    *a = *b;
    *b = t;
}

/* Move the pivot (a pseudo-random element of [lo, hi)) to its place;
 * better ones end up before it.  Returns its index. */
static size_t partition(cf_cand *c, size_t lo, size_t hi, uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    swap(&c[lo + (*seed >> 8) % (hi - lo)], &c[hi - 1]);
    size_t i = lo;
    for (size_t j = lo; j + 1 < hi; j++)
        if (better(&c[j], &c[hi - 1]))
            swap(&c[i++], &c[j]);
    swap(&c[i], &c[hi - 1]);
    return i;
}

/* Put the best k of c[0..n) first, in no particular order. */
static void select_top(cf_cand *c, size_t n, size_t k)
{
    uint32_t seed = 12345;
    size_t lo = 0, hi = n;
    while (k > lo && k < hi && hi - lo > 1) {
        size_t i = partition(c, lo, hi, &seed);
        if (k <= i)
            hi = i;
        else if (k == i + 1)
            return;
        else
            lo = i + 1;
    }
}

/* The smallest m such that the best m candidates (by key) carry probability
 * mass >= target (> with strict), put first; n if even all do not. */
static size_t select_mass(cf_cand *c, size_t n, double target, bool strict)
{
    uint32_t seed = 54321;
    size_t lo = 0, hi = n;
    double acc = 0; /* mass of c[0..lo), all better than the rest */
    while (lo < hi) {
        size_t i = partition(c, lo, hi, &seed);
        double mass = acc;
        for (size_t j = lo; j < i; j++)
            mass += c[j].p;
        if (strict ? mass > target : mass >= target) {
            hi = i;
            continue;
        }
        acc = mass + c[i].p;
        if (strict ? acc > target : acc >= target)
            return i + 1;
        lo = i + 1;
    }
    return lo;
}

/* select_mass for many candidates: histogram the mass by key first, keep
 * the buckets above the one where the target is reached, and select only
 * inside that one. */
static size_t select_mass_big(cf_cand *c, cf_cand *spare, size_t n, double target, bool strict)
{
    enum { B = 2048 };
    float kmax = -INFINITY, kmin = INFINITY;
    for (size_t i = 0; i < n; i++) {
        kmax = c[i].key > kmax ? c[i].key : kmax;
        kmin = c[i].key < kmin ? c[i].key : kmin;
    }
    float span = kmax - kmin;
    if (n < 1024 || !(span > 0) || !isfinite(kmax))
        return select_mass(c, n, target, strict);
    const float scale = (B - 1) / (span < 64 ? span : 64);
    double mass[B] = {0};
#define BUCKET(k) ((k) == -INFINITY || (kmax - (k)) * scale >= B - 1 ? B - 1 : (int)((kmax - (k)) * scale))
    for (size_t i = 0; i < n; i++)
        mass[BUCKET(c[i].key)] += c[i].p;
    double acc = 0;
    int b = 0;
    for (; b < B; b++) {
        double next = acc + mass[b];
        if (strict ? next > target : next >= target)
            break;
        acc = next;
    }
    if (b == B)
        return n;
    /* without branches: buckets above b to the front, bucket b to spare's
     * start, the rest to its end; then bucket b and the rest after the first */
    size_t lo = 0, nb = 0, nd = 0;
    for (size_t i = 0; i < n; i++) {
        int bi = BUCKET(c[i].key);
        spare[nb] = c[i];
        nb += bi == b;
        spare[n - 1 - nd] = c[i];
        nd += bi > b;
        c[lo] = c[i];
        lo += bi < b;
    }
    memcpy(c + lo, spare, nb * sizeof *c);
    memcpy(c + lo + nb, spare + n - nd, nd * sizeof *c);
    size_t mid = lo + nb;
#undef BUCKET
    return lo + select_mass(c + lo, mid - lo, target - acc, strict);
}

double cf_cand_softmax(cf_cand *c, size_t n)
{
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++)
        max = c[i].logit > max ? c[i].logit : max;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        c[i].p = max == -INFINITY ? 1.0f : expf(c[i].logit - max);
        sum += c[i].p;
    }
    for (size_t i = 0; i < n; i++)
        c[i].p = (float)(c[i].p / sum);
    return sum;
}

static inline size_t keep_min(const cf_sampler_params *p)
{
    return p->min_keep > 1 ? (size_t)p->min_keep : 1;
}

static inline float clean(float l)
{
    return isnan(l) ? -INFINITY : l;
}

/* ---- penalties ----------------------------------------------------------- */

static bool penalties_on(const cf_sampler *s)
{
    const cf_sampler_params *p = &s->par;
    return p->repeat_last_n != 0 && s->hist_n > 0 &&
           (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f || p->presence_penalty != 0.0f);
}

/* The distinct tokens of the window into pen_ids (marking seen ones by
 * negating their count for the moment). */
static size_t penalized_ids(cf_sampler *s)
{
    size_t n = 0;
    int32_t w = s->hist_n < s->par.repeat_last_n ? s->hist_n : s->par.repeat_last_n;
    for (int32_t i = 0; i < w; i++) {
        int32_t id = s->hist[((s->hist_pos - 1 - i) % s->hist_cap + s->hist_cap) % s->hist_cap];
        if (s->count[id] > 0) {
            s->count[id] = -s->count[id];
            s->pen_ids[n++] = id;
        }
    }
    for (size_t i = 0; i < n; i++)
        s->count[s->pen_ids[i]] = -s->count[s->pen_ids[i]];
    return n;
}

static float penalize(const cf_sampler *s, int32_t id, float l)
{
    const cf_sampler_params *p = &s->par;
    int32_t c = s->count[id];
    l = l <= 0 ? l * p->repeat_penalty : l / p->repeat_penalty;
    return l - (float)c * p->frequency_penalty - (c > 0 ? p->presence_penalty : 0.0f);
}

/* ---- the first stage: candidates from the logits, with penalties and
 * top-k ------------------------------------------------------------------- */

/* Cut the buffer back to its best `want`; the worst kept key is the new
 * threshold. */
static float cut_back(cf_cand *c, size_t n, size_t want)
{
    select_top(c, n, want);
    float thr = c[0].key;
    for (size_t j = 1; j < want; j++)
        thr = c[j].key < thr ? c[j].key : thr;
    return thr;
}

/* The best `want` raw logits in one pass: collect what beats the current
 * threshold, and cut the buffer back to `want` whenever it fills. */
static size_t scan_top(cf_cand *c, const float *logits, size_t n_vocab, size_t want, size_t cap)
{
    size_t n = 0, i = 0;
    float thr = -INFINITY;
    for (; i < n_vocab && n < cap; i++)
        c[n++] = (cf_cand){(int32_t)i, clean(logits[i]), 0, clean(logits[i])};
    if (n == cap) {
        thr = cut_back(c, n, want);
        n = want;
    }
    while (i < n_vocab) {
        /* whole blocks below the threshold are skipped (vectorizes) */
        size_t end = i + 64 < n_vocab ? i + 64 : n_vocab;
        int any = 0;
        for (size_t j = i; j < end; j++)
            any |= logits[j] > thr;
        for (; any && i < end; i++) {
            if (!(logits[i] > thr))
                continue;
            c[n++] = (cf_cand){(int32_t)i, logits[i], 0, logits[i]};
            if (n == cap) {
                thr = cut_back(c, n, want);
                n = want;
            }
        }
        i = end;
    }
    return n;
}

static size_t stage_first(cf_sampler *s, const float *logits, size_t k)
{
    cf_cand *c = s->cand;
    size_t V = (size_t)s->n_vocab, n_pen = penalties_on(s) ? penalized_ids(s) : 0;
    if (k + n_pen >= V / 2) { /* every token a candidate */
        for (size_t i = 0; i < V; i++)
            c[i] = (cf_cand){(int32_t)i, clean(logits[i]), 0, clean(logits[i])};
        for (size_t j = 0; j < n_pen; j++) {
            cf_cand *x = &c[s->pen_ids[j]];
            x->logit = x->key = penalize(s, x->id, x->logit);
        }
        if (k < V)
            select_top(c, V, k);
        return k < V ? k : V;
    }
    /* penalties can only reorder the penalized tokens, so the best k after
     * them are among the best k + n_pen before, or penalized */
    size_t n = scan_top(c, logits, V, k + n_pen, 2 * (k + n_pen));
    for (size_t j = 0; j < n;)
        if (n_pen && s->count[c[j].id] > 0)
            c[j] = c[--n];
        else
            j++;
    for (size_t j = 0; j < n_pen; j++) {
        int32_t id = s->pen_ids[j];
        float l = penalize(s, id, clean(logits[id]));
        c[n++] = (cf_cand){id, l, 0, l};
    }
    if (n > k) {
        select_top(c, n, k);
        n = k;
    }
    return n;
}

/* ---- the filters after it ------------------------------------------------ */

static size_t stage_typical(const cf_sampler_params *par, cf_cand *c, cf_cand *spare, size_t n)
{
    cf_cand_softmax(c, n);
    double entropy = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].p > 0)
            entropy -= c[i].p * log(c[i].p);
    /* most typical first: |-log p - H| smallest */
    for (size_t i = 0; i < n; i++)
        c[i].key = -fabsf(-logf(c[i].p) - (float)entropy);
    size_t m = select_mass_big(c, spare, n, par->typical_p, true);
    if (m < keep_min(par)) {
        m = keep_min(par) < n ? keep_min(par) : n;
        select_top(c, n, m);
    }
    for (size_t i = 0; i < n; i++)
        c[i].key = c[i].logit;
    return m < n ? m : n;
}

static size_t stage_top_p(const cf_sampler_params *par, cf_cand *c, cf_cand *spare, size_t n)
{
    cf_cand_softmax(c, n);
    size_t m = par->top_p <= 0 ? 0 : select_mass_big(c, spare, n, par->top_p, false);
    if (m < keep_min(par)) {
        m = keep_min(par) < n ? keep_min(par) : n;
        select_top(c, n, m);
    }
    return m < n ? m : n;
}

static size_t stage_min_p(const cf_sampler_params *par, cf_cand *c, size_t n)
{
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++)
        max = c[i].logit > max ? c[i].logit : max;
    const float min_logit = max + logf(par->min_p);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += c[i].logit >= min_logit;
    if (kept < keep_min(par)) {
        size_t m = keep_min(par) < n ? keep_min(par) : n;
        select_top(c, n, m);
        return m;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].logit >= min_logit)
            c[m++] = c[i];
    return m;
}

/* The logits with the tokens the mask leaves out at -inf, a word of the
 * mask at a time (most are all in or all out). */
static const float *apply_mask(cf_sampler *s, const float *logits)
{
    size_t V = (size_t)s->n_vocab;
    float *out = s->masked;
    for (size_t w = 0; w * 64 < V; w++) {
        size_t at = w * 64, n = V - at < 64 ? V - at : 64;
        uint64_t m = s->mask[w];
        if (m == UINT64_MAX) {
            memcpy(out + at, logits + at, n * sizeof *out);
        } else {
            for (size_t i = 0; i < n; i++)
                out[at + i] = m >> i & 1 ? logits[at + i] : -INFINITY;
        }
    }
    return out;
}

/* The candidates the mask left out (at -inf, drawn by no stage but
 * present where a filter keeps a count) dropped, at least one kept. */
static size_t drop_masked(cf_sampler *s, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s->mask[s->cand[i].id / 64] >> (s->cand[i].id % 64) & 1)
            s->cand[m++] = s->cand[i];
    return m ? m : 1;
}

static size_t run_stages(cf_sampler *s, const float *logits)
{
    const cf_sampler_params *par = &s->par;
    cf_cand *c = s->cand;
    size_t V = (size_t)s->n_vocab, k = par->top_k > 0 ? (size_t)par->top_k : V;
    if (par->temp <= 0 && par->typical_p >= 1)
        return stage_first(s, logits, 1); /* no filter can remove the best token */
    size_t n = stage_first(s, logits, k > keep_min(par) ? k : keep_min(par));
    if (par->typical_p < 1 && n > 1)
        n = stage_typical(par, c, s->spare, n);
    if (par->top_p < 1 && n > 1)
        n = stage_top_p(par, c, s->spare, n);
    if (par->min_p > 0 && n > 1)
        n = stage_min_p(par, c, n);
    if (par->temp <= 0) {
        size_t b = 0;
        for (size_t i = 1; i < n; i++)
            if (c[i].logit > c[b].logit || (c[i].logit == c[b].logit && c[i].id < c[b].id))
                b = i;
        c[0] = c[b];
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        c[i].logit /= par->temp;
    return n;
}

size_t cf_sampler_run_chain(cf_sampler *s, const float *logits)
{
    if (!s->mask)
        return run_stages(s, logits);
    return drop_masked(s, run_stages(s, apply_mask(s, logits)));
}
