/* The session's state, shared by its source files.
 *
 * The token history is the KV cache's own: `cache` lists exactly the
 * tokens the cache holds (cache.n == cf_ctx_n_past).  Each turn renders the
 * conversation into tokens (session_prompt.c), keeps the longest prefix it
 * shares with `cache` and evaluates the rest (session_turn.c).  Replies
 * are generated and split into reasoning and content in session_reply.c;
 * both parts enter the rendering as the tokens that were sampled, so the
 * cached prefix stays valid from turn to turn as far as the template
 * renders a reply as it was written.  A user message records where its
 * turn starts in the cache: context shifts and undo cut there. */
#ifndef CONFAB_CHAT_SESSION_INTERNAL_H
#define CONFAB_CHAT_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/grammar.h"
#include "confab/sampler.h"
#include "confab/session.h"
#include "confab/template.h"
#include "confab/tokenizer.h"
#include "engine.h"
#include "reasoning.h"

typedef struct sess_msg {
    cf_message pub; /* role, content and reasoning (owned, valid UTF-8), flags */
    cf_tokens ids;  /* assistant: the content's tokens as sampled */
    cf_tokens rids; /* assistant: the reasoning's tokens as sampled */
    int start;      /* user: cache position where its turn begins, -1 unknown */
    cf_token_prob *probs; /* assistant: every sampled token's, when recorded */
    int n_probs;
} sess_msg;

/* A branch of the conversation: the current one's messages are s->msgs
 * (msgs here NULL), the others' are kept here. */
typedef struct sess_branch {
    int id;         /* 1, 2, ... in the order they began */
    char name[40];  /* "" none; the first is "main" */
    sess_msg *msgs;
    int n_msgs;
} sess_branch;

/* The reply being generated. */
enum { SESS_SPEC_MAX = 64 }; /* tokens a speculative step gives at most */

typedef struct sess_reply {
    bool active, finished;
    cf_token pending;  /* sampled and returned, not yet evaluated (-1: none) */
    int n_gen;
    char *text;        /* the raw bytes of the sampled pieces, markers included */
    size_t len, cap;
    cf_tokens ids;     /* the sampled tokens */
    size_t *ends;      /* text length after each of them */
    size_t ends_cap;
    cf_token_prob *probs; /* per sampled token while probs is on (p -1: off then) */
    size_t probs_cap, n_described; /* probs[0..n_described) are set */
    float step_prob;   /* this step's token's p, -1: none */
    size_t shown;      /* bytes of text given to the splitter */
    size_t stop_at;    /* where a stop string begins (finished by one) */
    splitter sp0;      /* the split's state where the generation prompt left it */
    splitter sp;       /* the split of what was shown */
    int undecided;     /* tokens of a gpt-oss header, their kind not known yet */
    bool reasoning_tok; /* the last token counted as reasoning */
    bool constrained;   /* the last token was drawn under the format's grammar */
    cf_utf8_stream utf8[2]; /* per split_kind */
    char *out[2];      /* the parts handed out, per split_kind */
    size_t out_cap[2];
    /* a speculative step's tokens (session_spec.c): q[0..nq-1) are in the
     * cache already, q[nq-1] is not; q[qat..nq) are still to be shown */
    cf_token q[SESS_SPEC_MAX];
    int nq, qat;
    const cf_tokens *script; /* test-only: the tokens to emit (session_script.c) */
    size_t script_pos;
    double t0;         /* begin_reply's clock */
} sess_reply;

/* The thinking settings (cf_session_set's "thinking", "reasoning-effort"). */
enum { THINK_AUTO, THINK_ON, THINK_OFF };
enum { EFFORT_AUTO, EFFORT_LOW, EFFORT_MEDIUM, EFFORT_HIGH };

