/* Shared by every layer: the error convention and a few tiny helpers.
 *
 * Errors propagate as return codes (0 = ok, negative = failure) with a
 * human-readable message written into a caller-owned cf_err.  Nothing below
 * the ui layer prints or exits. */
#ifndef CONFAB_COMMON_H
#define CONFAB_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CF_ERR_MSG_MAX 512

typedef struct cf_err {
    char msg[CF_ERR_MSG_MAX];
} cf_err;

/* Format a message into err (err may be NULL). Always returns -1 so callers
 * can write `return cf_fail(err, "...")`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int cf_fail(cf_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A byte string that need not be NUL-terminated (e.g. points into an mmap). */
typedef struct cf_str {
    const char *ptr;
    size_t len;
} cf_str;

#endif
