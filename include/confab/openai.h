/* openai: the OpenAI chat completions protocol, both ways.
 *
 * confab talks it as a client (a chat whose engine is a server: vLLM,
 * llama.cpp's llama-server, ollama, TGI, hosted APIs) and as a server
 * (`confab serve`).  Both ends use the same pieces, so what one writes the
 * other reads:
 *   - server-sent events, parsed incrementally (any split of the bytes
 *     gives the same events);
 *   - stream chunks and whole responses: the reply's content, its
 *     reasoning (`reasoning_content`, or ollama's and newer vLLM's
 *     `reasoning`), why it finished, token usage and llama-server's
 *     `timings`;
 *   - requests: the messages and the sampler settings, named as
 *     cf_session_set names them (temp <-> temperature, n-predict <->
 *     max_tokens, ...; the table is in src/chat/openai_request.c);
 *   - error bodies and the model list.
 *
 * Knows nothing of sockets or HTTP: bytes in, bytes out. */
#ifndef CONFAB_OPENAI_H
#define CONFAB_OPENAI_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/common.h"
#include "confab/sampler.h"
#include "confab/session.h"
#include "confab/tools.h"

/* ---- server-sent events -------------------------------------------------------
 * The WHATWG event-stream format: lines end in LF, CRLF or CR; "data:"
 * lines add to the event's data (joined by LF), "event:" names it, lines
 * starting with ':' are comments (keep-alives), a blank line ends the
 * event.  llama-server writes errors as an "error:" line: it comes out as
 * data of an event named "error". */
typedef struct cf_sse {
    char *line, *data;
    size_t line_len, line_cap, data_len, data_cap;
    size_t max;       /* the longest line or event accepted */
    char event[32];   /* the event's name ("" for the default, "message") */
    bool has_data;
    bool after_cr;    /* a CR ended the last line: an LF right after it is its */
    bool started;     /* past a leading byte order mark */
} cf_sse;

/* One event: its name ("" when none was given) and data (NUL-terminated).
 * A non-zero return stops the parse and is returned by cf_sse_feed. */
typedef int (*cf_sse_fn)(void *ud, const char *event, const char *data, size_t len);

/* max: the longest line or event (0: 16 MiB). */
void cf_sse_init(cf_sse *p, size_t max);
/* Parse n more bytes, calling fn for each event they complete; 0, fn's
 * non-zero return, or -1 with err set (an event over the limit, out of
 * memory). */
int cf_sse_feed(cf_sse *p, const char *bytes, size_t n, cf_sse_fn fn, void *ud, cf_err *err);
/* The stream ended: an event whose blank line never came is still given
 * (servers that close right after "data: [DONE]\n" are common). */
int cf_sse_end(cf_sse *p, cf_sse_fn fn, void *ud, cf_err *err);
void cf_sse_free(cf_sse *p);

/* ---- what a reply reports ----------------------------------------------------- */
typedef struct cf_oai_usage {
    bool has_usage;
    int prompt_tokens, completion_tokens, cached_tokens;
    bool has_timings; /* llama-server's (and confab serve's) "timings" */
    int prompt_n, predicted_n;       /* tokens evaluated for the prompt, generated */
    double prompt_ms, predicted_ms;
} cf_oai_usage;

/* ---- decoding (the client) ---------------------------------------------------- */
/* One stream chunk, or a whole non-streamed response (choices[0].message
 * instead of .delta).  Strings are NULL when the chunk has none. */
typedef struct cf_oai_chunk {
    bool done;          /* the "[DONE]" sentinel */
    char *content, *reasoning;
    char *finish;       /* finish_reason: "stop", "length", ... */
    char *error;        /* an error the server sent inside the stream */
    char *model;
    cf_oai_usage usage; /* what this chunk reports (has_* false: nothing) */
} cf_oai_chunk;

/* Decode an event's data; -1 with err naming the problem when it is not
 * such a chunk (bad JSON, no choices, wrong types). */
int cf_oai_chunk_decode(const char *data, size_t len, cf_oai_chunk *out, cf_err *err);
void cf_oai_chunk_free(cf_oai_chunk *c);

