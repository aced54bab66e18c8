/* What `confab serve` writes: stream chunks, whole responses, errors and
 * the model list, shaped as llama-server shapes them (usage and timings
 * ride on the last chunk), so clients of either read both. */
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

/* The fields every reply has, and choices[0] to fill in (NULL when
 * memory runs out). */
static cf_json *reply_root(const cf_oai_reply_id *id, const char *object, cf_json **choice,
                           int *bad)
{
    cf_json *root = cf_json_object(), *list = cf_json_array(), *c = cf_json_object();
    if (!root || !list || !c) {
        cf_json_free(root);
        cf_json_free(list);
        cf_json_free(c);
        return NULL;
    }
    if (cf_json_push(list, c)) {
        cf_json_free(list);
        cf_json_free(root);
        return NULL;
    }
    if (put(root, "choices", list)) {
        cf_json_free(root);
        return NULL;
    }
    *choice = c;
    *bad = put_str(root, "id", id->id) | put_str(root, "object", object) |
           put(root, "created", cf_json_int(id->created)) | put_str(root, "model", id->model) |
           put(c, "index", cf_json_int(0));
    return root;
}

static int put_parts(cf_json *obj, const char *reasoning, const char *content)
{
    int bad = 0;
    if (reasoning && *reasoning)
        bad |= put_str(obj, "reasoning_content", reasoning);
    if (content && *content)
        bad |= put_str(obj, "content", content);
    return bad;
}

char *cf_oai_chunk_encode(const cf_oai_reply_id *id, const char *reasoning, const char *content,
                          const char *finish, const cf_oai_usage *usage, size_t *len)
{
    cf_json *choice, *delta = cf_json_object();
    int bad = 0;
    cf_json *root = reply_root(id, "chat.completion.chunk", &choice, &bad);
    if (root && delta)
        bad |= put_parts(delta, reasoning, content);
    if (root) {
        bad |= put(choice, "delta", delta) | put_str(choice, "finish_reason", finish);
        if (usage)
            bad |= put_usage(root, usage);
    } else {
        cf_json_free(delta);
    }
    return dump(root, bad, len);
}

char *cf_oai_response_encode(const cf_oai_reply_id *id, const char *reasoning, const char *content,
                             const char *finish, const cf_oai_usage *usage, size_t *len)
{
    cf_json *choice, *msg = cf_json_object();
    int bad = 0;
    cf_json *root = reply_root(id, "chat.completion", &choice, &bad);
    if (root && msg) {
        bad |= put_str(msg, "role", "assistant") | put_str(msg, "content", content ? content : "");
        if (reasoning && *reasoning)
            bad |= put_str(msg, "reasoning_content", reasoning);
    }
    if (root) {
        bad |= put(choice, "message", msg) | put_str(choice, "finish_reason", finish);
        if (usage)
            bad |= put_usage(root, usage);
    } else {
        cf_json_free(msg);
    }
    return dump(root, bad, len);
}

char *cf_oai_error_encode(const char *message, const char *type, int status, size_t *len)
{
    cf_json *root = cf_json_object(), *e = cf_json_object();
    int bad = !root || !e;
    if (e)
        bad |= put_str(e, "message", message) | put_str(e, "type", type) |
               put(e, "code", cf_json_int(status));
    bad |= put(root, "error", e);
    return dump(root, bad, len);
}

char *cf_oai_models_encode(const char *id, long long created, size_t *len)
{
    cf_json *root = cf_json_object(), *list = cf_json_array(), *m = cf_json_object();
    int bad = !root || !list || !m;
    if (m)
        bad |= put_str(m, "id", id) | put_str(m, "object", "model") |
               put(m, "created", cf_json_int(created)) | put_str(m, "owned_by", "confab");
    bad |= cf_json_push(list, m);
    if (root)
        bad |= put_str(root, "object", "list");
    bad |= put(root, "data", list);
    return dump(root, bad, len);
}
