/* What `confab serve` writes: stream chunks, whole responses, errors and
 * the model list, shaped as OpenAI's API shapes them (every field its
 * SDKs look for, null where there is nothing), with llama-server's
 * timings beside the usage, so clients of either read them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"
#include "json.h"

static int put(cf_json *obj, const char *key, cf_json *v)
{
    return cf_json_set(obj, key, strlen(key), v);
}

static int put_str(cf_json *obj, const char *key, const char *s)
{
    return put(obj, key, s ? cf_json_string(s, strlen(s)) : cf_json_null());
}

static char *dump(cf_json *root, int bad, size_t *len)
{
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    char *text = bad || !root ? NULL : cf_json_dump(root, &o, len);
    cf_json_free(root);
    return text;
}

static int put_usage(cf_json *root, const cf_oai_usage *u)
{
    int bad = 0;
    if (u->has_usage) {
        cf_json *us = cf_json_object(), *det = cf_json_object();
        if (us && det)
            bad |= put(us, "prompt_tokens", cf_json_int(u->prompt_tokens)) |
                   put(us, "completion_tokens", cf_json_int(u->completion_tokens)) |
                   put(us, "total_tokens", cf_json_int(u->prompt_tokens + u->completion_tokens)) |
                   put(det, "cached_tokens", cf_json_int(u->cached_tokens));
        bad |= put(us, "prompt_tokens_details", det) | put(root, "usage", us);
    }
    if (u->has_timings) {
        cf_json *t = cf_json_object();
        if (t)
            bad |= put(t, "cache_n", cf_json_int(u->cached_tokens)) |
                   put(t, "prompt_n", cf_json_int(u->prompt_n)) |
                   put(t, "prompt_ms", cf_json_float(u->prompt_ms)) |
                   put(t, "prompt_per_second",
                       cf_json_float(u->prompt_ms > 0 ? u->prompt_n * 1e3 / u->prompt_ms : 0)) |
                   put(t, "predicted_n", cf_json_int(u->predicted_n)) |
                   put(t, "predicted_ms", cf_json_float(u->predicted_ms)) |
                   put(t, "predicted_per_second",
                       cf_json_float(u->predicted_ms > 0 ? u->predicted_n * 1e3 / u->predicted_ms
                                                         : 0));
        bad |= put(root, "timings", t);
    }
    return bad;
}

/* The fields every reply has, and choices (NULL when memory runs out). */
static cf_json *reply_root(const cf_oai_reply_id *id, const char *object, cf_json **choices,
                           int *bad)
{
    cf_json *root = cf_json_object(), *list = cf_json_array();
    if (!root || !list || put(root, "choices", list)) {
        cf_json_free(root);
        return NULL;
    }
    *choices = list;
    *bad = put_str(root, "id", id->id) | put_str(root, "object", object) |
           put(root, "created", cf_json_int(id->created)) | put_str(root, "model", id->model) |
           put_str(root, "system_fingerprint", id->fingerprint);
    return root;
}

/* A token's text as OpenAI gives it: the string and its bytes (a piece
 * that is part of a UTF-8 character is not valid text alone). */
static int put_token(cf_json *obj, cf_str t, double logprob)
{
    cf_json *bytes = cf_json_array();
    int bad = put(obj, "token", cf_json_string(t.ptr, t.len)) |
              put(obj, "logprob", cf_json_float(logprob));
    for (size_t i = 0; bytes && i < t.len; i++)
        bad |= cf_json_push(bytes, cf_json_int((unsigned char)t.ptr[i]));
    return bad | put(obj, "bytes", bytes);
}

/* A probability as a log probability: OpenAI's -9999 for what cannot be drawn. */
static double log_of(float p)
{
    return p > 0 ? log(p) : -9999.0;
}

/* choices[].logprobs: {"content": [...], "refusal": null}, or null. */
static cf_json *logprobs_json(const cf_oai_logprobs *lp, int *bad)
{
    if (!lp)
        return cf_json_null();
    cf_json *o = cf_json_object(), *list = cf_json_array();
    for (int i = 0; list && i < lp->n; i++) {
        const cf_token_prob *t = &lp->probs[i];
        cf_json *e = cf_json_object(), *top = cf_json_array();
        if (e)
            *bad |= put_token(e, lp->text(lp->ud, t->id), log_of(t->p));
        for (int k = 0; top && k < lp->n_top && k < t->n_top; k++) {
            cf_json *alt = cf_json_object();
            if (alt)
                *bad |= put_token(alt, lp->text(lp->ud, t->top_id[k]), log_of(t->top_p[k]));
            *bad |= cf_json_push(top, alt);
        }
        *bad |= put(e, "top_logprobs", top) | cf_json_push(list, e);
    }
    *bad |= put(o, "content", list) | put(o, "refusal", cf_json_null());
    return o;
}

