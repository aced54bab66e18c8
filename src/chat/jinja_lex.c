/* The Jinja lexer, following jinja2's rules for the environment Hugging Face
 * uses: trim_blocks (a block or comment tag eats the newline after it),
 * lstrip_blocks (spaces and tabs before a block or comment tag at the start
 * of a line go), `-` on either side of a tag strips all whitespace there,
 * `+` turns the trimming off; {% raw %} passes text through untouched. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja_impl.h"

typedef struct lx {
    const char *s;
    size_t n;
    jarena *a;
    cf_err *err;
    jtok *toks;
    size_t nt, cap;
    /* a cursor for turning byte offsets into lines and columns */
    size_t at_off;
    int at_line, at_col;
} lx;

static void where(lx *L, size_t off, int *line, int *col)
{
    if (off < L->at_off) {
        L->at_off = 0;
        L->at_line = L->at_col = 1;
    }
    for (; L->at_off < off && L->at_off < L->n; L->at_off++) {
        unsigned char c = (unsigned char)L->s[L->at_off];
        if (c == '\n') {
            L->at_line++;
            L->at_col = 1;
        } else if ((c & 0xC0) != 0x80) {
            L->at_col++;
        }
    }
    *line = L->at_line;
    *col = L->at_col;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int lerr(lx *L, size_t off, const char *fmt, ...)
{
    int line, col;
    where(L, off, &line, &col);
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cf_fail(L->err, "template line %d, column %d: %s", line, col, msg);
}

static jtok *emit(lx *L, jtoktype type, size_t off)
{
    if (L->nt == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 256;
        jtok *t = realloc(L->toks, cap * sizeof *t);
        if (!t) {
            cf_fail(L->err, "out of memory reading the template");
            return NULL;
        }
        L->toks = t;
        L->cap = cap;
    }
    jtok *t = &L->toks[L->nt++];
    memset(t, 0, sizeof *t);
    t->type = (uint8_t)type;
    where(L, off, &t->line, &t->col);
    t->p = L->s + off;
    return t;
}

/* Python's str.isspace() / regex \s on the code point at s[i]. */
static size_t space_at(const char *s, size_t n, size_t i)
{
    uint32_t cp;
    size_t len = cf_utf8_decode_esc(s + i, n - i, &cp);
    return jpy_isspace(cp) ? len : 0;
}

/* The length of the whitespace run that ends at `end` (for rstrip). */
static size_t trailing_space(const char *s, size_t start, size_t end)
{
    size_t e = end;
    while (e > start) {
        size_t b = e - 1;
        while (b > start && ((unsigned char)s[b] & 0xC0) == 0x80 && e - b < 4)
            b--;
        if (space_at(s, e, b) != e - b)
            break;
        e = b;
    }
    return end - e;
}

static size_t skip_space(const lx *L, size_t i)
{
    size_t k;
    while (i < L->n && (k = space_at(L->s, L->n, i)) > 0)
        i += k;
    return i;
}

/* Text up to a tag: apply the tag's whitespace control and emit it.
 * ctl is the character after the tag's opening ('-', '+' or other). */
static int emit_data(lx *L, size_t start, size_t end, char ctl, bool lstrip, bool line_starting)
{
    if (ctl == '-') {
        end -= trailing_space(L->s, start, end);
    } else if (ctl != '+' && lstrip) {
        size_t l = end;
        while (l > start && L->s[l - 1] != '\n')
            l--;
        if (l > start || line_starting) {
            size_t k = l;
            while (k < end && (L->s[k] == ' ' || L->s[k] == '\t'))
                k++;
            if (k == end)
                end = l;
        }
    }
    if (end > start) {
        jtok *t = emit(L, T_DATA, start);
        if (!t)
            return -1;
        t->n = end - start;
    }
    return 0;
}

/* After a block or comment's closing: returns where the text resumes.
 * close points at the closing's first char ('%' or '#', or the '-'/'+'
 * before it); `len` is the closing's length. */
static size_t after_close(const lx *L, size_t close, size_t len, bool trim)
{
    char c = L->s[close];
    size_t i = close + len;
    if (c == '-')
        return skip_space(L, i);
    if (c == '+' || !trim)
        return i;
    return i < L->n && L->s[i] == '\n' ? i + 1 : i;
}

/* {% raw %} at q?  Returns the offset after its closing, or 0. */
static size_t raw_begin(const lx *L, size_t q)
{
    size_t i = q + 2;
    if (i < L->n && (L->s[i] == '-' || L->s[i] == '+'))
        i++;
    i = skip_space(L, i);
    if (L->n - i < 3 || memcmp(L->s + i, "raw", 3) != 0)
        return 0;
    i = skip_space(L, i + 3);
    if (L->n - i >= 3 && memcmp(L->s + i, "-%}", 3) == 0)
        return skip_space(L, i + 3);
    if (L->n - i >= 2 && memcmp(L->s + i, "%}", 2) == 0)
        return i + 2;
    return 0;
}

/* The {% endraw %} at or after i: sets its start, control char and end. */
static bool find_endraw(const lx *L, size_t i, size_t *start, char *ctl, size_t *end)
{
    for (; i + 1 < L->n; i++) {
        if (L->s[i] != '{' || L->s[i + 1] != '%')
            continue;
        size_t k = i + 2;
        char c = k < L->n ? L->s[k] : 0;
        if (c == '-' || c == '+')
            k++;
        k = skip_space(L, k);
        if (L->n - k < 6 || memcmp(L->s + k, "endraw", 6) != 0)
            continue;
        k = skip_space(L, k + 6);
        size_t close = k;
        if (k < L->n && (L->s[k] == '-' || L->s[k] == '+'))
            k++;
        if (L->n - k < 2 || memcmp(L->s + k, "%}", 2) != 0)
            continue;
        *start = i;
        *ctl = c;
        *end = after_close(L, close, k + 2 - close, true);
        return true;
    }
    return false;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string literal's body with Python's escapes decoded. */
static int lex_string(lx *L, size_t start, size_t *end)
{
    char q = L->s[start];
    size_t i = start + 1;
    while (i < L->n && L->s[i] != q) {
        if (L->s[i] == '\\')
            i++;
        i++;
    }
    if (i >= L->n)
        return lerr(L, start, "unexpected char %s (a string that never ends)", q == '"' ? "'\"'" : "\"'\"");
    *end = i + 1;
    size_t n = i - start - 1;
    const char *s = L->s + start + 1;
    char *o = jarena_alloc(L->a, n + 1);
    if (!o)
        return cf_fail(L->err, "out of memory reading the template");
    size_t w = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] != '\\' || k + 1 >= n) {
            o[w++] = s[k];
            continue;
        }
        char e = s[++k];
        uint32_t cp;
        int digits = 0, base = 16;
        switch (e) {
        case '\n': continue; /* a line continuation */
        case '\\': o[w++] = '\\'; continue;
        case '\'': o[w++] = '\''; continue;
        case '"': o[w++] = '"'; continue;
        case 'a': o[w++] = '\a'; continue;
        case 'b': o[w++] = '\b'; continue;
        case 'f': o[w++] = '\f'; continue;
        case 'n': o[w++] = '\n'; continue;
        case 'r': o[w++] = '\r'; continue;
        case 't': o[w++] = '\t'; continue;
        case 'v': o[w++] = '\v'; continue;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default:
            if (e >= '0' && e <= '7') {
                base = 8;
                digits = 3;
                k--; /* the digit is part of the number */
                break;
            }
            o[w++] = '\\'; /* Python keeps unknown escapes as they are */
            o[w++] = e;
            continue;
        }
        cp = 0;
        int got = 0;
        while (got < digits && k + 1 < n) {
            int d = hexval(s[k + 1]);
            if (d < 0 || d >= base)
                break;
            cp = cp * (uint32_t)base + (uint32_t)d;
            k++;
            got++;
        }
        if (base == 16 && got < digits)
            return lerr(L, start, "a truncated \\%c escape in a string", e);
        if (cp > 0x10FFFF)
            return lerr(L, start, "an escape past U+10FFFF in a string");
        char u[4];
        size_t len = cf_utf8_encode_esc(cp, u);
        memcpy(o + w, u, len); /* an escape is never shorter than its UTF-8 */
        w += len;
    }
    o[w] = 0;
    jtok *t = emit(L, T_STRING, start);
    if (!t)
        return -1;
    t->p = o;
    t->n = w;
    return 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c) ||
           (unsigned char)c >= 0x80;
}

