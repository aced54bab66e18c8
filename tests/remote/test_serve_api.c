/* `confab serve` in the shapes real clients read (the official SDKs'
 * types and stream helpers), over raw sockets:
 *   - the first stream chunk names the role; usage comes in a chunk of its
 *     own with no choices, only when stream_options.include_usage asks;
 *     system_fingerprint, choices[].logprobs null, message.refusal null;
 *   - logprobs and top_logprobs, streamed and whole;
 *   - errors: code a string with param ("model_not_found" for an unknown
 *     model, of type invalid_request_error; "invalid_api_key"), the paths
 *     confab does not serve named as such, GET /v1/models/{id};
 *   - /v1/completions, whole and streamed, as `confab complete` continues;
 *     /v1/responses, whole and as its events;
 *   - JSON output on each API, tools refused where the template renders none;
 *   - CORS preflights and headers, HEAD, a leading CRLF, a long
 *     Authorization header compared whole, a body of exactly 8 MiB;
 *   - SIGTERM mid-stream ends the stream with an error event and [DONE]. */
#include "serve_util.h"

static const char *const HI = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                              "\"max_tokens\":4,\"temperature\":0";

static void post(int port, const char *extra, response *r)
{
    char body[1024];
    snprintf(body, sizeof body, "%s%s}", HI, extra);
    request(port, "POST", "/v1/chat/completions", body, true, r);
}

/* The data lines of a stream, in order. */
static int events(const char *body, char ev[][2048], int cap)
{
    int n = 0;
    for (const char *p = body; (p = strstr(p, "data: ")) && n < cap; n++) {
        p += 6;
        const char *end = strstr(p, "\n\n");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        snprintf(ev[n], 2048, "%.*s", (int)(len < 2047 ? len : 2047), p);
        p += len;
    }
    return n;
}

static void test_shapes(int port)
{
    static char ev[64][2048];
    response r;
    post(port, ",\"stream\":true", &r);
    int n = events(r.body, ev, 64);
    CHECKF(r.status == 200 && n >= 3 && strstr(ev[0], "\"delta\":{\"role\":\"assistant\"") &&
               strstr(ev[0], "\"system_fingerprint\":\"fp_confab_") &&
               strstr(ev[0], "\"logprobs\":null") && !strcmp(ev[n - 1], "[DONE]") &&
               strstr(ev[n - 2], "\"finish_reason\":\"length\"") && !strstr(r.body, "usage"),
           "a stream without include_usage: %s", r.body);
    for (int i = 1; i < n - 1; i++)
        CHECKF(!strstr(ev[i], "role"), "chunk %d names the role again: %s", i, ev[i]);
    response_free(&r);
    post(port, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}", &r);
    n = events(r.body, ev, 64);
    CHECKF(n >= 4 && strstr(ev[n - 2], "\"choices\":[]") && strstr(ev[n - 2], "\"usage\":{") &&
               !strstr(ev[n - 3], "usage") && strstr(ev[n - 3], "\"finish_reason\""),
           "a stream with include_usage: %s", r.body);
    response_free(&r);
    post(port, "", &r);
    CHECKF(r.status == 200 && strstr(r.body, "\"message\":{\"role\":\"assistant\",\"content\":") &&
               strstr(r.body, "\"refusal\":null") && strstr(r.body, "\"logprobs\":null") &&
               strstr(r.body, "\"usage\":{") && strstr(r.body, "\"system_fingerprint\""),
           "a whole reply: %s", r.body);
    response_free(&r);
    /* honoured: log probabilities; a seed to 2^64-1 */
    post(port, ",\"logprobs\":true,\"top_logprobs\":2,\"seed\":18446744073709551615", &r);
    CHECKF(r.status == 200 && strstr(r.body, "\"logprobs\":{\"content\":[{\"token\":") &&
               strstr(r.body, "\"top_logprobs\":[{\"token\":") && strstr(r.body, "\"bytes\":["),
           "logprobs: %s", r.body);
    response_free(&r);
    /* top_logprobs to 20: every alternative of a distribution no filter narrowed */
    post(port, ",\"logprobs\":true,\"top_logprobs\":20,\"temperature\":1,\"top_k\":0,"
               "\"top_p\":1,\"min_p\":0,\"max_tokens\":1", &r);
    int alts = 0;
    for (const char *p = strstr(r.body, "\"top_logprobs\":["); p && (p = strstr(p + 1, "\"logprob\":"));)
        alts++;
    CHECKF(r.status == 200 && alts == 20, "top_logprobs 20: %d logprobs: %s", alts, r.body);
    response_free(&r);
    post(port, ",\"logprobs\":true,\"top_logprobs\":21", &r);
    CHECKF(r.status == 400 && strstr(r.body, "\"param\":\"top_logprobs\""), "top_logprobs 21: %s",
           r.body);
    response_free(&r);
    /* n: 3 choices, each from the same prompt, streamed each with its role */
    post(port, ",\"n\":3,\"temperature\":1,\"seed\":5,\"logprobs\":true", &r);
    CHECKF(r.status == 200 && strstr(r.body, "{\"index\":0,\"message\"") &&
               strstr(r.body, "{\"index\":1,\"message\"") &&
               strstr(r.body, "{\"index\":2,\"message\"") && strstr(r.body, "\"completion_tokens\":12"),
           "n: 3: %s", r.body);
    response_free(&r);
    post(port, ",\"n\":2,\"stream\":true", &r);
    CHECKF(r.status == 200 && strstr(r.body, "{\"index\":1,\"delta\":{\"role\":\"assistant\"") &&
               strstr(r.body, "{\"index\":1,\"delta\":{},\"logprobs\":null,\"finish_reason\""),
           "n: 2 streamed: %s", r.body);
    response_free(&r);
    /* logit_bias: token 300 forced, a token outside the vocabulary refused */
    post(port, ",\"logprobs\":true,\"logit_bias\":{\"300\":100}", &r);
    const char *tok = strstr(r.body, "\"token\":\"");
    char piece[64] = "", forced[200];
    if (tok)
        snprintf(piece, sizeof piece, "%.*s", (int)strcspn(tok + 9, "\""), tok + 9);
    snprintf(forced, sizeof forced, "\"content\":\"%s%s%s%s\"", piece, piece, piece, piece);
    CHECKF(r.status == 200 && *piece && strstr(r.body, forced), "logit_bias +100: %s", r.body);
    response_free(&r);
    post(port, ",\"logit_bias\":{\"99999\":-100}", &r);
    CHECKF(r.status == 400 && strstr(r.body, "logit_bias: token 99999 is not in the vocabulary"),
           "a bias outside the vocabulary: %s", r.body);
    response_free(&r);
    post(port, ",\"logprobs\":true,\"stream\":true", &r);
    CHECKF(r.status == 200 && strstr(r.body, "\"logprobs\":{\"content\":[{\"token\":") &&
               strstr(r.body, "\"top_logprobs\":[]"),
           "streamed logprobs: %s", r.body);
    response_free(&r);
}

