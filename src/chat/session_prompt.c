/* The conversation as tokens.
 *
 * The template renders the messages with a placeholder for each content
 * (U+E000, the message's index, U+E001), so what it wrote and what people
 * wrote stay apart.  The rendering is then tokenized in parts: the
 * template's text with special tokens parsed, user and system text as
 * literal text (typing "<|im_end|>" gives plain-text tokens), assistant
 * replies as the tokens that were sampled.  Text runs across the template
 * and literal parts as one string, so a prompt tokenizes as llama.cpp
 * tokenizes the same rendered text; only replies keep their sampled ids.
 * Templates see the placeholders, never the text: what a template does to
 * a content (trim it, cut a reply's <think> part) does not happen, and the
 * model sees its replies as it wrote them, which keeps the cache valid. */
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

#define SLOT_OPEN "\xee\x80\x80"  /* U+E000 */
#define SLOT_CLOSE "\xee\x80\x81" /* U+E001 */
#define SLOT_MARK_LEN 3

static const char *role_name(cf_role r)
{
    return r == CF_ROLE_SYSTEM ? "system" : r == CF_ROLE_USER ? "user" : "assistant";
}

/* The message index of a placeholder at p (end: the text's end), or -1;
 * *after receives where the placeholder ends. */
static int slot_at(const char *p, const char *end, int n, const char **after)
{
    const char *q = p + SLOT_MARK_LEN;
    long idx = 0;
    int digits = 0;
    while (q < end && *q >= '0' && *q <= '9' && digits < 9) {
        idx = idx * 10 + (*q++ - '0');
        digits++;
    }
    if (digits == 0 || idx >= n || end - q < SLOT_MARK_LEN || memcmp(q, SLOT_CLOSE, SLOT_MARK_LEN))
        return -1;
    *after = q + SLOT_MARK_LEN;
    return (int)idx;
}

static cf_tok_part content_part(const sess_msg *m)
{
    if (m->pub.role == CF_ROLE_ASSISTANT && m->ids.n > 0)
        return (cf_tok_part){.kind = CF_PART_TOKENS, .ids = m->ids.ids, .n_ids = m->ids.n};
    return (cf_tok_part){.kind = CF_PART_LITERAL, .text = m->pub.content,
                         .len = strlen(m->pub.content)};
}

static bool starts_with(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return n > 0 && (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* Split the rendering [p, end) at its placeholders and tokenize it. */
static int tokenize_rendering(cf_session *s, int n, const char *p, const char *end,
                              cf_tokens *out, cf_err *err)
{
    size_t n_marks = 0;
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));
         q += SLOT_MARK_LEN)
        n_marks++;
    cf_tok_part *parts = malloc((2 * n_marks + 1) * sizeof *parts);
    if (!parts)
        return cf_fail(err, "out of memory");
    size_t np = 0;
    const char *text = p;
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));) {
        const char *after;
        int idx = slot_at(q, end, n, &after);
        if (idx < 0) { /* not one of ours: the template's own text */
            q += SLOT_MARK_LEN;
            continue;
        }
        parts[np++] = (cf_tok_part){.kind = CF_PART_TEXT, .text = text, .len = (size_t)(q - text)};
        parts[np++] = content_part(&s->msgs[idx]);
        text = q = after;
    }
    parts[np++] = (cf_tok_part){.kind = CF_PART_TEXT, .text = text, .len = (size_t)(end - text)};
    int rc = cf_tokenize_parts(s->tok, parts, np, true, out, err);
    free(parts);
    return rc;
}

/* Ways to render, tried in turn when a template refuses the plain one (as
 * llama.cpp's Jinja polyfills do): tool-use templates that iterate `tools`
 * get an empty list; templates without a system role (Gemma) get the
 * system prompt at the head of the first user message. */
enum { MODE_EMPTY_TOOLS = 1, MODE_MERGE_SYSTEM = 2, N_MODES = 4 };

