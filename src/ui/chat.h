/* The chat command's core, shared by line mode, full-screen mode and
 * scripting: a session, how a mode shows things, sending a message and
 * streaming its reply, the slash commands.  Uses the session only through
 * confab/session.h. */
#ifndef CONFAB_UI_CHAT_H
#define CONFAB_UI_CHAT_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/session.h"
#include "markdown.h"
#include "opts.h"

typedef enum out_kind {
    OUT_INFO,  /* confirmations, listings */
    OUT_DIM,   /* statistics, hints */
    OUT_ERROR, /* one line saying what went wrong */
} out_kind;

typedef struct chat chat;

/* Changes to the conversation other than a reply. */
typedef enum chat_change {
    CHANGE_LOADED,  /* /load, or resumed at start */
    CHANGE_UNDONE,  /* /undo */
    CHANGE_REGEN,   /* /regen: the last reply is gone, a new one follows */
    CHANGE_CLEARED, /* /clear */
    CHANGE_SYSTEM,  /* /set system */
    CHANGE_SHOW,    /* /set show-thinking */
    CHANGE_BRANCHED, /* /branch NAME: a new branch, the same messages */
    CHANGE_SWITCHED, /* /switch: another branch's messages */
    CHANGE_EDITED,  /* /edit: the messages from the edited one on are new; a reply follows */
} chat_change;

/* What a mode provides. */
typedef struct chat_view {
    /* Show a line (or a few) of text of the given kind. */
    void (*say)(chat *c, out_kind kind, const char *text);
    /* Stream the reply just begun (cf_session_begin_reply or _regen):
     * returns 0 when it ended, 1 when the user stopped it, -1 on error
     * (already shown). */
    int (*reply)(chat *c);
    /* The conversation changed other than by a reply; NULL if the mode
     * does not care. */
    void (*changed)(chat *c, chat_change what);
    /* Put text on the input line to edit (/edit without an editor); NULL:
     * the mode has no line editor (the next line read is the new text). */
    void (*prefill)(chat *c, const char *text);
    /* Give the terminal to another program (on) and take it back; NULL:
     * nothing to do. */
    void (*suspend)(chat *c, bool on);
    /* While a prompt is evaluated: whether the user asked to stop; NULL:
     * a SIGINT, SIGTERM or SIGHUP says so. */
    bool (*interrupted)(chat *c);
    /* The mode's own keys, listed by /help; NULL: none. */
    const char *keys;
    /* Ask the user a yes/no question (a tool call to run); NULL: the mode
     * cannot ask, and the answer is no. */
    bool (*confirm)(chat *c, const char *question);
} chat_view;

