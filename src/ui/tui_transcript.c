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

static int item_rows(const transcript *t, const t_item *it, int width)
{
    size_t len;
    char *tmp;
    const char *text = item_view(t, it, &len, &tmp);
    int rows = wrap_count(text, len, width);
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

/* One row of an item: its runs of one style each. */
static void draw_row(const t_item *it, WINDOW *w, int y, size_t pos, size_t len, bool color)
{
    attr_t base = item_attr(it->kind, color);
    if (!it->style) {
        wattrset(w, base);
        mvwaddnstr(w, y, 0, it->text + pos, (int)len);
        return;
    }
    wmove(w, y, 0);
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
    size_t pos = 0, n;
    char *tmp;
    const char *text = item_view(t, it, &n, &tmp);
    wattrset(w, item_attr(it->kind, color));
    for (int row = 0; row < first + count; row++) {
        size_t next;
        size_t len = wrap_row(text + pos, n - pos, width, &next);
        if (row >= first && text == it->text)
            draw_row(it, w, y + row - first, pos, len, color);
        else if (row >= first)
            mvwaddnstr(w, y + row - first, 0, text + pos, (int)len);
        pos += next;
        if (pos >= n)
            break;
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
        size_t n, pos = 0;
        char *tmp;
        const char *text = item_view(t, &t->items[i], &n, &tmp);
        for (int row = 0, k = wrap_count(text, n, width); row < k; row++) {
            size_t next = 0, len = pos < n ? wrap_row(text + pos, n - pos, width, &next) : 0;
            if (skip-- <= 0)
                fprintf(f, "%.*s\n", (int)len, text + pos);
            pos += next;
        }
        free(tmp);
    }
}
