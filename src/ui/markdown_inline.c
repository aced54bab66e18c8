/* Emphasis, strike-through and code spans within a line.
 *
 * Streaming, a delimiter cannot wait for its closer (it may never come),
 * so a run of * or _ opens emphasis when it could by CommonMark's
 * flanking rules (not before a space; _ not inside a word) and closes it
 * when it could; whatever is still open ends with the line.  A wrong
 * guess only styles the rest of a line: the markers stay visible (dim),
 * and no character is ever held back past the next one. */
#include <string.h>

#include "markdown_impl.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/* Letters and digits, and any byte of a non-ASCII character. */
static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (unsigned char)c >= 0x80;
}

static unsigned now(const md_inline *in)
{
    return in->base | in->on;
}

static void emit_run(md_render *m, char c, int n, unsigned style)
{
    char buf[16];
    while (n > 0) {
        int k = n < (int)sizeof buf ? n : (int)sizeof buf;
        memset(buf, c, (size_t)k);
        md_emit(m, buf, (size_t)k, style);
        n -= k;
    }
}

static void resolve_code(md_render *m)
{
    md_inline *in = &m->in;
    if (!(in->on & MD_CODE)) {
        in->on |= MD_CODE;
        in->code_len = in->run_len;
        emit_run(m, '`', in->run_len, in->base | MD_CODE | MD_MARK);
    } else if (in->run_len == in->code_len) {
        emit_run(m, '`', in->run_len, in->base | MD_CODE | MD_MARK);
        in->on &= ~(unsigned)MD_CODE;
    } else {
        emit_run(m, '`', in->run_len, now(in));
    }
}

/* The run of * _ ~ or ` before `next` (' ' at the end of the line). */
static void resolve(md_render *m, char next)
{
    md_inline *in = &m->in;
    char c = in->run_ch;
    int left = in->run_len;
    if (c == '`') {
        resolve_code(m);
    } else {
        bool can_open = !is_space(next), can_close = !is_space(in->prev);
        if (c == '_') {
            can_open = can_open && !is_alnum(in->prev);
            can_close = can_close && !is_alnum(next);
        }
        unsigned before = in->on;
        if (c == '~') {
            if (left == 2 && (in->on & MD_STRIKE) && can_close)
                in->on &= ~(unsigned)MD_STRIKE;
            else if (left == 2 && !(in->on & MD_STRIKE) && can_open)
                in->on |= MD_STRIKE;
        } else if (can_close && (((in->on & MD_BOLD) && in->bold_ch == c && left >= 2) ||
                                 ((in->on & MD_ITALIC) && in->italic_ch == c))) {
            if (left >= 2 && (in->on & MD_BOLD) && in->bold_ch == c)
                in->on &= ~(unsigned)MD_BOLD, left -= 2;
            if (left >= 1 && (in->on & MD_ITALIC) && in->italic_ch == c)
                in->on &= ~(unsigned)MD_ITALIC;
        } else if (can_open) {
            /* ** bold, * italic, *** both */
            if (left >= 2 && !(in->on & MD_BOLD))
                in->on |= MD_BOLD, in->bold_ch = c, left -= 2;
            if (left == 1 && !(in->on & MD_ITALIC))
                in->on |= MD_ITALIC, in->italic_ch = c;
        }
        /* a run that changed nothing is text */
        emit_run(m, c, in->run_len, in->on == before ? now(in) : in->base | MD_MARK);
    }
    in->prev = c;
    in->run_len = 0;
}

void md_inline_begin(md_render *m, unsigned base)
{
    m->in = (md_inline){.base = base, .prev = ' '};
}

void md_inline_feed(md_render *m, const char *s, size_t n)
{
    md_inline *in = &m->in;
    size_t start = 0; /* plain text not yet written */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool code = in->on & MD_CODE;
        bool delim = c == '`' || (!code && (c == '*' || c == '_' || c == '~'));
        if (!in->escaped && !in->run_len && !delim && c != '\\')
            continue;
        md_emit(m, s + start, i - start, now(in));
        if (i > start)
            in->prev = s[i - 1];
        start = i + 1;
        if (in->escaped) {
            md_emit(m, &c, 1, now(in));
            in->escaped = false;
            in->prev = c;
            continue;
        }
        if (in->run_len && c != in->run_ch)
            resolve(m, c);
        code = in->on & MD_CODE;
        delim = c == '`' || (!code && (c == '*' || c == '_' || c == '~'));
        if (delim) {
            in->run_ch = c;
            in->run_len++;
        } else if (c == '\\' && !code) {
            md_emit(m, &c, 1, in->base | MD_MARK);
            in->escaped = true;
            in->prev = c;
        } else {
            md_emit(m, &c, 1, now(in));
            in->prev = c;
        }
    }
    md_emit(m, s + start, n - start, now(in));
    if (n > start)
        in->prev = s[n - 1];
}

void md_inline_end(md_render *m)
{
    if (m->in.run_len)
        resolve(m, ' ');
    m->in.on = 0;
    m->in.escaped = false;
}