struct chat {
    cf_session *s;
    const chat_opts *opts;
    const char *model_path;
    char *session_path;     /* where /save writes without an argument */
    const chat_view *view;
    void *view_data;
    bool quit;              /* /bye */
    bool show_thinking;     /* replies' thinking shown (--show-thinking, /set show-thinking) */
    bool markdown;          /* replies rendered on a terminal (--markdown, /set markdown) */
    double temp_before_greedy;
    int first_error;        /* CF_EXIT_* of the first failure (scripting) */
    bool in_command;        /* errors now are a slash command's (CF_EXIT_USAGE) */
    int edit_next;          /* /edit inline: 1 + the index of the message the next
                               line replaces; 0: none */
    struct chat_tools *tools; /* --tools (chat_tools.c); NULL: none */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void chat_say(chat *c, out_kind kind, const char *fmt, ...);

/* Input as typed or piped, with every invalid UTF-8 sequence replaced by
 * U+FFFD (and a note saying how many); malloc'ed, NULL after an error. */
char *chat_clean_input(chat *c, const char *text, size_t len);

/* One complete input: a slash command, or a message ("//..." sends
 * "/..."); blank input does nothing. */
void chat_input(chat *c, const char *text);

/* Send a user message and stream the reply through the view; 0, 1 (cut)
 * or -1.  A message that does not fit the context is one error line and
 * changes nothing; so is one whose prompt the user stopped. */
int chat_send(chat *c, const char *text);
/* The session's cancel check (cf_session_set_cancel; ud: the chat): the
 * view's interrupted, else a signal. */
bool chat_interrupted(void *ud);
/* Say why a turn (a message, /regen, /edit) did not begin: an error
 * line, or for a prompt the user stopped a dim one saying that nothing
 * changed. */
void chat_turn_failed(chat *c, const cf_err *err);

/* How a mode streams: each part of the reply as it comes (the thinking's
 * next text, the answer's, whether the reply is inside its thinking now),
 * a check for "stop" between tokens (keyboard, signals). */
typedef struct stream_hooks {
    void (*part)(void *ud, const cf_reply_part *p);
    bool (*stop)(void *ud);
    void *ud;
} stream_hooks;

/* Run the reply begun on the session to its end; 0 done, 1 stopped by
 * the user (the partial reply stays, marked as cut), -1 error (shown). */
int chat_stream(chat *c, const stream_hooks *h);
/* The model's name as shown: the file's, or the server's model. */
const char *chat_model_name(const chat *c);
/* After a reply (once its text is done): notes on a full context. */
void chat_reply_notes(chat *c);

/* Where chat_stream_stdout puts a reply's thinking. */
typedef struct think_out {
    FILE *to;                /* NULL: nowhere */
    const char *dim, *reset; /* around it (colour) */
    bool marked;             /* in a "[thinking]" ... "[/thinking]" block (no colour) */
    bool indicator;          /* not shown: "thinking..." on stdout while it lasts */
    bool probs_color;        /* with probs on, tones as colours (else underline) */
} think_out;

/* Stream the reply begun to stdout (reply_stdout.c), its thinking as th
 * says, stopping at SIGINT, SIGTERM or SIGHUP, end the line it leaves
 * open, then the notes.  make_safe: through text_for_terminal (a
 * terminal), else the model's bytes as they are.  look: how the answer is
 * rendered (its thinking is wrapped the same way, not rendered); NULL:
 * as it is.  Returns as chat_stream. */
int chat_stream_stdout(chat *c, bool make_safe, const think_out *th, const md_term_opts *look);
/* The line that marks reply m as stopped by the token limit, or "" (m is
 * no such reply): "[stopped at -n 256: /set n-predict N for longer]" just
 * after it (live), the limit unnamed when it is shown again. */
void chat_limit_note(chat *c, const cf_message *m, bool live, char *buf, size_t n);
/* After a reply that thought: "thought for 312 tokens, 4.1 s" (", cut off"
 * when it ended inside its thinking); "" after one that did not. */
void chat_thinking_summary(chat *c, char *buf, size_t n);

/* The one dim line after a reply: prompt and generated tokens with their
 * speeds, time to the first token, context used / total; fields left out,
 * the least important first, until it fits `width` columns (0: never). */
void chat_stats_line(const cf_turn_stats *st, const cf_context_info *ci, int width, char *buf,
                     size_t n);

/* Save to path (NULL: the session file, else a new file in
 * ${XDG_DATA_HOME:-~/.local/share}/confab/sessions/); 0 or -1 (shown). */
int chat_save(chat *c, const char *path);
/* Load a session file (a bare name is also looked for in the sessions
 * folder); on failure the conversation is untouched. */
int chat_load(chat *c, const char *path);
/* At exit: save when something changed and --autosave or --session
 * asked; else, with hint, one line saying how to keep a conversation. */
int chat_autosave(chat *c, bool hint);

/* For a model not trained to chat (cf_session_untrained), the lines under
 * the banner: why, where replies stop (unless -n or a resumed session
 * says otherwise), how to get a chat model. */
void chat_untrained_note(chat *c);

/* F9 in full-screen mode: temperature 0 and back. */
int chat_toggle_greedy(chat *c);
/* A setting as a number (0 when unknown). */
double chat_setting(const chat *c, const char *name);

/* ---- tools (chat_tools.c) ----------------------------------------------------- */
/* --tools FILE onto the session (its template must render tools);
 * --tool-choice required holds each reply to a message to a call. */
int chat_tools_open(chat *c, const char *path, bool required, cf_err *err);
void chat_tools_close(chat *c);
/* Around the reply to a user's message: the required call's grammar. */
int chat_tools_before(chat *c, cf_err *err);
void chat_tools_after(chat *c);
/* After a reply: each call it makes shown, confirmed, run, its output
 * given back, and the model's next reply streamed (as view->reply; again
 * while replies call).  0, 1 (the user stopped a reply) or -1 (shown). */
int chat_tools_follow(chat *c);

/* ---- slash commands (slash.c) ---------------------------------------------- */
/* Run a line starting with '/'. */
void slash_run(chat *c, const char *line);
/* The command names (with the slash), NULL-terminated. */
extern const char *const slash_names[];
/* Topics of /show, NULL-terminated. */
extern const char *const show_topics[];
/* /show TOPIC [ARGS] */
void slash_show(chat *c, const char *args);
/* The first word of *args into word (cut to n - 1 bytes), its length
 * returned; *args moves on to the next word. */
size_t slash_word(const char **args, char *word, size_t n);
/* Reply arg (1 = the oldest; "" the last) for a command called what: its
 * message index and *number, or -1 after saying why there is none. */
int chat_pick_reply(chat *c, const char *arg, const char *what, int *number);

/* ---- branches (slash_branch.c) ---------------------------------------------- */
void cmd_branch(chat *c, const char *args);
void cmd_branches(chat *c, const char *args);
void cmd_switch(chat *c, const char *args);
void cmd_edit(chat *c, const char *args);
/* Replace message index by text on a new branch and stream the reply. */
void chat_edit_send(chat *c, int index, const char *text);

#endif
