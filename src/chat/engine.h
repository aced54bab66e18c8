/* What a session drives to get its replies: an engine.
 *
 * The session itself (cf_session) keeps the conversation, the settings,
 * the stop strings and the statistics, and does undo, regenerate, clear,
 * save and load the same way whatever answers.  An engine turns the
 * conversation into a reply and keeps whatever it needs for that:
 *
 *   local   the model, its tokenizer, chat template, KV cache and sampler
 *           (session_turn.c, session_reply.c, session_prompt.c): each turn
 *           renders the conversation, keeps the cache's common prefix and
 *           prefills the rest;
 *   remote  an OpenAI-compatible server (remote.c, remote_reply.c): the
 *           transcript is the whole state, sent with every request, and
 *           the reply comes back as a stream of server-sent events.
 *
 * The operations are those where the two differ; everything else is the
 * session's. */
#ifndef CONFAB_CHAT_ENGINE_H
#define CONFAB_CHAT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/session.h"

typedef struct sess_engine {
    const char *name; /* "local", "remote" */
    /* Open a reply to the conversation as it stands (its last message is
     * the user's) and push its assistant message.  forked: the reply
     * follows a fork made for it (/regen, an edit), which a remote engine
     * undoes should the server fail before it writes anything (a local
     * one fails here, and its caller undoes it). */
    int (*open_reply)(cf_session *s, double t0, bool forked, cf_err *err);
    /* The reply's next part, as cf_session_next_part (called only while a
     * reply is open and not finished). */
    int (*next_part)(cf_session *s, cf_reply_part *part, cf_err *err);
    /* Finish the open reply where it stands (cut: the user stopped it). */
    void (*end_reply)(cf_session *s, bool cut);
    /* Drop messages i.. (undo, clear) and what the engine holds of them. */
    void (*drop_from)(cf_session *s, int i);
    /* The conversation changed before its end (a new system prompt):
     * keep what still agrees with it. */
    int (*resync)(cf_session *s, cf_err *err);
    /* The current branch changed (a switch): take in what its messages add
     * now, *reused tokens kept and *prefilled evaluated (0 when the
     * engine holds none). */
    void (*prefill)(cf_session *s, int *reused, int *prefilled);
    void (*context_info)(const cf_session *s, cf_context_info *out);
    /* cf_session_prompt_text: the local engine's rendering, or the
     * request a remote one would send. */
    int (*prompt_text)(cf_session *s, const char *user_text, char **text, int *n_tokens,
                       int *n_cached, cf_err *err);
    /* Free the engine's own state (the messages are the session's). */
    void (*free)(cf_session *s);
} sess_engine;

extern const sess_engine sess_local_engine;
extern const sess_engine sess_remote_engine;

#endif
