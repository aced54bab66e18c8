/* A slot's part of `confab serve`: one completion on its session.
 *
 * Every request starts from the server's defaults (the settings the
 * model was opened with, a fresh seed) and its own fields on top, so no
 * client's settings leak into another's reply.  Its messages replace the
 * conversation (cf_session_set_messages keeps the cache's prefix), its
 * last message, the user's, opens the reply.  A streamed reply opens
 * with a chunk naming the role (the SDKs' stream helpers need it), then
 * one chunk per piece, one with the finish reason (and the log
 * probabilities, when asked), the usage and timings in a chunk of their
 * own without choices when stream_options.include_usage asks, then
 * [DONE].  A client that goes (a failed write, a reset) cuts the reply at
 * once, or stops the evaluation of its prompt within a layer; the server stopping ends it with an error event and [DONE]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "serve_internal.h"
#include "serve_tools.h"

static int apply_settings(const server *sv, cf_session *s, const cf_oai_request *rq, cf_err *err)
{
    const char *const *names = cf_session_setting_names();
    for (size_t i = 0; names[i]; i++)
        cf_session_set(s, names[i], sv->defaults[i], NULL);
    for (int i = 0; i < rq->n_settings; i++) {
        cf_err why;
        const char *name = rq->settings[i].name, *msg = why.msg;
        if (cf_session_set(s, name, rq->settings[i].value, &why)) {
            /* the session names the setting its own way: the field's name instead */
            size_t n = strlen(name);
            if (!strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ')
                msg += n + 2;
            return cf_fail_as(err, CF_E_USAGE, "%s: %s", cf_oai_field_of(name), msg);
        }
    }
    static const char *const none[] = {NULL};
    const char *const *stops = rq->stops ? (const char *const *)rq->stops : none;
    cf_err why;
    if (cf_session_set_logit_bias(s, rq->bias, (size_t)rq->n_bias, &why)) {
        const char *msg = why.msg; /* in the field's name */
        if (!strncmp(msg, "logit bias: ", 12))
            msg += 12;
        return cf_fail_as(err, why.code, "logit_bias: %s", msg);
    }
    return cf_session_set_stops(s, stops, (size_t)rq->n_stops, err);
}

/* response_format's grammar: the session takes it over. */
static int apply_format(serve_job *j, cf_err *err)
{
    struct cf_grammar *g = j->req.format;
    j->req.format = NULL;
    return g ? cf_session_set_grammar(j->s, j->req.format_name, j->req.format_key, g, err) : 0;
}

static const char *finish_reason(cf_stop_reason r)
{
    return r == CF_STOP_N_PREDICT || r == CF_STOP_CONTEXT_FULL ? "length" : "stop";
}

/* "data: JSON\n\n" (after "event: NAME\n" when named); -1 when the client
 * is gone. */
static int send_named(int fd, const char *name, char *json, size_t len)
{
    if (!json)
        return 0; /* out of memory: this piece is lost, the stream goes on */
    int rc = (name && (http_send(fd, "event: ", 7) || http_send(fd, name, strlen(name)) ||
                       http_send(fd, "\n", 1))) ||
             http_send(fd, "data: ", 6) || http_send(fd, json, len) || http_send(fd, "\n\n", 2);
    free(json);
    return rc ? -1 : 0;
}

static int send_event(int fd, char *json, size_t len)
{
    return send_named(fd, NULL, json, len);
}

/* One event of a Responses stream, numbered in turn. */
static int send_resp(serve_job *j, const cf_oai_reply_id *id, cf_oai_resp_event ev,
                     const char *text, const char *finish, const cf_oai_usage *u)
{
    size_t len = 0;
    char *json = cf_oai_responses_event(id, ev, j->seq++, text, finish, u, &len);
    return send_named(j->fd, cf_oai_responses_event_name(ev), json, len);
}

static int send_chunk(int fd, const cf_oai_reply_id *id, const cf_oai_delta *d,
                      const cf_oai_usage *u)
{
    size_t len = 0;
    char *json = cf_oai_chunk_encode(id, d, u, &len);
    return send_event(fd, json, len);
}

static void log_settings(const server *sv, const cf_oai_request *rq)
{
    char line[768] = "";
    size_t k = 0;
    for (int i = 0; i < rq->n_settings && k < sizeof line; i++)
        k += (size_t)snprintf(line + k, sizeof line - k, " %s=%s", rq->settings[i].name,
                              rq->settings[i].value);
    serve_log(sv, "  request settings:%s%s; %d stop string%s", line, k ? "" : " none",
              rq->n_stops, rq->n_stops == 1 ? "" : "s");
}