/* The calls of a message, or of a delta (each with its index). */
static cf_json *calls_json(const cf_oai_delta *d, bool delta, int *bad)
{
    cf_json *list = cf_json_array();
    for (int k = 0; list && k < d->n_calls; k++) {
        const cf_tool_call *t = &d->calls[k];
        cf_json *c = cf_json_object(), *fn = cf_json_object();
        if (c && delta)
            *bad |= put(c, "index", cf_json_int(k));
        if (c)
            *bad |= put_str(c, "id", t->id) | put_str(c, "type", "function");
        if (fn)
            *bad |= put_str(fn, "name", t->name) | put_str(fn, "arguments", t->arguments);
        *bad |= put(c, "function", fn) | cf_json_push(list, c);
    }
    *bad |= !list;
    return list;
}

/* A choice with its part (a delta, a message, or text). */
static int put_choice(cf_json *choices, const char *part, const cf_oai_delta *d)
{
    cf_json *c = cf_json_object(), *m = strcmp(part, "text") ? cf_json_object() : NULL;
    int bad = !c || cf_json_push(choices, c);
    if (bad) {
        cf_json_free(m);
        return bad;
    }
    bad |= put(c, "index", cf_json_int(d->index));
    if (!m) {
        bad |= put_str(c, "text", d->content ? d->content : "");
    } else {
        bool whole = !strcmp(part, "message");
        if (d->role || whole)
            bad |= put_str(m, "role", "assistant");
        if (whole && d->n_calls && !(d->content && *d->content))
            bad |= put(m, "content", cf_json_null()); /* as OpenAI answers with calls alone */
        else if (whole || (d->content && *d->content))
            bad |= put_str(m, "content", d->content ? d->content : "");
        if (d->n_calls)
            bad |= put(m, "tool_calls", calls_json(d, !whole, &bad));
        if (d->reasoning && *d->reasoning)
            bad |= put_str(m, "reasoning_content", d->reasoning);
        if (whole || d->role)
            bad |= put(m, "refusal", cf_json_null());
        bad |= put(c, part, m);
    }
    cf_json *lp = logprobs_json(d->logprobs, &bad);
    bad |= put(c, "logprobs", lp) | put_str(c, "finish_reason", d->finish);
    return bad;
}

static char *encode(const cf_oai_reply_id *id, const char *object, const char *part,
                    const cf_oai_delta *d, int n, const cf_oai_usage *usage, size_t *len)
{
    cf_json *choices;
    int bad = 0;
    cf_json *root = reply_root(id, object, &choices, &bad);
    for (int i = 0; root && i < n; i++)
        bad |= put_choice(choices, id->completion ? "text" : part, &d[i]);
    if (root && usage)
        bad |= put_usage(root, usage);
    return dump(root, bad, len);
}

char *cf_oai_chunk_encode(const cf_oai_reply_id *id, const cf_oai_delta *d,
                          const cf_oai_usage *usage, size_t *len)
{
    return encode(id, id->completion ? "text_completion" : "chat.completion.chunk", "delta", d,
                  d != NULL, usage, len);
}

char *cf_oai_response_encode(const cf_oai_reply_id *id, const cf_oai_delta *d, int n,
                             const cf_oai_usage *usage, size_t *len)
{
    return encode(id, id->completion ? "text_completion" : "chat.completion", "message", d, n,
                  usage, len);
}

char *cf_oai_error_encode(const char *message, const char *type, const char *code,
                          const char *param, size_t *len)
{
    cf_json *root = cf_json_object(), *e = cf_json_object();
    int bad = !root || !e;
    if (e)
        bad |= put_str(e, "message", message) | put_str(e, "type", type) |
               put_str(e, "param", param) | put_str(e, "code", code);
    bad |= put(root, "error", e);
    return dump(root, bad, len);
}

static cf_json *model_json(const char *id, long long created, int *bad)
{
    cf_json *m = cf_json_object();
    if (m)
        *bad |= put_str(m, "id", id) | put_str(m, "object", "model") |
                put(m, "created", cf_json_int(created)) | put_str(m, "owned_by", "confab");
    return m;
}

char *cf_oai_model_encode(const char *id, long long created, size_t *len)
{
    int bad = 0;
    return dump(model_json(id, created, &bad), bad, len);
}

char *cf_oai_models_encode(const char *id, long long created, size_t *len)
{
    cf_json *root = cf_json_object(), *list = cf_json_array();
    int bad = !root || !list;
    bad |= cf_json_push(list, model_json(id, created, &bad));
    if (root)
        bad |= put_str(root, "object", "list");
    bad |= put(root, "data", list);
    return dump(root, bad, len);
}
