/* Tool calls in each family's syntax: one table of formats (how a
 * template's source shows it, what opens a call in a reply, the control
 * tokens of its markup, its parser), the streaming hold-back, and the
 * grammar of a required call.  Test vectors: tests/chat/test_tool_calls.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "confab/tools.h"
#include "json.h"

/* ---- what the parsers share ------------------------------------------------------ */

typedef struct calls {
    cf_tool_call *v;
    int n, cap;
} calls;

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_blanks(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
        c->p++;
}

static bool eat(cursor *c, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n))
        return false;
    c->p += n;
    return true;
}

/* The text up to lit (c moves past lit), or NULL when lit never comes. */
static const char *until(cursor *c, const char *lit, size_t *len)
{
    const char *at = memmem(c->p, (size_t)(c->end - c->p), lit, strlen(lit));
    if (!at)
        return NULL;
    const char *from = c->p;
    *len = (size_t)(at - from);
    c->p = at + strlen(lit);
    return from;
}

/* The length of the JSON value (object, array or string) at s, found by
 * its brackets; 0 when it does not end within n bytes. */
static size_t json_span(const char *s, size_t n)
{
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"' && (in_str = false, depth == 0))
                return i + 1;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return i + 1;
            if (depth < 0)
                return 0;
        } else if (depth == 0 && i == 0) {
            return 0; /* not an object, array or string */
        }
    }
    return 0;
}

/* The JSON value at c (blanks before it skipped), moved past; NULL when
 * there is none. */
static cf_json *take_json(cursor *c)
{
    skip_blanks(c);
    size_t n = json_span(c->p, (size_t)(c->end - c->p));
    cf_json *v;
    if (!n || cf_json_parse(c->p, n, NULL, &v, NULL))
        return NULL;
    c->p += n;
    return v;
}

static char *compact(const cf_json *v)
{
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    return cf_json_dump(v, &o, NULL);
}

/* A call from its parts; arguments an object, or a string holding one
 * (some models quote them), or NULL for none.  -1: not a call. */
static int add_call(calls *cs, const char *name, size_t name_len, const cf_json *args,
                    const char *id)
{
    cf_json *parsed = NULL;
    if (args && args->type == CF_JSON_STRING) {
        if (cf_json_parse(args->str, args->len, NULL, &parsed, NULL))
            return -1;
        args = parsed;
    }
    if (!name_len || (args && args->type != CF_JSON_OBJECT)) {
        cf_json_free(parsed);
        return -1;
    }
    if (cs->n == cs->cap) {
        int cap = cs->cap ? 2 * cs->cap : 4;
        cf_tool_call *v = realloc(cs->v, (size_t)cap * sizeof *v);
        if (!v) {
            cf_json_free(parsed);
            return -1;
        }
        cs->v = v;
        cs->cap = cap;
    }
    cf_tool_call *t = &cs->v[cs->n];
    t->name = strndup(name, name_len);
    t->arguments = args ? compact(args) : strdup("{}");
    t->id = id ? strdup(id) : NULL;
    cf_json_free(parsed);
    if (!t->name || !t->arguments || (id && !t->id)) {
        free(t->name);
        free(t->arguments);
        free(t->id);
        return -1;
    }
    cs->n++;
    return 0;
}

static const char *str_of(const cf_json *o, const char *key)
{
    const cf_json *v = o ? cf_json_get(o, key) : NULL;
    return v && v->type == CF_JSON_STRING ? v->str : NULL;
}

/* {"name": ..., "arguments" | "parameters": {...}, "id"?}, or OpenAI's own
 * shape {"function": {"name", "arguments"}}. */
static int add_json_call(calls *cs, const cf_json *o, const char *args_key)
{
    if (!o || o->type != CF_JSON_OBJECT)
        return -1;
    const cf_json *fn = cf_json_get(o, "function");
    const cf_json *body = fn && fn->type == CF_JSON_OBJECT ? fn : o;
    const char *name = str_of(body, "name");
    if (!name)
        name = str_of(body, "tool_name");
    const cf_json *args = cf_json_get(body, args_key);
    if (!args)
        args = cf_json_get(body, "arguments");
    if (!args)
        args = cf_json_get(body, "parameters");
    return name ? add_call(cs, name, strlen(name), args, str_of(o, "id")) : -1;
}

/* A value written as text (XML-style formats): JSON where it reads as
 * JSON, else the string itself. */
