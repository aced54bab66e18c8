/* The transcript: items (messages, replies, notes, thinking blocks)
 * wrapped to the pane's width when drawn, so a resize re-flows
 * everything.  A rendered reply keeps each byte's markdown style, drawn
 * as attributes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "probs.h"
#include "tui.h"

enum { TAB_WIDTH = 4 };

static int grow(t_item *it, size_t more)
{
    if (buf_reserve(&it->text, &it->cap, it->len + more + 1) < 0)
        return -1;
    if (it->style && it->style_cap < it->cap) {
        unsigned *p = realloc(it->style, it->cap * sizeof *p);
        if (!p)
            return -1;
        it->style = p;
        it->style_cap = it->cap;
    }
    return 0;
}

static int put(t_item *it, const char *s, size_t len, unsigned style)
{
    if (style && !it->style) {
        /* the first styled text: what came before had none */
        if (!(it->style = calloc(it->cap ? it->cap : 1, sizeof *it->style)))
            return -1;
        it->style_cap = it->cap ? it->cap : 1;
    }
    for (size_t i = 0; i < len; i++) {
        int n = s[i] == '\t' ? TAB_WIDTH : 1;
        if (grow(it, (size_t)n) < 0)
            return -1;
        memset(it->text + it->len, s[i] == '\t' ? ' ' : s[i], (size_t)n);
        for (int k = 0; it->style && k < n; k++)
            it->style[it->len + (size_t)k] = style;
        it->len += (size_t)n;
    }
    if (it->text)
        it->text[it->len] = 0;
    return 0;
}

