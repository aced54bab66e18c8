/* A reply as it is generated: sample (or take the test script's token),
 * evaluate, stop at end-of-generation tokens, stop strings and n-predict,
 * and split the text into reasoning and content as it streams.
 *
 * The reply is lazy by one token: cf_session_next samples a token and
 * hands out its text at once, and evaluates it only on the next call, so a
 * reply that ends never pays for evaluating its last token.
 *
 * The raw text is the tokens' pieces, with the text of control tokens
 * that are the reasoning family's markup (gpt-oss's <|channel|>, ...) kept
 * in.  Stop strings are looked for in it; what could begin one is held
 * back, and what could begin a reasoning marker is held back by the
 * splitter.  When the reply ends, a fresh split of the whole text makes
 * the message: its content and reasoning, and for each the sampled tokens
 * that lie wholly inside it (text cut through a token is tokenized on its
 * own), so the model later sees its parts as it wrote them. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "confab/tools.h"
#include "session_internal.h"

/* ---- the raw text ------------------------------------------------------------ */

cf_str sess_raw_piece(const cf_session *s, cf_token t)
{
    cf_str p = cf_tok_piece(s->tok, t, false);
    if (p.len == 0 && (s->fam != RF_NONE || s->tools) && cf_tok_is_control(s->tok, t)) {
        cf_str text = cf_tok_piece(s->tok, t, true);
        if (reasoning_is_markup(s->fam, text.ptr, text.len) ||
            (s->tools && cf_tools_is_markup(s->tool_fmt, text.ptr, text.len)))
            return text;
    }
    return p;
}

/* An end-of-generation token that ends the reply (gpt-oss's <|end|> only
 * closes a channel). */
bool sess_ends_reply(const cf_session *s, cf_token t)
{
    if (!cf_tok_is_eog(s->tok, t))
        return false;
    cf_str text = cf_tok_piece(s->tok, t, true);
    return !reasoning_continues(s->fam, text.ptr, text.len);
}

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
    if (r->ids.n + 1 > r->ends_cap) {
        size_t cap = r->ends_cap ? 2 * r->ends_cap : 64;
        size_t *e = realloc(r->ends, cap * sizeof *e);
        if (!e)
            return -1;
        r->ends = e;
        r->ends_cap = cap;
    }
    return 0;
}

/* ---- stop strings -------------------------------------------------------------- */

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

/* ---- what the caller sees -------------------------------------------------------- */

static void emit_shown(void *ud, split_kind kind, size_t at, size_t len)
{
    sess_reply *r = ud;
    size_t n = strlen(r->out[kind]);
    n += cf_utf8_stream_feed(&r->utf8[kind], r->text + at, len, r->out[kind] + n);
    r->out[kind][n] = '\0';
}

/* Split text[.., upto) for the caller, each part whole UTF-8 characters
 * (flush: the text ends; what is left of an incomplete one too). */
static void show(cf_session *s, size_t upto, bool flush, cf_reply_part *part)
{
    sess_reply *r = &s->reply;
    *part = (cf_reply_part){"", "", false, -1};
    /* the splitter may hand out held blanks from before what it consumed */
    size_t from = r->sp.ws_len && r->sp.ws_at < r->sp.pos ? r->sp.ws_at : r->sp.pos;
    size_t need = CF_UTF8_STREAM_OUT(upto > from ? upto - from : 0) + 8;
    for (int k = 0; k < 2; k++)
        if (need > r->out_cap[k]) {
            char *o = realloc(r->out[k], need);
            if (!o)
                return;
            r->out[k] = o;
            r->out_cap[k] = need;
        }
    r->out[0][0] = r->out[1][0] = '\0';
    /* a reply with no text yet has no buffer: no offset on NULL */
    if (r->text)
        split_feed(&r->sp, r->text, upto, flush, emit_shown, r);
    if (flush)
        for (int k = 0; k < 2; k++) {
            size_t n = strlen(r->out[k]);
            r->out[k][n + cf_utf8_stream_flush(&r->utf8[k], r->out[k] + n)] = '\0';
        }
    r->shown = upto;
    part->content = r->out[SPLIT_CONTENT];
    part->reasoning = r->out[SPLIT_REASONING];
    part->thinking = split_in_reasoning(&r->sp);
}

