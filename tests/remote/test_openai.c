/* The protocol pieces without a network: the event-stream parser and the
 * chunk decoder over the streams in streams/ (whole, split at every byte
 * boundary, a byte at a time), the event-stream rules one by one, the
 * decoder's errors, requests built and read back, and what `confab serve`
 * writes read by what the client reads. */
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"
#include "harness.h"

/* ---- a reply put together from events --------------------------------------- */
typedef struct reply {
    char content[4096], reasoning[4096], finish[32], error[256];
    int events, done;
    cf_oai_usage usage;
    char why[CF_ERR_MSG_MAX]; /* the first decode error */
} reply;

static void cat(char *dst, size_t n, const char *s)
{
    size_t k = strlen(dst);
    snprintf(dst + k, n - k, "%s", s);
}

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    reply *r = ud;
    cf_oai_chunk c;
    cf_err err;
    r->events++;
    if (!strcmp(event, "error")) {
        snprintf(r->error, sizeof r->error, "%s", data);
        return 0;
    }
    if (cf_oai_chunk_decode(data, len, &c, &err)) {
        if (!r->why[0])
            snprintf(r->why, sizeof r->why, "%s", err.msg);
        return 0;
    }
    r->done += c.done;
    if (c.content)
        cat(r->content, sizeof r->content, c.content);
    if (c.reasoning)
        cat(r->reasoning, sizeof r->reasoning, c.reasoning);
    if (c.finish)
        snprintf(r->finish, sizeof r->finish, "%s", c.finish);
    if (c.error)
        snprintf(r->error, sizeof r->error, "%s", c.error);
    if (c.usage.has_usage) {
        r->usage.has_usage = true;
        r->usage.prompt_tokens = c.usage.prompt_tokens;
        r->usage.completion_tokens = c.usage.completion_tokens;
    }
    if (c.usage.has_timings) {
        r->usage.has_timings = true;
        r->usage.prompt_n = c.usage.prompt_n;
        r->usage.predicted_ms = c.usage.predicted_ms;
    }
    cf_oai_chunk_free(&c);
    return 0;
}

/* Feed data in pieces: cuts[] are the offsets where one read ends. */
static void parse_cut(const char *data, size_t n, const size_t *cuts, size_t n_cuts, reply *r)
{
    cf_sse p;
    cf_err err;
    cf_sse_init(&p, 0);
    memset(r, 0, sizeof *r);
    size_t at = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t end = i < n_cuts ? cuts[i] : n;
        CHECK(cf_sse_feed(&p, data + at, end - at, on_event, r, &err) == 0);
        at = end;
    }
    CHECK(cf_sse_end(&p, on_event, r, &err) == 0);
    cf_sse_free(&p);
}

static bool same(const reply *a, const reply *b)
{
    return !strcmp(a->content, b->content) && !strcmp(a->reasoning, b->reasoning) &&
           !strcmp(a->finish, b->finish) && a->events == b->events && a->done == b->done &&
           a->usage.prompt_tokens == b->usage.prompt_tokens &&
           a->usage.completion_tokens == b->usage.completion_tokens && !strcmp(a->why, b->why);
}

