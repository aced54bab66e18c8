/* Tables: rows starting with '|' are held; a second row of dashes (the
 * delimiter row) makes them a table, shown when it ends with its columns
 * aligned by padding (added spaces, or dashes in the delimiter row) and
 * each cell styled inline; without one the held row is a line of text.
 * A table wider than the terminal has its cells' text wrapped within
 * narrower columns, as glow does, so that no row is split across screen
 * lines; when a column cannot be as narrow as its longest word (up to
 * WORD_CUT columns: longer ones are cut), its lines go out as text. */
#include <stdlib.h>
#include <string.h>

#include "markdown_impl.h"

typedef enum align { LEFT, RIGHT, CENTER } align;

enum { WORD_CUT = 12 };

/* A cell: text between two pipes (or after the last one). */
typedef struct cell {
    const char *s;
    size_t n;
    bool closed; /* a pipe follows */
} cell;

static bool delimiter_row(const char *p, size_t n)
{
    bool dash = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '-')
            dash = true;
        else if (p[i] != '|' && p[i] != ':' && p[i] != ' ' && p[i] != '\t')
            return false;
    }
    return dash;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* Split a row into its lead (before the first pipe) and cells, at most
 * max; returns how many.  An escaped pipe (\|) is text. */
static int split(const char *row, size_t n, size_t *lead, cell *cells, int max)
{
    int k = 0;
    size_t start = 0;
    bool first = true;
    for (size_t i = 0; i <= n; i++) {
        bool pipe = i < n && row[i] == '|' && (i == 0 || row[i - 1] != '\\');
        if (!pipe && i < n)
            continue;
        if (first) {
            *lead = i;
            first = false;
        } else if (k < max && (pipe || !blank(row + start, i - start))) {
            cells[k++] = (cell){row + start, i - start, pipe};
        }
        start = i + 1;
    }
    return k;
}

static align cell_align(const cell *c)
{
    size_t a = 0, b = c->n;
    while (a < b && (c->s[a] == ' ' || c->s[a] == '\t'))
        a++;
    while (b > a && (c->s[b - 1] == ' ' || c->s[b - 1] == '\t'))
        b--;
    bool l = a < b && c->s[a] == ':', r = a < b && c->s[b - 1] == ':';
    return l && r ? CENTER : r ? RIGHT : LEFT;
}

/* The next row of the held text: its length, and whether a newline ends it. */
static size_t next_row(const char *p, size_t left, bool *nl)
{
    const char *e = memchr(p, '\n', left);
    *nl = e != NULL;
    return e ? (size_t)(e - p) : left;
}

static void render_text(md_render *m)
{
    const md_table *t = &m->table;
    for (size_t at = 0; at < t->len;) {
        bool nl;
        size_t n = next_row(t->text + at, t->len - at, &nl);
        md_inline_begin(m, 0);
        md_inline_feed(m, t->text + at, n);
        md_inline_end(m);
        if (nl)
            md_emit(m, "\n", 1, 0);
        at += n + nl;
    }
}

static void render_cell(md_render *m, const cell *c, int pad, align a, bool delim, bool header)
{
    if (delim) {
        /* dashes go after the last dash, so the rule stays whole */
        size_t at = c->n;
        while (at > 0 && c->s[at - 1] != '-')
            at--;
        md_emit(m, c->s, at, MD_TABLE | MD_MARK);
        md_fill(m, "-", pad, MD_TABLE | MD_MARK);
        md_emit(m, c->s + at, c->n - at, MD_TABLE | MD_MARK);
        return;
    }
    int before = a == RIGHT ? pad : a == CENTER ? pad / 2 : 0;
    md_fill(m, " ", before, MD_TABLE);
    md_inline_begin(m, MD_TABLE | (header ? MD_BOLD : 0));
    md_inline_feed(m, c->s, c->n);
    md_inline_end(m);
    if (c->closed)
        md_fill(m, " ", pad - before, MD_TABLE);
}

/* s[0..n) without the blanks around it. */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int widest_word(const char *s, size_t n)
{
    int most = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t')
            j++;
        int w = utf8_width(s + i, j - i);
        most = w > most ? w : most;
        i = j + 1;
    }
    return most;
}

/* The columns' widths when the table must fit `room` columns of text:
 * the widest column above its least width narrowed a column at a time;
 * false when even the least widths do not fit. */
