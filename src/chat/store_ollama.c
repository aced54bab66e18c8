/* ollama's store: manifests/<registry>/<namespace>/<model>/<tag>, each a
 * JSON manifest whose model layer names a blob in blobs/. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

#define MODEL_LAYER "application/vnd.ollama.image.model"
#define DEFAULT_REGISTRY "registry.ollama.ai"

/* "sha256:<64 hex digits>": the hex digits, else NULL. */
static const char *digest_hex(const char *digest)
{
    if (!digest || strncmp(digest, "sha256:", 7) || strlen(digest + 7) != 64)
        return NULL;
    for (const char *p = digest + 7; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return NULL;
    return digest + 7;
}

static const char *model_layer(const cf_json *manifest)
{
    const cf_json *layers = cf_json_get(manifest, "layers");
    for (size_t i = 0; layers && layers->type == CF_JSON_ARRAY && i < layers->n; i++) {
        const char *type = store_json_str(layers->items[i], "mediaType");
        if (type && !strcmp(type, MODEL_LAYER))
            return digest_hex(store_json_str(layers->items[i], "digest"));
    }
    return NULL;
}

/* ollama's spelling: "qwen3:0.6b" in its library, "namespace/model:tag"
 * beside it, the registry in front when it is another. */
static void ollama_name(char *buf, size_t n, const char *reg, const char *ns, const char *model,
                        const char *tag)
{
    if (strcmp(reg, DEFAULT_REGISTRY))
        snprintf(buf, n, "%s/%s/%s:%s", reg, ns, model, tag);
    else if (strcmp(ns, "library"))
        snprintf(buf, n, "%s/%s:%s", ns, model, tag);
    else
        snprintf(buf, n, "%s:%s", model, tag);
}

static void add_manifest(cf_store *st, const char *root, const char *path, const char *name)
{
    cf_err err;
    cf_json *j = store_read_json(path, &err);
    const char *hex = j ? model_layer(j) : NULL;
    char blob[4096];
    if (hex) {
        /* sha256-<hex>; ollama before 0.1.33 wrote sha256:<hex> */
        snprintf(blob, sizeof blob, "%s/blobs/sha256-%s", root, hex);
        char old[4096];
        snprintf(old, sizeof old, "%s/blobs/sha256:%s", root, hex);
        if (access(blob, F_OK) < 0 && access(old, F_OK) == 0)
            snprintf(blob, sizeof blob, "%s", old);
    }
    cf_store_entry *e = store_add(st, CF_STORE_OLLAMA, name, NULL, hex ? blob : path);
    if (!e)
        st->oom = true;
    else if (!j)
        store_problem(st, e, "its manifest %s: %s", path, err.msg);
    else if (!hex)
        store_problem(st, e, "its manifest %s names no model layer", path);
    else if (e->problem)
        store_problem(st, e, "its blob sha256-%.12s... is missing", hex);
    cf_json_free(j);
}

/* Below manifests/: part[] gets registry, namespace, model, tag. */
static void walk(cf_store *st, const char *root, const char *dir, const char **part, int depth)
{
    int n;
    char **names = store_names(dir, &n);
    for (int i = 0; i < n; i++) {
        char path[4096], name[1024];
        if (!store_join(path, sizeof path, dir, names[i]) || store_is_dir(path) != (depth < 3))
            continue;
        part[depth] = names[i];
        if (depth < 3) {
            walk(st, root, path, part, depth + 1);
        } else {
            ollama_name(name, sizeof name, part[0], part[1], part[2], part[3]);
            add_manifest(st, root, path, name);
        }
    }
    store_names_free(names, n);
}

void store_scan_ollama(cf_store *st, const char *root)
{
    char dir[4096];
    const char *part[4];
    if (store_join(dir, sizeof dir, root, "manifests"))
        walk(st, root, dir, part, 0);
}
