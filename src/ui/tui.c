/* Full-screen mode: a scrolling transcript, a status bar and an input line
 * edited with readline, on ncurses.
 *
 * While a reply streams, the keyboard is polled between tokens: F5-F9
 * change the sampler from the next token on (the status bar shows it at
 * once), F3 folds or unfolds the thinking blocks, F4 colours the tokens
 * by their probability (/set probs), Ctrl-C stops the reply,
 * PgUp/PgDn scroll, a resize redraws, and anything else is kept for the
 * input line.  A reply's thinking is a dim block above its answer, under
 * a header line; folded, the header alone says how long it thought.  The terminal is restored on
 * every way out: the normal one, SIGTERM/SIGHUP/SIGINT (turned into
 * flags), exit() (atexit) and crashes (a handler that ends curses and
 * re-raises). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/readline.h>

#include "cli.h"
#include "input.h"
#include "probs.h"
#include "repl.h"
#include "term.h"
#include "text.h"
#include "tui.h"

#define HOTKEY_HINT                                                                               \
    "F3 thinking  F4 probs  F5/F6 temp -/+0.1  F7/F8 top-k /2 x2  F9 greedy  PgUp/PgDn scroll"
#define PASTE_ON "\033[?2004h"
#define PASTE_OFF "\033[?2004l"

enum { POLL_MS = 200, DRAW_EVERY_MS = 40, WHEEL_ROWS = 3 };

typedef struct tui {
    chat *c;
    SCREEN *scr;
    WINDOW *pane, *status, *input;
    transcript tr;
    input_asm in;
    bool color, unicode;
    bool done, streaming, regen;
    bool thinking;            /* the streaming reply is inside its thinking */
    int think_item, reply_item; /* the streaming reply's items, -1: none yet */
    md_render *md;            /* the streaming reply's markdown; NULL: as it is */
    int gen_tokens;
    double last_tps;
    double gen_t0_ms, last_draw_ms;
    char prompt[8], more[8];
} tui;

/* For readline's callbacks and the signal / exit handlers. */
static tui *T;
static volatile sig_atomic_t curses_on;

/* ---- leaving cleanly ---------------------------------------------------------- */
static void curses_end(void)
{
    if (!curses_on)
        return;
    curses_on = 0;
    endwin();
    if (write(STDOUT_FILENO, PASTE_OFF, sizeof PASTE_OFF - 1) < 0) {
        /* nothing more can be done about a terminal that is gone */
    }
}

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_CRASH (sizeof crash_signals / sizeof crash_signals[0])
static struct sigaction old_crash[N_CRASH];

static void on_crash(int sig)
{
    curses_end();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void crash_handlers(bool on)
{
    static bool registered;
    if (!registered)
        registered = atexit(curses_end) == 0;
    for (size_t i = 0; i < N_CRASH; i++) {
        if (on) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_crash;
            sigemptyset(&sa.sa_mask);
            sigaction(crash_signals[i], &sa, &old_crash[i]);
        } else {
            sigaction(crash_signals[i], &old_crash[i], NULL);
        }
    }
}

/* ---- drawing ------------------------------------------------------------------- */
static const char *save_state(const chat *c)
{
    if (cf_session_dirty(c->s))
        return c->session_path ? "unsaved" : "not saved";
    return c->session_path ? "saved" : "not saved";
}

static bool probs_on(const tui *t)
{
    char buf[8];
    const char *v = cf_session_get(t->c->s, "probs", buf, sizeof buf);
    return v && !strcmp(v, "on");
}

