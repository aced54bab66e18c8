/* Chat templates for the session: a Jinja template or a built-in behind
 * one object, rendering with Hugging Face's variables, and the rule that
 * chooses which one a session uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/template.h"
#include "jinja.h"
#include "reasoning.h"
#include "template_builtin.h"

struct cf_chat_template {
    cf_jinja *jinja;  /* NULL for a built-in */
    char *source;     /* the Jinja text, for people (/show template); NULL for a built-in */
    int builtin;      /* the built-in, or for Jinja the detected family (-1: none) */
    char label[128];
    cf_chat_reasoning reasoning; /* read from a Jinja source; none for built-ins */
};

static int builtin_template(int id, const char *how, cf_chat_template **out, cf_err *err)
{
    cf_chat_template *t = calloc(1, sizeof *t);
    if (!t)
        return cf_fail(err, "out of memory");
    t->builtin = id;
    snprintf(t->label, sizeof t->label, "%s (built-in%s%s)", cf_builtin_name(id), how ? ", " : "",
             how ? how : "");
    *out = t;
    return 0;
}

int cf_chat_template_from_name(const char *name, cf_chat_template **out, cf_err *err)
{
    *out = NULL;
    int id = cf_builtin_find(name);
    if (id < 0)
        return cf_fail(err, "unknown chat template '%s' (built-ins: chatml, llama2, llama3, "
                            "mistral-v7, phi3, gemma, ...: see 'confab template --help')", name);
    return builtin_template(id, NULL, out, err);
}

/* Whether the template reads the variable name: an occurrence that is not
 * a namespace's attribute (ns.name) or argument (namespace(name=...)). */
static bool reads_variable(const char *src, size_t len, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = src, *end = src + len; (p = memmem(p, (size_t)(end - p), name, n)); p += n) {
        const bool attribute = p > src && p[-1] == '.';
        const bool argument = p - src >= 10 && !memcmp(p - 10, "namespace(", 10);
        if (!attribute && !argument)
            return true;
    }
    return false;
}

int cf_chat_template_from_jinja(const char *src, size_t len, const char *origin,
                                cf_chat_template **out, cf_err *err)
{
    *out = NULL;
    cf_chat_template *t = calloc(1, sizeof *t);
    if (!t)
        return cf_fail(err, "out of memory");
    if (!(t->source = strndup(src, len))) {
        free(t);
        return cf_fail(err, "out of memory");
    }
    if (cf_jinja_compile(src, len, &t->jinja, err) < 0) {
        free(t->source);
        free(t);
        return -1;
    }
    t->builtin = cf_builtin_detect(src, len);
    snprintf(t->label, sizeof t->label, "jinja (from %s)", origin ? origin : "file");
    reasoning_family f = reasoning_detect(src, len);
    const bool text = (memmem(src, len, "'/no_think'", 11) || memmem(src, len, "\"/no_think\"", 11)) &&
                      (memmem(src, len, "'/think'", 8) || memmem(src, len, "\"/think\"", 8));
    t->reasoning = (cf_chat_reasoning){
        .family = f == RF_NONE ? NULL : reasoning_family_name(f),
        .thinking_switch = reads_variable(src, len, "enable_thinking") || text,
        .thinking_text = text,
        .effort = reads_variable(src, len, "reasoning_effort"),
    };
    *out = t;
    return 0;
}

void cf_chat_template_free(cf_chat_template *t)
{
    if (!t)
        return;
    cf_jinja_free(t->jinja);
    free(t->source);
    free(t);
}

const char *cf_chat_template_source(const cf_chat_template *t)
{
    return t->source;
}

const char *const *cf_chat_builtin_names(void)
{
    return cf_builtin_names();
}

const char *cf_chat_detect(const char *src, size_t len)
{
    return cf_builtin_name(cf_builtin_detect(src, len));
}

bool cf_chat_template_is_jinja(const cf_chat_template *t)
{
    return t->jinja != NULL;
}

const char *cf_chat_template_label(const cf_chat_template *t)
{
    return t->label;
}