/* ---- the message ----------------------------------------------------------------------- */

/* The body ranges of a split, in order. */
typedef struct ranges {
    struct range {
        split_kind kind;
        size_t at, len;
    } *v;
    size_t n, cap;
    bool oom;
} ranges;

static void add_range(void *ud, split_kind kind, size_t at, size_t len)
{
    ranges *rg = ud;
    if (rg->n == rg->cap) {
        size_t cap = rg->cap ? 2 * rg->cap : 8;
        struct range *v = realloc(rg->v, cap * sizeof *v);
        if (!v) {
            rg->oom = true;
            return;
        }
        rg->v = v;
        rg->cap = cap;
    }
    rg->v[rg->n++] = (struct range){kind, at, len};
}

/* The text of a kind's ranges, valid UTF-8 (NULL when out of memory). */
static char *kind_text(const sess_reply *r, const ranges *rg, split_kind kind, size_t *len)
{
    size_t n = 0;
    for (size_t i = 0; i < rg->n; i++)
        n += rg->v[i].kind == kind ? rg->v[i].len : 0;
    char *raw = malloc(n + 1), *text = NULL;
    if (!raw)
        return NULL;
    n = 0;
    for (size_t i = 0; i < rg->n; i++)
        if (rg->v[i].kind == kind && rg->v[i].len) { /* a reply with no text has no buffer */
            memcpy(raw + n, r->text + rg->v[i].at, rg->v[i].len);
            n += rg->v[i].len;
        }
    text = sess_utf8_clean(raw, n);
    free(raw);
    *len = n;
    return text;
}

/* A kind's tokens: per range, the sampled tokens that lie wholly inside
 * it, and the text at its edges that only part of a token covers as text
 * of its own. */
static int kind_tokens(const cf_session *s, const ranges *rg, split_kind kind, cf_tokens *out)
{
    const sess_reply *r = &s->reply;
    const char *text = r->text ? r->text : ""; /* no offset on NULL */
    cf_tok_part *parts = malloc((3 * rg->n + 1) * sizeof *parts);
    if (!parts)
        return -1;
    size_t np = 0, t = 0;
    for (size_t i = 0; i < rg->n; i++) {
        if (rg->v[i].kind != kind)
            continue;
        size_t a = rg->v[i].at, b = a + rg->v[i].len;
        while (t < r->ids.n && (t ? r->ends[t - 1] : 0) < a)
            t++;
        size_t first = t, start = first ? r->ends[first - 1] : 0;
        while (t < r->ids.n && r->ends[t] <= b)
            t++;
        if (t == first) { /* no whole token: the range is text of its own */
            parts[np++] = (cf_tok_part){.kind = CF_PART_LITERAL, .text = text + a, .len = b - a};
            continue;
        }
        if (start > a)
            parts[np++] = (cf_tok_part){.kind = CF_PART_LITERAL, .text = text + a, .len = start - a};
        parts[np++] = (cf_tok_part){.kind = CF_PART_TOKENS, .ids = r->ids.ids + first, .n_ids = t - first};
        if (r->ends[t - 1] < b)
            parts[np++] = (cf_tok_part){.kind = CF_PART_LITERAL, .text = text + r->ends[t - 1],
                                        .len = b - r->ends[t - 1]};
    }
    int rc = cf_tokenize_parts(s->tok, parts, np, false, out, NULL);
    free(parts);
    return rc;
}

