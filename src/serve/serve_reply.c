/* The worker's part of `confab serve`: one completion on the session.
 *
 * Every request starts from the server's defaults (the settings the
 * model was opened with, a fresh seed) and its own fields on top, so no
 * client's settings leak into another's reply.  Its messages replace the
 * conversation (cf_session_set_messages keeps the cache's prefix), its
 * last message, the user's, opens the reply.  A streamed reply is one
 * chunk per piece, the last with usage and timings (as llama-server sends
 * them), then [DONE].  A client that goes away cuts the reply at once,
 * or stops the evaluation of its prompt within a layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "serve_internal.h"

static int apply_settings(server *sv, const cf_oai_request *rq, cf_err *err)
{
    const char *const *names = cf_session_setting_names();
    for (size_t i = 0; names[i]; i++)
        cf_session_set(sv->s, names[i], sv->defaults[i], NULL);
    for (int i = 0; i < rq->n_settings; i++) {
        cf_err why;
        const char *name = rq->settings[i].name, *msg = why.msg;
        if (cf_session_set(sv->s, name, rq->settings[i].value, &why)) {
            /* the session names the setting its own way: the field's name instead */
            size_t n = strlen(name);
            if (!strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ')
                msg += n + 2;
            return cf_fail_as(err, CF_E_USAGE, "%s: %s", cf_oai_field_of(name), msg);
        }
    }
    static const char *const none[] = {NULL};
    const char *const *stops = rq->stops ? (const char *const *)rq->stops : none;
    return cf_session_set_stops(sv->s, stops, (size_t)rq->n_stops, err);
}

static const char *finish_reason(cf_stop_reason r)
{
    return r == CF_STOP_N_PREDICT || r == CF_STOP_CONTEXT_FULL ? "length" : "stop";
}

/* "data: JSON\n\n"; -1 when the client is gone. */
static int send_event(int fd, char *json, size_t len)
{
    if (!json)
        return 0; /* out of memory: this piece is lost, the stream goes on */
    int rc = http_send(fd, "data: ", 6) || http_send(fd, json, len) || http_send(fd, "\n\n", 2);
    free(json);
    return rc ? -1 : 0;
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
} outcome;

/* Run the reply begun, streaming or gathering it; the session's reply is
 * ended (cut when the client left or the server stops). */
static void generate(server *sv, serve_job *j, const cf_oai_reply_id *id, FILE *content,
                     FILE *reasoning, outcome *o)
{
    const cf_oai_request *rq = &j->req;
    cf_reply_part part;
    int rc;
    bool cut = false;
    while ((rc = cf_session_next_part(sv->s, &part, &o->err)) == CF_NEXT_TOKEN) {
        o->stopped = sv->p->stop && *sv->p->stop;
        if (o->stopped || http_peer_gone(j->fd)) {
            cut = o->gone = true;
            break;
        }
        if (!*part.content && !*part.reasoning)
            continue;
        if (rq->stream) {
            size_t len;
            char *chunk = cf_oai_chunk_encode(id, part.reasoning, part.content, NULL, NULL, &len);
            if (send_event(j->fd, chunk, len)) {
                cut = o->gone = true;
                break;
            }
        } else {
            fputs(part.content, content);
            fputs(part.reasoning, reasoning);
        }
    }
    cf_session_end_reply(sv->s, cut);
    o->failed = rc < 0 && !cut;
}

typedef struct job_watch {
    const server *sv;
    int fd;
} job_watch;

/* The session's cancel check while the prompt is evaluated. */
static bool job_gone(void *ud)
{
    const job_watch *w = ud;
    return (w->sv->p->stop && *w->sv->p->stop) || http_peer_gone(w->fd);
}

