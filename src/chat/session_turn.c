/* Turns: prefill what the cache lacks and open the reply (generated in
 * session_reply.c); undo, regenerate, clear, a new system prompt; the
 * context shift. */
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

void sess_truncate(cf_session *s, int n)
{
    if (n < (int)s->cache.n) {
        cf_ctx_kv_truncate(s->ctx, n, NULL);
        s->cache.n = (size_t)n;
        s->have_logits = false;
    }
    /* what lies beyond the cache may render differently from now on */
    for (int i = 0; i < s->n_msgs; i++)
        if (s->msgs[i].start > n)
            s->msgs[i].start = -1;
}

static int push_tokens(cf_tokens *v, const cf_token *ids, size_t n, cf_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (cf_tokens_push(v, ids[i]))
            return cf_fail(err, "out of memory");
    return 0;
}

/* ---- the context shift ------------------------------------------------------
 * Whole turns go, oldest first; the system prompt stays.  The kept cells
 * move down with cf_ctx_kv_discard (their keys re-rotated), so nothing kept
 * is evaluated again. */

/* The index of the k-th user message after message `from`, or -1. */
static int user_after(const cf_session *s, int from, int k)
{
    for (int i = from + 1; i < s->n_msgs; i++)
        if (s->msgs[i].pub.role == CF_ROLE_USER && --k == 0)
            return i;
    return -1;
}

int sess_shift_plan(const cf_session *s, int used, int need, int *n_turns)
{
    *n_turns = 0;
    int first = sess_first_user(s);
    if (first >= s->n_msgs || s->msgs[first].start < 0)
        return 0;
    const int n_ctx = cf_ctx_n_ctx(s->ctx), keep = s->msgs[first].start;
    const int want_free = (n_ctx - keep) / 2;
    int dropped = 0, next;
    /* turn k runs from its user message's start to the next one's; the
     * last turn (the one being answered) always stays */
    while ((next = user_after(s, first, *n_turns + 1)) >= 0 && s->msgs[next].start >= keep) {
        dropped = s->msgs[next].start - keep;
        ++*n_turns;
        if (n_ctx - (used - dropped) - need >= want_free)
            break;
    }
    return dropped;
}

int sess_shift(cf_session *s, int n_turns, cf_err *err)
{
    int first = sess_first_user(s), next = user_after(s, first, n_turns);
    int p0 = s->msgs[first].start, p1 = s->msgs[next].start, n = (int)s->cache.n;
    int q1 = p1 < n ? p1 : n;
    if (p0 < q1) {
        if (cf_ctx_kv_discard(s->ctx, p0, q1, err))
            return -1;
        memmove(s->cache.ids + p0, s->cache.ids + q1, (size_t)(n - q1) * sizeof *s->cache.ids);
        s->cache.n -= (size_t)(q1 - p0);
    }
    for (int i = first; i < next; i++)
        sess_msg_free(&s->msgs[i]);
    memmove(s->msgs + first, s->msgs + next, (size_t)(s->n_msgs - next) * sizeof *s->msgs);
    s->n_msgs -= next - first;
    for (int i = first; i < s->n_msgs; i++)
        if (s->msgs[i].start >= 0)
            s->msgs[i].start -= p1 - p0;
    s->stats.shifted_tokens += p1 - p0;
    s->dirty = true;
    return 0;
}

/* ---- prefill ------------------------------------------------------------------ */

/* Keep what the cache shares with the rendering, find the turn starts. */
static void sync_to(cf_session *s, const cf_tokens *full, const char *text, size_t len)
{
    sess_truncate(s, sess_common_prefix(&s->cache, full));
    sess_find_starts(s, full, text, len);
}

/* Evaluate what the cache lacks of full and open a reply after it. */
static int open_on(cf_session *s, const cf_tokens *full, const splitter *sp0, double t0,
                   cf_err *err)
{
    /* at least the last token is evaluated: its logits start the reply */
    if (s->cache.n == full->n)
        sess_truncate(s, (int)full->n - 1);
    size_t from = s->cache.n;
    double tp = cf_now_ms();
    cf_ctx_set_cancel(s->ctx, s->cancel, s->cancel_ud);
    if (s->group_pause)
        s->group_pause(s->group_ud);
    cf_ctx_set_pause(s->ctx, s->group_pause, s->group_ud);
    int decoded = cf_ctx_decode(s->ctx, full->ids + from, (int)(full->n - from), s->logits, false, err);
    cf_ctx_set_pause(s->ctx, NULL, NULL);
    cf_ctx_set_cancel(s->ctx, NULL, NULL);
    if (decoded || push_tokens(&s->cache, full->ids + from, full->n - from, err))
        return -1;
    s->have_logits = true;
    s->stats.prompt_tokens = (int)(full->n - from);
    s->stats.prompt_ms = cf_now_ms() - tp;
    /* the penalties see the context, as llama.cpp's sampler does */
    cf_sampler_reset(s->smp);
    for (size_t i = 0; i < s->cache.n; i++)
        cf_sampler_accept(s->smp, s->cache.ids[i]);
    if (sess_push_msg(s, CF_ROLE_ASSISTANT, "", 0, err))
        return -1;
    sess_reply_open(s, t0, sp0);
    return 0;
}