void sess_reply_settle(cf_session *s, size_t end, sess_msg *m)
{
    sess_reply *r = &s->reply;
    ranges rg = {0};
    splitter sp = r->sp0;
    if (s->fam == RF_NONE) /* all content, even a reply of hidden tokens only */
        add_range(&rg, SPLIT_CONTENT, 0, end);
    else if (r->text)
        split_feed(&sp, r->text, end, true, add_range, &rg);
    size_t clen, rlen;
    char *content = kind_text(r, &rg, SPLIT_CONTENT, &clen);
    char *reasoning = kind_text(r, &rg, SPLIT_REASONING, &rlen);
    cf_tokens ids = {0}, rids = {0};
    if (!rg.oom && content && reasoning && kind_tokens(s, &rg, SPLIT_CONTENT, &ids) == 0 &&
        kind_tokens(s, &rg, SPLIT_REASONING, &rids) == 0) {
        free((char *)m->pub.content);
        free((char *)m->pub.reasoning);
        cf_tokens_free(&m->ids);
        cf_tokens_free(&m->rids);
        m->pub.content = content;
        m->pub.reasoning = rlen ? reasoning : NULL;
        m->ids = ids;
        m->rids = rids;
        if (!rlen)
            free(reasoning);
        content = reasoning = NULL;
    } else { /* out of memory: the message keeps what it had */
        cf_tokens_free(&ids);
        cf_tokens_free(&rids);
    }
    m->pub.thinking_cut = split_in_reasoning(&sp);
    free(content);
    free(reasoning);
    free(rg.v);
}

/* Keep token k's description (k = its index among the sampled ones). */
static int record_prob(sess_reply *r, size_t k, const cf_token_prob *rec)
{
    if (k >= r->probs_cap) {
        size_t cap = r->ends_cap > k ? r->ends_cap : k + 1;
        cf_token_prob *p = realloc(r->probs, cap * sizeof *p);
        if (!p)
            return -1;
        for (size_t i = r->probs_cap; i < cap; i++)
            p[i] = (cf_token_prob){.p = -1};
        r->probs = p;
        r->probs_cap = cap;
    }
    /* tokens sampled while probs was off stay undescribed */
    for (size_t i = r->n_described; i < k; i++)
        r->probs[i] = (cf_token_prob){.id = r->ids.ids[i], .p = -1};
    r->probs[k] = *rec;
    r->n_described = k + 1;
    return 0;
}

/* The reply's descriptions into its message (on finishing). */
static void keep_probs(const sess_reply *r, sess_msg *m)
{
    free(m->probs);
    m->probs = NULL;
    m->n_probs = 0;
    if (!r->n_described || !(m->probs = malloc(r->ids.n * sizeof *m->probs)))
        return;
    for (size_t i = 0; i < r->ids.n; i++)
        m->probs[i] = i < r->n_described ? r->probs[i] : (cf_token_prob){.id = r->ids.ids[i], .p = -1};
    m->n_probs = (int)r->ids.n;
}

/* End the reply; its last text goes into part (false: there is none). */
static bool finish(cf_session *s, cf_stop_reason why, cf_reply_part *part)
{
    sess_reply *r = &s->reply;
    size_t end = why == CF_STOP_STRING ? r->stop_at : r->len;
    r->finished = true;
    s->stats.stop = why;
    s->have_logits = false;
    sess_spec_settle(s);
    sess_reply_settle(s, end, &s->msgs[s->n_msgs - 1]);
    keep_probs(r, &s->msgs[s->n_msgs - 1]);
    /* a last token cut by a stop string is not part of the reply */
    if (r->ids.n && r->ends[r->ids.n - 1] > end)
        r->pending = CF_TOKEN_NULL;
    show(s, end, true, part);
    s->dirty = true;
    return part->content[0] || part->reasoning[0];
}