struct cf_session {
    const sess_engine *eng;
    struct sess_remote *remote; /* the remote engine's state (remote.h); NULL: local */
    /* the local engine's: */
    cf_model *model;
    bool model_shared;             /* cf_session_params.model: not ours to free */
    char *model_path, *model_pick; /* its file's absolute path, cf_session_params.model_pick ("") */
    bool any_model;                /* cf_session_params.any_model */
    bool messages_as_text;         /* cf_session_params.messages_as_text */
    cf_tokenizer *tok;
    cf_ctx *ctx;
    cf_chat_template *tmpl;
    char *tmpl_desc;
    char untrained[128];       /* cf_session_untrained's reason, "" if none */
    char *bos_text, *eos_text; /* for the template; NULL where the vocabulary has none */
    int64_t now;               /* the clock templates see: fixed for the session */
    int render_mode;           /* how the template last rendered (session_prompt.c) */
    cf_chat_reasoning reasoning; /* the family replies are split by, and switches */
    reasoning_family fam;
    int thinking, effort;      /* THINK_*, EFFORT_* */
    bool probs;                /* record token probabilities */
    cf_tokens *scripted;       /* test-only replies (session_script.c) */
    long test_delay_ms;        /* test-only: before each piece of a reply */
    bool (*cancel)(void *ud);  /* cf_session_set_cancel's */
    void *cancel_ud;
    cf_session_decode_fn group_decode; /* cf_session_set_group's */
    void (*group_pause)(void *ud);
    void *group_ud;
    int n_scripted, next_script;

    cf_sampler *smp;
    /* the replies' format (session_format.c): its name, grammar and state;
     * NULL: free text */
    char *format;
    cf_grammar *format_g;
    cf_constraint *format_c;
    bool format_kept; /* format_g and _c are one of grammars[] */
    /* grammars given with a key (cf_session_set_grammar), kept with their
     * masks for the next time the same key comes: a server's requests
     * repeat their tools and schemas */
    struct sess_grammar {
        char *key;
        cf_grammar *g;
        cf_constraint *c;
        unsigned used;
    } grammars[4];
    unsigned grammar_clock;
    /* speculative decoding (session_spec.c): the drafter's model and
     * context (lookup: none), and the ctx the spec was made for (a loaded
     * session may bring another) */
    cf_draft draft;
    cf_spec *spec;
    const cf_ctx *spec_ctx;
    void *spec_smp; /* the sampler's state before the last step */
    size_t spec_smp_len, spec_smp_cap;
    cf_spec_params spec_params;
    /* the session's, whatever the engine: */
    unsigned set_mask; /* settings given a value (bit i: cf_session_setting_names()[i]) */
    int n_predict;
    char **stops; /* user-given, NULL-terminated */
    size_t n_stops;
    char *tools;         /* cf_session_set_tools' JSON list, NULL: none */
    int tool_fmt;        /* the template's syntax for calls (cf_tool_format) */
    cf_logit_bias *bias; /* added to the logits before each draw */
    size_t n_bias;

    sess_msg *msgs;
    int n_msgs, cap_msgs;
    sess_branch *branches; /* every branch, the current one's messages in msgs */
    int n_branches, cur, next_branch;

    cf_tokens cache;
    float *logits; /* n_vocab: the next token's, when have_logits */
    bool have_logits;

    sess_reply reply;
    cf_turn_stats stats;
    bool dirty;
};

/* ---- the local engine (engine_local.c lists them) ------------------------- */
int sess_local_open(cf_session *s, const cf_session_params *p, cf_err *err); /* session.c */
void sess_local_free(cf_session *s);
/* session_format.c: set the format by its /set value; before a token is
 * drawn, the sampler's mask for it; after, the grammar's step over it */
