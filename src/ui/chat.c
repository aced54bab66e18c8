/* Sending messages, streaming replies, saving: what every mode shares. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chat.h"
#include "cli.h"
#include "paths.h"
#include "term.h"
#include "text.h"

static void input(chat *c, const char *text);
static int save(chat *c, const char *path, bool quiet);

static void note_error(chat *c, int code)
{
    if (!c->first_error)
        c->first_error = code;
}

void chat_say(chat *c, out_kind kind, const char *fmt, ...)
{
    char buf[4096], *big = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* a prompt or a reply's thinking can be long */
    if (n >= (int)sizeof buf && (big = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    /* Failures that named their class already noted it. */
    if (kind == OUT_ERROR)
        note_error(c, c->in_command ? CF_EXIT_USAGE : CF_EXIT_ERROR);
    c->view->say(c, kind, big ? big : buf);
    free(big);
}


char *chat_clean_input(chat *c, const char *text, size_t len)
{
    int bad;
    char *clean = utf8_sanitize(text, len, &bad);
    if (!clean)
        chat_say(c, OUT_ERROR, "out of memory");
    else if (bad)
        chat_say(c, OUT_DIM, "note: %d invalid UTF-8 sequence%s replaced by U+FFFD", bad,
                 bad > 1 ? "s" : "");
    return clean;
}

/* A chat started with --session keeps its file up to date after each
 * input (crash-safe, as /save is), so a crash loses at most the reply in
 * progress. */
static void keep_saved(chat *c)
{
    if (c->opts->session && c->session_path && cf_session_dirty(c->s))
        save(c, NULL, true);
}

void chat_input(chat *c, const char *text)
{
    if (text[strspn(text, " \t\n")] == 0)
        return;
    input(c, text);
    keep_saved(c);
}

static void input(chat *c, const char *text)
{
    int edit = c->edit_next - 1;
    c->edit_next = 0;
    if (text[0] == '/' && text[1] != '/') {
        if (edit >= 0)
            chat_say(c, OUT_DIM, "(the edit was dropped)");
        slash_run(c, text);
    } else if (edit >= 0) {
        chat_edit_send(c, edit, text[0] == '/' ? text + 1 : text);
    } else {
        chat_send(c, text[0] == '/' ? text + 1 : text);
    }
}

bool chat_interrupted(void *ud)
{
    chat *c = ud;
    return c->view->interrupted ? c->view->interrupted(c) : sig_interrupt || sig_quit;
}

void chat_turn_failed(chat *c, const cf_err *err)
{
    if (err->code == CF_E_CANCELLED) {
        note_error(c, CF_EXIT_INTERRUPT);
        chat_say(c, OUT_DIM, "[stopped while the prompt was evaluated: the conversation is as "
                             "it was]");
        return;
    }
    note_error(c, cli_exit_for(err));
    chat_say(c, OUT_ERROR, "%s", err->msg);
}

int chat_send(chat *c, const char *text)
{
    cf_err err = {0};
    if (chat_tools_before(c, &err) < 0 || cf_session_begin_reply(c->s, text, &err) < 0) {
        chat_tools_after(c);
        chat_turn_failed(c, &err);
        return -1;
    }
    int rc = c->view->reply(c);
    chat_tools_after(c);
    return rc == 0 ? chat_tools_follow(c) : rc;
}

const char *chat_model_name(const chat *c)
{
    const cf_remote_info *ri = cf_session_remote(c->s);
    return ri ? ri->model : cf_model_name(cf_session_model(c->s));
}

int chat_stream(chat *c, const stream_hooks *h)
{
    cf_err err = {0};
    int n_before = cf_session_n_messages(c->s), branches_before = cf_session_n_branches(c->s);
    cf_reply_part part;
    int rc;
    bool cut = false;
    while ((rc = cf_session_next_part(c->s, &part, &err)) == CF_NEXT_TOKEN) {
        h->part(h->ud, &part);
        if (h->stop(h->ud)) {
            cut = true;
            break;
        }
    }
    cf_session_end_reply(c->s, cut);
    /* a remote reply that failed before it began takes its turn back: the
     * message, or the branch /regen or /edit began for it */
    if (rc < 0 && c->view->changed) {
        if (cf_session_n_branches(c->s) < branches_before)
            c->view->changed(c, CHANGE_SWITCHED);
        else if (cf_session_n_messages(c->s) < n_before)
            c->view->changed(c, CHANGE_UNDONE);
    }
    if (rc < 0) {
        note_error(c, cli_exit_for(&err));
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return -1;
    }
    return cut ? 1 : 0;
}

void chat_reply_notes(chat *c)
{
    const cf_turn_stats *st = cf_session_last_stats(c->s);
    if (st && st->shifted_tokens > 0)
        chat_say(c, OUT_DIM, "context full: the oldest %d tokens were dropped%s", st->shifted_tokens,
                 cf_model_recurrent(cf_session_model(c->s))
                     ? " (the rest was evaluated again: a recurrent state cannot be moved)"
                     : "");
    if (st && st->stop == CF_STOP_CONTEXT_FULL)
        chat_say(c, OUT_DIM, "context full: the reply alone fills it, so it stopped here "
                             "(/undo or /clear make room; -c sets a larger context)");
}

static double per_second(int n, double ms)
{
    return ms > 0 ? n * 1000.0 / ms : 0;
}

/* The fields of a statistics line, each with its rank (0 the most
 * important), joined by " · " leaving out the least important ones until
 * the line fits `width` columns (0: all of them). */
enum { STATS_FIELDS = 5 };
typedef struct stats_field {
    char text[96];
    int rank;
} stats_field;

static void join_fields(const stats_field *f, int k, int width, char *buf, size_t n)
{
    int keep = 0;
    for (int i = 0; i < k; i++)
        keep = f[i].rank >= keep ? f[i].rank + 1 : keep;
    for (;;) {
        size_t used = 0;
        buf[0] = 0;
        for (int i = 0; i < k; i++)
            if (f[i].rank < keep && used < n)
                used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " · " : "",
                                         f[i].text);
        if (width < 1 || keep == 1 || utf8_width(buf, strlen(buf)) <= width)
            return;
        keep--;
    }
}