static char *read_stream(const char *name, size_t *n)
{
    const char *src = getenv("CONFAB_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/remote/streams/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 16);
    *n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

static const struct expect {
    const char *file, *content, *reasoning, *finish;
    int prompt, completion, events;
    bool timings;
} streams[] = {
    {"llama-server.sse", "Hello! \xc3\x87" "a va? \xf0\x9f\x91\x8b", "The user greets me.", "stop", 12,
     9, 7, true},
    {"vllm.sse", "Paris is the capital of France.", "Short answer.", "stop", 17, 10, 7, false},
    {"ollama.sse", "Hi there \xe6\x97\xa5\xe6\x9c\xac", "Okay, a greeting.", "length", 11, 8, 6,
     false},
    {"openai.sse", "Hello! How can I \"help\"\nyou?", "", "stop", 9, 12, 7, false},
    {"protocol.sse", "one two three", "", "stop", 0, 0, 4, false},
};

static void test_streams(void)
{
    for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++) {
        const struct expect *e = &streams[s];
        size_t n;
        char *data = read_stream(e->file, &n);
        CHECKF(data != NULL, "cannot read %s", e->file);
        if (!data)
            continue;
        reply whole, part;
        parse_cut(data, n, NULL, 0, &whole);
        CHECKF(!strcmp(whole.content, e->content), "%s: content '%s'", e->file, whole.content);
        CHECKF(!strcmp(whole.reasoning, e->reasoning), "%s: reasoning '%s'", e->file,
               whole.reasoning);
        CHECKF(!strcmp(whole.finish, e->finish), "%s: finish '%s'", e->file, whole.finish);
        CHECKF(whole.usage.prompt_tokens == e->prompt && whole.usage.completion_tokens == e->completion,
               "%s: usage %d + %d", e->file, whole.usage.prompt_tokens,
               whole.usage.completion_tokens);
        CHECKF(whole.usage.has_timings == e->timings, "%s: timings", e->file);
        CHECKF(whole.events == e->events && whole.done == 1, "%s: %d events, done %d", e->file,
               whole.events, whole.done);
        CHECKF(!whole.why[0], "%s: %s", e->file, whole.why);
        /* split once at every byte boundary */
        int bad = 0;
        for (size_t k = 0; k <= n; k++) {
            parse_cut(data, n, &k, 1, &part);
            bad += !same(&whole, &part);
        }
        CHECKF(bad == 0, "%s: %d of %zu splits differ", e->file, bad, n + 1);
        /* a byte at a time */
        size_t *cuts = malloc(n * sizeof *cuts);
        for (size_t k = 0; k < n; k++)
            cuts[k] = k;
        parse_cut(data, n, cuts, n, &part);
        CHECKF(same(&whole, &part), "%s: a byte at a time differs", e->file);
        free(cuts);
        free(data);
    }
}

/* ---- the event-stream rules, one by one ----------------------------------------- */
typedef struct events {
    char log[1024];
} events;

static int log_event(void *ud, const char *event, const char *data, size_t len)
{
    events *ev = ud;
    size_t k = strlen(ev->log);
    snprintf(ev->log + k, sizeof ev->log - k, "[%s|%.*s]", event, (int)len, data);
    return 0;
}

static void sse_case(const char *in, const char *want)
{
    events ev = {""};
    cf_sse p;
    cf_err err;
    cf_sse_init(&p, 0);
    CHECK(cf_sse_feed(&p, in, strlen(in), log_event, &ev, &err) == 0);
    CHECK(cf_sse_end(&p, log_event, &ev, &err) == 0);
    cf_sse_free(&p);
    CHECKF(!strcmp(ev.log, want), "%s: got %s, expected %s", in, ev.log, want);
}

static int stop_at_second(void *ud, const char *event, const char *data, size_t len)
{
    (void)event, (void)data, (void)len;
    return ++*(int *)ud == 2 ? 7 : 0;
}

static void test_sse_rules(void)
{
    sse_case("data: a\n\n", "[|a]");
    sse_case("data:a\n\n", "[|a]");
    sse_case("data:  a\n\n", "[| a]");                  /* one space goes */
    sse_case("data: a\ndata: b\n\n", "[|a\nb]");         /* lines joined with LF */
    sse_case("data\n\n", "[|]");                        /* no colon: empty value */
    sse_case("data: a\r\n\r\ndata: b\r\rdata: c\n\n", "[|a][|b][|c]");
    sse_case(": comment\n\n: x\ndata: a\n\n", "[|a]");  /* comments make no event */
    sse_case("event: delta\ndata: a\n\ndata: b\n\n", "[delta|a][|b]");
    sse_case("event: x\n\ndata: b\n\n", "[|b]");        /* no data: no event, name reset */
    sse_case("id: 3\nretry: 10\nfoo: bar\ndata: a\n\n", "[|a]");
    sse_case("data: a\n", "[|a]");                       /* closed without the blank line */
    sse_case("data: a", "[|a]");
    sse_case("\xef\xbb\xbf" "data: a\n\n", "[|a]");       /* a byte order mark */
    sse_case("\xef\xbb" "data: a\n\n", "");              /* half a mark: the field is unknown */
    sse_case("error: {\"code\":500,\"message\":\"boom\"}\n\n",
             "[error|{\"code\":500,\"message\":\"boom\"}]"); /* llama-server's errors */
    sse_case("\n\n\n", "");
    /* limits */
    cf_sse p;
    cf_err err = {.msg = ""};
    events ev = {""};
    cf_sse_init(&p, 16);
    CHECK(cf_sse_feed(&p, "data: 0123456789abcdef\n\n", 24, log_event, &ev, &err) < 0);
    CHECKF(strstr(err.msg, "more than 16 bytes") != NULL, "%s", err.msg);
    cf_sse_free(&p);
    cf_sse_init(&p, 16);
    CHECK(cf_sse_feed(&p, "data: 0123\ndata: 4567\ndata: 89ab\ndata: cdef\n\n", 46, log_event, &ev, &err) < 0);
    cf_sse_free(&p);
    /* a callback's non-zero return stops the parse and comes back */
    int seen = 0;
    cf_sse_init(&p, 0);
    CHECK(cf_sse_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27, stop_at_second, &seen, &err) == 7);
    CHECK(seen == 2);
    cf_sse_free(&p);
}

