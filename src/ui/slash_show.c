/* /show: settings, model, template, context, stats, thinking, prompt,
 * probs (probs.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "confab/openai.h"
#include "probs.h"

const char *const show_topics[] = {"settings", "model",  "template", "context", "stats",
                                   "thinking", "prompt", "probs",    "system",  NULL};

/* The system prompt the conversation starts with, or NULL. */
static const char *system_prompt(chat *c)
{
    if (cf_session_n_messages(c->s) > 0 && cf_session_message(c->s, 0)->role == CF_ROLE_SYSTEM)
        return cf_session_message(c->s, 0)->content;
    return NULL;
}

static void show_system(chat *c)
{
    const char *sys = system_prompt(c);
    chat_say(c, sys ? OUT_INFO : OUT_DIM, "%s", sys ? sys : "(no system prompt)");
}

static void show_settings(chat *c)
{
    char out[2560], buf[64];
    size_t used = 0;
    /* a server gets only the settings given a value */
    bool remote = cf_session_remote(c->s) != NULL;
    for (const char *const *n = cf_session_setting_names(); *n && used < sizeof out; n++) {
        bool unsent = remote && cf_oai_field_of(*n) && cf_session_setting_is_default(c->s, *n);
        used += (size_t)snprintf(out + used, sizeof out - used, "%-18s %s%s\n", *n,
                                 cf_session_get(c->s, *n, buf, sizeof buf),
                                 unsent ? " (not sent: the server's default)" : "");
    }
    const char *sys = system_prompt(c);
    if (used < sizeof out)
        used += (size_t)snprintf(out + used, sizeof out - used, "%-18s %s\n%-18s %s\n",
                                 "show-thinking", c->show_thinking ? "on" : "off", "markdown",
                                 c->markdown ? "on" : "off");
    if (used < sizeof out) {
        size_t len = sys ? strcspn(sys, "\n") : 0;
        bool more = sys && (len > 60 || sys[len]);
        snprintf(out + used, sizeof out - used, "%-18s %s%.*s%s%s", "system", sys ? "\"" : "(none)",
                 (int)(len > 60 ? 60 : len), sys ? sys : "", more ? "..." : "", sys ? "\"" : "");
    }
    chat_say(c, OUT_INFO, "%s", out);
}

/* A server's model: where it is, and what else it has. */
static void show_remote_model(chat *c, const cf_remote_info *ri)
{
    char **ids = NULL, list[1024] = "";
    cf_err err = {0};
    if (cf_session_models(c->s, &ids, &err) < 0) {
        snprintf(list, sizeof list, "(cannot list them: %s)", err.msg);
    } else {
        for (size_t i = 0; ids[i] && strlen(list) < sizeof list - 80; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     ids[i]);
        if (!ids[0])
            snprintf(list, sizeof list, "(none listed)");
    }
    cf_oai_models_free(ids);
    chat_say(c, OUT_INFO,
             "model      %s (remote)\n"
             "server     %s\n"
             "its models %s",
             ri->model, ri->endpoint, list);
}

static void show_model(chat *c)
{
    const cf_remote_info *ri = cf_session_remote(c->s);
    if (ri) {
        show_remote_model(c, ri);
        return;
    }
    const cf_model *m = cf_session_model(c->s);
    const cf_hparams *h = cf_model_hparams(m);
    cf_context_info ci;
    cf_session_context_info(c->s, &ci);
    chat_say(c, OUT_INFO,
             "name       %s\n"
             "file       %s\n"
             "arch       %s, %.1fM parameters\n"
             "shape      %d layers, %d embd, %d heads (%d KV), %d ff\n"
             "vocab      %d tokens\n"
             "context    %d (trained on %d)",
             cf_model_name(m), c->model_path, cf_arch_name(h->arch),
             (double)cf_model_n_params(m) / 1e6, h->n_layer, h->n_embd, h->n_head, h->n_head_kv,
             h->n_ff, h->n_vocab, ci.total, h->n_ctx_train);
}

