/* The markdown renderer and the streaming word wrap.
 *
 * The property that matters most: nothing of a reply is lost or moved.
 * Over a generated corpus of replies (headings, nested lists, quotes,
 * rules, code blocks in several languages, open ones, tables with
 * non-ASCII cells, markers that never close), each fed whole, cut at
 * every byte (markers, fences, UTF-8 characters and table rows split
 * across calls), a byte at a time and in random pieces:
 *   - the pieces not marked MD_DECOR, in order, are the reply byte for
 *     byte;
 *   - the output, bytes and styles, is the same however the reply was cut;
 *   - word-wrapped, removing the line breaks the wrapping added gives the
 *     rendering back; each comes after a space, and only where the next
 *     word would not fit;
 *   - on a terminal, the output stripped of its SGR sequences is the
 *     rendering's pieces, and without colour there are none.
 * Then what a table and a code block look like, exactly. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "markdown.h"
#include "md_rec.h"

#define BRK (1u << 30) /* the wrapping's breaks, apart from the renderer's MD_DECOR */

/* Render text cut at the given positions (ascending). */
static void render(const char *text, size_t n, const size_t *cuts, int n_cuts, int width, rec *out)
{
    md_render *m = md_new(width, true, rec_put, out);
    size_t at = 0;
    for (int i = 0; i <= n_cuts; i++) {
        size_t end = i < n_cuts ? cuts[i] : n;
        md_feed(m, text + at, end - at);
        at = end;
    }
    md_end(m);
    md_free(m);
}

/* ---- the corpus ------------------------------------------------------------------------ */
static const char *const fragments[] = {
    "# Title\n",
    "## Sub **bold** title\n",
    "###### six\n",
    "####### seven is text\n",
    "#hashtag\n",
    "#",
    "Plain text with **bold** and *it* and `code` and ~~gone~~.\n",
    "snake_case_name and 2 * 3 * 4 and a*b*c and __dunder__ and ***both*** here\n",
    "Unclosed **bold and `code and *it\n",
    "- item\n",
    "- item **b**\n  - nested *i*\n    - deeper `c`\n",
    "* star item\n+ plus item\n",
    "1. one\n2) two\n10. ten\n",
    "1234567890. not a list\n",
    "3.14 is no item\n",
    "> quote *x*\n>> nested\n",
    ">\n",
    "---\n",
    "* * *\n",
    "___\n",
    "- - -\n",
    "-\n",
    "```python\ndef f(x):\n    return 'a' + \"b\"  # c\n```\n",
    "```c\n/* multi\n line */ int x = 1; // c\nchar *s = \"a\\\"b\" / 2;\nn = a/b/2;\n```\n",
    "~~~\nplain tilde block **not bold**\n~~~\n",
    "````md\n```\nnested fence\n```\n````\n",
    "```js\nconst a = `t` / 2; /* x */\n",
    "```Rust\nfn main() { let s = \"x\"; }\n```\n",
    "```sh\necho $# # comment\n```\n",
    "   ```\n   indented\n   ```\n",
    "```go {.numbered}\nfunc f() {}\n```\n",
    "``` not a fence ` here\n",
    "| a | b |\n|---|:-:|\n| 1 | 22 |\n| h\xC3\xA9llo | \xE4\xBD\xA0\xE5\xA5\xBD |\n",
    "| not | table |\nnext line\n",
    "|x|\n|-|\n",
    "| a \\| b | c |\n|--|--:|\n| `x|y` | z\n",
    "| head |\n| --- |\n",
    "|",
    "\n",
    "\n\n",
    "   \n",
    "\t\n",
    "\xC3\x9Cn\xC3\xAF" "c\xC3\xB6" "d\xC3\xA9 \xE2\x9C\x93 \xE2\x80\x94 \xE2\x80\x9Cquotes\xE2\x80\x9D "
    "\xF0\x9F\x99\x82\n",
    "a very long line without much of anything interesting in it but it keeps going and going "
    "well past the width of any terminal row\n",
    "back\\*slash\\_escapes \\` and \\\\\n",
    "``double `tick` code``\n",
    "text ending without a newline",
    "**",
    "`",
    "*",
    "_",
    "```",
};
#define N_FRAGMENTS (int)(sizeof fragments / sizeof fragments[0])

static unsigned long rng = 12345;
static unsigned next_rand(void)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(rng >> 33);
}

