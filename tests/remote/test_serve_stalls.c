/* What must not stall `confab serve`, each with a time bound:
 *   - a request of 10,001 messages is answered in seconds (a path that
 *     rendered each turn's prefix again took 141 s);
 *   - a client that half-closes after its request (shutdown(SHUT_WR), as
 *     nc -N and some proxies do) gets its reply, streamed or whole;
 *   - 300 idle sockets lock nobody out: the silent ones give way to a
 *     client that speaks, and time out after 5 s with a 408 they can read;
 *   - a 503 for too many half-sent requests from one address arrives
 *     whole, not lost to a reset. */
#include <poll.h>

#include "serve_util.h"

static const char *const HI = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                              "\"max_tokens\":3%s}";

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* What arrives on fd until the server closes it or ms pass (malloc'ed). */
static char *read_until_close(int fd, int ms)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    double end = cf_now_ms() + ms;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int left = (int)(end - cf_now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        ssize_t got = recv(fd, buf + len, cap - len, 0);
        if (got <= 0)
            break;
        len += (size_t)got;
        if (cap - len < 4096)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    buf[len] = '\0';
    return buf;
}

static void test_many_messages(int port)
{
    enum { N = 10001 };
    size_t cap = (size_t)N * 64 + 256, k = 0;
    char *body = malloc(cap);
    k += (size_t)snprintf(body + k, cap - k, "{\"max_tokens\":2,\"messages\":[");
    for (int i = 0; i < N; i++)
        k += (size_t)snprintf(body + k, cap - k, "%s{\"role\":\"%s\",\"content\":\"turn %d\"}",
                              i ? "," : "", i % 2 ? "assistant" : "user", i);
    snprintf(body + k, cap - k, "]}");
    double t0 = cf_now_ms();
    response r;
    CHECK(request(port, "POST", "/v1/chat/completions", body, true, &r) == 0 && r.status == 200);
    double ms = cf_now_ms() - t0;
    fprintf(stderr, "%d messages (%zu bytes) answered in %.0f ms\n", N, strlen(body), ms);
    CHECKF(ms < 8000, "%d messages took %.0f ms", N, ms);
    response_free(&r);
    free(body);
}

static void test_half_close(int port)
{
    for (int stream = 0; stream < 2; stream++) {
        char body[256];
        snprintf(body, sizeof body, HI, stream ? ",\"stream\":true" : "");
        size_t len;
        char *raw = chat_request(body, &len);
        int fd = connect_to(port);
        CHECK(fd >= 0 && send_all(fd, raw, len) == 0 && shutdown(fd, SHUT_WR) == 0);
        char *got = read_until_close(fd, 10000);
        /* a half-close during the prompt is answered "102 Processing" first
         * (the server's probe for a closed socket), which clients skip */
        const char *head = got;
        if (!strncmp(head, "HTTP/1.1 102 ", 13) && strstr(head, "\r\n\r\n"))
            head = strstr(head, "\r\n\r\n") + 4;
        CHECKF(!strncmp(head, "HTTP/1.1 200", 12) &&
                   strstr(head, stream ? "data: [DONE]" : "\"finish_reason\""),
               "half-closed, %s: got '%.80s'", stream ? "streamed" : "whole", got);
        close(fd);
        free(got);
        free(raw);
    }
}

static void test_idle(int port)
{
    enum { IDLE = 300 };
    int fds[IDLE];
    for (int i = 0; i < IDLE; i++)
        fds[i] = connect_to(port);
    usleep(200000);
    char body[256];
    snprintf(body, sizeof body, HI, "");
    double t0 = cf_now_ms();
    response r;
    CHECK(request(port, "POST", "/v1/chat/completions", body, true, &r) == 0 && r.status == 200);
    double ms = cf_now_ms() - t0;
    response_free(&r);
    fprintf(stderr, "a request beside %d idle sockets answered in %.0f ms\n", IDLE, ms);
    CHECKF(ms < 2000, "a request beside %d idle sockets waited %.0f ms", IDLE, ms);
    /* every idle one is told why it goes: at once, or after 5 s */
    int told = 0;
    t0 = cf_now_ms();
    for (int i = 0; i < IDLE; i++) {
        char *got = read_until_close(fds[i], 8000);
        told += !strncmp(got, "HTTP/1.1 408", 12) && strstr(got, "\"error\"");
        free(got);
        close(fds[i]);
    }
    ms = cf_now_ms() - t0;
    CHECKF(told == IDLE, "%d of %d idle sockets read their 408", told, IDLE);
    CHECKF(ms > 3000 && ms < 8000, "the idle sockets went after %.0f ms", ms);
}

static void test_busy_503(int port)
{
    enum { SLOW = 40 };
    int fds[SLOW];
    for (int i = 0; i < SLOW; i++) { /* a byte each, then nothing */
        fds[i] = connect_to(port);
        send_all(fds[i], "P", 1);
    }
    usleep(200000);
    char body[256];
    snprintf(body, sizeof body, HI, "");
    size_t len;
    char *raw = chat_request(body, &len);
    int fd = connect_to(port);
    CHECK(send_all(fd, raw, len) == 0);
    char *got = read_until_close(fd, 5000);
    CHECKF(!strncmp(got, "HTTP/1.1 503", 12) && strstr(got, "too many connections"),
           "beside %d half-sent requests: got '%.80s'", SLOW, got);
    free(got);
    free(raw);
    close(fd);
    for (int i = 0; i < SLOW; i++)
        close(fds[i]);
}

int main(void)
{
    if (!shared_dir() || !getenv("CONFAB_BIN"))
        return TEST_SKIP;
    signal(SIGPIPE, SIG_IGN);
    char dir[256];
    if (test_dir(dir, sizeof dir, "stalls"))
        return 1;
    server sv;
    char *args[] = {"-c", "2048", NULL};
    if (start_with(&sv, dir, "serve", NULL, args)) {
        CHECKF(0, "confab serve did not start");
        return test_summary("remote-stalls");
    }
    test_many_messages(sv.port);
    test_half_close(sv.port);
    test_idle(sv.port);
    test_busy_503(sv.port);
    int status = stop(&sv);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve ended with status %d", status);
    return test_end(dir, "remote-stalls");
}