static void show_context(chat *c)
{
    cf_context_info ci;
    cf_session_context_info(c->s, &ci);
    if (cf_session_remote(c->s)) {
        int n = cf_session_n_messages(c->s);
        chat_say(c, OUT_INFO, "context: the server's; %d message%s, sent whole with each request",
                 n, n == 1 ? "" : "s");
        if (ci.used > 0)
            chat_say(c, OUT_INFO, "the last reply used %d tokens (prompt and reply, as the "
                                  "server counted them)", ci.used);
        return;
    }
    int pct = ci.total ? (int)(100.0 * ci.used / ci.total + 0.5) : 0;
    int n = cf_session_n_messages(c->s);
    chat_say(c, OUT_INFO, "context: %d / %d tokens used (%d%%), %d message%s", ci.used, ci.total,
             pct, n, n == 1 ? "" : "s");
    if (ci.shift_would_drop_turns == 1)
        chat_say(c, OUT_INFO,
                 "when it is full, a shift drops the oldest turn (%d tokens); the system "
                 "prompt stays",
                 ci.shift_would_drop);
    else if (ci.shift_would_drop_turns > 1)
        chat_say(c, OUT_INFO,
                 "when it is full, a shift drops the %d oldest turns (%d tokens); the "
                 "system prompt stays",
                 ci.shift_would_drop_turns, ci.shift_would_drop);
    else
        chat_say(c, OUT_INFO, "when it is full, there is no old turn a shift could drop");
}

static void show_remote_stats(chat *c, const cf_turn_stats *st)
{
    if (!st->remote) {
        chat_say(c, OUT_INFO, "no reply yet");
        return;
    }
    char counts[160] = "tokens       not reported by the server";
    if (st->usage)
        snprintf(counts, sizeof counts,
                 "prompt       %d tokens (%d cached)\n"
                 "reply        %d tokens",
                 st->prompt_tokens, st->cached_tokens, st->gen_tokens);
    chat_say(c, OUT_INFO,
             "%s\n"
             "first token  %.1f ms\n"
             "prompt time  %.1f ms%s\n"
             "reply time   %.1f ms%s",
             counts, st->ttft_ms, st->prompt_ms,
             st->timings ? " (the server's)" : " (here: the wait for the first piece)", st->gen_ms,
             st->timings ? " (the server's)" : " (here: the stream)");
}

static void show_stats(chat *c)
{
    const cf_turn_stats *st = cf_session_last_stats(c->s);
    if (cf_session_remote(c->s)) {
        show_remote_stats(c, st);
        return;
    }
    if (!st || (st->prompt_tokens == 0 && st->gen_tokens == 0)) {
        chat_say(c, OUT_INFO, "no reply yet");
        return;
    }
    double pps = st->prompt_ms > 0 ? st->prompt_tokens * 1000.0 / st->prompt_ms : 0;
    double gps = st->gen_ms > 0 ? st->gen_tokens * 1000.0 / st->gen_ms : 0;
    char threads[96] = "";
    if (st->threads && st->fewest_threads < st->threads)
        snprintf(threads, sizeof threads, "\nthreads      %d (%d at times: other programs kept the cores busy)",
                 st->threads, st->fewest_threads);
    else if (st->threads)
        snprintf(threads, sizeof threads, "\nthreads      %d", st->threads);
    char spec[160] = "";
    if (st->spec_passes)
        snprintf(spec, sizeof spec, "\nspeculative  %d guesses, %d kept (%.0f %%), %.2f tokens a pass of the model",
                 st->drafted, st->accepted, st->drafted ? 100.0 * st->accepted / st->drafted : 0.0,
                 (double)st->gen_tokens / st->spec_passes);
    chat_say(c, OUT_INFO,
             "prompt       %d tokens in %.1f ms (%.1f t/s)\n"
             "reply        %d tokens in %.1f ms (%.1f t/s)\n"
             "  thinking   %d tokens in %.1f ms\n"
             "  answer     %d tokens in %.1f ms\n"
             "first token  %.1f ms\n"
             "shifted out  %d tokens%s%s",
             st->prompt_tokens, st->prompt_ms, pps, st->gen_tokens, st->gen_ms, gps,
             st->reasoning_tokens, st->reasoning_ms, st->gen_tokens - st->reasoning_tokens,
             st->gen_ms - st->reasoning_ms, st->ttft_ms, st->shifted_tokens, threads, spec);
}

static void show_prompt(chat *c, const char *message);

/* /show template [--rendered]: the template's text (as ollama shows it),
 * or what it renders for the next turn. */
static void show_template(chat *c, const char *arg)
{
    if (*arg && strcmp(arg, "--rendered")) {
        chat_say(c, OUT_ERROR, "/show template takes only --rendered (the prompt it renders now)");
        return;
    }
    if (*arg) {
        show_prompt(c, "");
        return;
    }
    if (cf_session_remote(c->s)) {
        chat_say(c, OUT_INFO, "template: the server's (it renders the prompt); thinking comes as "
                              "its reasoning_content, or a <think> block in the reply");
        return;
    }
    const cf_chat_reasoning *r = cf_session_reasoning(c->s);
    char how[160] = "replies are not split (no thinking markers known)";
    if (r->family)
        snprintf(how, sizeof how, "thinking: %s markers%s%s", r->family,
                 r->thinking_switch ? "; reads enable_thinking" : "",
                 r->effort ? "; reads reasoning_effort" : "");
    const char *src = cf_session_template_source(c->s);
    chat_say(c, OUT_INFO, "template: %s\n%s", cf_session_template_desc(c->s), how);
    size_t len = src ? strlen(src) : 0;
    while (len && src[len - 1] == '\n')
        len--;
    if (src)
        chat_say(c, OUT_INFO, "%.*s", (int)len, src);
    chat_say(c, OUT_DIM, src ? "(/show template --rendered: what it renders for the next turn)"
                             : "(a built-in, in confab's code; /show template --rendered: what it "
                               "renders for the next turn)");
}

