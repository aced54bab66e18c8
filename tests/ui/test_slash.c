/* The slash commands and the chat core over a real session (the tiny
 * stories model): every command, every error path, completion. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat.h"
#include "cli.h"
#include "complete.h"
#include "harness.h"

/* Everything the chat says, and how many errors. */
static char said[65536];
static int n_errors, n_replies;

static void say(chat *c, out_kind kind, const char *text)
{
    (void)c;
    if (kind == OUT_ERROR)
        n_errors++;
    size_t used = strlen(said);
    snprintf(said + used, sizeof said - used, "%s%s\n", kind == OUT_ERROR ? "error: " : "", text);
}

static void piece(void *ud, const cf_reply_part *part)
{
    (void)ud;
    (void)part;
}

static bool never(void *ud)
{
    (void)ud;
    return false;
}

static int reply(chat *c)
{
    stream_hooks h = {piece, never, NULL};
    n_replies++;
    return chat_stream(c, &h);
}

static const chat_view view = {say, reply, NULL, NULL, NULL, NULL, NULL, NULL};

/* Run one input; return what it said. */
static const char *run(chat *c, const char *line)
{
    said[0] = 0;
    chat_input(c, line);
    return said;
}

static int messages(chat *c)
{
    return cf_session_n_messages(c->s);
}

static void test_settings(chat *c)
{
    CHECKF(strstr(run(c, "/set temp 0.3"), "temp = 0.3"), "%s", said);
    CHECKF(strstr(run(c, "/show settings"), "temp               0.3"), "%s", said);
    int e = n_errors;
    static const char *const bad[] = {
        "/set temp hot", "/set temp -1", "/set top-k 2.5", "/set warmth 1", "/set temp",
        "/set", "/frobnicate", "/show nothing", "/show", "/undo now", "/load", "/help nothing",
        "/set thinking sometimes", "/set reasoning-effort max", "/set show-thinking maybe",
        "/set show-thinking", "/show thinking 1", "/show stats now", "/set markdown fancy",
        "/show template all",
        "/set markdown",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(c, bad[i]);
        CHECKF(n_errors == e + 1 && !strchr(strchr(said, '\n') + 1, '\n'),
               "'%s' gave not one error line: %s", bad[i], said);
        e = n_errors;
    }
    CHECKF(strstr(run(c, "/show settings"), "temp               0.3"), "unchanged: %s", said);
    CHECK(c->first_error == CF_EXIT_USAGE);
    for (const char *const *n = slash_names; *n; n++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "/help %s", *n + 1);
        run(c, cmd);
        CHECKF(said[0] == '/' && strlen(said) > 40, "%s: %s", cmd, said);
    }
    /* /help set: its header once, every row's text in one column */
    run(c, "/help set");
    CHECKF(!strncmp(said, "/set NAME VALUE changes", 23) && !strstr(said + 1, "/set NAME VALUE\n"),
           "%s", said);
    for (const char *l = said; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        size_t len = strcspn(l, "\n");
        const char *gap = memmem(l + 2, len - (len > 2 ? 2 : len), "  ", 2);
        if (l[0] == ' ' && l[1] == ' ' && l[2] != ' ' && gap)
            CHECKF(gap + strspn(gap, " ") == l + 22, "misaligned: %.*s", (int)len, l);
    }
    CHECK(strstr(run(c, "/?"), "/regen"));
    CHECK(strstr(run(c, "/show model"), "stories260K"));
    /* the template's text as ollama shows it, or what it renders now */
    CHECKF(strstr(run(c, "/show template"), "template: jinja (from GGUF)") &&
               strstr(said, "{%- for message in messages -%}") && strstr(said, "--rendered"),
           "%s", said);
    CHECKF(strstr(run(c, "/show template --rendered"), "<|im_start|>assistant\n"), "%s", said);
    CHECK(strstr(run(c, "/show stats"), "no reply yet"));
    CHECK(strstr(run(c, "/set system Be kind."), "system prompt set"));
    CHECK(strstr(run(c, "/show settings"), "\"Be kind.\""));
    CHECK(messages(c) == 1);
    /* the thinking settings: a template without the switch says so */
    CHECKF(strstr(run(c, "/set thinking off"), "thinking = off\nnote: the chat template does not "
                                                "read enable_thinking"),
           "%s", said);
    CHECK(strstr(run(c, "/show settings"), "thinking           off"));
    CHECK(strstr(run(c, "/set reasoning-effort high"), "reasoning-effort = high"));
    run(c, "/set thinking auto");
    run(c, "/set reasoning-effort auto");
    CHECK(strstr(run(c, "/set show-thinking off"), "show-thinking = off") && !c->show_thinking);
    CHECK(strstr(run(c, "/show settings"), "show-thinking      off"));
    run(c, "/set show-thinking on");
    CHECK(c->show_thinking);
    CHECK(strstr(run(c, "/show settings"), "markdown           on"));
    CHECK(strstr(run(c, "/set markdown off"), "markdown = off") && !c->markdown);
    CHECK(strstr(run(c, "/show settings"), "markdown           off"));
    run(c, "/set markdown on");
    CHECK(c->markdown);
    CHECKF(strstr(run(c, "/show template"), "replies are not split"), "%s", said);
    CHECK(strstr(run(c, "/show thinking"), "no reply yet"));
    /* the exact prompt of the next turn, and what of it is cached */
    CHECKF(strstr(run(c, "/show prompt Hi!"), "<|im_start|>system\nBe kind.<|im_end|>\n"
                                              "<|im_start|>user\nHi!<|im_end|>\n"
                                              "<|im_start|>assistant\n\n(") &&
               strstr(said, " tokens: 0 in the cache, "),
           "%s", said);
    CHECK(messages(c) == 1);
}