static void expect(int port, const char *raw, int status, const char *want, const char *what)
{
    response r;
    exchange_raw(port, raw, strlen(raw), &r);
    CHECKF(r.status == status && strstr(r.text, want), "%s: %d, wanted %d with '%s': %s", what,
           r.status, status, want, r.text);
    response_free(&r);
}

static void test_errors(int port)
{
    char raw[2048];
    size_t n;
    char *q = chat_request("{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":"
                           "\"x\"}]}", &n);
    expect(port, q, 404, "\"type\":\"invalid_request_error\",\"param\":\"model\",\"code\":"
           "\"model_not_found\"", "an unknown model");
    free(q);
    q = chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":17}", &n);
    expect(port, q, 400, "\"param\":\"n\"", "n: 17");
    free(q);
    expect(port, "GET /v1/models HTTP/1.1\r\n\r\n", 401, "\"code\":\"invalid_api_key\"", "no key");
    /* a key with more after it is not the key, however long the header */
    char longer[700];
    memset(longer, 'k', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    snprintf(raw, sizeof raw, "GET /v1/models HTTP/1.1\r\nAuthorization: Bearer %s%s\r\n\r\n", KEY,
             longer);
    expect(port, raw, 401, "invalid_api_key", "a longer key");
    snprintf(raw, sizeof raw, "GET /v1/models/tiny HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n",
             KEY);
    expect(port, raw, 200, "{\"id\":\"tiny\",\"object\":\"model\"", "GET /v1/models/tiny");
    snprintf(raw, sizeof raw, "GET /v1/models/gpt-9 HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n",
             KEY);
    expect(port, raw, 404, "\"code\":\"model_not_found\"", "GET /v1/models/gpt-9");
    snprintf(raw, sizeof raw, "POST /v1/embeddings HTTP/1.1\r\nAuthorization: Bearer %s\r\n"
             "Content-Length: 2\r\n\r\n{}", KEY);
    expect(port, raw, 404, "not supported by confab serve", "embeddings");
    expect(port, "DELETE /v1/models HTTP/1.1\r\n\r\n", 405, "Allow: GET, HEAD, OPTIONS", "405");
    /* HEAD: the head alone; a leading CRLF is skipped */
    response r;
    snprintf(raw, sizeof raw, "\r\nHEAD /v1/models HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n",
             KEY);
    exchange_raw(port, raw, strlen(raw), &r);
    CHECKF(r.status == 200 && strstr(r.text, "Content-Length: ") && !*r.body, "HEAD: %s", r.text);
    response_free(&r);
    /* a browser's preflight; the CORS header on every answer (loopback: *) */
    expect(port, "OPTIONS /v1/chat/completions HTTP/1.1\r\nOrigin: http://ui\r\n"
           "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization,"
           " x-stainless-os\r\n\r\n", 204,
           "Access-Control-Allow-Headers: authorization, x-stainless-os", "a preflight");
    expect(port, "OPTIONS /v1/models HTTP/1.1\r\n\r\n", 204, "Allow: GET, HEAD, OPTIONS",
           "OPTIONS");
    response pr;
    const char *odd = "OPTIONS /v1/models HTTP/1.1\r\nAccess-Control-Request-Headers: x\rSet-Cookie: a"
                      "\r\n\r\n";
    exchange_raw(port, odd, strlen(odd), &pr);
    CHECKF(pr.status == 204 && !strstr(pr.text, "Set-Cookie"), "a header echoed: %s", pr.text);
    response_free(&pr);
    expect(port, "GET /health HTTP/1.1\r\n\r\n", 200, "Access-Control-Allow-Origin: *", "CORS");
}

