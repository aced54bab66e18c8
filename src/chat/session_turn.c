/* Turns: prefill what the cache lacks, generate the reply token by token,
 * stop at end-of-generation tokens, stop strings and n-predict; undo,
 * regenerate, clear, a new system prompt; the context shift.
 *
 * The reply is lazy by one token: cf_session_next samples a token and
 * hands out its text at once, and evaluates it only on the next call, so a
 * reply that ends never pays for evaluating its last token. */
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

static int shift(cf_session *s, int n_turns, cf_err *err)
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
static void sync_to(cf_session *s, const cf_tokens *full)
{
    sess_truncate(s, sess_common_prefix(&s->cache, full));
    sess_find_starts(s, full);
}

/* Render the conversation with the generation prompt, make room, evaluate
 * what the cache lacks, and open a reply. */
static int prepare_reply(cf_session *s, double t0, cf_err *err)
{
    const int n_ctx = cf_ctx_n_ctx(s->ctx);
    cf_tokens full = {0};
    int rc = -1;
    memset(&s->stats, 0, sizeof s->stats);
    if (sess_prompt_tokens(s, s->n_msgs, true, &full, err))
        goto out;
    sync_to(s, &full);
    if ((int)full.n + 1 > n_ctx) {
        int n_turns, drop = sess_shift_plan(s, (int)full.n, 1, &n_turns);
        if ((int)full.n - drop + 1 > n_ctx) {
            cf_fail_as(err, CF_E_CONTEXT,
                       "the message does not fit in the context: the prompt needs %d tokens "
                       "(after dropping every earlier turn), the context holds %d",
                       (int)full.n - drop + 1, n_ctx);
            goto out;
        }
        if (shift(s, n_turns, err) || sess_prompt_tokens(s, s->n_msgs, true, &full, err))
            goto out;
        sync_to(s, &full);
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
    /* at least the last token is evaluated: its logits start the reply */
    if (s->cache.n == full.n)
        sess_truncate(s, (int)full.n - 1);
    size_t from = s->cache.n;
    double tp = sess_now_ms();
    if (cf_ctx_decode(s->ctx, full.ids + from, (int)(full.n - from), s->logits, false, err) ||
        push_tokens(&s->cache, full.ids + from, full.n - from, err))
        goto out;
    s->have_logits = true;
    s->stats.prompt_tokens = (int)(full.n - from);
    s->stats.prompt_ms = sess_now_ms() - tp;
    /* the penalties see the context, as llama.cpp's sampler does */
    cf_sampler_reset(s->smp);
    for (size_t i = 0; i < s->cache.n; i++)
        cf_sampler_accept(s->smp, s->cache.ids[i]);
    if (sess_push_msg(s, CF_ROLE_ASSISTANT, "", 0, err))
        goto out;
    sess_reply *r = &s->reply;
    r->active = true;
    r->finished = false;
    r->pending = CF_TOKEN_NULL;
    r->n_gen = 0;
    r->len = r->shown = r->stop_at = 0;
    memset(&r->utf8, 0, sizeof r->utf8);
    r->t0 = t0;
    rc = 0;
out:
    cf_tokens_free(&full);
    return rc;
}

int cf_session_begin_reply(cf_session *s, const char *user_text, cf_err *err)
{
    double t0 = sess_now_ms();
    sess_close_reply(s);
    if (sess_push_msg(s, CF_ROLE_USER, user_text, strlen(user_text), err))
        return -1;
    if (prepare_reply(s, t0, err)) {
        sess_pop_msg(s);
        return -1;
    }
    return 0;
}

/* ---- generation --------------------------------------------------------------- */

static int reserve_text(sess_reply *r, size_t more)
{
    size_t need = r->len + more + 1;
    if (need > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < need)
            cap *= 2;
        char *t = realloc(r->text, cap);
        if (!t)
            return -1;
        r->text = t;
        r->cap = cap;
    }
    return 0;
}

/* The stop strings: the template's (list 0) and the user's (list 1). */
static const char *const *stop_list(const cf_session *s, int which)
{
    return which ? (const char *const *)s->stops : cf_chat_template_stops(s->tmpl);
}

/* Where the first complete stop string in the reply begins (searching
 * text that arrived since `since`), or SIZE_MAX. */
static size_t find_stop(const cf_session *s, size_t since)
{
    const sess_reply *r = &s->reply;
    size_t best = SIZE_MAX;
    for (int w = 0; w < 2; w++)
        for (const char *const *st = stop_list(s, w); st && *st; st++) {
            size_t n = strlen(*st), from = since >= n ? since - n + 1 : 0;
            const char *m = n ? memmem(r->text + from, r->len - from, *st, n) : NULL;
            if (m && (size_t)(m - r->text) < best)
                best = (size_t)(m - r->text);
        }
    return best;
}

