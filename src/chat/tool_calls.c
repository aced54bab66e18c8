/* Tool calls in each family's syntax: one table of formats (how a
 * template's source shows it, what opens a call in a reply, the control
 * tokens of its markup, its parser: tool_parse.c) and the streaming
 * hold-back.  Test vectors: tests/template/test_tool_calls.c. */
#include <stdlib.h>
#include <string.h>

#include "tool_internal.h"

/* ---- the table ------------------------------------------------------------------- */

typedef struct format {
    const char *name;
    const char *detect[2]; /* in the template's source, all of them */
    const char *opens[3];  /* what begins the calls in a reply */
    bool opens_first;      /* they count only at the reply's start (blanks aside) */
    const char *markup[7]; /* control tokens of the syntax */
    int (*parse)(cursor *c, calls *cs);
} format;

/* One per format; detect_order says which a template is tried for first. */
static const format formats[] = {
    [CF_TOOLS_KIMI] = {"kimi", {"<|tool_calls_section_begin|>"},
                       {"<|tool_calls_section_begin|>", "<|tool_call_begin|>"}, false,
                       {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                        "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"},
                       tool_parse_kimi},
    [CF_TOOLS_DEEPSEEK] = {"deepseek", {DS_CALL}, {DS_CALLS, DS_CALL}, false,
                           {DS_CALLS, DS_CALLS_END, DS_CALL, DS_CALL_END, DS_SEP},
                           tool_parse_deepseek},
    [CF_TOOLS_HARMONY] = {"gpt-oss", {"to=", "<|call|>"}, {"{"}, true, {NULL}, NULL},
    [CF_TOOLS_GEMMA4] = {"gemma4", {"<|tool_call>call:"}, {"<|tool_call>"}, false,
                         {"<|tool_call>", "<tool_call|>", "<|\"|>"}, tool_parse_gemma4},
    [CF_TOOLS_MISTRAL_ARGS] = {"mistral-args", {"[TOOL_CALLS]", "[ARGS]"}, {"[TOOL_CALLS]"}, false,
                               {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}, tool_parse_mistral_args},
    [CF_TOOLS_MISTRAL] = {"mistral", {"[TOOL_CALLS]"}, {"[TOOL_CALLS]"}, false,
                          {"[TOOL_CALLS]", "[CALL_ID]"}, tool_parse_mistral},
    [CF_TOOLS_GLM] = {"glm", {"<arg_key>"}, {"<tool_call>"}, false,
                      {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                       "</arg_value>"},
                      tool_parse_glm},
    [CF_TOOLS_QWEN_XML] = {"qwen-xml", {"<tool_call>", "<parameter="}, {"<tool_call>"}, false,
                           {"<tool_call>", "</tool_call>"}, tool_parse_qwen_xml},
    [CF_TOOLS_HERMES] = {"hermes", {"<tool_call>"}, {"<tool_call>"}, false,
                         {"<tool_call>", "</tool_call>"}, tool_parse_hermes},
    [CF_TOOLS_COMMAND_R] = {"command-r", {"<|START_ACTION|>"}, {"<|START_ACTION|>"}, false,
                            {"<|START_ACTION|>", "<|END_ACTION|>"}, tool_parse_command_r},
    [CF_TOOLS_NEMOTRON] = {"nemotron", {"<TOOLCALL>"}, {"<TOOLCALL>"}, false,
                           {"<TOOLCALL>", "</TOOLCALL>"}, tool_parse_nemotron},
    [CF_TOOLS_PYTHONIC] = {"pythonic", {"<|tool_list_start|>"}, {"<|tool_call_start|>"}, false,
                           {"<|tool_call_start|>", "<|tool_call_end|>"}, tool_parse_pythonic},
    [CF_TOOLS_LLAMA3] = {"llama3", {"\"parameters\""}, {"<|python_tag|>", "{"}, true,
                         {"<|python_tag|>"}, tool_parse_llama3},
    [CF_TOOLS_JSON] = {"json", {NULL}, {"{"}, true, {NULL}, tool_parse_json},
};
#define N_FORMATS (int)(sizeof formats / sizeof formats[0])

static const cf_tool_format detect_order[] = {
    CF_TOOLS_KIMI, CF_TOOLS_DEEPSEEK, CF_TOOLS_HARMONY, CF_TOOLS_GEMMA4, CF_TOOLS_MISTRAL_ARGS,
    CF_TOOLS_MISTRAL, CF_TOOLS_GLM, CF_TOOLS_QWEN_XML, CF_TOOLS_HERMES, CF_TOOLS_COMMAND_R,
    CF_TOOLS_NEMOTRON, CF_TOOLS_PYTHONIC, CF_TOOLS_LLAMA3,
};

