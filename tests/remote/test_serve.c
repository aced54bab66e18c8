/* `confab serve` over real sockets: the protocol (health, the model list,
 * streamed and whole replies read with the client's own parser, the
 * cache kept between the turns of a conversation), every kind of bad
 * request getting its 4xx JSON error, 401 without the key, a client that
 * leaves mid-reply, and load: 8 clients sending 20 requests each at once,
 * all answered, the server's memory flat. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confab/openai.h"
#include "harness.h"

extern char **environ;

enum { CLIENTS = 8, REQUESTS = 20 };
static const char *KEY = "test-key-123";

typedef struct server {
    pid_t pid;
    int port;
    char log[300];
} server;

/* confab serve on a free port, its stderr into sv->log. */
static int start(server *sv, const char *dir, const char *name, char *const extra_env[])
{
    snprintf(sv->log, sizeof sv->log, "%s/%s.log", dir, name);
    char *const argv[] = {getenv("CONFAB_BIN"), "serve", "-m",
                          (char *)shared_path("models/stories260K-chatml.gguf"), "--port", "0",
                          "-t", "1", "--api-key-env", "CONFAB_TEST_KEY", "--model-id", "tiny",
                          "-v", NULL};
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

static int stop(server *sv)
{
    int status = -1;
    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, &status, 0);
    return status;
}

static long rss_kb(pid_t pid)
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

static void response_free(response *r)
{
    free(r->text);
    memset(r, 0, sizeof *r);
}

static int connect_to(int port)
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
static int exchange_raw(int port, const char *req, size_t req_len, response *r)
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

