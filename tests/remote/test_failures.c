/* The remote engine against a loopback server that misbehaves on purpose
 * (fake_server.c): every failure is one error naming it, and the session
 * goes on (the next request is answered).  A failure before any of the
 * reply came takes the turn back; one after it keeps the part, marked as
 * cut.  Also: the settings given reach the request and the others stay
 * out, a stop mid-stream closes the connection at once, and a remote
 * session's file holds no key and loads into a local session and a remote
 * one. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confab/openai.h"
#include "confab/session.h"
#include "harness.h"

extern char **environ;

static char dir[256], portfile[300], logfile[300];
static pid_t server;

/* Start the fake server with these modes; its port. */
static int start_server(const char *exe, const char *const *modes)
{
    char *argv[40] = {(char *)exe, portfile, logfile};
    int n = 3;
    for (; *modes && n < 39; modes++)
        argv[n++] = (char *)*modes;
    unlink(portfile);
    if (posix_spawn(&server, exe, NULL, NULL, argv, environ))
        return -1;
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(portfile, "r");
        int port = 0;
        if (f && fscanf(f, "%d", &port) == 1) {
            fclose(f);
            return port;
        }
        if (f)
            fclose(f);
        usleep(10000);
    }
    return -1;
}

static void stop_server(void)
{
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        server = 0;
    }
}

/* The last line the server logged. */
static void last_log(char *buf, size_t n)
{
    FILE *f = fopen(logfile, "r");
    buf[0] = 0;
    char line[8192];
    while (f && fgets(line, sizeof line, f))
        snprintf(buf, n, "%s", line);
    if (f)
        fclose(f);
}

