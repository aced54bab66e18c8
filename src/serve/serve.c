/* `confab serve`: the listening socket and the connections it accepts,
 * read in one poll() loop until each holds a whole request; quick
 * requests (health, the model list, the slots, errors) are answered here,
 * and completions queue for the slots (slots.c), each a thread with its
 * own session, which answer them (serve_reply.c). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "confab/platform.h"
#include "http.h"
#include "serve_internal.h"

enum {
    MAX_CONNS = 256,      /* reading their request at once */
    MAX_PER_PEER = 32,    /* of them from one address */
    MAX_QUEUED = 64,      /* completions waiting for the worker */
    REQUEST_MS = 30000,   /* to send a whole request */
    SILENT_MS = 5000,     /* to send its first byte */
    TICK_MS = 100,        /* how often the loop looks at the stop flag */
};

void serve_log(const server *sv, const char *fmt, ...)
{
    if (!sv->p->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sv->p->log(sv->p->ud, line);
}

void serve_respond(const server *sv, int fd, int status, const char *body, size_t len,
                   const char *extra_headers)
{
    char headers[768];
    snprintf(headers, sizeof headers, "%s%s", sv->cors, extra_headers ? extra_headers : "");
    http_respond(fd, status, "application/json", body, len, headers);
}

/* OpenAI's codes where it has one, the status's name otherwise. */
static const char *status_code(int status)
{
    switch (status) {
    case 401: return "invalid_api_key";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 408: return "request_timeout";
    case 411: return "length_required";
    case 413: return "request_too_large";
    case 431: return "headers_too_large";
    case 501: return "not_implemented";
    case 503: return "server_busy";
    case 505: return "http_version_not_supported";
    default: return status >= 500 ? "server_error" : "invalid_request";
    }
}

void serve_error(const server *sv, int fd, int status, const char *code, const char *param,
                 const char *message)
{
    size_t len;
    const char *type = status >= 500 ? "server_error" : "invalid_request_error";
    char *body = cf_oai_error_encode(message, type, code ? code : status_code(status), param, &len);
    const char *extra = status == 401   ? "WWW-Authenticate: Bearer\r\n"
                        : status == 503 ? "Retry-After: 1\r\n"
                                        : NULL;
    if (body)
        serve_respond(sv, fd, status, body, len, extra);
    free(body);
}

/* ---- the queue ------------------------------------------------------------------ */

static bool enqueue(server *sv, serve_job *j)
{
    pthread_mutex_lock(&sv->mu);
    bool ok = sv->queued < MAX_QUEUED && !sv->stopping;
    if (ok) {
        if (sv->tail)
            sv->tail->next = j;
        else
            sv->head = j;
        sv->tail = j;
        sv->queued++;
        pthread_cond_signal(&sv->cv);
    }
    pthread_mutex_unlock(&sv->mu);
    return ok;
}

void serve_job_free(serve_job *j)
{
    close(j->fd);
    cf_oai_request_free(&j->req);
    free(j);
}

/* ---- requests ------------------------------------------------------------------ */

typedef struct conn {
    int fd;
    char *buf;
    size_t len, cap;
    double opened, deadline;
    bool continued; /* "100 Continue" sent */
    struct sockaddr_storage peer;
} conn;

static bool key_ok(const server *sv, const http_req *r)
{
    const char *key = sv->p->api_key;
    if (!key || !*key)
        return true;
    if (!r->auth || r->auth_len < 7 || strncasecmp(r->auth, "Bearer ", 7))
        return false;
    /* every byte compared, so the time taken says nothing of the key */
    const char *given = r->auth + 7;
    size_t a = r->auth_len - 7, b = strlen(key);
    unsigned diff = (unsigned)(a != b);
    for (size_t i = 0; i < a; i++)
        diff |= (unsigned char)given[i] ^ (unsigned char)key[i % b];
    return diff == 0;
}

static void completion(server *sv, int fd, const http_req *r, const char *body, cf_oai_api api,
                       double t0)
{
    serve_job *j = calloc(1, sizeof *j);
    cf_err err = {.msg = ""};
    if (!j) {
        serve_error(sv, fd, 500, NULL, NULL, "out of memory");
        close(fd);
        return;
    }
    j->fd = fd;
    j->t0 = t0;
    static const char *const paths[] = {"/v1/chat/completions", "/v1/completions",
                                        "/v1/responses"};
    j->path = paths[api];
    j->api = api;
    char msg[CF_ERR_MSG_MAX + 64];
    int status = 400;
    const char *code = NULL, *param = NULL;
    if (cf_oai_api_parse(api, body, r->body_len, &j->req, &err)) {
        snprintf(msg, sizeof msg, "%s", err.msg);
        param = j->req.param[0] ? j->req.param : NULL;
    } else if (j->req.model && *j->req.model && strcmp(j->req.model, sv->model_id)) {
        snprintf(msg, sizeof msg,
                 "the model '%.200s' does not exist here (this server has '%.200s')",
                 j->req.model, sv->model_id);
        status = 404;
        code = "model_not_found";
        param = "model";
    } else if (api != CF_OAI_TEXT && j->req.msgs[j->req.n_msgs - 1].role != CF_ROLE_USER &&
               j->req.msgs[j->req.n_msgs - 1].role != CF_ROLE_TOOL) {
        snprintf(msg, sizeof msg, "the last message must be the user's or a tool's result");
        param = "messages";
    } else if (!enqueue(sv, j)) {
        snprintf(msg, sizeof msg, "the server is busy: %d requests wait already", MAX_QUEUED);
        status = 503;
    } else {
        return;
    }
    serve_log(sv, "POST %s %d · %s", r->path, status, msg);
    serve_error(sv, fd, status, code, param, msg);
    serve_job_free(j);
}

/* The paths, what they take, and the OpenAI ones confab does not serve. */
static bool is_path(const char *path, const char *name)
{
    return !strcmp(path, name) || (!strncmp(path, "/v1", 3) && !strcmp(path + 3, name));
}

static const char *const unserved[] = {
    "/embeddings", "/moderations", "/images", "/audio", "/files",
    "/uploads", "/batches", "/fine_tuning", "/assistants", "/threads", "/vector_stores",
    "/realtime", "/evals", "/containers", "/conversations", "/chatkit", NULL,
};

static bool unserved_path(const char *path)
{
    if (strncmp(path, "/v1/", 4))
        return false;
    for (int i = 0; unserved[i]; i++) {
        size_t n = strlen(unserved[i]);
        if (!strncmp(path + 3, unserved[i], n) && (!path[3 + n] || path[3 + n] == '/'))
            return true;
    }
    return false;
}

/* The model's id in GET /v1/models/{id}, or NULL. */
static const char *model_in(const char *path)
{
    const char *id = !strncmp(path, "/v1/models/", 11) ? path + 11
                     : !strncmp(path, "/models/", 8)   ? path + 8
                                                       : NULL;
    return id && *id ? id : NULL;
}

/* A preflight's answer: what a browser may send here. */
static void preflight(server *sv, int fd, const http_req *r, const char *allow)
{
    char extra[768];
    snprintf(extra, sizeof extra,
             "Allow: %s\r\n%s%s%s%s", allow,
             sv->cors[0] ? "Access-Control-Allow-Methods: " : "", sv->cors[0] ? allow : "",
             sv->cors[0] ? "\r\nAccess-Control-Max-Age: 86400\r\n" : "",
             sv->cors[0] && r->cors_headers[0] ? "Access-Control-Allow-Headers: " : "");
    size_t k = strlen(extra);
    if (sv->cors[0] && r->cors_headers[0])
        snprintf(extra + k, sizeof extra - k, "%s\r\n", r->cors_headers);
    serve_log(sv, "OPTIONS %s 204", r->path);
    serve_respond(sv, fd, 204, NULL, 0, extra);
}

/* A whole request: answer it or hand it to the worker; the connection
 * leaves the loop either way. */
static void route(server *sv, conn *c, const http_req *r)
{
    int fd = c->fd;
    const char *path = r->path, *id = model_in(path);
    bool head = !strcmp(r->method, "HEAD"), get = head || !strcmp(r->method, "GET");
    bool post = !strcmp(r->method, "POST"), options = !strcmp(r->method, "OPTIONS");
    cf_oai_api api = is_path(path, "/completions") ? CF_OAI_TEXT
                     : is_path(path, "/responses") ? CF_OAI_RESPONSES
                                                   : CF_OAI_CHAT;
    bool chat = api != CF_OAI_CHAT || is_path(path, "/chat/completions");
    bool models = is_path(path, "/models") || id;
    bool health = !strcmp(path, "/health"), slots = !strcmp(path, "/slots");
    bool other = unserved_path(path);
    const char *allow = chat || other ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
    char msg[512], extra[64];
    if (!chat && !models && !health && !slots && !other) {
        serve_log(sv, "%s %s 404", r->method, path);
        serve_error(sv, fd, 404, "unknown_url", NULL,
                    "no such path (try /v1/chat/completions, /v1/completions, /v1/responses, "
                    "/v1/models, /health, /slots)");
    } else if (options) {
        preflight(sv, fd, r, allow);
    } else if (!(chat || other ? post : get)) {
        serve_log(sv, "%s %s 405", r->method, path);
        snprintf(extra, sizeof extra, "Allow: %s\r\n", allow);
        snprintf(msg, sizeof msg, "%s %s: use %s", r->method, path, chat || other ? "POST"
                                                                                      : "GET");
        size_t len;
        char *body = cf_oai_error_encode(msg, "invalid_request_error", "method_not_allowed", NULL,
                                         &len);
        if (body)
            serve_respond(sv, fd, 405, body, len, extra);
        free(body);
    } else if (!health && !key_ok(sv, r)) {
        serve_log(sv, "%s %s 401", r->method, path);
        serve_error(sv, fd, 401, NULL, NULL,
                    "a valid API key is needed (Authorization: Bearer KEY)");
    } else if (other) {
        serve_log(sv, "%s %s 404 · not supported", r->method, path);
        snprintf(msg, sizeof msg, "%.200s is not supported by confab serve (it serves "
                 "/v1/chat/completions, /v1/completions, /v1/responses and /v1/models)", path);
        serve_error(sv, fd, 404, "not_supported", NULL, msg);
    } else if (chat) {
        completion(sv, fd, r, c->buf + r->head_len, api, cf_now_ms());
        return; /* the worker closes it */
    } else if (id && strcmp(id, sv->model_id)) {
        serve_log(sv, "%s %s 404", r->method, path);
        snprintf(msg, sizeof msg, "the model '%.200s' does not exist here (this server has "
                 "'%.200s')", id, sv->model_id);
        serve_error(sv, fd, 404, "model_not_found", "model", msg);
    } else {
        size_t len;
        char *body = health  ? strdup("{\"status\":\"ok\"}")
                     : slots ? serve_slots_encode(sv, &len)
                     : id    ? cf_oai_model_encode(sv->model_id, sv->created, &len)
                             : cf_oai_models_encode(sv->model_id, sv->created, &len);
        if (body)
            serve_respond(sv, fd, 200, head ? NULL : body, strlen(body), NULL);
        free(body);
    }
    close(fd);
}

static void drop(conn *conns, int *n, int i)
{
    free(conns[i].buf);
    conns[i] = conns[--*n];
}

/* Read what conn i has; true when it left the loop. */
static bool readable(server *sv, conn *conns, int *n, int i)
{
    conn *c = &conns[i];
    if (c->cap - c->len < 4096) {
        /* room for the largest request: a whole head and 8 MiB of body */
        size_t most = HTTP_HEAD_MAX + HTTP_BODY_MAX, cap = c->cap ? 2 * c->cap : 8192;
        char *b = c->len < most ? realloc(c->buf, (cap < most ? cap : most) + 1) : NULL;
        if (!b) {
            http_drain(c->fd);
            serve_error(sv, c->fd, 413, NULL, NULL, "the request is too large");
            close(c->fd);
            drop(conns, n, i);
            return true;
        }
        c->buf = b;
        c->cap = cap < most ? cap : most;
    }
    ssize_t got = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (got <= 0) { /* gone before it asked anything */
        close(c->fd);
        drop(conns, n, i);
        return true;
    }
    if (c->len == 0) /* it speaks: the whole request's time from its start */
        c->deadline = c->opened + REQUEST_MS;
    c->len += (size_t)got;
    http_req r;
    int status;
    const char *why;
    int head = http_parse_head(c->buf, c->len, &r, &status, &why);
    if (head == 0)
        return false;
    if (head < 0) {
        serve_log(sv, "bad request: %d, %s", status, why);
        http_drain(c->fd);
        serve_error(sv, c->fd, status, NULL, NULL, why);
    } else if (c->len < r.head_len + r.body_len) {
        if (r.expect_continue && !c->continued) {
            static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
            http_send(c->fd, go_on, sizeof go_on - 1);
            c->continued = true;
        }
        return false;
    } else {
        c->buf[r.head_len + r.body_len] = '\0';
        route(sv, c, &r);
        drop(conns, n, i);
        return true;
    }
    close(c->fd);
    drop(conns, n, i);
    return true;
}

/* The same address (the port aside). */
static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
    if (a->ss_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return true;
}

static void time_out(server *sv, conn *conns, int *n, int i, const char *why)
{
    serve_log(sv, "408 · %s", why);
    serve_error(sv, conns[i].fd, 408, NULL, NULL, why);
    close(conns[i].fd);
    drop(conns, n, i);
}

/* Room for a connection from peer: when the table is full, or the peer
 * holds its share, the oldest connection that has sent nothing yet (of
 * that peer, when it is over its share) goes, so that idle sockets
 * cannot lock the others out.  False when there is none to let go. */
static bool make_room(server *sv, conn *conns, int *n, const struct sockaddr_storage *peer)
{
    int mine = 0;
    for (int i = 0; i < *n; i++)
        mine += same_peer(&conns[i].peer, peer);
    if (*n < MAX_CONNS && mine < MAX_PER_PEER)
        return true;
    int oldest = -1;
    for (int i = 0; i < *n; i++)
        if (conns[i].len == 0 && (mine < MAX_PER_PEER || same_peer(&conns[i].peer, peer)) &&
            (oldest < 0 || conns[i].opened < conns[oldest].opened))
            oldest = i;
    if (oldest < 0)
        return false;
    time_out(sv, conns, n, oldest, "the connection sent nothing, and others wait");
    return true;
}

static void accept_all(server *sv, int lfd, conn *conns, int *n)
{
    for (;;) {
        struct sockaddr_storage peer;
        socklen_t pl = sizeof peer;
        int fd = cf_accept_cloexec(lfd, (struct sockaddr *)&peer, &pl);
        if (fd < 0)
            return;
        /* a reply streams with blocking writes; a client that stops reading
         * for this long is dropped */
        struct timeval tv = {30, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (!make_room(sv, conns, n, &peer)) {
            serve_log(sv, "503 · too many connections");
            http_drain(fd); /* what it sent unread would turn the close into a reset */
            serve_error(sv, fd, 503, NULL, NULL, "too many connections");
            close(fd);
            continue;
        }
        double now = cf_now_ms();
        conns[(*n)++] = (conn){.fd = fd, .opened = now, .deadline = now + SILENT_MS, .peer = peer};
    }
}

static void loop(server *sv, int lfd)
{
    conn *conns = calloc(MAX_CONNS, sizeof *conns);
    struct pollfd *pf = calloc(MAX_CONNS + 1, sizeof *pf);
    int n = 0;
    while (conns && pf && !(sv->p->stop && *sv->p->stop)) {
        pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < n; i++)
            pf[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        int k = n, r = poll(pf, (nfds_t)n + 1, TICK_MS);
        if (r < 0 && errno != EINTR)
            break;
        /* from the end: dropping one moves the last into its place */
        for (int i = k - 1; r > 0 && i >= 0; i--)
            if (pf[i + 1].revents)
                readable(sv, conns, &n, i);
        double now = cf_now_ms();
        for (int i = n - 1; i >= 0; i--)
            if (now > conns[i].deadline)
                time_out(sv, conns, &n, i, conns[i].len ? "the request did not arrive in 30 s"
                                                        : "the connection sent nothing in 5 s");
        if (r > 0 && (pf[0].revents & POLLIN))
            accept_all(sv, lfd, conns, &n);
    }
    for (int i = 0; conns && i < n; i++) {
        close(conns[i].fd);
        free(conns[i].buf);
    }
    free(conns);
    free(pf);
}

/* ---- starting and stopping ------------------------------------------------------------- */

static int listen_on(const char *host, int port, int *fd_out, int *port_out, cf_err *err)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc)
        return cf_fail_as(err, CF_E_USAGE, "cannot listen on %s: %s", host, gai_strerror(rc));
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = cf_socket_cloexec_nonblock(a->ai_family, a->ai_socktype, a->ai_protocol);
        int one = 1;
        if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
                        bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 128))) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return cf_fail(err, "cannot listen on %s port %d: %s", host, port, strerror(e ? e : errno));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[64], p[16];
    *port_out = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        *port_out = atoi(p);
    *fd_out = fd;
    return 0;
}