static cf_json *text_value(const char *s, size_t n)
{
    while (n && (*s == '\n' || *s == ' ')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        n--;
    cf_json *v;
    if (n && cf_json_parse(s, n, NULL, &v, NULL) == 0)
        return v;
    return cf_json_string(s, n);
}

/* ---- the parsers: c stands at the first call's opening ------------------------------ */

static int parse_hermes(cursor *c, calls *cs)
{
    while (skip_blanks(c), eat(c, "<tool_call>")) {
        cf_json *v = take_json(c);
        int rc = add_json_call(cs, v, "arguments");
        cf_json_free(v);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "</tool_call>");
    }
    return cs->n ? 0 : -1;
}

static int parse_qwen_xml(cursor *c, calls *cs)
{
    size_t len;
    while (skip_blanks(c), eat(c, "<tool_call>")) {
        skip_blanks(c);
        const char *name;
        if (!eat(c, "<function=") || !(name = until(c, ">", &len)))
            return -1;
        cf_json *args = cf_json_object();
        size_t name_len = len;
        while (skip_blanks(c), args && eat(c, "<parameter=")) {
            size_t klen, vlen;
            const char *key = until(c, ">", &klen), *val = key ? until(c, "</parameter>", &vlen) : NULL;
            if (!val || cf_json_set(args, key, klen, text_value(val, vlen))) {
                cf_json_free(args);
                return -1;
            }
        }
        int rc = args && eat(c, "</function>") ? add_call(cs, name, name_len, args, NULL) : -1;
        cf_json_free(args);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "</tool_call>");
    }
    return cs->n ? 0 : -1;
}

static int parse_llama3(cursor *c, calls *cs)
{
    eat(c, "<|python_tag|>");
    cf_json *v;
    while ((v = take_json(c))) {
        int rc = add_json_call(cs, v, "parameters");
        cf_json_free(v);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, ";");
    }
    return cs->n ? 0 : -1;
}

/* [TOOL_CALLS] and a list of calls, or "<|START_ACTION|>" and one: the
 * opening marker, then JSON */
static int parse_marked_list(cursor *c, calls *cs, const char *open, const char *args_key)
{
    if (!eat(c, open))
        return -1;
    cf_json *v = take_json(c);
    int rc = v ? 0 : -1;
    if (v && v->type == CF_JSON_ARRAY)
        for (size_t i = 0; i < v->n && !rc; i++)
            rc = add_json_call(cs, v->items[i], args_key);
    else if (v)
        rc = add_json_call(cs, v, args_key);
    cf_json_free(v);
    return rc || !cs->n ? -1 : 0;
}

static int parse_mistral(cursor *c, calls *cs)
{
    return parse_marked_list(c, cs, "[TOOL_CALLS]", "arguments");
}

static int parse_command_r(cursor *c, calls *cs)
{
    return parse_marked_list(c, cs, "<|START_ACTION|>", "parameters");
}

static int parse_mistral_args(cursor *c, calls *cs)
{
    size_t len;
    while (skip_blanks(c), eat(c, "[TOOL_CALLS]")) {
        const char *name = until(c, "[ARGS]", &len);
        cf_json *v = name ? take_json(c) : NULL;
        int rc = v ? add_call(cs, name, len, v, NULL) : -1;
        cf_json_free(v);
        if (rc)
            return -1;
    }
    return cs->n ? 0 : -1;
}

/* Gemma 4's arguments: {key:value,...}, strings between <|"|> marks, other
 * values as JSON literals, into JSON. */
static cf_json *gemma_value(cursor *c, int depth);

static cf_json *gemma_items(cursor *c, bool object, int depth)
{
    cf_json *v = object ? cf_json_object() : cf_json_array();
    const char close = object ? '}' : ']';
    while (v && c->p < c->end && *c->p != close) {
        size_t klen = 0;
        const char *key = c->p;
        if (object) {
            while (c->p < c->end && *c->p != ':')
                c->p++;
            klen = (size_t)(c->p - key);
            if (!eat(c, ":"))
                break;
        }
        cf_json *item = gemma_value(c, depth + 1);
        if (!item || (object ? cf_json_set(v, key, klen, item) : cf_json_push(v, item)))
            break;
        if (!eat(c, ","))
            break;
    }
    if (!v || !eat(c, object ? "}" : "]")) {
        cf_json_free(v);
        return NULL;
    }
    return v;
}

