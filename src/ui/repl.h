/* The interactive modes and scripting, each run over an open chat. */
#ifndef CONFAB_UI_REPL_H
#define CONFAB_UI_REPL_H

#include "chat.h"
#include "input.h"

/* Line mode (readline): returns the exit status. */
int repl_run(chat *c);
/* Full-screen mode (ncurses). */
int tui_run(chat *c);
/* stdin not a terminal, or -p: returns the exit status. */
int script_run(chat *c);

/* Readline's history file, ${XDG_STATE_HOME:-~/.local/state}/confab/history,
 * shared by both interactive modes. */
void history_open(void);
void history_close(void);
/* Add a line as typed (very long ones are not kept). */
void history_add(const char *line);
/* A line typed at the prompt (malloc'ed by readline; freed here): kept in
 * the history, cleaned, added to the message being typed, and the message
 * run when complete.  Returns whether a message is still being typed. */
bool typed_line(chat *c, input_asm *in, char *line);
/* Tab completion of slash commands, settings, their values, branches and
 * paths for readline, in the chat c. */
void completion_install(chat *c);

#endif
