/* Helpers shared by the template tests: whole files, JSON fixtures. */
#ifndef CONFAB_TESTS_TT_UTIL_H
#define CONFAB_TESTS_TT_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_file.h"

/* 2026-01-15 00:00:00 UTC: the clock of the reference renderings */
#define TT_NOW 1768435200

static inline char *tt_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

/* A string member, or NULL. */
static inline const char *tt_str(const cf_json *obj, const char *key)
{
    const cf_json *v = cf_json_get(obj, key);
    return v && v->type == CF_JSON_STRING ? v->str : NULL;
}

#endif