static bool narrow(int *width, const int *least, int cols, int room)
{
    int sum = 0, need = 0;
    for (int i = 0; i < cols; i++)
        sum += width[i], need += least[i];
    if (need > room)
        return false;
    while (sum > room) {
        int widest = -1;
        for (int i = 0; i < cols; i++)
            if (width[i] > least[i] && (widest < 0 || width[i] > width[widest]))
                widest = i;
        width[widest]--;
        sum--;
    }
    return true;
}

static void reflow_rule(md_render *m, const int *width, int cols)
{
    md_fill(m, "|", 1, MD_TABLE | MD_REFLOW | MD_MARK);
    for (int i = 0; i < cols; i++) {
        md_fill(m, "-", width[i] + 2, MD_TABLE | MD_REFLOW | MD_MARK);
        md_fill(m, "|", 1, MD_TABLE | MD_REFLOW | MD_MARK);
    }
}

/* One row of a reflowed table: screen lines until every cell's text is
 * out, each cell's next piece wrapped within its column. */
static void reflow_row(md_render *m, cell *cells, int k, const int *width, const align *aligns,
                       int cols, bool header)
{
    for (int i = 0; i < cols; i++) {
        if (i >= k)
            cells[i] = (cell){"", 0, true};
        trim(&cells[i].s, &cells[i].n);
    }
    for (bool first = true;; first = false) {
        bool more = false;
        for (int i = 0; i < cols; i++)
            more |= cells[i].n > 0;
        if (!more && !first)
            return;
        if (!first)
            md_fill(m, "\n", 1, MD_TABLE | MD_REFLOW);
        md_fill(m, "|", 1, MD_TABLE | MD_REFLOW | MD_MARK);
        for (int i = 0; i < cols; i++) {
            cell *c = &cells[i];
            size_t next = 0, len = c->n ? wrap_row(c->s, c->n, width[i], &next) : 0;
            int pad = width[i] - utf8_width(c->s, len);
            pad = pad > 0 ? pad : 0;
            int before = aligns[i] == RIGHT ? pad : aligns[i] == CENTER ? pad / 2 : 0;
            md_fill(m, " ", 1 + before, MD_TABLE | MD_REFLOW);
            md_inline_begin(m, MD_TABLE | MD_REFLOW | (header ? MD_BOLD : 0));
            md_inline_feed(m, c->s, len);
            md_inline_end(m);
            md_fill(m, " ", pad - before + 1, MD_TABLE | MD_REFLOW);
            md_fill(m, "|", 1, MD_TABLE | MD_REFLOW | MD_MARK);
            c->s += next;
            c->n -= next;
            trim(&c->s, &c->n);
        }
    }
}

/* The table in columns of `width`, its cells' text wrapped within them. */
static void reflow_table(md_render *m, cell *cells, int max, const int *width,
                         const align *aligns, int cols)
{
    const md_table *t = &m->table;
    int row = 0;
    for (size_t at = 0; at < t->len; row++) {
        bool nl;
        const char *p = t->text + at;
        size_t n = next_row(p, t->len - at, &nl), lead;
        int k = split(p, n, &lead, cells, max);
        if (row == 1)
            reflow_rule(m, width, cols);
        else
            reflow_row(m, cells, k, width, aligns, cols, row == 0);
        if (nl)
            md_fill(m, "\n", 1, MD_TABLE | MD_REFLOW);
        at += n + nl;
    }
}

/* Whether the table, aligned, fits the terminal; if not, the narrower
 * widths of its columns' text (width: cols more ints) for a reflow, or
 * *raw when there are none. */
static bool fits(md_render *m, cell *cells, int max, int *width, int cols, bool *raw)
{
    const md_table *t = &m->table;
    int *least = width + cols, lead_w = 0, natural = 1;
    for (int i = 0; i < cols; i++)
        natural += width[i] + 1;
    for (size_t at = 0; at < t->len;) {
        bool nl;
        size_t n = next_row(t->text + at, t->len - at, &nl), lead;
        split(t->text + at, n, &lead, cells, max);
        int w = utf8_width(t->text + at, lead);
        lead_w = w > lead_w ? w : lead_w;
        at += n + nl;
    }
    *raw = false;
    if (m->width < 1 || lead_w + natural <= m->width)
        return true;
    /* each column's text trimmed, and its widest word (cut at WORD_CUT) */
    for (int i = 0; i < cols; i++)
        width[i] = least[i] = 0;
    int row = 0;
    for (size_t at = 0; at < t->len; row++) {
        bool nl;
        size_t n = next_row(t->text + at, t->len - at, &nl), lead;
        int k = split(t->text + at, n, &lead, cells, max);
        for (int i = 0; i < k && row != 1; i++) {
            trim(&cells[i].s, &cells[i].n);
            int w = utf8_width(cells[i].s, cells[i].n), word = widest_word(cells[i].s, cells[i].n);
            width[i] = w > width[i] ? w : width[i];
            word = word < WORD_CUT ? word : WORD_CUT;
            least[i] = word > least[i] ? word : least[i];
        }
        at += n + nl;
    }
    for (int i = 0; i < cols; i++)
        least[i] = least[i] > 0 ? least[i] : 1;
    *raw = !narrow(width, least, cols, m->width - 3 * cols - 1);
    return false;
}

