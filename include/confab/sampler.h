/* Choosing the next token from a vector of logits, with llama.cpp's default
 * sampler chain:
 *
 *   penalties (repeat / frequency / presence over the last N tokens)
 *   -> top-k -> typical-p -> top-p -> min-p -> temperature -> draw
 *
 * Each stage can be switched off.  Temperature <= 0 is greedy: the highest
 * logit, the lowest id on ties.  Settings may change between any two
 * tokens (cf_sampler_set_params); the random state and the penalty history
 * can be saved and restored exactly.  Sampling allocates nothing and never
 * sorts the whole vocabulary: stages work by partial selection.
 *
 * A sampler is for one thread at a time. */
#ifndef CONFAB_SAMPLER_H
#define CONFAB_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"

typedef struct cf_sampler_params {
    float temp;              /* 0.8; <= 0: greedy */
    int32_t top_k;           /* 40; <= 0: off */
    float top_p;             /* 0.95; >= 1: off */
    float min_p;             /* 0.05 (relative to the most likely token); <= 0: off */
    float typical_p;         /* 1.0 = off */
    float repeat_penalty;    /* 1.0 = off; > 1 discourages repeats */
    int32_t repeat_last_n;   /* 64: how many recent tokens the penalties see; 0: none */
    float presence_penalty;  /* 0.0: subtracted once from a token seen in that window */
    float frequency_penalty; /* 0.0: subtracted once per time it was seen */
    int32_t min_keep;        /* 0: every filter keeps at least max(1, min_keep) tokens */
} cf_sampler_params;

#define CF_SAMPLER_SEED_RANDOM UINT64_MAX
#define CF_SAMPLER_MAX_LAST_N (1 << 20)

/* llama.cpp's defaults (values above). */
void cf_sampler_params_default(cf_sampler_params *p);
/* 0, or a message naming the first setting out of range. */
int cf_sampler_params_check(const cf_sampler_params *p, cf_err *err);

/* The settings by name, as the command line and /set spell them: temp,
 * top-k, top-p, min-p, typical, repeat-penalty, repeat-last-n,
 * presence-penalty, frequency-penalty (NULL-terminated list).  _set parses
 * value into p's setting, or leaves p as it was and says which setting
 * and what range; _get formats it into buf (NULL: no such setting). */
const char *const *cf_sampler_setting_names(void);
int cf_sampler_setting_set(cf_sampler_params *p, const char *name, const char *value, cf_err *err);
const char *cf_sampler_setting_get(const cf_sampler_params *p, const char *name, char *buf, size_t n);

typedef struct cf_sampler cf_sampler;

/* seed CF_SAMPLER_SEED_RANDOM draws one from the system. */
int cf_sampler_create(int32_t n_vocab, const cf_sampler_params *p, uint64_t seed, cf_sampler **out,
                      cf_err *err);
void cf_sampler_free(cf_sampler *s);

/* New settings for the next sample (the history is kept). */
int cf_sampler_set_params(cf_sampler *s, const cf_sampler_params *p, cf_err *err);
const cf_sampler_params *cf_sampler_get_params(const cf_sampler *s);
uint64_t cf_sampler_seed(const cf_sampler *s); /* the seed in use */

/* Choose a token from n_vocab logits (NaN counts as -inf).  It does not
 * enter the penalty history: call cf_sampler_accept for every token that
 * enters the context, prompt tokens included (as llama.cpp does). */
int32_t cf_sampler_sample(cf_sampler *s, const float *logits);
void cf_sampler_accept(cf_sampler *s, int32_t token);
void cf_sampler_reset(cf_sampler *s); /* forget the history */

/* Only tokens whose bit is set in mask (bit id % 64 of word id / 64, as
 * cf_constraint_mask gives it) can be chosen, until the next call; NULL:
 * every token.  The others count as -inf logits in every stage and are
 * never candidates.  The mask is read at each sample, not copied. */
void cf_sampler_set_mask(cf_sampler *s, const uint64_t *mask);

/* The candidates left after every stage, with the probabilities the draw
 * uses, most likely first (ties: lower id first).  Writes at most cap and
 * returns how many there are.  Uses no randomness. */
size_t cf_sampler_candidates(cf_sampler *s, const float *logits, int32_t *ids, float *probs,
                             size_t cap);

/* ---- token probabilities ----------------------------------------------------
 * What llama-server's n_probs reports: the chosen token's probability in
 * the distribution it was drawn from, and the most likely tokens there.
 * With greedy settings (temp <= 0) that distribution is the chain's at
 * temperature 1.  The draw is the one cf_sampler_sample makes (the same
 * random numbers, the same token).  The most likely 20 are kept: what
 * OpenAI's top_logprobs goes up to. */
#define CF_TOP_PROBS 20

typedef struct cf_token_prob {
    int32_t id;
    float p;    /* 0: the filters removed it (a token not drawn, as a test script's) */
    int32_t n_top;
    int32_t top_id[CF_TOP_PROBS]; /* most likely first, ties: lower id first */
    float top_p[CF_TOP_PROBS];
} cf_token_prob;

int32_t cf_sampler_sample_probs(cf_sampler *s, const float *logits, cf_token_prob *out);
/* The same description for a token chosen elsewhere; no randomness used. */
void cf_sampler_token_prob(cf_sampler *s, const float *logits, int32_t token, cf_token_prob *out);

/* ---- saving and restoring ---------------------------------------------------
 * The random state alone is a plain struct (xoshiro256**). */
typedef struct cf_rng {
    uint64_t s[4];
} cf_rng;

void cf_sampler_get_rng(const cf_sampler *s, cf_rng *out);
void cf_sampler_set_rng(cf_sampler *s, const cf_rng *rng);

/* Random state and penalty history as bytes (a fixed little-endian layout:
 * "CFSM", version, the 4 state words, the history count and ids, oldest
 * first).  save returns the size needed and writes only when cap is
 * enough; load fails on anything but such bytes for this vocabulary. */
size_t cf_sampler_state_save(const cf_sampler *s, void *buf, size_t cap);
int cf_sampler_state_load(cf_sampler *s, const void *buf, size_t len, cf_err *err);

#endif
