/* The renderer's block level: each line's kind, decided from as little of
 * its start as will do, then the line streamed through the inline styling
 * or a code block's colouring; fences and their frames. */
#include <stdlib.h>
#include <string.h>

#include "markdown_impl.h"

enum { FRAME_MAX = 80 };

/* What a line is. */
typedef enum line_kind {
    K_UNDECIDED, /* not yet known: hold more */
    K_HOLD,      /* known only at its end: hold it all */
    K_BLANK,
    K_PARA,
    K_HEADING,
    K_QUOTE,
    K_LIST,
    K_RULE,
    K_FENCE_OPEN,
    K_FENCE_CLOSE,
    K_CODE,      /* a code block's body line */
    K_TABLE,     /* a row of a table, or the header of one */
} line_kind;

void md_emit(md_render *m, const char *s, size_t n, unsigned style)
{
    if (!n)
        return;
    m->put(m->ud, s, n, style);
    m->at_bol = s[n - 1] == '\n';
}

static void decor(md_render *m, const char *s, unsigned style)
{
    md_emit(m, s, strlen(s), style | MD_DECOR);
}

void md_fill(md_render *m, const char *unit, int n, unsigned style)
{
    char buf[256];
    size_t u = strlen(unit), used = 0;
    if (u > 8)
        return;
    for (int i = 0; i < n; i++) {
        if (used + u > sizeof buf) {
            md_emit(m, buf, used, style | MD_DECOR);
            used = 0;
        }
        memcpy(buf + used, unit, u);
        used += u;
    }
    md_emit(m, buf, used, style | MD_DECOR);
}

static size_t skip_blank(const char *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    return i;
}

static size_t run_of(const char *p, size_t i, size_t n, char c)
{
    size_t j = i;
    while (j < n && p[j] == c)
        j++;
    return j - i;
}

/* Inside a code block: its closing fence (as long as the opening one,
 * nothing after it), or a body line. */
static line_kind classify_code(const md_render *m, bool eol)
{
    const char *p = m->line;
    size_t n = m->len, i = skip_blank(p, 0, n);
    if (i == n)
        return eol ? K_CODE : K_UNDECIDED;
    if (p[i] != m->fence_ch)
        return K_CODE;
    size_t r = run_of(p, i, n, p[i]);
    if (i + r == n && !eol)
        return K_UNDECIDED;
    if (r < m->fence_len || skip_blank(p, i + r, n) < n)
        return K_CODE;
    return eol ? K_FENCE_CLOSE : K_UNDECIDED;
}

/* * - + list items, and rules of three or more * - _ (alone on the line,
 * spaces allowed between). */
static line_kind classify_dash(const char *p, size_t i, size_t n, bool eol, size_t *mark)
{
    char c = p[i];
    size_t j = i;
    int count = 0;
    while (j < n && (p[j] == c || p[j] == ' ' || p[j] == '\t'))
        count += p[j++] == c;
    if (j == n && !eol)
        return K_UNDECIDED;
    if (j == n && count >= 3 && c != '+')
        return K_RULE;
    bool bullet = c != '_' && i + 1 < n && (p[i + 1] == ' ' || p[i + 1] == '\t');
    *mark = i + 1;
    return bullet && skip_blank(p, i + 1, n) < n ? K_LIST : K_PARA;
}

/* 1. or 1) and a space: an ordered list item. */
static line_kind classify_number(const char *p, size_t i, size_t n, bool eol, size_t *mark)
{
    size_t j = i;
    while (j < n && j - i < 10 && p[j] >= '0' && p[j] <= '9')
        j++;
    if (j - i > 9)
        return K_PARA;
    if (j == n || j + 1 == n)
        return eol || (j < n && p[j] != '.' && p[j] != ')') ? K_PARA : K_UNDECIDED;
    if ((p[j] != '.' && p[j] != ')') || (p[j + 1] != ' ' && p[j + 1] != '\t'))
        return K_PARA;
    *mark = j + 1;
    return K_LIST;
}