void sess_reply_open(cf_session *s, double t0, const splitter *sp0)
{
    sess_reply *r = &s->reply;
    r->active = true;
    r->finished = false;
    r->pending = CF_TOKEN_NULL;
    r->n_gen = 0;
    r->len = r->shown = r->stop_at = 0;
    r->ids.n = 0;
    r->sp0 = r->sp = *sp0;
    r->undecided = 0;
    r->reasoning_tok = false;
    r->constrained = false;
    r->n_described = 0;
    if (s->format_c)
        cf_constraint_reset(s->format_c);
    memset(r->utf8, 0, sizeof r->utf8);
    r->script = sess_script_next(s);
    r->script_pos = 0;
    r->nq = r->qat = 0;
    r->t0 = t0;
}

/* ---- generation ---------------------------------------------------------------------- */

/* Room for one more token, shifting old turns out if need be. */
static int make_room(cf_session *s, cf_err *err)
{
    if ((int)s->cache.n + 1 <= cf_ctx_n_ctx(s->ctx))
        return 1;
    int n_turns;
    sess_shift_plan(s, (int)s->cache.n, 1, &n_turns);
    if (n_turns == 0)
        return 0;
    return sess_shift(s, n_turns, err) ? -1 : 1;
}

/* The next token: the script's while it lasts (its end is the end of
 * generation), else the sampler's, on the logits with the bias added; with
 * probs on, its description into *rec. */
static cf_token next_token(cf_session *s, cf_token_prob *rec)
{
    sess_reply *r = &s->reply;
    cf_token t;
    for (size_t i = 0; i < s->n_bias; i++)
        s->logits[s->bias[i].id] += s->bias[i].bias;
    if (!r->script)
        return s->probs ? cf_sampler_sample_probs(s->smp, s->logits, rec)
                        : cf_sampler_sample(s->smp, s->logits);
    if (r->script_pos >= r->script->n)
        return CF_TOKEN_NULL;
    t = r->script->ids[r->script_pos++];
    if (s->probs)
        cf_sampler_token_prob(s->smp, s->logits, t, rec);
    return t;
}

/* Count the token just shown as reasoning or content; a gpt-oss header's
 * tokens wait for the channel it names. */
static void count_token(cf_session *s)
{
    sess_reply *r = &s->reply;
    r->reasoning_tok = false;
    if (split_in_header(&r->sp)) {
        r->undecided++;
        return;
    }
    if (r->sp.touched) {
        s->stats.reasoning_tokens += 1 + r->undecided;
        r->reasoning_tok = true;
    }
    r->undecided = 0;
}

