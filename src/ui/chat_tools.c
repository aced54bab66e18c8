/* --tools in the chat, as aichat has them: the model may call the
 * functions of a file, each carried out by a shell command.  After a
 * reply, each call it makes is shown and asked about (y/N: a key in the
 * line and full-screen modes, the next line of stdin in a script; a mode
 * that cannot ask declines); a call that is run gets the arguments as JSON on
 * stdin and in $CONFAB_TOOL_ARGS (the function's name in
 * $CONFAB_TOOL_NAME), and what it prints (stdout and stderr, at most 64
 * KiB) goes back to the model as the tool's result, whose next reply then
 * streams.  A declined call goes back as declined.  --tool-choice
 * required holds the reply to each message to a call (a grammar: even a
 * model that never learnt to call writes a well-formed one); the replies
 * after a result are free. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chat.h"
#include "confab/grammar.h"
#include "confab/tools.h"

extern char **environ;

typedef struct chat_tools {
    cf_tools_file file;
    int fmt;       /* the template's syntax (cf_tool_format) */
    bool required;
    bool held;     /* the grammar is on for the reply under way */
    int next_id;   /* calls so far, for their ids */
} chat_tools;

enum { MAX_OUTPUT = 64 << 10, MAX_ROUNDS = 8 };

int chat_tools_open(chat *c, const char *path, bool required, cf_err *err)
{
    chat_tools *t = calloc(1, sizeof *t);
    if (!t)
        return cf_fail(err, "out of memory");
    if (cf_tools_file_read(path, &t->file, err)) {
        free(t);
        return -1;
    }
    t->fmt = cf_session_tool_format(c->s);
    t->required = required;
    if (cf_session_remote(c->s))
        cf_fail_as(err, CF_E_USAGE, "--tools: a remote model's calls are not read here yet");
    else if (t->fmt == CF_TOOLS_NONE)
        cf_fail_as(err, CF_E_USAGE, "--tools: the model's chat template renders no tools (give "
                                    "one that does with --chat-template-file)");
    else if (cf_session_set_tools(c->s, t->file.tools_json, err) == 0) {
        c->tools = t;
        return 0;
    }
    cf_tools_file_free(&t->file);
    free(t);
    return -1;
}

void chat_tools_close(chat *c)
{
    if (!c->tools)
        return;
    cf_tools_file_free(&c->tools->file);
    free(c->tools);
    c->tools = NULL;
}

int chat_tools_before(chat *c, cf_err *err)
{
    chat_tools *t = c->tools;
    char format[16];
    if (!t || !t->required)
        return 0;
    const char *f = cf_session_get(c->s, "format", format, sizeof format);
    if (f && strcmp(f, "off"))
        return cf_fail_as(err, CF_E_USAGE, "--tool-choice required: a reply cannot also keep to "
                                           "a format (/set format off)");
    /* the format's own syntax, else a bare call where the vocabulary cannot
     * spell its markers (no byte tokens) */
    for (int framed = 1; framed >= 0; framed--) {
        struct cf_grammar *g;
        cf_tool_format as;
        if (cf_tools_grammar(t->fmt, t->file.tools_json, NULL, framed, &g, &as, err))
            return -1;
        /* kept by the session under the list: the next message's grammar
         * is this one, its masks made already */
        if (cf_session_set_grammar(c->s, "tool call", framed ? "tools framed" : "tools bare", g,
                                   err) == 0) {
            t->held = true;
            return 0;
        }
        if (as == CF_TOOLS_JSON)
            return -1;
    }
    return -1;
}

void chat_tools_after(chat *c)
{
    if (c->tools && c->tools->held) {
        cf_session_set_grammar(c->s, NULL, NULL, NULL, NULL);
        c->tools->held = false;
    }
}

/* Run command with args on stdin and in the environment; its output (cut
 * at MAX_OUTPUT) into *out, malloc'ed; the exit status, -1 when it could
 * not start. */