/* Outside a code block.  *mark: where the line's marker ends. */
static line_kind classify(const md_render *m, bool eol, size_t *mark)
{
    const char *p = m->line;
    size_t n = m->len, i = skip_blank(p, 0, n);
    *mark = i;
    if (i == n)
        return eol ? K_BLANK : K_UNDECIDED;
    char c = p[i];
    size_t r = run_of(p, i, n, c);
    bool growing = i + r == n && !eol; /* the run may go on */
    switch (c) {
    case '`':
    case '~':
        if (growing)
            return K_UNDECIDED;
        if (r < 3)
            return K_PARA;
        if (!eol)
            return K_HOLD;
        *mark = i + r;
        /* a backtick fence's info has no backtick: else it is inline code */
        return c == '`' && memchr(p + i + r, '`', n - i - r) ? K_PARA : K_FENCE_OPEN;
    case '|':
        return eol ? K_TABLE : K_HOLD;
    case '#':
        if (growing)
            return K_UNDECIDED;
        *mark = i + r;
        return r <= 6 && (i + r == n || p[i + r] == ' ' || p[i + r] == '\t') ? K_HEADING : K_PARA;
    case '>': {
        size_t j = i;
        while (j < n && (p[j] == '>' || p[j] == ' ' || p[j] == '\t'))
            j++;
        if (j == n && !eol)
            return K_UNDECIDED;
        *mark = j;
        return K_QUOTE;
    }
    case '-':
    case '*':
    case '_':
    case '+':
        return classify_dash(p, i, n, eol, mark);
    default:
        if (c >= '0' && c <= '9')
            return classify_number(p, i, n, eol, mark);
        return K_PARA;
    }
}

/* The rest of a frame line: a space and a rule out to the frame's width. */
static void frame_rule(md_render *m, int used)
{
    int width = m->width < FRAME_MAX ? m->width : FRAME_MAX;
    if (width - used < 2)
        return;
    decor(m, " ", MD_FENCE);
    md_fill(m, m->unicode ? "\xE2\x94\x80" : "-", width - used - 1, MD_FENCE);
}

static void fence_open(md_render *m, size_t mark)
{
    const char *p = m->line;
    size_t n = m->len, ind = skip_blank(p, 0, n);
    size_t lang = skip_blank(p, mark, n), lang_end = lang;
    while (lang_end < n && p[lang_end] != ' ' && p[lang_end] != '\t' && p[lang_end] != '{')
        lang_end++;
    decor(m, m->unicode ? "\xE2\x95\xAD\xE2\x94\x80 " : "+- ", MD_FENCE);
    md_emit(m, p, ind, MD_FENCE);
    md_emit(m, p + ind, lang - ind, MD_FENCE | MD_MARK);
    md_emit(m, p + lang, lang_end - lang, MD_FENCE | MD_LANG);
    md_emit(m, p + lang_end, n - lang_end, MD_FENCE | MD_MARK);
    frame_rule(m, 3 + utf8_width(p, n));
    m->fence = true;
    m->fence_ch = p[ind];
    m->fence_len = mark - ind;
    md_code_begin(m, md_code_lang(p + lang, lang_end - lang));
}

static void fence_close(md_render *m)
{
    decor(m, m->unicode ? "\xE2\x95\xB0\xE2\x94\x80 " : "+- ", MD_FENCE);
    md_emit(m, m->line, m->len, MD_FENCE | MD_MARK);
    frame_rule(m, 3 + utf8_width(m->line, m->len));
    m->fence = false;
}