static cf_json *gemma_value(cursor *c, int depth)
{
    size_t len;
    if (depth > 64)
        return NULL;
    if (eat(c, "<|\"|>")) {
        const char *s = until(c, "<|\"|>", &len);
        return s ? cf_json_string(s, len) : NULL;
    }
    if (eat(c, "{"))
        return gemma_items(c, true, depth);
    if (eat(c, "["))
        return gemma_items(c, false, depth);
    const char *s = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']')
        c->p++;
    return text_value(s, (size_t)(c->p - s));
}

static int parse_gemma4(cursor *c, calls *cs)
{
    size_t len;
    while (skip_blanks(c), eat(c, "<|tool_call>")) {
        const char *name = eat(c, "call:") ? until(c, "{", &len) : NULL;
        cf_json *args = name ? gemma_items(c, true, 0) : NULL;
        int rc = args ? add_call(cs, name, len, args, NULL) : -1;
        cf_json_free(args);
        if (rc || !eat(c, "<tool_call|>"))
            return rc;
    }
    return cs->n ? 0 : -1;
}

#define DS_CALLS "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81""calls\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_CALL "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81""call\xe2\x96\x81""end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81""sep\xef\xbd\x9c>"

/* V3.1: NAME<sep>{json}; R1: function<sep>NAME\n```json\n{json}\n``` */
static int parse_deepseek(cursor *c, calls *cs)
{
    size_t len, body_len;
    eat(c, DS_CALLS);
    while (skip_blanks(c), eat(c, DS_CALL)) {
        const char *name = until(c, DS_SEP, &len), *body = name ? until(c, DS_CALL_END, &body_len)
                                                              : NULL;
        if (!body)
            return -1;
        cursor b = {body, body + body_len};
        if (len == 8 && !memcmp(name, "function", 8)) {
            name = b.p;
            const char *nl = memchr(b.p, '\n', body_len);
            if (!nl)
                return -1;
            len = (size_t)(nl - name);
            b.p = nl;
            skip_blanks(&b);
            eat(&b, "```json");
        }
        cf_json *v = take_json(&b);
        int rc = v ? add_call(cs, name, len, v, NULL) : -1;
        cf_json_free(v);
        if (rc)
            return -1;
    }
    eat(c, DS_CALLS_END);
    return cs->n ? 0 : -1;
}

static int parse_glm(cursor *c, calls *cs)
{
    while (skip_blanks(c), eat(c, "<tool_call>")) {
        const char *name = c->p;
        while (c->p < c->end && *c->p != '\n' && *c->p != '<')
            c->p++;
        size_t name_len = (size_t)(c->p - name);
        cf_json *args = cf_json_object();
        while (skip_blanks(c), args && eat(c, "<arg_key>")) {
            size_t klen, vlen;
            const char *key = until(c, "</arg_key>", &klen), *val = NULL;
            if (key) {
                skip_blanks(c);
                val = eat(c, "<arg_value>") ? until(c, "</arg_value>", &vlen) : NULL;
            }
            if (!val || cf_json_set(args, key, klen, text_value(val, vlen))) {
                cf_json_free(args);
                return -1;
            }
        }
        int rc = args ? add_call(cs, name, name_len, args, NULL) : -1;
        cf_json_free(args);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "</tool_call>");
    }
    return cs->n ? 0 : -1;
}

/* functions.NAME:INDEX<|tool_call_argument_begin|>{json}: the id is
 * the whole of functions.NAME:INDEX */
static int parse_kimi(cursor *c, calls *cs)
{
    size_t len;
    eat(c, "<|tool_calls_section_begin|>");
    while (skip_blanks(c), eat(c, "<|tool_call_begin|>")) {
        const char *ref = until(c, "<|tool_call_argument_begin|>", &len);
        if (!ref)
            return -1;
        char id[128];
        snprintf(id, sizeof id, "%.*s", (int)(len < 127 ? len : 127), ref);
        const char *name = ref, *colon = memrchr(ref, ':', len);
        size_t name_len = colon ? (size_t)(colon - ref) : len;
        if (name_len > 10 && !memcmp(name, "functions.", 10)) {
            name += 10;
            name_len -= 10;
        }
        cf_json *v = take_json(c);
        int rc = v ? add_call(cs, name, name_len, v, id) : -1;
        cf_json_free(v);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "<|tool_call_end|>");
    }
    return cs->n ? 0 : -1;
}

