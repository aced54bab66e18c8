/* A session's life: opening the model, its tokenizer, context, chat
 * template and sampler; the message list; what the caller may inspect. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session_internal.h"

char *sess_read_file(const char *path, size_t *len, cf_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cf_fail(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)size + 1);
    if (!buf) {
        cf_fail(err, size < 0 ? "cannot read %s: not a regular file" : "out of memory reading %s",
                path);
    } else if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        cf_fail(err, "cannot read %s: %s", path, ferror(f) ? strerror(errno) : "it shrank");
        free(buf);
        buf = NULL;
    } else {
        buf[size] = '\0';
        *len = (size_t)size;
    }
    fclose(f);
    return buf;
}

char *sess_utf8_clean(const char *text, size_t len)
{
    char *out = malloc(CF_UTF8_STREAM_OUT(len) + 4);
    if (!out)
        return NULL;
    cf_utf8_stream u = {0};
    size_t n = cf_utf8_stream_feed(&u, text, len, out);
    n += cf_utf8_stream_flush(&u, out + n);
    out[n] = '\0';
    return out;
}

bool sess_utf8_valid(const char *text, size_t len)
{
    char *clean = sess_utf8_clean(text, len);
    bool ok = clean && strlen(clean) == len && memcmp(clean, text, len) == 0;
    free(clean);
    return ok;
}

int sess_push_msg(cf_session *s, cf_role role, const char *text, size_t len, cf_err *err)
{
    if (s->n_msgs == s->cap_msgs) {
        int cap = s->cap_msgs ? 2 * s->cap_msgs : 16;
        sess_msg *m = realloc(s->msgs, (size_t)cap * sizeof *m);
        if (!m)
            return cf_fail(err, "out of memory");
        s->msgs = m;
        s->cap_msgs = cap;
    }
    char *copy = sess_utf8_clean(text, len);
    if (!copy)
        return cf_fail(err, "out of memory");
    s->msgs[s->n_msgs++] = (sess_msg){.pub = {.role = role, .content = copy}, .start = -1};
    s->dirty = true;
    return 0;
}

void sess_msg_free(sess_msg *m)
{
    free((char *)m->pub.content);
    free((char *)m->pub.reasoning);
    free((char *)m->pub.tool_calls);
    free((char *)m->pub.tool_call_id);
    cf_tokens_free(&m->ids);
    cf_tokens_free(&m->rids);
    free(m->probs);
}

void sess_pop_msg(cf_session *s)
{
    sess_msg_free(&s->msgs[--s->n_msgs]);
    s->dirty = true;
}

int sess_first_user(const cf_session *s)
{
    int i = 0;
    while (i < s->n_msgs && s->msgs[i].pub.role != CF_ROLE_USER)
        i++;
    return i;
}

/* The vocabulary's text of a special token, NUL-terminated, or NULL. */
static char *token_text(const cf_tokenizer *t, cf_token id)
{
    if (id < 0)
        return NULL;
    cf_str str = cf_tok_text(t, id);
    return strndup(str.ptr, str.len);
}

/* A model never trained on its chat format rarely ends a reply: one whose
 * file has no template (the one used is a guess), or whose vocabulary
 * lacks the marker that ends a turn in it (chat training makes it a
 * token).  The marker is the one the template writes after a reply, else
 * (a template that writes none) any of its family's. */
static void judge_chat_training(cf_session *s, const cf_chat_choice *c)
{
    if (!c->name && !c->file_text && !c->gguf_template) {
        snprintf(s->untrained, sizeof s->untrained, "its file has no chat template (%s is a guess)",
                 cf_chat_template_family(s->tmpl));
        return;
    }
    char end[64];
    const char *const written[] = {end, NULL};
    const char *const *markers =
        cf_chat_template_turn_end(s->tmpl, s->bos_text, s->eos_text, end, sizeof end) == 0 && *end
            ? written
            : cf_chat_template_stops(s->tmpl);
    for (const char *const *m = markers; *m; m++)
        if (cf_tok_find(s->tok, *m, strlen(*m)) != CF_TOKEN_NULL)
            return;
    if (markers[0])
        snprintf(s->untrained, sizeof s->untrained, "its vocabulary has no %s token", markers[0]);
}