/* digits with single underscores between them, from i; returns the end */
static size_t digit_run(const lx *L, size_t i, int base)
{
    size_t start = i;
    while (i < L->n) {
        char c = L->s[i];
        if (c == '_' && i > start && i + 1 < L->n && hexval(L->s[i + 1]) >= 0 &&
            hexval(L->s[i + 1]) < base) {
            i++;
            continue;
        }
        int d = hexval(c);
        if (d < 0 || d >= base)
            break;
        i++;
    }
    return i;
}

static int lex_number(lx *L, size_t start, size_t *end)
{
    const char *s = L->s;
    size_t i = digit_run(L, start, 10);
    bool is_float = false;
    int base = 10;
    size_t digits_at = start;
    if (s[start] == '0' && i == start + 1 && i < L->n && s[i] && strchr("bBoOxX", s[i])) {
        base = s[i] == 'b' || s[i] == 'B' ? 2 : s[i] == 'o' || s[i] == 'O' ? 8 : 16;
        digits_at = i + 1;
        if (digits_at < L->n && s[digits_at] == '_')
            digits_at++;
        i = digit_run(L, digits_at, base);
        if (i == digits_at)
            return lerr(L, start, "a malformed number");
    } else {
        if (i + 1 < L->n && s[i] == '.' && is_digit(s[i + 1])) {
            is_float = true;
            i = digit_run(L, i + 1, 10);
        }
        if (i < L->n && (s[i] == 'e' || s[i] == 'E')) {
            size_t k = i + 1;
            if (k < L->n && (s[k] == '+' || s[k] == '-'))
                k++;
            if (k < L->n && is_digit(s[k])) {
                is_float = true;
                i = digit_run(L, k, 10);
            }
        }
    }
    *end = i;
    char buf[128];
    size_t w = 0;
    for (size_t k = digits_at; k < i && w + 1 < sizeof buf; k++)
        if (s[k] != '_')
            buf[w++] = s[k];
    buf[w] = 0;
    if (i - digits_at >= sizeof buf - 1)
        return lerr(L, start, "a number literal too long");
    jtok *t = emit(L, is_float ? T_FLOAT : T_INT, start);
    if (!t)
        return -1;
    t->n = i - start;
    if (is_float) {
        t->f = strtod(buf, NULL);
        return 0;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < w; k++) {
        uint64_t d = (uint64_t)hexval(buf[k]);
        if (v > (UINT64_MAX - d) / (uint64_t)base || v * (uint64_t)base + d > INT64_MAX)
            return lerr(L, start, "an integer literal too large (over 64 bits)");
        v = v * (uint64_t)base + d;
    }
    t->i = (int64_t)v;
    return 0;
}

