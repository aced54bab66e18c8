/* Chat templates: turn a conversation into the prompt text a model expects.
 *
 * Two kinds, behind one cf_chat_template object:
 *  - Jinja: a GGUF's tokenizer.chat_template (or a file), run by confab's
 *    own sandboxed Jinja interpreter with Hugging Face apply_chat_template
 *    semantics (jinja2 ImmutableSandboxedEnvironment, trim_blocks and
 *    lstrip_blocks on, loopcontrols; variables messages,
 *    add_generation_prompt, bos_token, eos_token, tools, documents; globals
 *    raise_exception, strftime_now, namespace, range; tojson as
 *    json.dumps(ensure_ascii=False)).  A template can do no I/O, reach no
 *    attribute beyond its data, and runs under limits on steps, nesting,
 *    memory and output: a hostile template ends with an error, never a crash.
 *  - built-in: the fixed formats llama.cpp's llm_chat_apply_template knows
 *    (chatml, llama2, llama3, mistral-v7, phi3, gemma, ...), picked by name or
 *    detected from a Jinja source with llama.cpp's rules; plus "none" (the
 *    contents concatenated, for base models).
 *
 * Errors name the place: "template line 3, column 14: ...".  A compiled
 * template is read-only while it renders: any number of threads may render
 * the same one at once. */
#ifndef CONFAB_TEMPLATE_H
#define CONFAB_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"

/* ---- the Jinja interpreter ---------------------------------------------- */

/* Bounds on one render (0 in a field: its default). */
typedef struct cf_jinja_limits {
    uint64_t max_steps;  /* expression and statement evaluations (default 10,000,000) */
    uint32_t max_depth;  /* nesting of evaluation incl. macro calls (default 400) */
    size_t max_output;   /* bytes of output, and of any one string (default 16 MiB) */
    size_t max_memory;   /* bytes allocated in all during a render (default 256 MiB) */
} cf_jinja_limits;

typedef struct cf_jinja cf_jinja;

/* Compile a template (at most 8 MiB; nesting at most 200 deep).  Syntax
 * errors carry the line and column. */
int cf_jinja_compile(const char *src, size_t len, cf_jinja **out, cf_err *err);
void cf_jinja_free(cf_jinja *t);

/* ---- conversations ------------------------------------------------------ */

typedef struct cf_chat_msg {
    const char *role;       /* NUL-terminated */
    const char *content;    /* NUL-terminated; NULL renders as none */
    const char *extra_json; /* NULL, or a JSON object whose members follow role
                               and content in the message (tool_calls, name, ...) */
} cf_chat_msg;

typedef struct cf_chat_opts {
    const char *bos_token; /* NULL: not passed (undefined in the template) */
    const char *eos_token; /* NULL: not passed */
    bool add_generation_prompt;
    const char *tools_json; /* NULL: tools is none; else JSON (a list of tools) */
    /* Further variables (enable_thinking, date_string, ...): names and JSON values. */
    size_t n_vars;
    const char *const *var_names;
    const char *const *var_json;
    /* strftime_now's clock: 0 = the current local time; otherwise this many
     * seconds since the epoch, shown as UTC (tests use 1768435200 for
     * 2026-01-15 00:00:00, as the reference renderings do). */
    int64_t now;
    const cf_jinja_limits *limits; /* NULL: the defaults */
} cf_chat_opts;

/* ---- chat templates ----------------------------------------------------- */

typedef struct cf_chat_template cf_chat_template;

/* A Jinja template; `origin` says where it came from for the display name
 * ("GGUF" gives "jinja (from GGUF)"). */
int cf_chat_template_from_jinja(const char *src, size_t len, const char *origin,
                                cf_chat_template **out, cf_err *err);
/* A built-in by name (see cf_chat_builtin_names). */
int cf_chat_template_from_name(const char *name, cf_chat_template **out, cf_err *err);
void cf_chat_template_free(cf_chat_template *t);