/* A reply of 1 to 8 fragments. */
static size_t make_reply(char *out, size_t cap)
{
    size_t n = 0;
    int k = 1 + (int)(next_rand() % 8);
    for (int i = 0; i < k; i++) {
        const char *f = fragments[next_rand() % N_FRAGMENTS];
        size_t len = strlen(f);
        if (n + len >= cap)
            break;
        memcpy(out + n, f, len);
        n += len;
    }
    return n;
}

/* ---- the invariants ------------------------------------------------------------------- */
static int failures_shown;

static bool same(const rec *a, const rec *b)
{
    return a->n == b->n && !memcmp(a->b, b->b, a->n) && !memcmp(a->st, b->st, a->n * sizeof *a->st);
}

/* The whole rendering of text, and that nothing was lost. */
static void check_kept(const char *text, size_t n, const rec *r, const char *how)
{
    char *kept = malloc(r->n + 1);
    size_t k = rec_text(r, MD_DECOR, kept), at;
    bool ok = rec_kept(r, text, n, &at);
    CHECKF(ok || failures_shown > 3,
           "%s: the text is not kept (from byte %zu):\n--- in\n%.*s\n--- out\n%.*s", how, at,
           (int)n, text, (int)k, kept);
    failures_shown += !ok;
    free(kept);
}

static void check_cut(const char *text, size_t n, const rec *whole, const size_t *cuts, int n_cuts,
                      const char *how)
{
    rec r = {0};
    render(text, n, cuts, n_cuts, 40, &r);
    check_kept(text, n, &r, how);
    bool ok = same(&r, whole);
    CHECKF(ok || failures_shown > 3, "%s: the rendering depends on the cuts:\n%.*s", how, (int)n,
           text);
    failures_shown += !ok;
    rec_free(&r);
}

static void test_corpus(void)
{
    char text[2048];
    size_t cuts[2048];
    for (int reply = 0; reply < 400; reply++) {
        size_t n = make_reply(text, sizeof text);
        rec whole = {0};
        render(text, n, NULL, 0, 40, &whole);
        check_kept(text, n, &whole, "whole");
        /* cut once at every byte */
        for (size_t at = 1; at < n; at++) {
            cuts[0] = at;
            check_cut(text, n, &whole, cuts, 1, "one cut");
        }
        /* a byte at a time */
        for (size_t i = 1; i < n; i++)
            cuts[i - 1] = i;
        check_cut(text, n, &whole, cuts, n > 1 ? (int)n - 1 : 0, "bytes");
        /* random pieces of 1 to 8 bytes */
        for (int round = 0; round < 10; round++) {
            int k = 0;
            for (size_t at = 1 + next_rand() % 8; at < n; at += 1 + next_rand() % 8)
                cuts[k++] = at;
            check_cut(text, n, &whole, cuts, k, "random pieces");
        }
        rec_free(&whole);
    }
}

/* ---- word wrapping ---------------------------------------------------------------------- */
static void wrap_rec(void *ud, const char *s, size_t n, unsigned style)
{
    rec_put(ud, s, n, style);
}

/* The rendering r (pieces as the renderer gave them) wrapped at width,
 * fed in pieces of `piece` bytes. */
static void wrap_all(const rec *r, int width, size_t piece, rec *out)
{
    wrap_stream w;
    wrap_stream_init(&w, width, MD_NOWRAP, BRK, wrap_rec, out);
    wrap_stream_hang(&w, MD_BULLET, MD_QUOTE | MD_MARK);
    size_t start = 0;
    for (size_t i = 1; i <= r->n; i++)
        if (i == r->n || r->st[i] != r->st[start] || i - start == piece) {
            wrap_stream_put(&w, r->b + start, i - start, r->st[start]);
            start = i;
        }
    wrap_stream_flush(&w);
}

