/* session: a multi-turn chat over one model context.
 *
 * Holds the messages, the exact token history with turn boundaries, the
 * sampler and its settings.  Each user turn renders the conversation with
 * the chat template, keeps the longest common token prefix with the KV
 * cache and prefills only what is new; the reply is stored as the tokens
 * that were sampled.  When the context would overflow, whole old turns are
 * dropped (the system prompt stays) and the kept cache cells are shifted.
 * Sessions save to and load from a versioned, checksummed file.
 *
 * Generation is an iterator so the caller (the REPL) can stream text,
 * change settings between any two tokens and stop at any time:
 *     cf_session_begin_reply(s, "hello", &err);
 *     while ((rc = cf_session_next(s, &piece, &err)) == CF_NEXT_TOKEN)
 *         show(piece);
 *     cf_session_end_reply(s, cut_by_user);
 *
 * Reasoning models think before they answer: each reply is split, as it
 * streams, into its reasoning and its content by the markers of the
 * model's family (<think>...</think>, gpt-oss's analysis and final
 * channels, ...: src/chat/reasoning.h).  Messages keep the two apart; the
 * chat template decides what of the reasoning goes back to the model in
 * later turns (most drop it), and the cache keeps whatever still agrees.
 *
 * The replies come from an engine: the model file loaded here, or an
 * OpenAI-compatible server (vLLM, llama-server, ollama, a hosted API, or
 * `confab serve`) given by its URL.  Everything above works the same with
 * either; a remote session has no model, tokens, cache or logits of its
 * own (those calls say so), sends the whole transcript with each request
 * and reads the reply as it streams.
 *
 * Knows nothing of terminals. */
#ifndef CONFAB_SESSION_H
#define CONFAB_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/common.h"
#include "confab/model.h"
#include "confab/sampler.h"
#include "confab/spec.h"
#include "confab/template.h"

typedef struct cf_session cf_session;

typedef struct cf_session_params {
    const char *model_path;
    const char *tokenizer_path;     /* llama2.c checkpoints only */
    int n_ctx, n_batch, n_threads;  /* 0: defaults (see cf_ctx_params) */
    cf_kv_type type_k, type_v;      /* of the KV cache (cf_ctx_params) */
    bool kv_no_rotate;
    int n_gpu_layers, gpu_device;   /* layers offloaded to a GPU, and which (cf_ctx_params) */
    cf_load_mode load_mode;         /* of the weights; 0: CF_LOAD_AUTO */
    const char *chat_template;      /* built-in name, or NULL */
    const char *chat_template_file; /* Jinja file, or NULL */
    const char *system_prompt;      /* NULL: none */
    const char *model_pick;         /* the 'confab models' name the model was picked by, saved
                                       with the session for a chat that names no model; NULL */
    bool any_model;                 /* a session file of another model loads as its
                                       transcript (cf_session_load), as a remote one's does */
    /* A remote engine instead of a model file: an OpenAI-compatible
     * server's base URL (requests go to {endpoint}/chat/completions), the
     * model to ask it for (NULL: the only one its GET {endpoint}/models
     * lists) and the key to send (never saved).  The model file and
     * context fields are unused then. */
    const char *endpoint;
    const char *remote_model;
    const char *api_key;
    int timeout_ms;                 /* the longest silence from the server; 0: 300 s */
    int retries;                    /* of 429 and 5xx answers; 0: 3, < 0: none */
    /* Speculative decoding of the replies (spec.h), local only: a draft
     * model of the same vocabulary, or guesses from the context (lookup);
     * spec NULL: llama.cpp's defaults. */
    const char *draft_model;
    bool lookup;
    const cf_spec_params *spec;
    /* cf_session_set_messages renders every message from its text, never
     * from the tokens the model wrote for it, so that the prompt depends
     * on the messages alone and not on what the session answered before
     * (serve: a reply is the same whichever slot answers it, whatever came
     * before); the cache still keeps the tokens the two share. */
    bool messages_as_text;
    /* A model open already (serve's slots share one): used instead of
     * loading model_path (still its name), and not freed with the session,
     * which must go before it.  NULL: load model_path. */
    const cf_model *model;
} cf_session_params;

