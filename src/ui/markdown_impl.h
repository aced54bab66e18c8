/* The markdown renderer's insides, shared by markdown*.c: its state, and
 * the parts each file provides (inline styling, code blocks, tables). */
#ifndef CONFAB_UI_MARKDOWN_IMPL_H
#define CONFAB_UI_MARKDOWN_IMPL_H

#include "markdown.h"

/* Emphasis and code spans within one line (they end with it). */
typedef struct md_inline {
    unsigned base;       /* the line's style: heading, quote, table cell */
    unsigned on;         /* MD_BOLD, MD_ITALIC, MD_STRIKE, MD_CODE now */
    char bold_ch, italic_ch; /* '*' or '_', whichever opened them */
    char run_ch;         /* a run of * _ ~ ` not resolved yet */
    int run_len;
    int code_len;        /* the backticks that opened the code span */
    bool escaped;        /* after a backslash */
    char prev;           /* the character before (' ' at the start) */
} md_inline;

/* A code block's body, coloured when its language is known. */
typedef struct md_code {
    int lang;            /* -1: none */
    char word[64];       /* an identifier held back: a keyword? */
    size_t word_len;
    bool slash;          /* a '/' held back: a comment? */
    char quote;          /* in a string opened by this quote */
    bool escaped, line_comment, block_comment;
    char prev;           /* the character before (0 at the line's start) */
} md_code;

/* Table rows held until the table ends. */
typedef struct md_table {
    char *text;          /* the rows, each but perhaps the last ending in '\n' */
    size_t len, cap;
    int rows;
    bool confirmed;      /* the second row is a delimiter row: a table */
} md_table;

typedef enum md_line_state {
    LINE_START, /* held back: what kind of line is it? */
    LINE_HELD,  /* held back to its end (a fence, a table row) */
    LINE_TEXT,  /* streaming through the inline styling */
    LINE_CODE,  /* streaming through a code block's body */
} md_line_state;

struct md_render {
    text_put put;
    void *ud;
    int width;
    bool unicode;
    char *line;          /* the line so far, while held back */
    size_t len, cap;
    md_line_state state;
    unsigned nl_style;   /* the style of the line's newline */
    md_inline in;
    bool fence;          /* inside a fenced code block */
    char fence_ch;
    size_t fence_len;
    md_code code;
    md_table table;
    bool at_bol;         /* the output is at the start of a line */
};

void md_emit(md_render *m, const char *s, size_t n, unsigned style);
/* n copies of unit (one column wide), added: style | MD_DECOR. */
void md_fill(md_render *m, const char *unit, int n, unsigned style);

/* ---- inline styling (markdown_inline.c) ---------------------------------- */
void md_inline_begin(md_render *m, unsigned base);
void md_inline_feed(md_render *m, const char *s, size_t n);
void md_inline_end(md_render *m);

/* ---- code blocks (markdown_code.c) ---------------------------------------- */
/* The language a fence's info string names (its first word), or -1. */
int md_code_lang(const char *name, size_t n);
void md_code_begin(md_render *m, int lang);
void md_code_feed(md_render *m, const char *s, size_t n);
void md_code_end_line(md_render *m);

/* ---- tables (markdown_table.c) -------------------------------------------- */
/* A whole line starting with '|' (nl: it ended in a newline). */
void md_table_row(md_render *m, const char *row, size_t n, bool nl);
/* A line that is no row, or the text, ended: the rows held go out. */
void md_table_end(md_render *m);

#endif
