/* Reading what a server sends: stream chunks and whole responses, error
 * bodies, the model list.  Servers differ in details, all read here:
 * llama-server sends "content": null in a first chunk and its "timings"
 * in the last, vLLM and OpenAI a usage chunk with no choices, ollama the
 * role in every delta and its reasoning as "reasoning", llama-server and
 * DeepSeek-style servers theirs as "reasoning_content". */
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"
#include "json.h"

void cf_oai_chunk_free(cf_oai_chunk *c)
{
    free(c->content);
    free(c->reasoning);
    free(c->finish);
    free(c->error);
    free(c->model);
    memset(c, 0, sizeof *c);
}

/* A member that must be a string (or null, or absent: *out stays NULL). */
static int opt_str(const cf_json *obj, const char *key, const char *where, char **out, cf_err *err)
{
    const cf_json *v = cf_json_get(obj, key);
    if (!v || v->type == CF_JSON_NULL)
        return 0;
    if (v->type != CF_JSON_STRING)
        return cf_fail(err, "the server's reply is malformed: %s%s is not a string", where, key);
    if (!(*out = malloc(v->len + 1)))
        return cf_fail(err, "out of memory");
    memcpy(*out, v->str, v->len + 1);
    return 0;
}

static bool number(const cf_json *v, double *out)
{
    if (v && v->type == CF_JSON_INT)
        *out = (double)v->i;
    else if (v && v->type == CF_JSON_FLOAT)
        *out = v->f;
    else
        return false;
    return true;
}

static int int_of(const cf_json *obj, const char *key)
{
    double d = 0;
    number(cf_json_get(obj, key), &d);
    return d > 0 && d < 2e9 ? (int)d : 0;
}

static double ms_of(const cf_json *obj, const char *key)
{
    double d = 0;
    number(cf_json_get(obj, key), &d);
    return d > 0 ? d : 0;
}

static void read_usage(const cf_json *root, cf_oai_usage *u)
{
    const cf_json *us = cf_json_get(root, "usage"), *t = cf_json_get(root, "timings");
    if (us && us->type == CF_JSON_OBJECT) {
        u->has_usage = true;
        u->prompt_tokens = int_of(us, "prompt_tokens");
        u->completion_tokens = int_of(us, "completion_tokens");
        const cf_json *det = cf_json_get(us, "prompt_tokens_details");
        if (det && det->type == CF_JSON_OBJECT)
            u->cached_tokens = int_of(det, "cached_tokens");
    }
    if (t && t->type == CF_JSON_OBJECT) {
        u->has_timings = true;
        u->prompt_n = int_of(t, "prompt_n");
        u->predicted_n = int_of(t, "predicted_n");
        u->prompt_ms = ms_of(t, "prompt_ms");
        u->predicted_ms = ms_of(t, "predicted_ms");
        if (!u->cached_tokens)
            u->cached_tokens = int_of(t, "cache_n");
    }
}

/* An "error" member: an object with a message, or a string. */
static int read_error(const cf_json *e, cf_oai_chunk *out, cf_err *err)
{
    const cf_json *m = e->type == CF_JSON_OBJECT ? cf_json_get(e, "message") : e;
    const char *text = m && m->type == CF_JSON_STRING ? m->str : "the server reported an error";
    if (!(out->error = strdup(text)))
        return cf_fail(err, "out of memory");
    return 0;
}

static int decode(const cf_json *root, cf_oai_chunk *out, cf_err *err)
{
    if (root->type != CF_JSON_OBJECT)
        return cf_fail(err, "the server's reply is malformed: not a JSON object");
    const cf_json *e = cf_json_get(root, "error");
    if (e && e->type != CF_JSON_NULL)
        return read_error(e, out, err);
    if (opt_str(root, "model", "", &out->model, err))
        return -1;
    read_usage(root, &out->usage);
    const cf_json *ch = cf_json_get(root, "choices");
    if (!ch || ch->type == CF_JSON_NULL) {
        if (out->usage.has_usage || out->usage.has_timings)
            return 0;
        return cf_fail(err, "the server's reply is malformed: it has no choices");
    }
    if (ch->type != CF_JSON_ARRAY)
        return cf_fail(err, "the server's reply is malformed: choices is not an array");
    if (ch->n == 0) /* the usage chunk of OpenAI and vLLM */
        return 0;
    const cf_json *c0 = ch->items[0];
    if (c0->type != CF_JSON_OBJECT)
        return cf_fail(err, "the server's reply is malformed: choices[0] is not an object");
    if (opt_str(c0, "finish_reason", "choices[0].", &out->finish, err))
        return -1;
    const char *which = "delta";
    const cf_json *d = cf_json_get(c0, which);
    if (!d || d->type == CF_JSON_NULL)
        d = cf_json_get(c0, which = "message");
    if (!d || d->type == CF_JSON_NULL)
        return 0;
    if (d->type != CF_JSON_OBJECT)
        return cf_fail(err, "the server's reply is malformed: choices[0].%s is not an object",
                       which);
    char where[32];
    snprintf(where, sizeof where, "choices[0].%s.", which);
    if (opt_str(d, "content", where, &out->content, err) ||
        opt_str(d, "reasoning_content", where, &out->reasoning, err))
        return -1;
    if (!out->reasoning && opt_str(d, "reasoning", where, &out->reasoning, err))
        return -1;
    return 0;
}

