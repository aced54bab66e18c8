/* `confab serve --parallel`: a long prompt is evaluated between the steps
 * of a reply already generating, not in one stretch that stalls it (the
 * test delays make each layer of a prompt's batch 100 ms and each piece
 * of a reply 20 ms, so the figures are the scheduler's, not the machine's
 * load); GET /slots; a client that leaves mid-reply cuts its own slot's
 * reply alone; a client continuing its chat finds it in the slot that
 * holds it; and the options' errors. */
#include <poll.h>

#include "serve_util.h"

/* A streamed request's data events as they come: the time of each read
 * that held one, in ms from t0. */
typedef struct stream_times {
    int fd;
    double t[4096];
    int n;
    bool done;
} stream_times;

static int open_stream(int port, const char *body)
{
    size_t n;
    char *raw = chat_request(body, &n);
    int fd = connect_to(port);
    if (fd >= 0)
        send(fd, raw, n, MSG_NOSIGNAL);
    free(raw);
    return fd;
}

/* Read what s has for up to ms, noting when events came. */
static void pump(stream_times *s, double t0, int ms)
{
    char buf[8192];
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    if (s->done || poll(&p, 1, ms) <= 0)
        return;
    ssize_t k = recv(s->fd, buf, sizeof buf - 1, 0);
    if (k <= 0) {
        s->done = true;
        return;
    }
    buf[k] = '\0';
    if (strstr(buf, "data: ") && s->n < 4096)
        s->t[s->n++] = cf_now_ms() - t0;
    s->done = strstr(buf, "[DONE]") != NULL;
}

static void test_interleaved(const char *dir)
{
    char *env[] = {"CONFAB_TEST_PREFILL_DELAY_MS=100", "CONFAB_TEST_TOKEN_DELAY_MS=20", NULL};
    char *args[] = {"-np", "2", "-c", "2048", NULL};
    server sv;
    if (start_with(&sv, dir, "interleaved", env, args)) {
        CHECKF(0, "confab serve did not start");
        return;
    }
    double t0 = cf_now_ms();
    stream_times a = {.fd = open_stream(sv.port, "{\"messages\":[{\"role\":\"user\",\"content\":"
                                                 "\"Hi\"}],\"max_tokens\":600,\"stream\":true}")};
    while (a.n < 5 && !a.done && cf_now_ms() - t0 < 20000)
        pump(&a, t0, 100);
    /* a prompt of some 800 tokens: 7 batches of 128, 5 layers each */
    char body[8192];
    size_t k = (size_t)snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"");
    for (int i = 0; i < 400; i++)
        k += (size_t)snprintf(body + k, sizeof body - k, "a b ");
    snprintf(body + k, sizeof body - k, "\"}],\"max_tokens\":2,\"stream\":true}");
    const double sent = cf_now_ms() - t0;
    stream_times b = {.fd = open_stream(sv.port, body)};
    while (b.n == 0 && !b.done && cf_now_ms() - t0 < 60000) {
        pump(&a, t0, 10);
        pump(&b, t0, 10);
    }
    const double first_b = b.n ? b.t[0] : cf_now_ms() - t0;
    double gap = 0, last = sent;
    int during = 0;
    for (int i = 0; i < a.n; i++)
        if (a.t[i] > sent && a.t[i] <= first_b) {
            gap = a.t[i] - last > gap ? a.t[i] - last : gap;
            last = a.t[i];
            during++;
        }
    gap = first_b - last > gap ? first_b - last : gap;
    fprintf(stderr, "a prompt of ~800 tokens took %.0f ms; the reply beside it got %d pieces "
            "meanwhile, %.0f ms apart at most\n", first_b - sent, during, gap);
    CHECKF(first_b - sent > 2500, "the long prompt took only %.0f ms", first_b - sent);
    CHECKF(during >= 3 && gap < (first_b - sent) / 2,
           "the reply beside the prompt waited %.0f ms of %.0f (%d pieces)", gap, first_b - sent,
           during);
    response r;
    CHECK(request(sv.port, "GET", "/slots", NULL, true, &r) == 0 && r.status == 200 &&
          strstr(r.body, "\"id\":1,\"n_ctx\":1024") && strstr(r.body, "\"state\":\"generating\""));
    response_free(&r);
    close(b.fd);
    /* another reply beside a's, then a's client goes: a's slot alone stops */
    stream_times c = {.fd = open_stream(sv.port, "{\"messages\":[{\"role\":\"user\",\"content\":"
                                                 "\"Go\"}],\"max_tokens\":60,\"stream\":true}")};
    const double c0 = cf_now_ms() - t0;
    while (c.n < 3 && !c.done && cf_now_ms() - t0 < c0 + 20000) {
        pump(&a, t0, 10);
        pump(&c, t0, 10);
    }
    close(a.fd);
    while (!c.done && cf_now_ms() - t0 < c0 + 30000)
        pump(&c, t0, 100);
    CHECKF(c.done && c.n > 3, "the reply beside the one cut did not finish (%d events)", c.n);
    CHECK(WIFEXITED(stop(&sv)));
    CHECK(log_has(&sv, "cut: the client went away"));
}

