/* Test-only: a delay before each piece of a reply, so tests can act in
 * the middle of one (CONFAB_TEST_TOKEN_DELAY_MS), and scripted replies.  With CONFAB_TEST_REPLIES=FILE, reply k of
 * the session (each begin_reply or regen) emits the tokens of line k of
 * FILE instead of sampling, then ends as at an end-of-generation token;
 * once the lines run out, the model samples again.  Everything else of a
 * reply runs as usual: each token is evaluated, stop strings, n-predict
 * and the reasoning split apply, and the message keeps the tokens.
 *
 * A line is pieces separated by '|', each tokenized on its own with
 * special tokens parsed ("<thi|nk>" is two pieces of plain text, so a
 * marker is cut across tokens); \n, \t, \\, \| and \xHH (a byte) are
 * escapes.  A piece that is not valid UTF-8 ("caf\xc3|\xa9") becomes the
 * vocabulary's byte tokens, so a character is cut across tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

long sess_test_delay_ms(void)
{
    const char *s = getenv("CONFAB_TEST_TOKEN_DELAY_MS");
    long ms = s ? atol(s) : 0;
    return ms > 0 && ms < 10000 ? ms : 0;
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The token that stands for byte b: SPM's <0xHH>, or byte-level BPE's
 * character for it (GPT-2's map: printable bytes as themselves, the rest
 * from U+0100 on in order). */
static cf_token byte_token(const cf_tokenizer *t, unsigned char b)
{
    char name[8];
    snprintf(name, sizeof name, "<0x%02X>", b);
    cf_token id = cf_tok_find(t, name, strlen(name));
    if (id != CF_TOKEN_NULL)
        return id;
    bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    uint32_t cp = b;
    if (!printable) {
        cp = 0x100;
        for (unsigned k = 0; k < b; k++)
            cp += !((k >= 0x21 && k <= 0x7e) || (k >= 0xa1 && k <= 0xac) || k >= 0xae);
    }
    return cf_tok_find(t, name, cf_utf8_encode(cp, name));
}

/* Append the tokens of one piece (unescaped in place) to out. */
static int piece_tokens(const cf_session *s, const char *piece, size_t len, cf_tokens *out,
                        cf_err *err)
{
    if (!sess_utf8_valid(piece, len)) {
        for (size_t i = 0; i < len; i++) {
            cf_token id = byte_token(s->tok, (unsigned char)piece[i]);
            if (id == CF_TOKEN_NULL)
                return cf_fail(err, "CONFAB_TEST_REPLIES: the vocabulary has no token for byte "
                                    "0x%02x", (unsigned char)piece[i]);
            if (cf_tokens_push(out, id))
                return cf_fail(err, "out of memory");
        }
        return 0;
    }
    /* an empty token part first: no SPM space prefix for a piece */
    cf_tok_part parts[2] = {{.kind = CF_PART_TOKENS},
                            {.kind = CF_PART_TEXT, .text = piece, .len = len}};
    cf_tokens ids = {0};
    int rc = cf_tokenize_parts(s->tok, parts, 2, false, &ids, err);
    for (size_t i = 0; rc == 0 && i < ids.n; i++)
        if (cf_tokens_push(out, ids.ids[i]))
            rc = cf_fail(err, "out of memory");
    cf_tokens_free(&ids);
    return rc;
}

/* One line: pieces split at unescaped '|', escapes resolved. */
static int line_tokens(const cf_session *s, const char *line, size_t len, cf_tokens *out,
                       cf_err *err)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return cf_fail(err, "out of memory");
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i <= len && rc == 0; i++) {
        if (i == len || line[i] == '|') {
            rc = n ? piece_tokens(s, buf, n, out, err) : 0;
            n = 0;
            continue;
        }
        char c = line[i];
        if (c == '\\' && i + 1 < len) {
            c = line[++i];
            if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c == 'x' && i + 2 < len && hex(line[i + 1]) >= 0 && hex(line[i + 2]) >= 0) {
                c = (char)(hex(line[i + 1]) * 16 + hex(line[i + 2]));
                i += 2;
            }
        }
        buf[n++] = c;
    }
    free(buf);
    return rc;
}

int sess_script_load(cf_session *s, cf_err *err)
{
    const char *path = getenv("CONFAB_TEST_REPLIES");
    if (!path || !*path)
        return 0;
    size_t len;
    char *text = sess_read_file(path, &len, err);
    if (!text)
        return -1;
    int rc = 0;
    for (const char *p = text, *end = text + len; p < end && rc == 0;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        cf_tokens *v = realloc(s->scripted, (size_t)(s->n_scripted + 1) * sizeof *v);
        if (!v) {
            rc = cf_fail(err, "out of memory");
            break;
        }
        s->scripted = v;
        v[s->n_scripted] = (cf_tokens){0};
        rc = line_tokens(s, p, n, &v[s->n_scripted++], err);
        p += n + 1;
    }
    free(text);
    return rc;
}

void sess_script_free(cf_session *s)
{
    for (int i = 0; i < s->n_scripted; i++)
        cf_tokens_free(&s->scripted[i]);
    free(s->scripted);
}

const cf_tokens *sess_script_next(cf_session *s)
{
    return s->next_script < s->n_scripted ? &s->scripted[s->next_script++] : NULL;
}