/* The message of an error body ({"error": {"message": ...}}, {"error":
 * "..."}, {"message": ...}, FastAPI's {"detail": ...}), else the body's
 * first line, cut to fit buf (n > 0 bytes). */
void cf_oai_error_text(const char *body, size_t len, char *buf, size_t n);

/* GET /models: the model ids (a NULL-terminated malloc'ed array of
 * malloc'ed strings: free with cf_oai_models_free). */
int cf_oai_models_decode(const char *body, size_t len, char ***ids, cf_err *err);
void cf_oai_models_free(char **ids);

/* ---- requests ----------------------------------------------------------------- */
/* The most choices (n) one request may ask for. */
#define CF_OAI_MAX_CHOICES 16

/* A setting in cf_session_set's spelling, e.g. {"temp", "0.7"}. */
typedef struct cf_oai_setting {
    const char *name, *value;
} cf_oai_setting;

typedef struct cf_oai_request {
    char *model;          /* NULL when not given */
    cf_message *msgs;     /* strings owned */
    int n_msgs;
    cf_oai_setting *settings; /* the sampler fields it gives (strings owned) */
    int n_settings;
    char **stops;         /* NULL-terminated; NULL when none given */
    int n_stops;
    bool stream, include_usage;
    int n_choices;        /* n: 1 to CF_OAI_MAX_CHOICES (chat completions) */
    bool logprobs;        /* the sampled tokens' log probabilities asked for */
    int top_logprobs;     /* and this many alternatives each (0 to CF_TOP_PROBS) */
    char *prompt;         /* /v1/completions: the prompt (msgs NULL) */
    cf_logit_bias *bias;  /* logit_bias */
    int n_bias;
    /* response_format (text.format): the grammar of json_object or of
     * json_schema's schema (NULL: text), a name for it, and which it is
     * ("json", or the schema's compact text: cf_session_set_grammar's key) */
    struct cf_grammar *format;
    char format_name[16];
    char *format_key;
    /* tools (chat completions): the list as given, compact JSON (NULL:
     * none), and tool_choice (a named function's name in tool_name) */
    char *tools;
    enum { CF_OAI_TOOLS_AUTO, CF_OAI_TOOLS_NONE, CF_OAI_TOOLS_REQUIRED, CF_OAI_TOOLS_NAMED } tool_choice;
    char *tool_name;
    bool one_call;        /* parallel_tool_calls: false (a reply's first call only) */
    char param[48];       /* when parsing failed: the field at fault ("" when none) */
} cf_oai_request;

/* The body of POST /chat/completions: model, the messages, the settings
 * given (those not named in the table: the server's defaults), stop
 * strings, streaming with usage in the last chunk.  Malloc'ed, NULL when
 * memory runs out. */
char *cf_oai_request_build(const char *model, const cf_message *msgs, int n,
                           const cf_oai_setting *settings, int n_settings,
                           const char *const *stops, bool stream, size_t *len);
/* Read such a body (as `confab serve` does).  Message contents may be a
 * string or an array of {"type": "text", "text": ...} parts; a field of
 * the wrong type, a message without a role or content, a role other than
 * system, user, assistant (or developer, taken as system), a NUL in a
 * content, max_tokens below 1, or a field whose meaning is not honoured
 * here (tools, a response_format other than text, top_logprobs
 * above CF_TOP_PROBS, audio...) is an error naming it (in
 * out->param too).  Fields that change nothing in the reply (user,
 * metadata, store...) and unknown ones are ignored. */
int cf_oai_request_parse(const char *body, size_t len, cf_oai_request *out, cf_err *err);
/* The three APIs a request may come in. */
typedef enum cf_oai_api {
    CF_OAI_CHAT,      /* /v1/chat/completions: cf_oai_request_parse */
    CF_OAI_TEXT,      /* /v1/completions: a prompt (a string, or a list of one), no messages */
    CF_OAI_RESPONSES, /* /v1/responses: input (a string, or messages) and instructions as
                       * the messages, max_output_tokens, reasoning.effort */
} cf_oai_api;
/* Read a body of one of them into the same request. */
int cf_oai_api_parse(cf_oai_api api, const char *body, size_t len, cf_oai_request *out,
                     cf_err *err);