static void draw_status(tui *t)
{
    chat *c = t->c;
    cf_context_info ci;
    cf_session_context_info(c->s, &ci);
    status_info si = {
        .model = chat_model_name(c),
        .remote = cf_session_remote(c->s) != NULL,
        .ctx_used = ci.used,
        .ctx_total = ci.total,
        .tps = t->last_tps,
        .temp = chat_setting(c, "temp"),
        .top_p = chat_setting(c, "top-p"),
        .top_k = (long)chat_setting(c, "top-k"),
        .saved = save_state(c),
        .generating = t->streaming,
        .thinking = t->thinking,
        .scrolled = t->tr.scroll,
        .unicode = t->unicode,
    };
    char branch[64] = "";
    for (int k = 0; k < cf_session_n_branches(c->s) && cf_session_n_branches(c->s) > 1; k++) {
        cf_branch_info b;
        cf_session_branch(c->s, k, &b);
        if (b.current)
            snprintf(branch, sizeof branch, "branch %d%s%.24s", b.id, *b.name ? " " : "", b.name);
    }
    si.branch = *branch ? branch : NULL;
    if (si.remote)
        si.server_sets = (cf_session_setting_is_default(c->s, "temp") ? SERVER_TEMP : 0) |
                         (cf_session_setting_is_default(c->s, "top-k") ? SERVER_TOP_K : 0) |
                         (cf_session_setting_is_default(c->s, "top-p") ? SERVER_TOP_P : 0);
    si.probs = probs_on(t);
    const cf_turn_stats *st = cf_session_last_stats(c->s);
    si.threads = st->threads;
    si.fewest_threads = st->fewest_threads;
    if (st->reasoning_tokens > 0) {
        si.think_tokens = st->reasoning_tokens;
        si.answer_tokens = st->gen_tokens - st->reasoning_tokens;
    }
    if (t->streaming) {
        const double ms = cf_now_ms() - t->gen_t0_ms;
        si.tps = ms > 0 && t->gen_tokens > 0 ? t->gen_tokens * 1000.0 / ms : t->last_tps;
    }
    char buf[1024];
    status_format(&si, getmaxx(t->status), buf, sizeof buf);
    werase(t->status);
    wattrset(t->status, A_REVERSE);
    mvwaddstr(t->status, 0, 0, buf);
    wattrset(t->status, A_NORMAL);
    wnoutrefresh(t->status);
}

/* The input line is drawn last so the cursor ends up there. */
static void draw_all(tui *t)
{
    transcript_draw(&t->tr, t->pane, t->color);
    draw_status(t);
    tui_rl_redisplay();
    doupdate();
    t->last_draw_ms = cf_now_ms();
}

static void draw_status_now(tui *t)
{
    draw_status(t);
    tui_rl_redisplay();
    doupdate();
}

static void layout(tui *t)
{
    int h = LINES > 3 ? LINES : 3, w = COLS > 1 ? COLS : 1;
    if (t->pane) {
        delwin(t->pane);
        delwin(t->status);
        delwin(t->input);
    }
    t->pane = newwin(h - 2, w, 0, 0);
    t->status = newwin(1, w, h - 2, 0);
    t->input = newwin(1, w, h - 1, 0);
    keypad(t->input, TRUE);
    wtimeout(t->input, POLL_MS);
    tui_rl_window(t->input);
    rl_set_screen_size(1, w);
}

static void on_resize(tui *t)
{
    layout(t);
    transcript_scroll(&t->tr, 0, COLS, getmaxy(t->pane));
    clearok(curscr, TRUE);
    draw_all(t);
}

/* ---- the transcript from the session --------------------------------------------- */
static void add_safe(tui *t, item_kind kind, const char *prefix, const char *text)
{
    char *safe = text_for_terminal(text);
    if (!safe)
        return;
    size_t n = strlen(prefix) + strlen(safe) + 1;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%s%s", prefix, safe);
        transcript_add(&t->tr, kind, s);
    }
    free(s);
    free(safe);
}

/* Text for item *at, which is added (of this kind) when it is not yet;
 * a reply's through its renderer when it has one. */
static void grow_item(tui *t, int *at, item_kind kind, const char *text)
{
    if (*at < 0) {
        if (transcript_add(&t->tr, kind, "") < 0)
            return;
        *at = t->tr.n - 1;
        if (kind == IT_THINK)
            snprintf(t->tr.items[*at].head, sizeof t->tr.items[0].head, "thinking...");
    }
    char *safe = text_for_terminal(text);
    if (safe && kind == IT_REPLY && t->md)
        md_feed(t->md, safe, strlen(safe));
    else if (safe)
        transcript_append(&t->tr, *at, safe, COLS);
    free(safe);
}

/* A reply's token in its probability tone (/set probs on: the raw text,
 * not rendered). */
static void grow_toned(tui *t, const char *text, int tone)
{
    grow_item(t, &t->reply_item, IT_REPLY, "");
    char *safe = text_for_terminal(text);
    if (safe && t->reply_item >= 0)
        transcript_put(&t->tr, t->reply_item, safe, strlen(safe),
                       (unsigned)tone << STYLE_TONE_SHIFT, COLS);
    free(safe);
}

/* A rendered reply's pieces go to its item. */
static void to_reply_item(void *ud, const char *s, size_t n, unsigned style)
{
    tui *t = ud;
    transcript_put(&t->tr, t->reply_item, s, n, style, COLS);
}

