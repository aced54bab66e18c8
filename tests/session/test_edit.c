/* Changing the conversation: undo rewinds the cache to the turn's start,
 * regen re-evaluates only the prompt's last token, clear keeps the system
 * prompt's cache, a new system prompt re-prefills from where it differs,
 * a reply cut by the user stays (marked) and the chat goes on. */
#include "sess_util.h"
#include "session_internal.h"

static bool is_prefix(const int32_t *a, int na, const int32_t *b, int nb)
{
    return na <= nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

/* Tokens held after the last prefill (the history less the reply's
 * evaluated tokens). */
static int prompt_end(const cf_session *s)
{
    int n;
    cf_session_tokens(s, &n);
    return n - (cf_session_last_stats(s)->gen_tokens - 1);
}

static void test_undo(void)
{
    cf_session *s = open_shared("models/qwen2.Q8_0.gguf", 1024, "You are terse.", 6);
    if (!s)
        return;
    cf_err err;
    exchange(s, "one", NULL, 0);
    exchange(s, "two", NULL, 0);
    exchange(s, "three", NULL, 0);
    int total3 = prompt_end(s), n3;
    int32_t *h3 = history(s, &n3);
    CHECK(cf_session_n_messages(s) == 7);
    int start3 = s->msgs[5].start;
    CHECK(cf_session_undo(s, &err) == 0 && cf_session_n_messages(s) == 5);
    CHECK(cf_session_message(s, 4)->role == CF_ROLE_ASSISTANT);
    int n;
    const int32_t *h = cf_session_tokens(s, &n);
    /* back to where turn 3 began, the cache a prefix of what it was */
    CHECKF(n == start3 && is_prefix(h, n, h3, n3), "undo left %d tokens, turn 3 began at %d", n,
           start3);
    exchange(s, "three", NULL, 0);
    CHECKF(prompt_end(s) == total3, "the same prompt again: %d tokens, %d before", prompt_end(s),
           total3);
    CHECK(cf_session_undo(s, &err) == 0 && cf_session_undo(s, &err) == 0 &&
          cf_session_undo(s, &err) == 0 && cf_session_n_messages(s) == 1);
    cf_session_tokens(s, &n);
    CHECKF(n > 0 && n <= 12, "only the system prompt stays: %d tokens", n);
    CHECK(cf_session_undo(s, &err) != 0 && strstr(err.msg, "nothing to undo"));
    free(h3);
    cf_session_free(s);
}

static void test_regen(void)
{
    cf_session *s = open_shared("models/qwen2.Q8_0.gguf", 1024, NULL, 6);
    if (!s)
        return;
    cf_err err;
    const char *piece;
    CHECK(cf_session_regen(s, &err) != 0 && strstr(err.msg, "no reply"));
    CHECK(cf_session_set(s, "temp", "0", &err) == 0);
    char first[512], again[512];
    exchange(s, "Hello", first, sizeof first);
    int total = prompt_end(s);
    for (int k = 0; k < 2; k++) {
        CHECK(cf_session_regen(s, &err) == 0);
        /* only the prompt's last token is evaluated again */
        CHECK(cf_session_last_stats(s)->prompt_tokens == 1);
        size_t len = 0;
        while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN &&
               len + strlen(piece) < sizeof again) {
            memcpy(again + len, piece, strlen(piece));
            len += strlen(piece);
        }
        again[len] = '\0';
        cf_session_end_reply(s, false);
        CHECK(prompt_end(s) == total && cf_session_n_messages(s) == 2);
        CHECKF(strcmp(first, again) == 0, "greedy regen: '%s' then '%s'", first, again);
    }
    cf_session_free(s);
}

static void test_clear(void)
{
    cf_session *s = open_shared("models/phi3.Q8_0.gguf", 1024, "Be brief.", 4);
    if (!s)
        return;
    cf_err err;
    exchange(s, "first question", NULL, 0);
    int p1 = cf_session_last_stats(s)->prompt_tokens, sys = s->msgs[1].start;
    exchange(s, "second question", NULL, 0);
    CHECK(cf_session_clear(s, &err) == 0 && cf_session_n_messages(s) == 1);
    CHECK(cf_session_message(s, 0)->role == CF_ROLE_SYSTEM);
    int n;
    cf_session_tokens(s, &n);
    CHECKF(n == sys && sys > 0, "clear kept %d tokens, the system prompt has %d", n, sys);
    exchange(s, "first question", NULL, 0);
    CHECKF(cf_session_last_stats(s)->prompt_tokens == p1 - sys, "after clear: %d tokens, %d - %d "
           "expected", cf_session_last_stats(s)->prompt_tokens, p1, sys);
    cf_session_free(s);
}