int transcript_add(transcript *t, item_kind kind, const char *text)
{
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        t_item *p = realloc(t->items, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        t->items = p;
        t->cap = cap;
    }
    t_item *it = &t->items[t->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    if (grow(it, 0) < 0)
        return -1;
    it->text[0] = 0;
    return put(it, text, strlen(text), 0);
}

/* What an item shows: its text, or for a thinking block its header and,
 * unfolded, its text under it (*tmp, malloc'ed, to free). */
static const char *item_view(const transcript *t, const t_item *it, size_t *len, char **tmp)
{
    *tmp = NULL;
    *len = it->len;
    if (it->kind != IT_THINK)
        return it->text;
    const char *mark = t->fold ? (t->unicode ? "▸" : "[+]") : (t->unicode ? "▾" : "[-]");
    size_t n = strlen(it->head) + it->len + 64;
    if (!(*tmp = malloc(n)))
        return "";
    *len = (size_t)snprintf(*tmp, n, "%s %s  (F3 %s)%s%s", mark, it->head,
                            t->fold ? "shows it" : "folds it", t->fold || !it->len ? "" : "\n",
                            t->fold ? "" : it->text);
    return *tmp;
}

/* Walking an item's screen rows: a line of a rendered reply that starts
 * with a list item's marker or a quote's continues on rows that hang
 * under its text (the quote's marker repeated), as line mode's do. */
typedef struct row_walk {
    const char *text;
    const unsigned *style; /* NULL: plain text, no hanging */
    size_t n, pos, line;   /* where the next row, and its line, start */
    bool tail, done;       /* a text ending in a newline has an empty last row */
} row_walk;

typedef struct row {
    size_t at, len;  /* the row's bytes */
    size_t line;     /* where its line starts */
    size_t keep;     /* bytes of the line's start drawn before it (a quote's marker) */
    int hang;        /* the column the row's bytes start at */
} row;

static row_walk walk_of(const t_item *it, const char *text, size_t n)
{
    return (row_walk){text, text == it->text ? it->style : NULL, n, 0, 0, false, false};
}

/* The columns a line's later rows hang at, and *keep: the bytes of its
 * start to repeat on them (0: blanks do). */
static int lead_of(const row_walk *r, size_t *keep)
{
    int cols = 0;
    bool marked = false;
    *keep = 0;
    for (size_t i = r->line; r->style && i < r->n && r->text[i] != '\n'; i++) {
        unsigned st = r->style[i];
        bool quote = (st & (MD_QUOTE | MD_MARK)) == (MD_QUOTE | MD_MARK);
        if (r->text[i] != ' ' && !quote && !(st & MD_BULLET))
            break;
        marked |= r->text[i] != ' ';
        if (quote)
            *keep = i + 1 - r->line;
        cols++;
    }
    return marked ? cols : 0;
}

static bool row_next(row_walk *r, int width, row *out)
{
    if (r->done)
        return false;
    out->hang = 0;
    out->keep = 0;
    if (r->pos > r->line)
        out->hang = lead_of(r, &out->keep);
    if (2 * out->hang > width)
        out->hang = 0, out->keep = 0;
    size_t next;
    out->at = r->pos;
    out->line = r->line;
    out->len = wrap_row(r->text + r->pos, r->n - r->pos, width - out->hang, &next);
    if (r->pos + out->len < r->n && r->text[r->pos + out->len] == '\n')
        r->line = r->pos + next;
    r->pos += next;
    if (r->pos >= r->n) {
        r->done = r->tail || !r->n || r->text[r->n - 1] != '\n';
        r->tail = true;
    }
    return true;
}

static int item_rows(const transcript *t, const t_item *it, int width)
{
    size_t len;
    char *tmp;
    const char *text = item_view(t, it, &len, &tmp);
    row_walk r = walk_of(it, text, len);
    row rw;
    int rows = 0;
    while (row_next(&r, width, &rw))
        rows++;
    free(tmp);
    return rows;
}

int transcript_append(transcript *t, int i, const char *text, int width)
{
    return transcript_put(t, i, text, strlen(text), 0, width);
}

int transcript_put(transcript *t, int i, const char *s, size_t n, unsigned style, int width)
{
    if (i < 0 || i >= t->n)
        return -1;
    t_item *it = &t->items[i];
    /* Reading back in time: keep the view where it is as text arrives. */
    int before = t->scroll ? item_rows(t, it, width) : 0;
    if (put(it, s, n, style) < 0)
        return -1;
    if (t->scroll)
        t->scroll += item_rows(t, it, width) - before;
    return 0;
}

void transcript_fold(transcript *t, bool fold)
{
    t->fold = fold;
    t->scroll = 0;
}

void transcript_truncate(transcript *t, int n)
{
    while (t->n > n && t->n > 0) {
        t->n--;
        free(t->items[t->n].text);
        free(t->items[t->n].style);
    }
    t->scroll = 0;
}

int transcript_last(const transcript *t, item_kind kind)
{
    for (int i = t->n - 1; i >= 0; i--)
        if (t->items[i].kind == kind)
            return i;
    return -1;
}

void transcript_free(transcript *t)
{
    transcript_truncate(t, 0);
    free(t->items);
    memset(t, 0, sizeof *t);
}

int transcript_rows(const transcript *t, int width)
{
    int rows = 0;
    for (int i = 0; i < t->n; i++)
        rows += item_rows(t, &t->items[i], width);
    return rows;
}

void transcript_scroll(transcript *t, int delta, int width, int height)
{
    int max = transcript_rows(t, width) - height;
    t->scroll += delta;
    if (t->scroll > max)
        t->scroll = max;
    if (t->scroll < 0)
        t->scroll = 0;
}

static attr_t item_attr(item_kind k, bool color)
{
    switch (k) {
    case IT_USER:
    case IT_COMMAND:
        return A_BOLD | (color ? COLOR_PAIR(PAIR_USER) : 0);
    case IT_ERROR:
        return A_BOLD | (color ? COLOR_PAIR(PAIR_ERROR) : 0);
    case IT_INFO:
        return color ? COLOR_PAIR(PAIR_INFO) : 0;
    case IT_DIM:
    case IT_THINK:
        return A_DIM;
    case IT_REPLY:
        break;
    }
    return A_NORMAL;
}

/* A markdown style and a probability tone as attributes (without colour,
 * as the items here, the attributes stay and the colours go; the least
 * likely tokens are underlined). */
static attr_t style_attr(unsigned style, bool color)
{
    md_look l = md_look_of(style);
    attr_t a = (l.dim ? A_DIM : 0) | (l.bold ? A_BOLD : 0);
#ifdef A_ITALIC
    a |= l.italic ? A_ITALIC : 0;
#endif
    if (l.color && color)
        a |= COLOR_PAIR(l.color == MD_GREEN ? PAIR_GREEN : PAIR_MAGENTA);
    int tone = (int)(style >> STYLE_TONE_SHIFT);
    if (tone && color)
        a |= COLOR_PAIR(PAIR_TONE + tone);
    else if (tone == PROB_TONES - 1)
        a |= A_UNDERLINE;
    return a;
}

/* Bytes of an item at column x of row y: their runs of one style each. */
static void draw_row(const t_item *it, WINDOW *w, int y, int x, size_t pos, size_t len, bool color)
{
    attr_t base = item_attr(it->kind, color);
    if (!it->style) {
        wattrset(w, base);
        mvwaddnstr(w, y, x, it->text + pos, (int)len);
        return;
    }
    wmove(w, y, x);
    for (size_t start = pos, i = pos + 1; i <= pos + len; i++)
        if (i == pos + len || it->style[i] != it->style[start]) {
            wattrset(w, base | style_attr(it->style[start], color));
            waddnstr(w, it->text + start, (int)(i - start));
            start = i;
        }
}

/* Draw rows [first, first + count) of an item with its top row at y. */
static void draw_item(const transcript *t, const t_item *it, WINDOW *w, int y, int first,
                      int count, int width, bool color)
{
    size_t n;
    char *tmp;
    const char *text = item_view(t, it, &n, &tmp);
    row_walk r = walk_of(it, text, n);
    row rw;
    wattrset(w, item_attr(it->kind, color));
    for (int k = 0; k < first + count && row_next(&r, width, &rw); k++) {
        if (k < first)
            continue;
        if (text == it->text) {
            if (rw.keep)
                draw_row(it, w, y + k - first, 0, rw.line, rw.keep, color);
            draw_row(it, w, y + k - first, rw.hang, rw.at, rw.len, color);
        } else {
            mvwaddnstr(w, y + k - first, 0, text + rw.at, (int)rw.len);
        }
    }
    wattrset(w, A_NORMAL);
    free(tmp);
}

void transcript_draw(const transcript *t, WINDOW *w, bool color)
{
    int height, width;
    getmaxyx(w, height, width);
    werase(w);
    /* Walk back from the newest item: `bottom` is the row, counted from
     * the bottom of all text, where the current item ends. */
    int bottom = 0;
    for (int i = t->n - 1; i >= 0 && bottom < t->scroll + height; i--) {
        int rows = item_rows(t, &t->items[i], width);
        int top = bottom + rows; /* rows from the bottom to the item's top */
        /* The item's rows in view: screen row of its top row. */
        int y_top = height - (top - t->scroll);
        int first = y_top < 0 ? -y_top : 0;
        int last = rows - (bottom < t->scroll ? t->scroll - bottom : 0);
        if (last > first)
            draw_item(t, &t->items[i], w, y_top + first, first, last - first, width, color);
        bottom = top;
    }
    wnoutrefresh(w);
}

void transcript_print(const transcript *t, FILE *f, int width, int rows)
{
    int skip = transcript_rows(t, width) - rows;
    for (int i = 0; i < t->n; i++) {
        size_t n;
        char *tmp;
        const char *text = item_view(t, &t->items[i], &n, &tmp);
        row_walk r = walk_of(&t->items[i], text, n);
        row rw;
        while (row_next(&r, width, &rw))
            if (skip-- <= 0)
                fprintf(f, "%.*s%*s%.*s\n", (int)rw.keep, text + rw.line, rw.hang - (int)rw.keep,
                        "", (int)rw.len, text + rw.at);
        free(tmp);
    }
}