static cf_session *open_remote(int port, const char *host, const char *scheme, int timeout_ms)
{
    char url[256];
    snprintf(url, sizeof url, "%s://%s:%d/v1", scheme, host, port);
    cf_session_params p = {.endpoint = url, .remote_model = "fake", .api_key = "sk-test-SECRET",
                           .timeout_ms = timeout_ms};
    cf_session *s = NULL;
    cf_err err;
    CHECKF(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    return s;
}

typedef struct result {
    int rc;           /* of the last next_part: CF_NEXT_DONE or < 0 */
    char content[1024], reasoning[1024];
    cf_err err;
    double ms;
} result;

/* Send msg and read the reply to its end. */
static void chat(cf_session *s, const char *msg, result *r)
{
    memset(r, 0, sizeof *r);
    double t0 = cf_now_ms();
    if (cf_session_begin_reply(s, msg, &r->err)) {
        r->rc = -1;
        return;
    }
    cf_reply_part part;
    while ((r->rc = cf_session_next_part(s, &part, &r->err)) == CF_NEXT_TOKEN) {
        snprintf(r->content + strlen(r->content), sizeof r->content - strlen(r->content), "%s",
                 part.content);
        snprintf(r->reasoning + strlen(r->reasoning), sizeof r->reasoning - strlen(r->reasoning),
                 "%s", part.reasoning);
    }
    cf_session_end_reply(s, false);
    r->ms = cf_now_ms() - t0;
}

static const cf_message *last(cf_session *s)
{
    return cf_session_message(s, cf_session_n_messages(s) - 1);
}

/* A failure: one error naming it; undone (nothing came) or a cut part. */
static void expect_fail(cf_session *s, const char *what, const char *msg, const char *partial)
{
    int before = cf_session_n_messages(s);
    result r;
    chat(s, msg, &r);
    CHECKF(r.rc < 0, "%s: no error", what);
    CHECKF(!strchr(r.err.msg, '\n'), "%s: more than one line: %s", what, r.err.msg);
    fprintf(stderr, "  %-12s -> %s\n", what, r.err.msg);
    if (partial) {
        CHECKF(cf_session_n_messages(s) == before + 2 && last(s)->cut &&
                   !strcmp(last(s)->content, partial) && strstr(r.err.msg, "partial reply stays"),
               "%s: the partial reply is not kept as cut (%d messages, '%s')", what,
               cf_session_n_messages(s), last(s) ? last(s)->content : "");
    } else {
        CHECKF(cf_session_n_messages(s) == before, "%s: the turn was not taken back", what);
    }
}

static void expect_ok(cf_session *s, const char *what, const char *content)
{
    result r;
    chat(s, "Hi again", &r);
    CHECKF(r.rc == CF_NEXT_DONE && !strcmp(r.content, content), "%s: rc %d '%s' (%s)", what, r.rc,
           r.content, r.err.msg);
}

static bool has(const char *text, const char *what)
{
    return strstr(text, what) != NULL;
}

static void test_failures(const char *exe)
{
    static const char *const modes[] = {
        "ok", "401", "403", "404", "429", "ok", "500", "500", "500", "500", "503", "ok",
        "cut", "nodone", "badsse", "badjson", "errevent", "html", "hang", "close", "ok", NULL,
    };
    int port = start_server(exe, modes);
    CHECK(port > 0);
    if (port <= 0)
        return;
    cf_session *s = open_remote(port, "127.0.0.1", "http", 700);
    if (!s)
        return;
    const cf_remote_info *ri = cf_session_remote(s);
    /* -m fake is completed from the server's list */
    CHECK(ri && !strcmp(ri->model, "fake-model"));
    result r;
    chat(s, "Hello", &r);
    CHECKF(r.rc == CF_NEXT_DONE && !strcmp(r.content, "Hello from fake."), "ok: '%s' %s",
           r.content, r.err.msg);
    const cf_turn_stats *st = cf_session_last_stats(s);
    CHECK(st->remote && st->usage && st->prompt_tokens == 11 && st->gen_tokens == 3);
    CHECK(cf_session_n_messages(s) == 2);

    expect_fail(s, "401", "x", NULL);
    expect_fail(s, "403", "x", NULL);
    expect_fail(s, "404", "x", NULL);
    /* 429 with Retry-After: 1, then an answer */
    chat(s, "x", &r);
    CHECKF(r.rc == CF_NEXT_DONE && r.ms >= 900, "429 then ok: rc %d after %.0f ms (%s)", r.rc, r.ms,
           r.err.msg);
    fprintf(stderr, "  429, retry   -> answered after %.0f ms\n", r.ms);
    /* 500 four times: given up after the retries */
    expect_fail(s, "500 x4", "x", NULL);
    /* 503 once, then an answer */
    chat(s, "x", &r);
    CHECKF(r.rc == CF_NEXT_DONE, "503 then ok: %s", r.err.msg);
    expect_fail(s, "cut", "x", "Partial reply");
    expect_fail(s, "nodone", "x", "Unfinished");
    expect_fail(s, "badsse", "x", NULL);
    expect_fail(s, "badjson", "x", NULL);
    expect_fail(s, "errevent", "x", "Before");
    expect_fail(s, "html", "x", NULL);
    double t0 = cf_now_ms();
    expect_fail(s, "hang", "x", NULL);
    CHECKF(cf_now_ms() - t0 < 3000, "the timeout took %.0f ms", cf_now_ms() - t0);
    expect_fail(s, "close", "x", NULL);
    expect_ok(s, "after all that", "Hello from fake.");
    cf_session_free(s);
    stop_server();
}

/* The messages of each failure, checked one by one. */
static void test_messages(const char *exe)
{
    static const struct {
        const char *mode, *want[3];
    } cases[] = {
        {"401", {"refused", "401", "--api-key-env"}},
        {"403", {"refused", "403", "fake failure 403"}},
        {"404", {"404", "fake-model", "/show model"}},
        {"500", {"500", "gave up after 4 tries", "fake failure"}},
        {"cut", {"broke", "partial reply stays", ""}},
        {"nodone", {"ended before the reply did", "", ""}},
        {"badsse", {"malformed JSON", "", ""}},
        {"badjson", {"content is not a string", "", ""}},
        {"errevent", {"the model crashed", "", ""}},
        {"html", {"not answer with an event stream", "text/html", ""}},
        {"hang", {"sent nothing for 0.5 s", "", ""}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *modes[] = {cases[i].mode, NULL};
        int port = start_server(exe, modes);
        cf_session *s = port > 0 ? open_remote(port, "127.0.0.1", "http", 500) : NULL;
        if (!s)
            continue;
        result r;
        chat(s, "x", &r);
        for (int k = 0; k < 3; k++)
            CHECKF(has(r.err.msg, cases[i].want[k]), "%s: '%s' lacks '%s'", cases[i].mode,
                   r.err.msg, cases[i].want[k]);
        cf_session_free(s);
        stop_server();
    }
}

/* Failures of the connection itself. */
static void test_unreachable(const char *exe)
{
    /* a port nobody listens on */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd);
    result r;
    cf_session *s = open_remote(ntohs(a.sin_port), "127.0.0.1", "http", 2000);
    if (s) {
        expect_fail(s, "refused", "x", NULL);
        chat(s, "x", &r);
        CHECKF(has(r.err.msg, "cannot connect"), "%s", r.err.msg);
        cf_session_free(s);
    }
    s = open_remote(80, "no-such-host.invalid", "http", 2000);
    if (s) {
        expect_fail(s, "dns", "x", NULL);
        chat(s, "x", &r);
        CHECKF(has(r.err.msg, "DNS"), "%s", r.err.msg);
        cf_session_free(s);
    }
    /* https to a plain HTTP server */
    const char *modes[] = {"ok", NULL};
    int port = start_server(exe, modes);
    s = port > 0 ? open_remote(port, "127.0.0.1", "https", 2000) : NULL;
    if (s) {
        expect_fail(s, "tls", "x", NULL);
        chat(s, "x", &r);
        CHECKF(has(r.err.msg, "TLS"), "%s", r.err.msg);
        cf_session_free(s);
    }
    stop_server();
    /* without -m the model comes from the list, which must be readable; a
     * server not reached is a runtime failure, not a bad option */
    cf_session_params p = {.endpoint = "http://127.0.0.1:1/v1", .timeout_ms = 1000};
    cf_err err;
    CHECK(cf_session_new(&p, &s, &err) < 0 && has(err.msg, "no model given") &&
          err.code != CF_E_USAGE);
    p.endpoint = "ftp://example.com";
    p.remote_model = "m";
    CHECK(cf_session_new(&p, &s, &err) < 0 && has(err.msg, "not an http:// or https:// URL"));
}

/* What reaches the request, regeneration that fails, a stop mid-stream,
 * saving and loading. */
static void test_session(const char *exe)
{
    static const char *const modes[] = {"ok",   "ok",   "401",  "ok",   "401", "think",
                                        "tags", "json", "slow", "ok",   NULL};
    int port = start_server(exe, modes);
    cf_session *s = port > 0 ? open_remote(port, "127.0.0.1", "http", 2000) : NULL;
    if (!s)
        return;
    result r;
    cf_err err;
    char line[8192];
    chat(s, "First", &r);
    last_log(line, sizeof line);
    /* nothing given: nothing sent but the conversation */
    CHECKF(!has(line, "temperature") && !has(line, "top_k") && !has(line, "seed") &&
               !has(line, "max_tokens") && has(line, "\"model\":\"fake-model\"") &&
               has(line, "\"stream\":true"),
           "%s", line);
    const char *set[][2] = {{"temp", "0.3"}, {"top-k", "5"}, {"seed", "9"}, {"n-predict", "7"},
                            {"thinking", "off"}, {"min-p", "0.1"}, {"repeat-penalty", "1.2"}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        CHECK(cf_session_set(s, set[i][0], set[i][1], &err) == 0);
    const char *stops[] = {"END"};
    CHECK(cf_session_set_stops(s, stops, 1, &err) == 0);
    CHECK(cf_session_set_system(s, "Be brief.", &err) == 0);
    chat(s, "Second", &r);
    last_log(line, sizeof line);
    CHECKF(has(line, "\"temperature\":0.3") && has(line, "\"top_k\":5") && has(line, "\"seed\":9") &&
               has(line, "\"max_tokens\":7") && has(line, "\"enable_thinking\":false") &&
               has(line, "\"min_p\":0.1") && has(line, "\"repeat_penalty\":1.2") &&
               has(line, "\"repetition_penalty\":1.2") &&
               has(line, "\"stop\":[\"END\"]") && !has(line, "top_p") &&
               has(line, "{\"role\":\"system\",\"content\":\"Be brief.\"}") &&
               has(line, "{\"role\":\"assistant\",\"content\":\"Hello from fake.\"}"),
           "%s", line);
    CHECK(!has(line, "SECRET"));
    CHECK(cf_session_set(s, "probs", "on", &err) < 0 && has(err.msg, "remote"));
    /* /regen that fails: the old reply comes back */
    CHECK(cf_session_regen(s, &err) == 0);
    cf_reply_part part;
    int rc;
    while ((rc = cf_session_next_part(s, &part, &err)) == CF_NEXT_TOKEN)
        ;
    cf_session_end_reply(s, false);
    CHECKF(rc < 0 && has(err.msg, "401"), "regen: %d %s", rc, err.msg);
    CHECK(cf_session_n_messages(s) == 5 && !strcmp(last(s)->content, "Hello from fake.") &&
          cf_session_n_branches(s) == 1);
    /* a /regen that works: the old reply stays on its branch */
    CHECK(cf_session_regen(s, &err) == 0);
    while ((rc = cf_session_next_part(s, &part, &err)) == CF_NEXT_TOKEN)
        ;
    cf_session_end_reply(s, false);
    CHECKF(rc == CF_NEXT_DONE && cf_session_n_branches(s) == 2 && cf_session_n_messages(s) == 5,
           "regen: %d, %d branches (%s)", rc, cf_session_n_branches(s), err.msg);
    /* an edit whose reply fails before it begins: its branch goes */
    CHECK(cf_session_edit(s, 3, "Second, edited", &err) == 0);
    while ((rc = cf_session_next_part(s, &part, &err)) == CF_NEXT_TOKEN)
        ;
    cf_session_end_reply(s, false);
    CHECKF(rc < 0 && cf_session_n_branches(s) == 2 && cf_session_n_messages(s) == 5 &&
               !strcmp(cf_session_message(s, 3)->content, "Second"),
           "edit: %d, %d branches, %d messages", rc, cf_session_n_branches(s),
           cf_session_n_messages(s));
    /* a switch: the transcript is all there is to take in */
    int reused = -1, prefilled = -1;
    CHECK(cf_session_switch(s, "1", &reused, &prefilled, &err) == 0 && reused == 0 &&
          prefilled == 0 && cf_session_n_messages(s) == 5);
    CHECK(cf_session_switch(s, "2", &reused, &prefilled, &err) == 0);
    /* reasoning as reasoning_content, and as a <think> block */
    chat(s, "Think", &r);
    CHECKF(!strcmp(r.reasoning, "Let me think. Done.") && !strcmp(last(s)->reasoning, "Let me think. Done.") &&
               !strcmp(last(s)->content, "Hello from fake."),
           "think: '%s' '%s'", r.reasoning, r.content);
    chat(s, "Tags", &r);
    CHECKF(!strcmp(last(s)->reasoning, "hmm") && !strcmp(last(s)->content, "Answer."),
           "tags: '%s' '%s'", last(s)->reasoning, last(s)->content);
    chat(s, "Whole", &r);
    CHECK(!strcmp(last(s)->content, "Whole answer.") &&
          cf_session_last_stats(s)->stop == CF_STOP_N_PREDICT);
    /* a stop mid-stream closes the connection at once */
    CHECK(cf_session_begin_reply(s, "Slow", &err) == 0);
    int ticks = 0;
    while (ticks < 5 && (rc = cf_session_next_part(s, &part, &err)) == CF_NEXT_TOKEN)
        ticks += *part.content != 0;
    double t0 = cf_now_ms();
    cf_session_end_reply(s, true);
    double stop_ms = cf_now_ms() - t0;
    fprintf(stderr, "  stop        -> closed in %.2f ms\n", stop_ms);
    CHECKF(stop_ms < 100, "closing took %.1f ms", stop_ms);
    CHECK(last(s)->cut && has(last(s)->content, "tick tick"));
    for (int i = 0; i < 100 && (last_log(line, sizeof line), !has(line, "closed by the client")); i++)
        usleep(20000);
    CHECKF(has(line, "closed by the client"), "%s", line);
    /* the file: transcript and server, no key */
    char path[300];
    snprintf(path, sizeof path, "%s/remote.session", dir);
    CHECK(cf_session_save(s, path, &err) == 0);
    FILE *f = fopen(path, "rb");
    char *bytes = calloc(1, 1 << 20);
    size_t n = f && bytes ? fread(bytes, 1, (1 << 20) - 1, f) : 0;
    if (f)
        fclose(f);
    CHECK(bytes && n > 0 && !memmem(bytes, n, "SECRET", 6) && memmem(bytes, n, "fake-model", 10));
    free(bytes);
    cf_session_origin org;
    CHECK(cf_session_file_origin(path, &org, &err) == 0 && has(org.endpoint, "127.0.0.1") &&
          !strcmp(org.model, "fake-model"));
    cf_session_origin_free(&org);
    int n_msgs = cf_session_n_messages(s);
    /* into a fresh remote session */
    cf_session *t = open_remote(port, "127.0.0.1", "http", 2000);
    if (t) {
        CHECKF(cf_session_load(t, path, &err) == 0, "%s", err.msg);
        CHECK(cf_session_n_messages(t) == n_msgs && last(t)->cut &&
              !cf_session_setting_is_default(t, "temp"));
        expect_ok(t, "loaded remote", "Hello from fake.");
        cf_session_free(t);
    }
    /* into a local model: rendered and prefilled afresh */
    if (shared_dir()) {
        cf_session_params lp = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                                .n_ctx = 1024, .n_threads = 1};
        CHECK(cf_session_new(&lp, &t, &err) == 0);
        CHECKF(cf_session_load(t, path, &err) == 0, "%s", err.msg);
        CHECK(cf_session_n_messages(t) == n_msgs &&
              !strcmp(cf_session_message(t, 1)->content, "First"));
        int nt;
        cf_session_tokens(t, &nt);
        CHECK(nt == 0);
        chat(t, "Local now", &r);
        CHECKF(r.rc == CF_NEXT_DONE && cf_session_last_stats(t)->prompt_tokens > 50,
               "local after remote: %d (%s)", cf_session_last_stats(t)->prompt_tokens, r.err.msg);
        char local[300];
        snprintf(local, sizeof local, "%s/local.session", dir);
        CHECK(cf_session_save(t, local, &err) == 0);
        cf_session_free(t);
        /* and a local file into a remote session: its transcript */
        if ((t = open_remote(port, "127.0.0.1", "http", 2000))) {
            CHECKF(cf_session_load(t, local, &err) == 0, "%s", err.msg);
            CHECK(cf_session_n_messages(t) == n_msgs + 2);
            expect_ok(t, "local file, remote chat", "Hello from fake.");
            cf_session_free(t);
        }
        unlink(local);
    }
    unlink(path);
    cf_session_free(s);
    stop_server();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    cf_err err;
    cf_session_params probe = {.endpoint = "http://127.0.0.1:1/v1", .remote_model = "m"};
    cf_session *s;
    if (cf_session_new(&probe, &s, &err) < 0 && has(err.msg, "not built in")) {
        fprintf(stderr, "%s: skipped\n", err.msg);
        return TEST_SKIP;
    }
    cf_session_free(s);
    snprintf(dir, sizeof dir, "%s/confab-remote-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    snprintf(portfile, sizeof portfile, "%s/port", dir);
    snprintf(logfile, sizeof logfile, "%s/log", dir);
    test_failures(argv[1]);
    test_messages(argv[1]);
    test_unreachable(argv[1]);
    test_session(argv[1]);
    unlink(portfile);
    unlink(logfile);
    rmdir(dir);
    return test_summary("remote-failures");
}