static void check_wrapped(const rec *in, const rec *out, int width, const char *text)
{
    char *a = malloc(in->n + 1), *b = malloc(out->n + 1);
    size_t na = rec_text(in, 0, a), nb = rec_text(out, BRK, b);
    CHECKF(na == nb && !memcmp(a, b, na), "width %d: wrapping changed the text:\n%.*s\n---\n%.*s",
           width, (int)na, a, (int)out->n, out->b);
    /* each break follows a blank, and the word after it did not fit */
    int col = 0;
    for (size_t i = 0; i < out->n; i++) {
        /* (a hanging indent after a break takes columns, as text does) */
        if (!(out->st[i] & BRK) || out->b[i] != '\n') {
            col = out->b[i] == '\n' ? 0 : col + 1;
            continue;
        }
        /* (or before one: a blank that found its row full) */
        CHECKF((i > 0 && (out->b[i - 1] == ' ' || out->b[i - 1] == '\t')) ||
                   (i + 1 < out->n && (out->b[i + 1] == ' ' || out->b[i + 1] == '\t')),
               "width %d: a break not next to a blank in:\n%s", width, text);
        int word = 0;
        size_t at = i + 1;
        while (at < out->n && (out->st[at] & BRK))
            at++;
        for (size_t j = at; j < out->n && out->b[j] != ' ' && out->b[j] != '\n'; j++)
            word++;
        CHECKF(col + word > width - 1, "width %d: a break where '%.*s' fit (column %d) in:\n%s",
               width, word, out->b + at, col, text);
        col = 0;
    }
    free(a);
    free(b);
}

/* Prose (ASCII words shorter than the row): rows never pass the width. */
static void test_wrap_prose(void)
{
    static const char *const words[] = {"a", "to", "the", "word", "wraps", "streams", "terminal",
                                        "boundary", "x", "hello,", "(it)"};
    char text[1024];
    for (int round = 0; round < 300; round++) {
        int width = 10 + (int)(next_rand() % 60);
        size_t n = 0;
        for (int i = 0; i < 60; i++) {
            const char *w = words[next_rand() % (sizeof words / sizeof words[0])];
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", w,
                                  next_rand() % 10 == 0 ? "\n" : next_rand() % 7 ? " " : "  ");
        }
        rec in = {0}, out = {0}, again = {0};
        rec_put(&in, text, n, 0);
        wrap_all(&in, width, 1 + next_rand() % 9, &out);
        wrap_all(&in, width, n, &again);
        check_wrapped(&in, &out, width, text);
        CHECKF(same(&out, &again), "width %d: the wrapping depends on the cuts:\n%s", width, text);
        int col = 0;
        for (size_t i = 0; i < out.n; i++) {
            col = out.b[i] == '\n' ? 0 : col + 1;
            /* a run of blanks may meet the margin: the next row starts with it */
            CHECKF(col <= width || out.b[i] == ' ', "width %d: a row of %d columns", width, col);
        }
        rec_free(&in);
        rec_free(&out);
        rec_free(&again);
    }
}

/* The corpus rendered, then wrapped: tables and code keep their lines. */
static void test_wrap_corpus(void)
{
    char text[2048];
    for (int reply = 0; reply < 200; reply++) {
        size_t n = make_reply(text, sizeof text);
        int width = 8 + (int)(next_rand() % 50);
        rec r = {0}, out = {0}, again = {0};
        render(text, n, NULL, 0, width, &r);
        wrap_all(&r, width, 1 + next_rand() % 5, &out);
        wrap_all(&r, width, r.n, &again);
        text[n] = 0;
        check_wrapped(&r, &out, width, text);
        CHECKF(same(&out, &again), "width %d: the wrapping depends on the cuts:\n%s", width, text);
        for (size_t i = 0; i < out.n; i++)
            if (out.st[i] & BRK)
                CHECK(!(out.st[i - 1] & MD_NOWRAP));
        rec_free(&r);
        rec_free(&out);
        rec_free(&again);
    }
}

/* Wide characters count two columns; a character cut between calls is
 * measured whole. */
static void test_wrap_wide(void)
{
    const char *text = "\xE4\xBD\xA0\xE5\xA5\xBD \xE4\xBD\xA0\xE5\xA5\xBD \xE4\xBD\xA0\xE5\xA5\xBD";
    rec in = {0}, out = {0};
    rec_put(&in, text, strlen(text), 0);
    wrap_all(&in, 10, 1, &out);
    out.b = realloc(out.b, out.n + 1);
    out.b[out.n] = 0;
    CHECKF(!strcmp(out.b, "\xE4\xBD\xA0\xE5\xA5\xBD \xE4\xBD\xA0\xE5\xA5\xBD \n"
                          "\xE4\xBD\xA0\xE5\xA5\xBD"),
           "'%s'", out.b);
    rec_free(&in);
    rec_free(&out);
}

/* ---- on a terminal ------------------------------------------------------------------------ */
/* s without its SGR sequences. */
static size_t strip_sgr(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
            i += 2;
            while (i < n && s[i] != 'm')
                i++;
            continue;
        }
        out[k++] = s[i];
    }
    return k;
}

