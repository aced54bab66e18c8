/* The remote engine's state: the server, the settings' values, and the
 * reply streaming in (remote.c opens and answers the session's questions,
 * remote_reply.c runs the replies). */
#ifndef CONFAB_CHAT_REMOTE_H
#define CONFAB_CHAT_REMOTE_H

#include "confab/openai.h"
#include "http_client.h"
#include "json.h"
#include "session_internal.h"

typedef struct sess_remote {
    cf_remote_info info;   /* endpoint (no trailing slash) and model */
    char *key;
    long idle_ms;
    int retries;
    cf_sampler_params par; /* the sampler settings' values */
    uint64_t seed;         /* CF_SAMPLER_SEED_RANDOM: none given */
    int used;              /* the last reply's prompt and reply tokens */

    /* the reply under way */
    http_call *call;
    bool json;             /* the server answered with one JSON body, not a stream */
    cf_sse sse;
    cf_jbuf body;           /* the JSON body */
    cf_jbuf raw;            /* the content as it streams */
    splitter sp;           /* of raw: a reply that opens with <think> reasons first */
    cf_jbuf reasoning, content; /* the reply's parts so far */
    size_t r_shown, c_shown;   /* of those, handed out */
    cf_jbuf out[2];         /* the parts of this step (reasoning, content) */
    bool any;              /* some of the reply came */
    int events;            /* server-sent events read */
    bool got_done, got_finish;
    char finish[16];
    cf_oai_usage usage;
    cf_err fail;           /* what an event said went wrong ("": nothing) */
    bool forked;           /* the reply follows a fork made for it (/regen, an edit) */
    double t0, t_first;
} sess_remote;

/* remote.c: the request for the conversation as it stands. */
char *remote_request(const cf_session *s, bool stream, size_t *len);

/* remote_reply.c */
int remote_open_reply(cf_session *s, double t0, bool forked, cf_err *err);
int remote_next_part(cf_session *s, cf_reply_part *part, cf_err *err);
void remote_end_reply(cf_session *s, bool cut);
void remote_reply_free(sess_remote *r);
/* The reply under way as it stands, into m (for a save mid-reply). */
void remote_reply_now(const cf_session *s, sess_msg *m);

#endif