int sess_set_format(cf_session *s, const char *value, cf_err *err);
void sess_format_free(cf_session *s);
void sess_format_close(cf_session *s); /* the format and the kept grammars */
int sess_format_mask(cf_session *s, cf_err *err);
int sess_format_accept(cf_session *s, cf_token t, cf_err *err);
void sess_local_context_info(const cf_session *s, cf_context_info *out);
int sess_local_open_reply(cf_session *s, double t0, bool forked, cf_err *err); /* session_turn.c */
void sess_local_drop_from(cf_session *s, int i);
int sess_local_resync(cf_session *s, cf_err *err);
void sess_local_prefill(cf_session *s, int *reused, int *prefilled); /* session_branch.c */
int sess_local_next_part(cf_session *s, cf_reply_part *part, cf_err *err); /* session_reply.c */
void sess_local_end_reply(cf_session *s, bool cut);
int sess_local_prompt_text(cf_session *s, const char *user_text, char **text, int *n_tokens,
                           int *n_cached, cf_err *err); /* session_prompt.c */
/* session_spec.c: the drafter of p (none asked: nothing), its step after
 * the reply's pending token (into reply.q, at most cap tokens), and the
 * cache cut back to the reply's tokens when it ends mid-step. */
int sess_spec_open(cf_session *s, const cf_session_params *p, cf_err *err);
/* An end-of-generation token that ends the reply (session_reply.c). */
bool sess_ends_reply(const cf_session *s, cf_token t);
void sess_spec_free(cf_session *s);
int sess_spec_step(cf_session *s, int cap, cf_err *err);
void sess_spec_settle(cf_session *s);

/* ---- the remote engine (remote.c) ------------------------------------------ */
int sess_remote_open(cf_session *s, const cf_session_params *p, cf_err *err);

/* ---- session.c ---------------------------------------------------------- */
/* A whole file, NUL-terminated, malloc'ed. */
char *sess_read_file(const char *path, size_t *len, cf_err *err);
/* A malloc'ed copy of text[0..len) with invalid UTF-8 replaced by U+FFFD. */
char *sess_utf8_clean(const char *text, size_t len);
bool sess_utf8_valid(const char *text, size_t len);
int sess_push_msg(cf_session *s, cf_role role, const char *text, size_t len, cf_err *err);
void sess_pop_msg(cf_session *s);
void sess_msg_free(sess_msg *m);
/* session_replace.c: a message of the session from a caller's (copies,
 * invalid UTF-8 replaced; the fields its role has no use for dropped). */
int sess_msg_from(const cf_message *m, sess_msg *out, cf_err *err);
/* session_tools.c: an assistant's tool_calls as templates read them (each
 * call's arguments an object, not its text); malloc'ed, NULL when it is not
 * JSON or memory runs out. */
char *sess_template_tool_calls(const char *json);
/* The index of the first user message, or n_msgs. */
int sess_first_user(const cf_session *s);

/* ---- session_prompt.c ---------------------------------------------------
 * The first n messages as the template renders them: the text with each
 * message's content and reasoning as placeholders (what a tokenizer that
 * adds BOS itself would double taken off), into *text (malloc'ed). */
int sess_render_text(cf_session *s, int n, bool add_gen, char **text, size_t *len, cf_err *err);
/* Such a text as tokens: user and system text as literal text, replies'
 * parts as their sampled tokens.  The whole text, or a piece of it: its
 * head (BOS and EOS as the vocabulary adds them), or a piece from the
 * middle that follows text (it continues it: no SPM space prefix) or a
 * special token (plain text opening it takes the prefix). */
typedef enum sess_piece { PIECE_HEAD, PIECE_AFTER_TEXT, PIECE_AFTER_SPECIAL } sess_piece;
int sess_tokenize_text(cf_session *s, int n, const char *text, size_t len, sess_piece piece,
                       cf_tokens *out, cf_err *err);
/* A rendering's placeholders (U+E000, a message's index, 'r' for its
 * reasoning, U+E001): the index of one of the first n messages' at p (end:
 * the text's end), or -1; *after receives where it ends, *reasoning
 * whether it stands for the reasoning. */
#define SLOT_OPEN "\xee\x80\x80"  /* U+E000 */
#define SLOT_CLOSE "\xee\x80\x81" /* U+E001 */
#define SLOT_MARK_LEN 3
int sess_slot_at(const char *p, const char *end, int n, const char **after, bool *reasoning);
/* Both at once; add_gen appends the assistant's generation prompt; the
 * text comes back in *keep when it is not NULL. */
