/* The barrier between the phases of a forward pass.  The usual wait is a
 * few microseconds, so a thread spins first; past that it yields the CPU,
 * so that on a busy machine a preempted thread of the same pass gets to run
 * instead of being kept waiting by the one spinning for it.  A thread that
 * waits can fetch what it reads next meanwhile: decoding, a core that
 * waits is a core not reading, and each phase's stream otherwise starts
 * cold. */
#include <sched.h>

#include "model_internal.h"

enum { SPINS = 2000 }; /* about 100 us of pause instructions */

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void cf_barrier_wait(cf_barrier *b, int nth)
{
    cf_barrier_wait_fetching(b, nth, NULL, 0);
}

void cf_barrier_wait_fetching(cf_barrier *b, int nth, const cf_fetch *f, int nf)
{
    if (nth <= 1)
        return;
    const unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)nth) {
        /* nobody arrives again before gen moves on, so the reset is safe */
        __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    int r = 0, i = 0;
    size_t o = 0;
    uint64_t since = 0;
    while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen) {
        if (r < nf) {
            /* what this thread reads next, into L2, 8 lines between looks */
            const size_t end = o + 512 < f[r].bytes ? o + 512 : f[r].bytes;
            for (; o < end; o += 64)
                __builtin_prefetch(f[r].p + o, 0, 2);
            if (o >= f[r].bytes) {
                r++;
                o = 0;
            }
            continue;
        }
        if (i++ < SPINS) {
            relax();
            continue;
        }
        if (!since)
            since = cf_now_ns();
        sched_yield();
    }
    if (since)
        __atomic_add_fetch(&b->stall_ns, cf_now_ns() - since, __ATOMIC_RELAXED);
}
