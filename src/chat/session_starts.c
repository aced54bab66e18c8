/* Where each turn starts in the cache.
 *
 * A user message's turn starts where the rendering of the messages
 * before it stops agreeing with the whole rendering: after the previous
 * reply's closing text ("<|im_end|>\n"), before this turn's opening
 * ("<|im_start|>user").  Cutting there leaves what a fresh rendering of
 * the kept messages gives, for templates that render each message on its
 * own.
 *
 * Rendering each turn's prefix to find it would make a conversation
 * handed over whole (a client's 10,000 messages, a session file) cost
 * the square of its length, so every start is found from the one
 * rendering and tokenization.  What a prefix's rendering adds after its
 * last placeholder (the closing text) depends on the template, on the
 * message that placeholder belongs to and on the text that follows it,
 * not on where in the chat it stands: the template sees placeholders,
 * never contents.  So it is learnt once for each kind of gap between two
 * messages' placeholders and applied to every gap of that kind.  The
 * turns' byte offsets then cut the text into pieces tokenized one after
 * another: where a piece's tokens are the whole's at that point, the cut
 * lies between the tokenizer's fragments (at a special token, as chat
 * templates put them) and the next piece goes on from it; where they are
 * not, the turn starts where the two stop agreeing, as a prefix's tokens
 * would, and the next piece starts again from the last clean cut.  A
 * turn without a placeholder before it, or in a template that renders
 * messages out of order, is found from its prefix's rendering. */
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

static size_t common_bytes(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

/* Where in text[0, len) the last placeholder of a message before `upto`
 * ends (0: none), and the placeholder's bytes. */
static size_t last_slot_end(const char *text, size_t len, int upto, const char **slot,
                            size_t *slot_len)
{
    const char *end = text + len, *after;
    size_t at = 0;
    bool reasoning;
    for (const char *q = text; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));) {
        if (sess_slot_at(q, end, upto, &after, &reasoning) < 0) {
            q += SLOT_MARK_LEN;
            continue;
        }
        *slot = q;
        *slot_len = (size_t)(after - q);
        at = (size_t)(after - text);
        q = after;
    }
    return at;
}

/* Where user message i's turn starts in full (rendered from text), from
 * the rendering of the messages before it.
 * A template may render the last of those messages otherwise than the
 * same message in the middle of a chat (Qwen3 puts its reasoning back
 * only then): the two are then compared from the end of that message's
 * last placeholder on, so the turn still starts after its closing text
 * ("<|im_end|>\n"), where a fresh rendering of the kept messages would
 * continue. */
static int turn_start(cf_session *s, int i, const cf_tokens *full, const char *text, size_t len,
                      cf_tokens *scratch)
{
    char *pre;
    size_t pre_len;
    if (sess_render_text(s, i, false, &pre, &pre_len, NULL))
        return -1;
    const char *slot = NULL;
    size_t slot_len = 0, agree = common_bytes(pre, pre_len, text, len);
    size_t slot_end = last_slot_end(text, len, i, &slot, &slot_len);
    const char *in_pre = slot ? memmem(pre, pre_len, slot, slot_len) : NULL;
    int at = -1;
    if (agree < slot_end && in_pre) {
        size_t pre_end = (size_t)(in_pre - pre) + slot_len;
        agree = slot_end + common_bytes(pre + pre_end, pre_len - pre_end, text + slot_end,
                                        len - slot_end);
        if (sess_tokenize_text(s, s->n_msgs, text, agree, PIECE_HEAD, scratch, NULL) == 0)
            at = sess_common_prefix(scratch, full);
    } else if (sess_tokenize_text(s, i, pre, pre_len, PIECE_HEAD, scratch, NULL) == 0) {
        at = sess_common_prefix(scratch, full);
    }
    free(pre);
    return at;
}

/* A kind of gap between two messages' placeholders, and its closing. */
typedef struct gap_kind {
    const char *text; /* in the whole rendering */
    size_t len;
    cf_role role;     /* of the message whose placeholder comes before */
    bool reasoning;   /* that placeholder is its reasoning */
    long closing;     /* the closing text's bytes in the gap; -1: no prefix to learn from */
} gap_kind;

enum { MAX_KINDS = 16 };

/* How much of gap the rendering of the first i messages has after its
 * last placeholder (Qwen3 renders the last reply's reasoning back in: the
 * comparison starts after it all the same); -1 when it cannot tell. */
static long closing_len(cf_session *s, int i, const char *gap, size_t gap_len)
{
    char *pre;
    size_t pre_len, slot_len = 0;
    if (sess_render_text(s, i, false, &pre, &pre_len, NULL))
        return -1;
    const char *slot = NULL;
    size_t end = last_slot_end(pre, pre_len, i, &slot, &slot_len);
    long closing = slot ? (long)common_bytes(pre + end, pre_len - end, gap, gap_len) : -1;
    free(pre);
    return closing;
}