static void test_conversation(chat *c, const char *dir)
{
    run(c, "/set n-predict 6");
    run(c, "Hello there.");
    run(c, "// not a command");
    CHECKF(n_replies == 2 && messages(c) == 5, "%d replies, %d messages", n_replies, messages(c));
    CHECK(!strcmp(cf_session_message(c->s, 3)->content, "/ not a command"));
    CHECKF(strstr(run(c, "/show context"), ", 5 messages"), "%s", said);
    CHECK(strstr(run(c, "/show stats"), "reply ") && strstr(said, "  thinking   0 tokens") &&
          strstr(said, "\nthreads      1"));
    CHECK(strstr(run(c, "/show thinking"), "reply 2 has no thinking"));
    CHECK(strstr(run(c, "/show thinking 1"), "reply 1 has no thinking"));
    int e0 = n_errors;
    CHECK(strstr(run(c, "/show thinking 3"), "no reply '3' (replies 1 to 2)") && n_errors == e0 + 1);
    CHECK(strstr(run(c, "/undo"), "removed the last exchange (\"/ not a command\")"));
    CHECK(messages(c) == 3);
    run(c, "/regen");
    CHECK(n_replies == 3 && messages(c) == 3);

    char path[512], junk[512];
    snprintf(path, sizeof path, "%s/a.session", dir);
    snprintf(junk, sizeof junk, "%s/junk.session", dir);
    FILE *f = fopen(junk, "w");
    fputs("not a session", f);
    fclose(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "/save %s", path);
    CHECKF(strstr(run(c, cmd), "saved to "), "%s", said);
    CHECK(c->session_path && !strcmp(c->session_path, path));
    CHECK(!cf_session_dirty(c->s));
    run(c, "/clear");
    CHECK(messages(c) == 1);
    int e = n_errors;
    snprintf(cmd, sizeof cmd, "/load %s", junk);
    run(c, cmd);
    CHECK(n_errors == e + 1 && messages(c) == 1 && c->first_error == CF_EXIT_USAGE);
    snprintf(cmd, sizeof cmd, "/load %s", path);
    CHECKF(strstr(run(c, cmd), "3 messages"), "%s", said);
    CHECK(messages(c) == 3);
    CHECK(!strcmp(cf_session_message(c->s, 1)->content, "Hello there."));
    /* /save alone: the session file */
    CHECKF(strstr(run(c, "/save"), path), "%s", said);
    run(c, "/undo");
    run(c, "/undo");
    CHECK(n_errors == e + 2);
    CHECK(!c->quit);
    run(c, "/bye");
    CHECK(c->quit);
}

/* One spelling of yes and no everywhere; one message for a value out of
 * range, whichever side it is on; llama.cpp's -1 for the whole context. */