typedef struct outcome {
    bool gone, stopped, failed;
    cf_err err;
    cf_turn_stats first; /* the first choice's: its prefill is the request's */
    int gen_tokens;      /* every choice's */
    double gen_ms;
} outcome;

/* One choice as it came out: its texts, why it ended, its tokens'
 * probabilities (a copy, when asked for). */
typedef struct choice {
    char *content, *reasoning;
    const char *finish;
    cf_token_prob *probs;
    int n_probs;
    serve_calls calls; /* read from the content, when tools are on */
} choice;

static cf_str token_text(void *ud, int32_t id)
{
    return cf_session_token_text(ud, id);
}

/* The ended reply's record into c; its end streamed as choice i. */
static void settle(serve_job *j, const cf_oai_reply_id *id, int i, choice *c,
                   outcome *o)
{
    cf_session *s = j->s;
    const cf_turn_stats *st = cf_session_last_stats(s);
    if (i == 0)
        o->first = *st;
    o->gen_tokens += st->gen_tokens;
    o->gen_ms += st->gen_ms;
    c->finish = c->calls.n_calls ? "tool_calls" : finish_reason(st->stop);
    int n = 0;
    const cf_token_prob *p = cf_session_probs(s, cf_session_n_messages(s) - 1, &n);
    if (j->req.logprobs && n > 0 && (c->probs = malloc((size_t)n * sizeof *p))) {
        memcpy(c->probs, p, (size_t)n * sizeof *p);
        c->n_probs = n;
    }
    if (!j->req.stream || j->api == CF_OAI_RESPONSES || o->gone || o->stopped || o->failed)
        return;
    cf_oai_logprobs lp = {c->probs, c->n_probs, j->req.top_logprobs, token_text, s};
    cf_oai_delta d = {.index = i, .finish = c->finish, .logprobs = j->req.logprobs ? &lp : NULL};
    o->gone = send_chunk(j->fd, id, &d, NULL) != 0;
}

/* Run the reply begun as choice i, streaming and gathering it; the
 * session's reply is ended (cut when the client left or the server
 * stops). */
static void generate(server *sv, serve_job *j, const cf_oai_reply_id *id, int i, choice *c,
                     const serve_tools *tools, outcome *o)
{
    const cf_oai_request *rq = &j->req;
    size_t rlen;
    FILE *reasoning = open_memstream(&c->reasoning, &rlen);
    cf_reply_part part;
    int rc = 0;
    serve_calls_init(&c->calls, tools);
    if (!reasoning) {
        o->failed = true;
        snprintf(o->err.msg, sizeof o->err.msg, "out of memory");
    }
    /* the first chunk of a choice names the role: the SDKs' stream helpers
     * need it; a Responses stream opens the response, its message, its text */
    cf_oai_delta first = {.index = i, .role = true};
    if (!o->failed && rq->stream && j->api == CF_OAI_CHAT)
        o->gone = send_chunk(j->fd, id, &first, NULL) != 0;
    for (int ev = CF_RESP_CREATED; !o->failed && rq->stream && j->api == CF_OAI_RESPONSES &&
                                   ev <= CF_RESP_PART_ADDED && !o->gone; ev++)
        o->gone = send_resp(j, id, (cf_oai_resp_event)ev, NULL, NULL, NULL) != 0;
    while (!o->gone && !o->failed &&
           (rc = cf_session_next_part(j->s, &part, &o->err)) == CF_NEXT_TOKEN) {
        o->stopped = sv->p->stop && *sv->p->stop;
        o->gone = http_peer_gone(j->fd);
        if (o->stopped || o->gone)
            break;
        if (!*part.content && !*part.reasoning)
            continue;
        /* what may be the start of a tool call waits for the end */
        const char *shown = "";
        size_t n_shown = serve_calls_feed(&c->calls, part.content, &shown);
        char *out = strndup(shown, n_shown);
        cf_oai_delta d = {.index = i, .reasoning = part.reasoning, .content = out};
        if (rq->stream && j->api == CF_OAI_RESPONSES && out && *out)
            o->gone = send_resp(j, id, CF_RESP_DELTA, out, NULL, NULL) != 0;
        else if (rq->stream && j->api != CF_OAI_RESPONSES && (*part.reasoning || (out && *out)))
            o->gone = send_chunk(j->fd, id, &d, NULL) != 0;
        free(out);
        fputs(part.reasoning, reasoning);
    }
    bool cut = o->gone || o->stopped || o->failed;
    cf_session_end_reply(j->s, cut);
    o->failed |= !cut && rc < 0;
    const char *rest = "";
    c->content = serve_calls_finish(&c->calls, sv, j, i, &rest);
    if (!c->content) {
        o->failed = true;
        snprintf(o->err.msg, sizeof o->err.msg, "out of memory");
    }
    if (reasoning)
        fclose(reasoning);
    /* the held-back text, and the calls, before the choice's end */
    cf_oai_delta d = {.index = i, .content = rest, .calls = c->calls.calls,
                      .n_calls = c->calls.n_calls};
    if (rq->stream && !cut && !o->failed && j->api == CF_OAI_RESPONSES && *rest)
        o->gone = send_resp(j, id, CF_RESP_DELTA, rest, NULL, NULL) != 0;
    else if (rq->stream && !cut && !o->failed && j->api != CF_OAI_RESPONSES && (*rest || d.n_calls))
        o->gone = send_chunk(j->fd, id, &d, NULL) != 0;
    settle(j, id, i, c, o);
}

