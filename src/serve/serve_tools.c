/* Tools in a reply: what the request's tools and tool_choice set on the
 * session, and the calls read back from each choice's content.
 *
 * tool_choice none renders no tools; auto renders them and reads calls
 * out of whatever the model writes; required or a named function also
 * holds the reply to the grammar of a call, in the format's own syntax
 * where it is plain text around one JSON document, else (or where the
 * vocabulary cannot spell its markers) as one bare JSON call, read as
 * such. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/grammar.h"
#include "serve_tools.h"

static int refuse(char *param, size_t param_len, const char *field, cf_err *err, const char *msg)
{
    snprintf(param, param_len, "%s", field);
    return cf_fail_as(err, CF_E_USAGE, "%s: %s", field, msg);
}

/* Which required call's grammar this is, for the session to keep:
 * "tools", the syntax, the function named, the list (NULL: out of memory,
 * no key). */
static char *tools_key(const char *tools, const char *name, cf_tool_format as)
{
    size_t n = strlen(tools) + (name ? strlen(name) : 0) + 48;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "tools %s %s %s", cf_tools_format_name(as), name ? name : "*", tools);
    return key;
}

int serve_tools_apply(cf_session *s, const cf_oai_request *rq, serve_tools *t, char *param,
                      size_t param_len, cf_err *err)
{
    bool on = rq->tools && rq->tool_choice != CF_OAI_TOOLS_NONE;
    *t = (serve_tools){.on = on, .as = (cf_tool_format)cf_session_tool_format(s),
                       .one_call = rq->one_call};
    if (cf_session_set_tools(s, on ? rq->tools : NULL, err))
        return -1;
    if (on && t->as == CF_TOOLS_NONE)
        return refuse(param, param_len, "tools", err,
                      "the model's chat template renders no tools (give one that does with "
                      "--chat-template-file)");
    bool required =
        rq->tool_choice == CF_OAI_TOOLS_REQUIRED || rq->tool_choice == CF_OAI_TOOLS_NAMED;
    if (!on || !required)
        return 0;
    if (rq->format)
        return refuse(param, param_len, "response_format", err,
                      "a reply that must call a tool cannot also be held to a response format");
    /* the format's own syntax first; where the vocabulary cannot spell its
     * markers (no byte tokens), the bare call */
    for (int framed = 1; framed >= 0; framed--) {
        struct cf_grammar *g;
        cf_err why;
        cf_tool_format as;
        if (cf_tools_grammar(t->as, rq->tools, rq->tool_name, framed, &g, &as, &why))
            return refuse(param, param_len, rq->tool_name ? "tool_choice" : "tools", err,
                          why.msg + (strncmp(why.msg, "tools: ", 7) ? 0 : 7));
        char *key = tools_key(rq->tools, rq->tool_name, as);
        int rc = cf_session_set_grammar(s, "tool call", key, g,
                                        framed && as != CF_TOOLS_JSON ? NULL : &why);
        free(key);
        if (rc == 0) {
            t->as = as;
            return 0;
        }
        if (!framed || as == CF_TOOLS_JSON)
            return cf_fail_as(err, why.code, "%s", why.msg);
    }
    return 0;
}

void serve_calls_init(serve_calls *c, const serve_tools *t)
{
    *c = (serve_calls){.one_call = t->one_call};
    cf_tool_parser_init(&c->parser, t->on ? t->as : CF_TOOLS_NONE);
}

size_t serve_calls_feed(serve_calls *c, const char *piece, const char **out)
{
    long safe = cf_tool_parser_feed(&c->parser, piece, strlen(piece));
    size_t from = c->sent;
    if (safe < 0 || (size_t)safe <= from) /* out of memory: held back, finish tells */
        return 0;
    *out = c->parser.text + from;
    c->sent = (size_t)safe;
    return (size_t)safe - from;
}

/* A call id of 9 letters and digits (Mistral's templates check the
 * length), unique to this server: its start time, the reply, the choice,
 * the call. */
static void fresh_id(char out[10], const server *sv, const serve_job *j, int choice, int k)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned long long h = 1469598103934665603ull;
    unsigned long long parts[4] = {(unsigned long long)sv->created, j->n_reply,
                                   (unsigned long long)choice, (unsigned long long)k};
    for (int i = 0; i < 4; i++)
        h = (h ^ parts[i]) * 1099511628211ull;
    for (int i = 0; i < 9; i++, h /= 62)
        out[i] = digits[h % 62];
    out[9] = 0;
}

char *serve_calls_finish(serve_calls *c, const server *sv, const serve_job *j, int choice,
                         const char **rest)
{
    char *content = NULL;
    size_t raw_len;
    const char *raw = cf_session_reply_text(j->s, &raw_len);
    if (c->parser.f == CF_TOOLS_HARMONY && raw)
        cf_tools_harmony_recipient(&c->parser, raw, raw_len);
    if (cf_tool_parser_finish(&c->parser, &content, &c->calls, &c->n_calls, NULL))
        return NULL;
    while (c->one_call && c->n_calls > 1) { /* the calls after the first are dropped */
        cf_tool_call *t = &c->calls[--c->n_calls];
        free(t->id);
        free(t->name);
        free(t->arguments);
    }
    for (int k = 0; k < c->n_calls; k++) {
        char id[10];
        fresh_id(id, sv, j, choice, k);
        if (!c->calls[k].id)
            c->calls[k].id = strdup(id);
    }
    size_t n = strlen(content);
    *rest = content + (c->sent < n ? c->sent : n);
    return content;
}

void serve_calls_free(serve_calls *c)
{
    cf_tool_calls_free(c->calls, c->n_calls);
    cf_tool_parser_free(&c->parser);
    *c = (serve_calls){.sent = 0};
}