const char *cf_chat_template_family(const cf_chat_template *t)
{
    return cf_builtin_name(t->builtin);
}

const char *const *cf_chat_template_stops(const cf_chat_template *t)
{
    return cf_builtin_stops(t->builtin);
}

const cf_chat_reasoning *cf_chat_template_reasoning(const cf_chat_template *t)
{
    return &t->reasoning;
}

/* ---- rendering ---------------------------------------------------------- */

static int parse_json(const char *what, const char *text, cf_json **out, cf_err *err)
{
    cf_err e;
    if (cf_json_parse(text, strlen(text), NULL, out, &e) < 0)
        return cf_fail(err, "%s: %s", what, e.msg);
    return 0;
}

/* The text of a message's content for a built-in: a string, none (""), or
 * a list of {"type": "text", "text": ...} parts joined. */
static int content_text(const cf_json *m, size_t i, cf_jbuf *b, cf_err *err)
{
    const cf_json *c = cf_json_get(m, "content");
    if (!c || c->type == CF_JSON_NULL)
        return 0;
    if (c->type == CF_JSON_STRING) {
        cf_jbuf_put(b, c->str, c->len);
        return 0;
    }
    if (c->type == CF_JSON_ARRAY) {
        for (size_t k = 0; k < c->n; k++) {
            const cf_json *text = cf_json_get(c->items[k], "text");
            if (text && text->type == CF_JSON_STRING)
                cf_jbuf_put(b, text->str, text->len);
        }
        return 0;
    }
    return cf_fail(err, "message %zu: the content is neither text nor a list of text parts", i + 1);
}