/* Open the model (or reach the server) and create an empty session.
 * Settings start at llama.cpp's defaults; change them with cf_session_set
 * (a remote session sends only those given a value: the rest are the
 * server's). */
int cf_session_new(const cf_session_params *p, cf_session **out, cf_err *err);
void cf_session_free(cf_session *s);

/* ---- settings -------------------------------------------------------------
 * Named as the REPL's /set and the command line spell them: temp, top-k,
 * top-p, min-p, typical, repeat-penalty, repeat-last-n, presence-penalty,
 * frequency-penalty, seed, n-predict; thinking (auto|on|off: the template
 * variable enable_thinking, unset for auto) and reasoning-effort
 * (auto|low|medium|high: reasoning_effort, gpt-oss's), which change the
 * prompt from the next turn on; probs (on|off): record each sampled
 * token's probability and alternatives (cf_session_probs).  A bad name or value changes nothing and
 * returns an error naming the problem and the valid range.  A sampler
 * setting takes effect from the next sampled token. */
int cf_session_set(cf_session *s, const char *name, const char *value, cf_err *err);
/* The check cf_session_set makes of a value, without a session (the
 * command line and the config file check theirs before the model loads):
 * 0, or -1 with the same message. */
int cf_session_setting_check(const char *name, const char *value, cf_err *err);
/* The value as text (buf of n bytes); NULL for an unknown name. */
const char *cf_session_get(const cf_session *s, const char *name, char *buf, size_t n);
/* NULL-terminated list of setting names (for /show settings, completion). */
const char *const *cf_session_setting_names(void);
/* Whether the setting was never given a value (a remote session leaves
 * it to the server then). */
bool cf_session_setting_is_default(const cf_session *s, const char *name);

/* A grammar the replies keep to, as the setting format does (from the
 * first token outside a thinking block), given whole: what confab serve's
 * response_format and tool_choice ask for.  The session takes g over (and
 * frees it, on failure too); what names it for cf_session_get("format");
 * g NULL: free text again.  key (NULL: none) says which grammar it is (its
 * schema's text, say): the session keeps the last few keyed ones with the
 * masks their states have needed, and a key it keeps takes that grammar
 * again instead of g (the masks are the cost of a new grammar: tens of
 * milliseconds a state on a large vocabulary).  A grammar whose start
 * allows no token of the vocabulary is refused.  A local model only. */
struct cf_grammar;
int cf_session_set_grammar(cf_session *s, const char *what, const char *key,
                           struct cf_grammar *g, cf_err *err);

/* ---- the conversation ------------------------------------------------------ */
typedef enum cf_role {
    CF_ROLE_SYSTEM,
    CF_ROLE_USER,
    CF_ROLE_ASSISTANT,
    CF_ROLE_TOOL, /* a tool's result, answering an assistant's call */
} cf_role;

typedef struct cf_message {
    cf_role role;
    const char *content;   /* an assistant's: the answer, without the reasoning */
    const char *reasoning; /* an assistant's thinking; NULL: none */
    bool cut;              /* an assistant reply stopped by the user */
    bool thinking_cut;     /* the reply ended inside its thinking (n-predict,
                              stopped, context full) */
    bool length_cut;       /* the reply stopped at the n-predict limit */
    /* An assistant's calls of tools, as OpenAI's tool_calls (a JSON list of
     * {"id", "type": "function", "function": {"name", "arguments"}}), and
     * a tool's result's call id: NULL when none.  The template sees the
     * calls with their arguments as objects. */
    const char *tool_calls;
    const char *tool_call_id;
} cf_message;

