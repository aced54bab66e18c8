/* The conversation as tokens.
 *
 * The template renders the messages with a placeholder for each content
 * (U+E000, the message's index, U+E001) and for each reply's reasoning
 * (U+E000, the index, 'r', U+E001: passed as reasoning_content and as
 * gpt-oss's thinking), so what it wrote and what people wrote stay apart.
 * The rendering is then tokenized in parts: the template's text with
 * special tokens parsed, user and system text as literal text (typing
 * "<|im_end|>" gives plain-text tokens), a reply's content and reasoning
 * as the tokens that were sampled.  Text runs across the template and
 * literal parts as one string, so a prompt tokenizes as llama.cpp
 * tokenizes the same rendered text; only replies keep their sampled ids.
 * Templates see the placeholders, never the text: what a template does to
 * a content (trim it, cut a <think> part out of it) does not happen, and
 * the model sees its replies as it wrote them, which keeps the cache
 * valid.  What a template does with the reasoning (drop it from earlier
 * turns, as most do) does happen: the cache keeps what still agrees and
 * the rest is evaluated again from the first difference. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "session_internal.h"

static const char *role_name(cf_role r)
{
    static const char *const names[] = {"system", "user", "assistant", "tool"};
    return names[r];
}

int sess_slot_at(const char *p, const char *end, int n, const char **after, bool *reasoning)
{
    const char *q = p + SLOT_MARK_LEN;
    long idx = 0;
    int digits = 0;
    while (q < end && *q >= '0' && *q <= '9' && digits < 9) {
        idx = idx * 10 + (*q++ - '0');
        digits++;
    }
    *reasoning = q < end && *q == 'r';
    q += *reasoning;
    if (digits == 0 || idx >= n || end - q < SLOT_MARK_LEN || memcmp(q, SLOT_CLOSE, SLOT_MARK_LEN))
        return -1;
    *after = q + SLOT_MARK_LEN;
    return (int)idx;
}

static cf_tok_part slot_part(const sess_msg *m, bool reasoning)
{
    const cf_tokens *ids = reasoning ? &m->rids : &m->ids;
    const char *text = reasoning ? m->pub.reasoning : m->pub.content;
    if (m->pub.role == CF_ROLE_ASSISTANT && ids->n > 0)
        return (cf_tok_part){.kind = CF_PART_TOKENS, .ids = ids->ids, .n_ids = ids->n};
    return (cf_tok_part){.kind = CF_PART_LITERAL, .text = text ? text : "",
                         .len = text ? strlen(text) : 0};
}

static bool starts_with(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return n > 0 && (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

int sess_tokenize_text(cf_session *s, int n, const char *text, size_t len, sess_piece piece,
                       cf_tokens *out, cf_err *err)
{
    const char *p = text, *end = text + len;
    out->n = 0;
    size_t n_marks = 0;
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));
         q += SLOT_MARK_LEN)
        n_marks++;
    cf_tok_part *parts = malloc((2 * n_marks + 2) * sizeof *parts);
    if (!parts)
        return cf_fail(err, "out of memory");
    size_t np = 0;
    /* no ids: the text after them continues the text before (no SPM space) */
    if (piece == PIECE_AFTER_TEXT)
        parts[np++] = (cf_tok_part){.kind = CF_PART_TOKENS};
    const char *run = p;
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));) {
        const char *after;
        bool reasoning;
        int idx = sess_slot_at(q, end, n, &after, &reasoning);
        if (idx < 0) { /* not one of ours: the template's own text */
            q += SLOT_MARK_LEN;
            continue;
        }
        parts[np++] = (cf_tok_part){.kind = CF_PART_TEXT, .text = run, .len = (size_t)(q - run)};
        parts[np++] = slot_part(&s->msgs[idx], reasoning);
        run = q = after;
    }
    parts[np++] = (cf_tok_part){.kind = CF_PART_TEXT, .text = run, .len = (size_t)(end - run)};
    int rc = cf_tokenize_parts(s->tok, parts, np, piece == PIECE_HEAD, out, err);
    free(parts);
    return rc;
}

/* Ways to render, tried in turn when a template refuses the plain one (as
 * llama.cpp's Jinja polyfills do): tool-use templates that iterate `tools`
 * get an empty list; templates without a system role (Gemma) get the
 * system prompt at the head of the first user message. */
enum { MODE_EMPTY_TOOLS = 1, MODE_MERGE_SYSTEM = 2, N_MODES = 4 };

/* A placeholder's text: room for it. */
enum { SLOT_LEN = 24 };

/* A message's fields beside role and content, as JSON (NULL: none): a
 * reply's reasoning as its placeholder (passed as reasoning_content and
 * as gpt-oss's thinking), its calls of tools, a tool result's call id. */
