/* The thread count of decoding passes while other programs take the cores
 * (busy.c), on made-up machines.  Idle, 2 threads take 2 ms a pass and one
 * 3 ms; busy, every pass on 2 threads stalls, 16 ms, and one takes 3.5 ms;
 * busy with short passes (0.1 ms on 2 threads, 0.15 on one), every tenth
 * pass on 2 threads waits 3 ms for a preempted partner.  An idle machine's
 * hiccups (up to three stalled passes in a row) cost at most a short trial
 * of one thread; a busy one settles on one thread, tries two again after
 * 250 ms, 500, ... up to 4 s, and is back on two at the next trial once
 * the other program ends; a batch runs on decoding's count while it is
 * fresh.  (test_steal decodes on busy cores for real.) */
#include "harness.h"
#include "model_internal.h"

#define MS 1000000ull

static uint64_t now, n_pass;
static enum { IDLE, BUSY, BUSY_SHORT } world;
static int hiccups; /* the next passes on 2 threads or more stall anyway */

/* One pass at the count the controller gives; returns the count. */
static int pass(cf_busy *b, int n_threads)
{
    const int nth = cf_busy_threads(b, n_threads, now);
    uint64_t t, stall = 0;
    n_pass++;
    if (world == BUSY_SHORT)
        t = nth == 1 ? 150000 : 100000, stall = nth > 1 && n_pass % 10 == 0 ? 3 * MS : 0;
    else if (nth > 1 && (world == BUSY || hiccups > 0))
        t = 4 * MS, stall = 12 * MS, hiccups--;
    else
        t = nth == 1 ? (world == BUSY ? 3500000 : 3 * MS) : 2 * MS;
    now += t + stall;
    cf_busy_report(b, n_threads, nth, t + stall, stall, now);
    return nth;
}

/* Passes until now reaches until; the most and fewest threads they ran on. */
static void run_until(cf_busy *b, int n_threads, uint64_t until, int *most, int *fewest)
{
    *most = 0, *fewest = 1 << 30;
    while (now < until) {
        const int n = pass(b, n_threads);
        *most = n > *most ? n : *most;
        *fewest = n < *fewest ? n : *fewest;
    }
}

/* The busy machine from the first pass: settled on one thread soon, then
 * trials of two at 250 ms, 500, ... 4000, each given up. */
static void settles_on_one(cf_busy *b)
{
    int most, fewest, n = 0;
    while (b->nth != 1 && n < 5000)
        pass(b, 2), n++;
    const uint64_t t0 = now;
    CHECKF(b->nth == 1 && b->wait_ms == 250, "nth %d after %d passes", b->nth, n);
    CHECK(cf_busy_batch_threads(b, 2, now) == 1 && cf_busy_batch_threads(b, 2, b->retry_at) == 2);
    for (unsigned w = 500; w <= 4000; w *= 2) {
        run_until(b, 2, b->retry_at, &most, &fewest);
        CHECK(most == 1);
        while (cf_busy_threads(b, 2, now) == 2)
            pass(b, 2);
        CHECKF(b->nth == 1 && b->wait_ms == w, "wait %u ms, not %u", b->wait_ms, w);
    }
    CHECKF(now - t0 < 9000 * MS, "trials over %.1f s", (double)(now - t0) / 1e9);
}

static void controller(void)
{
    cf_busy b = {0};
    int most, fewest;
    now = 1000 * MS;
    world = IDLE;
    run_until(&b, 2, now + 1000 * MS, &most, &fewest);
    CHECK(most == 2 && fewest == 2);
    /* hiccups on an idle machine: up to three stalled passes in a row,
     * once a second */
    for (int k = 1; k <= 3; k++) {
        hiccups = k;
        run_until(&b, 2, now + 1000 * MS, &most, &fewest);
        CHECKF(most == 2 && b.nth == 0, "%d hiccups: %d..%d threads", k, fewest, most);
    }
    CHECK(b.wait_ms == 0);
    world = BUSY;
    settles_on_one(&b);
    /* the other program ends: two threads from the next trial on */
    world = IDLE;
    run_until(&b, 2, b.retry_at + 100 * MS, &most, &fewest);
    CHECK(b.nth == 0 && most == 2 && cf_busy_batch_threads(&b, 2, now) == 2);
    run_until(&b, 2, now + 9000 * MS, &most, &fewest);
    CHECK(fewest == 2 && b.wait_ms == 0);
    /* short passes, a long preemption now and then */
    world = BUSY_SHORT;
    settles_on_one(&b);
    /* 4 threads on a busy machine: down one count at a time, to one */
    cf_busy c = {0};
    world = BUSY;
    run_until(&c, 4, now + 1000 * MS, &most, &fewest);
    CHECKF(most == 4 && fewest == 1 && c.nth == 1, "4 threads: %d..%d, settled on %d", fewest, most, c.nth);
}

int main(void)
{
    controller();
    return test_summary("busy");
}
