/* The context shift: chats run past three times the context size, whole
 * old turns go, the system prompt stays, and nothing kept is evaluated
 * again.
 *
 * What "exact" can mean here: in a multi-layer model the kept turns'
 * deeper-layer K/V were computed while those tokens attended to the turns
 * now dropped, so no fresh prefill of the kept tokens reproduces them
 * (llama.cpp's context shift has the same property).  Layer 0's K/V depend
 * only on each token and its position, and the shift re-rotates the kept
 * keys to their new positions; so in a one-layer model (stories260K-chatml
 * cut to its first block) the logits after a shift must equal those of a
 * fresh prefill of the kept history, within float tolerance (2e-4, as
 * tests/model/test_kv.c holds for the cache alone).  On real multi-layer
 * models the test checks the bookkeeping instead: after each shift the
 * system prompt's tokens are untouched, the kept turns' tokens are the old
 * ones moved down, the history equals a fresh rendering of the kept
 * messages, and the next turn prefills only its own new tokens. */
#include "sess_util.h"
#include "session_internal.h"

static const char *const msgs[] = {
    "Tell me something about rivers.",
    "And what about mountains, are they old?",
    "Why?",
};

static double max_diff(const float *a, const float *b, int n)
{
    double mx = 0;
    for (int i = 0; i < n; i++)
        mx = fmax(mx, fabs((double)a[i] - (double)b[i]));
    return mx;
}

static void test_long_chat(const char *model, int n_ctx)
{
    cf_session *s = open_shared(model, n_ctx, "You are terse.", 24);
    if (!s)
        return;
    cf_err err;
    int cost[3] = {-1, -1, -1}, shifts = 0, processed = 0, k;
    for (k = 1; processed < 3 * n_ctx + n_ctx / 2; k++) {
        int n_before, n;
        int32_t *before = history(s, &n_before);
        int keep = s->msgs[sess_first_user(s)].start;
        if (exchange(s, msgs[(k - 1) % 3], NULL, 0) < 0)
            break;
        const cf_turn_stats *st = cf_session_last_stats(s);
        processed += st->prompt_tokens + st->gen_tokens;
        const int32_t *h = cf_session_tokens(s, &n);
        CHECK(n <= n_ctx);
        int *c = &cost[(k - 1) % 3];
        if (k > 1) { /* the same message costs the same, shift or not */
            CHECKF(*c < 0 || *c == st->prompt_tokens, "%s turn %d: prefilled %d tokens, %d for the "
                   "same message before (shifted %d)", model, k, st->prompt_tokens, *c,
                   st->shifted_tokens);
            *c = st->prompt_tokens;
        }
        if (st->shifted_tokens > 0 && k > 1) {
            shifts++;
            int moved = n_before - keep - st->shifted_tokens;
            CHECK(memcmp(h, before, (size_t)keep * sizeof *h) == 0);
            CHECKF(moved <= 0 || memcmp(h + keep, before + keep + st->shifted_tokens,
                                        (size_t)moved * sizeof *h) == 0,
                   "%s turn %d: the kept turns' tokens moved wrongly", model, k);
            cf_tokens fresh = {0};
            CHECK(sess_prompt_tokens(s, s->n_msgs, false, &fresh, NULL, NULL, &err) == 0);
            CHECKF(n <= (int)fresh.n && memcmp(h, fresh.ids, (size_t)n * sizeof *h) == 0,
                   "%s turn %d: the history after a shift differs from a fresh rendering", model,
                   k);
            cf_tokens_free(&fresh);
        }
        free(before);
    }
    fprintf(stderr, "%s: %d turns, %d tokens through a context of %d, %d shifts\n", model, k - 1,
            processed, n_ctx, shifts);
    CHECK(shifts >= 2 && processed > 3 * n_ctx);
    CHECK(cf_session_message(s, 0)->role == CF_ROLE_SYSTEM);
    cf_session_free(s);
}

/* Logits after a shift equal a fresh prefill of the kept history, for
 * shifts before a reply and in the middle of one. */
