/* Tools through the chat templates that read them: a conversation with
 * a call, its result, an answer and a new question, rendered with a tools
 * list, against jinja2's renderings (tools-expected.json, made by
 * render_tools.py): by the template alone, and by a session (its
 * placeholders, the calls' arguments given as text and shown to the
 * template as objects, the tool role and its call id), whose prompt text
 * must be the same bytes.  Then a reply after a tool's result
 * (cf_session_continue) and a message added alone.  Skipped without
 * ../shared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/grammar.h"
#include "confab/session.h"
#include "confab/template.h"
#include "confab/tools.h"
#include "harness.h"
#include "json_file.h"
#include "template/tt_util.h"
#include "session_internal.h"

static char *dump(const cf_json *v)
{
    return cf_json_dump(v, &(cf_json_dump_opts){.indent = -1}, NULL);
}

/* The reference's messages as a session's: the calls' arguments as text,
 * as a client sends them. */
static int session_messages(const cf_json *msgs, cf_message *out, char **owned)
{
    int n = 0;
    for (size_t i = 0; i < msgs->n; i++) {
        const cf_json *m = msgs->items[i], *calls = cf_json_get(m, "tool_calls");
        const char *role = cf_json_get(m, "role")->str;
        cf_message *o = &out[n++];
        *o = (cf_message){.role = !strcmp(role, "system") ? CF_ROLE_SYSTEM
                                  : !strcmp(role, "user") ? CF_ROLE_USER
                                  : !strcmp(role, "assistant") ? CF_ROLE_ASSISTANT : CF_ROLE_TOOL,
                          .content = cf_json_get(m, "content")->str};
        if (calls) {
            cf_json *c = cf_json_copy(calls);
            for (size_t k = 0; k < c->n; k++) {
                cf_json *fn = (cf_json *)cf_json_get(c->items[k], "function");
                char *args = dump(cf_json_get(fn, "arguments"));
                cf_json_set(fn, "arguments", 9, cf_json_string(args, strlen(args)));
                free(args);
            }
            o->tool_calls = owned[i] = dump(c);
            cf_json_free(c);
        }
        const cf_json *id = cf_json_get(m, "tool_call_id");
        if (id)
            o->tool_call_id = id->str;
    }
    return n;
}

static void test_rendering(const cf_json *ref, const cf_json *r)
{
    const char *name = cf_json_get(r, "template")->str;
    const cf_json *want = cf_json_get(r, "output");
    char rel[256];
    snprintf(rel, sizeof rel, "templates/%s", name);
    char *src = tt_read(shared_path(rel), NULL);
    CHECKF(src, "cannot read %s", rel);
    if (!src)
        return;
    char *tools = dump(cf_json_get(ref, "tools")), *msgs = dump(cf_json_get(ref, "messages"));
    cf_chat_template *t;
    cf_err err;
    CHECKF(cf_chat_template_from_jinja(src, strlen(src), "test", &t, &err) == 0, "%s: %s", name,
           err.msg);
    cf_chat_opts o = {.bos_token = "<s>", .eos_token = "</s>", .add_generation_prompt = true,
                      .tools_json = tools, .now = TT_NOW};
    char *out = NULL;
    int rc = cf_chat_render_json(t, msgs, strlen(msgs), &o, &out, NULL, &err);
    if (want)
        CHECKF(rc == 0 && !strcmp(out, want->str), "%s: the template renders\n%s\nnot\n%s", name,
               rc ? err.msg : out, want->str);
    else
        CHECKF(rc < 0, "%s renders, jinja2 refuses it", name);
    free(out);
    cf_chat_template_free(t);

    /* the same through a session on the tiny model */
    char path[512];
    snprintf(path, sizeof path, "%s", shared_path(rel));
    cf_session_params p = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                           .n_ctx = 2048, .n_threads = 1, .chat_template_file = path};
    cf_session *s;
    if (!want || cf_session_new(&p, &s, &err)) {
        free(src);
        free(tools);
        free(msgs);
        return;
    }
    s->now = TT_NOW; /* the references' clock */
    const cf_json *jm = cf_json_get(ref, "messages");
    cf_message m[16];
    char *owned[16] = {0};
    int n = session_messages(jm, m, owned);
    char *text = NULL;
    int n_tok, n_cached;
    CHECKF(cf_session_set_tools(s, tools, &err) == 0 && cf_session_set_messages(s, m, n - 1, &err) == 0 &&
               cf_session_prompt_text(s, m[n - 1].content, &text, &n_tok, &n_cached, &err) == 0,
           "%s: %s", name, err.msg);
    CHECKF(text && !strcmp(text, want->str), "%s: the session renders\n%s\nnot\n%s", name,
           text ? text : err.msg, want->str);
    free(text);
    CHECKF(cf_session_tool_format(s) != CF_TOOLS_NONE, "%s: no tool format", name);
    for (int i = 0; i < n; i++)
        free(owned[i]);
    cf_session_free(s);
    free(src);
    free(tools);
    free(msgs);
}