/* Render the conversation with the generation prompt, make room, evaluate
 * what the cache lacks, and open a reply. */
static int prepare_reply(cf_session *s, double t0, cf_err *err)
{
    const int n_ctx = cf_ctx_n_ctx(s->ctx);
    cf_tokens full = {0};
    char *text = NULL;
    size_t len = 0;
    int rc = -1;
    memset(&s->stats, 0, sizeof s->stats);
    if (sess_prompt_tokens(s, s->n_msgs, true, &full, &text, &len, err))
        goto out;
    sync_to(s, &full, text, len);
    if ((int)full.n + 1 > n_ctx) {
        int n_turns, drop = sess_shift_plan(s, (int)full.n, 1, &n_turns);
        if ((int)full.n - drop + 1 > n_ctx) {
            cf_fail_as(err, CF_E_CONTEXT,
                       "the message does not fit in the context: the prompt needs %d tokens "
                       "(after dropping every earlier turn), the context holds %d",
                       (int)full.n - drop + 1, n_ctx);
            goto out;
        }
        free(text);
        text = NULL;
        if (sess_shift(s, n_turns, err) ||
            sess_prompt_tokens(s, s->n_msgs, true, &full, &text, &len, err))
            goto out;
        sync_to(s, &full, text, len);
        if ((int)full.n + 1 > n_ctx) {
            cf_fail_as(err, CF_E_CONTEXT,
                       "the message does not fit in the context (%d tokens, %d positions)",
                       (int)full.n + 1, n_ctx);
            goto out;
        }
    }
    if (full.n == 0) {
        cf_fail(err, "the chat template rendered nothing");
        goto out;
    }
    splitter sp0;
    sess_prime_split(s, text, len, &sp0);
    rc = open_on(s, &full, &sp0, t0, err);
out:
    cf_tokens_free(&full);
    free(text);
    return rc;
}

int cf_session_begin_raw(cf_session *s, const char *prompt, cf_err *err)
{
    double t0 = cf_now_ms();
    sess_close_reply(s);
    if (s->remote)
        return cf_fail_as(err, CF_E_USAGE, "a remote model continues only chats, not raw text");
    cf_tokens full = {0};
    /* special tokens written in it are parsed, as llama-server's completions parse them */
    int rc = cf_tokenize(s->tok, prompt, strlen(prompt), true, true, &full, err);
    if (rc == 0 && (int)full.n + 1 > cf_ctx_n_ctx(s->ctx))
        rc = cf_fail_as(err, CF_E_CONTEXT, "the prompt does not fit in the context: it needs %d "
                        "tokens, the context holds %d", (int)full.n + 1, cf_ctx_n_ctx(s->ctx));
    else if (rc == 0 && full.n == 0)
        rc = cf_fail_as(err, CF_E_USAGE, "the prompt is empty");
    if (rc == 0) {
        while (s->n_msgs > 0)
            sess_pop_msg(s);
        memset(&s->stats, 0, sizeof s->stats);
        sess_truncate(s, sess_common_prefix(&s->cache, &full));
        splitter sp0; /* the text goes on as it is: no reasoning to split out */
        split_init(&sp0, RF_NONE);
        rc = open_on(s, &full, &sp0, t0, err);
    }
    cf_tokens_free(&full);
    return rc;
}

int sess_local_open_reply(cf_session *s, double t0, bool forked, cf_err *err)
{
    (void)forked; /* a failure here is the caller's to undo */
    return prepare_reply(s, t0, err);
}

int sess_begin_reply(cf_session *s, const char *user_text, bool forked, cf_err *err)
{
    double t0 = cf_now_ms();
    sess_close_reply(s);
    const cf_turn_stats stats = s->stats;
    const bool dirty = s->dirty;
    if (sess_push_msg(s, CF_ROLE_USER, user_text, strlen(user_text), err))
        return -1;
    if (s->eng->open_reply(s, t0, forked, err)) {
        sess_pop_msg(s);
        /* a message that was not taken leaves the session as it was
         * (unless a context shift made room for it first) */
        if (!s->stats.shifted_tokens) {
            s->stats = stats;
            s->dirty = dirty;
        }
        return -1;
    }
    return 0;
}

