/* A remote engine's reply: the conversation sent as one request, the
 * answer read as it streams (server-sent events; a server that answers
 * with one JSON body instead is read too), split into reasoning and
 * content (reasoning_content deltas, or a <think> block the server left
 * in the content), and settled into the reply's message at the end.
 *
 * Failures: when nothing of the reply came, the turn is undone as a
 * local failure would leave it (the user's message goes; /regen's and an
 * edit's new branch goes, the old one current again), so sending again is
 * a clean retry; when part of it
 * came, that part stays, marked as cut.  Either way it is one error
 * line and the session goes on. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "remote.h"

enum { PUMP_MS = 50 }; /* the longest a step waits: a stop is seen this soon */

static void reset_reply(sess_remote *r)
{
    http_end(r->call);
    r->call = NULL;
    cf_sse_free(&r->sse);
    cf_sse_init(&r->sse, 0);
    cf_jbuf *bufs[] = {&r->body, &r->raw, &r->reasoning, &r->content, &r->out[0], &r->out[1]};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_jbuf_reset(bufs[i]);
    r->body.limit = 64 << 20;
    r->r_shown = r->c_shown = 0;
    r->json = r->any = r->got_done = r->got_finish = false;
    r->events = 0;
    r->finish[0] = '\0';
    r->usage = (cf_oai_usage){0};
    r->fail.msg[0] = '\0';
    r->t_first = 0;
    split_init(&r->sp, RF_THINK);
}

void remote_reply_free(sess_remote *r)
{
    http_end(r->call);
    r->call = NULL;
    cf_sse_free(&r->sse);
    cf_jbuf *bufs[] = {&r->body, &r->raw, &r->reasoning, &r->content, &r->out[0], &r->out[1]};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cf_jbuf_free(bufs[i]);
}

int remote_open_reply(cf_session *s, double t0, bool forked, cf_err *err)
{
    sess_remote *r = s->remote;
    reset_reply(r);
    size_t len;
    char *body = remote_request(s, true, &len), url[4200];
    if (!body)
        return cf_fail(err, "out of memory");
    snprintf(url, sizeof url, "%s/chat/completions", r->info.endpoint);
    http_opts o = {.url = url, .api_key = r->key, .body = body, .body_len = len,
                   .idle_ms = r->idle_ms, .retries = r->retries};
    int rc = http_start(&o, &r->call, err);
    free(body);
    if (rc || sess_push_msg(s, CF_ROLE_ASSISTANT, "", 0, err)) {
        http_end(r->call);
        r->call = NULL;
        return -1;
    }
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.remote = true;
    s->reply.active = true;
    s->reply.finished = false;
    r->t0 = t0;
    r->forked = forked;
    return 0;
}

/* ---- what the server sends ---------------------------------------------------------- */

static void emit_split(void *ud, split_kind kind, size_t at, size_t len)
{
    sess_remote *r = ud;
    cf_jbuf_put(kind == SPLIT_REASONING ? &r->reasoning : &r->content, r->raw.p + at, len);
}

static void first_text(sess_remote *r)
{
    if (r->any)
        return;
    r->any = true;
    r->t_first = cf_now_ms();
}

static void take_usage(sess_remote *r, const cf_oai_usage *u)
{
    if (u->has_usage) {
        r->usage.has_usage = true;
        r->usage.prompt_tokens = u->prompt_tokens;
        r->usage.completion_tokens = u->completion_tokens;
        r->usage.cached_tokens = u->cached_tokens;
    }
    if (u->has_timings) {
        r->usage.has_timings = true;
        r->usage.prompt_n = u->prompt_n;
        r->usage.predicted_n = u->predicted_n;
        r->usage.prompt_ms = u->prompt_ms;
        r->usage.predicted_ms = u->predicted_ms;
        if (!r->usage.cached_tokens)
            r->usage.cached_tokens = u->cached_tokens;
    }
}

