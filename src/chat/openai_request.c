/* Requests: the settings table, the body a client sends, and reading it
 * back on the server.
 *
 * temperature, top_p, max_tokens, seed, presence_penalty,
 * frequency_penalty, stop and reasoning_effort are OpenAI's own fields.
 * top_k, min_p, typical_p, repeat_penalty and repeat_last_n are
 * llama-server's extensions; vLLM takes top_k and min_p too, and its
 * repetition_penalty, which goes beside repeat_penalty.
 * chat_template_kwargs.enable_thinking is how llama-server and vLLM pass
 * the template the thinking switch.  Servers that do not know a field
 * mostly ignore it, OpenAI's own API refuses it: so a client sends only
 * the settings the user set.  A server reads each field under its other
 * names too (max_completion_tokens, OpenAI's newer; n_predict,
 * llama-server's own; max_output_tokens, the Responses API's). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "confab/openai.h"
#include "json.h"

typedef enum kind { K_NUMBER, K_INT, K_STRING, K_SWITCH } kind;

static const struct field {
    const char *setting, *field;
    kind kind;
    const char *sent_too;    /* another server's name for it, sent beside */
    const char *read_too[3]; /* other names a request may use */
} fields[] = {
    {"temp", "temperature", K_NUMBER, NULL, {NULL}},
    {"top-p", "top_p", K_NUMBER, NULL, {NULL}},
    {"top-k", "top_k", K_INT, NULL, {NULL}},
    {"min-p", "min_p", K_NUMBER, NULL, {NULL}},
    {"typical", "typical_p", K_NUMBER, NULL, {NULL}},
    {"repeat-penalty", "repeat_penalty", K_NUMBER, "repetition_penalty", {"repetition_penalty"}},
    {"repeat-last-n", "repeat_last_n", K_INT, NULL, {NULL}},
    {"presence-penalty", "presence_penalty", K_NUMBER, NULL, {NULL}},
    {"frequency-penalty", "frequency_penalty", K_NUMBER, NULL, {NULL}},
    {"seed", "seed", K_INT, NULL, {NULL}},
    {"n-predict", "max_tokens", K_INT, NULL,
     {"max_completion_tokens", "n_predict", "max_output_tokens"}},
    {"reasoning-effort", "reasoning_effort", K_STRING, NULL, {NULL}},
    {"thinking", "enable_thinking", K_SWITCH, NULL, {NULL}}, /* inside chat_template_kwargs */
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

const char *cf_oai_field_of(const char *setting)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (!strcmp(fields[i].setting, setting))
            return fields[i].kind == K_SWITCH ? "chat_template_kwargs.enable_thinking"
                                              : fields[i].field;
    return NULL;
}

static const struct field *field_for(const char *setting)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (!strcmp(fields[i].setting, setting))
            return &fields[i];
    return NULL;
}

static const char *role_name(cf_role r)
{
    static const char *const names[] = {"system", "user", "assistant", "tool"};
    return names[r];
}

static int put(cf_json *obj, const char *key, cf_json *v)
{
    return cf_json_set(obj, key, strlen(key), v);
}

/* A setting's value as JSON: NULL when it means "the server's default"
 * (seed random, thinking or effort auto) or does not parse. */
static cf_json *value_json(const struct field *f, const char *value)
{
    char *end;
    errno = 0;
    switch (f->kind) {
    case K_NUMBER: {
        double d = strtod(value, &end);
        return *value && !*end && !errno ? cf_json_float(d) : NULL;
    }
    case K_INT: {
        long long v = strtoll(value, &end, 10);
        return *value && !*end && !errno ? cf_json_int(v) : NULL;
    }
    case K_STRING:
        return strcmp(value, "auto") ? cf_json_string(value, strlen(value)) : NULL;
    case K_SWITCH:
        return !strcmp(value, "on") || !strcmp(value, "off") ? cf_json_bool(!strcmp(value, "on"))
                                                              : NULL;
    }
    return NULL;
}