/* Blanks around the sentinel are the server's own business. */
static bool is_done(const char *data, size_t len)
{
    while (len && (data[len - 1] == ' ' || data[len - 1] == '\n' || data[len - 1] == '\r'))
        len--;
    while (len && (*data == ' ' || *data == '\n' || *data == '\r'))
        data++, len--;
    return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}

int cf_oai_chunk_decode(const char *data, size_t len, cf_oai_chunk *out, cf_err *err)
{
    memset(out, 0, sizeof *out);
    if (is_done(data, len)) {
        out->done = true;
        return 0;
    }
    cf_json *root;
    cf_err why;
    if (cf_json_parse(data, len, NULL, &root, &why))
        return cf_fail(err, "the server sent malformed JSON (%s)", why.msg);
    int rc = decode(root, out, err);
    cf_json_free(root);
    if (rc)
        cf_oai_chunk_free(out);
    return rc;
}

/* ---- error bodies ------------------------------------------------------------ */

static void copy_line(const char *s, size_t len, char *buf, size_t n)
{
    while (len && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++, len--;
    size_t k = 0;
    while (k < len && s[k] != '\n' && s[k] != '\r')
        k++;
    while (k && s[k - 1] == ' ')
        k--;
    if (k >= n)
        k = n - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
}

static const cf_json *message_of(const cf_json *root)
{
    const cf_json *e = cf_json_get(root, "error");
    if (e && e->type == CF_JSON_OBJECT)
        e = cf_json_get(e, "message");
    if (e && e->type == CF_JSON_STRING)
        return e;
    const cf_json *m = cf_json_get(root, "message");
    if (m && m->type == CF_JSON_STRING)
        return m;
    const cf_json *d = cf_json_get(root, "detail");
    /* FastAPI's validation errors: a list of {"msg": ...} */
    if (d && d->type == CF_JSON_ARRAY && d->n > 0 && d->items[0]->type == CF_JSON_OBJECT)
        d = cf_json_get(d->items[0], "msg");
    return d && d->type == CF_JSON_STRING ? d : NULL;
}

void cf_oai_error_text(const char *body, size_t len, char *buf, size_t n)
{
    cf_json *root = NULL;
    const cf_json *m = NULL;
    if (cf_json_parse(body, len, NULL, &root, NULL) == 0 && root->type == CF_JSON_OBJECT)
        m = message_of(root);
    if (m)
        copy_line(m->str, m->len, buf, n);
    else
        copy_line(body, len, buf, n);
    cf_json_free(root);
}

/* ---- the model list -------------------------------------------------------------- */

void cf_oai_models_free(char **ids)
{
    for (size_t i = 0; ids && ids[i]; i++)
        free(ids[i]);
    free(ids);
}

int cf_oai_models_decode(const char *body, size_t len, char ***ids, cf_err *err)
{
    *ids = NULL;
    cf_json *root;
    cf_err why;
    if (cf_json_parse(body, len, NULL, &root, &why))
        return cf_fail(err, "the server's model list is malformed JSON (%s)", why.msg);
    const cf_json *data = root->type == CF_JSON_OBJECT ? cf_json_get(root, "data") : NULL;
    int rc = -1;
    if (!data || data->type != CF_JSON_ARRAY) {
        cf_fail(err, "the server's model list has no \"data\" array");
        goto out;
    }
    char **list = calloc(data->n + 1, sizeof *list);
    if (!list) {
        cf_fail(err, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < data->n; i++) {
        const cf_json *id = data->items[i]->type == CF_JSON_OBJECT
                                ? cf_json_get(data->items[i], "id")
                                : NULL;
        if (id && id->type == CF_JSON_STRING && !(list[k++] = strdup(id->str))) {
            cf_oai_models_free(list);
            cf_fail(err, "out of memory");
            goto out;
        }
    }
    *ids = list;
    rc = 0;
out:
    cf_json_free(root);
    return rc;
}
