/* `confab serve --parallel N`: N slots, each a session of its own (its
 * own part of the context, its own prefix reuse) over the one model, each
 * answering the queue's completions on a thread of its own.  The slots'
 * model work is taken in turns, one forward pass at a time (the passes
 * spread over every core anyway):
 *
 * - A slot whose reply is generating asks for its next token to be
 *   evaluated and waits; once every generating slot has asked (or the
 *   first asked straggler_ms() ago), the steps' own thread evaluates all the
 *   asked tokens in one pass (cf_ctx_decode_group: decoding is
 *   memory-bound, so N tokens cost little more than one) and wakes them.
 *   One thread runs every step so that they keep one OpenMP team, its
 *   threads warm (a team per slot, woken in turn, waits for the scheduler
 *   on a loaded machine).  One slot decodes alone, as without slots.
 * - A slot that opens a request (its prompt, a context shift) holds the
 *   model for it; between the batches of a long prompt it lets a step of
 *   the generating slots go first, so they wait one batch at most.
 *
 * A token's logits are the same bits in a group as alone (the kernels'
 * sums do not depend on the batch), so a reply does not depend on what
 * the other slots do.  A request joins between two steps (continuous
 * batching); one that finds every slot busy waits in the queue.  It goes
 * to the idle slot whose conversation shares the most leading messages
 * with its own (a client continuing its chat finds its cache). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve_internal.h"

enum {
    /* how long a step waits for a generating slot that has not asked: this,
     * or half the last step's time when longer (a loaded machine slows the
     * slots' turn between steps as much as the steps) */
    STRAGGLER_MS = 3,
    PREFILL_BATCH = 128, /* a prompt's batch beside other slots: their longest wait */
};

typedef enum slot_state { SLOT_IDLE, SLOT_OPENING, SLOT_GENERATING } slot_state;

typedef struct serve_slot {
    struct serve_slots *all;
    int id;
    cf_session *s;
    pthread_t th;
    bool started;
    bool waiting;     /* idle, waiting for a job (under the server's lock) */
    unsigned used;    /* when it last took a job (0: never), under the same lock */
    slot_state state;
    /* its token in the step being gathered, and the answer */
    bool asked, answered;
    cf_ctx *ctx;
    int32_t token;
    float *logits;
    int rc;
    cf_err err;
} serve_slot;

struct serve_slots {
    server *sv;
    cf_model *model;
    int n, n_ctx, n_vocab;
    serve_slot *slot;
    pthread_t stepper;  /* the steps' thread (more than one slot) */
    bool stepper_started;
    pthread_mutex_t mu; /* all below, and each slot's state and request */
    pthread_cond_t cv;
    bool quit;          /* the stepper's end */
    bool busy;          /* a forward pass runs, or a slot opening a request holds the model */
    int generating;     /* slots in SLOT_GENERATING */
    int asking;         /* of them, those whose token waits for the next step */
    double first_ask;   /* when the first of them asked */
    double step_ms;     /* the last step's time */
    uint64_t steps, stepped; /* steps run, and the tokens they decoded */
    int openers;        /* slots waiting to open a request */
    const serve_job *offered; /* the job a slot woke the others for (the server's lock) */
    unsigned uses;            /* jobs taken so far (the server's lock): serve_slot.used */
    bool opener_due;    /* a step ran while they waited: one of them goes before the next */
    /* the step's gathered work */
    cf_ctx **ctxs;
    int32_t *tokens;
    float *logits;
    serve_slot **who;
};

static void deadline_in(struct timespec *ts, double ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long ns = ts->tv_nsec + (long)(ms * 1e6);
    ts->tv_sec += ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}

/* Evaluate every asked token in one pass, the lock held on entry and exit
 * (released during the pass). */
