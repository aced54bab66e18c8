/* The markdown renderer on any reply (a model's, or a server's): the
 * pieces not marked MD_DECOR are the text byte for byte (a table too wide
 * for the width: its cells' text, reflowed), and the pieces,
 * bytes and styles, are the same however the text was cut into calls
 * (markdown.h's promises).  The first byte picks the width, box drawing
 * or ASCII, and the cuts; the rest is the text.  On a terminal (wrapped,
 * styled) the output does not depend on the cuts either. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "markdown.h"
#include "md_rec.h"

/* text[0..n) to feed in pieces of the sizes seed picks (0: whole) */
static void cut(const char *text, size_t n, unsigned seed, void (*feed)(void *, const char *, size_t),
                void *to)
{
    for (size_t at = 0; at < n;) {
        size_t piece = fuzz_piece(&seed, n - at);
        feed(to, text + at, piece);
        at += piece;
    }
}

static void to_render(void *m, const char *s, size_t n) { md_feed(m, s, n); }
static void to_term(void *t, const char *s, size_t n) { md_term_put(t, s, n); }

static void render(const char *text, size_t n, int width, bool unicode, unsigned seed, rec *out)
{
    md_render *m = md_new(width, unicode, rec_put, out);
    fuzz_require(m != NULL, "out of memory");
    cut(text, n, seed, to_render, m);
    md_end(m);
    md_free(m);
}

/* The same on a terminal: word-wrapped, styled with SGR sequences, of the
 * text made safe for it as the chat makes a reply's. */
static char *on_term(const char *raw, size_t raw_n, int width, bool unicode, unsigned seed, size_t *len)
{
    int bad;
    char *valid = utf8_sanitize(raw, raw_n, &bad), *text = valid ? text_for_terminal(valid) : NULL;
    fuzz_require(text != NULL, "out of memory");
    free(valid);
    const size_t n = strlen(text);
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    fuzz_require(f != NULL, "out of memory");
    const md_term_opts o = {.markdown = true, .width = width, .color = true, .unicode = unicode};
    md_term *t = md_term_new(f, &o);
    fuzz_require(t != NULL, "out of memory");
    cut(text, n, seed, to_term, t);
    md_term_end(t);
    fclose(f);
    free(text);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int width = 2 + data[0] % 100;
    const bool unicode = data[0] & 0x80;
    const char *text = (const char *)data + 1;
    const size_t n = size - 1;

    rec whole = {0}, cut = {0};
    render(text, n, width, unicode, 0, &whole);
    render(text, n, width, unicode, 1u + data[0], &cut);
    fuzz_require(whole.n == cut.n && (!whole.n || (!memcmp(whole.b, cut.b, whole.n) &&
                                                   !memcmp(whole.st, cut.st, whole.n * sizeof *whole.st))),
                 "the rendering depends on how the text was cut");
    size_t k = 0;
    fuzz_require(rec_kept(&whole, text, n, &k), "the text's byte %zu (of %zu) is lost or changed", k,
                 n);
    size_t l1, l2;
    char *t1 = on_term(text, n, width, unicode, 0, &l1);
    char *t2 = on_term(text, n, width, unicode, 1u + data[0], &l2);
    fuzz_require(l1 == l2 && !memcmp(t1, t2, l1), "the terminal's output depends on how the text was cut");
    free(t1);
    free(t2);
    rec_free(&whole);
    rec_free(&cut);
    return 0;
}