static int render_builtin(const cf_chat_template *t, const cf_json *msgs, const cf_chat_opts *o,
                          char **out, size_t *len, cf_err *err)
{
    size_t n = msgs->n;
    cf_turn *turns = calloc(n ? n : 1, sizeof *turns);
    cf_jbuf *texts = calloc(n ? n : 1, sizeof *texts);
    cf_jbuf b = {0};
    int rc = -1;
    if (!turns || !texts) {
        cf_fail(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const cf_json *role = cf_json_get(msgs->items[i], "role");
        if (!role || role->type != CF_JSON_STRING) {
            cf_fail(err, "message %zu has no \"role\" string", i + 1);
            goto done;
        }
        if (content_text(msgs->items[i], i, &texts[i], err) < 0)
            goto done;
        if (texts[i].failed) {
            cf_fail(err, "out of memory");
            goto done;
        }
        turns[i] = (cf_turn){role->str, texts[i].p ? texts[i].p : "", texts[i].n};
    }
    cf_builtin_apply(t->builtin, turns, n, o->add_generation_prompt, &b);
    *out = cf_jbuf_take(&b, len);
    if (!*out)
        cf_fail(err, "out of memory");
    else
        rc = 0;
done:
    for (size_t i = 0; texts && i < n; i++)
        cf_jbuf_free(&texts[i]);
    free(texts);
    free(turns);
    return rc;
}

static int render_jinja(const cf_chat_template *t, const cf_json *msgs, const cf_chat_opts *o,
                        char **out, size_t *len, cf_err *err)
{
    size_t nv = 6 + o->n_vars, k = 0;
    cf_jinja_var *vars = calloc(nv, sizeof *vars);
    cf_json **owned = calloc(nv, sizeof *owned);
    size_t nowned = 0;
    int rc = -1;
    if (!vars || !owned) {
        cf_fail(err, "out of memory");
        goto done;
    }
    /* what transformers' apply_chat_template passes */
    cf_json *agp = cf_json_bool(o->add_generation_prompt), *none = cf_json_null(), *tools = NULL;
    owned[nowned++] = agp;
    owned[nowned++] = none;
    if (o->tools_json) {
        if (parse_json("tools", o->tools_json, &tools, err) < 0)
            goto done;
        owned[nowned++] = tools;
    }
    vars[k++] = (cf_jinja_var){"messages", msgs};
    vars[k++] = (cf_jinja_var){"tools", tools ? tools : none};
    vars[k++] = (cf_jinja_var){"documents", none};
    vars[k++] = (cf_jinja_var){"add_generation_prompt", agp};
    const char *tok_names[2] = {"bos_token", "eos_token"}, *tok_vals[2] = {o->bos_token, o->eos_token};
    for (int i = 0; i < 2; i++) {
        if (!tok_vals[i])
            continue;
        cf_json *s = cf_json_string(tok_vals[i], strlen(tok_vals[i]));
        owned[nowned++] = s;
        vars[k++] = (cf_jinja_var){tok_names[i], s};
    }
    for (size_t i = 0; i < o->n_vars; i++) {
        cf_json *v;
        char what[96];
        snprintf(what, sizeof what, "variable '%.60s'", o->var_names[i]);
        if (parse_json(what, o->var_json[i], &v, err) < 0)
            goto done;
        owned[nowned++] = v;
        vars[k++] = (cf_jinja_var){o->var_names[i], v};
    }
    for (size_t i = 0; i < nowned; i++)
        if (!owned[i]) {
            cf_fail(err, "out of memory");
            goto done;
        }
    rc = cf_jinja_render(t->jinja, vars, k, o->limits, o->now, out, len, err);
done:
    for (size_t i = 0; owned && i < nowned; i++)
        cf_json_free(owned[i]);
    free(owned);
    free(vars);
    return rc;
}

static int render(const cf_chat_template *t, const cf_json *msgs, const cf_chat_opts *o, char **out,
                  size_t *len, cf_err *err)
{
    static const cf_chat_opts no_opts = {0};
    size_t ignored;
    *out = NULL;
    if (!len)
        len = &ignored;
    if (!o)
        o = &no_opts;
    if (msgs->type != CF_JSON_ARRAY)
        return cf_fail(err, "messages: a JSON list of messages is expected");
    for (size_t i = 0; i < msgs->n; i++)
        if (msgs->items[i]->type != CF_JSON_OBJECT)
            return cf_fail(err, "messages: item %zu is not an object", i + 1);
    return t->jinja ? render_jinja(t, msgs, o, out, len, err) : render_builtin(t, msgs, o, out, len, err);
}

int cf_chat_render_json(const cf_chat_template *t, const char *messages_json, size_t json_len,
                        const cf_chat_opts *o, char **out, size_t *len, cf_err *err)
{
    cf_json *msgs;
    cf_err e;
    *out = NULL;
    if (cf_json_parse(messages_json, json_len, NULL, &msgs, &e) < 0)
        return cf_fail(err, "messages: %s", e.msg);
    int rc = render(t, msgs, o, out, len, err);
    cf_json_free(msgs);
    return rc;
}

int cf_chat_render(const cf_chat_template *t, const cf_chat_msg *msgs, size_t n, const cf_chat_opts *o,
                   char **out, size_t *len, cf_err *err)
{
    *out = NULL;
    cf_json *arr = cf_json_array();
    for (size_t i = 0; arr && i < n; i++) {
        cf_json *m = cf_json_object();
        const char *role = msgs[i].role ? msgs[i].role : "";
        cf_json *content = msgs[i].content ? cf_json_string(msgs[i].content, strlen(msgs[i].content))
                                           : cf_json_null();
        if (cf_json_set(m, "role", 4, cf_json_string(role, strlen(role))) < 0 ||
            cf_json_set(m, "content", 7, content) < 0) {
            cf_json_free(m);
            cf_json_free(arr);
            return cf_fail(err, "out of memory");
        }
        if (msgs[i].extra_json) {
            cf_json *extra;
            char what[48];
            snprintf(what, sizeof what, "message %zu's extra fields", i + 1);
            if (parse_json(what, msgs[i].extra_json, &extra, err) < 0) {
                cf_json_free(m);
                cf_json_free(arr);
                return -1;
            }
            if (extra->type != CF_JSON_OBJECT) {
                cf_json_free(extra);
                cf_json_free(m);
                cf_json_free(arr);
                return cf_fail(err, "%s: a JSON object is expected", what);
            }
            for (size_t k = 0; k < extra->n; k++) {
                if (cf_json_set(m, extra->keys[k].ptr, extra->keys[k].len, extra->items[k]) < 0) {
                    extra->items[k] = NULL;
                    cf_json_free(extra);
                    cf_json_free(m);
                    cf_json_free(arr);
                    return cf_fail(err, "out of memory");
                }
                extra->items[k] = NULL; /* moved into m */
            }
            cf_json_free(extra);
        }
        if (cf_json_push(arr, m) < 0) {
            cf_json_free(arr);
            return cf_fail(err, "out of memory");
        }
    }
    if (!arr)
        return cf_fail(err, "out of memory");
    int rc = render(t, arr, o, out, len, err);
    cf_json_free(arr);
    return rc;
}

/* ---- the session's choice ----------------------------------------------- */

static void say(char *note, size_t note_len, const char *fmt, const char *a, const char *b)
{
    if (note && note_len)
        snprintf(note, note_len, fmt, a, b);
}

/* An ordinary conversation: what a usable template renders. */
static const cf_chat_msg probe[] = {
    {"user", "Hello!", NULL}, {"assistant", "Hi there.", NULL}, {"user", "How are you?", NULL}};
#define PROBE_REPLY "Hi there."

int cf_chat_template_turn_end(const cf_chat_template *t, const char *bos_token,
                              const char *eos_token, char *buf, size_t n)
{
    cf_chat_opts o = {.bos_token = bos_token, .eos_token = eos_token};
    char *text;
    buf[0] = 0;
    if (cf_chat_render(t, probe, sizeof probe / sizeof probe[0], &o, &text, NULL, NULL))
        return -1;
    const char *at = strstr(text, PROBE_REPLY);
    if (at) {
        at += strlen(PROBE_REPLY);
        at += strspn(at, " \t\r\n");
        const char *end = *at == '<' ? strchr(at, '>') : *at == '[' ? strchr(at, ']') : NULL;
        if (end && (size_t)(end + 1 - at) < n) {
            memcpy(buf, at, (size_t)(end + 1 - at));
            buf[end + 1 - at] = 0;
        }
    }
    free(text);
    return 0;
}

int cf_chat_template_choose(const cf_chat_choice *c, cf_chat_template **out, char *note,
                            size_t note_len, cf_err *err)
{
    *out = NULL;
    say(note, note_len, "%s%s", "", "");
    if (c->name)
        return cf_chat_template_from_name(c->name, out, err);
    if (c->file_text)
        return cf_chat_template_from_jinja(c->file_text, c->file_len, c->file_name, out, err);
    if (!c->gguf_template)
        return builtin_template(cf_builtin_find("chatml"), "default", out, err);
    /* the GGUF's own template, if it compiles and renders an ordinary conversation */
    cf_err why;
    cf_chat_template *t;
    const char *failure = "does not compile";
    if (cf_chat_template_from_jinja(c->gguf_template, c->gguf_len, "GGUF", &t, &why) == 0) {
        cf_chat_opts o = {0};
        o.bos_token = c->bos_token;
        o.eos_token = c->eos_token;
        o.add_generation_prompt = true;
        char *text;
        if (cf_chat_render(t, probe, sizeof probe / sizeof probe[0], &o, &text, NULL, &why) == 0) {
            free(text);
            *out = t;
            return 0;
        }
        cf_chat_template_free(t);
        failure = "fails on a test conversation";
    }
    int id = cf_builtin_detect(c->gguf_template, c->gguf_len);
    int rc = id >= 0 ? builtin_template(id, "detected", out, err)
                     : builtin_template(cf_builtin_find("chatml"), "default", out, err);
    if (rc == 0 && note && note_len) {
        char head[96];
        snprintf(head, sizeof head, "the model's chat template %s", failure);
        snprintf(note, note_len, "%s (%s); using %s", head, why.msg, (*out)->label);
    }
    return rc;
}
