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
    return cf_session_set_grammar(s, value, g, err);
}

/* Whether the grammar's start allows any token (a text a control token
 * alone spells, such as [TOOL_CALLS] in Mistral's vocabulary, allows none). */
static bool any_token(cf_constraint *c, int n_vocab)
{
    const uint64_t *mask = cf_constraint_mask(c);
    for (int w = 0; mask && w < (n_vocab + 63) / 64; w++)
        if (mask[w])
            return true;
    return false;
}

int cf_session_set_grammar(cf_session *s, const char *what, cf_grammar *g, cf_err *err)
{
    if (g && s->remote) {
        cf_grammar_free(g);
        return cf_fail_as(err, CF_E_USAGE, "format: a remote server's replies cannot be "
                                           "constrained here");
    }
    cf_constraint *c = NULL;
    char *name = g ? strdup(what) : NULL;
    if (g && (!name || cf_constraint_create(g, s->tok, &c, err))) {
        cf_grammar_free(g);
        free(name);
        return name ? -1 : cf_fail(err, "out of memory");
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
    return 0;
}

void sess_format_free(cf_session *s)
{
    cf_constraint_free(s->format_c);
    cf_grammar_free(s->format_g);
    free(s->format);
    s->format_c = NULL;
    s->format_g = NULL;
    s->format = NULL;
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
