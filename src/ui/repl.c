/* Line mode: readline at the prompt, replies streamed to stdout.
 *
 * Readline runs through its callback interface so that the only thing
 * blocking is our select(): signals arrive as EINTR and are handled
 * outside any handler (Ctrl-C clears the line, a resize is passed on,
 * SIGTERM ends the chat cleanly).  While a line runs (a prompt evaluated,
 * a reply streamed) the terminal keeps ISIG, so Ctrl-C stops the
 * evaluation within a layer and the reply between two tokens, and typed
 * keys wait unechoed for the next prompt. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <termios.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "cli.h"
#include "input.h"
#include "repl.h"
#include "term.h"
#include "text.h"

typedef struct line_mode {
    chat *c;
    input_asm in;
    palette pal;
    char prompt[64], more[64];
    bool done;
    bool tty;              /* stdin is a terminal: saved is its state before the line */
    struct termios saved;
    bool edited_elsewhere; /* an editor ran: what it wrote is not on the screen */
} line_mode;

/* Readline's callbacks take no user pointer. */
static line_mode *L;

/* The columns lines on fd wrap at (0: not a terminal, not wrapped). */
static int width_of(int fd)
{
    return isatty(fd) ? term_width(fd) : 0;
}

/* A line (or a few) of ours on stdout, dim, wrapped at spaces. */
static void dim_line(const line_mode *m, const char *text)
{
    wrap_print(stdout, text, width_of(STDOUT_FILENO), 0, m->pal.dim, m->pal.reset);
}

static void say(chat *c, out_kind kind, const char *text)
{
    line_mode *m = c->view_data;
    if (kind == OUT_ERROR) {
        fprintf(stderr, "%serror:%s ", m->pal.red, m->pal.reset);
        wrap_print(stderr, text, width_of(STDERR_FILENO), (int)strlen("error: "), "", "");
    } else if (kind == OUT_DIM) {
        dim_line(m, text);
    } else {
        wrap_print(stdout, text, width_of(STDOUT_FILENO), 0, "", "");
    }
    fflush(stdout);
}

/* How replies look now: rendered (o) when markdown is on and stdout is
 * a terminal, else NULL (as they are). */
static const md_term_opts *look(const line_mode *m, md_term_opts *o)
{
    if (!m->c->markdown || !isatty(STDOUT_FILENO))
        return NULL;
    *o = (md_term_opts){.markdown = true, .width = term_width(STDOUT_FILENO),
                        .color = *m->pal.dim != 0, .unicode = term_unicode()};
    return o;
}

/* Text of a reply shown again, as it streamed: the answer rendered, the
 * thinking (dim) wrapped; returns whether it ended a line. */
static bool show_again(const line_mode *m, const char *safe, bool thinking)
{
    md_term_opts o;
    const md_term_opts *lk = look(m, &o);
    md_term *t = NULL;
    if (lk) {
        o.markdown = !thinking;
        o.base = thinking ? MD_DIM : 0;
        t = md_term_new(stdout, &o);
    }
    if (!t) {
        printf("%s%s%s", thinking ? m->pal.dim : "", safe, thinking ? m->pal.reset : "");
        return *safe && safe[strlen(safe) - 1] == '\n';
    }
    md_term_put(t, safe, strlen(safe));
    return md_term_end(t);
}

static int reply(chat *c)
{
    line_mode *m = c->view_data;
    /* The thinking dim, or marked without colour; hidden, a note while it
     * lasts.  A Ctrl-C while the prompt was read in stops the reply at once. */
    think_out th = {c->show_thinking ? stdout : NULL, m->pal.dim, m->pal.reset,
                    c->show_thinking && !*m->pal.dim, isatty(STDOUT_FILENO), *m->pal.dim != 0};
    md_term_opts o;
    int rc = chat_stream_stdout(c, true, &th, look(m, &o));
    if (rc == 1)
        dim_line(m, "[stopped: the partial reply stays in the conversation]");
    if (rc >= 0) {
        char line[256];
        chat_limit_note(c, cf_session_message(c->s, cf_session_n_messages(c->s) - 1), true, line,
                        sizeof line);
        if (*line)
            printf("%s%s%s\n", m->pal.dim, line, m->pal.reset);
        chat_thinking_summary(c, line, sizeof line);
        if (*line) {
            size_t len = strlen(line);
            snprintf(line + len, sizeof line - len, "%s",
                     c->show_thinking ? "" : " · /show thinking");
            dim_line(m, line);
        }
        cf_context_info ci;
        cf_session_context_info(c->s, &ci);
        chat_stats_line(cf_session_last_stats(c->s), &ci, width_of(STDOUT_FILENO), line,
                        sizeof line);
        dim_line(m, line);
    }
    fflush(stdout);
    sig_interrupt = 0;
    return rc;
}