static int parse_json(cursor *c, calls *cs)
{
    cf_json *v = take_json(c);
    int rc = add_json_call(cs, v, "arguments");
    cf_json_free(v);
    return rc;
}

/* gpt-oss: the content is the arguments of a call to the recipient the
 * header named; with none, it may still be the bare call a grammar wrote */
static int parse_harmony(cursor *c, calls *cs, const char *recipient)
{
    if (!*recipient)
        return parse_json(c, cs);
    cf_json *v = take_json(c);
    int rc = v ? add_call(cs, recipient, strlen(recipient), v, NULL) : -1;
    cf_json_free(v);
    return rc;
}

void cf_tools_harmony_recipient(cf_tool_parser *p, const char *raw, size_t len)
{
    p->recipient[0] = 0;
    const char *last = NULL, *end = raw + len;
    for (const char *q = raw; q && (q = memmem(q, (size_t)(end - q), "<|start|>", 9)); q += 9)
        last = q;
    const char *h = last ? last : raw; /* a reply's first message has its <|start|> in the prompt */
    const char *msg = memmem(h, (size_t)(end - h), "<|message|>", 11);
    const char *to = memmem(h, (size_t)((msg ? msg : end) - h), "to=functions.", 13);
    if (!to)
        return;
    to += 13;
    size_t n = 0;
    while (to + n < end && n < sizeof p->recipient - 1 && to[n] != ' ' && to[n] != '<')
        n++;
    memcpy(p->recipient, to, n);
    p->recipient[n] = 0;
}

/* ---- the table ------------------------------------------------------------------- */

typedef struct format {
    const char *name;
    const char *detect[2]; /* in the template's source, all of them */
    const char *opens[3];  /* what begins the calls in a reply */
    bool opens_first;      /* they count only at the reply's start (blanks aside) */
    const char *markup[7]; /* control tokens of the syntax */
    int (*parse)(cursor *c, calls *cs);
} format;