static void render_table(md_render *m, cell *cells, int max, int *width, align *aligns)
{
    const md_table *t = &m->table;
    int cols = 0, row = 0;
    /* the columns' widths over all rows, their alignment from the delimiter row */
    for (size_t at = 0; at < t->len; row++) {
        bool nl;
        size_t n = next_row(t->text + at, t->len - at, &nl), lead;
        int k = split(t->text + at, n, &lead, cells, max);
        for (int i = 0; i < k; i++) {
            int w = utf8_width(cells[i].s, cells[i].n);
            if (i >= cols)
                width[cols] = 0, aligns[cols++] = LEFT;
            if (w > width[i])
                width[i] = w;
            if (row == 1)
                aligns[i] = cell_align(&cells[i]);
        }
        at += n + nl;
    }
    bool raw;
    if (!fits(m, cells, max, width, cols, &raw)) {
        if (raw)
            render_text(m);
        else
            reflow_table(m, cells, max, width, aligns, cols);
        return;
    }
    row = 0;
    for (size_t at = 0; at < t->len; row++) {
        bool nl;
        const char *p = t->text + at;
        size_t n = next_row(p, t->len - at, &nl), lead;
        int k = split(p, n, &lead, cells, max);
        md_emit(m, p, lead, MD_TABLE);
        size_t end = lead;
        for (int i = 0; i < k; i++) {
            md_emit(m, "|", 1, MD_TABLE | MD_MARK);
            int pad = width[i] - utf8_width(cells[i].s, cells[i].n);
            render_cell(m, &cells[i], pad, aligns[i], row == 1, row == 0);
            end = (size_t)(cells[i].s + cells[i].n - p);
        }
        /* the last pipe, and what follows it */
        if (end < n) {
            md_emit(m, p + end, 1, MD_TABLE | MD_MARK);
            md_emit(m, p + end + 1, n - end - 1, MD_TABLE);
        }
        if (nl)
            md_emit(m, "\n", 1, MD_TABLE);
        at += n + nl;
    }
}

void md_table_end(md_render *m)
{
    md_table *t = &m->table;
    if (!t->rows)
        return;
    /* a row has at most one cell per byte */
    size_t max = 1;
    for (size_t at = 0, n = 0; at <= t->len; at++, n++)
        if (at == t->len || t->text[at] == '\n') {
            if (n + 1 > max)
                max = n + 1;
            n = 0;
        }
    cell *cells = t->confirmed ? malloc(max * sizeof *cells) : NULL;
    /* the columns' widths, and their least widths for a reflow */
    int *width = cells ? malloc(2 * max * sizeof *width) : NULL;
    align *aligns = width ? malloc(max * sizeof *aligns) : NULL;
    if (aligns)
        render_table(m, cells, (int)max, width, aligns);
    else
        render_text(m); /* no table, or no memory to align one */
    free(cells);
    free(width);
    free(aligns);
    t->len = 0;
    t->rows = 0;
    t->confirmed = false;
}

void md_table_row(md_render *m, const char *row, size_t n, bool nl)
{
    md_table *t = &m->table;
    if (t->rows == 1 && !t->confirmed) {
        if (delimiter_row(row, n))
            t->confirmed = true;
        else
            md_table_end(m); /* the held row was no table's header */
    }
    if (buf_reserve(&t->text, &t->cap, t->len + n + 1) < 0) {
        md_table_end(m);
        md_inline_begin(m, 0);
        md_inline_feed(m, row, n);
        md_inline_end(m);
        if (nl)
            md_emit(m, "\n", 1, 0);
        return;
    }
    memcpy(t->text + t->len, row, n);
    t->len += n;
    if (nl)
        t->text[t->len++] = '\n';
    t->rows++;
}
