/* http_client.h over libcurl's multi interface: each pump runs the
 * transfer for at most its wait, so a caller that stops pumping (the user
 * pressed Ctrl-C) closes the connection at once instead of after the
 * next byte. */
#include <curl/curl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confab/openai.h"
#include "http_client.h"
#include "json.h"

enum { ERR_BODY_MAX = 64 << 10, RETRY_MAX_S = 60 };

struct http_call {
    CURLM *multi;
    CURL *easy;
    struct curl_slist *headers;
    char errbuf[CURL_ERROR_SIZE];
    char *url, *body, *key;
    size_t body_len;
    long idle_ms;
    int retries, tries;
    cf_jbuf buf;          /* body bytes; those from `taken` on not handed out yet */
    size_t taken;
    cf_jbuf ebody;        /* the body of an error status, its start */
    long status;
    char type[128];
    double last_byte;     /* ms: the server's last sign of life */
    double retry_at;      /* ms: when to try again; 0: not waiting */
    bool delivered;       /* some of the body was handed out: no retry now */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

bool http_available(cf_err *err)
{
    (void)err;
    return true;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    http_call *c = ud;
    n *= size;
    c->last_byte = cf_now_ms();
    if (!c->status)
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
    if (c->status >= 400) { /* kept for the message, up to a point */
        size_t room = c->ebody.n < ERR_BODY_MAX ? ERR_BODY_MAX - c->ebody.n : 0;
        cf_jbuf_put(&c->ebody, p, n < room ? n : room);
        return n;
    }
    if (c->taken == c->buf.n) { /* everything handed out: start the buffer over */
        cf_jbuf_reset(&c->buf);
        c->taken = 0;
    }
    cf_jbuf_put(&c->buf, p, n);
    return c->buf.failed ? 0 : n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    http_call *c = ud;
    n *= size;
    c->last_byte = cf_now_ms();
    /* each response's head (a "100 Continue" has one too) starts with its status line */
    if (n >= 5 && !strncmp(p, "HTTP/", 5)) {
        c->status = 0;
        c->type[0] = '\0';
    } else if (n > 13 && !strncasecmp(p, "Content-Type:", 13)) {
        size_t k = 13;
        while (k < n && p[k] == ' ')
            k++;
        size_t m = n - k;
        while (m && (p[k + m - 1] == '\r' || p[k + m - 1] == '\n'))
            m--;
        if (m >= sizeof c->type)
            m = sizeof c->type - 1;
        memcpy(c->type, p + k, m);
        c->type[m] = '\0';
    }
    return n;
}

/* A fresh transfer of the same request (the first, or a retry). */
static int begin(http_call *c, cf_err *err)
{
    if (c->easy) {
        curl_multi_remove_handle(c->multi, c->easy);
        curl_easy_cleanup(c->easy);
    }
    CURL *e = c->easy = curl_easy_init();
    if (!e)
        return cf_fail(err, "cannot start an HTTP request (libcurl)");
    c->status = 0;
    cf_jbuf_reset(&c->buf);
    cf_jbuf_reset(&c->ebody);
    c->taken = 0;
    c->type[0] = c->errbuf[0] = '\0';
    c->last_byte = cf_now_ms();
    c->tries++;
    curl_easy_setopt(e, CURLOPT_URL, c->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "confab");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
    /* a redirect must not carry the key elsewhere */
    curl_easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->idle_ms < 30000 ? c->idle_ms : 30000L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* a stream comes as it is anyway */
    if (c->body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
    }
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK)
        return cf_fail(err, "cannot start an HTTP request (libcurl)");
    return 0;
}

int http_start(const http_opts *o, http_call **out, cf_err *err)
{
    *out = NULL;
    pthread_once(&once, global_init);
    if (global_rc != CURLE_OK)
        return cf_fail(err, "libcurl failed to start: %s", curl_easy_strerror(global_rc));
    http_call *c = calloc(1, sizeof *c);
    if (!c)
        return cf_fail(err, "out of memory");
    c->url = strdup(o->url);
    c->key = o->api_key ? strdup(o->api_key) : NULL;
    c->body = o->body ? malloc(o->body_len + 1) : NULL;
    c->body_len = o->body_len;
    c->idle_ms = o->idle_ms > 0 ? o->idle_ms : 300000;
    c->retries = o->retries;
    c->multi = curl_multi_init();
    if (c->body)
        memcpy(c->body, o->body, o->body_len + 1);
    struct curl_slist *h = NULL;
    bool bad = !c->url || (o->api_key && !c->key) || (o->body && !c->body) || !c->multi;
    if (!bad && o->body)
        bad = !(h = curl_slist_append(h, "Content-Type: application/json")) ||
              /* no "100 Continue" round trip before the body */
              !(h = curl_slist_append(h, "Expect:"));
    if (!bad && c->key) {
        size_t n = strlen(c->key) + 32;
        char *line = malloc(n);
        if (line)
            snprintf(line, n, "Authorization: Bearer %s", c->key);
        struct curl_slist *h2 = line ? curl_slist_append(h, line) : NULL;
        free(line);
        if (h2)
            h = h2;
        bad = !h2;
    }
    c->headers = h;
    if (bad) {
        http_end(c);
        return cf_fail(err, "out of memory");
    }
    if (begin(c, err)) {
        http_end(c);
        return -1;
    }
    *out = c;
    return 0;
}

int http_status(const http_call *c)
{
    return c ? (int)c->status : 0;
}

