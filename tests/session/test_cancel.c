/* A prompt stopped while it is evaluated changes nothing.
 *
 * On a transformer (ChatML), an lfm2 (short convolutions) and a Qwen3.5
 * (gated delta nets) model, with 16-token batches: after one exchange, a
 * long message is stopped by the cancel check in its second batch.  Then
 * the messages, the cache's tokens, the prompt the next turn would render
 * (and how much of it the cache holds) and the unsaved mark are as before
 * it, and the next turn's reply and prefill are exactly those of a session
 * that never saw the stopped message (a check that never says stop
 * changes nothing either). */
#include "sess_util.h"

static const char *const long_msg =
    "Once upon a time there was a little girl named Lily. She liked to play in the park with "
    "her friends, and every day she found something new: a red ball, a small bird, a big tree "
    "with a hole in it. One day she saw a cat sitting under the tree.";

typedef struct countdown {
    int calls, stop_at;
} countdown;

static bool stop_at_call(void *ud)
{
    countdown *c = ud;
    return ++c->calls >= c->stop_at;
}

static cf_session *open_batched(const char *model)
{
    cf_session_params p = {.model_path = shared_path(model), .n_ctx = 512, .n_batch = 16,
                           .n_threads = 1};
    cf_session *s;
    cf_err err;
    if (cf_session_new(&p, &s, &err) != 0) {
        CHECKF(0, "%s: %s", model, err.msg);
        return NULL;
    }
    CHECK(cf_session_set(s, "seed", "7", &err) == 0 &&
          cf_session_set(s, "n-predict", "6", &err) == 0);
    return s;
}

/* What the session is, as far as the next turn can tell. */
typedef struct state {
    int n_msgs, n_tokens, n_prompt, n_cached;
    int32_t *tokens;
    char *prompt;
    bool dirty;
} state;

static void snapshot(cf_session *s, state *st)
{
    cf_err err;
    st->n_msgs = cf_session_n_messages(s);
    st->tokens = history(s, &st->n_tokens);
    st->dirty = cf_session_dirty(s);
    CHECKF(cf_session_prompt_text(s, "And then?", &st->prompt, &st->n_prompt, &st->n_cached,
                                  &err) == 0, "%s", err.msg);
}

static void same_state(const char *model, const char *what, const state *a, const state *b)
{
    CHECKF(a->n_msgs == b->n_msgs, "%s %s: %d messages, %d before", model, what, b->n_msgs,
           a->n_msgs);
    CHECKF(a->n_tokens == b->n_tokens &&
               !memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof *a->tokens),
           "%s %s: the cache holds other tokens (%d, %d before)", model, what, b->n_tokens,
           a->n_tokens);
    CHECKF(a->prompt && b->prompt && !strcmp(a->prompt, b->prompt) &&
               a->n_prompt == b->n_prompt && a->n_cached == b->n_cached,
           "%s %s: the next prompt differs (%d tokens, %d cached; %d, %d before)", model, what,
           b->n_prompt, b->n_cached, a->n_prompt, a->n_cached);
    CHECKF(a->dirty == b->dirty, "%s %s: unsaved %d, %d before", model, what, b->dirty, a->dirty);
}

static void state_free(state *st)
{
    free(st->tokens);
    free(st->prompt);
}

static void test_model(const char *model)
{
    cf_session *s = open_batched(model), *plain = open_batched(model);
    if (!s || !plain) {
        cf_session_free(s);
        cf_session_free(plain);
        return;
    }
    const int n_layer = cf_model_hparams(cf_session_model(s))->n_layer;
    char a[512], b[512];
    CHECK(exchange(s, "Hello.", a, sizeof a) >= 0 && exchange(plain, "Hello.", b, sizeof b) >= 0);
    state before, after;
    snapshot(s, &before);

    /* stopped at the third layer of the second batch */
    countdown cd = {0, n_layer + 3};
    cf_err err;
    cf_session_set_cancel(s, stop_at_call, &cd);
    int rc = cf_session_begin_reply(s, long_msg, &err);
    CHECKF(rc == -1 && err.code == CF_E_CANCELLED, "%s: begin_reply gave %d (%s)", model, rc,
           rc ? err.msg : "no error");
    CHECKF(cd.calls == n_layer + 3, "%s: the check was asked %d times, not %d", model, cd.calls,
           n_layer + 3);
    snapshot(s, &after);
    same_state(model, "after a stopped prompt", &before, &after);
    state_free(&after);

    /* a check that never says stop: the turn as if there were none */
    cd = (countdown){0, 1 << 30};
    CHECK(exchange(s, "And then?", a, sizeof a) >= 0 &&
          exchange(plain, "And then?", b, sizeof b) >= 0);
    CHECKF(cd.calls > 0, "%s: the check was never asked", model);
    CHECKF(!strcmp(a, b), "%s: the reply after the stopped prompt is '%s', without it '%s'",
           model, a, b);
    CHECKF(cf_session_last_stats(s)->prompt_tokens == cf_session_last_stats(plain)->prompt_tokens,
           "%s: prefilled %d tokens, without the stopped prompt %d", model,
           cf_session_last_stats(s)->prompt_tokens, cf_session_last_stats(plain)->prompt_tokens);
    int n1, n2;
    const int32_t *t1 = cf_session_tokens(s, &n1), *t2 = cf_session_tokens(plain, &n2);
    CHECKF(n1 == n2 && !memcmp(t1, t2, (size_t)n1 * sizeof *t1), "%s: the caches differ", model);
    fprintf(stderr, "%s: stopped after %d checks; then '%s'\n", model, n_layer + 3, a);
    state_free(&before);
    cf_session_free(s);
    cf_session_free(plain);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_model("models/stories260K-chatml.gguf");
    test_model("models/lfm2.Q8_0.gguf");
    test_model("models/qwen35.Q8_0.gguf");
    return test_summary("session-cancel");
}
