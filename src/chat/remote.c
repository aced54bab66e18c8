/* The remote engine (engine.h): a session whose replies come from an
 * OpenAI-compatible server.  The transcript is the whole state: undo,
 * clear and a new system prompt only change the messages, and each
 * request sends them all.  Settings are sent only once given a value,
 * so a server's own defaults (and a hosted API that refuses fields it
 * does not know) stay in charge of the rest. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "remote.h"

/* ---- the request ---------------------------------------------------------------- */

char *remote_request(const cf_session *s, bool stream, size_t *len)
{
    const sess_remote *r = s->remote;
    const char *const *names = cf_session_setting_names();
    cf_oai_setting set[32];
    char values[32][64];
    int n_set = 0;
    for (int i = 0; names[i] && n_set < 32; i++) {
        /* given a value, with a field to carry it, and not "the default" */
        if (!(s->set_mask & 1u << i) || !cf_oai_field_of(names[i]) ||
            (!strcmp(names[i], "seed") && r->seed == CF_SAMPLER_SEED_RANDOM) ||
            (!strcmp(names[i], "n-predict") && s->n_predict < 0))
            continue;
        set[n_set] = (cf_oai_setting){names[i], cf_session_get(s, names[i], values[n_set], 64)};
        n_set++;
    }
    cf_message *msgs = malloc(((size_t)s->n_msgs + 1) * sizeof *msgs);
    if (!msgs)
        return NULL;
    for (int i = 0; i < s->n_msgs; i++)
        msgs[i] = s->msgs[i].pub;
    char *body = cf_oai_request_build(r->info.model, msgs, s->n_msgs, set, n_set,
                                      (const char *const *)s->stops, stream, len);
    free(msgs);
    return body;
}

/* ---- the model list -------------------------------------------------------------- */

/* GET {endpoint}/models, waiting at most wait_ms for silence. */
static int fetch_models(const sess_remote *r, long wait_ms, char ***ids, cf_err *err)
{
    char url[4200];
    snprintf(url, sizeof url, "%s/models", r->info.endpoint);
    http_opts o = {.url = url, .api_key = r->key, .idle_ms = wait_ms};
    http_call *c;
    if (http_start(&o, &c, err))
        return -1;
    cf_jbuf body = {.limit = 16 << 20};
    const char *data;
    size_t len;
    int rc;
    while ((rc = http_pump(c, 100, &data, &len, err)) == HTTP_WAIT || rc == HTTP_DATA)
        if (rc == HTTP_DATA)
            cf_jbuf_put(&body, data, len);
    http_end(c);
    if (rc == HTTP_DONE) {
        rc = body.failed ? cf_fail(err, "the server's model list is too large")
                         : cf_oai_models_decode(body.p ? body.p : "", body.n, ids, err);
    }
    cf_jbuf_free(&body);
    return rc;
}

int cf_session_models(cf_session *s, char ***ids, cf_err *err)
{
    *ids = NULL;
    if (!s->remote)
        return cf_fail(err, "a local model is not on a server");
    return fetch_models(s->remote, s->remote->idle_ms, ids, err);
}

const cf_remote_info *cf_session_remote(const cf_session *s)
{
    return s->remote ? &s->remote->info : NULL;
}

/* The model to ask for: the one given, completed to the one model id the
 * server lists that starts with it; none given, the server's only one.
 * Servers that answer for names they do not list (llama-server takes any)
 * get the name as given. */
static int choose_model(sess_remote *r, const char *given, cf_err *err)
{
    char **ids = NULL;
    cf_err why;
    bool listed = fetch_models(r, r->idle_ms < 10000 ? r->idle_ms : 10000, &ids, &why) == 0;
    const char *pick = given;
    size_t n = 0, n_prefix = 0;
    bool exact = false;
    for (; listed && ids[n]; n++) {
        exact |= given && !strcmp(ids[n], given);
        if (given && !strncmp(ids[n], given, strlen(given)) && ++n_prefix == 1)
            pick = ids[n];
    }
    if (given && (exact || n_prefix != 1))
        pick = given;
    int rc = 0;
    if (!given && !listed) {
        /* the failure's own class: a server not reached is a runtime
         * error (as when a request fails), not a bad option */
        rc = cf_fail_as(err, why.code, "no model given (-m NAME), and the server's model list "
                        "could not be read: %s", why.msg);
    } else if (!given && n != 1) {
        char list[256] = "";
        for (size_t i = 0; i < n && strlen(list) < 200; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     ids[i]);
        rc = n ? cf_fail_as(err, CF_E_USAGE, "the server has %zu models (%s): choose one with -m",
                            n, list)
               : cf_fail_as(err, CF_E_USAGE, "the server lists no model: name one with -m");
    } else if (!given) {
        pick = ids[0];
    }
    if (rc == 0 && !(r->info.model = strdup(pick)))
        rc = cf_fail(err, "out of memory");
    cf_oai_models_free(ids);
    return rc;
}