/* Three clients' chats, each turn sent in turn: every turn after the
 * first goes to the slot that holds its chat (the cache keeps the whole
 * conversation before the new message), whatever slot went idle first. */
static void test_continuing(const char *dir)
{
    char *args[] = {"-np", "3", "-c", "3072", NULL};
    server sv;
    if (start_with(&sv, dir, "continuing", NULL, args)) {
        CHECKF(0, "confab serve did not start");
        return;
    }
    enum { CHATS = 3, TURNS = 4 };
    char convo[CHATS][6000];
    int misses = 0, before[CHATS] = {0};
    for (int c = 0; c < CHATS; c++)
        snprintf(convo[c], sizeof convo[c], "{\"role\":\"user\",\"content\":\"Chat %d: tell me "
                 "about the sea and the stars and the small boat.\"}", c);
    for (int t = 0; t < TURNS; t++)
        for (int c = 0; c < CHATS; c++) {
            char body[6200];
            snprintf(body, sizeof body, "{\"messages\":[%.6000s],\"max_tokens\":6,\"temperature\":0}",
                     convo[c]);
            response r;
            /* the last reply's slot is idle again (it may still be closing
             * its connection when the client has the reply; on a loaded
             * machine for seconds): else a busy slot, not a miss */
            bool idle = false;
            for (int w = 0; w < 1000 && !idle; w++) {
                idle = request(sv.port, "GET", "/slots", NULL, true, &r) == 0 &&
                       !strstr(r.body, "\"is_processing\":true");
                response_free(&r);
                if (!idle)
                    usleep(10000);
            }
            CHECKF(idle, "chat %d turn %d: a slot still busy after 10 s", c, t);
            cf_oai_chunk ch = {0};
            bool ok = request(sv.port, "POST", "/v1/chat/completions", body, true, &r) == 0 &&
                      read_whole(&r, &ch);
            CHECK(ok);
            if (!ok)
                continue;
            const int prompt = ch.usage.prompt_tokens, cached = ch.usage.cached_tokens;
            /* all but the new user message and the turn markers around it */
            /* the whole conversation the last turn saw, its reply too */
            if (t > 0 && cached < before[c])
                fprintf(stderr, "chat %d turn %d: %d of the last prompt's %d tokens cached (prompt %d)\n", c, t,
                        cached, before[c], prompt);
            misses += t > 0 && cached < before[c];
            before[c] = prompt;
            size_t k = strlen(convo[c]);
            k += (size_t)snprintf(convo[c] + k, sizeof convo[c] - k,
                                  ",{\"role\":\"assistant\",\"content\":\"");
            for (const char *p = ch.content; *p && k + 8 < sizeof convo[c]; p++)
                k += (size_t)((unsigned char)*p < 0x20 || *p == '"' || *p == '\\'
                                  ? snprintf(convo[c] + k, sizeof convo[c] - k, "\\u%04x", *p)
                                  : snprintf(convo[c] + k, sizeof convo[c] - k, "%c", *p));
            snprintf(convo[c] + k, sizeof convo[c] - k,
                     "\"},{\"role\":\"user\",\"content\":\"And then, part %d?\"}", t + 1);
            cf_oai_chunk_free(&ch);
            response_free(&r);
        }
    CHECKF(misses == 0, "%d of %d continued chats missed their slot's cache", misses,
           CHATS * (TURNS - 1));
    CHECK(WIFEXITED(stop(&sv)));
}

/* confab serve ARGS... exits with status 2 and says msg. */
static void refused(const char *dir, const char *args, const char *msg)
{
    char cmd[1024], out[300];
    snprintf(out, sizeof out, "%s/refused.log", dir);
    snprintf(cmd, sizeof cmd, "'%s' serve -m '%s' --port 0 %s 2>'%s'", getenv("CONFAB_BIN"),
             shared_path("models/stories260K-chatml.gguf"), args, out);
    int status = system(cmd);
    FILE *f = fopen(out, "r");
    char text[1024] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 2 && strstr(text, msg),
           "serve %s: status %d, '%s' lacks '%s'", args, status, text, msg);
}

int main(void)
{
    if (!shared_dir() || !getenv("CONFAB_BIN"))
        return TEST_SKIP;
    signal(SIGPIPE, SIG_IGN);
    char dir[256];
    if (test_dir(dir, sizeof dir, "slots"))
        return 1;
    test_interleaved(dir);
    test_continuing(dir);
    refused(dir, "-np 0", "--parallel");
    refused(dir, "--parallel 65", "--parallel");
    refused(dir, "-np 2 --lookup", "--parallel 1 only");
    refused(dir, "-c 40 -np 4", "leaves 10 tokens a slot");
    return test_end(dir, "remote-slots");
}
