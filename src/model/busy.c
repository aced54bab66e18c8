/* How many threads a decoding pass uses when other programs want the cores
 * too, or when there are more threads than cores.  The scheduler then
 * preempts a thread of the pass for another program's time slice,
 * milliseconds, and the pass's other threads wait for it at the next
 * barrier: a token costs the slices, not the work.
 *
 * The barriers add up how long they waited past their spin (a partner off
 * its core).  Every window of at least 250 ms (and 4 passes) gives the
 * mean time of a pass at the current count, stalls included; when a
 * quarter of the window went in such waits, a trial of one thread fewer
 * runs for at least 8 passes and 50 ms, and the count is kept if the
 * trial's mean pass was shorter than the window's.  A window half spent
 * in waits closes after 25 ms already, so that the first tokens on a busy
 * machine do not wait for a whole one; its trial must then beat the last
 * whole window too, which an idle machine's hiccups (a virtual CPU held
 * up for a few milliseconds) leave as it was.  Fewer threads that still
 * stall that much and are no faster (every core taken) try fewer again.
 * While fewer than all threads run, one more is tried after a while the
 * same way, given up at once after two stalled passes in a row; the while
 * doubles (from 250 ms up to 4 s) each time a trial of more is given up,
 * and starts over after 8 s with every thread.  A batch (prefill) runs on the count decoding
 * settled on, until its next trial is due: it has too few passes to learn
 * from.  The results are the same bits whatever the count. */

#include "model_internal.h"

enum { WINDOW_MS = 250, EARLY_MS = 25, WINDOW_PASSES = 4, TRIAL_MS = 50, TRIAL_PASSES = 8 };
enum { FIRST_WAIT_MS = 250, LONGEST_WAIT_MS = 4000, CALM_MS = 8000 };

static uint64_t ms(unsigned n) { return (uint64_t)n * 1000000u; }

int cf_busy_settled(const cf_busy *b, int n_threads)
{
    return b->nth ? b->nth : n_threads;
}

static void start_trial(cf_busy *b, int nth)
{
    b->trial = nth;
    b->run = (cf_busy_run){0};
    b->stalls = 0;
}

int cf_busy_threads(cf_busy *b, int n_threads, uint64_t now)
{
    const int s = cf_busy_settled(b, n_threads);
    if (!b->trial && s < n_threads && now >= b->retry_at)
        start_trial(b, s + 1);
    return b->trial ? b->trial : s;
}

int cf_busy_batch_threads(const cf_busy *b, int n_threads, uint64_t now)
{
    return now < b->retry_at ? cf_busy_settled(b, n_threads) : n_threads;
}

/* Settle on nth threads, whose passes took mean_ns. */
static void settle(cf_busy *b, int n_threads, int nth, uint64_t mean_ns)
{
    if (nth != cf_busy_settled(b, n_threads)) { /* a new count: its own windows */
        b->full_ns = 0;
        b->win = (cf_busy_run){0};
        b->early = false;
    }
    b->nth = nth >= n_threads ? 0 : nth;
    b->mean_ns = mean_ns;
    b->trial = 0;
}

static void retry_later(cf_busy *b, uint64_t now, bool double_wait)
{
    if (double_wait)
        b->wait_ms = b->wait_ms * 2 < LONGEST_WAIT_MS ? b->wait_ms * 2 : LONGEST_WAIT_MS;
    b->retry_at = now + ms(b->wait_ms);
}

static void add(cf_busy_run *r, uint64_t pass_ns, uint64_t stall_ns)
{
    r->passes++;
    r->ns += pass_ns;
    r->stall_ns += stall_ns;
}

/* A quarter of the time (a half: half) in waits past the spin. */
static bool stalling(const cf_busy_run *r, bool half) { return r->stall_ns * (half ? 2 : 4) >= r->ns; }

static void trial_pass(cf_busy *b, int n_threads, uint64_t now)
{
    const int s = cf_busy_settled(b, n_threads);
    const bool more = b->trial > s;
    if (more && b->stalls >= 2) { /* more threads stall again: give up at once */
        retry_later(b, now, true);
        settle(b, n_threads, s, b->mean_ns);
        return;
    }
    if (b->run.passes < TRIAL_PASSES || b->run.ns < ms(TRIAL_MS))
        return;
    const uint64_t mean = b->run.ns / (uint64_t)b->run.passes;
    if (!more && stalling(&b->run, false) && b->trial > 1 && mean <= b->mean_ns + b->mean_ns / 8) {
        start_trial(b, b->trial - 1); /* as slow, and stalling still: fewer again */
    } else if (mean < b->mean_ns) {
        if (!more) {
            b->wait_ms = b->wait_ms ? b->wait_ms : FIRST_WAIT_MS;
            b->stalled_at = now;
        }
        retry_later(b, now, false);
        settle(b, n_threads, b->trial, mean);
    } else {
        if (more)
            retry_later(b, now, true);
        settle(b, n_threads, s, b->mean_ns);
    }
}

void cf_busy_report(cf_busy *b, int n_threads, int used, uint64_t pass_ns, uint64_t stall_ns, uint64_t now)
{
    const int s = cf_busy_settled(b, n_threads);
    const cf_busy_run pass = {1, pass_ns, stall_ns};
    b->stalls = used > 1 && stalling(&pass, false) ? b->stalls + 1 : 0;
    if (b->trial && used == b->trial) {
        add(&b->run, pass_ns, stall_ns);
        trial_pass(b, n_threads, now);
        return;
    }
    if (used != s)
        return;
    add(&b->win, pass_ns, stall_ns);
    const bool enough = b->win.passes >= WINDOW_PASSES, full = enough && b->win.ns >= ms(WINDOW_MS);
    const uint64_t mean = enough ? b->win.ns / (uint64_t)b->win.passes : 0;
    if (full) {
        const bool stalled = stalling(&b->win, false) && s > 1;
        b->full_ns = b->mean_ns = mean;
        b->win = (cf_busy_run){0};
        b->early = false;
        if (stalled)
            start_trial(b, s - 1);
    } else if (enough && !b->early && s > 1 && b->win.ns >= ms(EARLY_MS) && stalling(&b->win, true)) {
        /* the window goes on; a hiccup's passes weigh less than a whole window's */
        b->mean_ns = b->full_ns && b->full_ns < mean ? b->full_ns : mean;
        b->early = true;
        start_trial(b, s - 1);
    }
    if (!b->nth && b->wait_ms && now - b->stalled_at > ms(CALM_MS))
        b->wait_ms = 0;
}