/* The messages the model sees, oldest first (a context shift removes the
 * turns it drops; a user message's text is kept with invalid UTF-8
 * replaced by U+FFFD). */
int cf_session_n_messages(const cf_session *s);
const cf_message *cf_session_message(const cf_session *s, int i);
/* Replace (or remove with NULL) the system prompt; the cache is rewound to
 * where the conversation changes and re-prefilled lazily.  Fails, changing
 * nothing, when the chat template cannot render it (some refuse system
 * messages). */
int cf_session_set_system(cf_session *s, const char *text, cf_err *err);

/* Replace the whole conversation, the system prompt included (a system
 * message may only come first), as a server does with each request.  The
 * leading messages that agree with the session's (an assistant's sent
 * back without its reasoning agrees) keep the tokens the model wrote, so
 * the next turn's cache keeps their prefix; the rest is rendered and
 * prefilled as text at the next turn.  On an error nothing changes. */
int cf_session_set_messages(cf_session *s, const cf_message *msgs, int n, cf_err *err);

/* Append a message without a reply (a tool's result, before
 * cf_session_continue); a system message only first.  Nothing is
 * evaluated until the next reply. */
int cf_session_add_message(cf_session *s, const cf_message *m, cf_err *err);

/* The tools the model may call (a JSON list of OpenAI tools, rendered by
 * the chat template as its `tools`; NULL: none), and the syntax the
 * template teaches for calling them (confab/tools.h; CF_TOOLS_NONE: it
 * renders none, or it is a built-in).  Replies keep the syntax's control
 * tokens in their text while tools are set, so its calls can be read
 * back. */
int cf_session_set_tools(cf_session *s, const char *tools_json, cf_err *err);
int cf_session_tool_format(const cf_session *s);

/* Stop strings besides the template's own ("<|im_end|>" written as text,
 * ...): the list replaces the previous one (n = 0 clears it).  A reply
 * ends before the first stop string it contains. */
int cf_session_set_stops(cf_session *s, const char *const *stops, size_t n, cf_err *err);
/* The user-given stop strings, NULL-terminated. */
const char *const *cf_session_stops(const cf_session *s);

/* A bias added to a token's logit before each draw (OpenAI's logit_bias,
 * llama.cpp's --logit-bias): -100 all but bans it, 100 all but forces it. */
typedef struct cf_logit_bias {
    int32_t id;
    float bias;
} cf_logit_bias;
/* The list replaces the previous one (n = 0 clears it); an id outside the
 * vocabulary or a bias outside [-100, 100] is an error naming it, and
 * nothing changes.  A local model only.  cf_session_logits shows the
 * logits with the bias added. */
int cf_session_set_logit_bias(cf_session *s, const cf_logit_bias *b, size_t n, cf_err *err);

/* ---- replies ---------------------------------------------------------------- */
typedef enum cf_next {
    CF_NEXT_TOKEN = 1, /* *piece holds the next text (may be "" while UTF-8 is incomplete) */
    CF_NEXT_DONE = 0,  /* the reply ended (see cf_turn_stats.stop); *piece is "" */
} cf_next;

/* Add a user message and prefill what the cache lacks.  (Test-only:
 * CONFAB_TEST_REPLIES=FILE makes replies emit scripted tokens instead of
 * sampled ones: src/chat/session_script.c.) */
int cf_session_begin_reply(cf_session *s, const char *user_text, cf_err *err);
/* A check that a local session asks, between the layers of each batch
 * while a turn's prompt is evaluated (cf_session_begin_reply, _regen,
 * _edit), whether to stop (the user pressed Ctrl-C, the client left).
 * When it says so the call fails with CF_E_CANCELLED and changes nothing:
 * the messages, the cache (what of it the conversation still shares) and
 * a recurrent state are as before the call.  (A prompt that needed a
 * context shift keeps the shift.)  NULL: never stop. */
