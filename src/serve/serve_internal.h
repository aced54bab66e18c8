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
} serve_job;

typedef struct server {
    const cf_serve_params *p;
    cf_session *s;
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

/* The worker's part: answer one completion and close its connection. */
void serve_reply(server *sv, serve_job *j);

#endif