void serve_reply(server *sv, serve_job *j)
{
    const cf_oai_request *rq = &j->req;
    cf_session *s = sv->s;
    cf_err err = {.msg = ""};
    const char *path = "/v1/chat/completions";
    if (sv->p->verbose)
        log_settings(sv, rq);
    const cf_message *last = &rq->msgs[rq->n_msgs - 1];
    job_watch watch = {sv, j->fd};
    cf_session_set_cancel(s, job_gone, &watch);
    int rc = apply_settings(sv, rq, &err) ||
             cf_session_set_messages(s, rq->msgs, rq->n_msgs - 1, &err) ||
             cf_session_begin_reply(s, last->content, &err);
    cf_session_set_cancel(s, NULL, NULL);
    if (rc && err.code == CF_E_CANCELLED) {
        serve_log(sv, "POST %s 499 · the client went away (or the server stops) while the "
                      "prompt was evaluated · %.0f ms", path, cf_now_ms() - j->t0);
        return;
    }
    if (rc) {
        bool theirs =
            err.code == CF_E_USAGE || err.code == CF_E_CONTEXT || err.code == CF_E_TEMPLATE;
        serve_log(sv, "POST %s %d · %s", path, theirs ? 400 : 500, err.msg);
        serve_error(j->fd, theirs ? 400 : 500, theirs ? "invalid_request_error" : "server_error",
                    err.msg);
        return;
    }
    int n_prompt;
    cf_session_tokens(s, &n_prompt);
    char rid[48];
    snprintf(rid, sizeof rid, "chatcmpl-confab-%llx-%llu", sv->created, ++sv->n_replies);
    cf_oai_reply_id id = {rid, sv->model_id, (long long)time(NULL)};
    char *ctext = NULL, *rtext = NULL;
    size_t clen = 0, rlen = 0;
    FILE *content = open_memstream(&ctext, &clen), *reasoning = open_memstream(&rtext, &rlen);
    outcome o = {.gone = false};
    if (!content || !reasoning) {
        cf_session_end_reply(s, true);
        serve_error(j->fd, 500, "server_error", "out of memory");
    } else if (rq->stream && http_respond_stream(j->fd, "text/event-stream")) {
        cf_session_end_reply(s, true);
        o.gone = true;
    } else {
        generate(sv, j, &id, content, reasoning, &o);
    }
    if (content)
        fclose(content);
    if (reasoning)
        fclose(reasoning);
    const cf_turn_stats *st = cf_session_last_stats(s);
    cf_oai_usage u = {.has_usage = true, .prompt_tokens = n_prompt,
                      .completion_tokens = st->gen_tokens,
                      .cached_tokens = n_prompt - st->prompt_tokens, .has_timings = true,
                      .prompt_n = st->prompt_tokens, .predicted_n = st->gen_tokens,
                      .prompt_ms = st->prompt_ms, .predicted_ms = st->gen_ms};
    const char *finish = finish_reason(st->stop);
    int status = o.gone ? 499 : o.failed && !rq->stream ? 500 : 200;
    size_t len;
    if (o.gone) {
        /* nothing more to say to a client that left */
    } else if (o.failed && rq->stream) {
        char *e = cf_oai_error_encode(o.err.msg, "server_error", 500, &len);
        send_event(j->fd, e, len);
    } else if (o.failed) {
        serve_error(j->fd, 500, "server_error", o.err.msg);
    } else if (rq->stream) {
        char *end = cf_oai_chunk_encode(&id, NULL, NULL, finish, &u, &len);
        if (!send_event(j->fd, end, len))
            http_send(j->fd, "data: [DONE]\n\n", 14);
    } else if (ctext && rtext) {
        char *body = cf_oai_response_encode(&id, rtext, ctext, finish, &u, &len);
        if (body)
            http_respond(j->fd, 200, "application/json", body, len, NULL);
        else
            serve_error(j->fd, 500, "server_error", "out of memory");
        free(body);
    }
    free(ctext);
    free(rtext);
    serve_log(sv,
              "POST %s %d · %d message%s · prompt %d tok (%d cached) · reply %d tok%s%s · %.0f ms",
              path, status, rq->n_msgs, rq->n_msgs == 1 ? "" : "s", n_prompt, n_prompt - st->prompt_tokens, st->gen_tokens,
              o.stopped ? ", cut: the server stops" : o.gone ? ", cut: the client went away"
              : o.failed ? ", failed: " : "",
              o.failed ? o.err.msg : "", cf_now_ms() - j->t0);
}