/* A reply's thinking when the conversation is shown again: as it
 * streamed, or a line saying where it is. */
static void replay_thinking(line_mode *m, const cf_message *msg, int reply)
{
    if (!m->c->show_thinking) {
        chat_say(m->c, OUT_DIM, "(thinking hidden: /show thinking %d)", reply);
        return;
    }
    char *safe = text_for_terminal(msg->reasoning);
    bool marked = !*m->pal.dim;
    if (!safe)
        return;
    fputs(marked ? "[thinking]\n" : "", stdout);
    if (!show_again(m, safe, true))
        putchar('\n');
    fputs(marked ? "[/thinking]\n" : "", stdout);
    free(safe);
}

static void show_user(const line_mode *m, const char *safe)
{
    printf("%s>>> %s%s\n", m->pal.bold, safe, m->pal.reset);
}

/* The conversation so far, after a /load or when resuming. */
static void replay(line_mode *m)
{
    enum { SHOWN = 20 };
    int n = cf_session_n_messages(m->c->s), first = n > SHOWN ? n - SHOWN : 0;
    if (first > 0)
        chat_say(m->c, OUT_DIM, "(%d earlier messages)", first);
    int reply = 0;
    for (int i = 0; i < first; i++)
        reply += cf_session_message(m->c->s, i)->role == CF_ROLE_ASSISTANT;
    for (int i = first; i < n; i++) {
        const cf_message *msg = cf_session_message(m->c->s, i);
        char *safe = text_for_terminal(msg->content);
        if (!safe)
            continue;
        if (msg->role == CF_ROLE_ASSISTANT && ++reply && msg->reasoning)
            replay_thinking(m, msg, reply);
        if (msg->role == CF_ROLE_SYSTEM)
            printf("%ssystem: %s%s\n", m->pal.dim, safe, m->pal.reset);
        else if (msg->role == CF_ROLE_USER)
            show_user(m, safe);
        else if (!show_again(m, safe, false) || msg->cut)
            printf("%s\n", msg->cut ? " [cut]" : "");
        char limit[96];
        chat_limit_note(m->c, msg, false, limit, sizeof limit);
        if (*limit)
            printf("%s%s%s\n", m->pal.dim, limit, m->pal.reset);
        free(safe);
    }
}

static void changed(chat *c, chat_change what)
{
    line_mode *m = c->view_data;
    if (what == CHANGE_LOADED || what == CHANGE_SWITCHED)
        replay(m);
    /* The message as the editor left it, before its reply (an inline
     * edit was typed at the prompt, so it shows already). */
    if (what != CHANGE_EDITED || !m->edited_elsewhere)
        return;
    int i = cf_session_n_messages(c->s) - 1;
    while (i >= 0 && cf_session_message(c->s, i)->role != CF_ROLE_USER)
        i--;
    char *safe = i >= 0 ? text_for_terminal(cf_session_message(c->s, i)->content) : NULL;
    if (safe)
        show_user(m, safe);
    free(safe);
}

static void prefill(chat *c, const char *text)
{
    (void)c;
    line_prefill(text);
}

/* Keys unechoed while the line runs (on), the terminal as it was (off). */
static void quiet(line_mode *m, bool on)
{
    if (on && (m->tty = tcgetattr(STDIN_FILENO, &m->saved) == 0)) {
        struct termios q = m->saved;
        q.c_lflag &= ~(tcflag_t)(ECHO | ICANON);
        tcsetattr(STDIN_FILENO, TCSANOW, &q);
    } else if (!on && m->tty) {
        tcsetattr(STDIN_FILENO, TCSANOW, &m->saved);
    }
}

/* Another program (the /edit editor) gets the terminal as it was; the text
 * it made is then not on the screen. */
static void suspend(chat *c, bool on)
{
    line_mode *m = c->view_data;
    quiet(m, !on);
    m->edited_elsewhere = !on;
}

/* A yes/no question while a line runs: one key (a line when stdin is not
 * a terminal); only y or Y is yes. */
