/* Word wrapping for text that streams to a terminal, where what is written
 * cannot be taken back: a word waits until it is known where it goes. */
#include <string.h>

#include "text.h"

enum { TAB_STOP = 8 };

static void out(wrap_stream *w, const char *s, size_t n, unsigned style)
{
    if (n)
        w->put(w->ud, s, n, style);
}

static void new_row(wrap_stream *w)
{
    out(w, "\n", 1, w->brk);
    w->col = 0;
    if (w->at_lead || !w->lead_marked || 2 * w->lead_w > w->width)
        return;
    size_t start = 0;
    for (size_t i = 1; i <= w->lead_len; i++)
        if (i == w->lead_len || w->lead_style[i] != w->lead_style[start]) {
            out(w, w->lead + start, i - start, w->lead_style[start] | w->brk);
            start = i;
        }
    w->col = w->lead_w;
}

/* The cursor after cw more columns: a full row wraps on the terminal. */
static void advance(wrap_stream *w, int cw)
{
    w->col = w->col > 0 && w->col + cw > w->width ? cw : w->col + cw;
}

static int char_width(const char *c, size_t n)
{
    uint32_t cp;
    return utf8_decode(c, n, &cp) ? cp_width(cp) : 1;
}

/* Write the word held back, in its styles. */
static void write_word(wrap_stream *w)
{
    size_t start = 0;
    for (size_t i = 1; i <= w->len; i++)
        if (i == w->len || w->style[i] != w->style[start]) {
            out(w, w->word + start, i - start, w->style[start]);
            start = i;
        }
    advance(w, w->word_w);
    w->len = 0;
    w->word_w = 0;
}

/* The word ended; `after` columns must follow it on its row. */
static void place_word(wrap_stream *w, int after)
{
    if (!w->len)
        return;
    if (w->col > 0 && w->col + w->word_w + after > w->width)
        new_row(w);
    write_word(w);
}

static void lead_add(wrap_stream *w, const char *c, size_t n, unsigned style)
{
    if (w->lead_len + n > WRAP_LEAD_MAX) {
        w->at_lead = w->lead_marked = false;
        return;
    }
    memcpy(w->lead + w->lead_len, c, n);
    for (size_t i = 0; i < n; i++)
        w->lead_style[w->lead_len++] = style;
}

/* The start of a line, up to its first character of text: blanks and
 * markers, which its wrapped rows hang under. */
static void read_lead(wrap_stream *w, const char *c, size_t n, unsigned style)
{
    bool keep = w->hang_keep && (style & w->hang_keep) == w->hang_keep;
    if (*c == ' ' || *c == '\t') {
        int cw = *c == '\t' ? TAB_STOP - w->lead_w % TAB_STOP : 1;
        for (int i = 0; i < cw; i++)
            lead_add(w, " ", 1, keep ? style : 0);
        w->lead_w += cw;
    } else if (keep || (style & w->hang_blank)) {
        int cw = char_width(c, n);
        if (keep)
            lead_add(w, c, n, style);
        for (int i = 0; !keep && i < cw; i++)
            lead_add(w, " ", 1, 0);
        w->lead_w += cw;
        w->lead_marked = w->at_lead;
    } else {
        w->at_lead = false;
    }
}

static void put_char(wrap_stream *w, const char *c, size_t n, unsigned style)
{
    bool blank = *c == ' ' || *c == '\t';
    if (*c == '\n') {
        w->at_lead = true;
        w->lead_marked = false;
        w->lead_len = 0;
        w->lead_w = 0;
    } else if (w->at_lead) {
        read_lead(w, c, n, style);
    }
    if ((style & w->nowrap) || *c == '\n' || w->width < 2) {
        place_word(w, 0);
        w->long_word = false;
        out(w, c, n, style);
        if (*c == '\n')
            w->col = 0;
        else
            advance(w, *c == '\t' ? TAB_STOP - w->col % TAB_STOP : char_width(c, n));
        return;
    }
    if (blank) {
        place_word(w, 1);
        w->long_word = false;
        if (w->col >= w->width)
            new_row(w);
        out(w, c, n, style);
        w->col += *c == '\t' ? TAB_STOP - w->col % TAB_STOP : 1;
        return;
    }
    int cw = char_width(c, n);
    if (w->long_word) {
        out(w, c, n, style);
        advance(w, cw);
        return;
    }
    if (w->len + n > WRAP_WORD_MAX) {
        /* a "word" this long is no word: the terminal wraps it */
        place_word(w, 0);
        w->long_word = true;
        out(w, c, n, style);
        advance(w, cw);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        w->word[w->len] = c[i];
        w->style[w->len++] = style;
    }
    w->word_w += cw;
    if (w->col + w->word_w > w->width) {
        if (w->col > 0)
            new_row(w);
        if (w->word_w > w->width) {
            write_word(w);
            w->long_word = true;
        }
    }
}

void wrap_stream_init(wrap_stream *w, int width, unsigned nowrap, unsigned brk, text_put put,
                      void *ud)
{
    w->width = width;
    w->nowrap = nowrap;
    w->brk = brk;
    w->put = put;
    w->ud = ud;
    w->col = 0;
    w->long_word = false;
    w->len = 0;
    w->word_w = 0;
    w->part_len = 0;
    w->hang_blank = w->hang_keep = 0;
    w->at_lead = true;
    w->lead_marked = false;
    w->lead_len = 0;
    w->lead_w = 0;
}

void wrap_stream_hang(wrap_stream *w, unsigned blank, unsigned keep)
{
    w->hang_blank = blank;
    w->hang_keep = keep;
}

/* Bytes a UTF-8 sequence starting with b takes (1 for a byte that starts none). */
static int seq_len(unsigned char b)
{
    return b >= 0xF0 && b < 0xF8 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
}

void wrap_stream_put(wrap_stream *w, const char *s, size_t n, unsigned style)
{
    size_t i = 0;
    while (w->part_len && w->part_len < (int)sizeof w->part && i < n) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            /* not continued: the bytes so far stand alone */
            put_char(w, w->part, (size_t)w->part_len, w->part_style);
            w->part_len = 0;
            break;
        }
        w->part[w->part_len++] = s[i++];
        if (w->part_len == seq_len((unsigned char)w->part[0])) {
            put_char(w, w->part, (size_t)w->part_len, w->part_style);
            w->part_len = 0;
        }
    }
    while (i < n) {
        size_t len = (size_t)seq_len((unsigned char)s[i]);
        for (size_t k = 1; k < len && i + k < n; k++)
            if (((unsigned char)s[i + k] & 0xC0) != 0x80)
                len = 1;
        if (i + len > n) {
            size_t left = n - i < sizeof w->part ? n - i : sizeof w->part;
            memcpy(w->part, s + i, left);
            w->part_len = (int)left;
            w->part_style = style;
            return;
        }
        put_char(w, s + i, len, style);
        i += len;
    }
}

bool wrap_stream_flush(wrap_stream *w)
{
    if (w->part_len)
        put_char(w, w->part, (size_t)w->part_len, w->part_style);
    w->part_len = 0;
    place_word(w, 0);
    w->long_word = false;
    return w->col == 0;
}
