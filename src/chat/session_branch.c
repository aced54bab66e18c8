/* Branches: the conversation as a tree.  Each branch is a whole path of
 * messages; the current one lives in s->msgs, the others are kept as
 * copies (a fork copies the path: two branches share their common start
 * as equal messages, which is what /branches draws as the tree).  /regen
 * and an edit fork before they change anything, so the old path stays.
 * Switching swaps paths and keeps the cache's common prefix with the new
 * one, evaluating the rest at once. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

enum { MAX_NAME = 32 };

int sess_msg_copy(const sess_msg *m, sess_msg *out)
{
    *out = (sess_msg){.pub = m->pub, .start = -1, .n_probs = m->n_probs};
    out->pub.content = strdup(m->pub.content ? m->pub.content : "");
    out->pub.reasoning = m->pub.reasoning ? strdup(m->pub.reasoning) : NULL;
    out->pub.tool_calls = m->pub.tool_calls ? strdup(m->pub.tool_calls) : NULL;
    out->pub.tool_call_id = m->pub.tool_call_id ? strdup(m->pub.tool_call_id) : NULL;
    if (m->n_probs && (out->probs = malloc((size_t)m->n_probs * sizeof *out->probs)))
        memcpy(out->probs, m->probs, (size_t)m->n_probs * sizeof *out->probs);
    bool ok = out->pub.content && (out->pub.reasoning || !m->pub.reasoning) &&
              (out->pub.tool_calls || !m->pub.tool_calls) &&
              (out->pub.tool_call_id || !m->pub.tool_call_id) &&
              (out->probs || !m->n_probs);
    for (size_t i = 0; ok && i < m->ids.n; i++)
        ok = cf_tokens_push(&out->ids, m->ids.ids[i]) == 0;
    for (size_t i = 0; ok && i < m->rids.n; i++)
        ok = cf_tokens_push(&out->rids, m->rids.ids[i]) == 0;
    if (!ok)
        sess_msg_free(out);
    return ok ? 0 : -1;
}

void sess_branch_free(sess_branch *b)
{
    for (int i = 0; i < b->n_msgs; i++)
        sess_msg_free(&b->msgs[i]);
    free(b->msgs);
    b->msgs = NULL;
    b->n_msgs = 0;
}

void sess_branches_free(cf_session *s)
{
    for (int k = 0; k < s->n_branches; k++)
        sess_branch_free(&s->branches[k]);
    free(s->branches);
    s->branches = NULL;
    s->n_branches = s->cur = 0;
}

int sess_branches_init(cf_session *s, cf_err *err)
{
    sess_branches_free(s);
    if (!(s->branches = calloc(1, sizeof *s->branches)))
        return cf_fail(err, "out of memory");
    s->branches[0] = (sess_branch){.id = 1};
    snprintf(s->branches[0].name, sizeof s->branches[0].name, "main");
    s->n_branches = 1;
    s->next_branch = 2;
    return 0;
}

/* A copy of the current path, settled as it stands. */
static int copy_path(const cf_session *s, sess_msg **out, int *n)
{
    *out = calloc((size_t)s->n_msgs + 1, sizeof **out);
    *n = 0;
    if (!*out)
        return -1;
    for (; *n < s->n_msgs; ++*n)
        if (sess_msg_copy(&s->msgs[*n], &(*out)[*n])) {
            while (*n > 0)
                sess_msg_free(&(*out)[--*n]);
            free(*out);
            return -1;
        }
    return 0;
}

int sess_fork(cf_session *s, const char *name, cf_err *err)
{
    sess_branch *v = realloc(s->branches, (size_t)(s->n_branches + 1) * sizeof *v);
    if (!v)
        return cf_fail(err, "out of memory");
    s->branches = v;
    sess_branch *old = &s->branches[s->cur];
    if (copy_path(s, &old->msgs, &old->n_msgs))
        return cf_fail(err, "out of memory");
    sess_branch *b = &s->branches[s->n_branches];
    *b = (sess_branch){.id = s->next_branch++};
    snprintf(b->name, sizeof b->name, "%s", name ? name : "");
    s->cur = s->n_branches++;
    s->dirty = true;
    return 0;
}

void sess_unfork(cf_session *s)
{
    sess_branch *b = &s->branches[--s->n_branches];
    s->next_branch = b->id;
    s->cur = s->n_branches - 1;
    /* the old path, kept at the fork, comes back as it was */
    sess_branch *old = &s->branches[s->cur];
    while (s->n_msgs > 0)
        sess_pop_msg(s);
    free(s->msgs);
    s->msgs = old->msgs;
    s->n_msgs = s->cap_msgs = old->n_msgs;
    old->msgs = NULL;
    old->n_msgs = 0;
}

/* ---- names -------------------------------------------------------------------------- */

