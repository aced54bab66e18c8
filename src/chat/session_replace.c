/* The conversation replaced by messages given whole, as a server gets
 * them with every request.  The leading messages that agree with the
 * session's own keep their sampled tokens (and turn starts), so the next
 * turn renders them as the model wrote them and the cache keeps that
 * prefix: a client that sends back the reply it got, plus a new message,
 * costs only the new message's prefill. */
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

/* A reply sent back without its reasoning (clients mostly drop it) still
 * is the reply we wrote. */
static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool agrees(const sess_msg *have, const cf_message *m)
{
    return have->pub.role == m->role && !have->pub.cut && !strcmp(have->pub.content, m->content) &&
           (!m->reasoning || (have->pub.reasoning && !strcmp(have->pub.reasoning, m->reasoning))) &&
           same_text(have->pub.tool_calls, m->tool_calls) &&
           same_text(have->pub.tool_call_id, m->tool_call_id);
}

static char *copy_or_null(const char *text, bool *failed)
{
    char *c = text ? sess_utf8_clean(text, strlen(text)) : NULL;
    *failed |= text && !c;
    return c;
}

int sess_msg_from(const cf_message *m, sess_msg *out, cf_err *err)
{
    bool failed = false;
    *out = (sess_msg){.pub = {.role = m->role}, .start = -1};
    out->pub.content = copy_or_null(m->content, &failed);
    out->pub.reasoning = m->role == CF_ROLE_ASSISTANT ? copy_or_null(m->reasoning, &failed) : NULL;
    out->pub.tool_calls = m->role == CF_ROLE_ASSISTANT ? copy_or_null(m->tool_calls, &failed) : NULL;
    out->pub.tool_call_id = m->role == CF_ROLE_TOOL ? copy_or_null(m->tool_call_id, &failed) : NULL;
    if (failed) {
        sess_msg_free(out);
        return cf_fail(err, "out of memory");
    }
    return 0;
}

int cf_session_set_messages(cf_session *s, const cf_message *msgs, int n, cf_err *err)
{
    for (int i = 0; i < n; i++) {
        if (msgs[i].role > CF_ROLE_TOOL || !msgs[i].content)
            return cf_fail_as(err, CF_E_USAGE, "message %d has no role or content", i + 1);
        if (msgs[i].role == CF_ROLE_SYSTEM && i > 0)
            return cf_fail_as(err, CF_E_USAGE, "message %d: a system message can only come first",
                              i + 1);
    }
    sess_close_reply(s);
    int keep = 0;
    while (!s->messages_as_text && keep < n && keep < s->n_msgs && agrees(&s->msgs[keep], &msgs[keep]))
        keep++;
    sess_msg *v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return cf_fail(err, "out of memory");
    for (int i = keep; i < n; i++)
        if (sess_msg_from(&msgs[i], &v[i], err)) {
            for (int k = keep; k < i; k++)
                sess_msg_free(&v[k]);
            free(v);
            return -1;
        }
    if (keep) /* s->msgs may be NULL */
        memcpy(v, s->msgs, (size_t)keep * sizeof *v);
    for (int i = keep; i < s->n_msgs; i++)
        sess_msg_free(&s->msgs[i]);
    free(s->msgs);
    s->msgs = v;
    s->n_msgs = n;
    s->cap_msgs = n + 1;
    /* the cache keeps what the next rendering shares with it */
    s->have_logits = false;
    s->dirty = true;
    return 0;
}
