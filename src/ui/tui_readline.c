/* Readline inside an ncurses window, through its callback interface.
 *
 * ncurses owns the terminal: it reads keys (decoding function keys) and
 * draws.  Keys meant for the line are turned back into the bytes readline
 * expects (arrows as ANSI sequences, characters as UTF-8) and queued;
 * readline reads them through rl_getc_function and draws through
 * rl_redisplay_function.  Readline never touches the terminal itself: its
 * terminal setup is a no-op and its output goes to /dev/null. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "term.h"
#include "text.h"
#include "tui.h"

enum { QUEUE = 1 << 16 };

static struct {
    WINDOW *w;
    unsigned char q[QUEUE];
    size_t head, tail;
    const char *hint;
    FILE *devnull;
} R;

static size_t queued(void)
{
    return R.tail - R.head;
}

static void push(const char *bytes, size_t n)
{
    if (queued() + n > QUEUE)
        return; /* a flood beyond 64 kB of typed keys: drop it */
    for (size_t i = 0; i < n; i++)
        R.q[R.tail++ % QUEUE] = (unsigned char)bytes[i];
}

/* The bytes readline's default key bindings expect for ncurses' keys. */
static const char *key_bytes(int key)
{
    switch (key) {
    case KEY_LEFT:
        return "\033[D";
    case KEY_RIGHT:
        return "\033[C";
    case KEY_UP:
        return "\033[A";
    case KEY_DOWN:
        return "\033[B";
    case KEY_HOME:
        return "\033[H";
    case KEY_END:
        return "\033[F";
    case KEY_DC:
        return "\033[3~";
    case KEY_BACKSPACE:
        return "\177";
    case KEY_ENTER:
        return "\r";
    }
    return NULL;
}

