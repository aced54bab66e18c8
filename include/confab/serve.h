/* serve: confab's engine behind the OpenAI chat completions protocol, so
 * one machine's loaded model answers several terminals (confab
 * --endpoint, or any client of the protocol).
 *
 *   POST /v1/chat/completions   streamed (server-sent events) or not
 *   GET  /v1/models             the one model (and /v1/models/{id})
 *   GET  /health                {"status": "ok"}
 *   GET  /slots                 each slot's state
 * (HEAD for each GET, OPTIONS preflights; the other OpenAI paths get a
 * "not supported by confab serve" error.)
 *
 * One model and n_parallel slots, each a session: requests are answered
 * in the order they arrived by the first free slot, each replacing its
 * session's conversation with its messages, so the cache keeps the prefix
 * the slot's last conversation shares with the new one (a client
 * continuing its chat prefills only its new message).  The slots'
 * replies decode together, one pass over the weights for a token of each,
 * and a reply is the same whatever the others do.  Plain HTTP/1.1 over
 * POSIX sockets, one request per
 * connection; bad requests get a 4xx JSON error, a request without the key
 * (when one is set) 401.
 *
 * This is a front end beside the terminal one (src/ui), not below it: it
 * drives a session (src/chat) over sockets and knows no terminal. */
#ifndef CONFAB_SERVE_H
#define CONFAB_SERVE_H

#include <signal.h>
#include <stdbool.h>

#include "confab/common.h"
#include "confab/session.h"

#define CF_SERVE_MAX_PARALLEL 64

typedef struct cf_serve_params {
    cf_session_params session; /* the model and its context */
    const char *host;          /* NULL: 127.0.0.1 */
    int port;                  /* 0: any free port (see ready) */
    const char *api_key;       /* NULL: none asked for */
    const char *model_id;      /* the model's name in the protocol; NULL: the file's base name */
    bool verbose;              /* log each request's settings too */
    /* Slots answering at once (llama-server's --parallel), each with
     * session.n_ctx / n_parallel of the context; their replies' tokens
     * are decoded together.  0: 1; at most CF_SERVE_MAX_PARALLEL. */
    int n_parallel;
    /* The origin browsers may call from (Access-Control-Allow-Origin, and
     * preflights answered): NULL: "*" when listening on a loopback address
     * only, none otherwise; "": none. */
    const char *cors;
    /* Set (by a signal handler) to stop: the server finishes the reply
     * under way, refuses what waits, and returns. */
    const volatile sig_atomic_t *stop;
    /* One line per request and event (no newline), from any thread. */
    void (*log)(void *ud, const char *line);
    /* Listening now, on this address and port. */
    void (*ready)(void *ud, const char *host, int port);
    void *ud;
} cf_serve_params;

/* Load the model, listen, answer until *stop; 0, or -1 with err (the
 * model, the address) when it could not start. */
int cf_serve_run(const cf_serve_params *p, cf_err *err);

#endif
