/* tools: function calling in each model family's own syntax.
 *
 * A chat template that renders `tools` teaches its model a way to write a
 * call (Qwen3's <tool_call> JSON, Llama 3's bare JSON, Mistral's
 * [TOOL_CALLS], DeepSeek's <｜tool▁call▁begin｜>, ...).  The format is read
 * from the template's source; a reply's content is parsed back into the
 * text before the calls and the calls, as it streams (what may still turn
 * out to be a call is held back) or whole.  When a call is required the
 * reply is held to a grammar: the format's own syntax where it is plain
 * text around one JSON document, else one bare JSON call ({"name": ...,
 * "arguments": ...}), which the parser then reads whatever the format.
 *
 * The table of formats: src/chat/tool_calls.c, their parsers
 * tool_parse.c, the grammar tool_grammar.c, the test vectors
 * tests/template/test_tool_calls.c. */
#ifndef CONFAB_TOOLS_H
#define CONFAB_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/common.h"

typedef enum cf_tool_format {
    CF_TOOLS_NONE,       /* the template renders no tools */
    /* <tool_call>{"name", "arguments"}</tool_call>: Qwen2.5, Qwen3, Hermes, Granite 4 */
    CF_TOOLS_HERMES,
    /* <tool_call><function=NAME><parameter=P>V</parameter></function></tool_call>: Qwen3.5 */
    CF_TOOLS_QWEN_XML,
    CF_TOOLS_LLAMA3,     /* {"name", "parameters"} as the whole reply (or after <|python_tag|>) */
    CF_TOOLS_MISTRAL,    /* [TOOL_CALLS][{"name", "arguments", "id"}...]: Mistral Nemo, Small */
    CF_TOOLS_MISTRAL_ARGS, /* [TOOL_CALLS]NAME[ARGS]{...}: Ministral 3, Magistral */
    CF_TOOLS_HARMONY,    /* gpt-oss: to=functions.NAME ... <|message|>{...}<|call|> */
    CF_TOOLS_GEMMA4,     /* <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|> */
    /* <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>: V3.1, R1 */
    CF_TOOLS_DEEPSEEK,
    /* <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>: GLM 4.5, 4.6 */
    CF_TOOLS_GLM,
    CF_TOOLS_KIMI,       /* <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...} */
    CF_TOOLS_COMMAND_R,  /* <|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|> */
    CF_TOOLS_NEMOTRON,   /* <TOOLCALL>[{"name", "arguments"}]</TOOLCALL>: Nemotron Nano v2 */
    CF_TOOLS_PYTHONIC,   /* <|tool_call_start|>[name(key="text", n=1)]<|tool_call_end|>: LFM2 */
    CF_TOOLS_JSON,       /* one bare {"name", "arguments"}: what a required call's grammar writes */
} cf_tool_format;

/* The format a template's source writes calls in (CF_TOOLS_NONE: it never
 * reads `tools`). */
cf_tool_format cf_tools_detect(const char *src, size_t len);
/* "hermes", "llama3", ... */
const char *cf_tools_format_name(cf_tool_format f);
/* Whether a control token's text is the format's markup, kept in a reply's
 * text so that the parser sees it ("[TOOL_CALLS]", "<|python_tag|>"...). */
bool cf_tools_is_markup(cf_tool_format f, const char *text, size_t len);

typedef struct cf_tool_call {
    char *id;        /* the model's own id (Mistral, Kimi), else NULL */
    char *name;
    char *arguments; /* a JSON object's text */
} cf_tool_call;

void cf_tool_calls_free(cf_tool_call *calls, int n);

/* ---- parsing a reply ------------------------------------------------------------ */
typedef struct cf_tool_parser {
    cf_tool_format f;
    char recipient[64]; /* gpt-oss: the function its last message was addressed to
                           (cf_tools_harmony_recipient), "" none */
    char *text; /* the content so far */
    size_t len, cap;
    size_t safe; /* of it, what is surely not a call */
    bool held;   /* a call has begun: nothing more is content */
} cf_tool_parser;

/* A parser of replies in format f (CF_TOOLS_NONE: every byte is content). */
void cf_tool_parser_init(cf_tool_parser *p, cf_tool_format f);
/* gpt-oss names a call's function in the header of the message that holds
 * its arguments (<|start|>assistant to=functions.NAME<|channel|>...), which
 * the content leaves out: the name, from the reply's raw text, into p
 * before cf_tool_parser_finish ("" when the last message goes to none). */
void cf_tools_harmony_recipient(cf_tool_parser *p, const char *raw, size_t len);
/* Add a piece of the content; returns how many bytes of the content so
 * far are surely content (never fewer than before), or -1 when memory
 * runs out. */
long cf_tool_parser_feed(cf_tool_parser *p, const char *piece, size_t n);
/* The reply has ended: its calls (*n of them, malloc'ed; none: NULL and 0)
 * and its content without them (*content: malloc'ed; where calls were
 * found, the text before the first, its trailing blanks dropped; a call
 * that does not parse is left as content).  0, or -1 on out of memory. */
int cf_tool_parser_finish(cf_tool_parser *p, char **content, cf_tool_call **calls, int *n,
                          cf_err *err);
void cf_tool_parser_free(cf_tool_parser *p);

/* ---- a required call ------------------------------------------------------------ */
struct cf_grammar;
/* The grammar of one call to one of tools (a JSON list of OpenAI tools),
 * or to the one named (name non-NULL): in format f's own syntax where
 * framed is true and it has one a grammar writes (hermes, mistral,
 * llama3; *as says which), else as CF_TOOLS_JSON.  A tool whose parameters
 * use what the JSON-schema converter refuses is an error naming it. */
int cf_tools_grammar(cf_tool_format f, const char *tools_json, const char *name, bool framed,
                     struct cf_grammar **out, cf_tool_format *as, cf_err *err);

/* ---- a chat's own tools ------------------------------------------------------- */
/* A tools file (confab chat --tools): a JSON list of functions, each
 * {"name", "description", "parameters", "command"} (or OpenAI's {"type":
 * "function", "function": {...}} with "command" beside), command the shell
 * command that carries the call out.  The list as OpenAI tools (for
 * cf_session_set_tools) and each function's command, by name. */
typedef struct cf_tools_file {
    char *tools_json;
    int n;
    char **names, **commands;
} cf_tools_file;

int cf_tools_file_read(const char *path, cf_tools_file *out, cf_err *err);
/* The command of the function called name, or NULL. */
const char *cf_tools_file_command(const cf_tools_file *f, const char *name);
void cf_tools_file_free(cf_tools_file *f);

#endif
