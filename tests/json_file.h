/* Reading the shared reference JSON files in tests, with the chat layer's
 * JSON parser (src/chat/json.h: add include_directories('../../src/chat')). */
#ifndef CONFAB_TESTS_JSON_FILE_H
#define CONFAB_TESTS_JSON_FILE_H

#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "json.h"

/* The parsed file, or NULL (after printing why). */
static inline cf_json *json_load_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    cf_json *j = NULL;
    cf_err err;
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n &&
        cf_json_parse(buf, (size_t)n, NULL, &j, &err) != 0)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    free(buf);
    fclose(f);
    return j;
}

/* The reference outputs of a model (refs/STEM.json under the shared folder)
 * and the path of the model file they were made from (a shared_path
 * buffer); NULL when they cannot be read. */
static inline cf_json *refs_load_dir(const char *dir, const char *stem, const char **model_path)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s.json", dir, stem);
    cf_json *j = json_load_file(shared_path(rel));
    if (j) {
        const cf_json *model = cf_json_get(j, "model");
        snprintf(rel, sizeof rel, "models/%s", cf_json_get(model, "file")->str);
        *model_path = shared_path(rel);
    }
    return j;
}

static inline cf_json *refs_load(const char *stem, const char **model_path)
{
    return refs_load_dir("refs", stem, model_path);
}

/* Element i of an array, or NULL. */
static inline const cf_json *json_at(const cf_json *v, size_t i)
{
    return v && v->type == CF_JSON_ARRAY && i < v->n ? v->items[i] : NULL;
}

/* A number as double (integers and floats alike). */
static inline double json_num(const cf_json *v)
{
    return !v ? 0 : v->type == CF_JSON_INT ? (double)v->i : v->f;
}

#endif