/* ---- the decoder's verdicts ------------------------------------------------------ */
static void chunk_bad(const char *data, const char *want)
{
    cf_oai_chunk c;
    cf_err err = {.msg = ""};
    CHECKF(cf_oai_chunk_decode(data, strlen(data), &c, &err) < 0, "%s decoded", data);
    CHECKF(strstr(err.msg, want) != NULL, "%s: '%s' lacks '%s'", data, err.msg, want);
}

static void test_chunks(void)
{
    cf_oai_chunk c;
    cf_err err;
    CHECK(cf_oai_chunk_decode(" [DONE] ", 8, &c, &err) == 0 && c.done);
    cf_oai_chunk_free(&c);
    const char *e1 = "{\"error\":{\"message\":\"model overloaded\",\"type\":\"server_error\"}}";
    CHECK(cf_oai_chunk_decode(e1, strlen(e1), &c, &err) == 0 && c.error &&
          !strcmp(c.error, "model overloaded"));
    cf_oai_chunk_free(&c);
    const char *e2 = "{\"error\":\"out of memory\"}";
    CHECK(cf_oai_chunk_decode(e2, strlen(e2), &c, &err) == 0 && !strcmp(c.error, "out of memory"));
    cf_oai_chunk_free(&c);
    const char *whole = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                        "\"Hi\",\"reasoning_content\":\"hm\"},\"finish_reason\":\"stop\"}],"
                        "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}";
    CHECK(cf_oai_chunk_decode(whole, strlen(whole), &c, &err) == 0 && !strcmp(c.content, "Hi") &&
          !strcmp(c.reasoning, "hm") && !strcmp(c.finish, "stop") && c.usage.prompt_tokens == 3);
    cf_oai_chunk_free(&c);
    chunk_bad("{\"choices\":[{\"delta\":{\"content\":\"a\"}", "malformed JSON");
    chunk_bad("data: {}", "malformed JSON");
    chunk_bad("[1,2]", "not a JSON object");
    chunk_bad("{\"id\":\"x\"}", "no choices");
    chunk_bad("{\"choices\":{}}", "choices is not an array");
    chunk_bad("{\"choices\":[3]}", "choices[0] is not an object");
    chunk_bad("{\"choices\":[{\"delta\":[]}]}", "choices[0].delta is not an object");
    chunk_bad("{\"choices\":[{\"delta\":{\"content\":5}}]}", "choices[0].delta.content is not a string");
    chunk_bad("{\"choices\":[{\"finish_reason\":1}]}", "finish_reason is not a string");

    char buf[64];
    const char *b1 = "{\"error\":{\"message\":\"Incorrect API key provided\"}}";
    cf_oai_error_text(b1, strlen(b1), buf, sizeof buf);
    CHECK(!strcmp(buf, "Incorrect API key provided"));
    const char *b2 = "{\"detail\":[{\"loc\":[\"body\"],\"msg\":\"field required\"}]}";
    cf_oai_error_text(b2, strlen(b2), buf, sizeof buf);
    CHECK(!strcmp(buf, "field required"));
    const char *b3 = "  <html>502 Bad Gateway</html>\nmore";
    cf_oai_error_text(b3, strlen(b3), buf, sizeof buf);
    CHECK(!strcmp(buf, "<html>502 Bad Gateway</html>"));
    cf_oai_error_text(b3, strlen(b3), buf, 8);
    CHECK(!strcmp(buf, "<html>5"));

    char **ids;
    const char *list = "{\"object\":\"list\",\"data\":[{\"id\":\"a\",\"object\":\"model\"},{\"id\":\"b\"},"
                       "{\"x\":1}]}";
    CHECK(cf_oai_models_decode(list, strlen(list), &ids, &err) == 0 && ids[0] && ids[1] &&
          !ids[2] && !strcmp(ids[1], "b"));
    cf_oai_models_free(ids);
    CHECK(cf_oai_models_decode("{\"models\":[]}", 13, &ids, &err) < 0 && strstr(err.msg, "data"));
}