/* The line held so far goes out as the kind decided. */
static void apply(md_render *m, line_kind kind, size_t mark, bool nl)
{
    const char *p = m->line;
    size_t n = m->len, ind = skip_blank(p, 0, n);
    /* a line that is no row ends the table before it */
    if (kind != K_TABLE && kind != K_UNDECIDED && kind != K_HOLD && !m->fence)
        md_table_end(m);
    m->nl_style = 0;
    switch (kind) {
    case K_UNDECIDED:
    case K_HOLD:
        return;
    case K_BLANK:
        md_emit(m, p, n, 0);
        break;
    case K_RULE:
        md_emit(m, p, n, MD_MARK);
        break;
    case K_FENCE_OPEN:
        fence_open(m, mark);
        m->nl_style = MD_FENCE;
        break;
    case K_FENCE_CLOSE:
        fence_close(m);
        m->nl_style = MD_FENCE;
        break;
    case K_TABLE:
        md_table_row(m, p, n, nl);
        m->nl_style = MD_TABLE;
        break;
    case K_CODE:
        m->state = LINE_CODE;
        m->nl_style = MD_BLOCK;
        md_code_feed(m, p, n);
        break;
    case K_HEADING:
    case K_QUOTE:
    case K_LIST:
    case K_PARA: {
        unsigned base = kind == K_HEADING ? MD_HEADING : kind == K_QUOTE ? MD_QUOTE : 0;
        unsigned mark_style = kind == K_LIST ? MD_BULLET : base | MD_MARK;
        if (kind == K_PARA)
            mark = ind = 0;
        md_emit(m, p, ind, base);
        md_emit(m, p + ind, mark - ind, mark_style);
        m->state = LINE_TEXT;
        md_inline_begin(m, base);
        md_inline_feed(m, p + mark, n - mark);
        break;
    }
    }
    m->len = 0;
}

static void decide(md_render *m, bool eol, bool nl)
{
    size_t mark = 0;
    line_kind k = m->fence ? classify_code(m, eol) : classify(m, eol, &mark);
    if (k == K_HOLD)
        m->state = LINE_HELD;
    else if (k != K_UNDECIDED)
        apply(m, k, mark, nl);
}

static void hold(md_render *m, char b)
{
    if (buf_reserve(&m->line, &m->cap, m->len + 1) < 0) {
        /* out of memory: what is held goes out as text */
        apply(m, m->fence ? K_CODE : K_PARA, 0, false);
        if (m->state == LINE_CODE)
            md_code_feed(m, &b, 1);
        else
            md_inline_feed(m, &b, 1);
        return;
    }
    m->line[m->len++] = b;
    if (m->state == LINE_START)
        decide(m, false, false);
}

/* The line ends: at a newline (nl) or where the text ends. */
static void end_line(md_render *m, bool nl)
{
    if ((m->state == LINE_START || m->state == LINE_HELD) && (m->len || nl))
        decide(m, true, nl);
    switch (m->state) {
    case LINE_START:
    case LINE_HELD:
        break;
    case LINE_TEXT:
        md_inline_end(m);
        break;
    case LINE_CODE:
        md_code_end_line(m);
        break;
    }
    /* a table row keeps its newline with it */
    if (nl && m->nl_style != MD_TABLE)
        md_emit(m, "\n", 1, m->nl_style);
    m->state = LINE_START;
    m->nl_style = 0;
    m->len = 0;
}

md_render *md_new(int width, bool unicode, text_put put, void *ud)
{
    md_render *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->put = put;
    m->ud = ud;
    m->width = width;
    m->unicode = unicode;
    m->at_bol = true;
    m->code.lang = -1;
    return m;
}

void md_feed(md_render *m, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (s[i] == '\n') {
            end_line(m, true);
            i++;
            continue;
        }
        const char *nl = memchr(s + i, '\n', n - i);
        size_t run = nl ? (size_t)(nl - (s + i)) : n - i;
        if (m->state == LINE_TEXT) {
            md_inline_feed(m, s + i, run);
            i += run;
        } else if (m->state == LINE_CODE) {
            md_code_feed(m, s + i, run);
            i += run;
        } else {
            hold(m, s[i++]);
        }
    }
}

void md_end(md_render *m)
{
    end_line(m, false);
    md_table_end(m);
    if (m->fence) {
        if (!m->at_bol)
            decor(m, "\n", MD_FENCE);
        int width = m->width < FRAME_MAX ? m->width : FRAME_MAX;
        decor(m, m->unicode ? "\xE2\x95\xB0" : "+", MD_FENCE);
        md_fill(m, m->unicode ? "\xE2\x94\x80" : "-", width - 1, MD_FENCE);
        m->fence = false;
    }
    md_code_begin(m, -1);
    m->at_bol = true;
}

void md_free(md_render *m)
{
    if (!m)
        return;
    free(m->line);
    free(m->table.text);
    free(m);
}
