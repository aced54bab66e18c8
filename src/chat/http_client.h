/* An HTTP request whose response is read as it arrives, for a remote
 * engine: the caller pumps it with a short wait and can give up between
 * any two pumps (Ctrl-C closes the stream at once).  TLS, proxies from
 * the environment (http_proxy, https_proxy, no_proxy) and certificates
 * come from libcurl (http_curl.c); a build without it has http_none.c,
 * which says so.
 *
 * A 429 or 5xx answer is retried before any of the body is handed out,
 * after the server's Retry-After or else 1, 2, 4 s (the pumps go on
 * returning HTTP_WAIT meanwhile, so the wait can be cancelled too).  Any
 * other status of 400 or more ends the request with the server's message.
 * No byte from the server for idle_ms (headers, body, keep-alives alike)
 * is a timeout. */
#ifndef CONFAB_CHAT_HTTP_CLIENT_H
#define CONFAB_CHAT_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/common.h"

typedef struct http_opts {
    const char *url;
    const char *api_key;  /* Authorization: Bearer; NULL: none */
    const char *body;     /* POST this JSON; NULL: GET */
    size_t body_len;
    long idle_ms;         /* the longest silence from the server */
    int retries;          /* of 429 and 5xx */
} http_opts;

typedef struct http_call http_call;

enum {
    HTTP_ERROR = -1, /* err says what: a connection, TLS, status or timeout failure */
    HTTP_DONE = 0,   /* the body is complete */
    HTTP_DATA = 1,   /* more of the body in *data, *len */
    HTTP_WAIT = 2,   /* nothing new in wait_ms */
};

/* Whether this build can make requests at all (err says why not). */
bool http_available(cf_err *err);
/* Start a request (nothing blocks). */
int http_start(const http_opts *o, http_call **out, cf_err *err);
/* Wait at most wait_ms for more of the body; *data stays valid until the
 * next call.  After HTTP_ERROR, http_status gives the status (0: none). */
int http_pump(http_call *c, int wait_ms, const char **data, size_t *len, cf_err *err);
int http_status(const http_call *c);
/* The response's Content-Type ("" before the headers). */
const char *http_content_type(const http_call *c);
/* Close the connection (mid-stream too) and free. */
void http_end(http_call *c);

#endif
