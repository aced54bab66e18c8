/* Tool calls read back from a reply's text, one parser per syntax, on a
 * few shared pieces: a cursor over the text, JSON values found by their
 * brackets, calls added with their arguments as compact JSON, values
 * written as text (XML-style formats), Gemma's and Python's literals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_internal.h"

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

char *tool_compact(const cf_json *v)
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
    t->arguments = args ? tool_compact(args) : strdup("{}");
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

/* add_call with arguments that are taken over (freed); none: not a call. */
static int take_call(calls *cs, const char *name, size_t name_len, cf_json *args, const char *id)
{
    int rc = args ? add_call(cs, name, name_len, args, id) : -1;
    cf_json_free(args);
    return rc;
}

const char *tool_str_of(const cf_json *o, const char *key)
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
    const char *name = tool_str_of(body, "name");
    if (!name)
        name = tool_str_of(body, "tool_name");
    const cf_json *args = cf_json_get(body, args_key);
    if (!args)
        args = cf_json_get(body, "arguments");
    if (!args)
        args = cf_json_get(body, "parameters");
    return name ? add_call(cs, name, strlen(name), args, tool_str_of(o, "id")) : -1;
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

int tool_parse_hermes(cursor *c, calls *cs)
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

int tool_parse_qwen_xml(cursor *c, calls *cs)
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
            const char *key = until(c, ">", &klen);
            const char *val = key ? until(c, "</parameter>", &vlen) : NULL;
            if (!val || cf_json_set(args, key, klen, text_value(val, vlen))) {
                cf_json_free(args);
                return -1;
            }
        }
        int rc = eat(c, "</function>") ? take_call(cs, name, name_len, args, NULL)
                                       : (cf_json_free(args), -1);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "</tool_call>");
    }
    return cs->n ? 0 : -1;
}

int tool_parse_llama3(cursor *c, calls *cs)
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

int tool_parse_mistral(cursor *c, calls *cs)
{
    return parse_marked_list(c, cs, "[TOOL_CALLS]", "arguments");
}

int tool_parse_command_r(cursor *c, calls *cs)
{
    return parse_marked_list(c, cs, "<|START_ACTION|>", "parameters");
}

int tool_parse_nemotron(cursor *c, calls *cs)
{
    return parse_marked_list(c, cs, "<TOOLCALL>", "arguments");
}

/* Python's literals as JSON: 'text' or "text", numbers, True, False,
 * None, [lists] and {dicts}. */
static cf_json *py_value(cursor *c, int depth)
{
    skip_blanks(c);
    if (depth > 64 || c->p >= c->end)
        return NULL;
    char q = *c->p;
    if (q == '\'' || q == '"') {
        cf_jbuf b = {0};
        for (c->p++; c->p < c->end && *c->p != q; c->p++) {
            if (*c->p == '\\' && c->p + 1 < c->end) {
                char e = *++c->p;
                cf_jbuf_putc(&b, e == 'n' ? '\n' : e == 't' ? '\t' : e);
            } else {
                cf_jbuf_putc(&b, *c->p);
            }
        }
        cf_json *s = c->p < c->end && !b.failed ? cf_json_string(b.p ? b.p : "", b.n) : NULL;
        cf_jbuf_free(&b);
        c->p++;
        return s;
    }
    if (q == '[' || q == '{') {
        bool dict = q == '{';
        cf_json *v = dict ? cf_json_object() : cf_json_array();
        for (c->p++; v && (skip_blanks(c), c->p < c->end && *c->p != (dict ? '}' : ']'));) {
            cf_json *key = dict ? py_value(c, depth + 1) : NULL;
            if (dict && (!key || key->type != CF_JSON_STRING || (skip_blanks(c), !eat(c, ":")))) {
                cf_json_free(key);
                break;
            }
            cf_json *item = py_value(c, depth + 1);
            int bad = !item ||
                      (dict ? cf_json_set(v, key->str, key->len, item) : cf_json_push(v, item));
            cf_json_free(key);
            if (bad || (skip_blanks(c), !eat(c, ",")))
                break;
        }
        if (!v || !eat(c, dict ? "}" : "]")) {
            cf_json_free(v);
            return NULL;
        }
        return v;
    }
    const char *s = c->p;
    while (c->p < c->end && !strchr(",)]} \n", *c->p))
        c->p++;
    size_t n = (size_t)(c->p - s);
    if (n == 4 && !memcmp(s, "True", 4))
        return cf_json_bool(true);
    if (n == 5 && !memcmp(s, "False", 5))
        return cf_json_bool(false);
    if (n == 4 && !memcmp(s, "None", 4))
        return cf_json_null();
    cf_json *v;
    return n && cf_json_parse(s, n, NULL, &v, NULL) == 0 ? v : NULL;
}

