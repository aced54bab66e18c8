/* `confab serve`: the listening socket and the connections it accepts,
 * read in one poll() loop until each holds a whole request; quick
 * requests (health, the model list, errors) are answered here, and
 * completions queue for the one worker thread that owns the session
 * (serve_reply.c).  One thread owns the session because the forward pass
 * spreads itself over all cores anyway, and a second request evaluated
 * beside the first would only make both slower and lose the cache. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
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
    MAX_QUEUED = 64,      /* completions waiting for the worker */
    REQUEST_MS = 30000,   /* to send a whole request */
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

void serve_error(int fd, int status, const char *type, const char *message)
{
    size_t len;
    char *body = cf_oai_error_encode(message, type, status, &len);
    const char *extra = status == 401   ? "WWW-Authenticate: Bearer\r\n"
                        : status == 503 ? "Retry-After: 1\r\n"
                                        : NULL;
    if (body)
        http_respond(fd, status, "application/json", body, len, extra);
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

static void job_free(serve_job *j)
{
    close(j->fd);
    cf_oai_request_free(&j->req);
    free(j);
}

static void *worker(void *arg)
{
    server *sv = arg;
    for (;;) {
        pthread_mutex_lock(&sv->mu);
        while (!sv->head && !sv->stopping)
            pthread_cond_wait(&sv->cv, &sv->mu);
        serve_job *j = sv->head;
        if (j) {
            sv->head = j->next;
            if (!sv->head)
                sv->tail = NULL;
            sv->queued--;
        }
        bool stopping = sv->stopping;
        pthread_mutex_unlock(&sv->mu);
        if (!j)
            break;
        if (stopping)
            serve_error(j->fd, 503, "server_error", "the server is shutting down");
        else
            serve_reply(sv, j);
        job_free(j);
    }
    return NULL;
}

/* ---- requests ------------------------------------------------------------------ */

typedef struct conn {
    int fd;
    char *buf;
    size_t len, cap;
    double deadline;
    bool continued; /* "100 Continue" sent */
} conn;

static bool key_ok(const server *sv, const char *auth)
{
    const char *key = sv->p->api_key;
    if (!key || !*key)
        return true;
    if (strncasecmp(auth, "Bearer ", 7))
        return false;
    /* every byte compared, so the time taken says nothing of the key */
    const char *given = auth + 7;
    size_t a = strlen(given), b = strlen(key);
    unsigned diff = (unsigned)(a != b);
    for (size_t i = 0; i < a; i++)
        diff |= (unsigned char)given[i] ^ (unsigned char)key[i % b];
    return diff == 0;
}

static void completion(server *sv, int fd, const http_req *r, const char *body, double t0)
{
    serve_job *j = calloc(1, sizeof *j);
    cf_err err = {.msg = ""};
    if (!j) {
        serve_error(fd, 500, "server_error", "out of memory");
        close(fd);
        return;
    }
    j->fd = fd;
    j->t0 = t0;
    char msg[CF_ERR_MSG_MAX + 64];
    int status = 400;
    const char *type = "invalid_request_error";
    if (cf_oai_request_parse(body, r->body_len, &j->req, &err)) {
        snprintf(msg, sizeof msg, "%s", err.msg);
    } else if (j->req.model && *j->req.model && strcmp(j->req.model, sv->model_id)) {
        snprintf(msg, sizeof msg,
                 "the model '%.200s' does not exist here (this server has '%.200s')",
                 j->req.model, sv->model_id);
        status = 404;
        type = "not_found_error";
    } else if (j->req.msgs[j->req.n_msgs - 1].role != CF_ROLE_USER) {
        snprintf(msg, sizeof msg, "the last message must be the user's");
    } else if (!enqueue(sv, j)) {
        snprintf(msg, sizeof msg, "the server is busy: %d requests wait already", MAX_QUEUED);
        status = 503;
        type = "server_error";
    } else {
        return;
    }
    serve_log(sv, "POST %s %d · %s", r->path, status, msg);
    serve_error(fd, status, type, msg);
    job_free(j);
}

/* A whole request: answer it or hand it to the worker; the connection
 * leaves the loop either way. */
static void route(server *sv, conn *c, const http_req *r)
{
    int fd = c->fd;
    const char *path = r->path;
    bool get = !strcmp(r->method, "GET"), post = !strcmp(r->method, "POST");
    bool chat = !strcmp(path, "/v1/chat/completions") || !strcmp(path, "/chat/completions");
    bool models = !strcmp(path, "/v1/models") || !strcmp(path, "/models");
    bool health = !strcmp(path, "/health");
    if (!chat && !models && !health) {
        serve_log(sv, "%s %s 404", r->method, path);
        serve_error(fd, 404, "not_found_error", "no such path (try /v1/chat/completions, "
                                                "/v1/models, /health)");
    } else if ((chat && !post) || (!chat && !get)) {
        serve_log(sv, "%s %s 405", r->method, path);
        serve_error(fd, 405, "invalid_request_error", chat ? "use POST" : "use GET");
    } else if (!health && !key_ok(sv, r->auth)) {
        serve_log(sv, "%s %s 401", r->method, path);
        serve_error(fd, 401, "authentication_error",
                    "a valid API key is needed (Authorization: Bearer KEY)");
    } else if (chat) {
        completion(sv, fd, r, c->buf + r->head_len, cf_now_ms());
        return; /* the worker closes it */
    } else {
        size_t len;
        char *body = health ? strdup("{\"status\":\"ok\"}")
                            : cf_oai_models_encode(sv->model_id, sv->created, &len);
        if (body)
            http_respond(fd, 200, "application/json", body, strlen(body), NULL);
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
        size_t cap = c->cap ? 2 * c->cap : 8192;
        char *b = cap <= HTTP_HEAD_MAX + HTTP_BODY_MAX + 8192 ? realloc(c->buf, cap + 1) : NULL;
        if (!b) {
            serve_error(c->fd, 413, "invalid_request_error", "the request is too large");
            close(c->fd);
            drop(conns, n, i);
            return true;
        }
        c->buf = b;
        c->cap = cap;
    }
    ssize_t got = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (got <= 0) { /* gone before it asked anything */
        close(c->fd);
        drop(conns, n, i);
        return true;
    }
    c->len += (size_t)got;
    http_req r;
    int status;
    const char *why;
    int head = http_parse_head(c->buf, c->len, &r, &status, &why);
    if (head == 0)
        return false;
    if (head < 0) {
        serve_log(sv, "bad request: %d, %s", status, why);
        serve_error(c->fd, status, "invalid_request_error", why);
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

static void accept_all(int lfd, conn *conns, int *n)
{
    for (;;) {
        int fd = cf_accept_cloexec(lfd);
        if (fd < 0)
            return;
        /* a reply streams with blocking writes; a client that stops reading
         * for this long is dropped */
        struct timeval tv = {30, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (*n == MAX_CONNS) {
            serve_error(fd, 503, "server_error", "too many connections");
            close(fd);
            continue;
        }
        conns[(*n)++] = (conn){.fd = fd, .deadline = cf_now_ms() + REQUEST_MS};
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
            if (now > conns[i].deadline) {
                serve_error(conns[i].fd, 408, "invalid_request_error",
                            "the request did not arrive in 30 s");
                close(conns[i].fd);
                drop(conns, &n, i);
            }
        if (r > 0 && (pf[0].revents & POLLIN))
            accept_all(lfd, conns, &n);
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
    if (cf_session_new(&p->session, &sv.s, err)) {
        close(lfd);
        return -1;
    }
    int rc = -1;
    pthread_t th;
    pthread_mutex_init(&sv.mu, NULL);
    pthread_cond_init(&sv.cv, NULL);
    if (!(sv.defaults = take_defaults(sv.s))) {
        cf_fail(err, "out of memory");
    } else if (pthread_create(&th, NULL, worker, &sv)) {
        cf_fail(err, "cannot start the worker thread");
    } else {
        if (p->ready)
            p->ready(p->ud, host, port);
        loop(&sv, lfd);
        pthread_mutex_lock(&sv.mu);
        sv.stopping = true;
        pthread_cond_signal(&sv.cv);
        pthread_mutex_unlock(&sv.mu);
        pthread_join(th, NULL);
        rc = 0;
    }
    close(lfd);
    free_defaults(sv.defaults);
    pthread_cond_destroy(&sv.cv);
    pthread_mutex_destroy(&sv.mu);
    cf_session_free(sv.s);
    return rc;
}