char *cf_oai_request_build(const char *model, const cf_message *msgs, int n,
                           const cf_oai_setting *settings, int n_settings,
                           const char *const *stops, bool stream, size_t *len)
{
    cf_json *root = cf_json_object(), *list = cf_json_array(), *kwargs = cf_json_object();
    if (!root || !list || !kwargs) {
        cf_json_free(root);
        cf_json_free(list);
        cf_json_free(kwargs);
        return NULL;
    }
    int bad = 0;
    if (model && *model)
        bad |= put(root, "model", cf_json_string(model, strlen(model)));
    for (int i = 0; i < n; i++) {
        /* earlier replies' reasoning stays here: DeepSeek's API refuses
         * it, and templates drop it anyway */
        const char *role = role_name(msgs[i].role);
        cf_json *m = cf_json_object();
        if (m)
            bad |= put(m, "role", cf_json_string(role, strlen(role))) |
                   put(m, "content", cf_json_string(msgs[i].content, strlen(msgs[i].content)));
        cf_json *calls = NULL;
        if (m && msgs[i].tool_calls)
            bad |= cf_json_parse(msgs[i].tool_calls, strlen(msgs[i].tool_calls), NULL, &calls, NULL)
                   || put(m, "tool_calls", calls);
        if (m && msgs[i].tool_call_id)
            bad |= put(m, "tool_call_id",
                       cf_json_string(msgs[i].tool_call_id, strlen(msgs[i].tool_call_id)));
        bad |= cf_json_push(list, m);
    }
    bad |= put(root, "messages", list);
    bad |= put(root, "stream", cf_json_bool(stream));
    if (stream) {
        cf_json *so = cf_json_object();
        if (so)
            bad |= put(so, "include_usage", cf_json_bool(true));
        bad |= put(root, "stream_options", so);
    }
    for (int i = 0; i < n_settings; i++) {
        const struct field *f = field_for(settings[i].name);
        cf_json *v = f ? value_json(f, settings[i].value) : NULL;
        if (v && f->sent_too)
            bad |= put(root, f->sent_too, cf_json_copy(v));
        if (v)
            bad |= put(f->kind == K_SWITCH ? kwargs : root, f->field, v);
    }
    if (kwargs->n)
        bad |= put(root, "chat_template_kwargs", kwargs);
    else
        cf_json_free(kwargs);
    if (stops && stops[0]) {
        cf_json *st = cf_json_array();
        for (size_t i = 0; st && stops[i]; i++)
            bad |= cf_json_push(st, cf_json_string(stops[i], strlen(stops[i])));
        bad |= put(root, "stop", st);
    }
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    char *text = bad ? NULL : cf_json_dump(root, &o, len);
    cf_json_free(root);
    return text;
}

/* ---- reading a request --------------------------------------------------------- */

void cf_oai_request_free(cf_oai_request *r)
{
    free(r->model);
    for (int i = 0; r->msgs && i < r->n_msgs; i++) {
        free((char *)r->msgs[i].content);
        free((char *)r->msgs[i].reasoning);
        free((char *)r->msgs[i].tool_calls);
        free((char *)r->msgs[i].tool_call_id);
    }
    free(r->msgs);
    for (int i = 0; r->settings && i < r->n_settings; i++) {
        free((char *)r->settings[i].name);
        free((char *)r->settings[i].value);
    }
    free(r->settings);
    for (int i = 0; r->stops && i < r->n_stops; i++)
        free(r->stops[i]);
    free(r->stops);
    free(r->prompt);
    free(r->bias);
    free(r->tools);
    free(r->tool_name);
    cf_grammar_free(r->format);
    free(r->format_key);
    memset(r, 0, sizeof *r);
}

static char *dup_json_str(const cf_json *v)
{
    char *s = malloc(v->len + 1);
    if (s)
        memcpy(s, v->str, v->len + 1);
    return s;
}

/* A message's content: a string, null (as "") or text parts joined. */
static int content_text(const cf_json *c, int i, char **out, cf_err *err)
{
    if (!c || c->type == CF_JSON_NULL) {
        *out = strdup("");
    } else if (c->type == CF_JSON_STRING) {
        if (strlen(c->str) != c->len)
            return cf_fail(err, "messages[%d].content has a NUL character (\\u0000), which "
                           "confab cannot pass to the model", i);
        *out = dup_json_str(c);
    } else if (c->type == CF_JSON_ARRAY) {
        cf_jbuf b = {0};
        for (size_t k = 0; k < c->n; k++) {
            const cf_json *p = c->items[k], *type, *text;
            if (p->type != CF_JSON_OBJECT || !(type = cf_json_get(p, "type")) ||
                type->type != CF_JSON_STRING ||
                (strcmp(type->str, "text") && strcmp(type->str, "input_text") &&
                 strcmp(type->str, "output_text")) ||
                !(text = cf_json_get(p, "text")) || text->type != CF_JSON_STRING) {
                cf_jbuf_free(&b);
                return cf_fail(err, "messages[%d].content[%zu]: only {\"type\": \"text\", "
                               "\"text\": ...} parts are supported", i, k);
            }
            if (strlen(text->str) != text->len) {
                cf_jbuf_free(&b);
                return cf_fail(err, "messages[%d].content[%zu] has a NUL character (\\u0000), "
                               "which confab cannot pass to the model", i, k);
            }
            cf_jbuf_put(&b, text->str, text->len);
        }
        cf_jbuf_putc(&b, '\0');
        *out = cf_jbuf_take(&b, NULL);
    } else {
        return cf_fail(err, "messages[%d].content is not a string or a list of text parts", i);
    }
    return *out ? 0 : cf_fail(err, "out of memory");
}