/* ---- requests ---------------------------------------------------------------------- */
static const char *setting(const cf_oai_request *r, const char *name)
{
    for (int i = 0; i < r->n_settings; i++)
        if (!strcmp(r->settings[i].name, name))
            return r->settings[i].value;
    return NULL;
}

static void test_requests(void)
{
    cf_message msgs[] = {
        {.role = CF_ROLE_SYSTEM, .content = "Be brief."},
        {.role = CF_ROLE_USER, .content = "Hi \"there\"\n\xe2\x9c\x93"},
        {.role = CF_ROLE_ASSISTANT, .content = "Hello.", .reasoning = "not sent"},
        {.role = CF_ROLE_USER, .content = "More."},
    };
    cf_oai_setting set[] = {
        {"temp", "0.25"}, {"top-k", "7"}, {"min-p", "0.1"}, {"seed", "42"}, {"n-predict", "16"},
        {"repeat-penalty", "1.1"}, {"presence-penalty", "0.5"}, {"frequency-penalty", "-0.5"},
        {"top-p", "0.9"}, {"thinking", "off"}, {"reasoning-effort", "low"}, {"typical", "1"},
        {"repeat-last-n", "32"},
    };
    const char *stops[] = {"END", "\n\n", NULL};
    size_t len;
    char *body = cf_oai_request_build("m1", msgs, 4, set, 13, stops, true, &len);
    CHECK(body != NULL);
    if (!body)
        return;
    CHECKF(strstr(body, "\"temperature\":0.25") && strstr(body, "\"top_k\":7") &&
               strstr(body, "\"max_tokens\":16") && strstr(body, "\"seed\":42") &&
               strstr(body, "\"chat_template_kwargs\":{\"enable_thinking\":false}") &&
               strstr(body, "\"stream_options\":{\"include_usage\":true}") &&
               strstr(body, "\"stop\":[\"END\",\"\\n\\n\"]") && !strstr(body, "not sent") &&
               strstr(body, "\"repeat_penalty\":1.1") && strstr(body, "\"repetition_penalty\":1.1"),
           "%s", body);
    cf_oai_request r;
    cf_err err;
    CHECKF(cf_oai_request_parse(body, len, &r, &err) == 0, "%s", err.msg);
    CHECK(r.stream && r.include_usage && r.n_msgs == 4 && !strcmp(r.model, "m1"));
    CHECK(r.n_msgs == 4 && r.msgs[1].role == CF_ROLE_USER && !strcmp(r.msgs[1].content, msgs[1].content));
    CHECK(r.n_settings == 13);
    for (int i = 0; i < 13; i++)
        CHECKF(setting(&r, set[i].name) && strtod(setting(&r, set[i].name), NULL) ==
                   strtod(set[i].value, NULL),
               "%s: %s", set[i].name, setting(&r, set[i].name));
    CHECK(!strcmp(setting(&r, "thinking"), "off") && !strcmp(setting(&r, "reasoning-effort"), "low"));
    CHECK(r.n_stops == 2 && !strcmp(r.stops[1], "\n\n") && !r.stops[2]);
    cf_oai_request_free(&r);
    free(body);

    /* the server's defaults: nothing sent */
    cf_oai_setting dflt[] = {{"seed", "random"}, {"thinking", "auto"}, {"reasoning-effort", "auto"}};
    body = cf_oai_request_build(NULL, msgs + 1, 1, dflt, 3, NULL, false, &len);
    CHECKF(body && !strcmp(body, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi \\\"there\\\"\\n"
                                  "\xe2\x9c\x93\"}],\"stream\":false}"),
           "%s", body);
    free(body);

    /* what a server reads */
    const char *in = "{\"model\":\"x\",\"messages\":[{\"role\":\"developer\",\"content\":[{\"type\":"
                     "\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]},{\"role\":"
                     "\"assistant\",\"content\":null,\"reasoning_content\":\"r\"},{\"role\":\"user\","
                     "\"content\":\"q\"}],\"max_completion_tokens\":5.0,\"stop\":\"x\",\"n\":1,"
                     "\"temperature\":1,\"repetition_penalty\":1.3}";
    CHECKF(cf_oai_request_parse(in, strlen(in), &r, &err) == 0, "%s", err.msg);
    CHECK(r.n_msgs == 3 && r.msgs[0].role == CF_ROLE_SYSTEM && !strcmp(r.msgs[0].content, "ab") &&
          !strcmp(r.msgs[1].content, "") && !strcmp(r.msgs[1].reasoning, "r"));
    CHECK(!strcmp(setting(&r, "n-predict"), "5") && !strcmp(setting(&r, "temp"), "1") &&
          !strcmp(setting(&r, "repeat-penalty"), "1.3"));
    CHECK(r.n_stops == 1 && !strcmp(r.stops[0], "x") && !r.stream);
    cf_oai_request_free(&r);

    static const struct {
        const char *body, *want;
    } bad[] = {
        {"{", "not JSON"},
        {"[]", "not a JSON object"},
        {"{\"messages\":[]}", "messages must be a non-empty list"},
        {"{\"messages\":\"hi\"}", "messages must be a non-empty list"},
        {"{\"messages\":[{\"content\":\"x\"}]}", "messages[0] has no role"},
        {"{\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}", "a tool message needs its tool_call_id"},
        {"{\"messages\":[{\"role\":\"user\"}]}", "messages[0] has no content"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":7}]}", "messages[0].content is not a string"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}",
         "messages[0].content[0]: only"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":\"hot\"}",
         "temperature must be a number"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_k\":1.5}", "top_k must be an integer"},
        /* beyond long long: no integer (and no conversion to test one with) */
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"seed\":1e64}", "seed must be an integer"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":-9.3e18}",
         "max_tokens must be an integer"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":1}", "stream must be true or false"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop\":[\"\"]}", "stop must be"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"model\":3}", "model must be a string"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"chat_template_kwargs\":"
         "{\"enable_thinking\":\"no\"}}", "chat_template_kwargs.enable_thinking must be true or false"},
        /* what is not honoured is refused by name, never ignored */
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":17}", "n: must be 1 to 16"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
         "\"function\"}]}", "tools[0]: a function needs a name"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tool_choice\":\"required\"}",
         "tool_choice: there are no tools to call"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
         "\"json_schema\",\"json_schema\":{\"schema\":{\"type\":\"string\",\"pattern\":\"a\"}}}}",
         "response_format: json schema: keyword 'pattern' is not supported"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
         "\"json_schema\"}}", "response_format: json_schema needs json_schema.schema"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
         "\"xml\"}}", "response_format: its type must be text, json_object or json_schema"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logit_bias\":{\"a\":5}}",
         "logit_bias: its keys must be token ids"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logit_bias\":{\"1\":500}}",
         "logit_bias: its biases must be numbers from -100 to 100"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logprobs\":true,"
         "\"top_logprobs\":21}", "top_logprobs: must be an integer from 0 to 20"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_logprobs\":2}",
         "top_logprobs: needs logprobs: true"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":0}",
         "max_tokens must be at least 1"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]}",
         "messages[0].content has a NUL character"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"audio\":{}}",
         "audio: not supported by confab serve"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        CHECKF(cf_oai_request_parse(bad[i].body, strlen(bad[i].body), &r, &err) < 0, "%s parsed",
               bad[i].body);
        CHECKF(strstr(err.msg, bad[i].want) != NULL, "%s: '%s' lacks '%s'", bad[i].body, err.msg,
               bad[i].want);
    }
    const char *two = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":2}";
    CHECK(cf_oai_request_parse(two, strlen(two), &r, &err) == 0 && r.n_choices == 2);
    cf_oai_request_free(&r);
    two = "{\"prompt\":\"x\",\"n\":2}";
    CHECK(cf_oai_api_parse(CF_OAI_TEXT, two, strlen(two), &r, &err) < 0 && !strcmp(r.param, "n"));
    /* honoured: seeds to 2^64-1, logprobs, the harmless fields */
    const char *good = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"seed\":"
                       "18446744073709551615,\"logprobs\":true,\"top_logprobs\":3,\"n\":1,"
                       "\"tools\":[],\"tool_choice\":\"none\",\"response_format\":{\"type\":"
                       "\"text\"},\"user\":\"u\",\"logit_bias\":{\"7\":-2.5,\"9\":100}}";
    CHECK(cf_oai_request_parse(good, strlen(good), &r, &err) == 0 && r.logprobs &&
          r.top_logprobs == 3 && r.n_settings == 2 && !strcmp(r.settings[0].value, "0") &&
          r.n_bias == 2 && r.bias[0].id == 7 && r.bias[0].bias == -2.5f && r.bias[1].id == 9 &&
          !strcmp(r.settings[1].name, "probs") && !strcmp(r.settings[1].value, "on"));
    cf_oai_request_free(&r);
    good = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"seed\":9223372036854775808}";
    CHECK(cf_oai_request_parse(good, strlen(good), &r, &err) == 0 && r.n_settings == 1 &&
          !strcmp(r.settings[0].value, "9223372036854775808"));
    cf_oai_request_free(&r);
    /* tools, a named tool_choice, an assistant's calls and a tool's result */
    good = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"assistant\","
           "\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
           "{\"name\":\"f\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\","
           "\"content\":\"42\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\","
           "\"parameters\":{\"type\":\"object\"}}}],\"tool_choice\":{\"type\":\"function\","
           "\"function\":{\"name\":\"f\"}},\"response_format\":{\"type\":\"json_object\"}}";
    CHECK(cf_oai_request_parse(good, strlen(good), &r, &err) == 0 && r.n_msgs == 3 &&
          r.msgs[1].role == CF_ROLE_ASSISTANT && !strcmp(r.msgs[1].content, "") &&
          strstr(r.msgs[1].tool_calls, "\"name\":\"f\"") && r.msgs[2].role == CF_ROLE_TOOL &&
          !strcmp(r.msgs[2].tool_call_id, "c1") && !strcmp(r.msgs[2].content, "42") &&
          strstr(r.tools, "\"name\":\"f\"") && r.tool_choice == CF_OAI_TOOLS_NAMED &&
          !strcmp(r.tool_name, "f") && r.format && !strcmp(r.format_name, "json"));
    cf_oai_request_free(&r);
    good = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
           "\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\","
           "\"parallel_tool_calls\":false}";
    CHECK(cf_oai_request_parse(good, strlen(good), &r, &err) == 0 &&
          r.tool_choice == CF_OAI_TOOLS_REQUIRED && !r.tool_name && r.one_call);
    cf_oai_request_free(&r);
    CHECK(!strcmp(cf_oai_field_of("temp"), "temperature") && !cf_oai_field_of("bogus") &&
          !strcmp(cf_oai_field_of("thinking"), "chat_template_kwargs.enable_thinking"));
}

