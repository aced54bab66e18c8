/* Model loading progress.  The session loads in one call, so progress is
 * a spinner with the elapsed time, drawn by a helper thread. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "load.h"

typedef struct spinner {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    bool done;
    const char *name;
    double mb;
    double t0_ms;
} spinner;

static double seconds_since(double t0_ms)
{
    return (cf_now_ms() - t0_ms) / 1e3;
}

static void *spin(void *arg)
{
    static const char frames[] = "|/-\\";
    spinner *sp = arg;
    pthread_mutex_lock(&sp->lock);
    for (int i = 0; !sp->done; i++) {
        /* Quick loads finish without ever showing the spinner. */
        if (i > 0)
            fprintf(stderr, "\rloading %s (%.0f MB) %c %.1f s", sp->name, sp->mb, frames[i % 4],
                    seconds_since(sp->t0_ms));
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L)
            until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&sp->done_cv, &sp->lock, &until);
    }
    pthread_mutex_unlock(&sp->lock);
    return NULL;
}

int session_open(const cf_session_params *p, bool show, cf_session **out, cf_err *err)
{
    struct stat st;
    const char *slash = strrchr(p->model_path, '/');
    spinner sp = {.name = slash ? slash + 1 : p->model_path,
                  .mb = stat(p->model_path, &st) == 0 ? (double)st.st_size / 1e6 : 0};
    pthread_t th;
    sp.t0_ms = cf_now_ms();
    pthread_mutex_init(&sp.lock, NULL);
    pthread_cond_init(&sp.done_cv, NULL);
    bool spinning = show && pthread_create(&th, NULL, spin, &sp) == 0;
    int rc = cf_session_new(p, out, err);
    if (spinning) {
        pthread_mutex_lock(&sp.lock);
        sp.done = true;
        pthread_cond_signal(&sp.done_cv);
        pthread_mutex_unlock(&sp.lock);
        pthread_join(th, NULL);
    }
    if (show && rc == 0)
        fprintf(stderr, "\r\033[Kloaded %s (%.0f MB) in %.2f s\n", sp.name, sp.mb, seconds_since(sp.t0_ms));
    else if (show)
        fputs("\r\033[K", stderr);
    pthread_cond_destroy(&sp.done_cv);
    pthread_mutex_destroy(&sp.lock);
    return rc;
}
