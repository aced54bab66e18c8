/* store: the GGUF files already on this machine where other programs keep
 * models, each under a name to pick it by.
 *
 * The stores, in order of precedence (a name found in two means the
 * first's file):
 *   confab     confab's own folder (the caller names it): its .gguf files
 *   ollama     $OLLAMA_MODELS or ~/.ollama/models: each manifest
 *              manifests/<registry>/<namespace>/<model>/<tag> is JSON whose
 *              layer of mediaType application/vnd.ollama.image.model names
 *              the blob (digest "sha256:<hex>" -> blobs/sha256-<hex>)
 *   hf         $HF_HUB_CACHE, else $HF_HOME/hub, else
 *              ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub: the *.gguf of
 *              models--<org>--<repo>/snapshots/<commit>/ (links into
 *              ../../blobs/), the commit refs/main names first
 *   llama.cpp  $LLAMA_CACHE or ${XDG_CACHE_HOME:-~/.cache}/llama.cpp:
 *              <org>_<repo>_<file>.gguf, the repository read from its
 *              manifest=<org>=<repo>=<tag>.json (or an older <file>.json's
 *              url)
 *   lmstudio   ~/.lmstudio/models/<publisher>/<repo>/, then the older
 *              ~/.cache/lm-studio/models/<publisher>/<repo>/
 *
 * Names: ollama's own ("qwen3:0.6b" in its library, "namespace/model:tag"
 * beside it, the registry in front when it is not registry.ollama.ai).  A
 * repository's file (hf, llama.cpp, lmstudio) is "org/repo:QUANT", QUANT
 * read from the file name as llama.cpp's "-hf org/repo:QUANT" picks a file
 * ("Qwen3-0.6B-Q8_0.gguf" -> Q8_0), and "org/repo/file.gguf" is its name
 * too (the only one when the file name shows no quant type or two files
 * show the same).  A file of confab's folder, or of llama.cpp's cache with
 * no repository known, goes by its file name without ".gguf" (and with).
 *
 * Vision projectors (mmproj files) are left out.  Only GGUF headers are
 * read, never weights.  Knows nothing of terminals. */
#ifndef CONFAB_STORE_H
#define CONFAB_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "confab/common.h"

typedef enum cf_store_kind {
    CF_STORE_CONFAB,
    CF_STORE_OLLAMA,
    CF_STORE_HF,
    CF_STORE_LLAMACPP,
    CF_STORE_LMSTUDIO,
    CF_STORE_KINDS
} cf_store_kind;

/* "confab", "ollama", "hf", "llama.cpp", "lmstudio" */
const char *cf_store_kind_name(cf_store_kind k);

typedef struct cf_store_entry {
    const char *name;      /* what -m takes: "qwen3:0.6b", "Qwen/Qwen3-0.6B-GGUF:Q8_0" */
    const char *file_name; /* the other name ("org/repo/file.gguf", "file.gguf"), or NULL */
    const char *path;      /* the file (an ollama blob, a hub snapshot's link) */
    cf_store_kind store;
    uint64_t size;         /* bytes; 0 when the file is missing */
    /* From the header (cf_store_scan with headers), else "" and 0: */
    const char *arch;      /* general.architecture */
    const char *quant;     /* general.file_type's name, else the type of most tensor bytes */
    uint64_t n_ctx;        /* <arch>.context_length; 0 when absent */
    /* Why the file cannot be used (missing blob, split into parts, not a
     * GGUF: a header read tells), or NULL. */
    const char *problem;
} cf_store_entry;

typedef struct cf_store cf_store;

/* Look through every store the environment points to (a missing folder is
 * an empty store); confab_dir is confab's own folder (NULL: none).  With
 * headers, each file's GGUF header fills arch, quant, n_ctx (and problem
 * for a file that is no usable GGUF).  Entries come in store order, then
 * by name.  Fails only when memory runs out. */
int cf_store_scan(const char *confab_dir, bool headers, cf_store **out, cf_err *err);
void cf_store_free(cf_store *st);

int cf_store_count(const cf_store *st);
const cf_store_entry *cf_store_at(const cf_store *st, int i);
/* The folder looked in for store k (its first, for lmstudio's two), and
 * the second (lmstudio's older ~/.cache/lm-studio/models; else NULL). */
const char *cf_store_dir(const cf_store *st, cf_store_kind k);
const char *cf_store_dir_also(const cf_store *st, cf_store_kind k);

/* What a name means.  Case does not matter.  Tried in turn: the name
 * exactly (one of an entry's two), name:latest (ollama's default tag),
 * name:Q4_K_M (llama.cpp's default quant), then a prefix of one name only.
 * found: the entry, else NULL and near lists the names that match
 * (ambiguous) or, none matching, those closest to it. */
#define CF_STORE_NEAR_MAX 6
typedef struct cf_store_match {
    const cf_store_entry *found;
    bool ambiguous;
    const cf_store_entry *near[CF_STORE_NEAR_MAX];
    int n_near;
    int n_matching; /* ambiguous: how many names match (near has the first) */
} cf_store_match;
void cf_store_find(const cf_store *st, const char *name, cf_store_match *m);

/* The entries as a JSON array of objects with name, file_name, store,
 * path, size, arch, quant, context and problem (null where absent);
 * malloc'ed, NULL when memory runs out. */
char *cf_store_json(const cf_store *st);

#endif