/* After the choices: the end, in the stream or as the whole response. */
static void finish(server *sv, serve_job *j, const cf_oai_reply_id *id, const choice *c, int n,
                   const outcome *o, int n_prompt)
{
    const cf_oai_request *rq = &j->req;
    const cf_turn_stats *st = &o->first;
    cf_oai_usage u = {.has_usage = true, .prompt_tokens = n_prompt,
                      .completion_tokens = o->gen_tokens,
                      .cached_tokens = n_prompt - st->prompt_tokens, .has_timings = true,
                      .prompt_n = st->prompt_tokens, .predicted_n = o->gen_tokens,
                      .prompt_ms = st->prompt_ms, .predicted_ms = o->gen_ms};
    size_t len;
    bool responses = j->api == CF_OAI_RESPONSES;
    const char *text = n > 0 && c[0].content ? c[0].content : "";
    const char *why = n > 0 ? c[0].finish : "stop";
    if (o->gone) {
        /* nothing more to say to a client that left */
    } else if (rq->stream && (o->failed || o->stopped)) {
        const char *msg = o->stopped ? "the server is shutting down: the reply was cut"
                                     : o->err.msg;
        char *e = cf_oai_error_encode(msg, "server_error",
                                      o->stopped ? "shutting_down" : "server_error", NULL, &len);
        send_named(j->fd, responses ? "error" : NULL, e, len);
        if (!responses)
            http_send(j->fd, "data: [DONE]\n\n", 14);
    } else if (rq->stream && responses) {
        bool cut = !strcmp(why, "length");
        for (int ev = CF_RESP_TEXT_DONE; ev <= CF_RESP_ITEM_DONE + 1; ev++)
            if (send_resp(j, id, ev <= CF_RESP_ITEM_DONE ? (cf_oai_resp_event)ev
                                 : cut ? CF_RESP_INCOMPLETE : CF_RESP_COMPLETED,
                          text, why, &u))
                break;
    } else if (o->failed || o->stopped) {
        serve_error(sv, j->fd, o->stopped ? 503 : 500, o->stopped ? "shutting_down" : NULL, NULL,
                    o->stopped ? "the server is shutting down: the reply was cut" : o->err.msg);
    } else if (rq->stream) { /* each choice's end went out with it */
        if (!rq->include_usage || !send_chunk(j->fd, id, NULL, &u))
            http_send(j->fd, "data: [DONE]\n\n", 14);
    } else {
        cf_oai_logprobs lp[CF_OAI_MAX_CHOICES];
        cf_oai_delta d[CF_OAI_MAX_CHOICES];
        for (int i = 0; i < n; i++) {
            lp[i] = (cf_oai_logprobs){c[i].probs, c[i].n_probs, rq->top_logprobs, token_text,
                                      j->s};
            d[i] = (cf_oai_delta){.index = i, .reasoning = c[i].reasoning,
                                  .content = c[i].content, .finish = c[i].finish,
                                  .logprobs = rq->logprobs ? &lp[i] : NULL,
                                  .calls = c[i].calls.calls, .n_calls = c[i].calls.n_calls};
        }
        char *body = responses ? cf_oai_responses_encode(id, text, why, &u, &len)
                               : cf_oai_response_encode(id, d, n, &u, &len);
        if (body)
            serve_respond(sv, j->fd, 200, body, len, NULL);
        else
            serve_error(sv, j->fd, 500, NULL, NULL, "out of memory");
        free(body);
    }
    serve_log(sv, "POST %s %d · %d message%s · prompt %d tok (%d cached) · reply %d tok%s%s%s · "
              "%.0f ms",
              j->path, o->gone ? 499 : o->stopped ? 503 : o->failed && !rq->stream ? 500 : 200,
              rq->n_msgs, rq->n_msgs == 1 ? "" : "s", n_prompt, n_prompt - st->prompt_tokens, o->gen_tokens,
              rq->n_choices > 1 ? " in choices" : "",
              o->stopped ? ", cut: the server stops" : o->gone ? ", cut: the client went away"
              : o->failed ? ", failed: " : "",
              o->failed ? o->err.msg : "", cf_now_ms() - j->t0);
}

