/* What a client sends `confab serve`.
 *   - A request head is not complete yet (0), complete (its length, within
 *     the bytes), or refused with an HTTP status and a reason; any prefix
 *     of a complete head is not complete yet.
 *   - The body after it (or, for a head that is not complete, the whole
 *     input) is read as a chat completions request, or refused with a
 *     one-line message.  A request read has messages, and built again by
 *     the client's code it reads as the same request. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"
#include "fuzz_util.h"
#include "http.h"

static void check_head(const char *p, size_t n, http_req *r, int *head)
{
    int status = 0;
    const char *why = NULL;
    *head = http_parse_head(p, n, r, &status, &why);
    if (*head < 0) {
        fuzz_require(status >= 400 && status < 600, "a refused head with status %d", status);
        fuzz_require(why && *why && !strchr(why, '\n'), "a refused head without a one-line reason");
        return;
    }
    fuzz_require((size_t)*head <= n, "a head of %d bytes in %zu", *head, n);
    if (*head == 0)
        return;
    fuzz_require(r->head_len == (size_t)*head && r->body_len <= HTTP_BODY_MAX, "a head's lengths are off");
    fuzz_require(memchr(r->method, '\0', sizeof r->method) && r->path[0] == '/' &&
                     memchr(r->path, '\0', sizeof r->path) &&
                     (!r->auth || (r->auth >= p && r->auth + r->auth_len <= p + n)),
                 "a head's fields are not strings");
    http_req again;
    int s2;
    const char *w2;
    fuzz_require(http_parse_head(p, (size_t)*head - 1, &again, &s2, &w2) == 0,
                 "a complete head's prefix is not incomplete");
}

/* The same name and value; numbers to about a float's precision, which is
 * what the sampler keeps (a request's 444440444444 is read as the
 * setting 444440444444, and once rebuilt as 4.44440444e+11). */
static bool same_setting(const cf_oai_setting *a, const cf_oai_setting *b)
{
    if (strcmp(a->name, b->name))
        return false;
    char *ea, *eb;
    double da = strtod(a->value, &ea), db = strtod(b->value, &eb);
    return !strcmp(a->value, b->value) || (!*ea && !*eb && fabs(da - db) <= 1e-7 * fabs(da));
}

/* The request rebuilt as the client sends it reads the same. */
static void rebuild(const cf_oai_request *q)
{
    /* what a client leaves to the server: "auto" is its default */
    cf_oai_setting kept[32];
    int n = 0;
    /* what a client sends: the protocol's fields (probs is how logprobs
     * reaches the session, not a field of its own), and seeds within
     * int64, all a client's JSON integers hold */
    for (int i = 0; i < q->n_settings && n < 32; i++)
        if (strcmp(q->settings[i].value, "auto") && cf_oai_field_of(q->settings[i].name) &&
            (strcmp(q->settings[i].name, "seed") || strtoull(q->settings[i].value, NULL, 10) <=
                                                        (unsigned long long)INT64_MAX))
            kept[n++] = q->settings[i];
    size_t len;
    char *body = cf_oai_request_build(q->model, q->msgs, q->n_msgs, kept, n, (const char *const *)q->stops,
                                      q->stream, &len);
    fuzz_require(body != NULL, "building the request failed");
    cf_oai_request r;
    cf_err err = {.msg = ""};
    fuzz_require(cf_oai_request_parse(body, len, &r, &err) == 0, "a built request does not read: %s (%.300s)",
                 err.msg, body);
    fuzz_require(!strcmp(q->model && *q->model ? q->model : "", r.model ? r.model : ""), "the model differs");
    fuzz_require(r.n_msgs == q->n_msgs, "%d messages became %d", q->n_msgs, r.n_msgs);
    for (int i = 0; i < r.n_msgs; i++)
        fuzz_require(r.msgs[i].role == q->msgs[i].role && !strcmp(r.msgs[i].content, q->msgs[i].content),
                     "message %d differs: %.300s", i, body);
    fuzz_require(r.n_settings == n, "%d settings became %d: %.300s", n, r.n_settings, body);
    for (int i = 0; i < n; i++)
        fuzz_require(same_setting(&r.settings[i], &kept[i]), "setting %s=%s became %s=%s", kept[i].name,
                     kept[i].value, r.settings[i].name, r.settings[i].value);
    fuzz_require(r.n_stops == q->n_stops, "%d stop strings became %d", q->n_stops, r.n_stops);
    for (int i = 0; i < r.n_stops; i++)
        fuzz_require(!strcmp(r.stops[i], q->stops[i]), "stop string %d differs", i);
    fuzz_require(r.stream == q->stream && r.include_usage == q->stream, "the stream flags differ");
    cf_oai_request_free(&r);
    free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    http_req h;
    int head;
    check_head(p, size, &h, &head);
    /* the body as serve hands it over: NUL-terminated, of Content-Length */
    size_t at = head > 0 ? (size_t)head : 0, n = size - at;
    if (head > 0 && h.body_len < n)
        n = h.body_len;
    char *body = malloc(n + 1);
    fuzz_require(body != NULL, "out of memory");
    memcpy(body, p + at, n);
    body[n] = '\0';
    cf_oai_request q;
    cf_err err = {.msg = ""};
    if (cf_oai_request_parse(body, n, &q, &err) == 0) {
        fuzz_require(q.n_msgs > 0 && q.msgs, "a request without messages");
        rebuild(&q);
        cf_oai_request_free(&q);
    } else {
        fuzz_require_message(&err);
    }
    free(body);
    return 0;
}
