/* Shared command-line helpers: errors, number parsing, files, threads. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("confab: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_exit_for(const cf_err *err)
{
    switch (err->code) {
    case CF_E_USAGE:
    case CF_E_TEMPLATE: /* templates come from options */
        return CF_EXIT_USAGE;
    case CF_E_MODEL:
        return CF_EXIT_MODEL;
    case CF_E_SESSION:
        return CF_EXIT_SESSION;
    case CF_E_CONTEXT:
        return CF_EXIT_CONTEXT;
    default:
        return CF_EXIT_ERROR;
    }
}

void cli_option_error(const char *name, const char *msg)
{
    /* the library usually names the setting first ("temp: '-5' is not
     * ..."): then that becomes the option's name */
    const size_t n = strlen(name);
    if (strncmp(msg, name, n) == 0 && msg[n] == ':')
        cli_error("--%s", msg);
    else
        cli_error("--%s: %s", name, msg);
}

bool cli_parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) {
        cli_error("%s: '%s' is not an integer", opt, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s: %lld is out of range [%lld, %lld]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) {
        cli_error("%s: '%s' is not a number", opt, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s: %g is out of range [%g, %g]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = n;
    }
    return buf;
}

bool cli_parse_threads(const char *opt, const char *s, long long *out)
{
    if (!cli_parse_int(opt, s, 1, CLI_THREADS_MAX, out))
        return false;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    /* the threads meet at a barrier after every step: one without a CPU
     * of its own holds all the others up (-t 16 on 2 CPUs: 80 times
     * slower), so the online CPUs are the bound */
    if (online > 0 && *out > online) {
        cli_error("%s %lld: only %ld CPU%s online, so %ld thread%s (more would wait for each "
                  "other)", opt, *out, online, online == 1 ? " is" : "s are", online,
                  online == 1 ? "" : "s");
        *out = online;
    }
    return true;
}
