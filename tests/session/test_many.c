/* Long conversations handed over whole (as `confab serve` and /load do):
 *   - 10,000 messages fit the context in a few seconds: the conversation
 *     is rendered and tokenized once and each turn's start found by token
 *     offsets (a path that renders every turn's prefix again took 141 s);
 *   - each turn starts where the rendering of the messages before it stops
 *     agreeing with the whole, as the prefix rendering says, on templates
 *     of several families. */
#include "sess_util.h"
#include "session_internal.h"

static const char *const texts[] = {
    "Tell me about rivers.", "Rivers run to the sea.", "And mountains?",
    "Mountains are old and tall.", "Why?", "Because the earth folds.",
};

/* system + n alternating user and assistant messages, the last a user's */
static cf_message *conversation(int n)
{
    cf_message *m = calloc((size_t)n + 1, sizeof *m);
    m[0] = (cf_message){.role = CF_ROLE_SYSTEM, .content = "You are terse."};
    for (int i = 1; i <= n; i++)
        m[i] = (cf_message){.role = i % 2 ? CF_ROLE_USER : CF_ROLE_ASSISTANT,
                            .content = texts[(i - 1) % 6]};
    return m;
}

static void test_fast(int n)
{
    cf_session *s = open_shared("models/stories260K-chatml.gguf", 1024, NULL, 1);
    if (!s)
        return;
    cf_message *m = conversation(n);
    cf_err err;
    double t0 = cf_now_ms();
    CHECKF(cf_session_set_messages(s, m, n, &err) == 0, "%s", err.msg);
    CHECK(exchange(s, m[n].content, NULL, 0) >= 0);
    double ms = cf_now_ms() - t0;
    fprintf(stderr, "%d messages fitted and answered in %.0f ms (%d shifted)\n", n + 1, ms,
            cf_session_last_stats(s)->shifted_tokens);
    CHECKF(ms < 5000, "%d messages took %.0f ms", n + 1, ms);
    free(m);
    cf_session_free(s);
}

/* Each start against its definition: the rendering of the messages before
 * it, tokenized, in common with the whole (where that rendering is the
 * whole's beginning). */
static void test_starts(const char *model)
{
    cf_session *s = open_shared(model, 4096, NULL, 1);
    if (!s)
        return;
    enum { N = 41 };
    cf_message *m = conversation(N - 1);
    cf_err err;
    CHECKF(cf_session_set_messages(s, m, N, &err) == 0, "%s", err.msg);
    cf_tokens full = {0}, pre = {0};
    char *text;
    size_t len;
    CHECK(sess_prompt_tokens(s, s->n_msgs, false, &full, &text, &len, &err) == 0);
    sess_find_starts(s, &full, text, len);
    int prev = 0, checked = 0;
    for (int i = 1; i < s->n_msgs; i++) {
        if (s->msgs[i].pub.role != CF_ROLE_USER)
            continue;
        char *p;
        size_t plen;
        CHECK(sess_render_text(s, i, false, &p, &plen, &err) == 0);
        CHECK(sess_tokenize_text(s, i, p, plen, PIECE_HEAD, &pre, &err) == 0);
        int want = sess_common_prefix(&pre, &full), at = s->msgs[i].start;
        want = want > prev ? want : prev;
        if (plen <= len && !memcmp(p, text, plen))
            CHECKF(at == want, "%s: message %d starts at %d, its prefix says %d", model, i, at,
                   want);
        else /* the last reply rendered otherwise (Qwen3's reasoning): after its closing */
            CHECKF(at > prev && at < (int)full.n && cf_tok_is_control(s->tok, full.ids[at]),
                   "%s: message %d starts at %d, not at a turn's opening", model, i, at);
        prev = at;
        checked++;
        free(p);
    }
    CHECK(checked == N / 2);
    cf_tokens_free(&full);
    cf_tokens_free(&pre);
    free(text);
    free(m);
    cf_session_free(s);
}

int main(void)
{
    if (!shared_dir()) {
        fprintf(stderr, "no ../shared: skipped\n");
        return TEST_SKIP;
    }
    test_fast(10000);
    static const char *const models[] = {
        "models/stories260K-chatml.gguf", "models/stories260K-llama2chat.gguf",
        "models/phi3.Q8_0.gguf", "models/qwen3-bpe.Q8_0.gguf", "models/gemma3.Q8_0.gguf",
        "models/llama-bpe.Q8_0.gguf", "models/gpt-oss.MXFP4_MOE.gguf",
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_starts(models[i]);
    return test_summary("session-many");
}
