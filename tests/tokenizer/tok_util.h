/* Helpers shared by the tokenizer tests. */
#ifndef CONFAB_TESTS_TOK_UTIL_H
#define CONFAB_TESTS_TOK_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "confab/gguf.h"
#include "confab/tokenizer.h"

/* Open a model or vocabulary file and build its tokenizer (NULL on error,
 * after printing it). */
static inline cf_tokenizer *tok_open(const char *path)
{
    cf_err err = {.msg = ""};
    cf_gguf *g;
    cf_tokenizer *t = NULL;
    if (cf_gguf_open(path, &g, &err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return NULL;
    }
    if (cf_tokenizer_create(g, &t, &err) != 0)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    cf_gguf_close(g);
    return t;
}

/* A whole file, NUL-terminated (NULL when it cannot be read). */
static inline char *tok_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, 2 * cap + 1);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

#endif
