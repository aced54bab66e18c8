/* What `confab serve` writes for the Responses API (/v1/responses): the
 * response object, whole or as the events of a stream (created, the
 * message and its text part added, text deltas, each done, completed),
 * shaped as OpenAI's so that its SDKs' stream accumulators and the Vercel
 * AI SDK read them.  One message of text per response; a reply's
 * reasoning is not among its output items. */
#include <stdio.h>
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

/* The message's id: the response's with msg_ for resp_. */
static void message_id(const cf_oai_reply_id *id, char *buf, size_t n)
{
    snprintf(buf, n, "msg_%s", strncmp(id->id, "resp_", 5) ? id->id : id->id + 5);
}

static cf_json *text_part(const char *text, int *bad)
{
    cf_json *p = cf_json_object();
    *bad |= put_str(p, "type", "output_text") | put_str(p, "text", text ? text : "") |
            put(p, "annotations", cf_json_array()) | put(p, "logprobs", cf_json_array());
    return p;
}

/* The message item: in progress and empty, or done with its text. */
static cf_json *message(const cf_oai_reply_id *id, const char *text, bool done, int *bad)
{
    char mid[96];
    message_id(id, mid, sizeof mid);
    cf_json *m = cf_json_object(), *content = cf_json_array();
    if (done)
        *bad |= cf_json_push(content, text_part(text, bad));
    *bad |= put_str(m, "id", mid) | put_str(m, "type", "message") |
            put_str(m, "status", done ? "completed" : "in_progress") |
            put_str(m, "role", "assistant") | put(m, "content", content);
    return m;
}

/* The response object; text NULL: still in progress, with no output. */
static cf_json *response(const cf_oai_reply_id *id, const char *text, const char *finish,
                         const cf_oai_usage *u, int *bad)
{
    cf_json *r = cf_json_object(), *out = cf_json_array(), *inc = cf_json_null();
    bool cut = text && finish && !strcmp(finish, "length");
    if (text)
        *bad |= cf_json_push(out, message(id, text, true, bad));
    if (cut) {
        cf_json_free(inc);
        inc = cf_json_object();
        *bad |= put_str(inc, "reason", "max_output_tokens");
    }
    *bad |= put_str(r, "id", id->id) | put_str(r, "object", "response") |
            put(r, "created_at", cf_json_int(id->created)) |
            put_str(r, "status", !text ? "in_progress" : cut ? "incomplete" : "completed") |
            put_str(r, "model", id->model) | put(r, "output", out) |
            put(r, "error", cf_json_null()) |
            put(r, "incomplete_details", inc) | put(r, "tools", cf_json_array()) |
            put_str(r, "tool_choice", "none") | put(r, "parallel_tool_calls", cf_json_bool(false));
    if (u && u->has_usage) {
        cf_json *us = cf_json_object(), *in = cf_json_object(), *o = cf_json_object();
        *bad |= put(in, "cached_tokens", cf_json_int(u->cached_tokens)) |
                put(o, "reasoning_tokens", cf_json_int(0)) |
                put(us, "input_tokens", cf_json_int(u->prompt_tokens)) |
                put(us, "input_tokens_details", in) |
                put(us, "output_tokens", cf_json_int(u->completion_tokens)) |
                put(us, "output_tokens_details", o) |
                put(us, "total_tokens", cf_json_int(u->prompt_tokens + u->completion_tokens)) |
                put(r, "usage", us);
    } else {
        *bad |= put(r, "usage", cf_json_null());
    }
    return r;
}

static char *dump(cf_json *root, int bad, size_t *len)
{
    cf_json_dump_opts o = {.indent = -1, .item_sep = ",", .key_sep = ":"};
    char *text = bad || !root ? NULL : cf_json_dump(root, &o, len);
    cf_json_free(root);
    return text;
}

char *cf_oai_responses_encode(const cf_oai_reply_id *id, const char *text, const char *finish,
                              const cf_oai_usage *usage, size_t *len)
{
    int bad = 0;
    cf_json *r = response(id, text ? text : "", finish, usage, &bad);
    return dump(r, bad, len);
}

static const char *const names[] = {
    [CF_RESP_CREATED] = "response.created",
    [CF_RESP_IN_PROGRESS] = "response.in_progress",
    [CF_RESP_ITEM_ADDED] = "response.output_item.added",
    [CF_RESP_PART_ADDED] = "response.content_part.added",
    [CF_RESP_DELTA] = "response.output_text.delta",
    [CF_RESP_TEXT_DONE] = "response.output_text.done",
    [CF_RESP_PART_DONE] = "response.content_part.done",
    [CF_RESP_ITEM_DONE] = "response.output_item.done",
    [CF_RESP_COMPLETED] = "response.completed",
    [CF_RESP_INCOMPLETE] = "response.incomplete",
};

const char *cf_oai_responses_event_name(cf_oai_resp_event ev)
{
    return names[ev];
}

char *cf_oai_responses_event(const cf_oai_reply_id *id, cf_oai_resp_event ev, int seq,
                             const char *text, const char *finish, const cf_oai_usage *usage,
                             size_t *len)
{
    cf_json *e = cf_json_object();
    int bad = put_str(e, "type", names[ev]) | put(e, "sequence_number", cf_json_int(seq));
    char mid[96];
    message_id(id, mid, sizeof mid);
    switch (ev) {
    case CF_RESP_CREATED:
    case CF_RESP_IN_PROGRESS:
        bad |= put(e, "response", response(id, NULL, NULL, NULL, &bad));
        break;
    case CF_RESP_COMPLETED:
    case CF_RESP_INCOMPLETE:
        bad |= put(e, "response", response(id, text ? text : "", finish, usage, &bad));
        break;
    case CF_RESP_ITEM_ADDED:
    case CF_RESP_ITEM_DONE:
        bad |= put(e, "output_index", cf_json_int(0)) |
               put(e, "item", message(id, text, ev == CF_RESP_ITEM_DONE, &bad));
        break;
    case CF_RESP_PART_ADDED:
    case CF_RESP_PART_DONE:
    case CF_RESP_DELTA:
    case CF_RESP_TEXT_DONE:
        bad |= put_str(e, "item_id", mid) | put(e, "output_index", cf_json_int(0)) |
               put(e, "content_index", cf_json_int(0));
        if (ev == CF_RESP_DELTA)
            bad |= put_str(e, "delta", text ? text : "") | put(e, "logprobs", cf_json_array());
        else if (ev == CF_RESP_TEXT_DONE)
            bad |= put_str(e, "text", text ? text : "") | put(e, "logprobs", cf_json_array());
        else
            bad |= put(e, "part", text_part(ev == CF_RESP_PART_DONE ? text : "", &bad));
        break;
    }
    return dump(e, bad, len);
}
