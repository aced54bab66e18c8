/* The tool-call parsers' shared parts (tool_parse.c), for the table that
 * picks one (tool_calls.c) and the grammar of a required call
 * (tool_grammar.c). */
#ifndef CONFAB_CHAT_TOOL_INTERNAL_H
#define CONFAB_CHAT_TOOL_INTERNAL_H

#include "confab/tools.h"
#include "json.h"

/* The calls found so far. */
typedef struct calls {
    cf_tool_call *v;
    int n, cap;
} calls;

/* Where a parser stands in the reply's text. */
typedef struct cursor {
    const char *p, *end;
} cursor;

/* DeepSeek's markers: fullwidth bars and U+2581 between the words */
#define DS_CALLS "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_CALL "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81""sep\xef\xbd\x9c>"

/* A string member, or NULL; a JSON value as compact text (malloc'ed). */
const char *tool_str_of(const cf_json *o, const char *key);
char *tool_compact(const cf_json *v);

/* Each format's parser, c at the opening of its first call: 0 with the
 * calls added to cs, -1 when the text is not such calls. */
int tool_parse_hermes(cursor *c, calls *cs);
int tool_parse_qwen_xml(cursor *c, calls *cs);
int tool_parse_llama3(cursor *c, calls *cs);
int tool_parse_mistral(cursor *c, calls *cs);
int tool_parse_command_r(cursor *c, calls *cs);
int tool_parse_nemotron(cursor *c, calls *cs);
int tool_parse_pythonic(cursor *c, calls *cs);
int tool_parse_mistral_args(cursor *c, calls *cs);
int tool_parse_gemma4(cursor *c, calls *cs);
int tool_parse_deepseek(cursor *c, calls *cs);
int tool_parse_glm(cursor *c, calls *cs);
int tool_parse_kimi(cursor *c, calls *cs);
int tool_parse_json(cursor *c, calls *cs);
/* gpt-oss: the content is the arguments of a call to recipient ("": the
 * bare call a grammar writes). */
int tool_parse_harmony(cursor *c, calls *cs, const char *recipient);

#endif