/* [name(key=value, ...), ...] */
int tool_parse_pythonic(cursor *c, calls *cs)
{
    if (!eat(c, "<|tool_call_start|>") || (skip_blanks(c), !eat(c, "[")))
        return -1;
    while (skip_blanks(c), c->p < c->end && *c->p != ']') {
        const char *name = c->p;
        while (c->p < c->end && *c->p != '(')
            c->p++;
        size_t name_len = (size_t)(c->p - name);
        cf_json *args = eat(c, "(") ? cf_json_object() : NULL;
        while (args && (skip_blanks(c), c->p < c->end && *c->p != ')')) {
            const char *key = c->p;
            while (c->p < c->end && *c->p != '=')
                c->p++;
            size_t klen = (size_t)(c->p - key);
            cf_json *v = eat(c, "=") ? py_value(c, 0) : NULL;
            bool bad = !v || cf_json_set(args, key, klen, v);
            if (bad || (skip_blanks(c), !eat(c, ",") && (c->p >= c->end || *c->p != ')'))) {
                cf_json_free(args);
                args = NULL;
            }
        }
        if (args && !eat(c, ")")) {
            cf_json_free(args);
            return -1;
        }
        if (take_call(cs, name, name_len, args, NULL))
            return -1;
        skip_blanks(c);
        eat(c, ",");
    }
    return eat(c, "]") && cs->n ? 0 : -1;
}

int tool_parse_mistral_args(cursor *c, calls *cs)
{
    size_t len;
    while (skip_blanks(c), eat(c, "[TOOL_CALLS]")) {
        const char *name = until(c, "[ARGS]", &len);
        cf_json *v = name ? take_json(c) : NULL;
        int rc = take_call(cs, name, len, v, NULL);
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

int tool_parse_gemma4(cursor *c, calls *cs)
{
    size_t len;
    while (skip_blanks(c), eat(c, "<|tool_call>")) {
        const char *name = eat(c, "call:") ? until(c, "{", &len) : NULL;
        cf_json *args = name ? gemma_items(c, true, 0) : NULL;
        int rc = take_call(cs, name, len, args, NULL);
        if (rc || !eat(c, "<tool_call|>"))
            return rc;
    }
    return cs->n ? 0 : -1;
}


/* V3.1: NAME<sep>{json}; R1: function<sep>NAME\n```json\n{json}\n``` */
int tool_parse_deepseek(cursor *c, calls *cs)
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
        int rc = take_call(cs, name, len, v, NULL);
        if (rc)
            return -1;
    }
    eat(c, DS_CALLS_END);
    return cs->n ? 0 : -1;
}

int tool_parse_glm(cursor *c, calls *cs)
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
        int rc = take_call(cs, name, name_len, args, NULL);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "</tool_call>");
    }
    return cs->n ? 0 : -1;
}

/* functions.NAME:INDEX<|tool_call_argument_begin|>{json}: the id is
 * the whole of functions.NAME:INDEX */
int tool_parse_kimi(cursor *c, calls *cs)
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
        int rc = take_call(cs, name, name_len, v, id);
        if (rc)
            return -1;
        skip_blanks(c);
        eat(c, "<|tool_call_end|>");
    }
    return cs->n ? 0 : -1;
}

int tool_parse_json(cursor *c, calls *cs)
{
    cf_json *v = take_json(c);
    int rc = add_json_call(cs, v, "arguments");
    cf_json_free(v);
    return rc;
}

/* gpt-oss: the content is the arguments of a call to the recipient the
 * header named; with none, it may still be the bare call a grammar wrote */
int tool_parse_harmony(cursor *c, calls *cs, const char *recipient)
{
    if (!*recipient)
        return tool_parse_json(c, cs);
    cf_json *v = take_json(c);
    int rc = take_call(cs, recipient, strlen(recipient), v, NULL);
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

