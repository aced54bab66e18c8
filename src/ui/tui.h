/* Full-screen mode's parts: the transcript pane, the status bar and the
 * readline glue, over one ncurses screen. */
#ifndef CONFAB_UI_TUI_H
#define CONFAB_UI_TUI_H

#include <stdbool.h>
#include <stddef.h>

#include <curses.h>

#include "chat.h"

/* The colour pairs the screen sets up. */
enum { PAIR_USER = 1, PAIR_ERROR, PAIR_INFO, PAIR_GREEN, PAIR_MAGENTA, PAIR_TONE };
/* A token's probability tone (probs.h; pair PAIR_TONE + tone) in the high
 * bits of a transcript byte's style, above markdown's. */
#define STYLE_TONE_SHIFT 24

/* ---- transcript (tui_transcript.c) ---------------------------------------- */
/* IT_THINK: a reply's thinking, a dim block under a header line that
 * says what it was ("thinking..." while it streams, "thought for 312
 * tokens, 4.1 s" after); folded, the header alone. */
/* IT_COMMAND: a slash command as typed (drawn as a message is, but no
 * message of the conversation). */
typedef enum item_kind { IT_USER, IT_REPLY, IT_INFO, IT_DIM, IT_ERROR, IT_THINK, IT_COMMAND } item_kind;

typedef struct t_item {
    item_kind kind;
    char *text;
    size_t len, cap;
    unsigned *style; /* a reply's markdown: each byte's md_style; NULL: none */
    size_t style_cap;
    char head[96]; /* IT_THINK: what the header says */
} t_item;

typedef struct transcript {
    t_item *items;
    int n, cap;
    int scroll;   /* rows above the bottom that are out of view below */
    bool fold;    /* thinking blocks show their header only */
    bool unicode; /* the header may use ▸ ▾ */
} transcript;

/* Add an item (text is copied, tabs become spaces); -1 when out of memory. */
int transcript_add(transcript *t, item_kind kind, const char *text);
/* Append to item i (the last one that grows). */
int transcript_append(transcript *t, int i, const char *text, int width);
/* Append n bytes in a markdown style (a rendered reply; tabs become spaces). */
int transcript_put(transcript *t, int i, const char *s, size_t n, unsigned style, int width);
/* Fold or unfold every thinking block, the view kept at the bottom. */
void transcript_fold(transcript *t, bool fold);
/* Keep the first n items. */
void transcript_truncate(transcript *t, int n);
/* Index of the last item of this kind, or -1. */
int transcript_last(const transcript *t, item_kind kind);
void transcript_free(transcript *t);
/* Rows all items take at this width. */
int transcript_rows(const transcript *t, int width);
/* Scroll by delta rows (positive: back in time), kept within the text. */
void transcript_scroll(transcript *t, int delta, int width, int height);
/* Draw the rows in view, bottom-anchored. */
void transcript_draw(const transcript *t, WINDOW *w, bool color);
/* The last `rows` rows at this width as plain lines (on the normal
 * screen, once the full screen is gone). */
void transcript_print(const transcript *t, FILE *f, int width, int rows);

/* ---- status bar (tui_status.c) -------------------------------------------- */
typedef struct status_info {
    const char *model;
    bool remote;         /* the model is on a server: ctx_used is its usage, ctx_total 0 */
    int ctx_used, ctx_total;
    double tps;          /* last or current generation speed; < 0: none yet */
    int threads, fewest_threads; /* the reply's: fewer while other programs were busy */
    double temp, top_p;
    long top_k;
    /* remote: the sampler settings not given (SERVER_TEMP...), which the
     * server chooses */
    unsigned server_sets;
    const char *saved;   /* "saved", "unsaved", "not saved" */
    bool generating;
    bool thinking;       /* generating, inside the thinking */
    int think_tokens, answer_tokens; /* the last reply's, shown when it thought */
    int scrolled;        /* rows scrolled back */
    const char *branch;  /* "branch 2 side" when there are several; NULL: not shown */
    bool probs;          /* tokens coloured by probability */
    bool unicode;        /* the locale can show block characters */
} status_info;

enum { SERVER_TEMP = 1, SERVER_TOP_K = 2, SERVER_TOP_P = 4 };

/* The bar's text, exactly `width` columns (padded or cut): its fields in
 * a fixed order of importance, kept while they fit, so that none shows
 * while a more important one is left out. */
void status_format(const status_info *si, int width, char *out, size_t n);

/* ---- readline in a window (tui_readline.c) -------------------------------- */
/* Route readline's input and display through ncurses; on_line as for
 * rl_callback_handler_install.  Called before ncurses starts: readline
 * reads the terminal's description once, and doing that after ncurses
 * would replace the one ncurses uses. */
void tui_rl_start(const char *prompt, void (*on_line)(char *));
void tui_rl_stop(void);
/* The window the line is drawn in (again after a resize). */
void tui_rl_window(WINDOW *w);
/* Queue the bytes a key stands for (a wide character, or an ncurses key
 * code when is_key), then let readline consume everything queued. */
void tui_rl_key(int is_key, wint_t ch);
/* Queue a key without processing it (keys typed while a reply streams). */
void tui_rl_queue(int is_key, wint_t ch);
/* Process what was queued. */
void tui_rl_drain(void);
/* Drop the line being edited (Ctrl-C). */
void tui_rl_clear_line(void);
void tui_rl_redisplay(void);
/* A hint drawn instead of the line while a reply streams; NULL: the line. */
void tui_rl_hint(const char *hint);

#endif