/* /v1/completions continues the prompt as `confab complete` does (greedy:
 * the same text), whole or streamed. */
static void test_completions(int port)
{
    char cmd[1024], want[512] = "";
    snprintf(cmd, sizeof cmd, "'%s' complete -m '%s' -p 'Once upon a time' -n 12 --temp 0 -t 1 "
             "--kv-type f16 2>/dev/null", getenv("CONFAB_BIN"),
             shared_path("models/stories260K-chatml.gguf"));
    FILE *f = popen(cmd, "r");
    size_t n = f ? fread(want, 1, sizeof want - 1, f) : 0;
    want[n] = '\0';
    if (f)
        pclose(f);
    if (n && want[n - 1] == '\n') /* complete ends its output with a newline */
        want[n - 1] = '\0';
    CHECKF(strlen(want) > 8, "confab complete gave '%s'", want);
    const char *q = "{\"prompt\":\"Once upon a time\",\"max_tokens\":12,\"temperature\":0";
    char body[512], text[512] = "";
    response r;
    snprintf(body, sizeof body, "%s}", q);
    request(port, "POST", "/v1/completions", body, true, &r);
    char *t = strstr(r.body, "\"text\":\"");
    CHECKF(r.status == 200 && strstr(r.body, "\"object\":\"text_completion\"") && t &&
               !strncmp(t + 8, want, strlen(want)) && t[8 + strlen(want)] == '"',
           "a completion: '%s' for '%s'", r.body, want);
    response_free(&r);
    snprintf(body, sizeof body, "%s,\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
             q);
    request(port, "POST", "/v1/completions", body, true, &r);
    static char ev[64][2048];
    int k = events(r.body, ev, 64);
    for (int i = 0; i < k - 3; i++)
        if ((t = strstr(ev[i], "\"text\":\"")))
            strncat(text, t + 8, strcspn(t + 8, "\""));
    CHECKF(k > 4 && !strcmp(text, want) && strstr(ev[k - 2], "\"usage\"") &&
               strstr(ev[k - 3], "\"finish_reason\":\"length\"") && !strstr(r.body, "role"),
           "a streamed completion: '%s' for '%s'", text, want);
    response_free(&r);
    snprintf(body, sizeof body, "%s,\"logprobs\":3}", q);
    request(port, "POST", "/v1/completions", body, true, &r);
    CHECKF(r.status == 400 && strstr(r.body, "\"param\":\"logprobs\""), "legacy logprobs: %s",
           r.body);
    response_free(&r);
}

/* /v1/responses: the response object whole, its events streamed in order. */
static void test_responses(int port)
{
    const char *q = "{\"input\":\"Hi\",\"instructions\":\"Be brief.\",\"max_output_tokens\":4";
    char body[512];
    response r;
    snprintf(body, sizeof body, "%s}", q);
    request(port, "POST", "/v1/responses", body, true, &r);
    CHECKF(r.status == 200 && strstr(r.body, "\"object\":\"response\"") &&
               strstr(r.body, "\"type\":\"output_text\",\"text\":\"") &&
               strstr(r.body, "\"status\":\"incomplete\"") &&
               strstr(r.body, "\"output_tokens\":4"),
           "a response: %s", r.body);
    response_free(&r);
    snprintf(body, sizeof body, "%s,\"stream\":true}", q);
    request(port, "POST", "/v1/responses", body, true, &r);
    static const char *const order[] = {
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.incomplete",
    };
    const char *at = r.body;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && at; i++) {
        char ev[64];
        snprintf(ev, sizeof ev, "event: %s\ndata: {\"type\":\"%s\"", order[i], order[i]);
        at = strstr(at, ev);
        CHECKF(at, "no %s in order: %s", order[i], r.body);
    }
    CHECK(!strstr(r.body, "[DONE]"));
    response_free(&r);
    snprintf(body, sizeof body, "%s,\"previous_response_id\":\"resp_1\"}", q);
    request(port, "POST", "/v1/responses", body, true, &r);
    CHECKF(r.status == 400 && strstr(r.body, "\"param\":\"previous_response_id\""), "%s", r.body);
    response_free(&r);
}

