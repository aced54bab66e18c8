/* The chat and session benchmarks of `confab bench`:
 *
 *   --chat-turns N    a scripted N-turn chat (fixed seed, fixed n-predict),
 *                     run three times: "turn K: prefilled P tokens, ttft X ms"
 *                     per turn (the best time of the runs), then
 *                     "ttft turnN/turn2 = R" (flat when each turn costs only
 *                     its new tokens);
 *   --session-restore a chat of about 2000 tokens saved to a file, then the
 *                     next reply's first token two ways, each from a fresh
 *                     session (best of three): re-prefilling the whole
 *                     history with the next message in a fresh context, and
 *                     loading the file (then prefilling only the message).
 *                     Last line: "reprefill X ms, restore+first token Y ms,
 *                     speedup S". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_session.h"
#include "cli.h"
#include "confab/sampler.h"
#include "confab/session.h"

enum { SEED = 1234, N_PREDICT = 32, CHAT_RUNS = 3, RESTORE_TOKENS = 2000, RESTORE_RUNS = 3 };

/* Eighteen messages of similar length; turn K says message (K-1) % 18,
 * so turns 2 and 20 say the same thing. */
static const char *const script[] = {
    "Hello! Could you tell me a little about how tides work on the coast?",
    "What makes the moon pull harder on the near side of the Earth than the far side?",
    "How often do high tides happen in a typical day, and why that many?",
    "Are there places in the world where the tides are unusually large?",
    "Why would a narrow bay make the water rise so much higher than elsewhere?",
    "Does the sun play any part in the tides, or is it only the moon?",
    "What are spring tides and neap tides, and when do they happen?",
    "Could you explain it again as if I were a curious ten year old?",
    "How did sailors long ago predict the tides without any computers?",
    "What is a tide table, and how do harbour masters use one today?",
    "Do lakes have tides too, or is the effect too small to notice?",
    "Is the moon slowly moving away from the Earth because of the tides?",
    "How long is a day getting longer each century because of all this?",
    "Could we ever use the tides to make electricity on a large scale?",
    "What are the downsides of building a tidal barrage across an estuary?",
    "Which animals on the shore depend on the rhythm of the tides most?",
    "How do crabs and snails know when the water is about to come back?",
    "Thank you! Could you sum up the whole conversation in a few lines?",
};
#define N_SCRIPT (sizeof script / sizeof script[0])

static int open_session(const char *model, int threads, cf_session **s)
{
    cf_session_params p = {.model_path = model, .n_ctx = 4096, .n_threads = threads,
                           .type_k = CF_KV_F16, .type_v = CF_KV_F16,
                           .system_prompt = "You are a helpful assistant. Answer briefly."};
    cf_err err;
    char seed[24], n_predict[24];
    snprintf(seed, sizeof seed, "%d", SEED);
    snprintf(n_predict, sizeof n_predict, "%d", N_PREDICT);
    if (cf_session_new(&p, s, &err)) {
        cli_error("%s", err.msg);
        return CF_EXIT_MODEL;
    }
    if (cf_session_set(*s, "seed", seed, &err) ||
        cf_session_set(*s, "n-predict", n_predict, &err)) {
        cli_error("%s", err.msg);
        cf_session_free(*s);
        *s = NULL;
        return CF_EXIT_ERROR;
    }
    return CF_EXIT_OK;
}

/* One exchange: the reply runs to its end (n-predict at most). */
static int exchange(cf_session *s, const char *text)
{
    cf_err err;
    const char *piece;
    int rc;
    if (cf_session_begin_reply(s, text, &err)) {
        cli_error("%s", err.msg);
        return CF_EXIT_ERROR;
    }
    while ((rc = cf_session_next(s, &piece, &err)) == CF_NEXT_TOKEN)
        ;
    cf_session_end_reply(s, false);
    if (rc < 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_ERROR;
    }
    return CF_EXIT_OK;
}

/* Per turn: tokens prefilled, and the best time to first token over the
 * runs (the chat is the same each run: same seed, same script). */
static int chat_run(const char *model, int turns, int threads, int *prefilled, double *ttft)
{
    cf_session *s = NULL;
    int rc = open_session(model, threads, &s);
    for (int k = 0; k < turns && rc == CF_EXIT_OK; k++) {
        if ((rc = exchange(s, script[k % N_SCRIPT])) != CF_EXIT_OK)
            break;
        const cf_turn_stats *st = cf_session_last_stats(s);
        prefilled[k] = st->prompt_tokens;
        if (ttft[k] == 0 || st->ttft_ms < ttft[k])
            ttft[k] = st->ttft_ms;
    }
    cf_session_free(s);
    return rc;
}

