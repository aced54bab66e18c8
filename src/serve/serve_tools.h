/* Tools in confab serve's replies (serve_tools.c): the request's tools
 * and tool_choice onto the session, and each choice's content read back
 * into calls as it streams. */
#ifndef CONFAB_SERVE_TOOLS_H
#define CONFAB_SERVE_TOOLS_H

#include "confab/tools.h"
#include "serve_internal.h"

typedef struct serve_tools {
    bool on;              /* the reply is read for calls */
    cf_tool_format as;    /* the syntax they are read in */
    bool one_call;        /* parallel_tool_calls false: the first call only */
} serve_tools;

/* The request's tools rendered into the slot's session s (none when
 * tool_choice is none), a required call's grammar set; a template that renders no tools, or tools the
 * grammar cannot hold to, is an error naming the field (CF_E_USAGE). */
int serve_tools_apply(cf_session *s, const cf_oai_request *rq, serve_tools *t, char *param,
                      size_t param_len, cf_err *err);

/* One choice's calls, read from its content as it comes. */
typedef struct serve_calls {
    cf_tool_parser parser;
    bool one_call;
    size_t sent;          /* bytes of the content let out so far */
    cf_tool_call *calls;  /* at the end */
    int n_calls;
} serve_calls;

void serve_calls_init(serve_calls *c, const serve_tools *t);
/* A piece of content: how much of it may go out now (the rest is held
 * back: it may be a call); *out points at it. */
size_t serve_calls_feed(serve_calls *c, const char *piece, const char **out);
/* Job j's reply ended: its content without the calls (malloc'ed), the
 * calls with ids (cf_tool_call.id: the model's own, else a fresh one unique
 * to this server); *rest: the content not let out yet. */
char *serve_calls_finish(serve_calls *c, const server *sv, const serve_job *j, int choice,
                         const char **rest);
void serve_calls_free(serve_calls *c);

#endif
