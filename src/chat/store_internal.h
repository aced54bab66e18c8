/* The model stores' shared parts: the entry list, file names and folders,
 * and one walker per store layout. */
#ifndef CONFAB_CHAT_STORE_INTERNAL_H
#define CONFAB_CHAT_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "confab/store.h"
#include "json.h"

struct cf_store {
    cf_store_entry *e;
    int n, cap;
    char *dirs[CF_STORE_KINDS];
    char *lmstudio_old; /* LM Studio's older folder, looked in second */
    bool oom; /* a string or entry could not be allocated: the scan fails */
};

/* ---- store.c ---------------------------------------------------------------- */
/* Append an entry (the strings are copied; file_name may be NULL) with the
 * size of the file at path, or a problem when there is none.  NULL when
 * memory runs out (st->oom). */
cf_store_entry *store_add(cf_store *st, cf_store_kind k, const char *name, const char *file_name,
                          const char *path);
/* Set (replace) an entry's problem. */
void store_problem(cf_store *st, cf_store_entry *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The problem of a model split into parts files. */
void store_split_problem(cf_store *st, cf_store_entry *e, long long parts);
/* Whether store k already has an entry of that name or file_name (any case). */
bool store_has_file(const cf_store *st, cf_store_kind k, const char *file_name);

/* ---- store_files.c: names and folders ------------------------------------------ */
/* The sorted names in folder dir, hidden ones left out; *n of them (0 for
 * a missing folder).  Free with store_names_free. */
char **store_names(const char *dir, int *n);
void store_names_free(char **names, int n);
/* "a/b" into buf (n bytes); false when it does not fit. */
bool store_join(char *buf, size_t n, const char *a, const char *b);
bool store_is_dir(const char *path);
/* A small JSON file (manifests, download records), or NULL with err. */
cf_json *store_read_json(const char *path, cf_err *err);
/* A string member of a JSON object, or NULL. */
const char *store_json_str(const cf_json *obj, const char *key);
/* A file confab may list: *.gguf, and no vision projector (mmproj). */
bool store_is_gguf(const char *file_name);
/* The quant type a model file's name shows ("Qwen3-0.6B-Q8_0.gguf" ->
 * "Q8_0", "x-UD-Q4_K_XL.gguf" -> "UD-Q4_K_XL"), upper case, into out;
 * false when it shows none. */
bool store_quant_of(const char *file_name, char *out, size_t n);
/* A repository's file: "repo:QUANT" (else "repo/rel") at path.  rel is the
 * file's path inside the repository.  A split model's first part stands
 * for it (with its problem); the other parts are left out. */
void store_add_repo_file(cf_store *st, cf_store_kind k, const char *repo, const char *rel,
                         const char *path);
/* A file known by its name alone (confab's folder, llama.cpp's cache). */
void store_add_plain(cf_store *st, cf_store_kind k, const char *file, const char *path);
/* A repository's files in dir and the folders below it (rel: dir inside
 * the repository, "" at its top; depth: dir's, 1 at the top). */
void store_walk_repo(cf_store *st, cf_store_kind k, const char *repo, const char *dir,
                     const char *rel, int depth);

/* ---- the walkers ------------------------------------------------------------------- */
void store_scan_ollama(cf_store *st, const char *root);       /* store_ollama.c */
void store_scan_hub(cf_store *st, const char *root);          /* store_hub.c */
void store_scan_llamacpp(cf_store *st, const char *root);     /* store_llamacpp.c */
/* confab's folder and LM Studio's: store_files.c */
void store_scan_plain(cf_store *st, cf_store_kind k, const char *root);
void store_scan_lmstudio(cf_store *st, const char *root);

#endif
