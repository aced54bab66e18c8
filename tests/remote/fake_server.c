/* A chat completions server that misbehaves on purpose, for the remote
 * engine's failure tests.
 *
 *   fake_server PORTFILE LOGFILE MODE...
 *
 * Listens on 127.0.0.1 (any free port, written to PORTFILE), answers
 * GET .../models with one model, "fake-model", and each POST with the
 * next MODE (the last one repeats):
 *   ok        a stream: "Hello", " from", " fake." then usage and [DONE]
 *   think     reasoning_content deltas, then content
 *   tags      the content "<think>hmm</think>Answer." (no reasoning parser)
 *   json      one JSON body, as a server that ignores "stream" sends
 *   slow      200 chunks "tick " 20 ms apart
 *   NNN       status NNN with a JSON error body (Retry-After: 0 for 5xx)
 *   429       status 429 with Retry-After: 1
 *   cut       two chunks, then the connection is reset mid-stream
 *   nodone    a whole reply without finish_reason or [DONE], then close
 *   badsse    a chunk, then an event whose data is not JSON
 *   badjson   a chunk whose content is a number
 *   errevent  a chunk, then llama-server's "error:" line
 *   html      a 200 with a web page (a proxy's login page, say)
 *   hang      read the request, then say nothing until the client leaves
 *   close     close the connection without a word
 * Each POST body is appended to LOGFILE as one line; a stream the client
 * closed early adds a line "closed by the client after N chunks".  A TLS
 * handshake gets the plain "400 Bad Request" an HTTP server answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static FILE *log_file;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int sends(int fd, const char *s)
{
    return send_all(fd, s, strlen(s));
}

/* The request: its head and Content-Length body; the path into path. */
static char *read_request(int fd, char *path, size_t path_n)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    char *head_end = NULL;
    size_t body_len = 0;
    for (;;) {
        if (n == cap) {
            buf = realloc(buf, (cap *= 2) + 1);
        }
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = 0;
        if (buf[0] == 0x16) { /* a TLS handshake: answer as a plain HTTP server does */
            sends(fd, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
            break;
        }
        if (!head_end && (head_end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = strcasestr(buf, "Content-Length:");
            body_len = cl && cl < head_end ? strtoul(cl + 15, NULL, 10) : 0;
        }
        if (head_end && n >= (size_t)(head_end + 4 - buf) + body_len)
            break;
    }
    if (!head_end) {
        free(buf);
        return NULL;
    }
    sscanf(buf, "%*s %255s", path);
    (void)path_n;
    return buf;
}

static const char *chunk_head = "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"fake-model\",";

static int delta(int fd, const char *field, const char *text)
{
    char line[512];
    snprintf(line, sizeof line,
             "%s\"choices\":[{\"index\":0,\"delta\":{\"%s\":\"%s\"},\"finish_reason\":null}]}\n\n",
             chunk_head, field, text);
    return sends(fd, line);
}

static int finish(int fd, const char *reason)
{
    char line[512];
    snprintf(line, sizeof line,
             "%s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}],"
             "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":3,\"total_tokens\":14}}\n\n"
             "data: [DONE]\n\n",
             chunk_head, reason);
    return sends(fd, line);
}

static void stream_head(int fd)
{
    sends(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
}

static void status(int fd, int code, const char *extra)
{
    char body[256], head[512];
    snprintf(body, sizeof body, "{\"error\":{\"message\":\"fake failure %d\",\"type\":\"test\"}}",
             code);
    snprintf(head, sizeof head,
             "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n%s\r\n",
             code, strlen(body), extra);
    sends(fd, head);
    sends(fd, body);
}

/* Answer a POST; false when it closed the connection itself. */
static bool answer(int fd, const char *mode)
{
    if (!strcmp(mode, "ok") || !strcmp(mode, "think") || !strcmp(mode, "tags")) {
        stream_head(fd);
        sends(fd, ": keep-alive\n\n");
        if (!strcmp(mode, "think")) {
            delta(fd, "reasoning_content", "Let me think.");
            delta(fd, "reasoning_content", " Done.");
        }
        if (!strcmp(mode, "tags")) {
            delta(fd, "content", "<think>hmm</think>");
            delta(fd, "content", "Answer.");
        } else {
            delta(fd, "content", "Hello");
            delta(fd, "content", " from");
            delta(fd, "content", " fake.");
        }
        finish(fd, "stop");
    } else if (!strcmp(mode, "json")) {
        const char *body = "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
                           "\"message\":{\"role\":\"assistant\",\"content\":\"Whole answer.\"},"
                           "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5,"
                           "\"completion_tokens\":2,\"total_tokens\":7}}";
        char head[256];
        snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
        sends(fd, head);
        sends(fd, body);
    } else if (!strcmp(mode, "slow")) {
        stream_head(fd);
        int i;
        for (i = 0; i < 200; i++) {
            if (delta(fd, "content", "tick ") < 0)
                break;
            sleep_ms(20);
        }
        if (i < 200) {
            fprintf(log_file, "closed by the client after %d chunks\n", i);
            fflush(log_file);
        } else {
            finish(fd, "stop");
        }
    } else if (!strcmp(mode, "429")) {
        status(fd, 429, "Retry-After: 1\r\n");
    } else if (mode[0] >= '1' && mode[0] <= '5' && strlen(mode) == 3) {
        int code = atoi(mode);
        status(fd, code, code >= 500 ? "Retry-After: 0\r\n" : "");
    } else if (!strcmp(mode, "cut")) {
        stream_head(fd);
        delta(fd, "content", "Partial");
        delta(fd, "content", " reply");
        sleep_ms(50); /* read by then: the reset comes after the text */
        struct linger hard = {1, 0}; /* closing now resets the connection */
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
        close(fd);
        return false;
    } else if (!strcmp(mode, "nodone")) {
        stream_head(fd);
        delta(fd, "content", "Unfinished");
    } else if (!strcmp(mode, "badsse")) {
        stream_head(fd);
        sends(fd, "data: {this is not json}\n\n");
    } else if (!strcmp(mode, "badjson")) {
        stream_head(fd);
        sends(fd, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":42}}]}\n\n");
    } else if (!strcmp(mode, "errevent")) {
        stream_head(fd);
        delta(fd, "content", "Before");
        sends(fd, "error: {\"code\":500,\"message\":\"the model crashed\",\"type\":\"server_error\"}\n\n");
    } else if (!strcmp(mode, "html")) {
        sends(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
                  "<html><body>Please log in</body></html>\n");
    } else if (!strcmp(mode, "hang")) {
        char c;
        while (recv(fd, &c, 1, 0) > 0)
            ;
    }
    /* close: nothing at all */
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fake_server PORTFILE LOGFILE MODE...\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    log_file = fopen(argv[2], "a");
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (!log_file || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 16) ||
        getsockname(lfd, (struct sockaddr *)&a, &al)) {
        perror("fake_server");
        return 1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *pf = fopen(tmp, "w");
    fprintf(pf, "%d\n", ntohs(a.sin_port));
    fclose(pf);
    rename(tmp, argv[1]); /* whole or not at all */
    int next = 3;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        char path[256] = "";
        char *req = read_request(fd, path, sizeof path);
        if (req && strstr(path, "/models")) {
            const char *body = "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\"}]}";
            char head[256];
            snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n", strlen(body));
            sends(fd, head);
            sends(fd, body);
        } else if (req) {
            char *body = strstr(req, "\r\n\r\n");
            fprintf(log_file, "%s\n", body ? body + 4 : "");
            fflush(log_file);
            bool open = answer(fd, argv[next]);
            if (next + 1 < argc)
                next++;
            if (!open) {
                free(req);
                continue;
            }
        }
        free(req);
        shutdown(fd, SHUT_RDWR);
        close(fd);
    }
}