static bool confirm(chat *c, const char *question)
{
    line_mode *m = c->view_data;
    printf("%s%s%s [y/N] ", m->pal.bold, question, m->pal.reset);
    fflush(stdout);
    char ch = 0, rest;
    if (read(STDIN_FILENO, &ch, 1) != 1)
        ch = 0;
    while (!m->tty && ch != '\n' && read(STDIN_FILENO, &rest, 1) == 1 && rest != '\n') {
    }
    printf("%c\n", ch == 'y' || ch == 'Y' ? 'y' : 'n');
    return ch == 'y' || ch == 'Y';
}

static const chat_view line_view = {say, reply, changed, prefill, suspend, NULL, NULL, confirm};

static void on_line(char *line)
{
    line_mode *m = L;
    if (!line) {
        /* Removing the handler now keeps readline from showing another
         * prompt; it has already ended the line. */
        rl_callback_handler_remove();
        m->done = true;
        return;
    }
    quiet(m, true);
    m->edited_elsewhere = false;
    bool more = typed_line(m->c, &m->in, line);
    quiet(m, false);
    /* a Ctrl-C that stopped the line's prompt being evaluated is spent */
    sig_interrupt = 0;
    if (m->c->quit) {
        rl_callback_handler_remove();
        m->done = true;
        return;
    }
    rl_set_prompt(more ? m->more : m->prompt);
}

/* Ctrl-C at the prompt: the line (and any partly typed message) is
 * dropped, shown ending in ^C, and a fresh prompt follows. */
static void handle_interrupt(line_mode *m)
{
    sig_interrupt = 0;
    rl_callback_sigcleanup();
    rl_point = rl_end;
    rl_redisplay();
    fputs("^C", stdout);
    fflush(stdout);
    rl_free_line_state();
    /* Leaving readline's terminal mode returns the cursor to the start
     * of the line, so the newline comes after it. */
    rl_callback_handler_remove();
    putchar('\n');
    input_reset(&m->in);
    rl_callback_handler_install(m->prompt, on_line);
}

int repl_run(chat *c)
{
    line_mode m = {.c = c};
    palette_init(&m.pal, color_wanted(STDOUT_FILENO, c->opts->no_color));
    /* \001 \002 tell readline the colour codes take no columns. */
    snprintf(m.prompt, sizeof m.prompt, "\001%s\002>>> \001%s\002", m.pal.bold, m.pal.reset);
    snprintf(m.more, sizeof m.more, "\001%s\002... \001%s\002", m.pal.dim, m.pal.reset);
    c->view = &line_view;
    c->view_data = &m;
    L = &m;

    cf_context_info ci;
    cf_session_context_info(c->s, &ci);
    const cf_remote_info *ri = cf_session_remote(c->s);
    if (ri)
        chat_say(c, OUT_DIM, "confab %s · remote: %s at %s · /help for commands, Ctrl-D to leave",
                 CONFAB_VERSION, ri->model, ri->endpoint);
    else
        chat_say(c, OUT_DIM, "confab %s · %s · context %d · /help for commands, Ctrl-D to leave",
                 CONFAB_VERSION, chat_model_name(c), ci.total);
    chat_untrained_note(c);
    if (cf_session_n_messages(c->s) > 0)
        replay(&m);

    history_open();
    completion_install(c);
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    sig_install(true);
    rl_callback_handler_install(m.prompt, on_line);
    while (!m.done && !sig_quit) {
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(STDIN_FILENO, &fds);
        int r = select(STDIN_FILENO + 1, &fds, NULL, NULL, NULL);
        if (r < 0 && errno != EINTR)
            break;
        if (sig_interrupt)
            handle_interrupt(&m);
        if (sig_resize) {
            sig_resize = 0;
            rl_resize_terminal();
        }
        if (sig_resumed) {
            /* back from Ctrl-Z: the shell had the terminal in its own mode */
            sig_resumed = 0;
            rl_deprep_terminal();
            rl_prep_terminal(1);
            rl_forced_update_display();
        }
        if (r > 0)
            rl_callback_read_char();
    }
    rl_callback_handler_remove();
    if (sig_quit)
        putchar('\n');
    sig_restore();
    history_close();
    input_free(&m.in);
    int status = chat_autosave(c, true) < 0 ? CF_EXIT_SESSION : CF_EXIT_OK;
    return sig_quit ? 128 + sig_quit : status;
}
