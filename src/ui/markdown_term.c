/* Markdown onto a terminal: the renderer's pieces word-wrapped, their
 * styles written as SGR sequences.  The colours are ones that read on
 * dark and light backgrounds alike (magenta, green, bold, dim, italic);
 * without colour (NO_COLOR, --no-color, TERM=dumb) there are no escape
 * sequences at all, the frames, alignment and wrapping stay. */
#include <stdlib.h>
#include <string.h>

#include "markdown.h"

struct md_term {
    FILE *f;
    md_render *md; /* NULL: the text as it is */
    wrap_stream wrap;
    bool color;
    unsigned base;
    char sgr[32];  /* the sequence in effect ("" none) */
};

md_look md_look_of(unsigned st)
{
    md_look l = {0};
    /* markers, frames and comments recede; dim and bold exclude each other */
    l.dim = st & (MD_MARK | MD_DECOR | MD_DIM | MD_COMMENT);
    l.bold = !l.dim && (st & (MD_BOLD | MD_HEADING | MD_LANG));
    l.italic = (st & (MD_ITALIC | MD_COMMENT)) || (st & (MD_QUOTE | MD_MARK)) == MD_QUOTE;
    l.strike = st & MD_STRIKE;
    if (st & (MD_CODE | MD_STRING))
        l.color = MD_GREEN;
    else if ((st & (MD_HEADING | MD_BULLET | MD_KEYWORD)) ||
             (st & (MD_QUOTE | MD_MARK)) == (MD_QUOTE | MD_MARK))
        l.color = MD_MAGENTA;
    return l;
}

/* The SGR sequence for a style ("" for none). */
static void sgr_for(unsigned st, char *buf, size_t n)
{
    md_look l = md_look_of(st);
    char codes[24] = "";
    if (l.dim)
        strcat(codes, ";2");
    if (l.bold)
        strcat(codes, ";1");
    if (l.italic)
        strcat(codes, ";3");
    if (l.strike)
        strcat(codes, ";9");
    if (l.color)
        strcat(codes, l.color == MD_GREEN ? ";32" : ";35");
    if (*codes)
        snprintf(buf, n, "\033[0%sm", codes);
    else
        buf[0] = 0;
}

static void set_sgr(md_term *t, const char *want)
{
    if (!strcmp(t->sgr, want))
        return;
    fputs(*want ? want : "\033[0m", t->f);
    snprintf(t->sgr, sizeof t->sgr, "%s", want);
}

static void to_file(void *ud, const char *s, size_t n, unsigned style)
{
    md_term *t = ud;
    /* a line break takes no style: no sequence for it alone */
    if (t->color && !(n == 1 && *s == '\n')) {
        char want[32];
        sgr_for(style, want, sizeof want);
        set_sgr(t, want);
    }
    fwrite(s, 1, n, t->f);
}

static void to_wrap(void *ud, const char *s, size_t n, unsigned style)
{
    md_term *t = ud;
    wrap_stream_put(&t->wrap, s, n, style | t->base);
}

md_term *md_term_new(FILE *f, const md_term_opts *o)
{
    md_term *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->f = f;
    t->color = o->color;
    t->base = o->base;
    wrap_stream_init(&t->wrap, o->width, MD_NOWRAP, MD_DECOR, to_file, t);
    wrap_stream_hang(&t->wrap, MD_BULLET, MD_QUOTE | MD_MARK);
    if (o->markdown && !(t->md = md_new(o->width, o->unicode, to_wrap, t))) {
        free(t);
        return NULL;
    }
    return t;
}

void md_term_put(md_term *t, const char *s, size_t n)
{
    if (t->md)
        md_feed(t->md, s, n);
    else
        to_wrap(t, s, n, 0);
    fflush(t->f);
}

bool md_term_end(md_term *t)
{
    if (t->md)
        md_end(t->md);
    bool at_start = wrap_stream_flush(&t->wrap);
    set_sgr(t, "");
    fflush(t->f);
    md_free(t->md);
    free(t);
    return at_start;
}
