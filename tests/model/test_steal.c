/* Work stealing: with a spinning thread on every core, the pass's threads
 * are descheduled mid-phase and the others take pieces from the back of
 * their shares.  A stolen piece must stay within the piece size the phase
 * sized its buffers by (stories260K's feed-forward width, 172, is not a
 * multiple of the 16-row panels, and with 2 threads the second share,
 * rows 80-172, once gave a thief 76 rows of a 64-row piece), and the logits
 * must still be the bits one thread gives. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/model.h"
#include "harness.h"

#define N_TOK 512
#define THREADS 2
#define REPS 40

static atomic_bool stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        ;
    return NULL;
}

static float *prefill(const cf_model *m, int threads, const int32_t *tok)
{
    const int V = cf_model_hparams(m)->n_vocab;
    cf_ctx_params cp = {.n_ctx = N_TOK, .n_batch = N_TOK, .n_threads = threads, .kv_type = CF_KV_F16};
    cf_ctx *c;
    cf_err err;
    if (cf_ctx_new(m, &cp, &c, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return NULL;
    }
    float *lg = malloc((size_t)N_TOK * (size_t)V * sizeof *lg);
    if (cf_ctx_decode(c, tok, N_TOK, lg, true, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        free(lg);
        lg = NULL;
    }
    cf_ctx_free(c);
    return lg;
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    cf_model *m;
    cf_err err;
    if (cf_model_load(shared_path("models/stories260K.gguf"), NULL, &m, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return test_summary("steal");
    }
    const int V = cf_model_hparams(m)->n_vocab;
    int32_t tok[N_TOK];
    for (int i = 0; i < N_TOK; i++)
        tok[i] = (int32_t)((i * 37 + 1) % V);
    float *base = prefill(m, 1, tok);
    long n_spin = sysconf(_SC_NPROCESSORS_ONLN);
    n_spin = n_spin < 1 ? 1 : n_spin > 64 ? 64 : n_spin;
    pthread_t spinners[64];
    for (long i = 0; i < n_spin; i++)
        pthread_create(&spinners[i], NULL, spin, NULL);
    for (int r = 0; base && r < REPS; r++) {
        float *lg = prefill(m, THREADS, tok);
        CHECKF(lg && memcmp(base, lg, (size_t)N_TOK * (size_t)V * sizeof *lg) == 0,
               "run %d with %d threads differs from 1 thread", r, THREADS);
        free(lg);
    }
    atomic_store(&stop, true);
    for (long i = 0; i < n_spin; i++)
        pthread_join(spinners[i], NULL);
    free(base);
    cf_model_free(m);
    return test_summary("steal");
}
