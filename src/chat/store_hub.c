/* The Hugging Face hub cache: models--<org>--<repo>/snapshots/<commit>/
 * holds a repository's files as links into its blobs/, and refs/main names
 * the commit that is current. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_internal.h"

typedef struct snapshot {
    char *name;
    struct timespec mtime;
} snapshot;

static int newest_first(const void *pa, const void *pb)
{
    const snapshot *a = pa, *b = pb;
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? 1 : -1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* refs/main's commit into out ("" when there is none). */
static void main_commit(const char *repo_dir, char *out, size_t n)
{
    char path[4096];
    FILE *f;
    out[0] = 0;
    if (!store_join(path, sizeof path, repo_dir, "refs/main") || !(f = fopen(path, "r")))
        return;
    if (!fgets(out, (int)n, f))
        out[0] = 0;
    out[strcspn(out, " \t\r\n")] = 0;
    fclose(f);
}

/* Each file once: from refs/main's snapshot, else the newest that has it. */
static void scan_repo(cf_store *st, const char *root, const char *folder)
{
    const char *rest = folder + strlen("models--"), *sep = strstr(rest, "--");
    char repo[600], dir[4096], snaps[4096], main[128], path[4096];
    if (sep)
        snprintf(repo, sizeof repo, "%.*s/%s", (int)(sep - rest), rest, sep + 2);
    else
        snprintf(repo, sizeof repo, "%s", rest);
    if (!store_join(dir, sizeof dir, root, folder) ||
        !store_join(snaps, sizeof snaps, dir, "snapshots"))
        return;
    main_commit(dir, main, sizeof main);
    if (main[0] && store_join(path, sizeof path, snaps, main) && store_is_dir(path))
        store_walk_repo(st, CF_STORE_HF, repo, path, "", 1);

    int n, k = 0;
    char **names = store_names(snaps, &n);
    snapshot *order = n ? malloc((size_t)n * sizeof *order) : NULL;
    for (int i = 0; order && i < n; i++) {
        struct stat sb;
        if (strcmp(names[i], main) && store_join(path, sizeof path, snaps, names[i]) &&
            stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            order[k++] = (snapshot){names[i], sb.st_mtim};
    }
    if (k)
        qsort(order, (size_t)k, sizeof *order, newest_first);
    for (int i = 0; i < k; i++)
        if (store_join(path, sizeof path, snaps, order[i].name))
            store_walk_repo(st, CF_STORE_HF, repo, path, "", 1);
    if (n && !order)
        st->oom = true;
    free(order);
    store_names_free(names, n);
}

void store_scan_hub(cf_store *st, const char *root)
{
    int n;
    char **names = store_names(root, &n);
    for (int i = 0; i < n; i++)
        if (!strncmp(names[i], "models--", 8) && names[i][8])
            scan_repo(st, root, names[i]);
    store_names_free(names, n);
}