static char *compact_json(const cf_json *v)
{
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    return cf_json_dump(v, &o, NULL);
}

/* An assistant's tool_calls ([{"id", "type": "function", "function":
 * {"name", "arguments"}}]), kept as compact JSON; a tool's tool_call_id. */
static int read_call_fields(const cf_json *m, int i, cf_message *out, cf_err *err)
{
    const cf_json *calls = cf_json_get(m, "tool_calls"), *id = cf_json_get(m, "tool_call_id");
    if (out->role == CF_ROLE_TOOL) {
        if (!id || id->type != CF_JSON_STRING)
            return cf_fail(err, "messages[%d]: a tool message needs its tool_call_id", i);
        return (out->tool_call_id = dup_json_str(id)) ? 0 : cf_fail(err, "out of memory");
    }
    if (!calls || calls->type == CF_JSON_NULL || out->role != CF_ROLE_ASSISTANT)
        return 0;
    for (size_t k = 0; calls->type == CF_JSON_ARRAY && k < calls->n; k++) {
        const cf_json *fn = cf_json_get(calls->items[k], "function");
        const cf_json *name = fn ? cf_json_get(fn, "name") : NULL;
        if (!name || name->type != CF_JSON_STRING)
            return cf_fail(err, "messages[%d].tool_calls[%zu] has no function name", i, k);
    }
    if (calls->type != CF_JSON_ARRAY)
        return cf_fail(err, "messages[%d].tool_calls must be a list", i);
    return calls->n == 0 || (out->tool_calls = compact_json(calls)) ? 0
                                                                   : cf_fail(err, "out of memory");
}

static int read_message(const cf_json *m, int i, cf_message *out, cf_err *err)
{
    if (m->type != CF_JSON_OBJECT)
        return cf_fail(err, "messages[%d] is not an object", i);
    const cf_json *role = cf_json_get(m, "role");
    if (!role || role->type != CF_JSON_STRING)
        return cf_fail(err, "messages[%d] has no role", i);
    if (!strcmp(role->str, "system") || !strcmp(role->str, "developer"))
        out->role = CF_ROLE_SYSTEM;
    else if (!strcmp(role->str, "user"))
        out->role = CF_ROLE_USER;
    else if (!strcmp(role->str, "assistant"))
        out->role = CF_ROLE_ASSISTANT;
    else if (!strcmp(role->str, "tool"))
        out->role = CF_ROLE_TOOL;
    else
        return cf_fail(err, "messages[%d]: role '%.40s' is not supported (system, user, "
                       "assistant, tool)", i, role->str);
    const cf_json *c = cf_json_get(m, "content");
    if (!c && out->role != CF_ROLE_ASSISTANT)
        return cf_fail(err, "messages[%d] has no content", i);
    if (read_call_fields(m, i, out, err))
        return -1;
    char *text;
    if (content_text(c, i, &text, err))
        return -1;
    out->content = text;
    const cf_json *r = cf_json_get(m, "reasoning_content");
    if (!r)
        r = cf_json_get(m, "reasoning");
    if (r && r->type == CF_JSON_STRING && out->role == CF_ROLE_ASSISTANT && r->len &&
        !(out->reasoning = dup_json_str(r)))
        return cf_fail(err, "out of memory");
    return 0;
}

static int read_messages(const cf_json *list, cf_oai_request *r, cf_err *err)
{
    if (!list || list->type != CF_JSON_ARRAY || list->n == 0)
        return cf_fail(err, "messages must be a non-empty list");
    if (!(r->msgs = calloc(list->n, sizeof *r->msgs)))
        return cf_fail(err, "out of memory");
    for (size_t i = 0; i < list->n; i++) {
        if (read_message(list->items[i], (int)i, &r->msgs[i], err)) {
            free((char *)r->msgs[i].content);
            free((char *)r->msgs[i].reasoning);
            free((char *)r->msgs[i].tool_calls);
            free((char *)r->msgs[i].tool_call_id);
            return -1;
        }
        r->n_msgs++;
    }
    return 0;
}

/* A field's value in cf_session_set's spelling, or NULL (with err set
 * when it is of the wrong type). */