/* A reply begins: its markdown rendered when the setting says so, for the
 * window's width as line mode renders for the terminal's (frames and
 * tables as wide as it, at most 80 columns). */
static void reply_begin(tui *t)
{
    t->reply_item = -1;
    if (t->c->markdown && !probs_on(t)) /* tones show the tokens as they came */
        t->md = md_new(COLS, t->unicode, to_reply_item, t);
}

/* The reply ended: its item exists, what its renderer held is in it. */
static void reply_end(tui *t)
{
    if (t->reply_item < 0)
        grow_item(t, &t->reply_item, IT_REPLY, "");
    if (t->md) {
        md_end(t->md);
        md_free(t->md);
        t->md = NULL;
    }
}

/* The first n messages into the transcript. */
static void replay(tui *t, int n)
{
    cf_session *s = t->c->s;
    for (int i = 0; i < n; i++) {
        const cf_message *m = cf_session_message(s, i);
        if (m->role == CF_ROLE_SYSTEM)
            add_safe(t, IT_DIM, "system: ", m->content);
        else if (m->role == CF_ROLE_USER)
            add_safe(t, IT_USER, "> ", m->content);
        else {
            if (m->reasoning) {
                add_safe(t, IT_THINK, "", m->reasoning);
                snprintf(t->tr.items[t->tr.n - 1].head, sizeof t->tr.items[0].head, "%s",
                         m->thinking_cut ? "thought, cut off" : "thought");
            }
            reply_begin(t);
            grow_item(t, &t->reply_item, IT_REPLY, m->content);
            reply_end(t);
            if (m->cut)
                transcript_add(&t->tr, IT_DIM, "[cut]");
            char limit[96];
            chat_limit_note(t->c, m, false, limit, sizeof limit);
            if (*limit)
                transcript_add(&t->tr, IT_DIM, limit);
        }
    }
}

/* ---- the sampler hotkeys ---------------------------------------------------------- */
static void set_number(tui *t, const char *name, double v)
{
    char buf[32];
    cf_err err = {0};
    snprintf(buf, sizeof buf, "%.6g", v);
    if (cf_session_set(t->c->s, name, buf, &err) < 0) {
        transcript_add(&t->tr, IT_ERROR, err.msg);
        draw_all(t);
    }
}

static void hotkey(tui *t, int key)
{
    chat *c = t->c;
    double temp = chat_setting(c, "temp");
    long k = (long)chat_setting(c, "top-k");
    /* a server's vocabulary is unknown: its top-k stops doubling at 2^16 */
    const cf_model *model = cf_session_model(c->s);
    long vocab = model ? cf_model_hparams(model)->n_vocab : 65536;
    if (key == KEY_F(5) || key == KEY_F(6)) {
        double v = round(temp * 10 + (key == KEY_F(6) ? 1 : -1)) / 10;
        set_number(t, "temp", v < 0 ? 0 : v);
    } else if (key == KEY_F(7)) {
        /* Halving "off" starts from 64; 1 is the least. */
        set_number(t, "top-k", k == 0 ? 64 : k > 1 ? k / 2 : 1);
    } else if (key == KEY_F(8)) {
        /* Doubling past the vocabulary turns top-k off. */
        set_number(t, "top-k", k == 0 || k * 2 >= vocab ? 0 : k * 2);
    } else if (chat_toggle_greedy(c) < 0) {
        return;
    }
    draw_status_now(t);
}

/* F4: token probabilities on or off, from the next token. */
static void toggle_probs(tui *t)
{
    bool on = probs_on(t);
    cf_session_set(t->c->s, "probs", on ? "off" : "on", NULL);
    if (!t->streaming)
        chat_say(t->c, OUT_DIM, "probs = %s", on ? "off" : "on");
    draw_status_now(t);
}

/* ---- keys --------------------------------------------------------------------------- */
static void suspend(chat *c, bool on);

typedef enum key_result { KEY_DONE, KEY_STOP } key_result;