static void free_defaults(char **d)
{
    for (size_t i = 0; d && d[i]; i++)
        free(d[i]);
    free(d);
}

static char **take_defaults(const cf_session *s)
{
    size_t n = 0;
    while (cf_session_setting_names()[n])
        n++;
    char **d = calloc(n + 1, sizeof *d), buf[64];
    for (size_t i = 0; d && i < n; i++) {
        const char *name = cf_session_setting_names()[i];
        /* each request draws its own seed unless it gives one */
        const char *v = !strcmp(name, "seed") ? "random" : cf_session_get(s, name, buf, sizeof buf);
        if (!(d[i] = strdup(v ? v : ""))) {
            free_defaults(d);
            return NULL;
        }
    }
    return d;
}

/* The CORS default: a server on loopback only is called by pages on this
 * machine (a browser UI), one on other addresses only by those named. */
static void set_cors(server *sv, const char *host)
{
    bool loopback = !strcmp(host, "127.0.0.1") || !strcmp(host, "::1") ||
                    !strcmp(host, "localhost") || !strncmp(host, "127.", 4);
    const char *origin = sv->p->cors ? sv->p->cors : loopback ? "*" : "";
    if (*origin)
        snprintf(sv->cors, sizeof sv->cors, "Access-Control-Allow-Origin: %.200s\r\n%s", origin,
                 strcmp(origin, "*") ? "Vary: Origin\r\n" : "");
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int cf_serve_run(const cf_serve_params *p, cf_err *err)
{
    const char *host = p->host ? p->host : "127.0.0.1";
    int lfd = -1, port = 0;
    if (listen_on(host, p->port, &lfd, &port, err))
        return -1;
    server sv = {.p = p, .created = (long long)time(NULL)};
    char id[256];
    snprintf(id, sizeof id, "%s", p->model_id ? p->model_id : base_name(p->session.model_path));
    sv.model_id = id;
    set_cors(&sv, host);
    /* what OpenAI's system_fingerprint says: the same setup gives the same one */
    uint32_t h = 2166136261u;
    for (const char *c = p->session.model_path; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    snprintf(sv.fingerprint, sizeof sv.fingerprint, "fp_confab_%08x_%d", h, p->session.n_ctx);
    if (serve_slots_open(&sv, err)) {
        close(lfd);
        return -1;
    }
    if (cf_session_gpu_note(sv.s)[0])
        serve_log(&sv, "%s", cf_session_gpu_note(sv.s));
    if (cf_session_untrained(sv.s)) /* the session's n-predict is the requests' default */
        serve_log(&sv, "note: the model does not look chat-trained (%s): a reply stops after %d "
                       "tokens unless its request sets max_tokens",
                  cf_session_untrained(sv.s), CF_SESSION_UNTRAINED_N_PREDICT);
    int rc = -1;
    pthread_mutex_init(&sv.mu, NULL);
    pthread_cond_init(&sv.cv, NULL);
    if (!(sv.defaults = take_defaults(sv.s))) {
        cf_fail(err, "out of memory");
    } else if (!serve_slots_start(&sv, err)) {
        if (p->ready)
            p->ready(p->ud, host, port);
        loop(&sv, lfd);
        serve_slots_stop(&sv);
        rc = 0;
    }
    close(lfd);
    free_defaults(sv.defaults);
    pthread_cond_destroy(&sv.cv);
    pthread_mutex_destroy(&sv.mu);
    serve_slots_free(&sv);
    return rc;
}