static char *setting_text(const struct field *f, const cf_json *v, const char *key, cf_err *err)
{
    char buf[64];
    /* a float beyond long long's range has no conversion to test with */
    bool integral = v->type == CF_JSON_INT || (v->type == CF_JSON_FLOAT && v->f >= -0x1p63 && v->f < 0x1p63 &&
                                               v->f == (double)(long long)v->f);
    switch (f->kind) {
    case K_NUMBER:
        if (v->type == CF_JSON_INT)
            snprintf(buf, sizeof buf, "%lld", (long long)v->i);
        else if (v->type == CF_JSON_FLOAT)
            snprintf(buf, sizeof buf, "%.9g", v->f);
        else
            goto bad;
        break;
    case K_INT:
        if (v->type == CF_JSON_FLOAT && v->u && !strcmp(f->setting, "seed")) {
            /* past int64: OpenAI's seeds go to 2^64-1, the session's to 2^64-2
             * (its last value draws one at random), so the last draws as 0 */
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)(v->u % UINT64_MAX));
            break;
        }
        if (!integral)
            goto bad;
        snprintf(buf, sizeof buf, "%lld",
                 v->type == CF_JSON_INT ? (long long)v->i : (long long)v->f);
        if (!strcmp(f->setting, "n-predict") && atoll(buf) < 1) {
            cf_fail(err, "%s must be at least 1", key);
            return NULL;
        }
        break;
    case K_STRING:
        if (v->type != CF_JSON_STRING)
            goto bad;
        return dup_json_str(v);
    case K_SWITCH:
        if (v->type != CF_JSON_BOOL)
            goto bad;
        snprintf(buf, sizeof buf, "%s", v->b ? "on" : "off");
        break;
    }
    return strdup(buf);
bad:
    cf_fail(err, "%s must be %s", key,
            f->kind == K_NUMBER ? "a number" : f->kind == K_INT ? "an integer"
            : f->kind == K_STRING ? "a string" : "true or false");
    return NULL;
}

static int add_setting(cf_oai_request *r, const struct field *f, const cf_json *v, const char *key,
                       cf_err *err)
{
    cf_err why = {.msg = ""};
    char *value = setting_text(f, v, key, &why), *name = strdup(f->setting);
    cf_oai_setting *s = realloc(r->settings, (size_t)(r->n_settings + 1) * sizeof *s);
    if (!value || !name || !s) {
        free(value);
        free(name);
        if (s)
            r->settings = s;
        return why.msg[0] ? cf_fail(err, "%s", why.msg) : cf_fail(err, "out of memory");
    }
    r->settings = s;
    s[r->n_settings++] = (cf_oai_setting){name, value};
    return 0;
}

static int read_settings(const cf_json *root, cf_oai_request *r, cf_err *err)
{
    const cf_json *kw = cf_json_get(root, "chat_template_kwargs");
    for (size_t i = 0; i < N_FIELDS; i++) {
        const struct field *f = &fields[i];
        const char *key = f->field;
        const cf_json *v;
        if (f->kind == K_SWITCH) {
            v = kw && kw->type == CF_JSON_OBJECT ? cf_json_get(kw, f->field) : NULL;
            key = "chat_template_kwargs.enable_thinking";
        } else {
            v = cf_json_get(root, f->field);
        }
        for (int k = 0; k < 3 && !v && f->read_too[k]; k++)
            v = cf_json_get(root, key = f->read_too[k]);
        if (v && v->type != CF_JSON_NULL && add_setting(r, f, v, key, err))
            return -1;
    }
    return 0;
}

static int read_stops(const cf_json *st, cf_oai_request *r, cf_err *err)
{
    if (!st || st->type == CF_JSON_NULL)
        return 0;
    size_t n = st->type == CF_JSON_ARRAY ? st->n : 1;
    if (st->type != CF_JSON_STRING && st->type != CF_JSON_ARRAY)
        return cf_fail(err, "stop must be a string or a list of strings");
    if (!(r->stops = calloc(n + 1, sizeof *r->stops)))
        return cf_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const cf_json *s = st->type == CF_JSON_ARRAY ? st->items[i] : st;
        if (s->type != CF_JSON_STRING || s->len == 0 || strlen(s->str) != s->len)
            return cf_fail(err, "stop must be a string or a list of non-empty strings");
        if (!(r->stops[r->n_stops] = dup_json_str(s)))
            return cf_fail(err, "out of memory");
        r->n_stops++;
    }
    return 0;
}

static int read_flag(const cf_json *obj, const char *key, bool *out, cf_err *err)
{
    const cf_json *v = obj && obj->type == CF_JSON_OBJECT ? cf_json_get(obj, key) : NULL;
    if (!v || v->type == CF_JSON_NULL)
        return 0;
    if (v->type != CF_JSON_BOOL)
        return cf_fail(err, "%s must be true or false", key);
    *out = v->b;
    return 0;
}

