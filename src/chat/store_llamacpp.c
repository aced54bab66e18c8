/* llama.cpp's cache: "-hf org/repo[:tag]" keeps the repository's file
 * <rfilename> as <org>_<repo>_<rfilename with '/' as '_'> and the
 * repository's answer naming it as manifest=<org>=<repo>=<tag>.json
 * ({"ggufFile": {"rfilename": ...}}); older versions wrote <file>.json
 * with the file's url instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

typedef struct known {
    char local[1024], repo[600], rel[1024];
} known;

/* manifest=<org>=<repo>=<tag>.json: the file it names into k. */
static bool from_manifest(const char *root, const char *file, known *k)
{
    const char *org = file + strlen("manifest="), *eq1 = strchr(org, '='),
               *eq2 = eq1 ? strchr(eq1 + 1, '=') : NULL;
    char path[4096];
    cf_err err;
    if (!eq2 || !store_join(path, sizeof path, root, file))
        return false;
    cf_json *j = store_read_json(path, &err);
    const char *rel = store_json_str(cf_json_get(j, "ggufFile"), "rfilename");
    bool ok = rel && strlen(rel) < sizeof k->rel;
    if (ok) {
        snprintf(k->repo, sizeof k->repo, "%.*s/%.*s", (int)(eq1 - org), org,
                 (int)(eq2 - eq1 - 1), eq1 + 1);
        snprintf(k->rel, sizeof k->rel, "%s", rel);
        snprintf(k->local, sizeof k->local, "%.*s_%.*s_%s", (int)(eq1 - org), org,
                 (int)(eq2 - eq1 - 1), eq1 + 1, rel);
        for (char *p = k->local; *p; p++)
            if (*p == '/')
                *p = '_';
    }
    cf_json_free(j);
    return ok;
}

/* <file>.json's url, https://<host>/<org>/<repo>/resolve/<revision>/<rel>. */
static bool from_url(const char *root, const char *file, known *k)
{
    char path[4096];
    cf_err err;
    if (snprintf(path, sizeof path, "%s/%s.json", root, file) >= (int)sizeof path)
        return false;
    cf_json *j = store_read_json(path, &err);
    const char *url = store_json_str(j, "url"), *res = url ? strstr(url, "/resolve/") : NULL;
    const char *rev = res ? res + strlen("/resolve/") : NULL, *rel = rev ? strchr(rev, '/') : NULL;
    const char *repo = res;
    for (int slashes = 0; repo && repo > url && slashes < 2;)
        slashes += *--repo == '/';
    bool ok = rel && repo > url && rel[1] && strlen(rel + 1) < sizeof k->rel &&
              res - repo - 1 < (long)sizeof k->repo;
    if (ok) {
        snprintf(k->repo, sizeof k->repo, "%.*s", (int)(res - repo - 1), repo + 1);
        snprintf(k->rel, sizeof k->rel, "%s", rel + 1);
    }
    cf_json_free(j);
    return ok;
}

void store_scan_llamacpp(cf_store *st, const char *root)
{
    int n, nk = 0;
    char **names = store_names(root, &n);
    known *ks = n ? malloc((size_t)n * sizeof *ks) : NULL;
    for (int i = 0; ks && i < n; i++)
        if (!strncmp(names[i], "manifest=", 9) && from_manifest(root, names[i], &ks[nk]))
            nk++;
    for (int i = 0; i < n; i++) {
        char path[4096];
        known url;
        const known *k = NULL;
        if (!store_is_gguf(names[i]) || !store_join(path, sizeof path, root, names[i]) ||
            store_is_dir(path))
            continue;
        for (int m = 0; m < nk && !k; m++)
            if (!strcmp(ks[m].local, names[i]))
                k = &ks[m];
        if (!k && from_url(root, names[i], &url))
            k = &url;
        if (k)
            store_add_repo_file(st, CF_STORE_LLAMACPP, k->repo, k->rel, path);
        else
            store_add_plain(st, CF_STORE_LLAMACPP, names[i], path);
    }
    if (n && !ks)
        st->oom = true;
    free(ks);
    store_names_free(names, n);
}