static void step(struct serve_slots *g)
{
    /* no more than a context's batch (n_ctx caps it): the rest go next */
    const int most = g->n_ctx < PREFILL_BATCH ? g->n_ctx : PREFILL_BATCH;
    int n = 0;
    for (int i = 0; i < g->n && n < most; i++) {
        serve_slot *sl = &g->slot[i];
        if (sl->asked && !sl->answered) {
            g->who[n] = sl;
            g->ctxs[n] = sl->ctx;
            g->tokens[n] = sl->token;
            n++;
        }
    }
    g->busy = true;
    g->asking -= n;
    pthread_mutex_unlock(&g->mu);
    cf_err err = {.msg = ""};
    const size_t V = (size_t)g->n_vocab;
    const double t0 = cf_now_ms();
    int rc = cf_ctx_decode_group(g->ctxs, g->tokens, n, g->logits, &err);
    const double took = cf_now_ms() - t0;
    for (int i = 0; i < n; i++) {
        serve_slot *sl = g->who[i];
        /* a group that failed changed nothing: each token alone then, so
         * that the failure is only its own slot's */
        sl->rc = rc ? cf_ctx_decode(sl->ctx, &sl->token, 1, sl->logits, false, &sl->err) : 0;
        if (!rc)
            memcpy(sl->logits, g->logits + (size_t)i * V, V * sizeof *g->logits);
    }
    pthread_mutex_lock(&g->mu);
    for (int i = 0; i < n; i++)
        g->who[i]->answered = true;
    g->busy = false;
    g->step_ms = took;
    g->steps++;
    g->stepped += (uint64_t)n;
    g->opener_due = g->openers > 0;
    pthread_cond_broadcast(&g->cv);
}

/* Whether the asked tokens go now: the model is free, no opener's turn,
 * and every generating slot has asked or the first has waited enough. */
static double straggler_ms(const struct serve_slots *g)
{
    return g->step_ms / 2 > STRAGGLER_MS ? g->step_ms / 2 : STRAGGLER_MS;
}

static bool step_due(const struct serve_slots *g, double waited)
{
    return !g->busy && !g->opener_due && g->asking > 0 &&
           (g->asking >= g->generating || waited >= straggler_ms(g));
}

/* The session's decode of a generated token: into the next step. */
static int slot_decode(void *ud, cf_ctx *ctx, int32_t token, float *logits, cf_err *err)
{
    serve_slot *sl = ud;
    struct serve_slots *g = sl->all;
    pthread_mutex_lock(&g->mu);
    if (sl->state != SLOT_GENERATING) { /* its prompt is in: the model goes to the steps */
        sl->state = SLOT_GENERATING;
        g->generating++;
        g->busy = false;
    }
    sl->asked = true;
    sl->answered = false;
    sl->ctx = ctx;
    sl->token = token;
    sl->logits = logits;
    if (g->asking++ == 0)
        g->first_ask = cf_now_ms();
    pthread_cond_broadcast(&g->cv);
    while (!sl->answered)
        pthread_cond_wait(&g->cv, &g->mu);
    sl->asked = false;
    int rc = sl->rc;
    if (rc)
        *err = sl->err;
    pthread_mutex_unlock(&g->mu);
    return rc;
}