static int push_setting(cf_oai_request *r, const char *name, const char *value, cf_err *err)
{
    cf_oai_setting *s = realloc(r->settings, (size_t)(r->n_settings + 1) * sizeof *s);
    if (s)
        r->settings = s;
    char *n = strdup(name), *v = strdup(value);
    if (!s || !n || !v) {
        free(n);
        free(v);
        return cf_fail(err, "out of memory");
    }
    s[r->n_settings++] = (cf_oai_setting){n, v};
    return 0;
}

static int refuse(cf_oai_request *r, const char *param, cf_err *err, const char *why)
{
    snprintf(r->param, sizeof r->param, "%s", param);
    return cf_fail(err, "%s: %s", param, why);
}

static bool given(const cf_json *v)
{
    return v && v->type != CF_JSON_NULL;
}

static bool empty(const cf_json *v)
{
    return !given(v) || ((v->type == CF_JSON_ARRAY || v->type == CF_JSON_OBJECT) && v->n == 0);
}

/* response_format (the Responses API's text.format, flat: its name and
 * schema beside the type): text, json_object (the JSON grammar) or
 * json_schema (the schema's grammar; what it cannot express refused). */
static int read_format(const cf_json *v, bool flat, cf_oai_request *r, cf_err *err)
{
    const char *param = flat ? "text.format" : "response_format";
    if (!given(v))
        return 0;
    const cf_json *type = v->type == CF_JSON_OBJECT ? cf_json_get(v, "type") : NULL;
    if (!type || type->type != CF_JSON_STRING)
        return refuse(r, param, err, "must be an object with a type (text, json_object, "
                      "json_schema)");
    if (!strcmp(type->str, "text"))
        return 0;
    cf_err why;
    if (!strcmp(type->str, "json_object")) {
        if (cf_grammar_json(&r->format, &why))
            return cf_fail(err, "%s", why.msg);
        snprintf(r->format_name, sizeof r->format_name, "json");
        return (r->format_key = strdup("json")) ? 0 : cf_fail(err, "out of memory");
    }
    if (strcmp(type->str, "json_schema"))
        return refuse(r, param, err, "its type must be text, json_object or json_schema");
    const cf_json *js = flat ? v : cf_json_get(v, "json_schema");
    const cf_json *schema =
        given(js) && js->type == CF_JSON_OBJECT ? cf_json_get(js, "schema") : NULL;
    if (!given(schema) || (schema->type != CF_JSON_OBJECT && schema->type != CF_JSON_BOOL))
        return refuse(r, param, err, flat ? "json_schema needs a schema object"
                                          : "json_schema needs json_schema.schema, an object");
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    char *text = cf_json_dump(schema, &o, NULL);
    if (!text)
        return cf_fail(err, "out of memory");
    int rc = cf_grammar_from_json_schema(text, &r->format, &why);
    r->format_key = text;
    if (rc)
        return refuse(r, param, err, why.msg);
    snprintf(r->format_name, sizeof r->format_name, "json schema");
    return 0;
}

/* tools, each {"type": "function", "function": {"name", "description",
 * "parameters"}}, and tool_choice: "auto", "none", "required" or
 * {"type": "function", "function": {"name"}} (one of the tools). */
