/* Models with recurrent layers (a state that holds only "after the last
 * token") under every cache operation a chat uses, each compared bit for
 * bit with a fresh prefill of the same tokens:
 *   - a turn, a reply decoded token by token, then undo / regenerate
 *     (truncation to the turn's end, and into the middle of the reply);
 *   - truncation further back than any checkpoint, and past the
 *     checkpoints kept (more turns than CF_MAX_CKPT);
 *   - a context shift (the kept tokens evaluated again at their new
 *     positions);
 *   - saving the cache and loading it into another context.
 * usage: test_recurrent MODEL_FILE... (relative to ../shared/models) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "confab/model.h"
#include "harness.h"

static int V;

static void make_ids(int32_t *ids, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        ids[i] = 3 + (int32_t)((seed >> 8) % (unsigned)(V - 3));
    }
}

/* A fresh context's logits after ids[0..n). */
static void fresh(const cf_model *m, const int32_t *ids, int n, float *lg)
{
    cf_ctx_params p = {.n_ctx = 512, .n_threads = 2};
    cf_ctx *c;
    cf_err err;
    CHECK(cf_ctx_new(m, &p, &c, &err) == 0);
    CHECKF(cf_ctx_decode(c, ids, n, lg, false, &err) == 0, "%s", err.msg);
    cf_ctx_free(c);
}

static bool same(const float *a, const float *b)
{
    return memcmp(a, b, (size_t)V * sizeof *a) == 0;
}

/* A chat's pattern: each turn in one call, then a reply one token at a
 * time; turns[i] tokens of user turn i, reply tokens after each. */
static void chat(cf_ctx *c, const int32_t *ids, int turns, int turn_len, int reply_len, float *lg)
{
    cf_err err;
    for (int t = 0, at = 0; t < turns; t++) {
        CHECKF(cf_ctx_decode(c, ids + at, turn_len, lg, false, &err) == 0, "%s", err.msg);
        at += turn_len;
        for (int r = 0; r < reply_len; r++, at++)
            CHECKF(cf_ctx_decode(c, ids + at, 1, lg, false, &err) == 0, "%s", err.msg);
    }
}

static void check_model(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "models/%s", file);
    cf_model *m;
    cf_err err;
    if (cf_model_load(shared_path(path), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    V = cf_model_hparams(m)->n_vocab;
    enum { TURN = 12, REPLY = 6, TURNS = 12, N = TURNS * (TURN + REPLY) };
    int32_t ids[N + 16];
    make_ids(ids, N + 16, 17);
    float *lg = malloc((size_t)V * sizeof *lg), *want = malloc((size_t)V * sizeof *want);
    cf_ctx_params p = {.n_ctx = 512, .n_threads = 2};
    cf_ctx *c, *d;
    CHECK(cf_ctx_new(m, &p, &c, &err) == 0 && cf_ctx_new(m, &p, &d, &err) == 0);

    /* two turns; regenerate the second reply: back to the end of turn 2 */
    chat(c, ids, 2, TURN, REPLY, lg);
    const int turn2_end = 2 * TURN + REPLY;
    CHECK(cf_ctx_kv_truncate(c, turn2_end, &err) == 0 && cf_ctx_n_past(c) == turn2_end);
    CHECK(cf_ctx_decode(c, ids + turn2_end, 1, lg, false, &err) == 0);
    fresh(m, ids, turn2_end + 1, want);
    CHECKF(same(lg, want), "%s: regenerate differs from a fresh prefill", file);

    /* undo into the middle of the first reply (no checkpoint there) */
    CHECK(cf_ctx_kv_truncate(c, TURN + 3, &err) == 0);
    CHECK(cf_ctx_decode(c, ids + TURN + 3, 2, lg, false, &err) == 0);
    fresh(m, ids, TURN + 5, want);
    CHECKF(same(lg, want), "%s: undo into a reply differs from a fresh prefill", file);

    /* many turns: the early checkpoints are gone, going back there still works */
    CHECK(cf_ctx_kv_truncate(c, 0, &err) == 0);
    chat(c, ids, TURNS, TURN, REPLY, lg);
    fresh(m, ids, N, want);
    CHECKF(same(lg, want), "%s: %d turns differ from one prefill", file, TURNS);
    CHECK(cf_ctx_kv_truncate(c, TURN + REPLY + 4, &err) == 0);
    CHECK(cf_ctx_decode(c, ids + TURN + REPLY + 4, 1, lg, false, &err) == 0);
    fresh(m, ids, TURN + REPLY + 5, want);
    CHECKF(same(lg, want), "%s: going back past the kept checkpoints differs", file);

    /* a shift: drop turn 2 and its reply; the rest is evaluated again */
    CHECK(cf_ctx_kv_truncate(c, 0, &err) == 0);
    chat(c, ids, 4, TURN, REPLY, NULL);
    const int a = TURN + REPLY, b = 2 * (TURN + REPLY), n = 4 * (TURN + REPLY);
    CHECK(cf_ctx_kv_discard(c, a, b, &err) == 0 && cf_ctx_n_past(c) == n - (b - a));
    CHECK(cf_ctx_decode(c, ids + n, 3, lg, false, &err) == 0);
    int32_t kept[N];
    memcpy(kept, ids, (size_t)a * sizeof *ids);
    memcpy(kept + a, ids + b, (size_t)(n + 3 - b) * sizeof *ids);
    fresh(m, kept, n + 3 - (b - a), want);
    CHECKF(same(lg, want), "%s: a shift differs from a fresh prefill of the kept tokens", file);

    /* save, load into another context, go on (and undo there) */
    CHECK(cf_ctx_kv_truncate(c, 0, &err) == 0);
    chat(c, ids, 3, TURN, REPLY, NULL);
    const int held = 3 * (TURN + REPLY);
    uint64_t bytes = cf_ctx_kv_bytes(c, held);
    void *buf = malloc(bytes);
    CHECK(cf_ctx_kv_save(c, held, buf, bytes, &err) == 0);
    CHECK(cf_ctx_kv_save(c, held - 1, buf, bytes, &err) != 0); /* the state is at the end only */
    CHECK(cf_ctx_kv_load(d, held, buf, bytes, &err) == 0);
    CHECK(cf_ctx_decode(c, ids + held, 4, lg, false, &err) == 0);
    CHECK(cf_ctx_decode(d, ids + held, 4, want, false, &err) == 0);
    CHECKF(same(lg, want), "%s: a loaded cache differs", file);
    CHECK(cf_ctx_kv_truncate(d, TURN, &err) == 0);
    CHECK(cf_ctx_decode(d, ids + TURN, 2, lg, false, &err) == 0);
    fresh(m, ids, TURN + 2, want);
    CHECKF(same(lg, want), "%s: undo after loading differs", file);
    free(buf);

    free(lg);
    free(want);
    cf_ctx_free(c);
    cf_ctx_free(d);
    cf_model_free(m);
}

int main(int argc, char **argv)
{
    if (!shared_dir())
        return test_summary("model-recurrent");
    for (int i = 1; i < argc; i++)
        check_model(argv[i]);
    return test_summary("model-recurrent");
}