/* Render the first n messages in one mode into *text. */
static int render(cf_session *s, int n, bool add_gen, int mode, char **text, size_t *len,
                  cf_err *err)
{
    cf_chat_msg *cm = calloc((size_t)n + 1, sizeof *cm);
    char(*slot)[24] = calloc((size_t)n + 1, sizeof *slot), merged[56];
    int rc = -1;
    if (!cm || !slot) {
        cf_fail(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        snprintf(slot[i], sizeof slot[i], SLOT_OPEN "%d" SLOT_CLOSE, i);
    size_t k = 0;
    bool sys = (mode & MODE_MERGE_SYSTEM) && n > 0 && s->msgs[0].pub.role == CF_ROLE_SYSTEM;
    for (int i = sys; i < n; i++) {
        cm[k] = (cf_chat_msg){.role = role_name(s->msgs[i].pub.role), .content = slot[i]};
        if (sys && s->msgs[i].pub.role == CF_ROLE_USER) {
            snprintf(merged, sizeof merged, "%s\n\n%s", slot[0], slot[i]);
            cm[k].content = merged;
            sys = false;
        }
        k++;
    }
    cf_chat_opts o = {.bos_token = s->bos_text, .eos_token = s->eos_text,
                      .add_generation_prompt = add_gen, .now = s->now,
                      .tools_json = mode & MODE_EMPTY_TOOLS ? "[]" : NULL};
    rc = cf_chat_render(s->tmpl, cm, k, &o, text, len, err);
out:
    free(slot);
    free(cm);
    return rc;
}

int sess_prompt_tokens(cf_session *s, int n, bool add_gen, cf_tokens *out, cf_err *err)
{
    out->n = 0;
    char *text = NULL;
    size_t len;
    cf_err first;
    /* the way that worked last time first */
    int rc = render(s, n, add_gen, s->render_mode, &text, &len, &first);
    for (int mode = 0; rc != 0 && mode < N_MODES; mode++)
        if (mode != s->render_mode && render(s, n, add_gen, mode, &text, &len, NULL) == 0) {
            s->render_mode = mode;
            rc = 0;
        }
    if (rc != 0) {
        if (err)
            *err = first;
        return -1;
    }
    /* The tokenizer adds BOS (and EOS) itself: drop the template's copies,
     * as llama.cpp does, rather than doubling them. */
    const char *p = text, *end = text + len;
    if (cf_tok_add_bos(s->tok) && s->bos_text && starts_with(p, end, s->bos_text))
        p += strlen(s->bos_text);
    if (cf_tok_add_eos(s->tok) && s->eos_text && end - p >= (ptrdiff_t)strlen(s->eos_text) &&
        starts_with(end - strlen(s->eos_text), end, s->eos_text))
        end -= strlen(s->eos_text);
    rc = tokenize_rendering(s, n, p, end, out, err);
    free(text);
    return rc;
}

int sess_common_prefix(const cf_tokens *a, const cf_tokens *b)
{
    size_t n = a->n < b->n ? a->n : b->n, i = 0;
    while (i < n && a->ids[i] == b->ids[i])
        i++;
    return (int)i;
}

/* A turn starts where the rendering of the messages before it stops
 * agreeing with the whole rendering: after the previous reply's closing
 * text ("<|im_end|>\n"), before this turn's opening ("<|im_start|>user").
 * Cutting there leaves what a fresh rendering of the kept messages gives,
 * for templates that render each message on its own. */
void sess_find_starts(cf_session *s, const cf_tokens *full)
{
    cf_tokens pre = {0};
    int prev = -1;
    for (int i = 0; i < s->n_msgs; i++) {
        sess_msg *m = &s->msgs[i];
        if (m->pub.role != CF_ROLE_USER)
            continue;
        if (m->start < 0) {
            cf_err err;
            int at;
            if (sess_prompt_tokens(s, i, false, &pre, &err) == 0)
                at = sess_common_prefix(&pre, full);
            else /* a template that cannot render a prefix: no finer boundary */
                at = prev >= 0 ? prev
                               : full->n > 0 && full->ids[0] == cf_tok_special_ids(s->tok)->bos;
            m->start = at > prev ? at : prev;
        }
        prev = m->start;
    }
    cf_tokens_free(&pre);
}