int chat_pick_reply(chat *c, const char *arg, const char *what, int *number)
{
    int n = cf_session_n_messages(c->s), replies = 0, want;
    for (int i = 0; i < n; i++)
        replies += cf_session_message(c->s, i)->role == CF_ROLE_ASSISTANT;
    if (*arg) {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 1 || v > replies) {
            if (replies)
                chat_say(c, OUT_ERROR, "%s: no reply '%s' (replies 1 to %d)", what, arg, replies);
            else
                chat_say(c, OUT_ERROR, "%s: there is no reply yet", what);
            return -1;
        }
        want = (int)v;
    } else if (!(want = replies)) {
        chat_say(c, OUT_INFO, "no reply yet");
        return -1;
    }
    *number = want;
    for (int i = 0, k = 0; i < n; i++)
        if (cf_session_message(c->s, i)->role == CF_ROLE_ASSISTANT && ++k == want)
            return i;
    return -1;
}

/* /show thinking [N] */
static void show_thinking(chat *c, const char *arg)
{
    int want, i = chat_pick_reply(c, arg, "/show thinking", &want);
    if (i < 0)
        return;
    const cf_message *m = cf_session_message(c->s, i);
    if (!m->reasoning)
        chat_say(c, OUT_INFO, "reply %d has no thinking%s", want,
                 m->thinking_cut ? " (it was cut off as it began)" : "");
    else
        chat_say(c, OUT_INFO, "thinking of reply %d%s:\n%s", want,
                 m->thinking_cut ? " (cut off)" : "", m->reasoning);
}

/* /show prompt [MESSAGE] */
static void show_prompt(chat *c, const char *message)
{
    char *text;
    int n_tokens, n_cached;
    cf_err err = {0};
    if (cf_session_prompt_text(c->s, message, &text, &n_tokens, &n_cached, &err) < 0) {
        chat_say(c, OUT_ERROR, "%s", err.msg);
        return;
    }
    chat_say(c, OUT_INFO, "%s", text);
    if (cf_session_remote(c->s))
        chat_say(c, OUT_DIM, "(the request's body: the server renders the prompt)");
    else
        chat_say(c, OUT_DIM, "(%d tokens: %d in the cache, %d to evaluate)", n_tokens, n_cached,
                 n_tokens - n_cached);
    free(text);
}

void slash_show(chat *c, const char *args)
{
    char topic[32];
    const char *rest = args;
    slash_word(&rest, topic, sizeof topic);
    /* ollama's names for two of them */
    if (!strcmp(topic, "parameters"))
        snprintf(topic, sizeof topic, "settings");
    else if (!strcmp(topic, "info"))
        snprintf(topic, sizeof topic, "model");
    /* only thinking, probs, prompt and template take more */
    bool more = strcmp(topic, "thinking") && strcmp(topic, "prompt") && strcmp(topic, "probs") &&
                strcmp(topic, "template") && *rest;
    if (more)
        chat_say(c, OUT_ERROR, "/show %s takes nothing more", topic);
    else if (!strcmp(topic, "settings"))
        show_settings(c);
    else if (!strcmp(topic, "model"))
        show_model(c);
    else if (!strcmp(topic, "template"))
        show_template(c, rest);
    else if (!strcmp(topic, "context"))
        show_context(c);
    else if (!strcmp(topic, "stats"))
        show_stats(c);
    else if (!strcmp(topic, "thinking"))
        show_thinking(c, rest);
    else if (!strcmp(topic, "prompt"))
        show_prompt(c, rest);
    else if (!strcmp(topic, "probs"))
        show_probs(c, rest);
    else if (!strcmp(topic, "system"))
        show_system(c);
    else
        chat_say(c, OUT_ERROR,
                 "%s%s%s (try /show settings|model|template|context|stats|thinking|prompt|probs|system)",
                 *topic ? "nothing to show called '" : "/show what?", topic, *topic ? "'" : "");
}