void cf_session_set_cancel(cf_session *s, bool (*cancel)(void *ud), void *ud);
/* Start a reply to the conversation as it stands, without a new user
 * message: after a tool's result (its last message).  Iterate as after
 * begin_reply. */
int cf_session_continue(cf_session *s, cf_err *err);
/* Evaluating a session beside others (serve's parallel slots): each token
 * a reply generates is evaluated by decode(ud, ctx, token, logits, err),
 * which must do what cf_ctx_decode(ctx, &token, 1, logits, false, err)
 * would (serve gathers the slots' tokens into one cf_ctx_decode_group),
 * and a prompt calls pause(ud) before it is evaluated and between its
 * batches (cf_ctx_set_pause: the other slots' step runs there).  Either NULL:
 * that part is done here alone.  A speculative session evaluates its
 * steps itself. */
typedef int (*cf_session_decode_fn)(void *ud, cf_ctx *ctx, int32_t token, float *logits,
                                    cf_err *err);
void cf_session_set_group(cf_session *s, cf_session_decode_fn decode, void (*pause)(void *ud),
                          void *ud);
/* Start a reply that continues prompt as plain text, without the chat
 * template (what /v1/completions asks): the conversation is cleared, the
 * cache keeps what it shares with the prompt's tokens, and the reply is
 * read and ended as a chat's.  A local model only. */
int cf_session_begin_raw(cf_session *s, const char *prompt, cf_err *err);
/* Sample, evaluate and return the next piece of the reply (valid until the
 * next call); < 0 on error (the partial reply is kept). */
int cf_session_next(cf_session *s, const char **piece, cf_err *err);
/* The same, the text split: the reasoning's next text and then the
 * content's (either may be ""); thinking: the reply is inside its
 * reasoning now.  cf_session_next hands out only the content. */
typedef struct cf_reply_part {
    const char *reasoning, *content;
    bool thinking;
    /* The probability of the token sampled in this step (the setting
     * probs on), else -1.  Its text is almost always what this part hands
     * out; text held back to decide a stop string or a reasoning marker
     * comes out with a later token's part. */
    float prob;
} cf_reply_part;
int cf_session_next_part(cf_session *s, cf_reply_part *part, cf_err *err);
/* The last reply's raw text as the model wrote it, its family's markup
 * (and a tool syntax's, while tools are set) included, *len bytes: valid
 * until the next reply begins.  NULL before any (and for a remote one). */
const char *cf_session_reply_text(const cf_session *s, size_t *len);
/* Close the reply; cut = the user stopped it (it stays, marked as cut). */
void cf_session_end_reply(cf_session *s, bool cut);

/* Drop the last exchange (user message and reply) and rewind the cache. */
int cf_session_undo(cf_session *s, cf_err *err);
/* Start a new reply to the last message with the current settings, on a
 * new branch (the old reply stays on the old one); then iterate with
 * cf_session_next as after begin_reply. */
int cf_session_regen(cf_session *s, cf_err *err);
/* Forget the conversation, keep the system prompt. */
int cf_session_clear(cf_session *s, cf_err *err);

/* ---- branches -----------------------------------------------------------------
 * A conversation is a tree.  /regen (cf_session_regen) and an edit
 * (cf_session_edit) start a new branch and keep the old one as it was;
 * cf_session_fork starts one by hand.  Branches are numbered from 1 in the
 * order they began; the first is called "main", the others have the name
 * given to cf_session_fork or none.  The current branch's messages are
 * cf_session_message's; undo, clear and context shifts change it alone. */
typedef struct cf_branch_info {
    int id;
    const char *name; /* "" when it has none */
    bool current;
    int n_messages;
} cf_branch_info;

int cf_session_n_branches(const cf_session *s);
/* Branch k, 0 <= k < cf_session_n_branches (in the order they began). */
void cf_session_branch(const cf_session *s, int k, cf_branch_info *out);
/* Message i of branch k, or NULL. */
const cf_message *cf_session_branch_message(const cf_session *s, int k, int i);
/* Go on as a new branch (name: NULL or up to 32 characters, no spaces, not
 * only digits, not taken); the conversation so far stays on the old one. */
