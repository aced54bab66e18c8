/* What line and full-screen mode share at the prompt (both edit with
 * readline): the history, a typed line, Tab completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "complete.h"
#include "paths.h"
#include "repl.h"

#define HISTORY_MAX 1000
#define HISTORY_LINE_MAX 16384

static char history_file[4096];

void history_open(void)
{
    using_history();
    stifle_history(HISTORY_MAX);
    /* Timestamps ("#" lines) let messages of several lines (pastes) come
     * back whole. */
    history_comment_char = '#';
    history_write_timestamps = 1;
    history_multiline_entries = 1;
    if (xdg_path(XDG_STATE, "history", history_file, sizeof history_file))
        read_history(history_file);
}

void history_close(void)
{
    if (!history_file[0] || make_parent_dirs(history_file) < 0)
        return;
    if (write_history(history_file) == 0)
        history_truncate_file(history_file, HISTORY_MAX);
}

void history_add(const char *line)
{
    size_t n = strlen(line);
    if (n == 0 || n > HISTORY_LINE_MAX)
        return;
    HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
    if (!last || strcmp(last->line, line) != 0)
        add_history(line);
}

bool typed_line(chat *c, input_asm *in, char *line)
{
    char *clean = chat_clean_input(c, line, strlen(line));
    free(line);
    if (!clean)
        return input_pending(in);
    int r = input_feed(in, clean);
    free(clean);
    if (r < 0)
        chat_say(c, OUT_ERROR, "out of memory: the message was dropped");
    if (r == 1) {
        char *msg = input_take(in);
        /* The message whole, not its lines: Up brings back a """ block as
         * one entry, and Enter sends it as it was (its newlines kept). */
        if (msg) {
            history_add(msg);
            chat_input(c, msg);
        }
        free(msg);
    }
    return input_pending(in);
}

static const char *const *candidates;
static chat *completing; /* readline's callbacks take no user pointer */

static char *next_candidate(const char *text, int state)
{
    static int i;
    static size_t len;
    if (state == 0)
        i = 0, len = strlen(text);
    while (candidates[i]) {
        const char *w = candidates[i++];
        if (!strncmp(w, text, len))
            return strdup(w);
    }
    return NULL;
}

static char **attempt(const char *text, int start, int end)
{
    (void)end;
    rl_attempted_completion_over = 1;
    switch (complete_what(completing->s, rl_line_buffer, start, &candidates)) {
    case COMPLETE_WORDS:
        return rl_completion_matches(text, next_candidate);
    case COMPLETE_FILES:
        rl_attempted_completion_over = 0; /* readline's own file name completion */
        return NULL;
    case COMPLETE_NOTHING:
        break;
    }
    return NULL;
}

void completion_install(chat *c)
{
    completing = c;
    rl_readline_name = "confab";
    rl_attempted_completion_function = attempt;
}