/* A reply after a tool's result, and a message added alone. */
static void test_continue(void)
{
    cf_session_params p = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                           .n_ctx = 2048, .n_threads = 1,
                           .chat_template_file = shared_path("templates/2026/Qwen-Qwen3-0.6B.jinja")};
    cf_session *s;
    cf_err err;
    CHECKF(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    cf_session_set(s, "n-predict", "3", NULL);
    CHECK(cf_session_continue(s, &err) < 0 && strstr(err.msg, "nothing to reply to"));
    const char *piece;
    CHECK(cf_session_begin_reply(s, "Weather?", &err) == 0);
    while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN) {
    }
    cf_session_end_reply(s, false);
    cf_message tool = {.role = CF_ROLE_TOOL, .content = "22 C", .tool_call_id = "c1"};
    CHECK(cf_session_add_message(s, &tool, &err) == 0 && cf_session_n_messages(s) == 3);
    cf_message sys = {.role = CF_ROLE_SYSTEM, .content = "late"};
    CHECK(cf_session_add_message(s, &sys, &err) < 0 && strstr(err.msg, "only come first"));
    CHECKF(cf_session_continue(s, &err) == 0, "%s", err.msg);
    int got = 0;
    while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN)
        got++;
    cf_session_end_reply(s, false);
    const cf_message *last = cf_session_message(s, 3), *t = cf_session_message(s, 2);
    CHECK(cf_session_n_messages(s) == 4 && last->role == CF_ROLE_ASSISTANT && got == 3 &&
          t->role == CF_ROLE_TOOL && !strcmp(t->tool_call_id, "c1"));
    /* a session file keeps the tool's result and its call id */
    char path[] = "/tmp/confab-tools-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECKF(cf_session_save(s, path, &err) == 0 && cf_session_load(s, path, &err) == 0, "%s", err.msg);
    unlink(path);
    t = cf_session_message(s, 2);
    CHECK(cf_session_n_messages(s) == 4 && t->role == CF_ROLE_TOOL && !strcmp(t->tool_call_id, "c1") &&
          !strcmp(t->content, "22 C"));
    /* the prompt shows the result as the template wraps it */
    char *text;
    int n_tok, n_cached;
    CHECK(cf_session_prompt_text(s, "ok", &text, &n_tok, &n_cached, &err) == 0 &&
          strstr(text, "<tool_response>\n22 C\n</tool_response>") && n_cached > 0);
    free(text);
    cf_session_free(s);
}

static bool kept(const cf_session *s, const char *key)
{
    for (size_t i = 0; i < sizeof s->grammars / sizeof s->grammars[0]; i++)
        if (s->grammars[i].key && !strcmp(s->grammars[i].key, key))
            return true;
    return false;
}

/* A keyed grammar is kept with its masks: the same key again takes it, and
 * the fifth key lets the least recently used go. */
static void test_kept_grammars(void)
{
    cf_session_params p = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                           .n_ctx = 256, .n_threads = 1};
    cf_session *s;
    cf_err err;
    CHECKF(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    cf_grammar *g;
    CHECK(cf_grammar_json(&g, &err) == 0 && cf_session_set_grammar(s, "json", "k0", g, &err) == 0);
    const cf_constraint *first = s->format_c;
    CHECK(cf_session_set_grammar(s, NULL, NULL, NULL, &err) == 0 && !s->format_c);
    CHECK(cf_grammar_json(&g, &err) == 0 && cf_session_set_grammar(s, "json", "k0", g, &err) == 0 &&
          s->format_c == first);
    for (int i = 1; i <= 4; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        CHECK(cf_grammar_json(&g, &err) == 0 && cf_session_set_grammar(s, "json", key, g, &err) == 0);
    }
    CHECK(!kept(s, "k0") && kept(s, "k1") && kept(s, "k4"));
    cf_session_free(s);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    cf_json *ref = json_load_file(TOOLS_EXPECTED);
    CHECK(ref != NULL);
    const cf_json *list = ref ? cf_json_get(ref, "renderings") : NULL;
    for (size_t i = 0; list && i < list->n; i++)
        test_rendering(ref, list->items[i]);
    cf_json_free(ref);
    test_continue();
    test_kept_grammars();
    return test_summary("session-tools");
}
