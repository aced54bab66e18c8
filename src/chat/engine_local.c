/* The local engine's operations (engine.h): the model answers. */
#include "session_internal.h"

const sess_engine sess_local_engine = {
    .name = "local",
    .open_reply = sess_local_open_reply,
    .next_part = sess_local_next_part,
    .end_reply = sess_local_end_reply,
    .drop_from = sess_local_drop_from,
    .resync = sess_local_resync,
    .prefill = sess_local_prefill,
    .context_info = sess_local_context_info,
    .prompt_text = sess_local_prompt_text,
    .free = sess_local_free,
};
