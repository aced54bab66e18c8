/* UTF-8 text for the terminal: validation, display width, row wrapping. */
#ifndef CONFAB_UI_TEXT_H
#define CONFAB_UI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define UTF8_REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

/* Make a growable byte buffer hold at least `need` bytes (doubling);
 * 0, or -1 when out of memory (the buffer is left as it was). */
int buf_reserve(char **buf, size_t *cap, size_t need);

/* Decode the UTF-8 sequence at s (n bytes available): its length 1..4 and
 * code point, or 0 when the bytes there are not valid UTF-8 (overlong
 * forms, surrogates, values past U+10FFFF and truncated sequences are all
 * invalid). */
int utf8_decode(const char *s, size_t n, uint32_t *cp);

/* A copy of s[0..n) in which every invalid UTF-8 sequence (each maximal
 * subpart, as Unicode recommends: "\xE2\x82" is one, "\xFF\xFE" two), and
 * every NUL, is replaced by one U+FFFD; *n_bad counts them.  malloc'ed,
 * NULL when out of memory. */
char *utf8_sanitize(const char *s, size_t n, int *n_bad);

/* Text a model wrote, made safe to print: carriage returns dropped, other
 * control characters (all but newline and tab; ESC above all) and invalid
 * bytes shown as U+FFFD, so a reply can never move the cursor or change
 * colours.  malloc'ed; NULL when out of memory. */
char *text_for_terminal(const char *s);

/* Columns a code point takes on the terminal (0, 1 or 2). */
int cp_width(uint32_t cp);
/* Columns of the first n bytes of s. */
int utf8_width(const char *s, size_t n);

/* One screen row of s[0..n) in `width` columns: returns the bytes the row
 * shows and sets *next to where the following row starts.  Breaks after a
 * space when a word would not fit, at a newline (not shown), else mid-word;
 * never splits a UTF-8 sequence. */
size_t wrap_row(const char *s, size_t n, int width, size_t *next);
/* Rows s[0..n) takes in `width` columns (an empty text takes one). */
int wrap_count(const char *s, size_t n, int width);
/* Where a line's later rows start when it wraps: after the first run of
 * two or more spaces that follows its first word (a "NAME  what it does"
 * row of a listing), else at its own indent; 0 when that would leave
 * less than half the row. */
int wrap_hang(const char *s, size_t n, int width);
/* Lines of text (s, newlines between them) written to f broken at spaces
 * into rows of `width` columns, each row between pre and post (colour)
 * and ending in a newline; a line's later rows take its wrap_hang.  col:
 * the columns of the first row the caller has written already (a prefix
 * such as "error: ", which the first line's later rows then hang under).
 * width < 1: each line as it is. */
void wrap_print(FILE *f, const char *s, int width, int col, const char *pre, const char *post);

/* ---- word wrapping as text streams (text_wrap_stream.c) ------------------- */
/* Where text goes: n bytes of one style (a number the caller gives
 * meaning to). */
typedef void (*text_put)(void *ud, const char *s, size_t n, unsigned style);

enum { WRAP_WORD_MAX = 1024, WRAP_LEAD_MAX = 64 };

/* Text written to a terminal `width` columns wide as it comes, broken
 * into rows at spaces: a word that would cross the margin goes to the
 * next row.  The wrapping only inserts line breaks ("\n" of style brk),
 * after the spaces, so nothing of the text is lost or moved; a word wider
 * than a row, and text of a `nowrap` style, is left for the terminal to
 * wrap (nothing inserted).  A word is held back until it is known to fit;
 * rows of words end before the last column, which keeps the space after
 * them (a space that finds a row full starts the next one). */
typedef struct wrap_stream {
    int width; /* < 2: no wrapping */
    unsigned nowrap, brk;
    text_put put;
    void *ud;
    /* the rest is the stream's */
    int col;        /* where the terminal's cursor is */
    bool long_word; /* in a word wider than a row */
    size_t len;     /* the word held back, with each byte's style */
    int word_w;
    char word[WRAP_WORD_MAX];
    unsigned style[WRAP_WORD_MAX];
    char part[4]; /* a character cut between two calls */
    int part_len;
    unsigned part_style;
    /* a line's hanging indent (wrap_stream_hang) */
    unsigned hang_blank, hang_keep;
    bool at_lead;   /* the line's lead is still being read */
    bool lead_marked; /* it has a marker: the line hangs */
    size_t lead_len;
    int lead_w;
    char lead[WRAP_LEAD_MAX];
    unsigned lead_style[WRAP_LEAD_MAX];
} wrap_stream;

void wrap_stream_init(wrap_stream *w, int width, unsigned nowrap, unsigned brk, text_put put,
                      void *ud);
/* Hanging indents: a line that starts (after blanks) with text of a
 * style in `blank` (a list item's marker) continues, on the rows the
 * wrapping adds, under the text after the marker; one whose start has the
 * style `keep` (all its bits: a quote's marker) repeats that start on
 * each such row.  What is added is of style brk (with the marker's style
 * for a repeated one).  No hang when it would take over half the row. */
void wrap_stream_hang(wrap_stream *w, unsigned blank, unsigned keep);
void wrap_stream_put(wrap_stream *w, const char *s, size_t n, unsigned style);
/* Write what is held back (the text ended); returns whether the output
 * ends at the start of a row. */
bool wrap_stream_flush(wrap_stream *w);

#endif
