/* Tools in a session: the list the template renders, the syntax it
 * teaches, messages added without a reply (a tool's result) and the reply
 * that follows one.  The calls themselves are read from a reply's content
 * by the caller (confab/tools.h): a reply with calls stays in the
 * conversation as the model wrote it, so the cache keeps it. */
#include <stdlib.h>
#include <string.h>

#include "confab/tools.h"
#include "json.h"
#include "session_internal.h"

int cf_session_set_tools(cf_session *s, const char *tools_json, cf_err *err)
{
    char *copy = NULL;
    if (tools_json) {
        cf_json *v;
        cf_err why;
        if (cf_json_parse(tools_json, strlen(tools_json), NULL, &v, &why))
            return cf_fail_as(err, CF_E_USAGE, "tools: %s", why.msg);
        bool list = v->type == CF_JSON_ARRAY;
        cf_json_free(v);
        if (!list)
            return cf_fail_as(err, CF_E_USAGE, "tools: a JSON list of tools is expected");
        if (!(copy = strdup(tools_json)))
            return cf_fail(err, "out of memory");
    }
    free(s->tools);
    s->tools = copy;
    s->tool_fmt = cf_session_tool_format(s);
    s->have_logits = false; /* the next rendering differs from where it shows them */
    return 0;
}

int cf_session_tool_format(const cf_session *s)
{
    const char *src = s->tmpl ? cf_chat_template_source(s->tmpl) : NULL;
    return src ? cf_tools_detect(src, strlen(src)) : CF_TOOLS_NONE;
}

int cf_session_add_message(cf_session *s, const cf_message *m, cf_err *err)
{
    if (m->role > CF_ROLE_TOOL || !m->content)
        return cf_fail_as(err, CF_E_USAGE, "a message needs a role and a content");
    if (m->role == CF_ROLE_SYSTEM && s->n_msgs > 0)
        return cf_fail_as(err, CF_E_USAGE, "a system message can only come first");
    sess_close_reply(s);
    sess_msg v;
    if (sess_msg_from(m, &v, err))
        return -1;
    if (sess_push_msg(s, m->role, "", 0, err)) {
        sess_msg_free(&v);
        return -1;
    }
    sess_msg_free(&s->msgs[s->n_msgs - 1]);
    s->msgs[s->n_msgs - 1] = v;
    s->have_logits = false;
    return 0;
}

int cf_session_continue(cf_session *s, cf_err *err)
{
    double t0 = cf_now_ms();
    sess_close_reply(s);
    if (s->n_msgs == 0 || s->msgs[s->n_msgs - 1].pub.role == CF_ROLE_ASSISTANT ||
        s->msgs[s->n_msgs - 1].pub.role == CF_ROLE_SYSTEM)
        return cf_fail_as(err, CF_E_USAGE, "nothing to reply to: the conversation does not end "
                                           "with a user's message or a tool's result");
    const cf_turn_stats stats = s->stats;
    const bool dirty = s->dirty;
    if (s->eng->open_reply(s, t0, false, err)) {
        if (!s->stats.shifted_tokens) {
            s->stats = stats;
            s->dirty = dirty;
        }
        return -1;
    }
    return 0;
}

const char *cf_session_reply_text(const cf_session *s, size_t *len)
{
    *len = s->remote ? 0 : s->reply.len;
    return s->remote || !s->reply.text ? NULL : s->reply.text;
}

char *sess_template_tool_calls(const char *json)
{
    cf_json *v;
    if (cf_json_parse(json, strlen(json), NULL, &v, NULL))
        return NULL;
    for (size_t i = 0; v->type == CF_JSON_ARRAY && i < v->n; i++) {
        cf_json *fn = (cf_json *)cf_json_get(v->items[i], "function");
        const cf_json *args = fn ? cf_json_get(fn, "arguments") : NULL;
        cf_json *obj;
        if (args && args->type == CF_JSON_STRING &&
            cf_json_parse(args->str, args->len, NULL, &obj, NULL) == 0)
            cf_json_set(fn, "arguments", 9, obj);
    }
    char *text = cf_json_dump(v, &(cf_json_dump_opts){.indent = -1}, NULL);
    cf_json_free(v);
    return text;
}