static int read_tools(const cf_json *root, cf_oai_request *r, cf_err *err)
{
    const cf_json *tools = cf_json_get(root, "tools"), *choice = cf_json_get(root, "tool_choice");
    char param[48];
    if (given(tools) && tools->type != CF_JSON_ARRAY)
        return refuse(r, "tools", err, "must be a list of tools");
    for (size_t k = 0; given(tools) && k < tools->n; k++) {
        const cf_json *t = tools->items[k];
        const cf_json *type = t->type == CF_JSON_OBJECT ? cf_json_get(t, "type") : NULL;
        const cf_json *fn = t->type == CF_JSON_OBJECT ? cf_json_get(t, "function") : NULL;
        bool obj = fn && fn->type == CF_JSON_OBJECT;
        const cf_json *name = obj ? cf_json_get(fn, "name") : NULL;
        const cf_json *params = obj ? cf_json_get(fn, "parameters") : NULL;
        snprintf(param, sizeof param, "tools[%zu]", k);
        if (!type || type->type != CF_JSON_STRING || strcmp(type->str, "function"))
            return refuse(r, param, err, "only tools of type function are supported here");
        if (!name || name->type != CF_JSON_STRING || !name->len)
            return refuse(r, param, err, "a function needs a name");
        if (given(params) && params->type != CF_JSON_OBJECT)
            return refuse(r, param, err, "function.parameters must be a JSON schema object");
    }
    bool any = given(tools) && tools->n > 0, parallel = true;
    if (read_flag(root, "parallel_tool_calls", &parallel, err))
        return refuse(r, "parallel_tool_calls", err, "must be true or false");
    r->one_call = !parallel;
    if (any && !(r->tools = compact_json(tools)))
        return cf_fail(err, "out of memory");
    r->tool_choice = CF_OAI_TOOLS_AUTO;
    if (!given(choice))
        return 0;
    if (choice->type == CF_JSON_STRING && !strcmp(choice->str, "auto"))
        return 0;
    if (choice->type == CF_JSON_STRING && !strcmp(choice->str, "none")) {
        r->tool_choice = CF_OAI_TOOLS_NONE;
        return 0;
    }
    if (choice->type == CF_JSON_STRING && !strcmp(choice->str, "required"))
        r->tool_choice = CF_OAI_TOOLS_REQUIRED;
    const cf_json *fn = choice->type == CF_JSON_OBJECT ? cf_json_get(choice, "function") : NULL;
    const cf_json *name = fn && fn->type == CF_JSON_OBJECT ? cf_json_get(fn, "name") : NULL;
    if (name && name->type == CF_JSON_STRING) {
        r->tool_choice = CF_OAI_TOOLS_NAMED;
        bool known = false;
        for (size_t k = 0; any && k < tools->n; k++) {
            const cf_json *f = cf_json_get(tools->items[k], "function");
            const cf_json *n = cf_json_get(f, "name");
            known |= n->len == name->len && !strcmp(n->str, name->str);
        }
        if (!known)
            return refuse(r, "tool_choice", err, "names a function that is not among the tools");
        if (!(r->tool_name = dup_json_str(name)))
            return cf_fail(err, "out of memory");
    }
    if (r->tool_choice == CF_OAI_TOOLS_AUTO)
        return refuse(r, "tool_choice", err, "must be none, auto, required or {\"type\": "
                      "\"function\", \"function\": {\"name\": ...}}");
    if (!any)
        return refuse(r, "tool_choice", err, "there are no tools to call");
    return 0;
}

/* The fields whose meaning is not carried out here: refused by name,
 * never ignored, since a client relying on one would get a reply that
 * only looks right. */
static int read_unhonoured(const cf_json *root, cf_oai_api api, cf_oai_request *r, cf_err *err)
{
    const cf_json *v = cf_json_get(root, "n");
    int most = api == CF_OAI_CHAT ? CF_OAI_MAX_CHOICES : 1;
    r->n_choices = 1;
    if (given(v) && !(v->type == CF_JSON_INT && v->i >= 1 && v->i <= most))
        return most > 1 ? refuse(r, "n", err, "must be 1 to 16 here")
                        : refuse(r, "n", err, "only one choice per request is made here (n must "
                                 "be 1)");
    if (given(v))
        r->n_choices = (int)v->i;
    static const char *const legacy = "the legacy function calling is not supported by confab "
                                      "serve: use tools";
    if (!empty(cf_json_get(root, "functions")))
        return refuse(r, "functions", err, legacy);
    if (given(cf_json_get(root, "function_call")))
        return refuse(r, "function_call", err, legacy);
    if (api == CF_OAI_CHAT) {
        if (read_tools(root, r, err))
            return -1;
    } else if (!empty(cf_json_get(root, "tools"))) {
        return refuse(r, "tools", err, api == CF_OAI_TEXT ? "a completion calls no tools"
                      : "function calling is supported on /v1/chat/completions only");
    } else if (given(v = cf_json_get(root, "tool_choice")) &&
               !(v->type == CF_JSON_STRING &&
                 (!strcmp(v->str, "none") || !strcmp(v->str, "auto")))) {
        return refuse(r, "tool_choice", err, "there are no tools to call");
    }
    if (api != CF_OAI_RESPONSES && read_format(cf_json_get(root, "response_format"), false, r, err))
        return -1;
    static const char *const others[] = {"audio", "prediction", "web_search_options"};
    for (int k = 0; k < 3; k++)
        if (given(cf_json_get(root, others[k])))
            return refuse(r, others[k], err, "not supported by confab serve");
    v = cf_json_get(root, "modalities");
    if (given(v) && !(v->type == CF_JSON_ARRAY && v->n == 1 &&
                      v->items[0]->type == CF_JSON_STRING && !strcmp(v->items[0]->str, "text")))
        return refuse(r, "modalities", err, "only [\"text\"] is supported here");
    return 0;
}

