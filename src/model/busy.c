/* How many threads a decoding pass uses when other programs want the cores
 * too.  With every core taken (a build, a busy browser), the scheduler
 * preempts a thread of the pass for the other programs' time slices,
 * milliseconds, and the pass's other threads wait for it at the next
 * barrier: a token then costs the slices, not the work.
 *
 * A pass whose barriers waited past their spin (a partner off its core)
 * for a quarter of its time or more stalled.  After two stalled passes in
 * a row, TRIAL passes run with one thread fewer, and the count is kept if
 * they took less time on average than the passes at the count before
 * (their slow moving average, stalls included): an idle machine's hiccups
 * (a virtual CPU held up, two or three passes in a row) fail that test.
 * Fewer threads that still stall and are no faster (every core taken) try
 * fewer again.
 * While fewer than all threads run, one more is tried after a while the
 * same way, and given up at once after two stalls in a row; the while
 * doubles (from 250 ms up to 4 s) each time a trial of more is given up,
 * and starts over after 8 s with every thread.  A batch (prefill) runs on
 * the count decoding settled on, until its next trial is due: it learns
 * nothing itself, having too few passes.  The results are the same bits
 * whatever the count. */
#include <time.h>

#include "model_internal.h"

enum { FIRST_WAIT_MS = 250, LONGEST_WAIT_MS = 4000, CALM_MS = 8000, TRIAL = 8, AVG_SHIFT = 5 };

uint64_t cf_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int settled(const cf_busy *b, int n_threads)
{
    return b->nth ? b->nth : n_threads;
}

int cf_busy_threads(cf_busy *b, int n_threads, uint64_t now)
{
    const int s = settled(b, n_threads);
    if (!b->trial && s < n_threads && now >= b->retry_at)
        b->trial = s + 1, b->passes = 0, b->sum_ns = 0, b->stalls = 0, b->trial_stalled = false;
    return b->trial ? b->trial : s;
}

int cf_busy_batch_threads(const cf_busy *b, int n_threads, uint64_t now)
{
    return b->nth && now < b->retry_at ? b->nth : n_threads;
}

static void settle(cf_busy *b, int n_threads, int nth, uint64_t avg_ns)
{
    b->nth = nth >= n_threads ? 0 : nth;
    b->avg_ns = avg_ns;
    b->trial = 0;
    b->stalls = 0;
}

static uint64_t ms(unsigned n) { return (uint64_t)n * 1000000u; }

void cf_busy_report(cf_busy *b, int n_threads, int used, uint64_t pass_ns, uint64_t stall_ns, uint64_t now)
{
    const int s = settled(b, n_threads);
    const bool stalled = stall_ns * 4 >= pass_ns && used > 1;
    b->stalls = stalled ? b->stalls + 1 : 0;
    if (b->trial && used == b->trial) {
        b->passes++;
        b->trial_stalled |= b->stalls >= 2;
        b->sum_ns += pass_ns;
        const bool more = b->trial > s;
        if (more && b->stalls >= 2) { /* more threads stall again: give up at once */
            b->wait_ms = b->wait_ms * 2 < LONGEST_WAIT_MS ? b->wait_ms * 2 : LONGEST_WAIT_MS;
            b->retry_at = now + ms(b->wait_ms);
            settle(b, n_threads, s, b->avg_ns);
        } else if (b->passes >= TRIAL) {
            const uint64_t mean = b->sum_ns / TRIAL;
            if (!more && b->trial_stalled && b->trial > 1 && mean <= b->avg_ns + b->avg_ns / 8) {
                /* fewer, and as slow as before, and stalling still (every
                 * core taken): fewer again */
                b->trial--, b->passes = 0, b->sum_ns = 0, b->stalls = 0, b->trial_stalled = false;
            } else if (mean < b->avg_ns) {
                if (!more) {
                    b->wait_ms = b->wait_ms ? b->wait_ms : FIRST_WAIT_MS;
                    b->stalled_at = now;
                }
                b->retry_at = now + ms(b->wait_ms);
                settle(b, n_threads, b->trial, mean);
            } else {
                if (more) {
                    b->wait_ms = b->wait_ms * 2 < LONGEST_WAIT_MS ? b->wait_ms * 2 : LONGEST_WAIT_MS;
                    b->retry_at = now + ms(b->wait_ms);
                }
                settle(b, n_threads, s, b->avg_ns);
            }
        }
        return;
    }
    if (used != s)
        return;
    /* the settled count's slow moving average, stalls and all */
    b->avg_ns = b->avg_ns ? b->avg_ns - (b->avg_ns >> AVG_SHIFT) + (pass_ns >> AVG_SHIFT) : pass_ns;
    if (b->stalls >= 2 && s > 1)
        b->trial = s - 1, b->passes = 0, b->sum_ns = 0, b->stalls = 0, b->trial_stalled = false;
    if (!b->nth && b->wait_ms && now - b->stalled_at > ms(CALM_MS))
        b->wait_ms = 0;
}
