/* Scripting: stdin is not a terminal, or -p gave the one message.  Only
 * replies go to stdout (one per message, each ending in a newline);
 * everything else goes to stderr.  The first failure ends the run with
 * its exit status (see confab(1)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "repl.h"
#include "term.h"
#include "text.h"

#define INPUT_MAX (64u << 20) /* far beyond any context */

typedef struct script {
    bool tty_out;
    bool at_line_start;
} script;

static void say(chat *c, out_kind kind, const char *text)
{
    (void)c;
    if (kind == OUT_ERROR)
        cli_error("%s", text);
    else
        fprintf(stderr, "%s\n", text);
}

static void put_piece(void *ud, const char *text)
{
    script *sc = ud;
    /* Scripts get the model's bytes; a terminal gets them made safe. */
    char *safe = sc->tty_out ? text_for_terminal(text) : NULL;
    const char *out = safe ? safe : text;
    size_t n = strlen(out);
    fwrite(out, 1, n, stdout);
    fflush(stdout);
    if (n)
        sc->at_line_start = out[n - 1] == '\n';
    free(safe);
}

static bool stop_requested(void *ud)
{
    (void)ud;
    return sig_interrupt || sig_quit;
}

static int reply(chat *c)
{
    script *sc = c->view_data;
    sc->at_line_start = true;
    stream_hooks h = {put_piece, stop_requested, sc};
    int rc = chat_stream(c, &h);
    if (!sc->at_line_start)
        putchar('\n');
    fflush(stdout);
    if (rc >= 0 && c->opts->verbose) {
        char line[256];
        cf_context_info ci;
        cf_session_context_info(c->s, &ci);
        chat_stats_line(cf_session_last_stats(c->s), &ci, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    return rc;
}

static const chat_view script_view = {say, reply, NULL};

/* One message of input: repaired UTF-8 (with a note), then sent. */
static void feed(chat *c, const char *text, size_t len)
{
    int bad;
    char *clean = utf8_sanitize(text, len, &bad);
    if (!clean) {
        cli_error("out of memory");
        c->first_error = CF_EXIT_ERROR;
        return;
    }
    if (bad)
        cli_error("note: %d invalid UTF-8 byte%s replaced by U+FFFD", bad, bad > 1 ? "s" : "");
    chat_input(c, clean);
    free(clean);
}

static void read_all(chat *c)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = cap < INPUT_MAX ? realloc(buf, cap *= 2) : NULL;
            if (!nb) {
                cli_error("stdin: more than %u MB of input", INPUT_MAX >> 20);
                c->first_error = CF_EXIT_CONTEXT;
                free(buf);
                return;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, stdin);
        if (r == 0)
            break;
        n += r;
    }
    if (!buf) {
        cli_error("out of memory");
        c->first_error = CF_EXIT_ERROR;
        return;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    feed(c, buf, n);
    free(buf);
}

int script_run(chat *c)
{
    script sc = {.tty_out = isatty(STDOUT_FILENO)};
    c->view = &script_view;
    c->view_data = &sc;
    sig_install(false);
    if (c->opts->prompt) {
        feed(c, c->opts->prompt, strlen(c->opts->prompt));
    } else if (c->opts->whole) {
        read_all(c);
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while (!c->first_error && !c->quit && !sig_quit && !sig_interrupt &&
               (len = getline(&line, &cap, stdin)) >= 0) {
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                len--;
            if (len > 0)
                feed(c, line, (size_t)len);
        }
        free(line);
    }
    sig_restore();
    if (chat_autosave(c) < 0 && !c->first_error)
        c->first_error = CF_EXIT_SESSION;
    if (sig_quit || sig_interrupt)
        return sig_quit ? 128 + sig_quit : CF_EXIT_INTERRUPT;
    return c->first_error;
}