void tui_rl_queue(int is_key, wint_t ch)
{
    if (is_key) {
        const char *b = key_bytes((int)ch);
        if (b)
            push(b, strlen(b));
        return;
    }
    char buf[4];
    uint32_t cp = (uint32_t)ch;
    size_t n;
    if (cp < 0x80)
        buf[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        buf[0] = (char)(0xC0 | cp >> 6), buf[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        buf[0] = (char)(0xE0 | cp >> 12), buf[1] = (char)(0x80 | (cp >> 6 & 0x3F)),
        buf[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        buf[0] = (char)(0xF0 | cp >> 18), buf[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
        buf[2] = (char)(0x80 | (cp >> 6 & 0x3F)), buf[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    push(buf, n);
}

void tui_rl_drain(void)
{
    while (queued() > 0)
        rl_callback_read_char();
}

void tui_rl_key(int is_key, wint_t ch)
{
    tui_rl_queue(is_key, ch);
    tui_rl_drain();
}

/* Readline asks for more than was queued only in the middle of something
 * (a multibyte character, a bracketed paste): wait for the next key. */
static int rl_getc_queue(FILE *f)
{
    (void)f;
    while (queued() == 0) {
        wint_t ch;
        int r = wget_wch(R.w, &ch);
        if (r == OK)
            tui_rl_queue(0, ch);
        else if (r == KEY_CODE_YES)
            tui_rl_queue(1, ch);
        else if (sig_quit)
            return EOF;
    }
    return R.q[R.head++ % QUEUE];
}

static int rl_input_waiting(void)
{
    return queued() > 0;
}

static void no_term(int meta)
{
    (void)meta;
}

static void no_deprep(void)
{
}

/* The line as shown: a newline (from a paste) as ↵, other controls as ?,
 * invalid bytes as U+FFFD.  *cursor: the shown offset of byte `point`. */
static char *shown_line(const char *line, size_t point, size_t *cursor)
{
    size_t n = strlen(line);
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out)
        return NULL;
    *cursor = 0;
    for (size_t i = 0; i < n;) {
        if (i == point)
            *cursor = (size_t)(o - out);
        uint32_t cp;
        int len = utf8_decode(line + i, n - i, &cp);
        if (len == 0) {
            memcpy(o, UTF8_REPLACEMENT, 3), o += 3, i++;
        } else if (cp == '\n') {
            memcpy(o, "\xE2\x86\xB5", 3), o += 3, i++; /* ↵ */
        } else if (cp < 0x20 || cp == 0x7F) {
            *o++ = '?', i++;
        } else {
            memcpy(o, line + i, (size_t)len), o += len, i += (size_t)len;
        }
    }
    if (point >= n)
        *cursor = (size_t)(o - out);
    *o = 0;
    return out;
}

void tui_rl_redisplay(void)
{
    WINDOW *w = R.w;
    if (!w)
        return;
    int width = getmaxx(w);
    werase(w);
    if (R.hint) {
        /* the hints that fit, whole (two spaces part them) */
        size_t fit = 0;
        for (const char *p = R.hint;; p += 2) {
            const char *end = strstr(p, "  ");
            size_t at = end ? (size_t)(end - R.hint) : strlen(R.hint);
            if (utf8_width(R.hint, at) > width)
                break;
            fit = at;
            if (!end)
                break;
            p = end;
        }
        wattrset(w, A_DIM);
        mvwaddnstr(w, 0, 0, R.hint, (int)fit);
        wattrset(w, A_NORMAL);
        wnoutrefresh(w);
        return;
    }
    const char *prompt = rl_display_prompt ? rl_display_prompt : "";
    size_t cursor;
    char *line = shown_line(rl_line_buffer ? rl_line_buffer : "", (size_t)rl_point, &cursor);
    if (!line)
        return;
    int pw = utf8_width(prompt, strlen(prompt));
    /* Scroll sideways so the cursor stays in view: walk back from it,
     * a character at a time, while what lies between still fits. */
    size_t start = cursor;
    int cols = 0;
    while (start > 0) {
        size_t prev = start - 1;
        while (prev > 0 && ((unsigned char)line[prev] & 0xC0) == 0x80)
            prev--;
        int cw = utf8_width(line + prev, start - prev);
        if (pw + cols + cw > width - 2)
            break;
        cols += cw;
        start = prev;
    }
    mvwaddstr(w, 0, 0, prompt);
    waddnstr(w, line + start, -1);
    wmove(w, 0, pw + utf8_width(line + start, cursor - start));
    free(line);
    wnoutrefresh(w);
}

static void redisplay_and_update(void)
{
    tui_rl_redisplay();
    doupdate();
}

void tui_rl_hint(const char *hint)
{
    R.hint = hint;
    redisplay_and_update();
}

void tui_rl_window(WINDOW *w)
{
    R.w = w;
}

void tui_rl_clear_line(void)
{
    rl_callback_sigcleanup();
    rl_free_line_state();
    rl_replace_line("", 0);
    rl_point = rl_end = 0;
    redisplay_and_update();
}

void tui_rl_start(const char *prompt, void (*on_line)(char *))
{
    R.w = NULL;
    R.head = R.tail = 0;
    R.devnull = fopen("/dev/null", "w");
    rl_outstream = R.devnull;
    /* Readline must not export LINES/COLUMNS (ncurses would stop
     * following resizes) nor handle signals. */
    rl_change_environment = 0;
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_getc_function = rl_getc_queue;
    rl_input_available_hook = rl_input_waiting;
    rl_redisplay_function = redisplay_and_update;
    rl_prep_term_function = no_term;
    rl_deprep_term_function = no_deprep;
    rl_callback_handler_install(prompt, on_line);
}

void tui_rl_stop(void)
{
    rl_callback_handler_remove();
    rl_outstream = NULL;
    rl_getc_function = rl_getc;
    rl_input_available_hook = NULL;
    rl_redisplay_function = rl_redisplay;
    rl_prep_term_function = rl_prep_terminal;
    rl_deprep_term_function = rl_deprep_terminal;
    if (R.devnull)
        fclose(R.devnull);
    R.devnull = NULL;
}
