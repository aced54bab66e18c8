/* The session's state, shared by its source files.
 *
 * The token history is the KV cache's own: `cache` lists exactly the
 * tokens the cache holds (cache.n == cf_ctx_n_past).  Each turn renders the
 * conversation into tokens (session_prompt.c), keeps the longest prefix it
 * shares with `cache` and evaluates the rest (session_turn.c).  Assistant
 * replies enter the rendering as the tokens that were sampled, so the
 * cached prefix stays valid from turn to turn.  A user message records
 * where its turn starts in the cache: context shifts and undo cut there. */
#ifndef CONFAB_CHAT_SESSION_INTERNAL_H
#define CONFAB_CHAT_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/sampler.h"
#include "confab/session.h"
#include "confab/template.h"
#include "confab/tokenizer.h"

typedef struct sess_msg {
    cf_message pub; /* role, content (owned, valid UTF-8), cut */
    cf_tokens ids;  /* assistant: the sampled tokens */
    int start;      /* user: cache position where its turn begins, -1 unknown */
} sess_msg;

/* The reply being generated. */
typedef struct sess_reply {
    bool active, finished;
    cf_token pending;  /* sampled and returned, not yet evaluated (-1: none) */
    int n_gen;
    char *text;        /* the raw bytes of the sampled pieces */
    size_t len, cap;
    size_t shown;      /* bytes of text passed to the caller */
    size_t stop_at;    /* where a stop string begins (finished by one) */
    cf_utf8_stream utf8;
    char *out;         /* the piece handed out */
    size_t out_cap;
    double t0;         /* begin_reply's clock */
} sess_reply;

struct cf_session {
    cf_model *model;
    cf_tokenizer *tok;
    cf_ctx *ctx;
    cf_chat_template *tmpl;
    char *tmpl_desc;
    char *bos_text, *eos_text; /* for the template; NULL where the vocabulary has none */
    int64_t now;               /* the clock templates see: fixed for the session */
    int render_mode;           /* how the template last rendered (session_prompt.c) */

    cf_sampler *smp;
    int n_predict;
    char **stops; /* user-given, NULL-terminated */
    size_t n_stops;

    sess_msg *msgs;
    int n_msgs, cap_msgs;

    cf_tokens cache;
    float *logits; /* n_vocab: the next token's, when have_logits */
    bool have_logits;

    sess_reply reply;
    cf_turn_stats stats;
    bool dirty;
};

/* ---- session.c ---------------------------------------------------------- */
double sess_now_ms(void);
/* A whole file, NUL-terminated, malloc'ed. */
char *sess_read_file(const char *path, size_t *len, cf_err *err);
/* A malloc'ed copy of text[0..len) with invalid UTF-8 replaced by U+FFFD. */
char *sess_utf8_clean(const char *text, size_t len);
bool sess_utf8_valid(const char *text, size_t len);
int sess_push_msg(cf_session *s, cf_role role, const char *text, size_t len, cf_err *err);
void sess_pop_msg(cf_session *s);
void sess_msg_free(sess_msg *m);
/* The index of the first user message, or n_msgs. */
int sess_first_user(const cf_session *s);

/* ---- session_prompt.c ---------------------------------------------------
 * The tokens of the first n messages as the template renders them, user
 * and system text as literal text, assistant replies as their sampled
 * tokens; add_gen appends the assistant's generation prompt. */
int sess_prompt_tokens(cf_session *s, int n, bool add_gen, cf_tokens *out, cf_err *err);
int sess_common_prefix(const cf_tokens *a, const cf_tokens *b);
/* Fill in the start of every user message that lacks one; full is the
 * rendering of all messages. */
void sess_find_starts(cf_session *s, const cf_tokens *full);

/* ---- session_turn.c ----------------------------------------------------- */
/* Keep the first n cached positions (user starts beyond them are forgotten). */
void sess_truncate(cf_session *s, int n);
/* How many of the oldest whole turns a context shift drops so that `need`
 * more tokens fit beside `used` ones and half the space after the system
 * prompt is free (fewer if the turns run out): the turns in *n_turns, the
 * cache positions they hold returned. */
int sess_shift_plan(const cf_session *s, int used, int need, int *n_turns);
/* Close the reply in progress (if any) as the user stopping it. */
void sess_close_reply(cf_session *s);

/* ---- session_settings.c ------------------------------------------------- */
/* A sampler with these settings and seed, replacing s->smp. */
int sess_sampler_reset(cf_session *s, const cf_sampler_params *p, uint64_t seed, cf_err *err);

#endif