static key_result handle_key(tui *t, int r, wint_t ch)
{
    int page = getmaxy(t->pane) - 2 > 1 ? getmaxy(t->pane) - 2 : 1;
    if (r == KEY_CODE_YES) {
        switch (ch) {
        case KEY_RESIZE:
            on_resize(t);
            return KEY_DONE;
        case KEY_PPAGE:
        case KEY_NPAGE:
            transcript_scroll(&t->tr, ch == KEY_PPAGE ? page : -page, COLS, getmaxy(t->pane));
            draw_all(t);
            return KEY_DONE;
        case KEY_MOUSE: {
            MEVENT ev;
            if (getmouse(&ev) == OK && (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED))) {
                int d = ev.bstate & BUTTON4_PRESSED ? WHEEL_ROWS : -WHEEL_ROWS;
                transcript_scroll(&t->tr, d, COLS, getmaxy(t->pane));
                draw_all(t);
            }
            return KEY_DONE;
        }
        default:
            if (ch >= KEY_F(5) && ch <= KEY_F(9)) {
                hotkey(t, (int)ch);
                return KEY_DONE;
            }
            if (ch == KEY_F(3)) {
                t->c->show_thinking = !t->c->show_thinking;
                transcript_fold(&t->tr, !t->c->show_thinking);
                draw_all(t);
                return KEY_DONE;
            }
            if (ch == KEY_F(4)) {
                toggle_probs(t);
                return KEY_DONE;
            }
        }
    } else if (ch == 26) { /* Ctrl-Z, a key in raw mode too: stop as the shell expects */
        suspend(t->c, true);
        raise(SIGTSTP);
        suspend(t->c, false);
        return KEY_DONE;
    } else if (ch == 3) { /* Ctrl-C: raw mode delivers it as a key */
        if (t->streaming)
            return KEY_STOP;
        input_reset(&t->in);
        rl_set_prompt(t->prompt);
        tui_rl_clear_line();
        return KEY_DONE;
    }
    if (t->streaming)
        tui_rl_queue(r == KEY_CODE_YES, ch);
    else
        tui_rl_key(r == KEY_CODE_YES, ch);
    return KEY_DONE;
}

/* ---- the chat view --------------------------------------------------------------------- */
static void say(chat *c, out_kind kind, const char *text)
{
    tui *t = c->view_data;
    if (kind == OUT_ERROR)
        add_safe(t, IT_ERROR, "error: ", text);
    else
        add_safe(t, kind == OUT_DIM ? IT_DIM : IT_INFO, "", text);
    draw_all(t);
}

static void put_part(void *ud, const cf_reply_part *p)
{
    tui *t = ud;
    if (*p->reasoning)
        grow_item(t, &t->think_item, IT_THINK, p->reasoning);
    if (*p->content && p->prob >= 0 && !t->md)
        grow_toned(t, p->content, prob_tone(p->prob));
    else if (*p->content)
        grow_item(t, &t->reply_item, IT_REPLY, p->content);
    t->thinking = p->thinking;
    /* a remote reply's steps include waits that bring nothing */
    t->gen_tokens += *p->reasoning || *p->content || !cf_session_remote(t->c->s);
}

/* Between two tokens: keys, signals, and a redraw now and then. */
static bool poll_keys(void *ud)
{
    tui *t = ud;
    bool stop = false;
    wint_t ch;
    int r;
    wtimeout(t->input, 0);
    while ((r = wget_wch(t->input, &ch)) != ERR)
        if (handle_key(t, r, ch) == KEY_STOP)
            stop = true;
    wtimeout(t->input, POLL_MS);
    if (cf_now_ms() - t->last_draw_ms >= DRAW_EVERY_MS)
        draw_all(t);
    return stop || sig_interrupt || sig_quit;
}

/* While a prompt is evaluated: keys wait as while a reply streams, and
 * Ctrl-C stops it. */
static bool prompt_stopped(chat *c)
{
    tui *t = c->view_data;
    bool streaming = t->streaming;
    t->streaming = true;
    bool stop = poll_keys(t);
    t->streaming = streaming;
    return stop;
}