static void test_values(chat *c)
{
    int e = n_errors;
    CHECKF(strstr(run(c, "/set probs 1"), "probs = on") && n_errors == e, "%s", said);
    CHECKF(strstr(run(c, "/set probs no"), "probs = off"), "%s", said);
    CHECKF(strstr(run(c, "/set markdown yes"), "markdown = on") && c->markdown, "%s", said);
    CHECKF(strstr(run(c, "/set show-thinking false"), "show-thinking = off"), "%s", said);
    run(c, "/set show-thinking on");
    CHECKF(strstr(run(c, "/set thinking true"), "thinking = on"), "%s", said);
    run(c, "/set thinking auto");
    char zero[256];
    snprintf(zero, sizeof zero, "%s", run(c, "/set repeat-penalty 0"));
    run(c, "/set repeat-penalty -2");
    CHECKF(strstr(zero, "repeat-penalty: '0' is not a number above 0 up to 100") &&
               strstr(said, "repeat-penalty: '-2' is not a number above 0 up to 100"),
           "%s / %s", zero, said);
    cf_context_info ci;
    cf_session_context_info(c->s, &ci);
    char whole[64];
    snprintf(whole, sizeof whole, "repeat-last-n = %d\n", ci.total);
    CHECKF(strstr(run(c, "/set repeat-last-n -1"), whole), "%s", said);
    CHECKF(strstr(run(c, "/set repeat-last-n -2"), "from -1 to"), "%s", said);
    run(c, "/set repeat-last-n 64");
    CHECKF(strstr(run(c, "/set parameter temperature 0.4"), "temp = 0.4"), "%s", said);
    CHECK(n_errors == e + 3);
}

static bool has_word(const char *const *w, const char *word)
{
    for (int i = 0; w && w[i]; i++)
        if (!strcmp(w[i], word))
            return true;
    return false;
}

static void test_complete(chat *c)
{
    const char *const *w = NULL;
    CHECK(complete_what(c->s, "/se", 0, &w) == COMPLETE_WORDS && w == slash_names);
    CHECK(complete_what(c->s, "/set te", 5, &w) == COMPLETE_WORDS);
    bool temp = false, system = false, markdown = false;
    for (int i = 0; w[i]; i++)
        temp |= !strcmp(w[i], "temp"), system |= !strcmp(w[i], "system"),
            markdown |= !strcmp(w[i], "markdown");
    CHECK(temp && system && markdown);
    CHECK(complete_what(c->s, "/show c", 6, &w) == COMPLETE_WORDS && w == show_topics);
    CHECK(complete_what(c->s, "/help s", 6, &w) == COMPLETE_WORDS && !strcmp(w[0], "help"));
    CHECK(complete_what(c->s, "/save fi", 6, &w) == COMPLETE_FILES);
    CHECK(complete_what(c->s, "/load  x", 7, &w) == COMPLETE_FILES);
    CHECK(complete_what(c->s, "hello wor", 6, &w) == COMPLETE_NOTHING);
    CHECK(complete_what(c->s, "/set temp 0", 10, &w) == COMPLETE_NOTHING);
    CHECK(complete_what(c->s, "/bye x", 5, &w) == COMPLETE_NOTHING);
    CHECK(complete_what(c->s, "/settle x", 8, &w) == COMPLETE_NOTHING);
    /* values too: a setting's words, the branches' names */
    CHECK(complete_what(c->s, "/set markdown ", 14, &w) == COMPLETE_WORDS && has_word(w, "on") &&
          has_word(w, "off"));
    CHECK(complete_what(c->s, "/set thinking  a", 15, &w) == COMPLETE_WORDS && has_word(w, "auto"));
    CHECK(complete_what(c->s, "/set reasoning-effort ", 22, &w) == COMPLETE_WORDS &&
          has_word(w, "medium"));
    CHECK(complete_what(c->s, "/switch ", 8, &w) == COMPLETE_WORDS && has_word(w, "main"));
    CHECK(complete_what(c->s, "/set markdown on ", 17, &w) == COMPLETE_NOTHING);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    char dir[] = "/tmp/confab-test-slash.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("XDG_DATA_HOME", dir, 1);
    cf_session_params p = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                           .n_threads = 1};
    cf_session *s;
    cf_err err;
    if (cf_session_new(&p, &s, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    chat_opts o;
    opts_init(&o);
    chat c = {.s = s, .opts = &o, .model_path = p.model_path, .view = &view, .markdown = true};
    test_complete(&c);
    test_settings(&c);
    test_values(&c);
    test_conversation(&c, dir);
    free(c.session_path);
    cf_session_free(s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("ui-slash");
}