/* A remote reply's line: the server's counts and timings when it gives
 * them; speeds measured here include the network.  What stays when the
 * line must be short: that it is remote, the reply, the prompt, the
 * first token's wait, whose speeds they are. */
static void remote_stats_line(const cf_turn_stats *st, int width, char *buf, size_t n)
{
    stats_field f[STATS_FIELDS] = {{"remote", 0}};
    int k = 1;
    char cached[32] = "", speed[32] = "";
    if (st->cached_tokens > 0)
        snprintf(cached, sizeof cached, " (%d cached)", st->cached_tokens);
    if (st->usage && st->timings)
        snprintf(speed, sizeof speed, ", %.1f t/s",
                 per_second(st->prompt_tokens - st->cached_tokens, st->prompt_ms));
    f[k].rank = 2;
    if (st->usage)
        snprintf(f[k++].text, sizeof f->text, "prompt %d tok%s%s", st->prompt_tokens, cached, speed);
    else
        snprintf(f[k++].text, sizeof f->text, "no token counts from the server");
    if (st->usage) {
        f[k].rank = 1;
        snprintf(f[k++].text, sizeof f->text, "reply %d tok, %.1f t/s", st->gen_tokens,
                 per_second(st->gen_tokens, st->gen_ms));
    }
    f[k].rank = 3;
    snprintf(f[k++].text, sizeof f->text, "first token %.0f ms", st->ttft_ms);
    if (st->timings)
        f[k++] = (stats_field){"speeds: the server's", 4};
    join_fields(f, k, width, buf, n);
}

/* Kept when the line must be short, in this order: the reply's tokens and
 * speed, the context used, the prompt's, the wait for the first token. */
void chat_stats_line(const cf_turn_stats *st, const cf_context_info *ci, int width, char *buf,
                     size_t n)
{
    if (st->remote) {
        remote_stats_line(st, width, buf, n);
        return;
    }
    char thinking[48] = "";
    if (st->reasoning_tokens > 0)
        snprintf(thinking, sizeof thinking, " (%d thinking)", st->reasoning_tokens);
    stats_field f[4] = {{"", 2}, {"", 0}, {"", 3}, {"", 1}};
    snprintf(f[0].text, sizeof f->text, "prompt %d tok, %.1f t/s", st->prompt_tokens,
             per_second(st->prompt_tokens, st->prompt_ms));
    snprintf(f[1].text, sizeof f->text, "reply %d tok%s, %.1f t/s", st->gen_tokens, thinking,
             per_second(st->gen_tokens, st->gen_ms));
    snprintf(f[2].text, sizeof f->text, "first token %.0f ms", st->ttft_ms);
    snprintf(f[3].text, sizeof f->text, "context %d/%d", ci->used, ci->total);
    join_fields(f, 4, width, buf, n);
}

void chat_limit_note(chat *c, const cf_message *m, bool live, char *buf, size_t n)
{
    char limit[32] = "", np[32];
    buf[0] = 0;
    if (!m || m->role != CF_ROLE_ASSISTANT || !m->length_cut)
        return;
    if (live)
        snprintf(limit, sizeof limit, " -n %s", cf_session_get(c->s, "n-predict", np, sizeof np));
    snprintf(buf, n, "[stopped at%s: /set n-predict N for longer]",
             *limit ? limit : " the token limit");
}

void chat_thinking_summary(chat *c, char *buf, size_t n)
{
    const cf_turn_stats *st = cf_session_last_stats(c->s);
    int last = cf_session_n_messages(c->s) - 1;
    const cf_message *m = last >= 0 ? cf_session_message(c->s, last) : NULL;
    buf[0] = 0;
    if (st->reasoning_tokens <= 0 || !m || m->role != CF_ROLE_ASSISTANT)
        return;
    snprintf(buf, n, "thought for %d token%s, %.1f s%s", st->reasoning_tokens,
             st->reasoning_tokens == 1 ? "" : "s", st->reasoning_ms / 1000,
             m->thinking_cut ? ", cut off" : "");
}