cf_tool_format cf_tools_detect(const char *src, size_t len)
{
    if (!src)
        return CF_TOOLS_NONE;
    for (size_t i = 0; i < sizeof detect_order / sizeof detect_order[0]; i++) {
        const format *f = &formats[detect_order[i]];
        bool all = true;
        for (int k = 0; k < 2 && f->detect[k]; k++)
            all &= memmem(src, len, f->detect[k], strlen(f->detect[k])) != NULL;
        if (all)
            return detect_order[i];
    }
    /* one that renders tools in a syntax of its own: ask for bare JSON */
    return memmem(src, len, "tools", 5) ? CF_TOOLS_JSON : CF_TOOLS_NONE;
}

const char *cf_tools_format_name(cf_tool_format f)
{
    return f > CF_TOOLS_NONE && f < N_FORMATS ? formats[f].name : "none";
}

bool cf_tools_is_markup(cf_tool_format f, const char *text, size_t len)
{
    if (f <= CF_TOOLS_NONE || f >= N_FORMATS)
        return false;
    for (int k = 0; k < 7 && formats[f].markup[k]; k++)
        if (strlen(formats[f].markup[k]) == len && !memcmp(formats[f].markup[k], text, len))
            return true;
    return false;
}

void cf_tool_calls_free(cf_tool_call *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        free(v[i].id);
        free(v[i].name);
        free(v[i].arguments);
    }
    free(v);
}

/* ---- streaming ------------------------------------------------------------------- */

void cf_tool_parser_init(cf_tool_parser *p, cf_tool_format f)
{
    *p = (cf_tool_parser){.f = f};
}

void cf_tool_parser_free(cf_tool_parser *p)
{
    free(p->text);
    *p = (cf_tool_parser){.f = CF_TOOLS_NONE};
}

static size_t trim_end(const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return n;
}

/* Where the calls begin in text (len when they do not, yet); *maybe: where
 * what could still become an opening begins (len: nowhere). */
static size_t calls_at(const format *f, const char *text, size_t len, size_t *maybe)
{
    size_t lead = 0, first = len;
    *maybe = len;
    if (!len) /* (text may be NULL then) */
        return len;
    while (lead < len && (text[lead] == ' ' || text[lead] == '\n' || text[lead] == '\t'))
        lead++;
    for (int k = 0; k < 3 && f->opens[k]; k++) {
        const char *o = f->opens[k];
        size_t n = strlen(o);
        if (f->opens_first) {
            size_t have = len - lead < n ? len - lead : n;
            if (!memcmp(text + lead, o, have) && lead < first)
                *(have == n ? &first : maybe) = lead;
            continue;
        }
        const char *at = memmem(text, len, o, n);
        if (at && (size_t)(at - text) < first)
            first = (size_t)(at - text);
        /* a tail that an opening begins with */
        for (size_t t = n - 1; t > 0; t--)
            if (t <= len && !memcmp(text + len - t, o, t) && len - t < *maybe) {
                *maybe = len - t;
                break;
            }
    }
    return first;
}

long cf_tool_parser_feed(cf_tool_parser *p, const char *piece, size_t n)
{
    if (p->len + n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 256;
        while (cap < p->len + n + 1)
            cap *= 2;
        char *t = realloc(p->text, cap);
        if (!t)
            return -1;
        p->text = t;
        p->cap = cap;
    }
    memcpy(p->text + p->len, piece, n);
    p->len += n;
    p->text[p->len] = 0;
    if (p->f == CF_TOOLS_NONE) {
        p->safe = p->len;
        return (long)p->safe;
    }
    if (p->held)
        return (long)p->safe;
    size_t maybe, at = calls_at(&formats[p->f], p->text, p->len, &maybe);
    p->held = at < p->len;
    size_t upto = trim_end(p->text, at < maybe ? at : maybe);
    if (upto > p->safe)
        p->safe = upto;
    return (long)p->safe;
}

int cf_tool_parser_finish(cf_tool_parser *p, char **content, cf_tool_call **out, int *n,
                          cf_err *err)
{
    *out = NULL;
    *n = 0;
    calls cs = {0};
    size_t maybe, at = p->f == CF_TOOLS_NONE ? p->len
                                             : calls_at(&formats[p->f], p->text, p->len, &maybe);
    if (at < p->len) {
        cursor c = {p->text + at, p->text + p->len};
        if (p->f == CF_TOOLS_HARMONY ? tool_parse_harmony(&c, &cs, p->recipient)
                                     : formats[p->f].parse(&c, &cs)) {
            cf_tool_calls_free(cs.v, cs.n);
            cs = (calls){0};
        }
    }
    size_t keep = cs.n ? trim_end(p->text ? p->text : "", at) : p->len;
    *content = strndup(p->text ? p->text : "", keep);
    if (!*content) {
        cf_tool_calls_free(cs.v, cs.n);
        return cf_fail(err, "out of memory");
    }
    *out = cs.v;
    *n = cs.n;
    return 0;
}