/* A body of exactly 8 MiB is taken; one byte more is not. */
/* JSON output on each API; tools where there are none to render */
static void test_formats(int port)
{
    response r;
    request(port, "POST", "/v1/completions", "{\"prompt\":\"Once\",\"max_tokens\":60,"
            "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":"
            "{\"enum\":[\"yes\",\"no\"]}}}}", true, &r);
    CHECKF(r.status == 200 && (strstr(r.body, "\"text\":\"\\\"yes\\\"\"") ||
                               strstr(r.body, "\"text\":\"\\\"no\\\"\"")),
           "completions with a schema: %s", r.body);
    response_free(&r);
    post(port, ",\"max_tokens\":200,\"stream\":true,\"response_format\":{\"type\":\"json_object\"}", &r);
    CHECKF(r.status == 200 && strstr(r.body, "\"delta\":{\"content\":\"{"), "json_object streamed: %s",
           r.body);
    response_free(&r);
    /* stories260K-chatml's template renders no tools */
    post(port, ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]", &r);
    CHECKF(r.status == 400 && strstr(r.body, "renders no tools") && strstr(r.body, "\"param\":\"tools\""),
           "tools without a template for them: %s", r.body);
    response_free(&r);
    post(port, ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":"
               "\"none\"", &r);
    CHECKF(r.status == 200, "tool_choice none renders none: %s", r.body);
    response_free(&r);
    request(port, "POST", "/v1/responses", "{\"input\":\"hi\",\"tools\":[{\"type\":\"function\","
            "\"name\":\"f\"}]}", true, &r);
    CHECKF(r.status == 400 && strstr(r.body, "\"param\":\"tools\""), "responses with tools: %s", r.body);
    response_free(&r);
}

static void test_body_limit(int port)
{
    size_t max = 8 << 20;
    char *body = malloc(max + 2);
    const char *json = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":1}";
    for (int extra = 0; extra < 2; extra++) {
        memset(body, ' ', max + 1);
        memcpy(body, json, strlen(json));
        body[max + extra] = '\0';
        response r;
        request(port, "POST", "/v1/chat/completions", body, true, &r);
        CHECKF(r.status == (extra ? 413 : 200), "a body of 8 MiB%s: %d", extra ? " + 1" : "",
               r.status);
        response_free(&r);
    }
    free(body);
}

static void test_sigterm(const char *dir)
{
    char *env[] = {"CONFAB_TEST_TOKEN_DELAY_MS=30", NULL};
    server sv;
    if (start(&sv, dir, "slow", env)) {
        CHECK(0);
        return;
    }
    size_t n;
    char *raw = chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"A long story.\"}],"
                             "\"max_tokens\":2000,\"stream\":true}", &n);
    int fd = connect_to(sv.port);
    send(fd, raw, n, MSG_NOSIGNAL);
    free(raw);
    char buf[1 << 16];
    size_t got = 0;
    ssize_t k;
    while (got < 800 && (k = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0)
        got += (size_t)k;
    kill(sv.pid, SIGTERM);
    while ((k = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0)
        got += (size_t)k;
    buf[got] = '\0';
    close(fd);
    int status;
    waitpid(sv.pid, &status, 0);
    const char *e = strstr(buf, "data: {\"error\":");
    CHECKF(e && strstr(e, "shutting down") && strstr(e, "data: [DONE]"),
           "SIGTERM mid-stream: ...%s", got > 300 ? buf + got - 300 : buf);
}

int main(void)
{
    if (!shared_dir() || !getenv("CONFAB_BIN"))
        return TEST_SKIP;
    signal(SIGPIPE, SIG_IGN);
    char dir[256];
    if (test_dir(dir, sizeof dir, "api"))
        return 1;
    server sv;
    if (start(&sv, dir, "serve", NULL)) {
        CHECKF(0, "confab serve did not start");
        return test_summary("remote-api");
    }
    test_shapes(sv.port);
    test_errors(sv.port);
    test_completions(sv.port);
    test_responses(sv.port);
    test_formats(sv.port);
    test_body_limit(sv.port);
    int status = stop(&sv);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve ended with status %d", status);
    test_sigterm(dir);
    return test_end(dir, "remote-api");
}