/* In the order they are detected: the most specific markers first. */
static const format formats[] = {
    [CF_TOOLS_KIMI] = {"kimi", {"<|tool_calls_section_begin|>"},
                       {"<|tool_calls_section_begin|>", "<|tool_call_begin|>"}, false,
                       {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                        "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"},
                       parse_kimi},
    [CF_TOOLS_DEEPSEEK] = {"deepseek", {DS_CALL}, {DS_CALLS, DS_CALL}, false,
                           {DS_CALLS, DS_CALLS_END, DS_CALL, DS_CALL_END, DS_SEP}, parse_deepseek},
    [CF_TOOLS_HARMONY] = {"gpt-oss", {"to=", "<|call|>"}, {"{"}, true, {NULL}, NULL},
    [CF_TOOLS_GEMMA4] = {"gemma4", {"<|tool_call>call:"}, {"<|tool_call>"}, false,
                         {"<|tool_call>", "<tool_call|>", "<|\"|>"}, parse_gemma4},
    [CF_TOOLS_MISTRAL_ARGS] = {"mistral-args", {"[TOOL_CALLS]", "[ARGS]"}, {"[TOOL_CALLS]"}, false,
                               {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}, parse_mistral_args},
    [CF_TOOLS_MISTRAL] = {"mistral", {"[TOOL_CALLS]"}, {"[TOOL_CALLS]"}, false,
                          {"[TOOL_CALLS]", "[CALL_ID]"}, parse_mistral},
    [CF_TOOLS_GLM] = {"glm", {"<arg_key>"}, {"<tool_call>"}, false,
                      {"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                       "</arg_value>"},
                      parse_glm},
    [CF_TOOLS_QWEN_XML] = {"qwen-xml", {"<tool_call>", "<parameter="}, {"<tool_call>"}, false,
                           {"<tool_call>", "</tool_call>"}, parse_qwen_xml},
    [CF_TOOLS_HERMES] = {"hermes", {"<tool_call>"}, {"<tool_call>"}, false,
                         {"<tool_call>", "</tool_call>"}, parse_hermes},
    [CF_TOOLS_COMMAND_R] = {"command-r", {"<|START_ACTION|>"}, {"<|START_ACTION|>"}, false,
                            {"<|START_ACTION|>", "<|END_ACTION|>"}, parse_command_r},
    [CF_TOOLS_LLAMA3] = {"llama3", {"\"parameters\""}, {"<|python_tag|>", "{"}, true,
                         {"<|python_tag|>"}, parse_llama3},
    [CF_TOOLS_JSON] = {"json", {NULL}, {"{"}, true, {NULL}, parse_json},
};
#define N_FORMATS (int)(sizeof formats / sizeof formats[0])

static const cf_tool_format detect_order[] = {
    CF_TOOLS_KIMI, CF_TOOLS_DEEPSEEK, CF_TOOLS_HARMONY, CF_TOOLS_GEMMA4, CF_TOOLS_MISTRAL_ARGS,
    CF_TOOLS_MISTRAL, CF_TOOLS_GLM, CF_TOOLS_QWEN_XML, CF_TOOLS_HERMES, CF_TOOLS_COMMAND_R,
    CF_TOOLS_LLAMA3,
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
    while (lead < len && (text[lead] == ' ' || text[lead] == '\n' || text[lead] == '\t'))
        lead++;
    *maybe = len;
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
        if (p->f == CF_TOOLS_HARMONY ? parse_harmony(&c, &cs, p->recipient)
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

/* ---- a required call's grammar ------------------------------------------------------ */

/* The JSON schema of one call: {"name": const, ARGS_KEY: its parameters}. */
static int put_call_schema(cf_jbuf *b, const cf_json *fn, const char *args_key)
{
    const char *name = str_of(fn, "name");
    if (!name)
        return -1;
    const cf_json *params = cf_json_get(fn, "parameters");
    cf_jbuf_puts(b, "{\"type\":\"object\",\"properties\":{\"name\":{\"const\":");
    cf_json_put_string(b, name, strlen(name), false);
    cf_jbuf_puts(b, "},\"");
    cf_jbuf_puts(b, args_key);
    cf_jbuf_puts(b, "\":");
    char *text = params && params->type == CF_JSON_OBJECT ? compact(params) : NULL;
    cf_jbuf_puts(b, text ? text : "{\"type\":\"object\"}");
    free(text);
    cf_jbuf_puts(b, "},\"required\":[\"name\",\"");
    cf_jbuf_puts(b, args_key);
    cf_jbuf_puts(b, "\"]}");
    return 0;
}

int cf_tools_grammar(cf_tool_format f, const char *tools_json, const char *name, bool framed,
                     struct cf_grammar **out, cf_tool_format *as, cf_err *err)
{
    *out = NULL;
    *as = framed && (f == CF_TOOLS_HERMES || f == CF_TOOLS_MISTRAL || f == CF_TOOLS_LLAMA3)
          ? f : CF_TOOLS_JSON;
    const char *before = *as == CF_TOOLS_HERMES ? "<tool_call>\n"
                         : *as == CF_TOOLS_MISTRAL ? "[TOOL_CALLS][" : NULL;
    const char *after = *as == CF_TOOLS_HERMES ? "\n</tool_call>"
                        : *as == CF_TOOLS_MISTRAL ? "]" : NULL;
    const char *args_key = *as == CF_TOOLS_LLAMA3 ? "parameters" : "arguments";
    cf_json *tools;
    cf_err why;
    if (cf_json_parse(tools_json, strlen(tools_json), NULL, &tools, &why))
        return cf_fail_as(err, CF_E_USAGE, "tools: %s", why.msg);
    cf_jbuf b = {0};
    int n = 0, rc = 0;
    cf_jbuf_puts(&b, "{\"anyOf\":[");
    for (size_t i = 0; tools->type == CF_JSON_ARRAY && i < tools->n && !rc; i++) {
        const cf_json *fn = cf_json_get(tools->items[i], "function");
        const char *fname = str_of(fn, "name");
        if (!fname || (name && strcmp(fname, name)))
            continue;
        if (n++)
            cf_jbuf_putc(&b, ',');
        rc = put_call_schema(&b, fn, args_key);
    }
    cf_jbuf_puts(&b, "]}");
    cf_json_free(tools);
    if (!rc && !n)
        rc = name ? cf_fail_as(err, CF_E_USAGE, "tool_choice: no tool is named '%.100s'", name)
                  : cf_fail_as(err, CF_E_USAGE, "tools: no function to call");
    else if (!rc && b.failed)
        rc = cf_fail(err, "out of memory");
    else if (!rc)
        rc = cf_grammar_from_json_schema_framed(b.p, before, after, out, err);
    cf_jbuf_free(&b);
    return rc;
}
