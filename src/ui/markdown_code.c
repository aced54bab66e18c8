/* A code block's body: its bytes as they are, keywords, strings and
 * comments coloured for a few languages.  A light lexer, not a parser:
 * strings end with their line, block comments go on across lines. */
#include <string.h>

#include "markdown_impl.h"

typedef struct language {
    const char *names;        /* what a fence may say, space-separated */
    const char *line_comment; /* "//" or "#" */
    bool block_comment;       /* slash-star comments */
    const char *quotes;       /* characters that open a string */
    const char *keywords;     /* space-separated */
} language;

static const language langs[] = {
    {"c h cpp c++ cc cxx hpp objc", "//", true, "\"'",
     "auto break case char const continue default do double else enum extern float for "
     "goto if inline int long register restrict return short signed sizeof static struct "
     "switch typedef union unsigned void volatile while bool true false NULL nullptr class "
     "namespace template typename public private protected virtual new delete this using "
     "include define ifdef ifndef endif"},
    {"python py python3 py3", "#", false, "\"'",
     "and as assert async await break class continue def del elif else except False "
     "finally for from global if import in is lambda None nonlocal not or pass raise "
     "return True try while with yield self"},
    {"sh bash shell zsh console", "#", false, "\"'",
     "if then else elif fi for while until do done case esac in function return local "
     "export readonly unset shift exit echo set source"},
    {"js javascript jsx mjs ts typescript tsx", "//", true, "\"'`",
     "async await break case catch class const continue default delete do else export "
     "extends false finally for from function if import in instanceof let new null of "
     "return static super switch this throw true try typeof undefined var void while yield "
     "interface type enum implements"},
    {"rust rs", "//", true, "\"",
     "as async await break const continue crate dyn else enum extern false fn for if impl "
     "in let loop match mod move mut pub ref return self Self static struct super trait "
     "true type unsafe use where while Some None Ok Err"},
    {"go golang", "//", true, "\"'`",
     "break case chan const continue default defer else fallthrough for func go goto if "
     "import interface map package range return select struct switch type var nil true "
     "false"},
};
#define N_LANGS (int)(sizeof langs / sizeof langs[0])

/* Whether word[0..n) is one of the space-separated words of list. */
static bool in_list(const char *list, const char *word, size_t n)
{
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && !memcmp(p, word, n))
            return true;
        p += len;
        p += *p == ' ';
    }
    return false;
}

int md_code_lang(const char *name, size_t n)
{
    char lower[32];
    if (n == 0 || n >= sizeof lower)
        return -1;
    for (size_t i = 0; i < n; i++)
        lower[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
    for (int i = 0; i < N_LANGS; i++)
        if (in_list(langs[i].names, lower, n))
            return i;
    return -1;
}

void md_code_begin(md_render *m, int lang)
{
    m->code = (md_code){.lang = lang};
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (unsigned char)c >= 0x80;
}

static void flush_word(md_render *m)
{
    md_code *k = &m->code;
    if (!k->word_len)
        return;
    bool kw = !(k->word[0] >= '0' && k->word[0] <= '9') &&
              in_list(langs[k->lang].keywords, k->word, k->word_len);
    md_emit(m, k->word, k->word_len, MD_BLOCK | (kw ? MD_KEYWORD : 0));
    k->prev = k->word[k->word_len - 1];
    k->word_len = 0;
}

static void put(md_render *m, const char *s, size_t n, unsigned style)
{
    md_emit(m, s, n, MD_BLOCK | style);
    m->code.prev = s[n - 1];
}

static void code_char(md_render *m, char c)
{
    md_code *k = &m->code;
    const language *l = &langs[k->lang];
    if (k->line_comment) {
        put(m, &c, 1, MD_COMMENT);
        return;
    }
    if (k->block_comment) {
        if (k->prev == '*' && c == '/')
            k->block_comment = false;
        put(m, &c, 1, MD_COMMENT);
        if (!k->block_comment)
            k->prev = 0;
        return;
    }
    if (k->quote) {
        bool ends = !k->escaped && c == k->quote;
        k->escaped = !k->escaped && c == '\\';
        put(m, &c, 1, MD_STRING);
        if (ends)
            k->quote = 0;
        return;
    }
    /* a slash held back: a comment's start, or itself before c (a/b) */
    if (k->slash) {
        k->slash = false;
        if (c == '/' && l->line_comment[0] == '/') {
            k->line_comment = true;
            put(m, "//", 2, MD_COMMENT);
            return;
        }
        if (c == '*' && l->block_comment) {
            k->block_comment = true;
            put(m, "/*", 2, MD_COMMENT);
            k->prev = 0; /* its star does not close it */
            return;
        }
        put(m, "/", 1, 0);
    }
    if (word_char(c)) {
        if (k->word_len == sizeof k->word)
            flush_word(m);
        k->word[k->word_len++] = c;
        return;
    }
    flush_word(m);
    bool slashes = l->line_comment[0] == '/' || l->block_comment;
    if (c == '/' && slashes) {
        k->slash = true;
    } else if (c == '#' && l->line_comment[0] == '#' &&
               (k->prev == 0 || k->prev == ' ' || k->prev == '\t')) {
        k->line_comment = true;
        put(m, &c, 1, MD_COMMENT);
    } else if (c && strchr(l->quotes, c)) {
        k->quote = c;
        k->escaped = false;
        put(m, &c, 1, MD_STRING);
    } else {
        put(m, &c, 1, 0);
    }
}

void md_code_feed(md_render *m, const char *s, size_t n)
{
    if (m->code.lang < 0) {
        md_emit(m, s, n, MD_BLOCK);
        return;
    }
    for (size_t i = 0; i < n; i++)
        code_char(m, s[i]);
}

void md_code_end_line(md_render *m)
{
    md_code *k = &m->code;
    if (k->lang < 0)
        return;
    flush_word(m);
    if (k->slash)
        put(m, "/", 1, 0);
    bool block = k->block_comment;
    md_code_begin(m, k->lang);
    k->block_comment = block;
}