static int open_template(cf_session *s, const cf_session_params *p, cf_err *err)
{
    const cf_tok_special *sp = cf_tok_special_ids(s->tok);
    s->bos_text = token_text(s->tok, sp->bos);
    s->eos_text = token_text(s->tok, sp->eos);
    cf_chat_choice c = {
        .name = p->chat_template, .bos_token = s->bos_text, .eos_token = s->eos_text};
    char *file = NULL;
    if (p->chat_template_file) {
        if (!(file = sess_read_file(p->chat_template_file, &c.file_len, err)))
            return -1;
        c.file_text = file;
        c.file_name = p->chat_template_file;
    }
    cf_str gt;
    if (cf_gguf_get_str(cf_model_gguf(s->model), "tokenizer.chat_template", &gt)) {
        c.gguf_template = gt.ptr;
        c.gguf_len = gt.len;
    }
    char note[256] = "";
    int rc = cf_chat_template_choose(&c, &s->tmpl, note, sizeof note, err);
    free(file);
    if (rc)
        return -1;
    judge_chat_training(s, &c);
    const char *label = cf_chat_template_label(s->tmpl);
    size_t n = strlen(label) + strlen(note) + 3;
    if (!(s->tmpl_desc = malloc(n)))
        return cf_fail(err, "out of memory");
    snprintf(s->tmpl_desc, n, note[0] ? "%s; %s" : "%s", label, note);
    /* replies are split by the template's markers, else by <think> tags
     * when the vocabulary has them (a Qwen3 model under a built-in) */
    s->reasoning = *cf_chat_template_reasoning(s->tmpl);
    if (!s->reasoning.family && cf_tok_find(s->tok, "<think>", 7) != CF_TOKEN_NULL &&
        cf_tok_find(s->tok, "</think>", 8) != CF_TOKEN_NULL)
        s->reasoning.family = reasoning_family_name(RF_THINK);
    s->fam = reasoning_family_named(s->reasoning.family);
    return 0;
}

/* The local engine: the model, its tokenizer, context, chat template
 * and sampler. */
int sess_local_open(cf_session *s, const cf_session_params *p, cf_err *err)
{
    cf_ctx_params cp = {.n_ctx = p->n_ctx,
                        .n_batch = p->n_batch,
                        .n_threads = p->n_threads,
                        .type_k = p->type_k,
                        .type_v = p->type_v,
                        .kv_no_rotate = p->kv_no_rotate,
                        .n_gpu_layers = p->n_gpu_layers,
                        .gpu_device = p->gpu_device};
    cf_sampler_params sp;
    cf_sampler_params_default(&sp);
    s->eng = &sess_local_engine;
    s->model_path = realpath(p->model_path, NULL);
    if (!s->model_path)
        s->model_path = strdup(p->model_path);
    s->model_pick = strdup(p->model_pick ? p->model_pick : "");
    if (!s->model_path || !s->model_pick)
        return cf_fail(err, "out of memory");
    s->model_shared = p->model != NULL;
    if (s->model_shared)
        s->model = (cf_model *)p->model; /* read only: the session never changes its model */
    else if (cf_model_load_as(p->model_path, p->tokenizer_path, p->load_mode, &s->model, err))
        return cf_err_class(err, CF_E_MODEL);
    if (cf_tokenizer_create(cf_model_gguf(s->model), &s->tok, err))
        return cf_err_class(err, CF_E_MODEL);
    if (cf_ctx_new(s->model, &cp, &s->ctx, err) || sess_spec_open(s, p, err))
        return -1;
    if (open_template(s, p, err))
        return cf_err_class(err, CF_E_TEMPLATE);
    if (sess_sampler_reset(s, &sp, CF_SAMPLER_SEED_RANDOM, err) || sess_script_load(s, err))
        return -1;
    s->logits = malloc((size_t)cf_model_hparams(s->model)->n_vocab * sizeof *s->logits);
    return s->logits ? 0 : cf_fail(err, "out of memory");
}

void sess_local_free(cf_session *s)
{
    cf_tokens_free(&s->cache);
    free(s->reply.text);
    cf_tokens_free(&s->reply.ids);
    free(s->reply.ends);
    free(s->reply.probs);
    free(s->reply.out[0]);
    free(s->reply.out[1]);
    sess_script_free(s);
    free(s->logits);
    sess_format_close(s);
    cf_sampler_free(s->smp);
    cf_chat_template_free(s->tmpl);
    free(s->bos_text);
    free(s->eos_text);
    sess_spec_free(s);
    cf_ctx_free(s->ctx);
    cf_tokenizer_free(s->tok);
    if (!s->model_shared)
        cf_model_free(s->model);
    free(s->model_path);
    free(s->model_pick);
}

int cf_session_new(const cf_session_params *p, cf_session **out, cf_err *err)
{
    *out = NULL;
    cf_session *s = calloc(1, sizeof *s);
    if (!s)
        return cf_fail(err, "out of memory");
    s->reply.pending = CF_TOKEN_NULL;
    s->n_predict = -1;
    s->now = (int64_t)time(NULL);
    s->any_model = p->any_model;
    s->messages_as_text = p->messages_as_text;
    s->test_delay_ms = sess_test_delay_ms();
    if ((p->endpoint ? sess_remote_open(s, p, err) : sess_local_open(s, p, err)) ||
        sess_branches_init(s, err))
        goto fail;
    if (!(s->stops = calloc(1, sizeof *s->stops))) {
        cf_fail(err, "out of memory");
        goto fail;
    }
    if (p->system_prompt && cf_session_set_system(s, p->system_prompt, err))
        goto fail;
    if (s->untrained[0])
        s->n_predict = CF_SESSION_UNTRAINED_N_PREDICT;
    s->dirty = false;
    *out = s;
    return 0;
fail:
    cf_session_free(s);
    return -1;
}

