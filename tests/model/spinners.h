/* A thread spinning on every online core (up to 64), so that a pass's
 * threads are preempted mid-pass, as on a machine busy with other work. */
#ifndef CONFAB_TESTS_SPINNERS_H
#define CONFAB_TESTS_SPINNERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct spinners {
    pthread_t t[64];
    long n;
    atomic_bool stop;
} spinners;

static void *spinners_spin(void *arg)
{
    spinners *s = arg;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed))
        ;
    return NULL;
}

static inline void spinners_start(spinners *s)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    atomic_store(&s->stop, false);
    s->n = 0;
    for (n = n < 1 ? 1 : n > 64 ? 64 : n; s->n < n; s->n++)
        if (pthread_create(&s->t[s->n], NULL, spinners_spin, s) != 0)
            break;
}

static inline void spinners_stop(spinners *s)
{
    atomic_store(&s->stop, true);
    for (long i = 0; i < s->n; i++)
        pthread_join(s->t[i], NULL);
}

#endif
