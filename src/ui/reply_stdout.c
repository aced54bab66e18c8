/* A reply streamed to stdout, line mode's and scripting's way: the
 * thinking first, dim (or between "[thinking]" and "[/thinking]" lines
 * without colour, or on stderr for scripts, or not at all: then a
 * "thinking..." note that the answer replaces on a terminal), then the
 * answer, its markdown rendered on a terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "probs.h"
#include "term.h"
#include "text.h"

#define ERASE_LINE "\r\033[K"

typedef struct stdout_stream {
    bool make_safe, at_line_start;
    think_out th;
    const md_term_opts *look; /* NULL: the text as it is */
    md_term *answer, *thought; /* rendering them as they stream */
    bool in_block;      /* the thinking is open on th.to */
    bool block_at_start; /* th.to is at the start of a line */
    bool noting;        /* the "thinking..." note is on screen */
    bool probs;         /* tone the answer's tokens (a terminal, probs on) */
} stdout_stream;

/* Write text made safe when asked, to f or through md; returns whether
 * it ended a line (with md, known only when md ends). */
static bool put(FILE *f, md_term *md, bool make_safe, const char *text, bool at_line_start)
{
    char *safe = make_safe ? text_for_terminal(text) : NULL;
    const char *out = safe ? safe : text;
    size_t n = strlen(out);
    if (md) {
        md_term_put(md, out, n);
    } else {
        fwrite(out, 1, n, f);
        fflush(f);
    }
    bool ends = n ? out[n - 1] == '\n' : at_line_start;
    free(safe);
    return ends;
}

static void end_note(stdout_stream *st)
{
    if (st->noting) {
        fputs(ERASE_LINE, stdout);
        st->noting = false;
    }
}

static void open_block(stdout_stream *st)
{
    FILE *f = st->th.to;
    if (f == stdout && !st->at_line_start)
        fputc('\n', f);
    st->block_at_start = true;
    if (st->th.marked)
        fputs("[thinking]\n", f);
    if (st->look) {
        /* wrapped like the answer, dim, its markdown left as it is */
        md_term_opts o = *st->look;
        o.markdown = false;
        o.base = MD_DIM;
        st->thought = md_term_new(f, &o);
    }
    if (!st->thought)
        fputs(st->th.dim, f);
    st->in_block = true;
}

static void close_block(stdout_stream *st)
{
    FILE *f = st->th.to;
    if (st->thought)
        st->block_at_start = md_term_end(st->thought);
    else
        fputs(st->th.reset, f);
    st->thought = NULL;
    if (!st->block_at_start)
        fputc('\n', f);
    if (st->th.marked)
        fputs("[/thinking]\n", f);
    fflush(f);
    st->in_block = false;
    if (f == stdout)
        st->at_line_start = true;
}

static void put_part(void *ud, const cf_reply_part *p)
{
    stdout_stream *st = ud;
    if (*p->reasoning && st->th.to) {
        if (!st->in_block)
            open_block(st);
        st->block_at_start =
            put(st->th.to, st->thought, st->make_safe, p->reasoning, st->block_at_start);
    } else if (p->thinking && !st->th.to && st->th.indicator && !st->noting && st->at_line_start) {
        fprintf(stdout, "%sthinking...%s", st->th.dim, st->th.reset);
        fflush(stdout);
        st->noting = true;
    }
    if (*p->content) {
        end_note(st);
        if (st->in_block)
            close_block(st);
        if (st->probs) { /* the tokens as they came, each in its tone */
            const char *tone = prob_sgr(prob_tone(p->prob), st->th.probs_color);
            fputs(tone, stdout);
            st->at_line_start = put(stdout, NULL, st->make_safe, p->content, st->at_line_start);
            if (*tone)
                fputs("\033[0m", stdout);
            return;
        }
        if (st->look && !st->answer)
            st->answer = md_term_new(stdout, st->look);
        st->at_line_start = put(stdout, st->answer, st->make_safe, p->content, st->at_line_start);
    }
}

static bool stop_on_signal(void *ud)
{
    (void)ud;
    return sig_interrupt || sig_quit;
}

int chat_stream_stdout(chat *c, bool make_safe, const think_out *th, const md_term_opts *look)
{
    static const think_out none = {NULL, "", "", false, false, false};
    char on[8];
    const char *probs = cf_session_get(c->s, "probs", on, sizeof on);
    stdout_stream st = {.make_safe = make_safe, .at_line_start = true, .th = th ? *th : none,
                        .look = look, .block_at_start = true,
                        .probs = make_safe && probs && !strcmp(probs, "on")};
    stream_hooks h = {put_part, stop_on_signal, &st};
    int rc = chat_stream(c, &h);
    end_note(&st);
    if (st.in_block)
        close_block(&st);
    if (st.answer)
        st.at_line_start = md_term_end(st.answer);
    if (!st.at_line_start)
        putchar('\n');
    fflush(stdout);
    if (rc >= 0)
        chat_reply_notes(c);
    return rc;
}