/* logit_bias: {"token id": bias, ...}, the bias from -100 to 100. */
static int read_bias(const cf_json *v, cf_oai_request *r, cf_err *err)
{
    if (!given(v))
        return 0;
    if (v->type != CF_JSON_OBJECT)
        return refuse(r, "logit_bias", err, "must be an object of token ids and biases");
    if (v->n && !(r->bias = calloc(v->n, sizeof *r->bias)))
        return cf_fail(err, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        const char *key = v->keys[i].ptr;
        const cf_json *b = v->items[i];
        char *end;
        errno = 0;
        long id = strtol(key, &end, 10);
        if (!*key || *end || errno || id < 0 || id > INT32_MAX || key[0] == '-' || key[0] == '+')
            return refuse(r, "logit_bias", err, "its keys must be token ids (0, 1, ...)");
        double d = b->type == CF_JSON_INT ? (double)b->i : b->type == CF_JSON_FLOAT ? b->f : NAN;
        if (!(d >= -100 && d <= 100))
            return refuse(r, "logit_bias", err, "its biases must be numbers from -100 to 100");
        r->bias[r->n_bias++] = (cf_logit_bias){(int32_t)id, (float)d};
    }
    return 0;
}

/* logprobs and top_logprobs: the sampler's record of each token (the
 * setting probs) reports them. */
static int read_logprobs(const cf_json *root, cf_oai_request *r, cf_err *err)
{
    const cf_json *lp = cf_json_get(root, "logprobs"), *top = cf_json_get(root, "top_logprobs");
    if (given(lp) && lp->type != CF_JSON_BOOL)
        return refuse(r, "logprobs", err, "must be true or false");
    r->logprobs = given(lp) && lp->b;
    if (given(top)) {
        if (top->type != CF_JSON_INT || top->i < 0 || top->i > CF_TOP_PROBS)
            return refuse(r, "top_logprobs", err, "must be an integer from 0 to 20");
        if (!r->logprobs)
            return refuse(r, "top_logprobs", err, "needs logprobs: true");
        r->top_logprobs = (int)top->i;
    }
    return r->logprobs ? push_setting(r, "probs", "on", err) : 0;
}

/* The legacy completion's own fields that are not carried out. */
static int read_legacy(const cf_json *root, cf_oai_request *r, cf_err *err)
{
    const cf_json *v = cf_json_get(root, "logprobs");
    if (given(v) && !(v->type == CF_JSON_INT && v->i == 0))
        return refuse(r, "logprobs", err, "not supported by confab serve's /v1/completions yet "
                      "(/v1/chat/completions gives them)");
    if (given(v = cf_json_get(root, "echo")) && !(v->type == CF_JSON_BOOL && !v->b))
        return refuse(r, "echo", err, "not supported by confab serve");
    if (given(v = cf_json_get(root, "best_of")) && !(v->type == CF_JSON_INT && v->i == 1))
        return refuse(r, "best_of", err, "only one completion per request is made here");
    if (given(v = cf_json_get(root, "suffix")) && !(v->type == CF_JSON_STRING && v->len == 0))
        return refuse(r, "suffix", err, "not supported by confab serve");
    return 0;
}

/* A completion's prompt: a string, or a list of one. */
static int read_prompt(const cf_json *v, cf_oai_request *r, cf_err *err)
{
    if (given(v) && v->type == CF_JSON_ARRAY && v->n == 1)
        v = v->items[0];
    else if (given(v) && v->type == CF_JSON_ARRAY)
        return refuse(r, "prompt", err, "one prompt per request here (a list of one string)");
    if (!given(v) || v->type != CF_JSON_STRING)
        return refuse(r, "prompt", err, "must be a string");
    if (strlen(v->str) != v->len)
        return refuse(r, "prompt", err, "has a NUL character (\\u0000), which confab cannot pass "
                      "to the model");
    return (r->prompt = dup_json_str(v)) ? 0 : cf_fail(err, "out of memory");
}

/* The Responses API's own fields: the input and instructions as messages,
 * its switches, and what it asks that is not carried out here. */
