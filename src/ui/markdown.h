/* Markdown on the terminal, rendered as a reply streams: headings,
 * bold / italic / strike-through, inline code, lists, block quotes,
 * rules, tables aligned, fenced code blocks framed with their language
 * (keywords, strings and comments coloured for a few languages).
 *
 * Nothing of the text is dropped, changed or moved: every character
 * stays, markers (** ` # > |) included, shown dim; the rendering only
 * adds styles and pieces marked MD_DECOR (a code block's frame around
 * its fence lines, a table's padding).  So the pieces that are not
 * MD_DECOR, in order, are the text fed, byte for byte, however it was cut
 * into calls; and the output does not depend on the cuts either.  The
 * one exception is a table wider than the terminal: its cells' text is
 * wrapped within their columns (glow's way), so it comes row by row of
 * the screen, and its pipes, blanks and delimiter row are drawn
 * (MD_DECOR); such a table's pieces are all marked MD_REFLOW, and those
 * not MD_DECOR are the text of its cells, in another order.  A table whose columns cannot be that
 * narrow (a word wider than its share) is shown as its lines of text.
 *
 * To decide, the renderer holds back only the start of a line until its
 * kind is known (a heading, a list item, a fence...), a run of * _ ~ `
 * until the next character, an identifier in a code block (a keyword?),
 * a fence line and a table row to their end, and a table until it ends
 * (its columns are aligned over all its rows). */
#ifndef CONFAB_UI_MARKDOWN_H
#define CONFAB_UI_MARKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "text.h"

/* What a piece of the output is: a set of these. */
enum md_style {
    MD_BOLD = 1u << 0,
    MD_ITALIC = 1u << 1,
    MD_STRIKE = 1u << 2,
    MD_CODE = 1u << 3,    /* `inline code` */
    MD_MARK = 1u << 4,    /* markdown's own characters: # ** ` > | ``` --- */
    MD_HEADING = 1u << 5,
    MD_BULLET = 1u << 6,  /* a list item's marker */
    MD_QUOTE = 1u << 7,   /* a block quote */
    MD_FENCE = 1u << 8,   /* a code block's fence lines and frame */
    MD_LANG = 1u << 9,    /* the language a fence names */
    MD_BLOCK = 1u << 10,  /* a code block's body */
    MD_KEYWORD = 1u << 11,
    MD_STRING = 1u << 12,
    MD_COMMENT = 1u << 13,
    MD_TABLE = 1u << 14,  /* a table's rows */
    MD_DIM = 1u << 15,    /* text shown dim as a whole (the thinking) */
    MD_DECOR = 1u << 16,  /* not the text's: frames, padding, wrapping's line breaks */
    MD_REFLOW = 1u << 17, /* a wide table reflowed: its cells' text in the order shown */
};

/* Pieces that keep their lines as they are (the terminal wraps them). */
#define MD_NOWRAP (MD_FENCE | MD_BLOCK | MD_TABLE)

typedef struct md_render md_render;

/* A renderer writing to put.  width: the terminal's columns (a frame
 * is that wide, at most 80); unicode: box drawing characters, else
 * ASCII.  NULL when out of memory. */
md_render *md_new(int width, bool unicode, text_put put, void *ud);
/* Render the next piece of the text (any cut: inside a marker, a UTF-8
 * character or a table row).  Out of memory, text goes out unstyled. */
void md_feed(md_render *m, const char *s, size_t n);
/* The text ended: write everything held back (an open code block gets
 * its bottom frame); the renderer is ready for a new text. */
void md_end(md_render *m);
void md_free(md_render *m);

/* ---- onto a terminal (markdown_term.c) ----------------------------------- */
/* How a style shows, in the attributes every terminal has.  The colours
 * read on dark and light backgrounds alike. */
typedef enum md_color { MD_NO_COLOR, MD_GREEN, MD_MAGENTA } md_color;
typedef struct md_look {
    bool bold, dim, italic, strike;
    md_color color;
} md_look;
md_look md_look_of(unsigned style);

typedef struct md_term_opts {
    bool markdown;  /* render markdown; false: the text as it is */
    unsigned base;  /* a style for everything (MD_DIM: the thinking) */
    int width;      /* the terminal's columns: rows wrap at spaces (0: not) */
    bool color;     /* styles as SGR sequences; false: none at all */
    bool unicode;   /* box drawing characters */
} md_term_opts;

typedef struct md_term md_term;

/* Text (already made safe for the terminal) rendered, word-wrapped and
 * written to f as it comes.  NULL when out of memory. */
md_term *md_term_new(FILE *f, const md_term_opts *o);
void md_term_put(md_term *t, const char *s, size_t n);
/* The text ended: write what is held back and reset the styles; returns
 * whether the output ends at the start of a line.  Frees t. */
bool md_term_end(md_term *t);

#endif