static char *extra_fields(const cf_message *m, int i, bool *failed)
{
    if (!m->reasoning && !m->tool_calls && !m->tool_call_id)
        return NULL;
    cf_jbuf b = {0};
    char slot[SLOT_LEN];
    snprintf(slot, sizeof slot, SLOT_OPEN "%dr" SLOT_CLOSE, i);
    cf_jbuf_putc(&b, '{');
    if (m->reasoning) {
        cf_jbuf_puts(&b, "\"reasoning_content\": ");
        cf_json_put_string(&b, slot, strlen(slot), false);
        cf_jbuf_puts(&b, ", \"thinking\": ");
        cf_json_put_string(&b, slot, strlen(slot), false);
    }
    char *calls = m->tool_calls ? sess_template_tool_calls(m->tool_calls) : NULL;
    if (calls) {
        cf_jbuf_puts(&b, m->reasoning ? ", \"tool_calls\": " : "\"tool_calls\": ");
        cf_jbuf_puts(&b, calls);
        free(calls);
    }
    if (m->tool_call_id) {
        cf_jbuf_puts(&b, b.n > 1 ? ", \"tool_call_id\": " : "\"tool_call_id\": ");
        cf_json_put_string(&b, m->tool_call_id, strlen(m->tool_call_id), false);
    }
    cf_jbuf_putc(&b, '}');
    char *text = cf_jbuf_take(&b, NULL);
    *failed |= !text;
    return text;
}