static long gap_closing(cf_session *s, gap_kind *kinds, int *n_kinds, const gap_kind *g, int i)
{
    for (int k = 0; k < *n_kinds; k++)
        if (kinds[k].role == g->role && kinds[k].reasoning == g->reasoning &&
            kinds[k].len == g->len && !memcmp(kinds[k].text, g->text, g->len))
            return kinds[k].closing;
    long closing = closing_len(s, i, g->text, g->len);
    if (*n_kinds < MAX_KINDS) {
        kinds[*n_kinds] = *g;
        kinds[(*n_kinds)++].closing = closing;
    }
    return closing;
}

/* Each user message's turn start in text's bytes into at (-1: none found
 * so; the placeholders come in the messages' order). */
static void turn_bytes(cf_session *s, const char *text, size_t len, long *at)
{
    gap_kind kinds[MAX_KINDS];
    int n_kinds = 0, top = -1;
    const char *end = text + len, *after, *prev_end = NULL;
    bool reasoning, prev_reasoning = false;
    for (int i = 0; i < s->n_msgs; i++)
        at[i] = -1;
    for (const char *q = text; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));) {
        int idx = sess_slot_at(q, end, s->n_msgs, &after, &reasoning);
        if (idx < 0) {
            q += SLOT_MARK_LEN;
            continue;
        }
        if (idx > top && prev_end && s->msgs[idx].pub.role == CF_ROLE_USER) {
            gap_kind g = {prev_end, (size_t)(q - prev_end), s->msgs[top].pub.role,
                          prev_reasoning, 0};
            long closing = gap_closing(s, kinds, &n_kinds, &g, idx);
            if (closing >= 0)
                at[idx] = (prev_end - text) + closing;
        }
        if (idx >= top) {
            top = idx;
            prev_end = after;
            prev_reasoning = reasoning;
        } else {
            prev_end = NULL; /* out of order: the next gap is not one of these */
        }
        q = after;
    }
}

/* How many of text[from, to)'s tokens agree with full's from token tok on
 * (-1: it cannot be tokenized), tokenized as a piece that follows text,
 * else as one that follows a special token: whichever agrees throughout. */
static long agree_from(cf_session *s, const cf_tokens *full, const char *text, size_t from,
                       size_t tok, size_t to, cf_tokens *piece)
{
    const cf_tokens rest = {.ids = full->ids + tok, .n = full->n - tok};
    long agree = -1;
    for (int k = from ? PIECE_AFTER_TEXT : PIECE_HEAD; k <= PIECE_AFTER_SPECIAL; k++) {
        if (sess_tokenize_text(s, s->n_msgs, text + from, to - from, (sess_piece)k, piece, NULL))
            return -1;
        agree = sess_common_prefix(piece, &rest);
        if ((size_t)agree == piece->n || !from)
            break;
    }
    return agree;
}

void sess_find_starts(cf_session *s, const cf_tokens *full, const char *text, size_t len)
{
    int last = -1;
    for (int i = 0; i < s->n_msgs; i++)
        if (s->msgs[i].pub.role == CF_ROLE_USER && s->msgs[i].start < 0)
            last = i;
    if (last < 0)
        return;
    long *at = malloc((size_t)s->n_msgs * sizeof *at);
    if (at)
        turn_bytes(s, text, len, at);
    cf_tokens piece = {0}, scratch = {0};
    size_t base = 0, base_tok = 0; /* the last clean cut, in bytes and tokens */
    int prev = -1;
    for (int i = 0; i <= last; i++) {
        sess_msg *m = &s->msgs[i];
        if (m->pub.role != CF_ROLE_USER)
            continue;
        long b = at ? at[i] : -1, agree = -1;
        int tok = -1;
        if (b >= (long)base)
            agree = agree_from(s, full, text, base, base_tok, (size_t)b, &piece);
        if (agree >= 0 && (size_t)agree == piece.n) {
            base = (size_t)b;
            tok = (int)(base_tok += (size_t)agree);
        } else if (m->start >= 0) {
            /* known already */
        } else if (agree >= 0) {
            /* a cut inside a run of text: as the prefix alone tokenizes */
            agree = base ? agree_from(s, full, text, 0, 0, (size_t)b, &scratch) : agree;
            tok = (int)agree;
        } else {
            tok = turn_start(s, i, full, text, len, &scratch);
        }
        if (m->start < 0) {
            /* a template that cannot render a prefix: no finer boundary */
            if (tok < 0)
                tok = prev >= 0 ? prev
                                : full->n > 0 && full->ids[0] == cf_tok_special_ids(s->tok)->bos;
            m->start = tok > prev ? tok : prev;
        }
        prev = m->start;
    }
    free(at);
    cf_tokens_free(&piece);
    cf_tokens_free(&scratch);
}
