/* Server-sent events, parsed a byte at a time so that the way a stream is
 * cut into reads never matters: a line ending split across two reads (CR
 * in one, LF in the next) or a UTF-8 character split anywhere gives the
 * same events as the whole stream at once. */
#include <stdlib.h>
#include <string.h>

#include "confab/openai.h"

#define SSE_MAX_DEFAULT (16u << 20)

void cf_sse_init(cf_sse *p, size_t max)
{
    memset(p, 0, sizeof *p);
    p->max = max ? max : SSE_MAX_DEFAULT;
}

void cf_sse_free(cf_sse *p)
{
    free(p->line);
    free(p->data);
    cf_sse_init(p, p->max);
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    char *b = realloc(*buf, c);
    if (!b)
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

static void reset_event(cf_sse *p)
{
    p->data_len = 0;
    p->has_data = false;
    p->event[0] = '\0';
}

/* A blank line: the event is complete (one without data is no event). */
static int dispatch(cf_sse *p, cf_sse_fn fn, void *ud)
{
    if (!p->has_data) {
        reset_event(p);
        return 0;
    }
    /* the data lines were joined with LF after each: the last one goes */
    if (p->data_len > 0)
        p->data_len--;
    p->data[p->data_len] = '\0';
    char event[sizeof p->event];
    memcpy(event, p->event, sizeof event);
    size_t len = p->data_len;
    reset_event(p);
    return fn(ud, event, p->data, len);
}

/* One line, without its ending. */
static int take_line(cf_sse *p, cf_sse_fn fn, void *ud, cf_err *err)
{
    const char *line = p->line ? p->line : "";
    size_t len = p->line_len;
    p->line_len = 0;
    if (len == 0)
        return dispatch(p, fn, ud);
    if (line[0] == ':') /* a comment: keep-alives */
        return 0;
    const char *colon = memchr(line, ':', len);
    size_t flen = colon ? (size_t)(colon - line) : len;
    const char *value = colon ? colon + 1 : line + len;
    size_t vlen = (size_t)(line + len - value);
    if (vlen > 0 && value[0] == ' ') {
        value++;
        vlen--;
    }
    bool is_error = flen == 5 && memcmp(line, "error", 5) == 0;
    if ((flen == 4 && memcmp(line, "data", 4) == 0) || is_error) {
        if (p->data_len + vlen + 2 > p->max)
            return cf_fail(err, "the server sent an event of more than %zu bytes", p->max);
        if (grow(&p->data, &p->data_cap, p->data_len + vlen + 2))
            return cf_fail(err, "out of memory");
        memcpy(p->data + p->data_len, value, vlen);
        p->data_len += vlen;
        p->data[p->data_len++] = '\n';
        p->has_data = true;
        if (is_error)
            strcpy(p->event, "error");
    } else if (flen == 5 && memcmp(line, "event", 5) == 0) {
        size_t n = vlen < sizeof p->event - 1 ? vlen : sizeof p->event - 1;
        memcpy(p->event, value, n);
        p->event[n] = '\0';
    }
    /* id, retry and unknown fields change nothing here */
    return 0;
}

int cf_sse_feed(cf_sse *p, const char *bytes, size_t n, cf_sse_fn fn, void *ud, cf_err *err)
{
    static const char bom[3] = {'\xef', '\xbb', '\xbf'};
    for (size_t i = 0; i < n; i++) {
        char c = bytes[i];
        /* a byte order mark may open the stream: held until it is one or not */
        if (!p->started) {
            if (p->line_len < 3 && c == bom[p->line_len]) {
                if (grow(&p->line, &p->line_cap, p->line_len + 1))
                    return cf_fail(err, "out of memory");
                p->line[p->line_len++] = c;
                if (p->line_len == 3) {
                    p->line_len = 0;
                    p->started = true;
                }
                continue;
            }
            p->started = true;
        }
        if (c == '\n' && p->after_cr) {
            p->after_cr = false;
            continue;
        }
        p->after_cr = c == '\r';
        if (c == '\n' || c == '\r') {
            int rc = take_line(p, fn, ud, err);
            if (rc)
                return rc;
            continue;
        }
        if (p->line_len + 1 >= p->max)
            return cf_fail(err, "the server sent a line of more than %zu bytes", p->max);
        if (grow(&p->line, &p->line_cap, p->line_len + 1))
            return cf_fail(err, "out of memory");
        p->line[p->line_len++] = c;
    }
    return 0;
}

int cf_sse_end(cf_sse *p, cf_sse_fn fn, void *ud, cf_err *err)
{
    int rc = 0;
    if (p->line_len > 0)
        rc = take_line(p, fn, ud, err);
    if (rc == 0)
        rc = dispatch(p, fn, ud);
    return rc;
}