/* ---- what confab serve writes, read by the client ------------------------------------ */
static cf_str piece_of(void *ud, int32_t id)
{
    static const char *const pieces[] = {"He", "llo", "\xe2\x82"};
    (void)ud;
    return (cf_str){pieces[id], strlen(pieces[id])};
}

static void test_encode(void)
{
    cf_oai_reply_id id = {"chatcmpl-1", "tiny", 1700000000, "fp_1", false};
    cf_oai_usage u = {.has_usage = true, .prompt_tokens = 5, .completion_tokens = 2,
                      .cached_tokens = 3, .has_timings = true, .prompt_n = 2, .predicted_n = 2,
                      .prompt_ms = 1.5, .predicted_ms = 4};
    size_t len;
    cf_oai_chunk c;
    cf_err err;
    /* the first chunk names the role; every choice has logprobs, null when not asked */
    cf_oai_delta d = {.role = true};
    char *a = cf_oai_chunk_encode(&id, &d, NULL, &len);
    CHECK(a && strstr(a, "\"delta\":{\"role\":\"assistant\",\"refusal\":null}") &&
          strstr(a, "\"logprobs\":null") && strstr(a, "\"system_fingerprint\":\"fp_1\"") &&
          strstr(a, "\"object\":\"chat.completion.chunk\""));
    free(a);
    d = (cf_oai_delta){.reasoning = "think", .content = "say \"x\""};
    a = cf_oai_chunk_encode(&id, &d, NULL, &len);
    CHECK(a && cf_oai_chunk_decode(a, len, &c, &err) == 0 && !strcmp(c.content, "say \"x\"") &&
          !strcmp(c.reasoning, "think") && !c.finish && !strcmp(c.model, "tiny") &&
          !strstr(a, "role"));
    cf_oai_chunk_free(&c);
    free(a);
    d = (cf_oai_delta){.finish = "length"};
    a = cf_oai_chunk_encode(&id, &d, NULL, &len);
    CHECK(a && cf_oai_chunk_decode(a, len, &c, &err) == 0 && !c.content &&
          !strcmp(c.finish, "length") && !c.usage.has_usage && !strstr(a, "usage"));
    cf_oai_chunk_free(&c);
    free(a);
    /* usage in a chunk of its own, with no choices */
    a = cf_oai_chunk_encode(&id, NULL, &u, &len);
    CHECK(a && strstr(a, "\"choices\":[]") && cf_oai_chunk_decode(a, len, &c, &err) == 0 &&
          c.usage.prompt_tokens == 5 && c.usage.completion_tokens == 2 &&
          c.usage.cached_tokens == 3 && c.usage.has_timings && c.usage.predicted_ms == 4);
    cf_oai_chunk_free(&c);
    free(a);
    d = (cf_oai_delta){.content = "whole", .finish = "stop"};
    a = cf_oai_response_encode(&id, &d, 1, &u, &len);
    CHECK(a && cf_oai_chunk_decode(a, len, &c, &err) == 0 && !strcmp(c.content, "whole") &&
          strstr(a, "\"object\":\"chat.completion\"") && strstr(a, "\"refusal\":null") &&
          strstr(a, "\"role\":\"assistant\"") && strstr(a, "\"logprobs\":null"));
    cf_oai_chunk_free(&c);
    free(a);
    /* tool calls: content null beside them whole; each with its index streamed */
    cf_tool_call call = {"call1", "get_weather", "{\"city\":\"Oslo\"}"};
    d = (cf_oai_delta){.finish = "tool_calls", .calls = &call, .n_calls = 1};
    a = cf_oai_response_encode(&id, &d, 1, NULL, &len);
    CHECK(a && strstr(a, "\"content\":null,\"tool_calls\":[{\"id\":\"call1\",\"type\":"
                         "\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":"
                         "\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]") &&
          strstr(a, "\"finish_reason\":\"tool_calls\""));
    free(a);
    d = (cf_oai_delta){.calls = &call, .n_calls = 1};
    a = cf_oai_chunk_encode(&id, &d, NULL, &len);
    CHECK(a && strstr(a, "\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call1\""));
    free(a);
    /* log probabilities: each token's, with its bytes and alternatives */
    cf_token_prob tp[2] = {{.id = 0, .p = 0.5f, .n_top = 2, .top_id = {0, 1}, .top_p = {0.5f, 0.25f}},
                           {.id = 2, .p = 0, .n_top = 0}};
    cf_oai_logprobs lp = {tp, 2, 1, piece_of, NULL};
    d = (cf_oai_delta){.content = "He", .finish = "stop", .logprobs = &lp};
    a = cf_oai_response_encode(&id, &d, 1, NULL, &len);
    CHECK(a && strstr(a, "\"logprobs\":{\"content\":[{\"token\":\"He\",\"logprob\":-0.693147") &&
          strstr(a, "\"bytes\":[72,101],\"top_logprobs\":[{\"token\":\"He\"") &&
          !strstr(a, "\"llo\"") && strstr(a, "\"logprob\":-9999") &&
          strstr(a, "\"bytes\":[226,130]") && strstr(a, "\"refusal\":null}"));
    free(a);
    id.completion = true;
    d = (cf_oai_delta){.content = "text", .finish = "stop"};
    a = cf_oai_response_encode(&id, &d, 1, NULL, &len);
    CHECK(a && strstr(a, "\"object\":\"text_completion\"") &&
          strstr(a, "{\"index\":0,\"text\":\"text\",\"logprobs\":null,\"finish_reason\":\"stop\"}"));
    free(a);
    a = cf_oai_error_encode("the model 'x' does not exist here", "invalid_request_error",
                            "model_not_found", "model", &len);
    CHECK(a && !strcmp(a, "{\"error\":{\"message\":\"the model 'x' does not exist here\",\"type\":"
                          "\"invalid_request_error\",\"param\":\"model\",\"code\":"
                          "\"model_not_found\"}}"));
    char buf[64];
    cf_oai_error_text(a, len, buf, sizeof buf);
    CHECK(!strcmp(buf, "the model 'x' does not exist here"));
    free(a);
    char **ids = NULL;
    a = cf_oai_models_encode("tiny", 1, &len);
    CHECK(a && cf_oai_models_decode(a, len, &ids, &err) == 0 && !strcmp(ids[0], "tiny") && !ids[1]);
    cf_oai_models_free(ids);
    free(a);
    a = cf_oai_model_encode("tiny", 1, &len);
    CHECK(a && !strcmp(a, "{\"id\":\"tiny\",\"object\":\"model\",\"created\":1,\"owned_by\":"
                          "\"confab\"}"));
    free(a);
}

int main(void)
{
    test_streams();
    test_sse_rules();
    test_chunks();
    test_requests();
    test_encode();
    return test_summary("remote-openai");
}