/* ---- the engine ------------------------------------------------------------------- */

static void remote_free(cf_session *s)
{
    sess_remote *r = s->remote;
    if (!r)
        return;
    remote_reply_free(r);
    /* the key leaves no copy behind in freed memory */
    if (r->key)
        memset(r->key, 0, strlen(r->key));
    free(r->key);
    free((char *)r->info.endpoint);
    free((char *)r->info.model);
    free(r);
    s->remote = NULL;
}

static void remote_drop_from(cf_session *s, int i)
{
    while (s->n_msgs > i)
        sess_pop_msg(s);
}

static int remote_resync(cf_session *s, cf_err *err)
{
    (void)s, (void)err;
    return 0;
}

static void remote_prefill(cf_session *s, int *reused, int *prefilled)
{
    (void)s;
    *reused = *prefilled = 0;
}

static void remote_context_info(const cf_session *s, cf_context_info *out)
{
    *out = (cf_context_info){.used = s->remote->used};
}

/* The request body indented for a person (it goes out on one line). */
static char *indented(char *body)
{
    cf_json *v;
    cf_err why;
    if (!body || cf_json_parse(body, strlen(body), NULL, &v, &why) < 0)
        return body;
    const cf_json_dump_opts o = {.indent = 2};
    char *out = cf_json_dump(v, &o, NULL);
    cf_json_free(v);
    if (!out)
        return body;
    free(body);
    return out;
}

static int remote_prompt_text(cf_session *s, const char *user_text, char **text, int *n_tokens,
                              int *n_cached, cf_err *err)
{
    bool dirty = s->dirty;
    *text = NULL;
    *n_tokens = *n_cached = 0;
    if (sess_push_msg(s, CF_ROLE_USER, user_text, strlen(user_text), err))
        return -1;
    *text = indented(remote_request(s, true, NULL));
    sess_pop_msg(s);
    s->dirty = dirty;
    return *text ? 0 : cf_fail(err, "out of memory");
}

const sess_engine sess_remote_engine = {
    .name = "remote",
    .open_reply = remote_open_reply,
    .next_part = remote_next_part,
    .end_reply = remote_end_reply,
    .drop_from = remote_drop_from,
    .resync = remote_resync,
    .prefill = remote_prefill,
    .context_info = remote_context_info,
    .prompt_text = remote_prompt_text,
    .free = remote_free,
};

int sess_remote_open(cf_session *s, const cf_session_params *p, cf_err *err)
{
    if (!http_available(err))
        return -1;
    sess_remote *r = calloc(1, sizeof *r);
    if (!r)
        return cf_fail(err, "out of memory");
    s->remote = r;
    s->eng = &sess_remote_engine;
    size_t n = strlen(p->endpoint);
    while (n > 0 && p->endpoint[n - 1] == '/')
        n--;
    r->info.endpoint = strndup(p->endpoint, n);
    r->key = p->api_key ? strdup(p->api_key) : NULL;
    r->idle_ms = p->timeout_ms > 0 ? p->timeout_ms : 300000;
    r->retries = p->retries == 0 ? 3 : p->retries < 0 ? 0 : p->retries;
    r->seed = CF_SAMPLER_SEED_RANDOM;
    cf_sampler_params_default(&r->par);
    /* the server's template decides what the thinking switches do */
    s->reasoning.thinking_switch = s->reasoning.effort = true;
    s->tmpl_desc = strdup("the server's (it renders the prompt)");
    if (!r->info.endpoint || (p->api_key && !r->key) || !s->tmpl_desc)
        return cf_fail(err, "out of memory");
    if (strncmp(r->info.endpoint, "http://", 7) && strncmp(r->info.endpoint, "https://", 8))
        return cf_fail_as(err, CF_E_USAGE, "'%s' is not an http:// or https:// URL",
                          r->info.endpoint);
    return choose_model(r, p->remote_model && *p->remote_model ? p->remote_model : NULL, err);
}