static void test_system(void)
{
    cf_session *s = open_shared("models/llama-bpe.Q8_0.gguf", 1024, "You are terse.", 4);
    if (!s)
        return;
    cf_err err;
    exchange(s, "one", NULL, 0);
    exchange(s, "two", NULL, 0);
    int n0, n;
    int32_t *h0 = history(s, &n0);
    int sys_end = s->msgs[1].start;
    CHECK(cf_session_set_system(s, "You are verbose and kind.", &err) == 0);
    CHECK(cf_session_n_messages(s) == 5 && strcmp(cf_session_message(s, 0)->content,
                                                  "You are verbose and kind.") == 0);
    const int32_t *h = cf_session_tokens(s, &n);
    CHECKF(n < sys_end && is_prefix(h, n, h0, n0), "cache after a new system prompt: %d tokens "
           "(system ended at %d)", n, sys_end);
    exchange(s, "three", NULL, 0);
    /* everything from the change on was evaluated again, and matches a
     * fresh rendering */
    CHECK(prompt_end(s) - cf_session_last_stats(s)->prompt_tokens == n);
    cf_tokens full = {0};
    CHECK(sess_prompt_tokens(s, s->n_msgs, false, &full, NULL, NULL, &err) == 0);
    h = cf_session_tokens(s, &n);
    CHECK(is_prefix(h, n, full.ids, (int)full.n));
    cf_tokens_free(&full);
    CHECK(cf_session_set_system(s, NULL, &err) == 0 && cf_session_n_messages(s) == 6);
    CHECK(cf_session_message(s, 0)->role == CF_ROLE_USER);
    CHECK(exchange(s, "four", NULL, 0) == CF_STOP_N_PREDICT);
    free(h0);
    cf_session_free(s);
}

static void test_cut(void)
{
    cf_session *s = open_shared("models/stories260K-chatml.gguf", 512, NULL, 50);
    if (!s)
        return;
    cf_err err;
    const char *piece;
    CHECK(cf_session_begin_reply(s, "Tell me a story", &err) == 0);
    CHECK(cf_session_logits(s) != NULL);
    for (int k = 0; k < 5; k++)
        CHECK(cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN);
    cf_session_end_reply(s, true);
    CHECK(cf_session_logits(s) == NULL);
    const cf_message *m = cf_session_message(s, 1);
    CHECK(m->role == CF_ROLE_ASSISTANT && m->cut && cf_session_last_stats(s)->stop == CF_STOP_USER);
    CHECK(s->msgs[1].ids.n == 5);
    /* a new message while a reply runs cuts it */
    CHECK(cf_session_begin_reply(s, "More", &err) == 0);
    CHECK(cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN);
    CHECK(cf_session_begin_reply(s, "Even more", &err) == 0);
    CHECK(cf_session_message(s, 3)->cut && cf_session_n_messages(s) == 6);
    while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN)
        ;
    CHECK(cf_session_next(s, &piece, &err) == CF_NEXT_DONE && piece[0] == '\0');
    cf_session_end_reply(s, false);
    CHECK(!cf_session_message(s, 5)->cut);
    cf_context_info ci;
    cf_session_context_info(s, &ci);
    int n;
    cf_session_tokens(s, &n);
    CHECK(ci.used == n && ci.total == 512 && ci.shift_would_drop_turns == 1 &&
          ci.shift_would_drop > 0);
    cf_session_free(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0);
    if (f)
        fclose(f);
}

/* A template without a system role gets the system prompt at the head of
 * the first user message (as llama.cpp's polyfill does); one that refuses
 * that too makes a new system prompt fail, changing nothing. */
static void test_refused_system(void)
{
    char tmpl[64];
    temp_path(tmpl, sizeof tmpl, "tmpl");
    write_file(tmpl, "{% for m in messages %}{% if m.role == 'system' %}"
                     "{{ raise_exception('System role not supported') }}{% endif %}"
                     "<{{ m.role }}>{{ m.content }}{% endfor %}"
                     "{% if add_generation_prompt %}<assistant>{% endif %}");
    cf_session_params p = {.model_path = shared_path("models/stories260K-chatml.gguf"),
                           .n_ctx = 256, .chat_template_file = tmpl, .system_prompt = "Be nice."};
    cf_session *s;
    cf_err err;
    CHECKF(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    CHECK(strstr(cf_session_template_desc(s), tmpl) != NULL);
    CHECK(cf_session_set(s, "n-predict", "4", &err) == 0);
    exchange(s, "Hi", NULL, 0);
    int n;
    const int32_t *h = cf_session_tokens(s, &n);
    char text[512];
    size_t len = cf_detokenize(s->tok, h, (size_t)n, true, true, text, sizeof text - 1);
    text[len < sizeof text ? len : sizeof text - 1] = '\0';
    CHECKF(strstr(text, "<user>Be nice.\n\nHi<assistant>") != NULL, "rendered '%s'", text);
    cf_session_free(s);

    write_file(tmpl, "{% for m in messages %}{% if m.role == 'system' or '\n\n' in m.content %}"
                     "{{ raise_exception('System role not supported') }}{% endif %}"
                     "<{{ m.role }}>{{ m.content }}{% endfor %}");
    p.system_prompt = NULL;
    CHECKF(cf_session_new(&p, &s, &err) == 0, "%s", err.msg);
    CHECK(cf_session_set(s, "n-predict", "4", &err) == 0);
    exchange(s, "Hi", NULL, 0);
    int n0;
    cf_session_tokens(s, &n0);
    CHECK(cf_session_set_system(s, "Be nice.", &err) != 0 && strstr(err.msg, "System role"));
    cf_session_tokens(s, &n);
    CHECK(cf_session_n_messages(s) == 2 && n == n0);
    CHECK(exchange(s, "Again", NULL, 0) == CF_STOP_N_PREDICT);
    cf_session_free(s);
    unlink(tmpl);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_undo();
    test_regen();
    test_clear();
    test_system();
    test_cut();
    test_refused_system();
    return test_summary("session-edit");
}