static void test_one_layer(void)
{
    char path[64];
    temp_path(path, sizeof path, "1layer");
    if (write_variant(shared_path("models/stories260K-chatml.gguf"), path, 1, false) != 0)
        return;
    cf_session *s = open_at(path, 192, "You are terse.", 40);
    cf_ctx *fresh = NULL;
    cf_err err;
    cf_ctx_params p = {.n_ctx = 192, .n_threads = 1};
    if (!s || cf_ctx_new(cf_session_model(s), &p, &fresh, &err) != 0) {
        CHECK(0);
        cf_session_free(s);
        unlink(path);
        return;
    }
    const int V = cf_model_hparams(cf_session_model(s))->n_vocab;
    float *lg = malloc((size_t)V * sizeof *lg);
    int compared = 0, shifted = 0;
    double worst = 0;
    for (int k = 0; k < 12; k++) {
        const char *piece;
        int rc = cf_session_begin_reply(s, msgs[k % 3], &err);
        CHECKF(rc == 0, "%s", err.msg);
        do {
            const cf_turn_stats *st = cf_session_last_stats(s);
            if (st->shifted_tokens != shifted && cf_session_logits(s)) {
                int n;
                const int32_t *h = cf_session_tokens(s, &n);
                CHECK(cf_ctx_kv_truncate(fresh, 0, &err) == 0);
                CHECK(cf_ctx_decode(fresh, h, n, lg, false, &err) == 0);
                double d = max_diff(lg, cf_session_logits(s), V);
                worst = fmax(worst, d);
                CHECKF(d <= 2e-4,
                       "turn %d: logits after a shift differ from a fresh prefill of the "
                       "kept history by %.3g",
                       k + 1, d);
                compared++;
            }
            shifted = st->shifted_tokens;
        } while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN);
        cf_session_end_reply(s, false);
        shifted = 0;
    }
    fprintf(stderr, "one-layer model: %d shifts compared with a fresh prefill, max |diff| %.3g\n",
            compared, worst);
    CHECK(compared >= 3);
    free(lg);
    cf_ctx_free(fresh);
    cf_session_free(s);
    unlink(path);
}

/* A message longer than the whole context is refused; the session goes on. */
static void test_too_long(void)
{
    cf_session *s = open_shared("models/qwen2.Q8_0.gguf", 128, NULL, 8);
    if (!s)
        return;
    cf_err err;
    char big[2048];
    for (int i = 0; i < 2047; i++)
        big[i] = "abcdefgh "[i % 9];
    big[2047] = '\0';
    exchange(s, "hi", NULL, 0);
    int n0, n;
    cf_session_tokens(s, &n0);
    CHECK(cf_session_begin_reply(s, big, &err) != 0 && strstr(err.msg, "does not fit"));
    cf_session_tokens(s, &n);
    CHECK(cf_session_n_messages(s) == 2 && n == n0);
    CHECK(exchange(s, "hi again", NULL, 0) == CF_STOP_N_PREDICT);
    cf_session_free(s);
}

/* A reply that alone fills the context stops there; the next turn shifts
 * the old one out and goes on. */
static void test_reply_fills_context(void)
{
    cf_session *s = open_shared("models/stories260K-chatml.gguf", 96, NULL, -1);
    if (!s)
        return;
    int n;
    CHECK(exchange(s, "Tell me a long story.", NULL, 0) == CF_STOP_CONTEXT_FULL);
    cf_session_tokens(s, &n);
    CHECK(n == 96);
    CHECK(exchange(s, "More!", NULL, 0) == CF_STOP_CONTEXT_FULL);
    CHECK(cf_session_last_stats(s)->shifted_tokens > 0 && cf_session_n_messages(s) == 2);
    cf_session_free(s);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_one_layer();
    test_long_chat("models/stories260K-chatml.gguf", 384);
    test_long_chat("models/qwen2.Q8_0.gguf", 256);
    test_long_chat("models/phi3.Q8_0.gguf", 256);
    test_long_chat("models/llama-bpe.Q8_0.gguf", 256);
    test_too_long();
    test_reply_fills_context();
    return test_summary("session-shift");
}
