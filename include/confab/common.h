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
#include <string.h>
#include <time.h>

#define CF_ERR_MSG_MAX 512

/* The class of a failure, for callers that act on it (the command line
 * maps classes to exit codes); the message says the rest. */
typedef enum cf_errcode {
    CF_E_FAIL = 0,    /* anything else */
    CF_E_USAGE,       /* a bad setting or argument */
    CF_E_MODEL,       /* the model file cannot be used */
    CF_E_TEMPLATE,    /* the chat template cannot be used */
    CF_E_SESSION,     /* a session file cannot be read or written */
    CF_E_CONTEXT,     /* the tokens do not fit in the context */
    CF_E_CANCELLED,   /* the caller's cancel check said stop (nothing changed) */
} cf_errcode;

typedef struct cf_err {
    char msg[CF_ERR_MSG_MAX];
    cf_errcode code;
} cf_err;

/* Format a message of class code into err (err may be NULL). Always returns
 * -1 so callers can write `return cf_fail_as(err, CF_E_MODEL, "...")`.
 * A message stays one line whatever it quotes (a key or a tensor name from
 * a file, a template's raise_exception text, a path): each control
 * character in it becomes a space. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int cf_fail_as(cf_err *err, cf_errcode code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
        err->code = code;
    }
    return -1;
}

#define cf_fail(err, ...) cf_fail_as((err), CF_E_FAIL, __VA_ARGS__)

/* Give a failure reported by a lower layer its class here; returns -1. */
static inline int cf_err_class(cf_err *err, cf_errcode code)
{
    if (err)
        err->code = code;
    return -1;
}

/* The monotonic clock, for every layer's timings and timeouts. */
static inline uint64_t cf_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline double cf_now_ms(void)
{
    return (double)cf_now_ns() / 1e6;
}

/* A yes/no value as every front end takes it (on/off, 1/0, yes/no,
 * true/false): 1 or 0, or -1 when it is none of those. */
static inline int cf_parse_bool(const char *s)
{
    static const char *const words[][2] = {{"on", "off"}, {"1", "0"}, {"yes", "no"},
                                           {"true", "false"}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        for (int v = 0; v < 2; v++)
            if (!strcmp(s, words[i][v]))
                return !v;
    return -1;
}

/* A byte string that need not be NUL-terminated (e.g. points into an mmap). */
typedef struct cf_str {
    const char *ptr;
    size_t len;
} cf_str;

#endif