/* Bytes at the end of the reply that could begin a stop string: held back. */
static size_t held_back(const cf_session *s)
{
    const sess_reply *r = &s->reply;
    size_t hold = 0;
    for (int w = 0; w < 2; w++)
        for (const char *const *st = stop_list(s, w); st && *st; st++) {
            size_t k = strlen(*st);
            k = k > 0 ? k - 1 : 0; /* a proper prefix */
            for (k = k < r->len ? k : r->len; k > hold; k--)
                if (memcmp(r->text + r->len - k, *st, k) == 0) {
                    hold = k;
                    break;
                }
        }
    return hold;
}

/* Pass text[shown, upto) to the caller (whole UTF-8 characters only;
 * flush: also what is left of an incomplete one). */
static const char *show(cf_session *s, size_t upto, bool flush)
{
    sess_reply *r = &s->reply;
    size_t n = upto > r->shown ? upto - r->shown : 0;
    size_t need = CF_UTF8_STREAM_OUT(n) + 4;
    if (need > r->out_cap) {
        char *o = realloc(r->out, need);
        if (!o)
            return "";
        r->out = o;
        r->out_cap = need;
    }
    /* a reply with no text yet has no buffer: no offset on NULL */
    size_t k = cf_utf8_stream_feed(&r->utf8, n ? r->text + r->shown : "", n, r->out);
    if (flush)
        k += cf_utf8_stream_flush(&r->utf8, r->out + k);
    r->out[k] = '\0';
    r->shown += n;
    return r->out;
}

/* The reply as the assistant's message: its text up to `end` (valid
 * UTF-8), its tokens those sampled, cut before a stop string. */
static void settle_message(cf_session *s, size_t end)
{
    sess_reply *r = &s->reply;
    sess_msg *m = &s->msgs[s->n_msgs - 1];
    char *text = sess_utf8_clean(r->text ? r->text : "", end);
    if (text) {
        free((char *)m->pub.content);
        m->pub.content = text;
    }
    if (end == r->len)
        return;
    /* keep the tokens that lie wholly before the stop string, and the text
     * between them and it as tokens of its own */
    size_t kept = 0, at = 0;
    while (kept < m->ids.n) {
        size_t len = cf_tok_piece(s->tok, m->ids.ids[kept], false).len;
        if (at + len > end)
            break;
        at += len;
        kept++;
    }
    if (kept < m->ids.n && m->ids.ids[kept] == r->pending)
        r->pending = CF_TOKEN_NULL;
    cf_tok_part parts[2] = {
        {.kind = CF_PART_TOKENS, .ids = m->ids.ids, .n_ids = kept},
        {.kind = CF_PART_LITERAL, .text = r->text + at, .len = end - at},
    };
    cf_tokens ids = {0};
    if (cf_tokenize_parts(s->tok, parts, 2, false, &ids, NULL) == 0) {
        cf_tokens_free(&m->ids);
        m->ids = ids;
    } else {
        cf_tokens_free(&ids);
        m->ids.n = kept;
    }
}

/* End the reply; the last of its text comes back (NULL when none). */
static const char *finish(cf_session *s, cf_stop_reason why)
{
    sess_reply *r = &s->reply;
    size_t end = why == CF_STOP_STRING ? r->stop_at : r->len;
    r->finished = true;
    s->stats.stop = why;
    s->have_logits = false;
    settle_message(s, end);
    const char *rest = show(s, end, true);
    s->dirty = true;
    return rest[0] ? rest : NULL;
}

/* Room for one more token, shifting old turns out if need be. */
static int make_room(cf_session *s, cf_err *err)
{
    if ((int)s->cache.n + 1 <= cf_ctx_n_ctx(s->ctx))
        return 1;
    int n_turns;
    sess_shift_plan(s, (int)s->cache.n, 1, &n_turns);
    if (n_turns == 0)
        return 0;
    return shift(s, n_turns, err) ? -1 : 1;
}

