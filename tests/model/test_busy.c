/* The thread count of decoding passes while other programs take the cores
 * (busy.c), on made-up machines: idle, 2 threads take 2 ms a pass and one
 * 3 ms; busy, 2 threads stall, 16 ms a pass, and one takes 3.5 ms.  An idle
 * machine's hiccups (two stalled passes in a row) cost a short trial of
 * one thread, not the thread; a busy one settles on one thread, tries two
 * again after 250 ms, 500, ... up to 4 s, and is back on two within a few
 * passes once the other program ends; a batch runs on decoding's count
 * while it is fresh.  (test_steal decodes on busy cores for real.) */
#include "harness.h"
#include "model_internal.h"

#define MS 1000000ull

static uint64_t now;
static bool busy, hiccup; /* the machine; hiccup: this pass stalls anyway */

/* One pass at the count the controller gives; returns the count. */
static int pass(cf_busy *b, int n_threads)
{
    const int nth = cf_busy_threads(b, n_threads, now);
    uint64_t t = nth == 1 ? (busy ? 3500 : 3000) * 1000ull : 2 * MS, stall = 0;
    if (nth > 1 && (busy || hiccup))
        t = 16 * MS, stall = 12 * MS;
    now += t;
    cf_busy_report(b, n_threads, nth, t, stall, now);
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

static void controller(void)
{
    cf_busy b = {0};
    int most, fewest;
    now = 1000 * MS;
    busy = false;
    run_until(&b, 2, now + 1000 * MS, &most, &fewest);
    CHECK(most == 2 && fewest == 2);
    /* hiccups on an idle machine: one pass, then two in a row */
    for (int k = 1; k <= 2; k++) {
        hiccup = true;
        for (int i = 0; i < k; i++)
            CHECK(pass(&b, 2) == 2);
        hiccup = false;
        int ones = 0;
        for (int i = 0; i < 100; i++)
            ones += pass(&b, 2) == 1;
        CHECKF(ones == (k == 2 ? 8 : 0), "%d hiccups: %d passes on one thread", k, ones);
    }
    CHECK(b.nth == 0 && b.wait_ms == 0);
    /* a busy machine: one thread within a few dozen passes */
    busy = true;
    int n = 0;
    while (b.nth != 1 && n < 100)
        pass(&b, 2), n++;
    CHECKF(n < 40, "%d passes before one thread", n);
    CHECK(b.nth == 1 && b.wait_ms == 250);
    /* a batch runs on decoding's count until its next trial is due */
    CHECK(cf_busy_batch_threads(&b, 2, now) == 1 && cf_busy_batch_threads(&b, 2, b.retry_at) == 2);
    /* trials of two, each given up after two passes, the wait doubling */
    for (unsigned w = 500; w <= 4000; w *= 2) {
        const uint64_t trial = b.retry_at;
        run_until(&b, 2, trial, &most, &fewest);
        CHECK(most == 1);
        CHECK(pass(&b, 2) == 2 && pass(&b, 2) == 2 && pass(&b, 2) == 1);
        CHECKF(b.wait_ms == w, "wait %u ms, not %u", b.wait_ms, w);
    }
    run_until(&b, 2, b.retry_at, &most, &fewest);
    CHECK(pass(&b, 2) == 2 && pass(&b, 2) == 2 && b.wait_ms == 4000);
    /* the other program ends: two threads from the next trial on */
    busy = false;
    run_until(&b, 2, b.retry_at + 100 * MS, &most, &fewest);
    CHECK(b.nth == 0 && most == 2 && cf_busy_batch_threads(&b, 2, now) == 2);
    run_until(&b, 2, now + 9000 * MS, &most, &fewest);
    CHECK(fewest == 2 && b.wait_ms == 0);
    /* 4 threads on a busy machine: down one count at a time, to one */
    cf_busy c = {0};
    busy = true;
    run_until(&c, 4, now + 500 * MS, &most, &fewest);
    CHECKF(most == 4 && fewest == 1, "4 threads: %d..%d (nth %d trial %d avg %llu)", fewest, most, c.nth, c.trial, (unsigned long long)c.avg_ns);
    CHECK(c.nth == 1 || (c.nth == 2 && c.trial == 1));
}

int main(void)
{
    controller();
    return test_summary("busy");
}