void cf_oai_request_free(cf_oai_request *r);
/* The request field that carries a setting ("temperature" for "temp"), or
 * NULL when the protocol has none. */
const char *cf_oai_field_of(const char *setting);

/* ---- encoding (the server) ------------------------------------------------------ */
typedef struct cf_oai_reply_id {
    const char *id, *model;
    long long created;
    const char *fingerprint; /* system_fingerprint (NULL: null) */
    bool completion;         /* a /v1/completions reply: text_completion, choices[].text */
} cf_oai_reply_id;

/* A reply's tokens with their probabilities, as choices[].logprobs
 * gives them (each token's text, log probability and bytes, and its
 * n_top most likely alternatives); text gives a token's text. */
typedef struct cf_oai_logprobs {
    const cf_token_prob *probs;
    int n, n_top;
    cf_str (*text)(void *ud, int32_t id);
    void *ud;
} cf_oai_logprobs;

/* A choice of a chunk or a response: its index, the assistant's role (a
 * stream's first chunk for it says it), deltas ("" or NULL: none), a
 * finish reason (NULL: not finished), log probabilities (NULL: null). */
typedef struct cf_oai_delta {
    int index;
    bool role;
    const char *reasoning, *content;
    const char *finish;
    const cf_oai_logprobs *logprobs;
    const cf_tool_call *calls; /* tool_calls (ids given), n_calls of them */
    int n_calls;
} cf_oai_delta;

/* One stream chunk: choices[0] from d (NULL: "choices": [], as the usage
 * chunk has) and, when usage is given, the usage and timings: the JSON
 * text, malloc'ed. */
char *cf_oai_chunk_encode(const cf_oai_reply_id *id, const cf_oai_delta *d,
                          const cf_oai_usage *usage, size_t *len);
/* The whole response of a request that did not stream: its n choices. */
char *cf_oai_response_encode(const cf_oai_reply_id *id, const cf_oai_delta *d, int n,
                             const cf_oai_usage *usage, size_t *len);
/* {"error": {"message", "type", "param", "code"}}: code a string such as
 * "model_not_found" (NULL: null), param the field at fault (NULL: null). */
char *cf_oai_error_encode(const char *message, const char *type, const char *code,
                          const char *param, size_t *len);
/* The Responses API (/v1/responses): the whole response object (status
 * incomplete when finish is "length"), or the events of its stream, each
 * with its type's name (cf_oai_responses_event_name) and a sequence
 * number: created and in_progress (no output yet), the message item and
 * its text part added, a delta per piece (text), the text, part and item
 * done (text: the whole), completed or incomplete (the whole response,
 * with usage). */
char *cf_oai_responses_encode(const cf_oai_reply_id *id, const char *text, const char *finish,
                              const cf_oai_usage *usage, size_t *len);
typedef enum cf_oai_resp_event {
    CF_RESP_CREATED,
    CF_RESP_IN_PROGRESS,
    CF_RESP_ITEM_ADDED,
    CF_RESP_PART_ADDED,
    CF_RESP_DELTA,
    CF_RESP_TEXT_DONE,
    CF_RESP_PART_DONE,
    CF_RESP_ITEM_DONE,
    CF_RESP_COMPLETED,
    CF_RESP_INCOMPLETE, /* completed, but cut at max_output_tokens */
} cf_oai_resp_event;
const char *cf_oai_responses_event_name(cf_oai_resp_event ev);
char *cf_oai_responses_event(const cf_oai_reply_id *id, cf_oai_resp_event ev, int seq,
                             const char *text, const char *finish, const cf_oai_usage *usage,
                             size_t *len);
/* GET /models/{id}: the model. */
char *cf_oai_model_encode(const char *id, long long created, size_t *len);
/* The GET /models list of one model. */
char *cf_oai_models_encode(const char *id, long long created, size_t *len);

#endif