void cf_session_set_cancel(cf_session *s, bool (*cancel)(void *ud), void *ud)
{
    s->cancel = cancel;
    s->cancel_ud = ud;
}

void cf_session_set_group(cf_session *s, cf_session_decode_fn decode, void (*pause)(void *ud),
                          void *ud)
{
    s->group_decode = decode;
    s->group_pause = pause;
    s->group_ud = ud;
}

int cf_session_begin_reply(cf_session *s, const char *user_text, cf_err *err)
{
    return sess_begin_reply(s, user_text, false, err);
}

/* ---- changing the conversation -------------------------------------------------- */

static int last_user(const cf_session *s)
{
    int i = s->n_msgs - 1;
    while (i >= 0 && s->msgs[i].pub.role != CF_ROLE_USER)
        i--;
    return i;
}

/* Message i, taken out of the list (not freed). */
static sess_msg take_msg(cf_session *s, int i)
{
    sess_msg m = s->msgs[i];
    memmove(s->msgs + i, s->msgs + i + 1, (size_t)(s->n_msgs - i - 1) * sizeof *s->msgs);
    s->n_msgs--;
    return m;
}

/* Put m in at index i (where one was taken out: there is room). */
static void put_msg(cf_session *s, int i, sess_msg m)
{
    memmove(s->msgs + i + 1, s->msgs + i, (size_t)(s->n_msgs - i) * sizeof *s->msgs);
    s->msgs[i] = m;
    s->n_msgs++;
}

/* Cache what the conversation as it now stands shares with the cache. */
int sess_local_resync(cf_session *s, cf_err *err)
{
    cf_tokens full = {0};
    char *text = NULL;
    size_t len;
    int rc = sess_prompt_tokens(s, s->n_msgs, false, &full, &text, &len, err);
    if (rc == 0)
        sync_to(s, &full, text, len);
    cf_tokens_free(&full);
    free(text);
    return rc;
}

/* The local engine's: the cache is rewound to where their turn began. */
void sess_local_drop_from(cf_session *s, int i)
{
    int start = s->msgs[i].start;
    while (s->n_msgs > i)
        sess_pop_msg(s);
    if (start >= 0)
        sess_truncate(s, start < (int)s->cache.n ? start : (int)s->cache.n);
    else if (sess_local_resync(s, NULL))
        sess_truncate(s, 0);
    s->have_logits = false;
}

void sess_drop_from(cf_session *s, int i)
{
    s->eng->drop_from(s, i);
}

int cf_session_undo(cf_session *s, cf_err *err)
{
    sess_close_reply(s);
    int u = last_user(s);
    if (u < 0)
        return cf_fail(err, "there is nothing to undo");
    sess_drop_from(s, u);
    return 0;
}

int cf_session_regen(cf_session *s, cf_err *err)
{
    double t0 = cf_now_ms();
    sess_close_reply(s);
    if (s->n_msgs == 0 || s->msgs[s->n_msgs - 1].pub.role != CF_ROLE_ASSISTANT)
        return cf_fail(err, "there is no reply to regenerate");
    /* the old reply stays on the branch it was on */
    if (sess_fork(s, NULL, err))
        return -1;
    sess_pop_msg(s);
    if (s->eng->open_reply(s, t0, true, err)) {
        sess_unfork(s);
        return -1;
    }
    return 0;
}

int cf_session_clear(cf_session *s, cf_err *err)
{
    (void)err;
    sess_close_reply(s);
    int first = sess_first_user(s);
    if (first < s->n_msgs)
        sess_drop_from(s, first);
    return 0;
}

int cf_session_set_system(cf_session *s, const char *text, cf_err *err)
{
    sess_close_reply(s);
    bool had = s->n_msgs > 0 && s->msgs[0].pub.role == CF_ROLE_SYSTEM;
    sess_msg old = had ? take_msg(s, 0) : (sess_msg){0};
    int rc = 0;
    if (text && (rc = sess_push_msg(s, CF_ROLE_SYSTEM, text, strlen(text), err)) == 0)
        put_msg(s, 0, take_msg(s, s->n_msgs - 1));
    /* the cache keeps what still agrees; the rest is prefilled lazily (a
     * template that renders nothing before a user message: all of it) */
    if (rc == 0 && (rc = s->eng->resync(s, err)) != 0 && sess_first_user(s) == s->n_msgs) {
        sess_truncate(s, 0);
        rc = 0;
    }
    if (rc != 0 && text) {
        sess_msg m = take_msg(s, 0);
        sess_msg_free(&m);
    }
    if (rc) { /* a template that cannot render it: nothing changes */
        if (had)
            put_msg(s, 0, old);
        return -1;
    }
    if (had)
        sess_msg_free(&old);
    s->have_logits = false;
    s->dirty = true;
    return 0;
}