/* Render the first n messages in one mode into *text. */
static int render(cf_session *s, int n, bool add_gen, int mode, char **text, size_t *len,
                  cf_err *err)
{
    cf_chat_msg *cm = calloc((size_t)n + 1, sizeof *cm);
    char(*slot)[SLOT_LEN] = calloc((size_t)n + 1, sizeof *slot), merged[2 * SLOT_LEN + 8];
    char **extra = calloc((size_t)n + 1, sizeof *extra);
    bool failed = false;
    int rc = -1;
    if (!cm || !slot || !extra) {
        cf_fail(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        snprintf(slot[i], sizeof slot[i], SLOT_OPEN "%d" SLOT_CLOSE, i);
    size_t k = 0;
    bool sys = (mode & MODE_MERGE_SYSTEM) && n > 0 && s->msgs[0].pub.role == CF_ROLE_SYSTEM;
    for (int i = sys; i < n; i++) {
        const cf_message *m = &s->msgs[i].pub;
        /* an empty content stays empty: templates test it (a reply that
         * only calls tools has none) */
        bool none = !*m->content && s->msgs[i].ids.n == 0;
        cm[k] = (cf_chat_msg){.role = role_name(m->role), .content = none ? "" : slot[i]};
        if (sys && m->role == CF_ROLE_USER) {
            snprintf(merged, sizeof merged, "%s\n\n%s", slot[0], slot[i]);
            cm[k].content = merged;
            sys = false;
        }
        cm[k].extra_json = extra[i] = extra_fields(m, i, &failed);
        k++;
    }
    if (failed) {
        cf_fail(err, "out of memory");
        goto out;
    }
    /* Nemotron's switch is text in the system message (the template takes
     * it out of what it shows): after the system prompt, else alone */
    char switched[SLOT_LEN + 16];
    if (s->reasoning.thinking_text && s->thinking != THINK_AUTO) {
        const char *word = s->thinking == THINK_ON ? "/think" : "/no_think";
        if (k && !strcmp(cm[0].role, "system")) {
            snprintf(switched, sizeof switched, "%s %s", cm[0].content, word);
            cm[0].content = switched;
        } else {
            memmove(cm + 1, cm, k * sizeof *cm);
            cm[0] = (cf_chat_msg){.role = "system", .content = word};
            k++;
        }
    }
    /* the thinking settings, as the templates name them */
    static const char *const effort_json[] = {NULL, "\"low\"", "\"medium\"", "\"high\""};
    const char *names[2], *values[2];
    size_t nv = 0;
    if (s->thinking != THINK_AUTO) {
        names[nv] = "enable_thinking";
        values[nv++] = s->thinking == THINK_ON ? "true" : "false";
    }
    if (s->effort != EFFORT_AUTO) {
        names[nv] = "reasoning_effort";
        values[nv++] = effort_json[s->effort];
    }
    cf_chat_opts o = {.bos_token = s->bos_text, .eos_token = s->eos_text,
                      .add_generation_prompt = add_gen, .now = s->now,
                      .tools_json = s->tools ? s->tools : mode & MODE_EMPTY_TOOLS ? "[]" : NULL,
                      .n_vars = nv, .var_names = names, .var_json = values};
    rc = cf_chat_render(s->tmpl, cm, k, &o, text, len, err);
out:
    for (int i = 0; extra && i < n; i++)
        free(extra[i]);
    free(extra);
    free(slot);
    free(cm);
    return rc;
}

/* Render in the way that worked last time, else in any way that works. */
static int render_any(cf_session *s, int n, bool add_gen, char **text, size_t *len, cf_err *err)
{
    cf_err first;
    int rc = render(s, n, add_gen, s->render_mode, text, len, &first);
    for (int mode = 0; rc != 0 && mode < N_MODES; mode++)
        if (mode != s->render_mode && render(s, n, add_gen, mode, text, len, NULL) == 0) {
            s->render_mode = mode;
            rc = 0;
        }
    if (rc != 0 && err)
        *err = first;
    return rc;
}

int sess_render_text(cf_session *s, int n, bool add_gen, char **text, size_t *len, cf_err *err)
{
    if (render_any(s, n, add_gen, text, len, err))
        return -1;
    /* The tokenizer adds BOS (and EOS) itself: drop the template's copies,
     * as llama.cpp does, rather than doubling them. */
    const char *p = *text, *end = *text + *len;
    if (cf_tok_add_bos(s->tok) && s->bos_text && starts_with(p, end, s->bos_text))
        p += strlen(s->bos_text);
    if (cf_tok_add_eos(s->tok) && s->eos_text && end - p >= (ptrdiff_t)strlen(s->eos_text) &&
        starts_with(end - strlen(s->eos_text), end, s->eos_text))
        end -= strlen(s->eos_text);
    *len = (size_t)(end - p);
    memmove(*text, p, *len);
    (*text)[*len] = '\0';
    return 0;
}

int sess_prompt_tokens(cf_session *s, int n, bool add_gen, cf_tokens *out, char **keep,
                       size_t *keep_len, cf_err *err)
{
    char *text;
    size_t len;
    out->n = 0;
    if (sess_render_text(s, n, add_gen, &text, &len, err))
        return -1;
    int rc = sess_tokenize_text(s, n, text, len, PIECE_HEAD, out, err);
    if (keep && rc == 0) {
        *keep = text;
        *keep_len = len;
    } else {
        free(text);
    }
    return rc;
}

int sess_common_prefix(const cf_tokens *a, const cf_tokens *b)
{
    size_t n = a->n < b->n ? a->n : b->n, i = 0;
    while (i < n && a->ids[i] == b->ids[i])
        i++;
    return (int)i;
}

void sess_prime_split(const cf_session *s, const char *text, size_t len, splitter *sp)
{
    split_init(sp, s->fam);
    /* the generation prompt: what follows the last message */
    const char *tail = text, *end = text + len;
    for (const char *q = text; (q = memmem(q, (size_t)(end - q), SLOT_CLOSE, SLOT_MARK_LEN));) {
        q += SLOT_MARK_LEN;
        tail = q;
    }
    split_prime(sp, tail, (size_t)(end - tail));
}

/* ---- /show prompt ----------------------------------------------------------- */

/* What placeholder q stands for (NULL: it is not one), *after its end. */
static const char *slot_text(const cf_session *s, int n, const char *q, const char *end,
                             const char **after)
{
    bool reasoning;
    int idx = sess_slot_at(q, end, n, after, &reasoning);
    if (idx < 0)
        return NULL;
    const cf_message *m = &s->msgs[idx].pub;
    return reasoning ? (m->reasoning ? m->reasoning : "") : m->content;
}

/* text with each placeholder replaced by what it stands for (malloc'ed):
 * one pass to measure, one to write. */
static char *fill_slots(const cf_session *s, int n, const char *text, size_t len)
{
    const char *end = text + len;
    char *out = NULL;
    size_t size = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *run = text, *after, *fill;
        size_t o = 0;
        for (const char *q = text; (q = memmem(q, (size_t)(end - q), SLOT_OPEN, SLOT_MARK_LEN));) {
            if (!(fill = slot_text(s, n, q, end, &after))) {
                q += SLOT_MARK_LEN;
                continue;
            }
            if (out) {
                memcpy(out + o, run, (size_t)(q - run));
                memcpy(out + o + (size_t)(q - run), fill, strlen(fill));
            }
            o += (size_t)(q - run) + strlen(fill);
            run = q = after;
        }
        if (out) {
            memcpy(out + o, run, (size_t)(end - run));
            out[size] = '\0';
        } else if (!(out = malloc((size = o + (size_t)(end - run)) + 1))) {
            return NULL;
        }
    }
    return out;
}

int cf_session_prompt_text(cf_session *s, const char *user_text, char **text, int *n_tokens,
                           int *n_cached, cf_err *err)
{
    return s->eng->prompt_text(s, user_text, text, n_tokens, n_cached, err);
}

int sess_local_prompt_text(cf_session *s, const char *user_text, char **text, int *n_tokens,
                           int *n_cached, cf_err *err)
{
    bool dirty = s->dirty;
    *text = NULL;
    if (sess_push_msg(s, CF_ROLE_USER, user_text, strlen(user_text), err))
        return -1;
    char *raw = NULL;
    size_t len;
    cf_tokens full = {0};
    int rc = render_any(s, s->n_msgs, true, &raw, &len, err);
    if (rc == 0 && !(*text = fill_slots(s, s->n_msgs, raw, len)))
        rc = cf_fail(err, "out of memory");
    if (rc == 0 && (rc = sess_prompt_tokens(s, s->n_msgs, true, &full, NULL, NULL, err)) == 0) {
        *n_tokens = (int)full.n;
        *n_cached = sess_common_prefix(&s->cache, &full);
    }
    if (rc) {
        free(*text);
        *text = NULL;
    }
    free(raw);
    cf_tokens_free(&full);
    sess_pop_msg(s);
    s->dirty = dirty;
    return rc;
}