int sess_prompt_tokens(cf_session *s, int n, bool add_gen, cf_tokens *out, char **keep,
                       size_t *keep_len, cf_err *err);
int sess_common_prefix(const cf_tokens *a, const cf_tokens *b);
/* Where a reply to the rendering text starts its split: inside the
 * thinking when the generation prompt opens it. */
void sess_prime_split(const cf_session *s, const char *text, size_t len, splitter *sp);

/* ---- session_starts.c ----------------------------------------------------
 * Fill in the start of every user message that lacks one; full is the
 * rendering of all messages, text its placeholder text. */
void sess_find_starts(cf_session *s, const cf_tokens *full, const char *text, size_t len);

/* ---- session_reply.c ----------------------------------------------------- */
/* A token's bytes in a reply's raw text (the reasoning family's markup
 * tokens as their text). */
cf_str sess_raw_piece(const cf_session *s, cf_token t);
/* Start the reply (its message pushed already); sp0 the primed split. */
void sess_reply_open(cf_session *s, double t0, const splitter *sp0);
/* The reply's parts as they stand (texts, tokens, thinking_cut) into m,
 * whose text and tokens are replaced; the text after `end` left out. */
void sess_reply_settle(cf_session *s, size_t end, sess_msg *m);
/* Close the reply in progress (if any) as the user stopping it. */
void sess_close_reply(cf_session *s);

/* ---- session_turn.c ----------------------------------------------------- */
/* Keep the first n cached positions (user starts beyond them are forgotten). */
void sess_truncate(cf_session *s, int n);
/* How many of the oldest whole turns a context shift drops so that `need`
 * more tokens fit beside `used` ones and half the space after the system
 * prompt is free (fewer if the turns run out): the turns in *n_turns, the
 * cache positions they hold returned. */
int sess_shift_plan(const cf_session *s, int used, int need, int *n_turns);
/* Drop the oldest n_turns whole turns (sess_shift_plan's count). */
int sess_shift(cf_session *s, int n_turns, cf_err *err);

/* Drop messages i.. and what the engine holds of them. */
void sess_drop_from(cf_session *s, int i);
/* cf_session_begin_reply; forked: right after a fork made for it (an
 * edit), which a remote engine's late failure undoes. */
int sess_begin_reply(cf_session *s, const char *user_text, bool forked, cf_err *err);

/* ---- session_branch.c ------------------------------------------------------ */
int sess_branches_init(cf_session *s, cf_err *err);
void sess_branches_free(cf_session *s);
void sess_branch_free(sess_branch *b);
/* A deep copy (start -1); -1 when out of memory. */
int sess_msg_copy(const sess_msg *m, sess_msg *out);
/* Keep a copy of the current path on the current branch and go on as a
 * new one (name NULL: none); sess_unfork undoes the last fork, the path
 * kept coming back. */
int sess_fork(cf_session *s, const char *name, cf_err *err);
void sess_unfork(cf_session *s);

/* ---- sessfile.c ------------------------------------------------------------
 * The checksum that ends a session file, over its other bytes (the fuzzer
 * of tests/fuzz seals its inputs with it, to get past the check). */
uint64_t sess_checksum(const uint8_t *p, size_t n);

/* ---- session_script.c ----------------------------------------------------- */
/* Test-only: CONFAB_TEST_TOKEN_DELAY_MS, read at cf_session_new (0: none). */
long sess_test_delay_ms(void);
/* Test-only: CONFAB_TEST_REPLIES=FILE, read at cf_session_new. */
int sess_script_load(cf_session *s, cf_err *err);
void sess_script_free(cf_session *s);
/* The scripted tokens of the next reply, or NULL (sample). */
const cf_tokens *sess_script_next(cf_session *s);

/* ---- session_settings.c ------------------------------------------------- */
/* A sampler with these settings and seed, replacing s->smp. */
int sess_sampler_reset(cf_session *s, const cf_sampler_params *p, uint64_t seed, cf_err *err);

#endif