void cf_session_free(cf_session *s)
{
    if (!s)
        return;
    while (s->n_msgs > 0)
        sess_pop_msg(s);
    free(s->msgs);
    sess_branches_free(s);
    for (size_t i = 0; s->stops && i < s->n_stops; i++)
        free(s->stops[i]);
    free(s->stops);
    free(s->bias);
    free(s->tools);
    free(s->tmpl_desc);
    if (s->eng)
        s->eng->free(s);
    free(s);
}

int cf_session_n_messages(const cf_session *s)
{
    return s->n_msgs;
}

const cf_message *cf_session_message(const cf_session *s, int i)
{
    return i >= 0 && i < s->n_msgs ? &s->msgs[i].pub : NULL;
}

int cf_session_set_stops(cf_session *s, const char *const *stops, size_t n, cf_err *err)
{
    char **list = calloc(n + 1, sizeof *list);
    if (!list)
        return cf_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!stops[i][0] || !(list[i] = strdup(stops[i]))) {
            for (size_t k = 0; k < i; k++)
                free(list[k]);
            free(list);
            return stops[i][0] ? cf_fail(err, "out of memory")
                               : cf_fail(err, "a stop string is empty");
        }
    }
    for (size_t i = 0; i < s->n_stops; i++)
        free(s->stops[i]);
    free(s->stops);
    s->stops = list;
    s->n_stops = n;
    s->dirty = true;
    return 0;
}

const char *const *cf_session_stops(const cf_session *s)
{
    return (const char *const *)s->stops;
}

int cf_session_set_logit_bias(cf_session *s, const cf_logit_bias *b, size_t n, cf_err *err)
{
    if (s->remote && n)
        return cf_fail_as(err, CF_E_USAGE, "a remote model's logits are the server's: no bias");
    int n_vocab = s->remote ? 0 : cf_model_hparams(s->model)->n_vocab;
    for (size_t i = 0; i < n; i++) {
        if (b[i].id < 0 || b[i].id >= n_vocab)
            return cf_fail_as(err, CF_E_USAGE, "logit bias: token %d is not in the vocabulary "
                              "(0 to %d)", (int)b[i].id, n_vocab - 1);
        if (!(b[i].bias >= -100 && b[i].bias <= 100))
            return cf_fail_as(err, CF_E_USAGE, "logit bias: %g for token %d is not in [-100, 100]",
                              (double)b[i].bias, (int)b[i].id);
    }
    cf_logit_bias *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (n && !copy)
        return cf_fail(err, "out of memory");
    if (n)
        memcpy(copy, b, n * sizeof *copy);
    free(s->bias);
    s->bias = copy;
    s->n_bias = n;
    return 0;
}

const cf_turn_stats *cf_session_last_stats(const cf_session *s)
{
    return &s->stats;
}

void cf_session_context_info(const cf_session *s, cf_context_info *out)
{
    s->eng->context_info(s, out);
}

void sess_local_context_info(const cf_session *s, cf_context_info *out)
{
    out->used = cf_ctx_n_past(s->ctx);
    out->total = cf_ctx_n_ctx(s->ctx);
    out->shift_would_drop = sess_shift_plan(s, out->used, 0, &out->shift_would_drop_turns);
}

const cf_model *cf_session_model(const cf_session *s)
{
    return s->model;
}

const char *cf_session_gpu_note(const cf_session *s)
{
    return s->ctx ? cf_ctx_gpu_note(s->ctx) : "";
}

const int32_t *cf_session_tokens(const cf_session *s, int *n)
{
    *n = (int)s->cache.n;
    return s->cache.ids;
}

const float *cf_session_logits(const cf_session *s)
{
    return s->have_logits ? s->logits : NULL;
}

const char *cf_session_template_desc(const cf_session *s)
{
    return s->tmpl_desc;
}

const char *cf_session_template_source(const cf_session *s)
{
    return s->tmpl ? cf_chat_template_source(s->tmpl) : NULL;
}

const char *cf_session_untrained(const cf_session *s)
{
    return s->untrained[0] ? s->untrained : NULL;
}

const cf_chat_reasoning *cf_session_reasoning(const cf_session *s)
{
    return &s->reasoning;
}

const cf_token_prob *cf_session_probs(const cf_session *s, int i, int *n)
{
    const sess_msg *m = i >= 0 && i < s->n_msgs ? &s->msgs[i] : NULL;
    *n = m ? m->n_probs : 0;
    return m && m->n_probs ? m->probs : NULL;
}

cf_str cf_session_token_text(const cf_session *s, int32_t id)
{
    return s->tok ? sess_raw_piece(s, id) : (cf_str){"", 0};
}

bool cf_session_dirty(const cf_session *s)
{
    return s->dirty;
}