static int reply(chat *c)
{
    tui *t = c->view_data;
    cf_session *s = c->s;
    if (!t->regen) {
        for (int i = cf_session_n_messages(s) - 1; i >= 0; i--)
            if (cf_session_message(s, i)->role == CF_ROLE_USER) {
                add_safe(t, IT_USER, "> ", cf_session_message(s, i)->content);
                break;
            }
    }
    t->regen = false;
    t->think_item = -1;
    reply_begin(t);
    t->thinking = false;
    t->tr.scroll = 0;
    t->streaming = true;
    t->gen_tokens = 0;
    t->gen_t0_ms = cf_now_ms();
    tui_rl_hint("generating - Ctrl-C stops  " HOTKEY_HINT);
    curs_set(0);
    draw_all(t);
    stream_hooks h = {put_part, poll_keys, t};
    int rc = chat_stream(c, &h);
    t->streaming = t->thinking = false;
    if (t->think_item >= 0)
        chat_thinking_summary(c, t->tr.items[t->think_item].head, sizeof t->tr.items[0].head);
    reply_end(t);
    sig_interrupt = 0;
    const cf_turn_stats *st = cf_session_last_stats(s);
    if (st && st->gen_ms > 0)
        t->last_tps = st->gen_tokens * 1000.0 / st->gen_ms;
    if (rc == 1)
        transcript_add(&t->tr, IT_DIM, "[stopped: the partial reply stays in the conversation]");
    if (rc >= 0) {
        char line[256];
        chat_limit_note(c, cf_session_message(s, cf_session_n_messages(s) - 1), true, line,
                        sizeof line);
        if (*line)
            transcript_add(&t->tr, IT_DIM, line);
        chat_reply_notes(c);
        cf_context_info ci;
        cf_session_context_info(s, &ci);
        chat_stats_line(st, &ci, 0, line, sizeof line);
        transcript_add(&t->tr, IT_DIM, line);
    }
    curs_set(1);
    tui_rl_hint(NULL);
    draw_all(t);
    return rc;
}

static void changed(chat *c, chat_change what)
{
    tui *t = c->view_data;
    int last_user = transcript_last(&t->tr, IT_USER);
    switch (what) {
    case CHANGE_LOADED:
    case CHANGE_SWITCHED:
        transcript_truncate(&t->tr, 0);
        replay(t, cf_session_n_messages(c->s));
        break;
    case CHANGE_EDITED: /* up to the edited message; reply() shows it */
        transcript_truncate(&t->tr, 0);
        replay(t, cf_session_n_messages(c->s) - 2);
        break;
    case CHANGE_UNDONE:
        if (last_user >= 0)
            transcript_truncate(&t->tr, last_user);
        break;
    case CHANGE_REGEN:
        if (last_user >= 0)
            transcript_truncate(&t->tr, last_user + 1);
        t->regen = true;
        break;
    case CHANGE_SHOW:
        transcript_fold(&t->tr, !c->show_thinking);
        break;
    case CHANGE_CLEARED:
    case CHANGE_SYSTEM:
    case CHANGE_BRANCHED:
        break;
    }
    draw_all(t);
}

static void prefill(chat *c, const char *text)
{
    (void)c;
    line_prefill(text);
}

/* An editor, or the shell after Ctrl-Z, gets the terminal as the shell
 * had it, and gives it back. */
static void suspend(chat *c, bool on)
{
    tui *t = c->view_data;
    if (on) {
        def_prog_mode();
        endwin();
        return;
    }
    reset_prog_mode();
    clearok(curscr, TRUE);
    draw_all(t);
}

/* A yes/no question (a tool call to run) in the transcript; the answer is
 * the next key, y or Y for yes (a resize redraws and waits on; Ctrl-C or
 * leaving is no). */
static bool confirm(chat *c, const char *question)
{
    tui *t = c->view_data;
    char line[300];
    snprintf(line, sizeof line, "%s [y/N]", question);
    add_safe(t, IT_INFO, "", line);
    draw_all(t);
    wint_t ch = 0;
    int r;
    while (((r = wget_wch(t->input, &ch)) == ERR || (r == KEY_CODE_YES && ch == KEY_RESIZE)) &&
           !sig_interrupt && !sig_quit)
        if (r == KEY_CODE_YES)
            on_resize(t);
    bool yes = r == OK && (ch == L'y' || ch == L'Y');
    add_safe(t, IT_DIM, "", yes ? "y" : "n");
    draw_all(t);
    return yes;
}

static const chat_view tui_view = {say,           reply,         changed, prefill, suspend,
                                    prompt_stopped, HOTKEY_HINT, confirm};

/* After the screen is gone (autosave's message). */
static void say_plain(chat *c, out_kind kind, const char *text)
{
    (void)c;
    if (kind == OUT_ERROR)
        cli_error("%s", text);
    else
        printf("%s\n", text);
}

static int no_reply(chat *c)
{
    (void)c;
    return -1;
}

static const chat_view plain_view = {say_plain, no_reply, NULL, NULL, NULL, NULL, NULL, NULL};

/* ---- readline's side ---------------------------------------------------------------------- */
static void on_line(char *line)
{
    tui *t = T;
    if (!line) {
        t->done = true;
        return;
    }
    /* a command goes into the transcript above what it prints, as a
     * message does (a line of a message of several lines is no command) */
    bool command = line[0] == '/' && line[1] != '/' && !input_pending(&t->in);
    if (command)
        add_safe(t, IT_COMMAND, "> ", line);
    bool more = typed_line(t->c, &t->in, line);
    t->done = t->c->quit;
    if (command && !t->done)
        draw_all(t);
    rl_set_prompt(more ? t->more : t->prompt);
}