int cf_session_fork(cf_session *s, const char *name, cf_err *err);
/* Make the branch numbered or named `which` current.  The cache keeps what
 * the two branches' renderings share (*reused tokens) and evaluates the
 * rest of the new one now (*prefilled; a branch too long for the context
 * is shifted at its next turn instead). */
int cf_session_switch(cf_session *s, const char *which, int *reused, int *prefilled,
                      cf_err *err);
/* Replace user message i (an index of cf_session_message) by text on a new
 * branch: the messages after it stay on the old branch; the reply to the
 * new text begins (iterate as after begin_reply).  On failure nothing
 * changes. */
int cf_session_edit(cf_session *s, int i, const char *text, cf_err *err);

/* ---- state and statistics ---------------------------------------------------- */
typedef enum cf_stop_reason {
    CF_STOP_NONE,         /* still running */
    CF_STOP_EOG,          /* the model's end-of-generation token */
    CF_STOP_STRING,       /* a stop string */
    CF_STOP_N_PREDICT,    /* the n-predict limit */
    CF_STOP_CONTEXT_FULL, /* the reply alone filled the context */
    CF_STOP_USER,         /* cut by the user (end_reply with cut) */
} cf_stop_reason;

typedef struct cf_turn_stats {
    int prompt_tokens;   /* tokens prefilled for this turn */
    double prompt_ms;
    int gen_tokens;      /* reasoning and content */
    double gen_ms;       /* time spent in cf_session_next */
    int reasoning_tokens; /* of gen_tokens, those of the thinking (its markers included) */
    double reasoning_ms;  /* of gen_ms, the time they took */
    double ttft_ms;      /* begin_reply to the first piece */
    int shifted_tokens;  /* dropped by a context shift during this turn */
    cf_stop_reason stop; /* why the reply ended */
    /* A local reply: the threads, and the fewest its tokens were generated
     * on (fewer while other programs kept the cores busy) */
    int threads, fewest_threads;
    /* A remote reply: prompt_tokens and gen_tokens are the server's usage
     * when it reports one (usage; else 0), prompt_ms and gen_ms its
     * timings when it gives them (timings; else measured here: the wait
     * for the first piece, then the stream). */
    bool remote, usage, timings;
    int cached_tokens;   /* of the prompt, those the server had cached, when it says */
    /* Speculative decoding: guesses checked and kept, and the passes of
     * the model that checked them */
    int drafted, accepted, spec_passes;
} cf_turn_stats;

const cf_turn_stats *cf_session_last_stats(const cf_session *s);

typedef struct cf_context_info {
    int used, total;
    int shift_would_drop; /* tokens a shift would drop now (whole old turns) */
    int shift_would_drop_turns;
} cf_context_info;

/* (A remote session: used is the last reply's prompt and reply tokens as
 * the server counted them, total 0: unknown.) */
void cf_session_context_info(const cf_session *s, cf_context_info *out);
/* The model; NULL for a remote session. */
const cf_model *cf_session_model(const cf_session *s);
/* How offloading to the GPU went (cf_ctx_gpu_note): "" when no layers
 * were asked for, and for a remote session. */
const char *cf_session_gpu_note(const cf_session *s);

/* A remote session's server; NULL for a local one. */
typedef struct cf_remote_info {
    const char *endpoint, *model;
} cf_remote_info;
const cf_remote_info *cf_session_remote(const cf_session *s);
/* A remote session's GET {endpoint}/models: the ids, NULL-terminated
 * (free with cf_oai_models_free, confab/openai.h). */
int cf_session_models(cf_session *s, char ***ids, cf_err *err);
/* The tokens the KV cache holds, in order (*n of them; valid until the
 * session changes): the conversation as the model has seen it. */