/* The built-in names, NULL-terminated. */
const char *const *cf_chat_builtin_names(void);
/* The built-in llama.cpp would pick for a Jinja source (llm_chat_detect_template),
 * or NULL when it recognises none. */
const char *cf_chat_detect(const char *src, size_t len);

bool cf_chat_template_is_jinja(const cf_chat_template *t);
/* A Jinja template's text as it was given; NULL for a built-in. */
const char *cf_chat_template_source(const cf_chat_template *t);
/* What to show: "jinja (from GGUF)", "chatml (built-in)", "chatml (built-in,
 * detected)", "chatml (built-in, default)". */
const char *cf_chat_template_label(const cf_chat_template *t);
/* The built-in's name ("chatml"), or for Jinja the built-in its source is
 * detected as (NULL if none). */
const char *cf_chat_template_family(const cf_chat_template *t);
/* Strings that end an assistant turn in this format ("<|im_end|>" for
 * chatml, "<|eot_id|>" for llama3, "</s>" for llama2, ...); for Jinja those
 * of the detected family.  NULL-terminated; may be empty. */
const char *const *cf_chat_template_stops(const cf_chat_template *t);
/* The marker that ends an assistant's turn as the template renders one:
 * the first <...> or [...] after a reply's text, spaces skipped, in a
 * short conversation ("<|im_end|>", "<|end|>", "<turn|>", "</s>", ...),
 * into buf (n bytes); "" when the text after a reply starts with no such
 * marker (a plain-text format) or it does not fit.  -1 when the template
 * cannot render the conversation. */
int cf_chat_template_turn_end(const cf_chat_template *t, const char *bos_token,
                              const char *eos_token, char *buf, size_t n);

/* How the template's model marks its reasoning, read from a Jinja source
 * (built-ins know none). */
typedef struct cf_chat_reasoning {
    const char *family;   /* "think", "gemma4", "mistral", "command-r", "gpt-oss"; NULL: none */
    bool thinking_switch; /* the template reads enable_thinking, or thinking_text */
    bool thinking_text;   /* its switch is "/think" or "/no_think" in a system
                             or user message (Nemotron Nano v2) */
    bool effort;          /* the template reads reasoning_effort (gpt-oss) */
} cf_chat_reasoning;
const cf_chat_reasoning *cf_chat_template_reasoning(const cf_chat_template *t);

/* Render messages into a malloc'ed NUL-terminated string (*len bytes). */
int cf_chat_render(const cf_chat_template *t, const cf_chat_msg *msgs, size_t n,
                   const cf_chat_opts *o, char **out, size_t *len, cf_err *err);
/* The same with the messages as JSON text: a list of objects with "role"
 * and "content" and any other fields, all passed to the template. */
int cf_chat_render_json(const cf_chat_template *t, const char *messages_json, size_t json_len,
                        const cf_chat_opts *o, char **out, size_t *len, cf_err *err);

/* ---- the session's choice ----------------------------------------------- */

typedef struct cf_chat_choice {
    const char *name;          /* --chat-template NAME, or NULL */
    const char *file_text;     /* --chat-template-file contents, or NULL */
    size_t file_len;
    const char *file_name;     /* for the label: "jinja (from FILE)" */
    const char *gguf_template; /* tokenizer.chat_template, or NULL */
    size_t gguf_len;
    const char *bos_token, *eos_token; /* for the probe render */
} cf_chat_choice;

/* NAME > FILE > the GGUF's template (Jinja; if it does not compile, or
 * fails to render a probe conversation, the built-in detected from it, and
 * note says why) > chatml.  note (may be NULL) receives "" or one line
 * explaining a fallback.  Fails only for a bad NAME or a FILE that does not
 * compile. */
int cf_chat_template_choose(const cf_chat_choice *c, cf_chat_template **out, char *note,
                            size_t note_len, cf_err *err);

#endif