int bench_chat_turns(const char *model, int turns, int threads)
{
    int *prefilled = calloc((size_t)turns, sizeof *prefilled), rc = CF_EXIT_OK;
    double *ttft = calloc((size_t)turns, sizeof *ttft);
    if (!prefilled || !ttft) {
        cli_error("out of memory");
        rc = CF_EXIT_ERROR;
    }
    printf("chat of %d turns, n-predict %d, seed %d: best time to first token of %d runs\n", turns,
           N_PREDICT, SEED, CHAT_RUNS);
    for (int run = 0; run < CHAT_RUNS && rc == CF_EXIT_OK; run++)
        rc = chat_run(model, turns, threads, prefilled, ttft);
    for (int k = 0; k < turns && rc == CF_EXIT_OK; k++)
        printf("turn %d: prefilled %d tokens, ttft %.1f ms\n", k + 1, prefilled[k], ttft[k]);
    if (rc == CF_EXIT_OK && turns >= 2)
        printf("ttft turn%d/turn2 = %.2f\n", turns, ttft[turns - 1] / ttft[1]);
    free(prefilled);
    free(ttft);
    return rc;
}

/* A fresh context evaluates every token of the next reply's prompt and
 * samples its first token; returns the milliseconds. */
static double reprefill_ms(const cf_session *s, int threads, cf_err *err)
{
    const cf_model *m = cf_session_model(s);
    int n;
    const int32_t *ids = cf_session_tokens(s, &n);
    cf_ctx_params p = {.n_ctx = 4096, .n_threads = threads, .type_k = CF_KV_F16, .type_v = CF_KV_F16};
    cf_ctx *ctx;
    cf_sampler *smp;
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    const int V = cf_model_hparams(m)->n_vocab;
    float *logits = malloc((size_t)V * sizeof *logits);
    if (!logits || cf_ctx_new(m, &p, &ctx, err)) {
        free(logits);
        return -1;
    }
    if (cf_sampler_create(V, &sp, SEED, &smp, err)) {
        cf_ctx_free(ctx);
        free(logits);
        return -1;
    }
    double t0 = cf_now_ms(), ms = -1;
    if (cf_ctx_decode(ctx, ids, n, logits, false, err) == 0) {
        cf_sampler_sample(smp, logits);
        ms = cf_now_ms() - t0;
    }
    cf_sampler_free(smp);
    cf_ctx_free(ctx);
    free(logits);
    return ms;
}

/* Both ways to the next reply's first token, each in a fresh session:
 * loading the file, and evaluating the whole prompt in a fresh context. */
static int restore_run(const char *model, int threads, const char *path, double *restore,
                       double *reprefill, int *n_prompt)
{
    static const char *const next = "Please go on where you left off.";
    cf_session *s;
    cf_err err;
    const char *piece;
    int rc = open_session(model, threads, &s);
    if (rc != CF_EXIT_OK)
        return rc;
    double t0 = cf_now_ms();
    if (cf_session_load(s, path, &err) || cf_session_begin_reply(s, next, &err) ||
        cf_session_next(s, &piece, &err) < 0) {
        cli_error("%s", err.msg);
        rc = CF_EXIT_SESSION;
    }
    double ms = cf_now_ms() - t0;
    *restore = *restore == 0 || ms < *restore ? ms : *restore;
    if (rc == CF_EXIT_OK && (ms = reprefill_ms(s, threads, &err)) < 0) {
        cli_error("%s", err.msg);
        rc = CF_EXIT_ERROR;
    }
    *reprefill = *reprefill == 0 || ms < *reprefill ? ms : *reprefill;
    cf_session_tokens(s, n_prompt);
    cf_session_free(s);
    return rc;
}

int bench_session_restore(const char *model, int threads)
{
    cf_session *s;
    int rc = open_session(model, threads, &s);
    if (rc != CF_EXIT_OK)
        return rc;
    char path[] = "/tmp/confab-bench-session-XXXXXX";
    int fd = mkstemp(path);
    cf_err err;
    cf_context_info ci = {0};
    for (int k = 0; rc == CF_EXIT_OK && ci.used < RESTORE_TOKENS; k++) {
        rc = exchange(s, script[k % N_SCRIPT]);
        cf_session_context_info(s, &ci);
    }
    if (rc == CF_EXIT_OK && (fd < 0 || cf_session_save(s, path, &err))) {
        cli_error("%s", fd < 0 ? "cannot create a temporary file in /tmp" : err.msg);
        rc = CF_EXIT_SESSION;
    }
    cf_session_free(s);
    double restore = 0, reprefill = 0;
    int n_prompt = 0;
    for (int run = 0; run < RESTORE_RUNS && rc == CF_EXIT_OK; run++)
        rc = restore_run(model, threads, path, &restore, &reprefill, &n_prompt);
    if (rc == CF_EXIT_OK) {
        struct stat st;
        printf("history %d tokens (%d with the next prompt), session file %.1f MiB, best of %d "
               "runs\n", ci.used, n_prompt,
               stat(path, &st) == 0 ? (double)st.st_size / (1 << 20) : 0.0, RESTORE_RUNS);
        printf("reprefill %.1f ms, restore+first token %.1f ms, speedup %.1f\n", reprefill,
               restore, reprefill / restore);
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    return rc;
}