static int next_piece(cf_session *s, const char **piece, cf_err *err)
{
    sess_reply *r = &s->reply;
    const char *rest;
    if (r->pending >= 0) {
        if (s->n_predict >= 0 && r->n_gen >= s->n_predict)
            goto stop_n_predict;
        int room = make_room(s, err);
        if (room < 0)
            return -1;
        if (room == 0) {
            rest = finish(s, CF_STOP_CONTEXT_FULL);
            goto last;
        }
        if (cf_ctx_decode(s->ctx, &r->pending, 1, s->logits, false, err) ||
            push_tokens(&s->cache, &r->pending, 1, err))
            return -1;
        r->pending = CF_TOKEN_NULL;
    } else if (s->n_predict >= 0 && r->n_gen >= s->n_predict) {
        goto stop_n_predict;
    }
    cf_token t = cf_sampler_sample(s->smp, s->logits);
    if (cf_tok_is_eog(s->tok, t)) {
        rest = finish(s, CF_STOP_EOG);
        goto last;
    }
    cf_sampler_accept(s->smp, t);
    cf_str p = cf_tok_piece(s->tok, t, false);
    sess_msg *m = &s->msgs[s->n_msgs - 1];
    if (cf_tokens_push(&m->ids, t) || reserve_text(r, p.len))
        return cf_fail(err, "out of memory");
    r->pending = t;
    r->n_gen++;
    s->stats.gen_tokens++;
    size_t since = r->len;
    for (size_t i = 0; i < p.len; i++) /* a NUL (<0x00>) would end the text early */
        if (p.ptr[i])
            r->text[r->len++] = p.ptr[i];
    size_t stop = find_stop(s, since);
    if (stop != SIZE_MAX) {
        r->stop_at = stop;
        rest = finish(s, CF_STOP_STRING);
        goto last;
    }
    *piece = show(s, r->len - held_back(s), false);
    return CF_NEXT_TOKEN;
stop_n_predict:
    rest = finish(s, CF_STOP_N_PREDICT);
last:
    if (!rest)
        return CF_NEXT_DONE;
    *piece = rest;
    return CF_NEXT_TOKEN;
}

int cf_session_next(cf_session *s, const char **piece, cf_err *err)
{
    sess_reply *r = &s->reply;
    *piece = "";
    if (!r->active || r->finished)
        return CF_NEXT_DONE;
    double t = sess_now_ms();
    int rc = next_piece(s, piece, err);
    double now = sess_now_ms();
    if (s->stats.ttft_ms == 0)
        s->stats.ttft_ms = now - r->t0;
    s->stats.gen_ms += now - t;
    return rc;
}

void cf_session_end_reply(cf_session *s, bool cut)
{
    sess_reply *r = &s->reply;
    if (!r->active)
        return;
    if (!r->finished) {
        finish(s, CF_STOP_USER);
        s->msgs[s->n_msgs - 1].pub.cut = cut;
    }
    r->active = false;
}

void sess_close_reply(cf_session *s)
{
    cf_session_end_reply(s, true);
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
static int resync(cf_session *s, cf_err *err)
{
    cf_tokens full = {0};
    int rc = sess_prompt_tokens(s, s->n_msgs, false, &full, err);
    if (rc == 0)
        sync_to(s, &full);
    cf_tokens_free(&full);
    return rc;
}

/* Drop messages i.. and rewind the cache to where their turn began. */
static void drop_from(cf_session *s, int i)
{
    int start = s->msgs[i].start;
    while (s->n_msgs > i)
        sess_pop_msg(s);
    if (start >= 0)
        sess_truncate(s, start < (int)s->cache.n ? start : (int)s->cache.n);
    else if (resync(s, NULL))
        sess_truncate(s, 0);
    s->have_logits = false;
}

int cf_session_undo(cf_session *s, cf_err *err)
{
    sess_close_reply(s);
    int u = last_user(s);
    if (u < 0)
        return cf_fail(err, "there is nothing to undo");
    drop_from(s, u);
    return 0;
}

int cf_session_regen(cf_session *s, cf_err *err)
{
    double t0 = sess_now_ms();
    sess_close_reply(s);
    if (s->n_msgs == 0 || s->msgs[s->n_msgs - 1].pub.role != CF_ROLE_ASSISTANT)
        return cf_fail(err, "there is no reply to regenerate");
    sess_msg old = take_msg(s, s->n_msgs - 1);
    if (prepare_reply(s, t0, err)) {
        put_msg(s, s->n_msgs, old); /* the old reply stays */
        return -1;
    }
    sess_msg_free(&old);
    return 0;
}

int cf_session_clear(cf_session *s, cf_err *err)
{
    (void)err;
    sess_close_reply(s);
    int first = sess_first_user(s);
    if (first < s->n_msgs)
        drop_from(s, first);
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
    if (rc == 0 && (rc = resync(s, err)) != 0 && sess_first_user(s) == s->n_msgs) {
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