static void test_term(void)
{
    char text[2048];
    for (int reply = 0; reply < 100; reply++) {
        size_t n = make_reply(text, sizeof text);
        for (int color = 0; color < 2; color++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            md_term_opts o = {.markdown = true, .width = 30, .color = color, .unicode = true};
            md_term *t = md_term_new(f, &o);
            for (size_t at = 0; at < n; at += 3)
                md_term_put(t, text + at, at + 3 > n ? n - at : 3);
            md_term_end(t);
            fclose(f);
            /* the same as the renderer's pieces, wrapped */
            rec r = {0}, w = {0};
            render(text, n, NULL, 0, 30, &r);
            wrap_all(&r, 30, r.n, &w);
            char *plain = malloc(len + 1), *want = malloc(w.n + 1);
            size_t np = strip_sgr(buf, len, plain), nw = rec_text(&w, 0, want);
            CHECKF(np == nw && !memcmp(plain, want, np), "terminal output:\n%.*s\n---\n%.*s",
                   (int)np, plain, (int)nw, want);
            if (!color)
                CHECK(!memchr(buf, '\033', len));
            free(plain);
            free(want);
            free(buf);
            rec_free(&r);
            rec_free(&w);
        }
    }
}

/* ---- what it looks like ------------------------------------------------------------------- */
/* The style of the first byte of `what` in r. */
static unsigned style_of(const rec *r, const char *what)
{
    size_t n = strlen(what);
    for (size_t i = 0; i + n <= r->n; i++)
        if (!memcmp(r->b + i, what, n))
            return r->st[i];
    return ~0u;
}

static void check_rendering(const char *in, int width, const char *want, rec *r)
{
    render(in, strlen(in), NULL, 0, width, r);
    char *got = malloc(r->n + 1);
    size_t k = rec_text(r, 0, got);
    got[k] = 0;
    CHECKF(!strcmp(got, want), "rendering of:\n%s\ngot:\n%s\nwant:\n%s", in, got, want);
    free(got);
}

/* A list item's rows hang under its text, a quote's repeat its marker
 * (glow's and rich's hanging indents); plain text does not hang. */
static void test_hang(void)
{
    const char *in = "- an item long enough to wrap\n"
                     "  10. a nested item to wrap\n"
                     "> a quote to wrap twice over\n"
                     ">> nested quote, wrapped too\n"
                     "  plain text wraps as ever\n";
    const char *want = "- an item long enough \n  to wrap\n"
                       "  10. a nested item \n      to wrap\n"
                       "> a quote to wrap \n> twice over\n"
                       ">> nested quote, \n>> wrapped too\n"
                       "  plain text wraps as \never\n";
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    md_term_opts o = {.markdown = true, .width = 22, .unicode = true};
    md_term *t = md_term_new(f, &o);
    md_term_put(t, in, strlen(in));
    md_term_end(t);
    fclose(f);
    CHECKF(!strcmp(buf, want), "hanging indents:\n%s\nwant:\n%s", buf, want);
    free(buf);
    /* the repeated marker is styled as the quote's own */
    rec r = {0}, w = {0};
    render(in, strlen(in), NULL, 0, 22, &r);
    wrap_all(&r, 22, r.n, &w);
    CHECK(style_of(&w, "> twice") == (MD_QUOTE | MD_MARK | BRK));
    CHECK(style_of(&w, "  to wrap") == BRK);
    rec_free(&r);
    rec_free(&w);
}

