/* `confab serve` over real sockets: the protocol (health, the model list,
 * streamed and whole replies read with the client's own parser, the
 * cache kept between the turns of a conversation), every kind of bad
 * request getting its 4xx JSON error, 401 without the key, a client that
 * leaves mid-reply, and load: 8 clients sending 20 requests each at once,
 * all answered, the server's memory flat. */
#include <pthread.h>

#include "serve_util.h"

enum { CLIENTS = 8, REQUESTS = 20 };

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
    post_error(port, "bad role", "{\"messages\":[{\"role\":\"function\",\"content\":\"x\"}]}", 400,
               "role 'function'");
    post_error(port, "tool without id", "{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}", 400,
               "a tool message needs its tool_call_id");
    post_error(port, "last not user",
               "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\","
               "\"content\":\"y\"}]}",
               400, "the last message must be the user's or a tool's result");
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
static void test_leaving(const char *dir)
{
    char *env[] = {"CONFAB_TEST_TOKEN_DELAY_MS=20", NULL};
    server sv;
    if (start(&sv, dir, "slow", env)) {
        CHECK(0);
        return;
    }
    size_t n;
    char *raw = chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long "
                             "story.\"}],\"max_tokens\":2000,\"stream\":true}", &n);
    int fd = connect_to(sv.port);
    char buf[4096];
    size_t got = 0;
    send(fd, raw, n, MSG_NOSIGNAL);
    free(raw);
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
    size_t n;
    char *raw = chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story.\"}],"
                             "\"max_tokens\":20}", &n);
    int fd = connect_to(sv.port);
    send(fd, raw, n, MSG_NOSIGNAL);
    free(raw);
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
    if (test_dir(dir, sizeof dir, "serve"))
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
    return test_end(dir, "remote-serve");
}