/* The steps' thread. */
static void *stepper_main(void *arg)
{
    struct serve_slots *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->quit) {
        const double waited = cf_now_ms() - g->first_ask;
        if (step_due(g, waited)) {
            step(g);
        } else if (g->asking == 0 || g->busy || g->opener_due) {
            pthread_cond_wait(&g->cv, &g->mu);
        } else { /* the stragglers' time */
            struct timespec ts;
            deadline_in(&ts, straggler_ms(g) - waited);
            pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* The model for a slot's prompt, the lock held: after the step that
 * waits, if any. */
static void acquire(serve_slot *sl)
{
    struct serve_slots *g = sl->all;
    g->openers++;
    while (g->busy || (g->asking > 0 && !g->opener_due))
        pthread_cond_wait(&g->cv, &g->mu);
    g->openers--;
    g->opener_due = false;
    g->busy = true;
    sl->state = SLOT_OPENING;
}

/* Before a prompt and between its batches: a step of the generating slots
 * first.  A generating slot's prompt (a request's next choice) takes the
 * model in turn, as a new request's does. */
static void slot_pause(void *ud)
{
    serve_slot *sl = ud;
    struct serve_slots *g = sl->all;
    pthread_mutex_lock(&g->mu);
    if (sl->state == SLOT_GENERATING) {
        g->generating--;
        pthread_cond_broadcast(&g->cv);
        acquire(sl);
    } else if (g->asking > 0) {
        const uint64_t before = g->steps;
        g->busy = false;
        pthread_cond_broadcast(&g->cv);
        while (g->steps == before || g->busy)
            pthread_cond_wait(&g->cv, &g->mu);
        g->busy = true;
    }
    pthread_mutex_unlock(&g->mu);
}

/* The model for opening a request. */
static void take_model(serve_slot *sl)
{
    pthread_mutex_lock(&sl->all->mu);
    acquire(sl);
    pthread_mutex_unlock(&sl->all->mu);
}

static void leave(serve_slot *sl)
{
    struct serve_slots *g = sl->all;
    pthread_mutex_lock(&g->mu);
    if (sl->state == SLOT_GENERATING)
        g->generating--;
    else
        g->busy = false; /* it held the model to the end (an error, a cancelled prompt) */
    sl->state = SLOT_IDLE;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* The leading messages of job j that slot sl's conversation has too. */
static int shared_messages(const serve_slot *sl, const serve_job *j)
{
    const int n = cf_session_n_messages(sl->s);
    int k = 0;
    while (k < n && k < j->req.n_msgs) {
        const cf_message *a = cf_session_message(sl->s, k), *b = &j->req.msgs[k];
        if (a->role != b->role || strcmp(a->content, b->content))
            break;
        k++;
    }
    return k;
}

/* Whether idle slot o is a better home than sl for job j (shared: sl's
 * shared_messages): it shares more of the conversation, or as much and
 * was used longer ago (an empty slot first), so that a new chat does not
 * evict one that may come back while another slot's cache is older. */
static bool better_home(const serve_slot *o, const serve_slot *sl, const serve_job *j, int shared)
{
    const int k = shared_messages(o, j);
    return k > shared || (k == shared && (o->used < sl->used || (o->used == sl->used && o->id < sl->id)));
}

/* The queue's next job for slot sl, the server's lock held: the first,
 * unless another idle slot is a better home for it; NULL when the server
 * stops and none is left. */
static serve_job *next_job(serve_slot *sl)
{
    server *sv = sl->all->sv;
    struct serve_slots *g = sl->all;
    sl->waiting = true;
    for (;;) {
        serve_job *j = sv->head;
        if (!j && sv->stopping)
            break;
        bool mine = j != NULL;
        if (j && !sv->stopping && g->n > 1) {
            const int own = shared_messages(sl, j);
            for (int i = 0; i < g->n && mine; i++)
                mine = &g->slot[i] == sl || !g->slot[i].waiting || !better_home(&g->slot[i], sl, j, own);
            if (!mine && g->offered != j) { /* the better slot takes it */
                g->offered = j;
                pthread_cond_broadcast(&sv->cv);
            }
        }
        if (mine) {
            sv->head = j->next;
            if (!sv->head)
                sv->tail = NULL;
            sv->queued--;
            g->offered = NULL;
            sl->waiting = false;
            sl->used = ++g->uses;
            return j;
        }
        pthread_cond_wait(&sv->cv, &sv->mu);
    }
    sl->waiting = false;
    return NULL;
}

static void *slot_main(void *arg)
{
    serve_slot *sl = arg;
    server *sv = sl->all->sv;
    for (;;) {
        pthread_mutex_lock(&sv->mu);
        serve_job *j = next_job(sl);
        bool stopping = sv->stopping;
        pthread_mutex_unlock(&sv->mu);
        if (!j)
            break;
        if (stopping) {
            serve_error(sv, j->fd, 503, "shutting_down", NULL, "the server is shutting down");
        } else {
            j->s = sl->s;
            take_model(sl);
            serve_reply(sv, j);
        }
        /* a candidate for the next job before it says it is idle (and
         * before the connection closes): its client may send its next turn
         * at once, and no other slot may take that one meanwhile; its
         * session no longer changes, so the others may read it */
        pthread_mutex_lock(&sv->mu);
        sl->waiting = true;
        pthread_mutex_unlock(&sv->mu);
        if (!stopping)
            leave(sl);
        serve_job_free(j);
    }
    return NULL;
}

static void free_slots(struct serve_slots *g)
{
    for (int i = 0; g->slot && i < g->n; i++)
        cf_session_free(g->slot[i].s);
    free(g->slot);
    free(g->ctxs);
    free(g->tokens);
    free(g->logits);
    free(g->who);
    cf_model_free(g->model);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

int serve_slots_open(server *sv, cf_err *err)
{
    const cf_serve_params *p = sv->p;
    const int n = p->n_parallel > 0 ? p->n_parallel : 1;
    if (n > CF_SERVE_MAX_PARALLEL)
        return cf_fail_as(err, CF_E_USAGE, "--parallel %d: at most %d slots", n, CF_SERVE_MAX_PARALLEL);
    if (n > 1 && (p->session.draft_model || p->session.lookup))
        return cf_fail_as(err, CF_E_USAGE, "speculative decoding (-md, --lookup) works with "
                                           "--parallel 1 only");
    struct serve_slots *g = calloc(1, sizeof *g);
    if (!g)
        return cf_fail(err, "out of memory");
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->sv = sv;
    g->n = n;
    if (cf_model_load_as(p->session.model_path, p->session.tokenizer_path, p->session.load_mode,
                         &g->model, err)) {
        free_slots(g);
        return cf_err_class(err, CF_E_MODEL);
    }
    /* -c is the whole context, shared evenly, as llama-server shares it */
    const cf_hparams *hp = cf_model_hparams(g->model);
    const int total = p->session.n_ctx > 0              ? p->session.n_ctx
                      : hp->n_ctx_train < 4096 ? hp->n_ctx_train
                                               : 4096;
    g->n_ctx = total / n;
    g->n_vocab = hp->n_vocab;
    if (g->n_ctx < 16) {
        cf_fail_as(err, CF_E_USAGE, "-c %d shared by --parallel %d leaves %d tokens a slot (16 at "
                   "least)", total, n, g->n_ctx);
        free_slots(g);
        return -1;
    }
    g->slot = calloc((size_t)n, sizeof *g->slot);
    g->ctxs = calloc((size_t)n, sizeof *g->ctxs);
    g->tokens = calloc((size_t)n, sizeof *g->tokens);
    g->who = calloc((size_t)n, sizeof *g->who);
    g->logits = malloc((size_t)n * (size_t)g->n_vocab * sizeof *g->logits);
    if (!g->slot || !g->ctxs || !g->tokens || !g->who || !g->logits) {
        free_slots(g);
        return cf_fail(err, "out of memory");
    }
    cf_session_params sp = p->session;
    sp.model = g->model;
    sp.n_ctx = g->n_ctx;
    sp.messages_as_text = true; /* a reply is the same on any slot, after any request */
    if (n > 1 && sp.n_batch <= 0)
        sp.n_batch = PREFILL_BATCH;
    for (int i = 0; i < n; i++) {
        serve_slot *sl = &g->slot[i];
        sl->all = g;
        sl->id = i;
        if (cf_session_new(&sp, &sl->s, err)) {
            free_slots(g);
            return -1;
        }
        if (n > 1) /* one slot decodes alone, as a server without slots */
            cf_session_set_group(sl->s, slot_decode, slot_pause, sl);
    }
    sv->slots = g;
    sv->s = g->slot[0].s;
    return 0;
}

int serve_slots_start(server *sv, cf_err *err)
{
    struct serve_slots *g = sv->slots;
    if (g->n > 1) {
        if (pthread_create(&g->stepper, NULL, stepper_main, g))
            return cf_fail(err, "cannot start the slots' stepping thread");
        g->stepper_started = true;
    }
    for (int i = 0; i < g->n; i++) {
        if (pthread_create(&g->slot[i].th, NULL, slot_main, &g->slot[i])) {
            serve_slots_stop(sv);
            return cf_fail(err, "cannot start the thread of slot %d", i);
        }
        g->slot[i].started = true;
    }
    return 0;
}

void serve_slots_stop(server *sv)
{
    struct serve_slots *g = sv->slots;
    pthread_mutex_lock(&sv->mu);
    sv->stopping = true;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    for (int i = 0; i < g->n; i++)
        if (g->slot[i].started) {
            pthread_join(g->slot[i].th, NULL);
            g->slot[i].started = false;
        }
    if (g->stepper_started) {
        pthread_mutex_lock(&g->mu);
        g->quit = true;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->stepper, NULL);
        g->stepper_started = false;
    }
    if (g->n > 1 && g->steps)
        serve_log(sv, "slots: %llu tokens decoded in %llu steps (%.2f a step)",
                  (unsigned long long)g->stepped, (unsigned long long)g->steps,
                  (double)g->stepped / (double)g->steps);
}

void serve_slots_free(server *sv)
{
    if (sv->slots)
        free_slots(sv->slots);
    sv->slots = NULL;
    sv->s = NULL;
}

char *serve_slots_encode(const server *sv, size_t *len)
{
    struct serve_slots *g = sv->slots;
    static const char *const names[] = {"idle", "prompt", "generating"};
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    if (!f)
        return NULL;
    pthread_mutex_lock(&g->mu);
    fputc('[', f);
    for (int i = 0; i < g->n; i++)
        fprintf(f, "%s{\"id\":%d,\"n_ctx\":%d,\"is_processing\":%s,\"state\":\"%s\"}",
                i ? "," : "", i, g->n_ctx, g->slot[i].state != SLOT_IDLE ? "true" : "false",
                names[g->slot[i].state]);
    fputc(']', f);
    pthread_mutex_unlock(&g->mu);
    return fclose(f) ? (free(out), NULL) : out;
}
