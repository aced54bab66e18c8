/* The HTTP/1.1 that `confab serve` speaks: a request's head parsed from
 * the bytes read so far, and responses written whole or as a stream that
 * the connection's close ends.  Small on purpose: one request per
 * connection, bodies only with Content-Length, limits on every size. */
#ifndef CONFAB_SERVE_HTTP_H
#define CONFAB_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

enum { HTTP_HEAD_MAX = 16 << 10, HTTP_BODY_MAX = 8 << 20 };

typedef struct http_req {
    char method[16];
    char path[256];         /* without the query */
    const char *auth;       /* the Authorization header in the buffer parsed (NULL: none) */
    size_t auth_len;
    char cors_headers[256]; /* Access-Control-Request-Headers (a preflight's) */
    size_t head_len;        /* bytes up to and with the blank line */
    size_t body_len;        /* Content-Length */
    bool expect_continue;   /* Expect: 100-continue */
} http_req;

/* Parse the head in buf[0, len): 0 when it is not complete yet, its
 * length when it is, -1 when it is bad (*status and *why say how). */
int http_parse_head(const char *buf, size_t len, http_req *r, int *status, const char **why);

/* Write all of p (no SIGPIPE); -1 when the peer is gone or too slow. */
int http_send(int fd, const char *p, size_t n);
/* A whole response, closing the connection after it; body NULL: the head
 * alone (as HEAD asks), with len as its Content-Length. */
int http_respond(int fd, int status, const char *type, const char *body, size_t len,
                 const char *extra_headers);
/* The head of a response whose body runs until the connection closes. */
int http_respond_stream(int fd, const char *type, const char *extra_headers);
/* "Bad Request" for 400, ... */
const char *http_reason(int status);
/* Whether the peer is gone: the connection reset or shut both ways (a
 * client that only closed its sending half still reads the reply). */
bool http_peer_gone(int fd);
/* Whether the peer has sent all it will (a FIN: a half-close, or a close
 * http_peer_gone does not see yet). */
bool http_peer_done_sending(int fd);
/* An interim "102 Processing" response (a probe: a closed peer resets). */
void http_send_processing(int fd);
/* Read and drop what the peer sent that is there now, so that closing
 * after an early answer sends it, not a reset. */
void http_drain(int fd);

#endif
