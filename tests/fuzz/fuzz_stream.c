/* What a server sends a chat with --endpoint.  The input's first byte
 * seeds how the rest is cut into reads; the rest is the response.
 *   - The event stream gives the same events cut into reads anywhere as
 *     read whole (openai.h's promise), and every failure has a message.
 *   - Each event's data decodes as a chunk or fails with a message; a
 *     chunk's content, reasoning and finish reason, encoded as confab
 *     serve would, decode to the same again.
 *   - The same bytes as a model list and as an error body: the ids are
 *     strings, the error text fits its buffer. */
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"
#include "fuzz_util.h"
#include "json.h"

/* An event as the parse's record holds it: its name, a NUL, its length
 * and its data. */
static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    cf_jbuf *e = ud;
    fuzz_require(data[len] == '\0', "an event's data is not NUL-terminated");
    cf_jbuf_put(e, event, strlen(event) + 1);
    cf_jbuf_put(e, (const char *)&len, sizeof len);
    cf_jbuf_put(e, data, len);
    fuzz_require(!e->failed, "out of memory");
    return 0;
}

/* The events of bytes[0, n) read in pieces of the sizes seed picks (0:
 * whole); false when the parse failed, with a message. */
static bool parse(const uint8_t *bytes, size_t n, unsigned seed, cf_jbuf *out)
{
    cf_sse p;
    cf_err err = {.msg = ""};
    cf_sse_init(&p, 4096); /* small, so that the limit is reached too */
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < n;) {
        size_t piece = fuzz_piece(&seed, n - at);
        rc = cf_sse_feed(&p, (const char *)bytes + at, piece, on_event, out, &err);
        at += piece;
    }
    if (rc == 0)
        rc = cf_sse_end(&p, on_event, out, &err);
    cf_sse_free(&p);
    if (rc)
        fuzz_require_message(&err);
    return rc == 0;
}

static bool same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static void decode_event(const char *data, size_t len)
{
    cf_oai_chunk c = {0}, again = {0};
    cf_err err = {.msg = ""};
    if (cf_oai_chunk_decode(data, len, &c, &err)) {
        fuzz_require_message(&err);
        return;
    }
    if (!c.done && !c.error) {
        const cf_oai_reply_id id = {"chatcmpl-1", "m", 1, NULL, false};
        const cf_oai_delta d = {.reasoning = c.reasoning, .content = c.content, .finish = c.finish};
        size_t n;
        char *json = cf_oai_chunk_encode(&id, &d, NULL, &n);
        fuzz_require(json != NULL, "encoding a chunk failed");
        fuzz_require(cf_oai_chunk_decode(json, n, &again, &err) == 0,
                     "its own chunk does not decode: %s (%.200s)", err.msg, json);
        fuzz_require(same_text(c.content, again.content) && same_text(c.reasoning, again.reasoning) &&
                         same_text(c.finish, again.finish),
                     "a chunk encoded and decoded again differs: %.200s", json);
        free(json);
        cf_oai_chunk_free(&again);
    }
    cf_oai_chunk_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const unsigned seed = 1u + data[0];
    data++, size--;

    cf_jbuf whole = {0}, cut = {0};
    const bool ok = parse(data, size, 0, &whole);
    fuzz_require(parse(data, size, seed, &cut) == ok, "one cut of the stream failed, another did not");
    /* a failure stops at the byte over the limit, wherever the cut */
    fuzz_require(cut.n == whole.n && (!whole.n || !memcmp(cut.p, whole.p, whole.n)),
                 "the stream cut into reads gives other events than read whole");
    for (size_t at = 0; at < whole.n;) {
        at += strlen(whole.p + at) + 1;
        size_t len;
        memcpy(&len, whole.p + at, sizeof len);
        at += sizeof len;
        decode_event(whole.p + at, len);
        at += len;
    }
    cf_jbuf_free(&whole);
    cf_jbuf_free(&cut);

    char **ids = NULL;
    cf_err err = {.msg = ""};
    if (cf_oai_models_decode((const char *)data, size, &ids, &err) == 0) {
        fuzz_require(ids != NULL, "a model list without its array");
        for (char **p = ids; *p; p++)
            (void)strlen(*p);
        cf_oai_models_free(ids);
    } else {
        fuzz_require_message(&err);
    }

    char text[48];
    const size_t n = 1 + seed % sizeof text;
    memset(text, 'x', sizeof text);
    cf_oai_error_text((const char *)data, size, text, n);
    fuzz_require(memchr(text, '\0', n) != NULL, "the error text overran its %zu bytes", n);
    return 0;
}