const char *http_content_type(const http_call *c)
{
    return c ? c->type : "";
}

void http_end(http_call *c)
{
    if (!c)
        return;
    if (c->easy) {
        curl_multi_remove_handle(c->multi, c->easy);
        curl_easy_cleanup(c->easy);
    }
    if (c->multi)
        curl_multi_cleanup(c->multi);
    curl_slist_free_all(c->headers);
    /* the key leaves no copy behind in freed memory */
    if (c->key)
        memset(c->key, 0, strlen(c->key));
    free(c->key);
    free(c->url);
    free(c->body);
    cf_jbuf_free(&c->buf);
    cf_jbuf_free(&c->ebody);
    free(c);
}

/* ---- how transfers end ------------------------------------------------------------ */

static const char *reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "error";
    }
}

/* One line for a transfer that failed below HTTP. */
static int transfer_error(const http_call *c, CURLcode rc, cf_err *err)
{
    const char *detail = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return cf_fail(err, "cannot find the server of %s (DNS: %s)", c->url, detail);
    case CURLE_COULDNT_CONNECT:
        return cf_fail(err, "cannot connect to %s (%s)", c->url, detail);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_USE_SSL_FAILED:
        return cf_fail(err, "TLS failed with %s (%s)", c->url, detail);
    case CURLE_OPERATION_TIMEDOUT:
        return cf_fail(err, "cannot connect to %s: no answer in %.0f s", c->url,
                       (double)(c->idle_ms < 30000 ? c->idle_ms : 30000) / 1e3);
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return cf_fail_as(err, CF_E_USAGE, "%s is not a URL this confab can reach (%s)", c->url,
                          detail);
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
        return cf_fail(err, "the connection to %s broke (%s)", c->url, detail);
    default:
        return cf_fail(err, "the request to %s failed (%s)", c->url, detail);
    }
}

/* The status line's error, with the server's own message. */
static int status_error(const http_call *c, cf_err *err)
{
    char msg[256] = "";
    if (c->ebody.p)
        cf_oai_error_text(c->ebody.p, c->ebody.n, msg, sizeof msg);
    return cf_fail(err, "%ld %s%s%s", c->status, reason(c->status), msg[0] ? ": " : "", msg);
}

/* Whether to try again, and when: the server's Retry-After (at most a
 * minute), else 1, 2, 4 ... s. */
static bool schedule_retry(http_call *c)
{
    bool retryable = c->status == 429 || c->status >= 500;
    if (!retryable || c->delivered || c->tries > c->retries)
        return false;
    curl_off_t after = -1;
    double wait_s = (double)(1 << (c->tries - 1 < 5 ? c->tries - 1 : 5));
    if (curl_easy_getinfo(c->easy, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after >= 0)
        wait_s = after < RETRY_MAX_S ? (double)after : RETRY_MAX_S;
    c->retry_at = cf_now_ms() + wait_s * 1e3;
    return true;
}

/* The transfer ended: what the caller hears. */
static int finished(http_call *c, CURLcode rc, cf_err *err)
{
    if (c->buf.failed || c->ebody.failed)
        return cf_fail(err, "out of memory reading the server's answer");
    if (rc != CURLE_OK)
        return transfer_error(c, rc, err);
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
    if (c->status >= 400) {
        if (schedule_retry(c))
            return HTTP_WAIT;
        if ((c->status == 429 || c->status >= 500) && c->tries > 1) {
            cf_err e;
            status_error(c, &e);
            return cf_fail(err, "%s (gave up after %d tries)", e.msg, c->tries);
        }
        return status_error(c, err);
    }
    return HTTP_DONE;
}

static int hand_out(http_call *c, const char **data, size_t *len)
{
    *data = c->buf.p + c->taken;
    *len = c->buf.n - c->taken;
    c->taken = c->buf.n;
    c->delivered = true;
    return HTTP_DATA;
}

int http_pump(http_call *c, int wait_ms, const char **data, size_t *len, cf_err *err)
{
    *data = NULL;
    *len = 0;
    double until = cf_now_ms() + wait_ms;
    for (;;) {
        double now = cf_now_ms();
        if (c->retry_at > 0) {
            if (now < c->retry_at) {
                double left = (c->retry_at < until ? c->retry_at : until) - now;
                poll(NULL, 0, left > 0 ? (int)left + 1 : 0);
                if (cf_now_ms() < c->retry_at)
                    return HTTP_WAIT;
            }
            c->retry_at = 0;
            if (begin(c, err))
                return HTTP_ERROR;
            continue;
        }
        if (c->buf.n > c->taken)
            return hand_out(c, data, len);
        int running = 0;
        if (curl_multi_perform(c->multi, &running) != CURLM_OK)
            return cf_fail(err, "the HTTP transfer failed (libcurl)");
        if (c->buf.n > c->taken)
            return hand_out(c, data, len);
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(c->multi, &left)))
            if (m->msg == CURLMSG_DONE && m->easy_handle == c->easy) {
                int rc = finished(c, m->data.result, err);
                if (rc != HTTP_WAIT)
                    return rc;
            }
        if (c->retry_at > 0)
            continue;
        now = cf_now_ms();
        if (now - c->last_byte > (double)c->idle_ms)
            return cf_fail(err, "the server at %s sent nothing for %.1f s", c->url,
                           (double)c->idle_ms / 1e3);
        if (now >= until)
            return HTTP_WAIT;
        double left_ms = until - now;
        curl_multi_poll(c->multi, NULL, 0, (int)left_ms + 1, NULL);
    }
}
