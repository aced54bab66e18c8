/* Speculative decoding: a drafter guesses the next tokens and the target
 * model checks all of them in one batched pass, so that one read of the
 * target's weights can give several tokens.
 *
 * The drafter is a second, smaller model of the same vocabulary (its
 * cache kept in step with the target's), or n-gram lookup in the context
 * itself.  Drafts are deterministic guesses (the draft model's most likely
 * token); each position of the check is then sampled from the target's
 * logits with the caller's sampler exactly as plain decoding samples it,
 * and the guesses are kept while they agree with those samples.  So every
 * token comes from the distribution plain decoding draws it from, and
 * greedy output is the same tokens, bit for bit (a token's logits are the
 * same bits batched or alone).  After a step the target's cache holds
 * what plain decoding's would; a rejected guess is cut off again
 * (recurrent state through its checkpoints). */
#ifndef CONFAB_SPEC_H
#define CONFAB_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/model.h"
#include "confab/sampler.h"
#include "confab/tokenizer.h"

typedef struct cf_spec_params {
    int draft_max;  /* 16: guesses checked at most in one pass */
    int draft_min;  /* 0: fewer guesses than this are not checked */
    float p_min;    /* 0.75: a draft model stops guessing below this probability */
    int ngram_min;  /* lookup: the shortest context suffix matched (2) */
    int ngram_max;  /* lookup: the longest (4) */
} cf_spec_params;

/* llama.cpp's defaults for the draft model (16, 0, 0.75); n-grams 2..4. */
void cf_spec_params_default(cf_spec_params *p);
int cf_spec_params_check(const cf_spec_params *p, cf_err *err);

/* 0 when a draft model's vocabulary is the target's (the same pieces for
 * the same ids), else a message naming the first difference. */
int cf_spec_vocab_check(const cf_tokenizer *target, const cf_tokenizer *draft, cf_err *err);

/* A draft model beside a target's context: its weights, tokenizer and a
 * context of the target's size (threads too). */
typedef struct cf_draft {
    cf_model *m;
    cf_tokenizer *tok;
    cf_ctx *ctx;
} cf_draft;

/* Load the draft at path for target (whose tokenizer is target_tok): 0,
 * or -1 with err (CF_E_MODEL: the file; CF_E_USAGE: another vocabulary),
 * d then empty. */
int cf_draft_open(cf_draft *d, const char *path, cf_load_mode mode, const cf_ctx *target,
                  const cf_tokenizer *target_tok, cf_err *err);
void cf_draft_close(cf_draft *d);

typedef struct cf_spec cf_spec;

/* draft: a context of the draft model (it must be empty; the spec keeps
 * it in step), or NULL for n-gram lookup. */
int cf_spec_new(cf_ctx *target, cf_ctx *draft, const cf_spec_params *p, cf_spec **out, cf_err *err);
void cf_spec_free(cf_spec *s);

/* The tokens the target's cache holds now (its n_past of them: the
 * prompt so far); the lookup searches them and the draft evaluates them. */
int cf_spec_begin(cf_spec *s, const int32_t *tokens, int n, cf_err *err);

/* Whether a sampled token ends generation (an end-of-generation token):
 * it is returned last and not accepted into the sampler. */
typedef bool (*cf_spec_stop_fn)(void *ud, int32_t token);

/* One step after x, the token last sampled (accepted into smp, not yet in
 * the target's cache): writes the tokens that follow it into out, at least
 * one and at most cap, each accepted into smp as it is drawn (but a stop
 * token).  Returns how many, or -1 with err.  After it the cache holds x
 * and every token of out but the last, as plain decoding's would. */
int cf_spec_step(cf_spec *s, cf_sampler *smp, int32_t x, int32_t *out, int cap, cf_spec_stop_fn stop,
                 void *ud, cf_err *err);

/* Row i of the last step's check: the logits its token i was drawn from
 * (i below the step's count; valid until the next step).  A caller that
 * stops before a step's last token draws them again to leave its sampler
 * as plain decoding would. */
const float *cf_spec_logits(const cf_spec *s, int i);

typedef struct cf_spec_stats {
    int64_t steps;    /* target passes that checked guesses (or none) */
    int64_t drafted;  /* guesses checked */
    int64_t accepted; /* guesses kept */
    int64_t tokens;   /* tokens the steps gave */
} cf_spec_stats;

const cf_spec_stats *cf_spec_get_stats(const cf_spec *s);

#endif
