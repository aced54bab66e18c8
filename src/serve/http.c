/* Request heads and responses (see http.h). */
#include "http.h"
#include "confab/platform.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

const char *http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

static int bad(int *status, const char **why, int code, const char *text)
{
    *status = code;
    *why = text;
    return -1;
}

/* A header line name: value (trimmed) into r. */
static int header(const char *line, size_t len, http_req *r, bool *has_length, int *status,
                  const char **why)
{
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line)
        return bad(status, why, 400, "a malformed header line");
    size_t nlen = (size_t)(colon - line);
    const char *v = colon + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
#define IS(name) (nlen == sizeof name - 1 && strncasecmp(line, name, nlen) == 0)
    if (IS("Content-Length")) {
        size_t n = 0;
        if (vlen == 0 || vlen > 12)
            return bad(status, why, 400, "a bad Content-Length");
        for (size_t i = 0; i < vlen; i++) {
            if (v[i] < '0' || v[i] > '9')
                return bad(status, why, 400, "a bad Content-Length");
            n = n * 10 + (size_t)(v[i] - '0');
        }
        if (*has_length && n != r->body_len)
            return bad(status, why, 400, "two different Content-Length headers");
        if (n > HTTP_BODY_MAX)
            return bad(status, why, 413, "the body is larger than 8 MiB");
        r->body_len = n;
        *has_length = true;
    } else if (IS("Transfer-Encoding")) {
        return bad(status, why, 501, "request bodies must come with Content-Length, not "
                                     "Transfer-Encoding");
    } else if (IS("Authorization")) {
        /* kept whole: a long key cut to fit would compare as its prefix */
        r->auth = v;
        r->auth_len = vlen;
    } else if (IS("Access-Control-Request-Headers")) {
        /* echoed in the preflight's answer: header names and commas only */
        bool names = vlen < sizeof r->cors_headers;
        for (size_t i = 0; names && i < vlen; i++)
            names = isalnum((unsigned char)v[i]) || strchr("-_, ", v[i]);
        if (names) {
            memcpy(r->cors_headers, v, vlen);
            r->cors_headers[vlen] = '\0';
        }
    } else if (IS("Expect")) {
        r->expect_continue = vlen == 12 && strncasecmp(v, "100-continue", 12) == 0;
    }
#undef IS
    return 0;
}

static int request_line(const char *line, size_t len, http_req *r, int *status, const char **why)
{
    const char *sp1 = memchr(line, ' ', len), *end = line + len;
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1)
        return bad(status, why, 400, "a malformed request line");
    size_t mlen = (size_t)(sp1 - line), tlen = (size_t)(sp2 - sp1 - 1);
    const char *version = sp2 + 1;
    size_t vlen = (size_t)(end - version);
    if (vlen != 8 || memcmp(version, "HTTP/1.", 7) || (version[7] != '0' && version[7] != '1'))
        return bad(status, why, 505, "only HTTP/1.0 and HTTP/1.1 are spoken here");
    if (mlen >= sizeof r->method)
        return bad(status, why, 405, "an unknown method");
    const char *target = sp1 + 1, *q = memchr(target, '?', tlen);
    if (q)
        tlen = (size_t)(q - target);
    if (tlen >= sizeof r->path || target[0] != '/')
        return bad(status, why, 404, "no such path");
    memcpy(r->method, line, mlen);
    r->method[mlen] = '\0';
    memcpy(r->path, target, tlen);
    r->path[tlen] = '\0';
    return 0;
}

int http_parse_head(const char *buf, size_t len, http_req *r, int *status, const char **why)
{
    /* empty lines before the request line are ignored (RFC 9112 2.2) */
    size_t skip = 0;
    while (skip < len && skip < 64 && (buf[skip] == '\r' || buf[skip] == '\n'))
        skip++;
    /* the head ends at a blank line (CRLF CRLF; bare LFs are taken too) */
    size_t end = 0;
    for (size_t i = skip; i < len && !end; i++)
        if (buf[i] == '\n' && ((i >= 1 && buf[i - 1] == '\n') ||
                               (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')))
            end = i + 1;
    if (!end)
        return len > HTTP_HEAD_MAX ? bad(status, why, 431, "the request head is larger than 16 KiB")
                                   : 0;
    if (end > HTTP_HEAD_MAX)
        return bad(status, why, 431, "the request head is larger than 16 KiB");
    memset(r, 0, sizeof *r);
    bool first = true, has_length = false;
    for (size_t at = skip; at < end;) {
        const char *nl = memchr(buf + at, '\n', end - at);
        size_t llen = (size_t)(nl - (buf + at));
        if (llen && buf[at + llen - 1] == '\r')
            llen--;
        if (llen == 0)
            break;
        if (memchr(buf + at, '\0', llen))
            return bad(status, why, 400, "a NUL byte in the request head");
        int rc = first ? request_line(buf + at, llen, r, status, why)
                       : header(buf + at, llen, r, &has_length, status, why);
        if (rc)
            return rc;
        first = false;
        at = (size_t)(nl - buf) + 1;
    }
    if (first)
        return bad(status, why, 400, "an empty request");
    if (!strcmp(r->method, "POST") && !has_length)
        return bad(status, why, 411, "a POST needs a Content-Length");
    r->head_len = end;
    return (int)end;
}

int http_send(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = cf_send(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int http_respond(int fd, int status, const char *type, const char *body, size_t len,
                 const char *extra_headers)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n%s\r\n",
                     status, http_reason(status), type, len, extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    return http_send(fd, head, (size_t)n) || (body && http_send(fd, body, len)) ? -1 : 0;
}

int http_respond_stream(int fd, const char *type, const char *extra_headers)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-cache\r\n"
                     "Connection: close\r\n%s\r\n", type, extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    return http_send(fd, head, (size_t)n);
}

bool http_peer_gone(int fd)
{
    /* A half-close (FIN: the client is done sending, as nc -N, socat and
     * some proxies do after the request) still reads the reply; only a
     * reset, or both ends shut, means nobody is there. */
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, 0) <= 0)
        return false;
    if (pf.revents & (POLLHUP | POLLERR | POLLNVAL))
        return true;
    char c;
    return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == ECONNRESET;
}

bool http_peer_done_sending(int fd)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    char c;
    return poll(&pf, 1, 0) > 0 && recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

void http_send_processing(int fd)
{
    static const char line[] = "HTTP/1.1 102 Processing\r\n\r\n";
    (void)!cf_send(fd, line, sizeof line - 1);
}

void http_drain(int fd)
{
    char buf[4096];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
}