/* One chunk's news; non-zero when it says the reply failed. */
static int take_chunk(sess_remote *r, const cf_oai_chunk *c)
{
    if (c->error)
        return cf_fail(&r->fail, "the server reported an error: %s", c->error);
    r->got_done |= c->done;
    if (c->reasoning && *c->reasoning) {
        first_text(r);
        cf_jbuf_puts(&r->reasoning, c->reasoning);
    }
    if (c->content && *c->content) {
        first_text(r);
        cf_jbuf_puts(&r->raw, c->content);
        if (!r->raw.failed)
            split_feed(&r->sp, r->raw.p, r->raw.n, false, emit_split, r);
    }
    if (c->finish) {
        r->got_finish = true;
        snprintf(r->finish, sizeof r->finish, "%s", c->finish);
    }
    take_usage(r, &c->usage);
    if (r->raw.failed || r->reasoning.failed || r->content.failed)
        return cf_fail(&r->fail, "out of memory reading the reply");
    return 0;
}

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    sess_remote *r = ud;
    r->events++;
    if (!strcmp(event, "error")) { /* llama-server's "error:" lines */
        char msg[256];
        cf_oai_error_text(data, len, msg, sizeof msg);
        return cf_fail(&r->fail, "the server reported an error: %s", msg);
    }
    cf_oai_chunk c;
    if (cf_oai_chunk_decode(data, len, &c, &r->fail))
        return -1;
    int rc = take_chunk(r, &c);
    cf_oai_chunk_free(&c);
    return rc;
}

/* ---- what the caller gets ----------------------------------------------------------- */

/* The text that came since the last step into part. */
static void show(cf_session *s, cf_reply_part *part)
{
    sess_remote *r = s->remote;
    cf_jbuf *from[2] = {&r->reasoning, &r->content};
    size_t *shown[2] = {&r->r_shown, &r->c_shown};
    const char *text[2];
    for (int k = 0; k < 2; k++) {
        cf_jbuf_reset(&r->out[k]);
        cf_jbuf_put(&r->out[k], from[k]->p ? from[k]->p + *shown[k] : "", from[k]->n - *shown[k]);
        *shown[k] = from[k]->n;
        text[k] = r->out[k].failed || !r->out[k].p ? "" : r->out[k].p;
    }
    part->reasoning = text[0];
    part->content = text[1];
    part->thinking = split_in_reasoning(&r->sp) || (r->reasoning.n > 0 && r->content.n == 0);
}

static void fill_stats(cf_session *s, cf_stop_reason stop)
{
    sess_remote *r = s->remote;
    cf_turn_stats *st = &s->stats;
    const cf_oai_usage *u = &r->usage;
    double now = cf_now_ms();
    st->remote = true;
    st->stop = stop;
    st->ttft_ms = r->any ? r->t_first - r->t0 : 0;
    st->prompt_ms = st->ttft_ms;
    st->gen_ms = r->any ? now - r->t_first : 0;
    if (u->has_usage) {
        st->usage = true;
        st->prompt_tokens = u->prompt_tokens;
        st->gen_tokens = u->completion_tokens;
        st->cached_tokens = u->cached_tokens;
    } else if (u->has_timings) { /* its counts, with what it had cached */
        st->usage = true;
        st->prompt_tokens = u->prompt_n + u->cached_tokens;
        st->gen_tokens = u->predicted_n;
        st->cached_tokens = u->cached_tokens;
    }
    if (u->has_timings) {
        st->timings = true;
        st->prompt_ms = u->prompt_ms;
        st->gen_ms = u->predicted_ms;
    }
    if (st->usage)
        r->used = st->prompt_tokens + st->gen_tokens;
}

/* The reply's message as the text stands; the connection closed. */
static void settle(cf_session *s, cf_stop_reason stop, cf_reply_part *part)
{
    sess_remote *r = s->remote;
    http_end(r->call);
    r->call = NULL;
    if (r->raw.p && !r->raw.failed)
        split_feed(&r->sp, r->raw.p, r->raw.n, true, emit_split, r);
    sess_msg *m = &s->msgs[s->n_msgs - 1];
    char *content = sess_utf8_clean(r->content.p ? r->content.p : "", r->content.n);
    char *reasoning = r->reasoning.n ? sess_utf8_clean(r->reasoning.p, r->reasoning.n) : NULL;
    if (content && (reasoning || !r->reasoning.n)) {
        free((char *)m->pub.content);
        free((char *)m->pub.reasoning);
        m->pub.content = content;
        m->pub.reasoning = reasoning;
    } else {
        free(content);
        free(reasoning);
    }
    m->pub.thinking_cut = split_in_reasoning(&r->sp) ||
                          (r->reasoning.n && !r->content.n && stop != CF_STOP_EOG);
    fill_stats(s, stop);
    if (part)
        show(s, part);
    s->reply.finished = true;
    s->dirty = true;
}