static bool all_digits(const char *s)
{
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* The branch a number or a name means, or -1. */
static int find_branch(const cf_session *s, const char *which)
{
    for (int k = 0; k < s->n_branches; k++) {
        const sess_branch *b = &s->branches[k];
        if (all_digits(which) ? atoi(which) == b->id : !strcmp(which, b->name))
            return k;
    }
    return -1;
}

int cf_session_fork(cf_session *s, const char *name, cf_err *err)
{
    if (name && *name) {
        if (strlen(name) > MAX_NAME || all_digits(name) || strpbrk(name, " \t\n"))
            return cf_fail_as(err, CF_E_USAGE,
                              "'%s' cannot name a branch: up to %d characters, no spaces, not "
                              "only digits (numbers are the branches' own)", name, MAX_NAME);
        if (find_branch(s, name) >= 0)
            return cf_fail_as(err, CF_E_USAGE, "there is a branch called '%s' already", name);
    }
    sess_close_reply(s);
    return sess_fork(s, name && *name ? name : NULL, err);
}

/* ---- switching ----------------------------------------------------------------------- */

/* Evaluate what the current path's rendering adds to the cache. */
static int prefill_path(cf_session *s, int *reused, int *prefilled, cf_err *err)
{
    cf_tokens full = {0};
    char *text = NULL;
    size_t len = 0;
    *reused = *prefilled = 0;
    int rc = sess_prompt_tokens(s, s->n_msgs, false, &full, &text, &len, err);
    if (rc == 0) {
        sess_truncate(s, sess_common_prefix(&s->cache, &full));
        sess_find_starts(s, &full, text, len);
        *reused = (int)s->cache.n;
        /* a path longer than the context is shifted at its next turn */
        if (full.n > s->cache.n && (int)full.n < cf_ctx_n_ctx(s->ctx)) {
            size_t from = s->cache.n;
            rc = cf_ctx_decode(s->ctx, full.ids + from, (int)(full.n - from), NULL, false, err);
            for (size_t i = from; rc == 0 && i < full.n; i++)
                if (cf_tokens_push(&s->cache, full.ids[i]))
                    rc = cf_fail(err, "out of memory");
            if (rc == 0)
                *prefilled = (int)(full.n - from);
            else
                sess_truncate(s, (int)from);
        }
    }
    cf_tokens_free(&full);
    free(text);
    return rc;
}

void sess_local_prefill(cf_session *s, int *reused, int *prefilled)
{
    /* a template that cannot render the path alone (a system prompt and no
     * user message): it is all evaluated at the next turn */
    if (prefill_path(s, reused, prefilled, NULL))
        sess_truncate(s, 0);
}

int cf_session_switch(cf_session *s, const char *which, int *reused, int *prefilled, cf_err *err)
{
    *reused = *prefilled = 0;
    int k = find_branch(s, which);
    if (k < 0)
        return cf_fail_as(err, CF_E_USAGE, "there is no branch '%s' (/branches lists them)",
                          which);
    sess_close_reply(s);
    if (k == s->cur)
        return cf_fail_as(err, CF_E_USAGE, "branch '%s' is the current one already", which);
    sess_branch *old = &s->branches[s->cur], *b = &s->branches[k];
    sess_branch_free(old);
    old->msgs = s->msgs;
    old->n_msgs = s->n_msgs;
    for (int i = 0; i < old->n_msgs; i++)
        old->msgs[i].start = -1;
    s->msgs = b->msgs;
    s->n_msgs = s->cap_msgs = b->n_msgs;
    b->msgs = NULL;
    b->n_msgs = 0;
    s->cur = k;
    s->have_logits = false;
    s->dirty = true;
    s->eng->prefill(s, reused, prefilled); /* the switch stands whatever it does */
    return 0;
}

int cf_session_edit(cf_session *s, int i, const char *text, cf_err *err)
{
    sess_close_reply(s);
    if (i < 0 || i >= s->n_msgs || s->msgs[i].pub.role != CF_ROLE_USER)
        return cf_fail_as(err, CF_E_USAGE, "message %d is not one of yours", i);
    if (sess_fork(s, NULL, err))
        return -1;
    sess_drop_from(s, i);
    if (sess_begin_reply(s, text, true, err)) {
        sess_unfork(s); /* the cache holds a prefix of it: the next turn goes on from there */
        return -1;
    }
    return 0;
}

/* ---- what the caller sees --------------------------------------------------------------- */

int cf_session_n_branches(const cf_session *s)
{
    return s->n_branches;
}

void cf_session_branch(const cf_session *s, int k, cf_branch_info *out)
{
    const sess_branch *b = &s->branches[k];
    *out = (cf_branch_info){b->id, b->name, k == s->cur, k == s->cur ? s->n_msgs : b->n_msgs};
}

const cf_message *cf_session_branch_message(const cf_session *s, int k, int i)
{
    if (k == s->cur)
        return cf_session_message(s, i);
    const sess_branch *b = k >= 0 && k < s->n_branches ? &s->branches[k] : NULL;
    return b && i >= 0 && i < b->n_msgs ? &b->msgs[i].pub : NULL;
}