typedef struct job_watch {
    const server *sv;
    int fd;
    bool probed;
} job_watch;

/* The session's cancel check while the prompt is evaluated.  A client that
 * half-closed may still read the reply (nc -N) or may have closed its
 * socket altogether: an interim 102 tells, since a closed socket answers
 * it with a reset, which the next check sees. */
static bool job_gone(void *ud)
{
    job_watch *w = ud;
    if ((w->sv->p->stop && *w->sv->p->stop) || http_peer_gone(w->fd))
        return true;
    if (!w->probed && http_peer_done_sending(w->fd)) {
        w->probed = true;
        http_send_processing(w->fd);
    }
    return false;
}

void serve_reply(server *sv, serve_job *j)
{
    const cf_oai_request *rq = &j->req;
    cf_session *s = j->s;
    cf_err err = {.msg = ""};
    if (sv->p->verbose)
        log_settings(sv, rq);
    const char *last = rq->msgs ? rq->msgs[rq->n_msgs - 1].content : NULL;
    /* after a tool's result the model goes on with no new user message */
    bool after_tool = rq->msgs && rq->msgs[rq->n_msgs - 1].role == CF_ROLE_TOOL;
    job_watch watch = {sv, j->fd, false};
    serve_tools tools;
    char param[48] = "";
    cf_session_set_cancel(s, job_gone, &watch);
    int rc = apply_settings(sv, s, rq, &err) || apply_format(j, &err) ||
             serve_tools_apply(s, rq, &tools, param, sizeof param, &err) ||
             (j->api == CF_OAI_TEXT ? cf_session_begin_raw(s, rq->prompt, &err)
              : after_tool ? cf_session_set_messages(s, rq->msgs, rq->n_msgs, &err) ||
                                 cf_session_continue(s, &err)
                           : cf_session_set_messages(s, rq->msgs, rq->n_msgs - 1, &err) ||
                                 cf_session_begin_reply(s, last, &err));
    cf_session_set_cancel(s, NULL, NULL);
    if (rc && err.code == CF_E_CANCELLED) {
        serve_log(sv, "POST %s 499 · the client went away (or the server stops) while the "
                      "prompt was evaluated · %.0f ms", j->path, cf_now_ms() - j->t0);
        return;
    }
    if (rc) {
        bool theirs =
            err.code == CF_E_USAGE || err.code == CF_E_CONTEXT || err.code == CF_E_TEMPLATE;
        serve_log(sv, "POST %s %d · %s", j->path, theirs ? 400 : 500, err.msg);
        serve_error(sv, j->fd, theirs ? 400 : 500,
                    err.code == CF_E_CONTEXT ? "context_length_exceeded" : NULL,
                    *param ? param : NULL, err.msg);
        return;
    }
    int n_prompt;
    cf_session_tokens(s, &n_prompt);
    char rid[48];
    static const char *const kinds[] = {"chatcmpl", "cmpl", "resp"};
    j->n_reply = __atomic_add_fetch(&sv->n_replies, 1, __ATOMIC_RELAXED);
    snprintf(rid, sizeof rid, "%s%sconfab-%llx-%llu", kinds[j->api],
             j->api == CF_OAI_RESPONSES ? "_" : "-", sv->created, j->n_reply);
    cf_oai_reply_id id = {rid, sv->model_id, (long long)time(NULL), sv->fingerprint,
                          j->api == CF_OAI_TEXT};
    choice c[CF_OAI_MAX_CHOICES] = {{0}};
    outcome o = {.gone = false};
    int n = 0;
    if (rq->stream && http_respond_stream(j->fd, "text/event-stream", sv->cors)) {
        cf_session_end_reply(s, true);
        o.gone = true;
    }
    /* each further choice draws again after the same prompt: the cache
     * rewinds to the last message's turn, which alone is evaluated again */
    while (!o.gone && !o.stopped && !o.failed && n < rq->n_choices) {
        if (n > 0 && (after_tool ? cf_session_set_messages(s, rq->msgs, rq->n_msgs, &o.err) ||
                                       cf_session_continue(s, &o.err)
                                 : cf_session_undo(s, &o.err) ||
                                       cf_session_begin_reply(s, last, &o.err))) {
            o.failed = true;
            break;
        }
        generate(sv, j, &id, n, &c[n], &tools, &o);
        n++;
    }
    finish(sv, j, &id, c, n, &o, n_prompt);
    for (int i = 0; i < n; i++) {
        free(c[i].content);
        free(c[i].reasoning);
        free(c[i].probs);
        serve_calls_free(&c[i].calls);
    }
}
