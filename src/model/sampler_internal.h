/* The sampler's state, shared by its two source files. */
#ifndef CONFAB_MODEL_SAMPLER_INTERNAL_H
#define CONFAB_MODEL_SAMPLER_INTERNAL_H

#include "confab/sampler.h"

/* One candidate token; key orders selections (larger first, then lower id). */
typedef struct cf_cand {
    int32_t id;
    float logit, p, key;
} cf_cand;

struct cf_sampler {
    int32_t n_vocab;
    cf_sampler_params par;
    uint64_t seed;
    cf_rng rng;

    cf_cand *cand, *spare; /* n_vocab work slots each */
    const uint64_t *mask;  /* the tokens allowed, NULL: all */
    float *masked;         /* n_vocab: the logits with the others -inf */

    /* penalty history: a ring of the last hist_cap accepted tokens, and how
     * often each token occurs among the last par.repeat_last_n of them */
    int32_t *hist;
    int32_t hist_cap, hist_n, hist_pos;
    int32_t *count;   /* n_vocab */
    int32_t *pen_ids; /* distinct tokens in the window (hist_cap slots) */
};

uint64_t cf_rng_next(cf_rng *r);
/* Every stage up to the draw; leaves the survivors in s->cand[0..n) with
 * their logits scaled by the temperature (or only the greedy pick). */
size_t cf_sampler_run_chain(cf_sampler *s, const float *logits);
/* Softmax of the candidates' logits into p; returns the sum of exps
 * relative to the largest. */
double cf_cand_softmax(cf_cand *c, size_t n);

#endif
