/* What the tests of `confab serve` share: the server started on a free
 * port with its log in a file, and a raw HTTP client. */
#ifndef CONFAB_TESTS_SERVE_UTIL_H
#define CONFAB_TESTS_SERVE_UTIL_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confab/openai.h"
#include "harness.h"

extern char **environ;

static const char *const KEY = "test-key-123";

typedef struct server {
    pid_t pid;
    int port;
    char log[300];
} server;

/* confab serve on a free port with extra_args (NULL-terminated, or NULL),
 * its stderr into sv->log. */
static inline int start_with(server *sv, const char *dir, const char *name,
                             char *const extra_env[], char *const extra_args[])
{
    snprintf(sv->log, sizeof sv->log, "%s/%s.log", dir, name);
    char *argv[32] = {getenv("CONFAB_BIN"), "serve", "-m",
                      (char *)shared_path("models/stories260K-chatml.gguf"), "--port", "0",
                      "-t", "1", "--api-key-env", "CONFAB_TEST_KEY", "--model-id", "tiny",
                      "-v", NULL};
    for (int k = 13; extra_args && *extra_args && k < 31; k++)
        argv[k] = *extra_args++;
    char *env[64];
    int n = 0;
    for (char **e = environ; *e && n < 50; e++)
        env[n++] = *e;
    for (; extra_env && *extra_env; extra_env++)
        env[n++] = *extra_env;
    char key[64];
    snprintf(key, sizeof key, "CONFAB_TEST_KEY=%s", KEY);
    env[n++] = key;
    env[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, sv->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = posix_spawn(&sv->pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(sv->log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *at = strstr(line, "listening on http://127.0.0.1:");
            if (at && (sv->port = atoi(at + 30)) > 0) {
                fclose(f);
                return 0;
            }
        }
        if (f)
            fclose(f);
        usleep(10000);
    }
    return -1;
}

static inline int start(server *sv, const char *dir, const char *name, char *const extra_env[])
{
    return start_with(sv, dir, name, extra_env, NULL);
}

static inline int stop(server *sv)
{
    int status = -1;
    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, &status, 0);
    return status;
}

static inline long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* ---- a raw HTTP client ------------------------------------------------------------ */
typedef struct response {
    int status;
    char *text; /* the whole response, head and body */
    size_t len;
    const char *body;
} response;

static inline void response_free(response *r)
{
    free(r->text);
    memset(r, 0, sizeof *r);
}

static inline int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Send raw bytes, read until the server closes. */
static inline int exchange_raw(int port, const char *req, size_t req_len, response *r)
{
    memset(r, 0, sizeof *r);
    int fd = connect_to(port);
    if (fd < 0)
        return -1;
    for (size_t off = 0; off < req_len;) {
        ssize_t w = send(fd, req + off, req_len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t cap = 1 << 14;
    r->text = malloc(cap + 1);
    ssize_t got;
    while ((got = recv(fd, r->text + r->len, cap - r->len, 0)) > 0) {
        r->len += (size_t)got;
        if (cap - r->len < 4096)
            r->text = realloc(r->text, (cap *= 2) + 1);
    }
    close(fd);
    r->text[r->len] = 0;
    sscanf(r->text, "HTTP/1.1 %d", &r->status);
    const char *b = strstr(r->text, "\r\n\r\n");
    r->body = b ? b + 4 : "";
    return r->status ? 0 : -1;
}

static inline int request(int port, const char *method, const char *path, const char *body, bool key,
                   response *r)
{
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%sContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     method, path, key ? "Authorization: Bearer " : "", key ? KEY : "",
                     key ? "\r\n" : "", body ? strlen(body) : 0);
    size_t blen = body ? strlen(body) : 0;
    char *req = malloc((size_t)n + blen + 1);
    memcpy(req, head, (size_t)n);
    if (body)
        memcpy(req + n, body, blen);
    int rc = exchange_raw(port, req, (size_t)n + blen, r);
    free(req);
    return rc;
}

/* ---- reading replies with the client's parser ---------------------------------------- */
typedef struct streamed {
    char content[4096];
    int chunks, done;
    cf_oai_usage usage;
    bool bad;
} streamed;

static inline int on_event(void *ud, const char *event, const char *data, size_t len)
{
    streamed *st = ud;
    cf_oai_chunk c;
    (void)event;
    if (cf_oai_chunk_decode(data, len, &c, NULL)) {
        st->bad = true;
        return 0;
    }
    st->done += c.done;
    st->chunks++;
    if (c.content)
        snprintf(st->content + strlen(st->content), sizeof st->content - strlen(st->content), "%s",
                 c.content);
    if (c.usage.has_usage || c.usage.has_timings)
        st->usage = c.usage;
    cf_oai_chunk_free(&c);
    return 0;
}

static inline bool read_stream(const response *r, streamed *st)
{
    memset(st, 0, sizeof *st);
    cf_sse p;
    cf_sse_init(&p, 0);
    cf_sse_feed(&p, r->body, strlen(r->body), on_event, st, NULL);
    cf_sse_end(&p, on_event, st, NULL);
    cf_sse_free(&p);
    return r->status == 200 && strstr(r->text, "text/event-stream") && st->done == 1 && !st->bad;
}

static inline bool read_whole(const response *r, cf_oai_chunk *c)
{
    return r->status == 200 && cf_oai_chunk_decode(r->body, strlen(r->body), c, NULL) == 0 &&
           c->content && c->finish;
}

/* The head and body of a chat request with the key (malloc'ed). */
static inline char *chat_request(const char *body, size_t *len)
{
    size_t n = strlen(body) + 256;
    char *raw = malloc(n);
    *len = (size_t)snprintf(raw, n,
                            "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
                            "Content-Length: %zu\r\n\r\n%s",
                            KEY, strlen(body), body);
    return raw;
}

/* Whether the server's log has a line containing what. */
static inline bool log_has(const server *sv, const char *what)
{
    FILE *f = fopen(sv->log, "r");
    char line[512];
    bool has = false;
    while (f && fgets(line, sizeof line, f))
        has |= strstr(line, what) != NULL;
    if (f)
        fclose(f);
    return has;
}

/* A fresh folder for the servers' logs, removed by test_end when all passed. */
static inline int test_dir(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "%s/confab-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int test_end(const char *dir, const char *name)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!harness_failures && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return test_summary(name);
}

#endif