/* Why the request failed, with what to look at. */
static int explain(const sess_remote *r, int status, const char *why, cf_err *err)
{
    if (status == 401 || status == 403)
        return cf_fail(err, "the server refused the request: %s (--api-key-env names the "
                       "variable that holds the key)", why);
    if (status == 404)
        return cf_fail(err, "the server answered %s (is the model '%s' right? /show model lists "
                       "the server's models)", why, r->info.model);
    if (status >= 400)
        return cf_fail(err, "the server answered %s", why);
    return cf_fail(err, "%s", why);
}

static int failed(cf_session *s, const char *why_in, int status, cf_err *err)
{
    sess_remote *r = s->remote;
    char why[CF_ERR_MSG_MAX];
    snprintf(why, sizeof why, "%s", why_in);
    if (r->any) {
        settle(s, CF_STOP_USER, NULL);
        s->msgs[s->n_msgs - 1].pub.cut = true;
        cf_err e;
        explain(r, status, why, &e);
        return cf_fail(err, "%s; the partial reply stays, marked as cut", e.msg);
    }
    /* nothing came: the turn is undone (a fork made for it too) */
    http_end(r->call);
    r->call = NULL;
    s->reply.finished = true;
    if (r->forked) {
        sess_unfork(s);
    } else {
        sess_pop_msg(s);
        sess_pop_msg(s);
    }
    memset(&s->stats, 0, sizeof s->stats);
    return explain(r, status, why, err);
}

static bool is_json(const char *type)
{
    return !strncasecmp(type, "application/json", 16);
}

int remote_next_part(cf_session *s, cf_reply_part *part, cf_err *err)
{
    sess_remote *r = s->remote;
    const char *data;
    size_t len;
    bool ended = false;
    int rc = http_pump(r->call, PUMP_MS, &data, &len, err);
    if (rc == HTTP_ERROR)
        return failed(s, err->msg, http_status(r->call), err);
    if (rc == HTTP_DATA) {
        r->json = is_json(http_content_type(r->call));
        if (r->json)
            cf_jbuf_put(&r->body, data, len);
        else if (cf_sse_feed(&r->sse, data, len, on_event, r, &r->fail) < 0 && !r->fail.msg[0])
            cf_fail(&r->fail, "the server's stream is malformed");
        if (r->body.failed)
            cf_fail(&r->fail, "the server's answer is larger than 64 MiB");
    } else if (rc == HTTP_DONE) {
        ended = true;
        if (r->json) {
            cf_oai_chunk c;
            if (cf_oai_chunk_decode(r->body.p ? r->body.p : "", r->body.n, &c, &r->fail) == 0) {
                take_chunk(r, &c);
                cf_oai_chunk_free(&c);
                r->got_done = true;
            }
        } else {
            cf_sse_end(&r->sse, on_event, r, &r->fail);
        }
        if (!r->fail.msg[0] && !r->json && !r->events)
            cf_fail(&r->fail, "the server did not answer with an event stream (Content-Type: %s)",
                    *http_content_type(r->call) ? http_content_type(r->call) : "none");
        else if (!r->fail.msg[0] && !r->got_done && !r->got_finish)
            cf_fail(&r->fail, "the stream ended before the reply did");
    }
    if (r->fail.msg[0])
        return failed(s, r->fail.msg, 0, err);
    if (!r->got_done && !ended) {
        show(s, part);
        return CF_NEXT_TOKEN;
    }
    settle(s, !strcmp(r->finish, "length") ? CF_STOP_N_PREDICT : CF_STOP_EOG, part);
    return *part->content || *part->reasoning ? CF_NEXT_TOKEN : CF_NEXT_DONE;
}

void remote_reply_now(const cf_session *s, sess_msg *m)
{
    const sess_remote *r = s->remote;
    m->pub.content = sess_utf8_clean(r->content.p ? r->content.p : "", r->content.n);
    m->pub.reasoning = r->reasoning.n ? sess_utf8_clean(r->reasoning.p, r->reasoning.n) : NULL;
}

void remote_end_reply(cf_session *s, bool cut)
{
    if (s->reply.finished)
        return;
    settle(s, CF_STOP_USER, NULL);
    s->msgs[s->n_msgs - 1].pub.cut = cut;
}