static void show_matches(char **matches, int n, int max_len)
{
    (void)max_len;
    char buf[2048];
    size_t used = 0;
    for (int i = 1; i <= n && used < sizeof buf; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s  ", matches[i]);
    chat_say(T->c, OUT_DIM, "%s", buf);
}

/* ---- the mode ------------------------------------------------------------------------------ */
static bool start_curses(tui *t)
{
    const char *term = getenv("TERM");
    t->scr = newterm(NULL, stdout, stdin);
    if (!t->scr) {
        cli_error("cannot start full-screen mode on this terminal (TERM=%s)", term ? term : "");
        return false;
    }
    curses_on = 1;
    crash_handlers(true);
    raw();
    noecho();
    nonl();
    set_escdelay(25);
    if (t->color && has_colors()) {
        start_color();
        use_default_colors();
        init_pair(PAIR_USER, COLOR_GREEN, -1);
        init_pair(PAIR_ERROR, COLOR_RED, -1);
        init_pair(PAIR_INFO, COLOR_CYAN, -1);
        init_pair(PAIR_GREEN, COLOR_GREEN, -1);
        init_pair(PAIR_MAGENTA, COLOR_MAGENTA, -1);
        /* the probability tones' colours where the terminal has 256, else
         * the nearest of its 8 */
        static const short eight[PROB_TONES] = {-1, COLOR_GREEN, COLOR_YELLOW, COLOR_MAGENTA,
                                                COLOR_RED};
        for (int k = 1; k < PROB_TONES; k++)
            init_pair((short)(PAIR_TONE + k), COLORS >= 256 ? prob_color256[k] : eight[k], -1);
    } else {
        t->color = false;
    }
    mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    fputs(PASTE_ON, stdout);
    fflush(stdout);
    layout(t);
    return true;
}

int tui_run(chat *c)
{
    tui t = {.c = c, .last_tps = -1};
    T = &t;
    t.color = color_wanted(STDOUT_FILENO, c->opts->no_color);
    t.unicode = term_unicode();
    t.tr.unicode = t.unicode;
    t.tr.fold = !c->show_thinking;
    snprintf(t.prompt, sizeof t.prompt, "> ");
    snprintf(t.more, sizeof t.more, ". ");

    history_open();
    completion_install(c);
    rl_completion_display_matches_hook = show_matches;
    tui_rl_start(t.prompt, on_line);
    if (!start_curses(&t)) {
        tui_rl_stop();
        history_close();
        return CF_EXIT_ERROR;
    }
    sig_install(false);
    c->view = &tui_view;
    c->view_data = &t;
    const cf_remote_info *ri = cf_session_remote(c->s);
    /* the keys on a line of their own, which fits 100 columns */
    chat_say(c, OUT_DIM,
             "confab %s - %s%s%s%s - /help for commands, Ctrl-C stops a reply, Ctrl-D to "
             "leave\n" HOTKEY_HINT,
             CONFAB_VERSION, ri ? "remote: " : "", chat_model_name(c), ri ? " at " : "",
             ri ? ri->endpoint : "");
    chat_untrained_note(c);
    /* a resumed chat under the banner, as line mode shows it */
    replay(&t, cf_session_n_messages(c->s));
    draw_all(&t);

    while (!t.done && !sig_quit && !sig_interrupt) {
        wint_t ch;
        int r = wget_wch(t.input, &ch);
        if (r != ERR)
            handle_key(&t, r, ch);
    }

    int sig = sig_quit ? sig_quit : sig_interrupt ? SIGINT : 0;
    int width = COLS, rows = getmaxy(t.pane);
    curses_end();
    delscreen(t.scr);
    /* the chat's last screen stays on the normal one, as less -X leaves
     * it (not when the terminal went away) */
    if (!sig_quit)
        transcript_print(&t.tr, stdout, width, rows);
    crash_handlers(false);
    sig_restore();
    tui_rl_stop();
    history_close();
    transcript_free(&t.tr);
    input_free(&t.in);
    c->view = &plain_view;
    int status = chat_autosave(c, true) < 0 ? CF_EXIT_SESSION : CF_EXIT_OK;
    T = NULL;
    return sig ? 128 + sig : status;
}
