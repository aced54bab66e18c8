/* What Tab completes at a point of the input line. */
#ifndef CONFAB_UI_COMPLETE_H
#define CONFAB_UI_COMPLETE_H

#include "confab/session.h"

typedef enum complete_kind {
    COMPLETE_NOTHING, /* inside a message */
    COMPLETE_WORDS,   /* one of *words */
    COMPLETE_FILES,   /* a path (/save, /load) */
} complete_kind;

/* line: the whole input line; start: where the word being completed
 * begins; s: the session (its branches; NULL: none).  For COMPLETE_WORDS,
 * *words is the NULL-terminated candidate list (the caller keeps those
 * starting with the word; valid until the next call). */
complete_kind complete_what(const cf_session *s, const char *line, int start,
                            const char *const **words);

#endif
