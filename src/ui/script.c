/* Scripting: stdin is not a terminal, or -p gave the one message.  Only
 * replies go to stdout (one per message, each ending in a newline; their
 * answers, not their thinking); everything else goes to stderr.  The first failure ends the run with
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

static void say(chat *c, out_kind kind, const char *text)
{
    (void)c;
    if (kind == OUT_ERROR)
        cli_error("%s", text);
    else
        fprintf(stderr, "%s\n", text);
}

static int reply(chat *c)
{
    /* Scripts get the model's bytes; a terminal gets them made safe.  The
     * thinking stays out of stdout: on stderr with --show-thinking. */
    think_out th = {c->show_thinking ? stderr : NULL, "", "", true, false, false};
    int rc = chat_stream_stdout(c, isatty(STDOUT_FILENO), &th, NULL);
    if (rc >= 0 && c->opts->verbose) {
        char line[256];
        chat_thinking_summary(c, line, sizeof line);
        if (*line)
            fprintf(stderr, "%s\n", line);
        cf_context_info ci;
        cf_session_context_info(c->s, &ci);
        chat_stats_line(cf_session_last_stats(c->s), &ci, 0, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    return rc;
}

/* A tool call to run: the question on stderr, the answer the next line of
 * stdin (y or yes runs it; the end of the input, or -p's message alone, is
 * no), so a script says what may run line by line. */
static bool confirm(chat *c, const char *question)
{
    (void)c;
    fprintf(stderr, "%s [y/N] ", question);
    char *line = NULL;
    size_t cap = 0;
    bool yes = getline(&line, &cap, stdin) > 0 && (line[0] == 'y' || line[0] == 'Y');
    free(line);
    fprintf(stderr, "%s\n", yes ? "y" : "n");
    return yes;
}

static const chat_view script_view = {say, reply, NULL, NULL, NULL, NULL, NULL, confirm};

static void feed(chat *c, const char *text, size_t len)
{
    char *clean = chat_clean_input(c, text, len);
    if (!clean)
        return;
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
    c->view = &script_view;
    if (c->opts->verbose)
        chat_untrained_note(c);
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
    if (chat_autosave(c, false) < 0 && !c->first_error)
        c->first_error = CF_EXIT_SESSION;
    if (sig_quit || sig_interrupt)
        return sig_quit ? 128 + sig_quit : CF_EXIT_INTERRUPT;
    return c->first_error;
}