static const char *const ops2[] = {"//", "**", "==", "!=", ">=", "<="};
static const char ops1[] = "+-/*%~[](){}><=.:|,;";

/* The expression tokens of a tag from i; returns the offset after the
 * tag's closing in *end. */
static int lex_tag(lx *L, size_t i, bool block, size_t *end)
{
    char stack[64];
    int depth = 0;
    const char *close = block ? "%}" : "}}";
    for (;;) {
        i = skip_space(L, i);
        if (i >= L->n)
            return lerr(L, i, "unexpected end of template (a %s never closed)",
                        block ? "'{%' tag" : "'{{' expression");
        const char *s = L->s + i;
        size_t left = L->n - i;
        if (depth == 0) {
            size_t c = 0;
            if (left >= 3 && (s[0] == '-' || (block && s[0] == '+')) && memcmp(s + 1, close, 2) == 0)
                c = 3;
            else if (left >= 2 && memcmp(s, close, 2) == 0)
                c = 2;
            if (c) {
                if (!emit(L, block ? T_BLOCK_END : T_VAR_END, i))
                    return -1;
                *end = block || s[0] == '-' ? after_close(L, i, c, block) : i + c;
                return 0;
            }
        }
        size_t next = i;
        if (is_digit(s[0])) {
            if (lex_number(L, i, &next) < 0)
                return -1;
        } else if (is_ident(s[0])) {
            next = i;
            while (next < L->n && is_ident(L->s[next]))
                next++;
            jtok *t = emit(L, T_NAME, i);
            if (!t)
                return -1;
            t->n = next - i;
        } else if (s[0] == '\'' || s[0] == '"') {
            if (lex_string(L, i, &next) < 0)
                return -1;
        } else {
            size_t len = 0;
            for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
                if (left >= 2 && memcmp(s, ops2[k], 2) == 0)
                    len = 2;
            if (!len && strchr(ops1, s[0]) && s[0])
                len = 1;
            if (!len) {
                char ch[8];
                uint32_t cp;
                size_t cl = cf_utf8_decode_esc(s, left, &cp);
                snprintf(ch, sizeof ch, "%.*s", (int)cl, s);
                return lerr(L, i, "unexpected char '%s'", ch);
            }
            char c = s[0];
            if (len == 1 && (c == '(' || c == '[' || c == '{')) {
                if (depth == (int)sizeof stack)
                    return lerr(L, i, "brackets nested too deeply");
                stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (len == 1 && (c == ')' || c == ']' || c == '}')) {
                if (depth == 0 || stack[depth - 1] != c) {
                    char m[8] = {c, 0};
                    return lerr(L, i, "unexpected '%s'", m);
                }
                depth--;
            }
            jtok *t = emit(L, T_OP, i);
            if (!t)
                return -1;
            memcpy(t->op, s, len);
            t->n = len;
            next = i + len;
        }
        i = next;
    }
}

int jlex(jarena *a, const char *src, size_t len, jtok **toks, size_t *ntoks, cf_err *err)
{
    lx L = {src, len, a, err, NULL, 0, 0, 0, 1, 1};
    size_t pos = 0;
    bool line_starting = true;
    *toks = NULL;
    while (pos < len) {
        size_t q = pos;
        while (q + 1 < len && !(src[q] == '{' && (src[q + 1] == '{' || src[q + 1] == '%' ||
                                                  src[q + 1] == '#')))
            q++;
        if (q + 1 >= len) {
            if (emit_data(&L, pos, len, 0, false, false) < 0)
                goto fail;
            break;
        }
        char kind = src[q + 1];
        char ctl = q + 2 < len ? src[q + 2] : 0;
        size_t body = q + 2 + (ctl == '-' || ctl == '+');
        size_t raw_end = kind == '%' ? raw_begin(&L, q) : 0;
        if (emit_data(&L, pos, q, ctl, kind != '{', line_starting) < 0)
            goto fail;
        if (raw_end) {
            size_t estart = 0, eend = 0;
            char ectl = 0;
            if (!find_endraw(&L, raw_end, &estart, &ectl, &eend)) {
                lerr(&L, q, "missing end of raw directive");
                goto fail;
            }
            if (emit_data(&L, raw_end, estart, ectl, true, false) < 0)
                goto fail;
            pos = eend;
        } else if (kind == '#') {
            size_t e = body;
            while (e + 1 < len && !(src[e] == '#' && src[e + 1] == '}'))
                e++;
            if (e + 1 >= len) {
                lerr(&L, q, "missing end of comment tag");
                goto fail;
            }
            bool ctl_end = e > body && (src[e - 1] == '-' || src[e - 1] == '+');
            pos = ctl_end ? after_close(&L, e - 1, 3, true) : after_close(&L, e, 2, true);
        } else {
            if (!emit(&L, kind == '%' ? T_BLOCK_BEGIN : T_VAR_BEGIN, q))
                goto fail;
            if (lex_tag(&L, body, kind == '%', &pos) < 0)
                goto fail;
        }
        line_starting = pos > 0 && src[pos - 1] == '\n';
    }
    if (!emit(&L, T_EOF, len))
        goto fail;
    *toks = L.toks;
    *ntoks = L.nt;
    return 0;
fail:
    free(L.toks);
    return -1;
}
