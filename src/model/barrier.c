/* The barrier between the phases of a forward pass.  The usual wait is a
 * few microseconds, so a thread spins first; past that it yields the CPU,
 * so that on a busy machine a preempted thread of the same pass gets to run
 * instead of being kept waiting by the one spinning for it. */
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
    if (nth <= 1)
        return;
    const unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)nth) {
        /* nobody arrives again before gen moves on, so the reset is safe */
        __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    for (int i = 0; __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen; i++) {
        if (i < SPINS)
            relax();
        else
            sched_yield();
    }
}