const int32_t *cf_session_tokens(const cf_session *s, int *n);
/* The logits for the next token (n_vocab floats), or NULL when none are
 * ready (before the first reply, after a reply ended). */
const float *cf_session_logits(const cf_session *s);
/* e.g. "jinja (from the GGUF)", "chatml (built-in, detected)" */
const char *cf_session_template_desc(const cf_session *s);
/* The Jinja text of the chat template in use; NULL for a built-in (or a
 * remote session: the server's). */
const char *cf_session_template_source(const cf_session *s);
/* Why the model does not look trained to chat, or NULL: its file has no
 * chat template and none was given (the one in use is a guess), or the
 * marker the template in use ends a reply with (cf_chat_template_turn_end;
 * a template that writes none: any of its family's stops) is not a token
 * of its vocabulary.  Replies of such a model rarely end by themselves, so
 * its session starts with n-predict CF_SESSION_UNTRAINED_N_PREDICT. */
const char *cf_session_untrained(const cf_session *s);
#define CF_SESSION_UNTRAINED_N_PREDICT 256
/* How replies mark their reasoning: the family (from the template, else
 * "think" when the vocabulary has <think> and </think>; NULL: none, every
 * reply is all content) and the variables the template reads. */
const cf_chat_reasoning *cf_session_reasoning(const cf_session *s);
/* The exact text the chat template renders for the next turn (a remote
 * session: the body of the request it would send, *n_tokens and
 * *n_cached 0), with
 * user_text as the user's message (malloc'ed into *text), and its size in
 * tokens: *n_tokens, of which *n_cached the cache holds already (the rest
 * is what the turn would prefill). */
int cf_session_prompt_text(cf_session *s, const char *user_text, char **text, int *n_tokens,
                           int *n_cached, cf_err *err);
/* Message i's sampled tokens with their probabilities (cf_token_prob:
 * the token's p and the top alternatives), *n of them, recorded while the
 * setting probs is on (replies generated with it off, and replies loaded
 * from a file, have none: NULL). */
const cf_token_prob *cf_session_probs(const cf_session *s, int i, int *n);
/* A token's text as replies show it (special tokens as their text). */
cf_str cf_session_token_text(const cf_session *s, int32_t id);
/* Whether anything changed since the last save or load. */
bool cf_session_dirty(const cf_session *s);

/* ---- save / restore ------------------------------------------------------------ */
/* Write the session (crash-safe: temp file, fsync, rename, fsync dir).  A
 * reply still running is saved as it stands, marked as cut. */
int cf_session_save(cf_session *s, const char *path, cf_err *err);
/* What a session file was saved with, read from its header without
 * loading it: a remote session's server (endpoint) and model, or a local
 * one's model name (model), file and the name 'confab models' picked it
 * by (path, pick: NULL when the file does not say).  All malloc'ed. */
typedef struct cf_session_origin {
    char *endpoint, *model, *path, *pick;
} cf_session_origin;
/* 0, or -1 when it cannot be read (not a session file, damaged). */
int cf_session_file_origin(const char *path, cf_session_origin *o, cf_err *err);
void cf_session_origin_free(cf_session_origin *o);
/* Replace this session with a saved one of the same model; on any problem
 * (wrong model, version, truncated, corrupt) the current session is left
 * untouched and err says what is wrong.  Brings back the messages (their
 * reasoning too), token history, KV cache, settings (thinking ones too),
 * stop strings and random state; the chat template in use stays.  Files of
 * older versions load as well.  A remote session's file holds the
 * transcript, settings and endpoint (never the key): loaded into a local
 * session it is rendered and prefilled afresh at the next turn; a local
 * session's file loaded into a remote one gives its transcript (the
 * endpoint in use stays).  The format: src/chat/sessfile.c. */
int cf_session_load(cf_session *s, const char *path, cf_err *err);

#endif