static int request(int port, const char *method, const char *path, const char *body, bool key,
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

static int on_event(void *ud, const char *event, const char *data, size_t len)
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

static bool read_stream(const response *r, streamed *st)
{
    memset(st, 0, sizeof *st);
    cf_sse p;
    cf_sse_init(&p, 0);
    cf_sse_feed(&p, r->body, strlen(r->body), on_event, st, NULL);
    cf_sse_end(&p, on_event, st, NULL);
    cf_sse_free(&p);
    return r->status == 200 && strstr(r->text, "text/event-stream") && st->done == 1 && !st->bad;
}

static bool read_whole(const response *r, cf_oai_chunk *c)
{
    return r->status == 200 && cf_oai_chunk_decode(r->body, strlen(r->body), c, NULL) == 0 &&
           c->content && c->finish;
}

/* ---- the protocol ----------------------------------------------------------------------- */
static void expect_error(int port, const char *what, const char *raw, int status, const char *msg)
{
    response r;
    CHECKF(exchange_raw(port, raw, strlen(raw), &r) == 0 && r.status == status,
           "%s: status %d, not %d", what, r.status, status);
    char text[256] = "";
    cf_oai_error_text(r.body, strlen(r.body), text, sizeof text);
    CHECKF(strstr(r.text, "application/json") && strstr(r.body, "\"error\"") && strstr(text, msg),
           "%s: '%s' lacks '%s'", what, text, msg);
    response_free(&r);
}

static void post_error(int port, const char *what, const char *body, int status, const char *msg)
{
    char raw[4096];
    snprintf(raw, sizeof raw,
             "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             KEY, strlen(body), body);
    expect_error(port, what, raw, status, msg);
}

static void test_protocol(int port)
{
    response r;
    CHECK(request(port, "GET", "/health", NULL, false, &r) == 0 && r.status == 200 &&
          strstr(r.body, "\"ok\""));
    response_free(&r);
    CHECK(request(port, "GET", "/v1/models", NULL, false, &r) == 0 && r.status == 401 &&
          strstr(r.text, "WWW-Authenticate: Bearer"));
    response_free(&r);
    char **ids;
    CHECK(request(port, "GET", "/v1/models", NULL, true, &r) == 0 && r.status == 200 &&
          cf_oai_models_decode(r.body, strlen(r.body), &ids, NULL) == 0 && !strcmp(ids[0], "tiny"));
    cf_oai_models_free(ids);
    response_free(&r);

    /* a whole reply, then the same conversation continued: the cache keeps it */
    const char *q1 = "{\"model\":\"tiny\",\"messages\":[{\"role\":\"system\",\"content\":\"Tell "
                     "stories.\"},{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":8,"
                     "\"temperature\":0}";
    cf_oai_chunk c;
    CHECK(request(port, "POST", "/v1/chat/completions", q1, true, &r) == 0 && read_whole(&r, &c));
    CHECK(c.usage.has_usage && c.usage.completion_tokens == 8 && !strcmp(c.finish, "length"));
    cf_oai_chunk_free(&c);
    response_free(&r);
    /* the model is not chat-trained (no <|im_end|> token): without max_tokens
     * a reply stops at the session's cap, as in a chat */
    const char *q0 = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story.\"}],"
                     "\"seed\":1}";
    CHECK(request(port, "POST", "/v1/chat/completions", q0, true, &r) == 0 && read_whole(&r, &c));
    CHECKF(c.usage.has_usage && c.usage.completion_tokens == CF_SESSION_UNTRAINED_N_PREDICT &&
               !strcmp(c.finish, "length"),
           "without max_tokens: %d tokens, finish %s", c.usage.completion_tokens, c.finish);
    cf_oai_chunk_free(&c);
    response_free(&r);
    CHECK(request(port, "POST", "/v1/chat/completions", q1, true, &r) == 0 && read_whole(&r, &c));
    char q2[2048], reply[512];
    snprintf(reply, sizeof reply, "%s", c.content ? c.content : "");
    cf_oai_chunk_free(&c);
    response_free(&r);
    cf_oai_request req;
    CHECK(cf_oai_request_parse(q1, strlen(q1), &req, NULL) == 0);
    cf_message msgs[4] = {req.msgs[0], req.msgs[1], {.role = CF_ROLE_ASSISTANT, .content = reply},
                          {.role = CF_ROLE_USER, .content = "And then?"}};
    cf_oai_setting set[] = {{"n-predict", "6"}, {"temp", "0"}};
    char *body = cf_oai_request_build("tiny", msgs, 4, set, 2, NULL, true, NULL);
    snprintf(q2, sizeof q2, "%s", body);
    free(body);
    cf_oai_request_free(&req);
    streamed st;
    CHECK(request(port, "POST", "/v1/chat/completions", q2, true, &r) == 0 && read_stream(&r, &st));
    CHECKF(st.usage.has_timings && st.usage.cached_tokens > 20 &&
               st.usage.prompt_n < st.usage.prompt_tokens / 2 && st.usage.predicted_n == 6,
           "turn 2: %d of %d prompt tokens cached, %d evaluated", st.usage.cached_tokens,
           st.usage.prompt_tokens, st.usage.prompt_n);
    fprintf(stderr, "turn 2 of a conversation: %d of its %d prompt tokens from the cache\n",
            st.usage.cached_tokens, st.usage.prompt_tokens);
    response_free(&r);

    /* bad requests: a 4xx JSON error each, naming the problem */
    post_error(port, "not JSON", "{", 400, "not JSON");
    post_error(port, "no messages", "{\"messages\":[]}", 400, "messages must be a non-empty list");
    post_error(port, "bad role", "{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}", 400,
               "role 'tool'");
    post_error(port, "last not user",
               "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\","
               "\"content\":\"y\"}]}",
               400, "the last message must be the user's");
    post_error(port, "model", "{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
               404, "'gpt-9' does not exist here");
    post_error(port, "type", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":\"hot\"}",
               400, "temperature must be a number");
    post_error(port, "range", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_p\":7}",
               400, "top_p: '7' is not a number");
    post_error(port, "system later",
               "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"system\",\"content\":"
               "\"s\"},{\"role\":\"user\",\"content\":\"x\"}]}",
               400, "a system message can only come first");
    char raw[512];
    snprintf(raw, sizeof raw, "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    expect_error(port, "no key", raw, 401, "API key");
    snprintf(raw, sizeof raw, "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer wrong\r\n"
                              "Content-Length: 2\r\n\r\n{}");
    expect_error(port, "wrong key", raw, 401, "API key");
    expect_error(port, "path", "GET /v2/whatever HTTP/1.1\r\n\r\n", 404, "no such path");
    expect_error(port, "method", "DELETE /v1/models HTTP/1.1\r\n\r\n", 405, "use GET");
    expect_error(port, "get chat", "GET /v1/chat/completions HTTP/1.1\r\n\r\n", 405, "use POST");
    expect_error(port, "no length", "POST /v1/chat/completions HTTP/1.1\r\n\r\n", 411, "Content-Length");
    expect_error(port, "chunked",
                 "POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
                 "Content-Length");
    expect_error(port, "too large",
                 "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413,
                 "8 MiB");
    expect_error(port, "version", "GET /health HTTP/2.0\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1");
    expect_error(port, "garbage", "\x16\x03\x01\x02\x05\x01\r\n\r\n", 400, "malformed");
    char *big = malloc(20000);
    memset(big, 'a', 20000);
    memcpy(big, "GET /health HTTP/1.1\r\nX: ", 25);
    memcpy(big + 19996, "\r\n\r\n", 4);
    big[19999] = '\n';
    response rb;
    CHECK(exchange_raw(port, big, 20000, &rb) == 0 && rb.status == 431);
    response_free(&rb);
    free(big);
}

/* ---- a client that leaves mid-reply ------------------------------------------------- */
/* Whether the log has a line containing what. */
static bool log_has(const server *sv, const char *what)
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

/* A completion request sent on a new connection, its fd returned (not read). */
static int send_completion(const server *sv, const char *q)
{
    char raw[1024];
    int n = snprintf(raw, sizeof raw,
                     "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     KEY, strlen(q), q);
    int fd = connect_to(sv->port);
    send(fd, raw, (size_t)n, MSG_NOSIGNAL);
    return fd;
}

static void test_leaving(const char *dir)
{
    char *env[] = {"CONFAB_TEST_TOKEN_DELAY_MS=20", NULL};
    server sv;
    if (start(&sv, dir, "slow", env)) {
        CHECK(0);
        return;
    }
    int fd = send_completion(&sv, "{\"messages\":[{\"role\":\"user\",\"content\":"
                                  "\"Tell me a long story.\"}],\"max_tokens\":2000,"
                                  "\"stream\":true}");
    char buf[4096];
    size_t got = 0;
    while (got < 600) { /* a few chunks in */
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    /* the server cuts the reply and answers the next request at once */
    double t0 = cf_now_ms();
    response r;
    CHECK(request(sv.port, "GET", "/health", NULL, false, &r) == 0 && r.status == 200);
    response_free(&r);
    const char *q2 = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":3}";
    CHECK(request(sv.port, "POST", "/v1/chat/completions", q2, true, &r) == 0 && r.status == 200);
    double ms = cf_now_ms() - t0;
    response_free(&r);
    CHECKF(ms < 2000, "the next request waited %.0f ms", ms);
    CHECK(WIFEXITED(stop(&sv)));
    CHECK(log_has(&sv, "cut: the client went away"));
}

/* A client that leaves while its prompt is evaluated (each layer of a
 * prefill 1 s, by the test delay): the work stops within a layer. */
static void test_leaving_prefill(const char *dir)
{
    char *env[] = {"CONFAB_TEST_PREFILL_DELAY_MS=1000", NULL};
    server sv;
    if (start(&sv, dir, "prefill", env)) {
        CHECK(0);
        return;
    }
    int fd = send_completion(&sv, "{\"messages\":[{\"role\":\"user\",\"content\":"
                                  "\"Tell me a long story.\"}],\"max_tokens\":20}");
    /* its settings are logged just before the prompt is evaluated */
    for (int i = 0; i < 500 && !log_has(&sv, "request settings"); i++)
        usleep(10000);
    close(fd);
    double t0 = cf_now_ms(), ms = 0;
    const char *said = "499 · the client went away (or the server stops) while the prompt was "
                       "evaluated";
    while (!log_has(&sv, said) && (ms = cf_now_ms() - t0) < 10000)
        usleep(10000);
    CHECKF(log_has(&sv, said), "the log does not say the prompt was stopped");
    CHECKF(ms < 2000, "the prompt was stopped %.0f ms after the client left", ms);
    fprintf(stderr, "the prompt was stopped %.0f ms after the client left\n", ms);
    CHECK(WIFEXITED(stop(&sv)));
}

/* ---- load ------------------------------------------------------------------------------- */
typedef struct client {
    int port, id, answered, errors;
} client;

static void *run_client(void *arg)
{
    client *cl = arg;
    for (int i = 0; i < REQUESTS; i++) {
        char body[512];
        bool stream = (i + cl->id) % 2 == 0;
        snprintf(body, sizeof body,
                 "{\"messages\":[{\"role\":\"user\",\"content\":\"Client %d asks question %d.\"}],"
                 "\"max_tokens\":8,\"stream\":%s,\"seed\":%d}",
                 cl->id, i, stream ? "true" : "false", i);
        response r;
        streamed st;
        cf_oai_chunk c;
        bool ok = request(cl->port, "POST", "/v1/chat/completions", body, true, &r) == 0 &&
                  (stream ? read_stream(&r, &st) : read_whole(&r, &c));
        if (ok && !stream)
            cf_oai_chunk_free(&c);
        cl->answered += ok;
        cl->errors += !ok;
        response_free(&r);
    }
    return NULL;
}

static void test_load(const server *sv)
{
    /* warm up: every path taken once, so the memory measured after is steady */
    client warm = {.port = sv->port, .id = 99};
    run_client(&warm);
    long before = rss_kb(sv->pid);
    client cl[CLIENTS];
    pthread_t th[CLIENTS];
    double t0 = cf_now_ms();
    for (int i = 0; i < CLIENTS; i++) {
        cl[i] = (client){.port = sv->port, .id = i};
        pthread_create(&th[i], NULL, run_client, &cl[i]);
    }
    int answered = 0, errors = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        answered += cl[i].answered;
        errors += cl[i].errors;
    }
    double ms = cf_now_ms() - t0;
    long after = rss_kb(sv->pid);
    fprintf(stderr,
            "serve load: %d clients x %d requests = %d sent, %d answered, %d errors, %.2f s; "
            "server RSS %ld kB before, %ld kB after (%+ld kB)\n",
            CLIENTS, REQUESTS, CLIENTS * REQUESTS, answered, errors, ms / 1e3, before, after,
            after - before);
    CHECK(answered == CLIENTS * REQUESTS && errors == 0);
#ifndef __SANITIZE_ADDRESS__ /* its quarantine keeps freed memory resident */
    CHECKF(before > 0 && after - before < 2048, "RSS grew by %ld kB", after - before);
#endif
    /* every request was logged as answered */
    FILE *f = fopen(sv->log, "r");
    char line[512];
    int logged = 0;
    while (f && fgets(line, sizeof line, f))
        logged += strncmp(line, "POST /v1/chat/completions 200", 29) == 0;
    if (f)
        fclose(f);
    CHECKF(logged >= CLIENTS * REQUESTS + REQUESTS, "%d requests logged as answered", logged);
}

int main(void)
{
    if (!shared_dir() || !getenv("CONFAB_BIN"))
        return TEST_SKIP;
    signal(SIGPIPE, SIG_IGN);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/confab-serve-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    server sv;
    if (start(&sv, dir, "serve", NULL)) {
        CHECKF(0, "confab serve did not start");
        return test_summary("remote-serve");
    }
    test_protocol(sv.port);
    test_load(&sv);
    int status = stop(&sv);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve ended with status %d", status);
    test_leaving(dir);
    test_leaving_prefill(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!harness_failures && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return test_summary("remote-serve");
}
