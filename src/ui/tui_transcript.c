/* The transcript: items (messages, replies, notes, thinking blocks)
 * wrapped to the pane's width when drawn, so a resize re-flows
 * everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probs.h"
#include "text.h"
#include "tui.h"

enum { TAB_WIDTH = 4 };

static int grow(t_item *it, size_t more)
{
    return buf_reserve(&it->text, &it->cap, it->len + more + 1);
}

/* Tones for text[0..len) (all plain so far) once one is not plain. */
static int give_tones(t_item *it, int tone)
{
    if (!tone && !it->tone)
        return 0;
    if (it->tone_cap < it->cap) {
        unsigned char *p = realloc(it->tone, it->cap);
        if (!p)
            return -1;
        memset(p + it->tone_cap, 0, it->cap - it->tone_cap);
        it->tone = p;
        it->tone_cap = it->cap;
    }
    return 0;
}

static int put(t_item *it, const char *s, int tone)
{
    for (; *s; s++) {
        int n = *s == '\t' ? TAB_WIDTH : 1;
        if (grow(it, (size_t)n) < 0 || give_tones(it, tone) < 0)
            return -1;
        memset(it->text + it->len, *s == '\t' ? ' ' : *s, (size_t)n);
        if (it->tone)
            memset(it->tone + it->len, tone, (size_t)n);
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
    return put(it, text, 0);
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

int transcript_append(transcript *t, int i, const char *text, int tone, int width)
{
    if (i < 0 || i >= t->n)
        return -1;
    t_item *it = &t->items[i];
    /* Reading back in time: keep the view where it is as text arrives. */
    int before = t->scroll ? item_rows(t, it, width) : 0;
    if (put(it, text, tone) < 0)
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
        free(t->items[--t->n].text);
        free(t->items[t->n].tone);
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
        return A_BOLD | (color ? COLOR_PAIR(1) : 0);
    case IT_ERROR:
        return A_BOLD | (color ? COLOR_PAIR(2) : 0);
    case IT_INFO:
        return color ? COLOR_PAIR(3) : 0;
    case IT_DIM:
    case IT_THINK:
        return A_DIM;
    case IT_REPLY:
        break;
    }
    return A_NORMAL;
}

/* A row's bytes, in runs of one tone. */
static void draw_toned(WINDOW *w, int y, const char *text, const unsigned char *tone, size_t len,
                       attr_t base, bool color, short tone_pair)
{
    wmove(w, y, 0);
    for (size_t a = 0, b; a < len; a = b) {
        for (b = a + 1; b < len && tone[b] == tone[a]; b++)
            ;
        attr_t at = base;
        if (tone[a] && color)
            at |= COLOR_PAIR(tone_pair + tone[a]);
        else if (tone[a] == PROB_TONES - 1)
            at |= A_UNDERLINE;
        wattrset(w, at);
        waddnstr(w, text + a, (int)(b - a));
    }
    wattrset(w, base);
}

/* Draw rows [first, first + count) of an item with its top row at y. */
static void draw_item(const transcript *t, const t_item *it, WINDOW *w, int y, int first,
                      int count, int width, bool color, short tone_pair)
{
    size_t pos = 0, n;
    char *tmp;
    const char *text = item_view(t, it, &n, &tmp);
    wattrset(w, item_attr(it->kind, color));
    for (int row = 0; row < first + count; row++) {
        size_t next;
        size_t len = wrap_row(text + pos, n - pos, width, &next);
        if (row >= first && it->tone && !tmp)
            draw_toned(w, y + row - first, text + pos, it->tone + pos, len,
                       item_attr(it->kind, color), color, tone_pair);
        else if (row >= first)
            mvwaddnstr(w, y + row - first, 0, text + pos, (int)len);
        pos += next;
        if (pos >= n)
            break;
    }
    wattrset(w, A_NORMAL);
    free(tmp);
}

void transcript_draw(const transcript *t, WINDOW *w, bool color, short tone_pair)
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
            draw_item(t, &t->items[i], w, y_top + first, first, last - first, width, color,
                      tone_pair);
        bottom = top;
    }
    wnoutrefresh(w);
}
