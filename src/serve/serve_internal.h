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
    double t0; /* when the request was complete (ms) */
} serve_job;

typedef struct server {
    const cf_serve_params *p;
    cf_session *s;
    const char *model_id;
    long long created;
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
/* A JSON error response: {"error": {"message", "type", "code"}}. */
void serve_error(int fd, int status, const char *type, const char *message);

/* The worker's part: answer one completion and close its connection. */
void serve_reply(server *sv, serve_job *j);

#endif