static int next_part(cf_session *s, cf_reply_part *part, cf_err *err)
{
    sess_reply *r = &s->reply;
    bool more;
    if (r->pending >= 0) {
        if (s->n_predict >= 0 && r->n_gen >= s->n_predict)
            goto stop_n_predict;
        /* a speculative step's tokens but its last are evaluated already */
        if (r->qat >= r->nq) {
            int room = make_room(s, err);
            if (room < 0)
                return -1;
            if (room == 0) {
                more = finish(s, CF_STOP_CONTEXT_FULL, part);
                goto last;
            }
            if (s->spec && !s->probs && !r->script && !s->format_c) {
                if (sess_spec_step(s, s->n_predict >= 0 ? s->n_predict - r->n_gen : SESS_SPEC_MAX, err))
                    return -1;
            } else if (s->group_decode ? s->group_decode(s->group_ud, s->ctx, r->pending, s->logits, err)
                                       : cf_ctx_decode(s->ctx, &r->pending, 1, s->logits, false, err)) {
                return -1;
            }
            const int used = cf_ctx_decode_threads(s->ctx);
            s->stats.threads = cf_ctx_n_threads(s->ctx);
            if (!s->stats.fewest_threads || used < s->stats.fewest_threads)
                s->stats.fewest_threads = used;
        }
        if (cf_tokens_push(&s->cache, r->pending))
            return cf_fail(err, "out of memory");
        r->pending = CF_TOKEN_NULL;
    } else if (s->n_predict >= 0 && r->n_gen >= s->n_predict) {
        goto stop_n_predict;
    }
    cf_token_prob rec = {.p = -1};
    /* a step's tokens were drawn and accepted by it */
    const bool stepped = r->qat < r->nq;
    if (!stepped && sess_format_mask(s, err))
        return -1;
    cf_token t = stepped ? r->q[r->qat++] : next_token(s, &rec);
    cf_sampler_set_mask(s->smp, NULL); /* the mask lives no longer than this token */
    if (t < 0 || sess_ends_reply(s, t)) {
        more = finish(s, CF_STOP_EOG, part);
        goto last;
    }
    if (!stepped)
        cf_sampler_accept(s->smp, t);
    if (!stepped && sess_format_accept(s, t, err))
        return -1;
    cf_str p = sess_raw_piece(s, t);
    if (reserve_text(r, p.len) || cf_tokens_push(&r->ids, t) ||
        (s->probs && record_prob(r, r->ids.n - 1, &rec)))
        return cf_fail(err, "out of memory");
    r->step_prob = s->probs ? rec.p : -1;
    r->pending = t;
    r->n_gen++;
    s->stats.gen_tokens++;
    size_t since = r->len;
    for (size_t i = 0; i < p.len; i++) /* a NUL (<0x00>) would end the text early */
        if (p.ptr[i])
            r->text[r->len++] = p.ptr[i];
    r->ends[r->ids.n - 1] = r->len;
    size_t stop = find_stop(s, since);
    if (stop != SIZE_MAX) {
        r->stop_at = stop;
        more = finish(s, CF_STOP_STRING, part);
        goto last;
    }
    r->sp.touched = split_in_reasoning(&r->sp);
    show(s, r->len - held_back(s), false, part);
    count_token(s);
    return CF_NEXT_TOKEN;
stop_n_predict:
    more = finish(s, CF_STOP_N_PREDICT, part);
last:
    return more ? CF_NEXT_TOKEN : CF_NEXT_DONE;
}

int cf_session_next_part(cf_session *s, cf_reply_part *part, cf_err *err)
{
    *part = (cf_reply_part){"", "", false, -1};
    if (!s->reply.active || s->reply.finished)
        return CF_NEXT_DONE;
    if (s->test_delay_ms) {
        struct timespec ts = {s->test_delay_ms / 1000, s->test_delay_ms % 1000 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return s->eng->next_part(s, part, err);
}

int sess_local_next_part(cf_session *s, cf_reply_part *part, cf_err *err)
{
    sess_reply *r = &s->reply;
    r->step_prob = -1;
    double t = cf_now_ms();
    int rc = next_part(s, part, err);
    part->prob = r->step_prob;
    double now = cf_now_ms();
    if (s->stats.ttft_ms == 0)
        s->stats.ttft_ms = now - r->t0;
    s->stats.gen_ms += now - t;
    if (r->reasoning_tok && !r->finished)
        s->stats.reasoning_ms += now - t;
    return rc;
}

int cf_session_next(cf_session *s, const char **piece, cf_err *err)
{
    cf_reply_part part;
    int rc = cf_session_next_part(s, &part, err);
    *piece = part.content;
    return rc;
}

void cf_session_end_reply(cf_session *s, bool cut)
{
    if (!s->reply.active)
        return;
    s->eng->end_reply(s, cut);
    s->reply.active = false;
    /* a remote reply that failed before any of it came is taken back, its
     * message with it */
    if (s->n_msgs > 0 && s->msgs[s->n_msgs - 1].pub.role == CF_ROLE_ASSISTANT)
        s->msgs[s->n_msgs - 1].pub.length_cut = s->stats.stop == CF_STOP_N_PREDICT;
}

void sess_local_end_reply(cf_session *s, bool cut)
{
    if (!s->reply.finished) {
        cf_reply_part rest;
        finish(s, CF_STOP_USER, &rest);
        s->msgs[s->n_msgs - 1].pub.cut = cut;
    }
}

void sess_close_reply(cf_session *s)
{
    cf_session_end_reply(s, true);
}
