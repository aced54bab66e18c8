/* Measurements for `confab bench`: the machine's memory read bandwidth (the
 * roofline's denominator) and timed prompt / generation passes. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "confab/bench.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- read bandwidth -------------------------------------------------------- */

typedef struct bw_shared {
    uint8_t *buf;
    size_t bytes;
    int n_threads, reps;
    int go; /* 1 once every thread exists and the barrier counts them; -1: give up */
    pthread_barrier_t bar;
    double best;
} bw_shared;

typedef struct bw_thread {
    bw_shared *s;
    int ith;
    uint64_t sink;
} bw_thread;

/* Sum of a range as 64-bit words: the compiler vectorises it, so the loop
 * is bound by memory, not by instructions. */
static uint64_t sum_words(const uint64_t *p, size_t n)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
    }
    return a + b + c + d;
}

static void *bw_worker(void *arg)
{
    bw_thread *t = arg;
    bw_shared *s = t->s;
    int go;
    while (!(go = __atomic_load_n(&s->go, __ATOMIC_ACQUIRE)))
        sched_yield();
    if (go < 0)
        return NULL;
    const size_t words = s->bytes / 8;
    const size_t w0 = words * (size_t)t->ith / (size_t)s->n_threads;
    const size_t w1 = words * (size_t)(t->ith + 1) / (size_t)s->n_threads;
    uint64_t *p = (uint64_t *)s->buf;
    /* first touch by the reading thread, so pages are local to it */
    for (size_t i = w0; i < w1; i++)
        p[i] = i;
    for (int r = 0; r < s->reps; r++) {
        pthread_barrier_wait(&s->bar);
        double t0 = now();
        t->sink += sum_words(p + w0, w1 - w0);
        pthread_barrier_wait(&s->bar);
        double dt = now() - t0;
        if (t->ith == 0 && dt > 0 && (s->best == 0 || dt < s->best))
            s->best = dt;
    }
    return NULL;
}

double cf_bench_read_bandwidth(size_t bytes, int n_threads, int reps)
{
    n_threads = n_threads < 1 ? 1 : n_threads > 1024 ? 1024 : n_threads;
    bytes &= ~(size_t)4095;
    bw_shared s = {.buf = aligned_alloc(4096, bytes), .bytes = bytes, .reps = reps < 1 ? 1 : reps};
    bw_thread *ts = calloc((size_t)n_threads, sizeof *ts);
    pthread_t *ids = calloc((size_t)n_threads, sizeof *ids);
    double gbs = -1;
    if (s.buf && ts && ids) {
        int started = 1; /* this thread is number 0 */
        for (int i = 1; i < n_threads; i++, started++) {
            ts[i] = (bw_thread){&s, i, 0};
            if (pthread_create(&ids[i], NULL, bw_worker, &ts[i]) != 0)
                break;
        }
        /* with fewer threads than asked, measure with those */
        s.n_threads = started;
        ts[0] = (bw_thread){&s, 0, 0};
        const bool ok = pthread_barrier_init(&s.bar, NULL, (unsigned)started) == 0;
        __atomic_store_n(&s.go, ok ? 1 : -1, __ATOMIC_RELEASE);
        if (ok)
            bw_worker(&ts[0]);
        for (int i = 1; i < started; i++)
            pthread_join(ids[i], NULL);
        if (ok) {
            pthread_barrier_destroy(&s.bar);
            gbs = s.best > 0 ? (double)bytes / s.best * 1e-9 : -1;
        }
    }
    free(ids);
    free(ts);
    free(s.buf);
    return gbs;
}

/* ---- decode timing --------------------------------------------------------- */

/* Deterministic token ids (a fixed LCG), never 0 (often <unk>). */
static void fake_tokens(int32_t *ids, int n, int n_vocab, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        ids[i] = n_vocab > 1 ? 1 + (int32_t)((x >> 8) % (uint32_t)(n_vocab - 1)) : 0;
    }
}

/* Bring the cache to exactly `depth` positions. */
static int set_depth(cf_ctx *c, int depth, int32_t *ids, int cap, cf_err *err)
{
    const int n_vocab = cf_model_hparams(cf_ctx_model(c))->n_vocab;
    if (cf_ctx_n_past(c) > depth && cf_ctx_kv_truncate(c, depth, err) != 0)
        return -1;
    while (cf_ctx_n_past(c) < depth) {
        int n = depth - cf_ctx_n_past(c);
        n = n < cap ? n : cap;
        fake_tokens(ids, n, n_vocab, (uint32_t)cf_ctx_n_past(c));
        if (cf_ctx_decode(c, ids, n, NULL, false, err) != 0)
            return -1;
    }
    return 0;
}

static double timed(cf_ctx *c, int depth, int n, int per_call, cf_err *err)
{
    const int n_vocab = cf_model_hparams(cf_ctx_model(c))->n_vocab;
    if (n < 1 || depth < 0 || depth + n > cf_ctx_n_ctx(c)) {
        cf_fail(err, "%d tokens after %d do not fit a context of %d", n, depth, cf_ctx_n_ctx(c));
        return -1;
    }
    const int cap = 512;
    int32_t *ids = malloc((size_t)(n > cap ? n : cap) * sizeof *ids);
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    double dt = -1;
    if (!ids || !logits) {
        cf_fail(err, "out of memory");
    } else if (set_depth(c, depth, ids, cap, err) == 0) {
        fake_tokens(ids, n, n_vocab, 7u + (uint32_t)depth);
        double t0 = now();
        int i = 0;
        for (; i < n; i += per_call)
            if (cf_ctx_decode(c, ids + i, per_call < n - i ? per_call : n - i, logits, false, err) != 0)
                break;
        if (i >= n)
            dt = now() - t0;
    }
    free(ids);
    free(logits);
    return dt;
}

double cf_bench_prompt(cf_ctx *c, int depth, int n, cf_err *err)
{
    return timed(c, depth, n, n, err);
}

double cf_bench_generate(cf_ctx *c, int depth, int n, cf_err *err)
{
    return timed(c, depth, n, 1, err);
}