static int read_input(const cf_json *root, cf_oai_request *r, cf_err *err)
{
    const cf_json *in = cf_json_get(root, "input"), *ins = cf_json_get(root, "instructions");
    size_t n = given(in) && in->type == CF_JSON_ARRAY ? in->n : 1;
    if (!given(in) || (in->type != CF_JSON_STRING && in->type != CF_JSON_ARRAY) || n == 0)
        return refuse(r, "input", err, "must be a string or a non-empty list of messages");
    if (given(ins) && ins->type != CF_JSON_STRING)
        return refuse(r, "instructions", err, "must be a string");
    if (!(r->msgs = calloc(n + 1, sizeof *r->msgs)))
        return cf_fail(err, "out of memory");
    for (size_t i = 0; i <= n; i++) { /* the instructions, then the input */
        const cf_json *item = i == 0 ? ins : in->type == CF_JSON_STRING ? in : in->items[i - 1];
        cf_message *m = &r->msgs[r->n_msgs];
        if (!given(item))
            continue;
        const cf_json *type = item->type == CF_JSON_OBJECT ? cf_json_get(item, "type") : NULL;
        if (type && !(type->type == CF_JSON_STRING && !strcmp(type->str, "message")))
            return refuse(r, "input", err, "only messages are supported here (no function calls, "
                          "images or files)");
        if (item->type == CF_JSON_STRING) {
            *m = (cf_message){.role = i == 0 ? CF_ROLE_SYSTEM : CF_ROLE_USER};
            if (content_text(item, (int)i, (char **)&m->content, err))
                return -1;
        } else if (read_message(item, (int)i - 1, m, err)) {
            free((char *)m->content);
            m->content = NULL;
            return -1;
        }
        r->n_msgs++;
    }
    const cf_json *v = cf_json_get(root, "text");
    if (read_format(given(v) && v->type == CF_JSON_OBJECT ? cf_json_get(v, "format") : NULL, true,
                    r, err))
        return -1;
    static const char *const kept[] = {"previous_response_id", "conversation"};
    for (int k = 0; k < 2; k++)
        if (given(cf_json_get(root, kept[k])))
            return refuse(r, kept[k], err, "confab serve keeps no responses: send the whole "
                          "conversation as input");
    if (given(v = cf_json_get(root, "background")) && !(v->type == CF_JSON_BOOL && !v->b))
        return refuse(r, "background", err, "not supported by confab serve");
    if (!empty(cf_json_get(root, "include")))
        return refuse(r, "include", err, "not supported by confab serve yet");
    if (given(cf_json_get(root, "prompt")))
        return refuse(r, "prompt", err, "stored prompts are not supported by confab serve");
    if (given(v = cf_json_get(root, "top_logprobs")) && !(v->type == CF_JSON_INT && v->i == 0))
        return refuse(r, "top_logprobs", err, "not supported by confab serve's /v1/responses yet");
    const cf_json *effort = given(v = cf_json_get(root, "reasoning")) && v->type == CF_JSON_OBJECT
                            ? cf_json_get(v, "effort") : NULL;
    if (given(effort) && effort->type != CF_JSON_STRING)
        return refuse(r, "reasoning.effort", err, "must be a string");
    return given(effort) ? push_setting(r, "reasoning-effort", effort->str, err) : 0;
}

static int parse_body(const char *body, size_t len, cf_oai_api api, cf_oai_request *out,
                      cf_err *err)
{
    memset(out, 0, sizeof *out);
    cf_json *root;
    cf_err why;
    if (cf_json_parse(body, len, NULL, &root, &why))
        return cf_fail(err, "the body is not JSON: %s", why.msg);
    int rc = -1;
    const cf_json *model;
    if (root->type != CF_JSON_OBJECT) {
        cf_fail(err, "the body is not a JSON object");
        goto out;
    }
    if ((model = cf_json_get(root, "model")) && model->type != CF_JSON_NULL) {
        if (model->type != CF_JSON_STRING) {
            snprintf(out->param, sizeof out->param, "model");
            cf_fail(err, "model must be a string");
            goto out;
        }
        if (!(out->model = dup_json_str(model))) {
            cf_fail(err, "out of memory");
            goto out;
        }
    }
    if ((api == CF_OAI_TEXT        ? read_prompt(cf_json_get(root, "prompt"), out, err)
         : api == CF_OAI_RESPONSES ? read_input(root, out, err)
                                   : read_messages(cf_json_get(root, "messages"), out, err)) ||
        read_settings(root, out, err) || read_stops(cf_json_get(root, "stop"), out, err) ||
        read_flag(root, "stream", &out->stream, err) ||
        read_flag(cf_json_get(root, "stream_options"), "include_usage", &out->include_usage, err) ||
        read_unhonoured(root, api, out, err) ||
        read_bias(cf_json_get(root, "logit_bias"), out, err) ||
        (api == CF_OAI_TEXT ? read_legacy(root, out, err)
         : api == CF_OAI_CHAT ? read_logprobs(root, out, err) : 0))
        goto out;
    rc = 0;
out:
    cf_json_free(root);
    if (rc) {
        char param[sizeof out->param];
        memcpy(param, out->param, sizeof param);
        cf_oai_request_free(out);
        memcpy(out->param, param, sizeof param);
    }
    return rc;
}

int cf_oai_request_parse(const char *body, size_t len, cf_oai_request *out, cf_err *err)
{
    return parse_body(body, len, CF_OAI_CHAT, out, err);
}

int cf_oai_api_parse(cf_oai_api api, const char *body, size_t len, cf_oai_request *out,
                     cf_err *err)
{
    return parse_body(body, len, api, out, err);
}
