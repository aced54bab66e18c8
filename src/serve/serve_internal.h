/* The server's state, shared by the connection loop (serve.c) and the
 * worker that answers completions (serve_reply.c). */
#ifndef CONFAB_SERVE_INTERNAL_H
#define CONFAB_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "confab/openai.h"
#include "confab/serve.h"
#include "confab/session.h"

/* A completion waiting for the worker; the worker owns fd from then on. */
typedef struct serve_job {
    struct serve_job *next;
    int fd;
    cf_oai_request req;
    const char *path; /* the route, for the log */
    cf_oai_api api;   /* the API it came in */
    int seq;          /* a Responses stream's next event number */
    double t0; /* when the request was complete (ms) */
    cf_session *s;    /* the session of the slot that answers it */
    unsigned long long n_reply; /* its number among the server's replies */
} serve_job;

typedef struct server {
    const cf_serve_params *p;
    struct serve_slots *slots; /* slots.c */
    cf_session *s;             /* the first slot's: the defaults, the notes at start */
    const char *model_id;
    long long created;
    char fingerprint[32]; /* system_fingerprint: this build and model */
    char cors[320];       /* the CORS header lines every response carries ("" when off) */
    char **defaults; /* each setting's value at start, in cf_session_setting_names' order */
    unsigned long long n_replies;

    pthread_mutex_t mu; /* the queue, stopping */
    pthread_cond_t cv;
    serve_job *head, *tail;
    int queued;
    bool stopping;
} server;

/* A log line through the caller's function. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void serve_log(const server *sv, const char *fmt, ...);
/* A whole response with the server's own headers (CORS) and extra ones. */
void serve_respond(const server *sv, int fd, int status, const char *body, size_t len,
                   const char *extra_headers);
/* A JSON error response: {"error": {"message", "type", "param", "code"}},
 * its type from the status (invalid_request_error, server_error), code
 * NULL: the status's own ("invalid_api_key" for 401, ...). */
void serve_error(const server *sv, int fd, int status, const char *code, const char *param,
                 const char *message);

/* A slot's part: answer one completion on j->s (the slot's session); the
 * caller closes the connection. */
void serve_reply(server *sv, serve_job *j);
void serve_job_free(serve_job *j);

/* The slots (slots.c): --parallel sessions over the one model, loaded and
 * each given its part of the context; their threads answer the queue's
 * jobs until stopping; freed with the model. */
int serve_slots_open(server *sv, cf_err *err);
int serve_slots_start(server *sv, cf_err *err);
/* Set stopping, wake the slots and wait for them. */
void serve_slots_stop(server *sv);
void serve_slots_free(server *sv);
/* GET /slots: each slot's id, context and state, as JSON. */
char *serve_slots_encode(const server *sv, size_t *len);

#endif
