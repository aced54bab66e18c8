/* Measurements for `confab bench`: the machine's memory read bandwidth (the
 * roofline's denominator) and timed prompt / generation passes. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "confab/bench.h"
#include "confab/platform.h"
#include "model_internal.h"

static double now(void) { return 1e-9 * (double)cf_now_ns(); }

/* ---- read bandwidth -------------------------------------------------------- */

struct cf_bw_probe {
    uint64_t *buf;
    size_t bytes;
    int n_threads;
};

/* One pass of a team over the probe's buffer: reps timed reads, or with
 * reps 0 the first touch. */
typedef struct bw_team {
    const cf_bw_probe *p;
    int n_threads, reps;
    int go; /* 1 once every thread exists and the barrier counts them; -1: give up */
    pthread_barrier_t bar;
    double best;
} bw_team;

typedef struct bw_thread {
    bw_team *s;
    int ith;
    uint64_t sink;
} bw_thread;

/* Sum of a range as 64-bit words, 32 independent sums (vectorised: four
 * loads in flight per iteration), so the loop is bound by memory. */
static uint64_t sum_words(const uint64_t *p, size_t n)
{
    uint64_t s[32] = {0}, t = 0;
    for (size_t i = 0; i + 32 <= n; i += 32)
        for (int j = 0; j < 32; j++)
            s[j] += p[i + j];
    for (int j = 0; j < 32; j++)
        t += s[j];
    return t;
}

static void *bw_worker(void *arg)
{
    bw_thread *t = arg;
    bw_team *s = t->s;
    int go;
    while (!(go = __atomic_load_n(&s->go, __ATOMIC_ACQUIRE)))
        sched_yield();
    if (go < 0)
        return NULL;
    const size_t words = s->p->bytes / 8;
    const size_t w0 = words * (size_t)t->ith / (size_t)s->n_threads;
    const size_t w1 = words * (size_t)(t->ith + 1) / (size_t)s->n_threads;
    uint64_t *p = s->p->buf;
    if (s->reps == 0) {
        /* first touch by the thread that reads the range, so its pages
         * are local to it */
        for (size_t i = w0; i < w1; i++)
            p[i] = i;
        return NULL;
    }
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

/* Runs the probe's team once; the best pass in seconds, 0 for a touch, or
 * -1 when not even the calling thread could run. */
static double run_team(const cf_bw_probe *p, int reps)
{
    bw_team s = {.p = p, .reps = reps};
    bw_thread *ts = calloc((size_t)p->n_threads, sizeof *ts);
    pthread_t *ids = calloc((size_t)p->n_threads, sizeof *ids);
    double best = -1;
    if (ts && ids) {
        int started = 1; /* this thread is number 0 */
        for (int i = 1; i < p->n_threads; i++, started++) {
            ts[i] = (bw_thread){&s, i, 0};
            if (pthread_create(&ids[i], NULL, bw_worker, &ts[i]) != 0)
                break;
        }
        /* with fewer threads than asked, run with those */
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
            best = s.best;
        }
    }
    free(ids);
    free(ts);
    return best;
}

cf_bw_probe *cf_bw_probe_new(size_t bytes, int n_threads)
{
    cf_bw_probe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n_threads = n_threads < 1 ? 1 : n_threads > 1024 ? 1024 : n_threads;
    p->bytes = bytes & ~(size_t)4095;
    /* huge pages where the system gives them: the probe should measure
     * memory, not page walks */
    void *buf = p->bytes ? mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                         : MAP_FAILED;
    if (buf == MAP_FAILED) {
        free(p);
        return NULL;
    }
    cf_advise_huge(buf, p->bytes);
    p->buf = buf;
    if (run_team(p, 0) < 0) {
        cf_bw_probe_free(p);
        return NULL;
    }
    return p;
}

double cf_bw_probe_run(cf_bw_probe *p, int reps)
{
    const double best = run_team(p, reps < 1 ? 1 : reps);
    return best > 0 ? (double)p->bytes / best * 1e-9 : -1;
}

void cf_bw_probe_free(cf_bw_probe *p)
{
    if (!p)
        return;
    munmap(p->buf, p->bytes);
    free(p);
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
