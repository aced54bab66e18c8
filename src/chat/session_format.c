/* The replies' format (ollama's format, /set format): off, json (any JSON
 * object) or a JSON schema's file.  The grammar holds from a reply's first
 * token outside a thinking block: a block the template opens is the
 * model's to write freely, and the answer after it is the grammar's (a
 * model that would open one itself cannot then).  Not kept in session
 * files: a loaded session's format is the current one. */
#include <stdlib.h>
#include <string.h>

#include "reasoning.h"
#include "session_internal.h"

int sess_set_format(cf_session *s, const char *value, cf_err *err)
{
    bool off = !*value || !strcmp(value, "off");
    if (!off && s->remote)
        return cf_fail_as(err, CF_E_USAGE, "format: a remote server's replies cannot be "
                                           "constrained here");
    cf_grammar *g = NULL;
    if (!off && !strcmp(value, "json")) {
        if (cf_grammar_json(&g, err))
            return -1;
    } else if (!off) {
        size_t len;
        char *text = sess_read_file(value, &len, NULL);
        if (!text)
            return cf_fail_as(err, CF_E_USAGE, "format: '%s' is not json, off, or a JSON "
                                               "schema's file", value);
        int rc = cf_grammar_from_json_schema(text, &g, err);
        free(text);
        if (rc)
            return -1;
    }
    /* a file may change between two settings: only json is the same */
    return cf_session_set_grammar(s, value, g && !strcmp(value, "json") ? "json" : NULL, g, err);
}

/* Whether the grammar's start allows any token (a vocabulary without byte
 * tokens may be unable to spell what it begins with). */
static bool any_token(cf_constraint *c, int n_vocab)
{
    const uint64_t *mask = cf_constraint_mask(c);
    for (int w = 0; mask && w < (n_vocab + 63) / 64; w++)
        if (mask[w])
            return true;
    return false;
}

static struct sess_grammar *kept_grammar(cf_session *s, const char *key)
{
    for (size_t i = 0; key && i < sizeof s->grammars / sizeof s->grammars[0]; i++)
        if (s->grammars[i].key && !strcmp(s->grammars[i].key, key))
            return &s->grammars[i];
    return NULL;
}

static void free_kept(struct sess_grammar *k)
{
    cf_constraint_free(k->c);
    cf_grammar_free(k->g);
    free(k->key);
    *k = (struct sess_grammar){.key = NULL};
}

/* Keep g and c under key in the least recently used place (the format
 * in use is let go of first, so any place may go); false: out of memory,
 * nothing kept. */
static bool keep(cf_session *s, const char *key, cf_grammar *g, cf_constraint *c)
{
    char *copy = strdup(key);
    if (!copy)
        return false;
    struct sess_grammar *old = &s->grammars[0];
    for (size_t i = 1; i < sizeof s->grammars / sizeof s->grammars[0]; i++)
        if (s->grammars[i].used < old->used)
            old = &s->grammars[i];
    free_kept(old);
    *old = (struct sess_grammar){copy, g, c, ++s->grammar_clock};
    return true;
}

int cf_session_set_grammar(cf_session *s, const char *what, const char *key, cf_grammar *g,
                           cf_err *err)
{
    if (g && s->remote) {
        cf_grammar_free(g);
        return cf_fail_as(err, CF_E_USAGE, "format: a remote server's replies cannot be "
                                           "constrained here");
    }
    char *name = g ? strdup(what) : NULL;
    if (g && !name) {
        cf_grammar_free(g);
        return cf_fail(err, "out of memory");
    }
    struct sess_grammar *k = g ? kept_grammar(s, key) : NULL;
    cf_constraint *c = NULL;
    if (k) { /* the same grammar again: its masks are there already */
        cf_grammar_free(g);
        sess_format_free(s);
        k->used = ++s->grammar_clock;
        s->format = name;
        s->format_g = k->g;
        s->format_c = k->c;
        s->format_kept = true;
        return 0;
    }
    if (g && cf_constraint_create(g, s->tok, &c, err)) {
        cf_grammar_free(g);
        free(name);
        return -1;
    }
    if (c && !any_token(c, cf_tok_n_vocab(s->tok))) {
        cf_constraint_free(c);
        cf_grammar_free(g);
        free(name);
        return cf_fail_as(err, CF_E_USAGE, "format: no token of this vocabulary can begin "
                                          "what the grammar asks for");
    }
    sess_format_free(s);
    s->format = name;
    s->format_g = g;
    s->format_c = c;
    s->format_kept = g && key && keep(s, key, g, c);
    return 0;
}

void sess_format_free(cf_session *s)
{
    if (!s->format_kept) {
        cf_constraint_free(s->format_c);
        cf_grammar_free(s->format_g);
    }
    free(s->format);
    s->format_c = NULL;
    s->format_g = NULL;
    s->format = NULL;
    s->format_kept = false;
}

void sess_format_close(cf_session *s)
{
    sess_format_free(s);
    for (size_t i = 0; i < sizeof s->grammars / sizeof s->grammars[0]; i++)
        free_kept(&s->grammars[i]);
}

int sess_format_mask(cf_session *s, cf_err *err)
{
    sess_reply *r = &s->reply;
    r->constrained = s->format_c && !r->script && !split_in_reasoning(&r->sp);
    const uint64_t *mask = r->constrained ? cf_constraint_mask(s->format_c) : NULL;
    if (r->constrained && !mask)
        return cf_fail(err, "out of memory for the format's grammar");
    cf_sampler_set_mask(s->smp, mask);
    return 0;
}

int sess_format_accept(cf_session *s, cf_token t, cf_err *err)
{
    return s->reply.constrained ? cf_constraint_accept(s->format_c, t, err) : 0;
}