static int run_command(const char *command, const char *name, const char *args, char **out)
{
    *out = NULL;
    char in_path[] = "/tmp/confab-tool-XXXXXX";
    int in = mkstemp(in_path), pipefd[2] = {-1, -1};
    if (in < 0)
        return -1;
    unlink(in_path);
    size_t len = strlen(args);
    /* close-on-exec: only the dup2'ed copies reach the command, so what it
     * leaves running does not hold the pipe open */
    if (write(in, args, len) != (ssize_t)len || lseek(in, 0, SEEK_SET) < 0 ||
        fcntl(in, F_SETFD, FD_CLOEXEC) < 0 || pipe2(pipefd, O_CLOEXEC)) {
        close(in);
        return -1;
    }
    size_t n_env = 0;
    while (environ[n_env])
        n_env++;
    char **env = calloc(n_env + 3, sizeof *env);
    char *a = malloc(len + 32), *nm = malloc(strlen(name) + 32);
    int rc = -1;
    pid_t pid;
    if (env && a && nm) {
        memcpy(env, environ, n_env * sizeof *env);
        snprintf(a, len + 32, "CONFAB_TOOL_ARGS=%s", args);
        snprintf(nm, strlen(name) + 32, "CONFAB_TOOL_NAME=%s", name);
        env[n_env] = a;
        env[n_env + 1] = nm;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
        char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
        if (posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, env) == 0)
            rc = 0;
        posix_spawn_file_actions_destroy(&fa);
    }
    free(env);
    free(a);
    free(nm);
    close(in);
    close(pipefd[1]);
    if (rc < 0) {
        close(pipefd[0]);
        return -1;
    }
    char *buf = malloc(MAX_OUTPUT + 1);
    size_t got = 0;
    ssize_t r;
    char sink[4096];
    while ((r = read(pipefd[0], buf && got < MAX_OUTPUT ? buf + got : sink,
                     buf && got < MAX_OUTPUT ? MAX_OUTPUT - got : sizeof sink)) > 0)
        if (buf && got < MAX_OUTPUT)
            got += (size_t)r;
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (buf)
        buf[got] = 0;
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The result the model gets for one call: what the command printed, or
 * why there is nothing. */
static char *carry_out(chat *c, const cf_tool_call *call)
{
    const char *command = cf_tools_file_command(&c->tools->file, call->name);
    char question[256], *out = NULL, *result;
    if (!command) {
        chat_say(c, OUT_ERROR, "the model called '%.60s', which is not among the tools",
                 call->name);
        return strdup("error: there is no such tool");
    }
    chat_say(c, OUT_INFO, "tool call: %s %s", call->name, call->arguments);
    snprintf(question, sizeof question, "run %.60s?", call->name);
    if (!c->view->confirm || !c->view->confirm(c, question)) {
        chat_say(c, OUT_DIM, "[not run]");
        return strdup("the user declined to run this call");
    }
    int status = run_command(command, call->name, call->arguments, &out);
    if (status < 0) {
        chat_say(c, OUT_ERROR, "%s: the command could not be started", call->name);
        return strdup("error: the tool could not be started");
    }
    size_t n = out ? strlen(out) : 0;
    chat_say(c, OUT_DIM, "[%s: exit status %d, %zu bytes of output]", call->name, status, n);
    if (status == 0)
        return out ? out : strdup("");
    if ((result = malloc(n + 48)))
        snprintf(result, n + 48, "error: exit status %d\n%s", status, out ? out : "");
    free(out);
    return result;
}

/* The calls the last reply makes (none: *n 0). */
static cf_tool_call *reply_calls(chat *c, int *n)
{
    *n = 0;
    int last = cf_session_n_messages(c->s) - 1;
    const cf_message *m = last >= 0 ? cf_session_message(c->s, last) : NULL;
    if (!m || m->role != CF_ROLE_ASSISTANT || m->cut)
        return NULL;
    cf_tool_parser p;
    cf_tool_parser_init(&p, (cf_tool_format)c->tools->fmt);
    size_t raw_len;
    const char *raw = cf_session_reply_text(c->s, &raw_len);
    if (raw && p.f == CF_TOOLS_HARMONY)
        cf_tools_harmony_recipient(&p, raw, raw_len);
    char *content = NULL;
    cf_tool_call *calls = NULL;
    if (cf_tool_parser_feed(&p, m->content, strlen(m->content)) < 0 ||
        cf_tool_parser_finish(&p, &content, &calls, n, NULL))
        *n = 0;
    free(content);
    cf_tool_parser_free(&p);
    return calls;
}

int chat_tools_follow(chat *c)
{
    if (!c->tools)
        return 0;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int n;
        cf_tool_call *calls = reply_calls(c, &n);
        if (!n)
            return 0;
        cf_err err = {0};
        int rc = 0;
        for (int k = 0; k < n && !rc; k++) {
            char id[32], *result = carry_out(c, &calls[k]);
            snprintf(id, sizeof id, "call_%d", ++c->tools->next_id);
            cf_message m = {.role = CF_ROLE_TOOL, .content = result ? result : "",
                            .tool_call_id = calls[k].id ? calls[k].id : id};
            rc = cf_session_add_message(c->s, &m, &err);
            free(result);
        }
        cf_tool_calls_free(calls, n);
        if (rc || cf_session_continue(c->s, &err)) {
            chat_turn_failed(c, &err);
            return -1;
        }
        if ((rc = c->view->reply(c)) != 0)
            return rc;
    }
    chat_say(c, OUT_DIM, "[%d rounds of tool calls: the rest is left to you]", MAX_ROUNDS);
    return 0;
}