/* ~/x -> $HOME/x */
static const char *expand_home(const char *path, char *buf, size_t n)
{
    const char *home = getenv("HOME");
    if (path[0] == '~' && path[1] == '/' && home) {
        snprintf(buf, n, "%s%s", home, path + 1);
        return buf;
    }
    return path;
}

static int set_session_path(chat *c, const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    free(c->session_path);
    c->session_path = p;
    return 0;
}

int chat_save(chat *c, const char *path)
{
    return save(c, path, false);
}

/* quiet: no "saved to" line (errors are said) */
static int save(chat *c, const char *path, bool quiet)
{
    char buf[4096];
    cf_err err = {0};
    if (path && *path) {
        path = expand_home(path, buf, sizeof buf);
    } else if (c->session_path) {
        path = c->session_path;
    } else {
        char name[64];
        time_t now = time(NULL);
        strftime(name, sizeof name, "sessions/%Y%m%d-%H%M%S.session", localtime(&now));
        if (!(path = xdg_path(XDG_DATA, name, buf, sizeof buf)) || make_parent_dirs(path) < 0) {
            note_error(c, CF_EXIT_SESSION);
            chat_say(c, OUT_ERROR, "cannot create the sessions folder for %s", buf);
            return -1;
        }
    }
    if (cf_session_save(c->s, path, &err) < 0) {
        note_error(c, CF_EXIT_SESSION);
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return -1;
    }
    if (path != c->session_path)
        set_session_path(c, path);
    if (!quiet)
        chat_say(c, OUT_INFO, "saved to %s", c->session_path ? c->session_path : path);
    return 0;
}

int chat_load(chat *c, const char *path)
{
    char buf[4096], alt[4200];
    cf_err err = {0};
    path = expand_home(path, buf, sizeof buf);
    if (access(path, F_OK) < 0 && !strchr(path, '/')) {
        char rel[4200];
        snprintf(rel, sizeof rel, "sessions/%s", path);
        if (xdg_path(XDG_DATA, rel, alt, sizeof alt) && access(alt, F_OK) == 0)
            path = alt;
    }
    if (cf_session_load(c->s, path, &err) < 0) {
        note_error(c, CF_EXIT_SESSION);
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return -1;
    }
    set_session_path(c, path);
    if (c->view->changed)
        c->view->changed(c, CHANGE_LOADED);
    int n = cf_session_n_messages(c->s);
    chat_say(c, OUT_INFO, "loaded %s: %d message%s", path, n, n == 1 ? "" : "s");
    return 0;
}

int chat_autosave(chat *c, bool hint)
{
    if (!cf_session_dirty(c->s))
        return 0;
    if (c->opts->autosave || c->opts->session)
        return chat_save(c, NULL);
    bool talked = false;
    for (int i = 0; i < cf_session_n_messages(c->s) && !talked; i++)
        talked = cf_session_message(c->s, i)->role != CF_ROLE_SYSTEM;
    if (hint && talked && c->session_path)
        chat_say(c, OUT_DIM, "the changes since the last /save are not in %s (/save before leaving "
                 "keeps them)", c->session_path);
    else if (hint && talked)
        chat_say(c, OUT_DIM, "this conversation was not saved (/save FILE before leaving keeps it; "
                 "--session FILE saves as you go)");
    return 0;
}

double chat_setting(const chat *c, const char *name)
{
    char buf[64];
    const char *v = cf_session_get(c->s, name, buf, sizeof buf);
    return v ? strtod(v, NULL) : 0;
}

void chat_untrained_note(chat *c)
{
    const char *why = cf_session_untrained(c->s);
    char n[32], cap[128] = "";
    if (!why)
        return;
    if (atoi(cf_session_get(c->s, "n-predict", n, sizeof n)) >= 0)
        snprintf(cap, sizeof cap,
                 "\nReplies stop after %s tokens (-n N or /set n-predict N to change).", n);
    chat_say(c, OUT_DIM,
             "This model does not look chat-trained: %s.%s\n"
             "For a chat model, 'confab models' lists those you have; or 'ollama pull qwen3:0.6b'\n"
             "and 'confab -m qwen3:0.6b'; or any GGUF chat model from Hugging Face, e.g.\n"
             "Qwen/Qwen3-0.6B-GGUF or bartowski/SmolLM2-135M-Instruct-GGUF.",
             why, cap);
}

int chat_toggle_greedy(chat *c)
{
    cf_err err = {0};
    double t = chat_setting(c, "temp");
    char v[32];
    if (t > 0) {
        c->temp_before_greedy = t;
        snprintf(v, sizeof v, "0");
    } else {
        snprintf(v, sizeof v, "%g", c->temp_before_greedy > 0 ? c->temp_before_greedy : 0.8);
    }
    if (cf_session_set(c->s, "temp", v, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return -1;
    }
    return 0;
}