static void test_table(void)
{
    rec r = {0};
    check_rendering("Fruit:\n"
                    "| Name | Qty |\n"
                    "|:--|--:|\n"
                    "| apple | 3 |\n"
                    "| na\xC3\xAFve | **12** |\n"
                    "after\n",
                    80,
                    "Fruit:\n"
                    "| Name  |    Qty |\n"
                    "|:------|-------:|\n"
                    "| apple |      3 |\n"
                    "| na\xC3\xAFve | **12** |\n"
                    "after\n",
                    &r);
    CHECK(style_of(&r, "|") == (MD_TABLE | MD_MARK));
    CHECK(style_of(&r, "Name") == (MD_TABLE | MD_BOLD));
    CHECK(style_of(&r, "      3") == (MD_TABLE | MD_DECOR));
    CHECK(style_of(&r, "-|") == (MD_TABLE | MD_MARK | MD_DECOR));
    CHECK(style_of(&r, "12") == (MD_TABLE | MD_BOLD));
    CHECK(style_of(&r, "after") == 0);
    rec_free(&r);
    /* too wide: the cells wrapped within their columns, no row split
     * across screen lines; the cells' text kept */
    const char *wide = "| Name | What it is |\n"
                       "|--|--:|\n"
                       "| qwen3 | a dense **model** of 2025 |\n";
    check_rendering(wide, 24,
                    "| Name  |   What it is |\n"
                    "|-------|--------------|\n"
                    "| qwen3 |      a dense |\n"
                    "|       | **model** of |\n"
                    "|       |         2025 |\n",
                    &r);
    size_t at;
    CHECK(rec_kept(&r, wide, strlen(wide), &at));
    CHECK(style_of(&r, "What") == (MD_TABLE | MD_REFLOW | MD_BOLD));
    CHECK(style_of(&r, "model") == (MD_TABLE | MD_REFLOW | MD_BOLD));
    CHECK(style_of(&r, "|-") == (MD_TABLE | MD_REFLOW | MD_MARK | MD_DECOR));
    rec_free(&r);
    /* a word longer than a column can be cut: the text's own lines */
    check_rendering("| a | b |\n|-|-|\n| x | yy |\n", 8, "| a | b |\n|-|-|\n| x | yy |\n", &r);
    CHECK(style_of(&r, "|") == 0);
    rec_free(&r);
    /* no delimiter row: text as it is */
    check_rendering("| a | b |\nno table\n", 80, "| a | b |\nno table\n", &r);
    CHECK(style_of(&r, "|") == 0);
    rec_free(&r);
}

static void test_code_block(void)
{
    rec r = {0};
    check_rendering("Code:\n```c\nint x; // y\n```\n", 20,
                    "Code:\n"
                    "\xE2\x95\xAD\xE2\x94\x80 ```c "
                    "\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80"
                    "\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\n"
                    "int x; // y\n"
                    "\xE2\x95\xB0\xE2\x94\x80 ``` "
                    "\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80"
                    "\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80"
                    "\xE2\x94\x80\n",
                    &r);
    CHECK(style_of(&r, "c \xE2\x94\x80") == (MD_FENCE | MD_LANG));
    CHECK(style_of(&r, "```c") == (MD_FENCE | MD_MARK));
    CHECK(style_of(&r, "int") == (MD_BLOCK | MD_KEYWORD));
    CHECK(style_of(&r, " x;") == MD_BLOCK);
    CHECK(style_of(&r, "// y") == (MD_BLOCK | MD_COMMENT));
    /* the body's bytes are the text's, none added */
    for (size_t i = 0; i < r.n; i++)
        if (r.st[i] & MD_BLOCK)
            CHECK(!(r.st[i] & MD_DECOR));
    rec_free(&r);
    /* an open block is closed by a frame line of its own */
    check_rendering("```\nx", 6, "\xE2\x95\xAD\xE2\x94\x80 ```\nx\n\xE2\x95\xB0"
                                 "\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80",
                    &r);
    rec_free(&r);
}

static void test_inline(void)
{
    rec r = {0};
    check_rendering("## **Bold** and *it*, `a*b`, snake_case, 2 * 3\n", 80,
                    "## **Bold** and *it*, `a*b`, snake_case, 2 * 3\n", &r);
    CHECK(style_of(&r, "##") == (MD_HEADING | MD_MARK));
    CHECK(style_of(&r, "Bold") == (MD_HEADING | MD_BOLD));
    CHECK(style_of(&r, "it*") == (MD_HEADING | MD_ITALIC));
    CHECK(style_of(&r, "a*b") == (MD_HEADING | MD_CODE));
    CHECK(style_of(&r, "case") == MD_HEADING);
    CHECK(style_of(&r, "* 3") == MD_HEADING);
    rec_free(&r);
    check_rendering("  - item\n> quote\n", 80, "  - item\n> quote\n", &r);
    CHECK(style_of(&r, "- ") == MD_BULLET);
    CHECK(style_of(&r, "> ") == (MD_QUOTE | MD_MARK));
    CHECK(style_of(&r, "quote") == MD_QUOTE);
    rec_free(&r);
}

int main(void)
{
    if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) {
        fprintf(stderr, "no UTF-8 locale: skipped\n");
        return TEST_SKIP;
    }
    test_inline();
    test_table();
    test_code_block();
    test_corpus();
    test_wrap_prose();
    test_wrap_wide();
    test_hang();
    test_wrap_corpus();
    test_term();
    return test_summary("ui-markdown");
}
