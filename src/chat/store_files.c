/* Model files and their names: folders, quant types in file names, split
 * models, and the two simple layouts (a folder of files, LM Studio's
 * publisher/repository folders). */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "session_internal.h"
#include "store_internal.h"

/* How deep a repository's files may sit in its folder. */
#define REPO_DEPTH 3

static int visible(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

char **store_names(const char *dir, int *n)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, visible, alphasort);
    *n = 0;
    if (k <= 0)
        return NULL;
    char **names = malloc((size_t)k * sizeof *names);
    for (int i = 0; i < k; i++) {
        if (names && (names[*n] = strdup(ents[i]->d_name)))
            (*n)++;
        free(ents[i]);
    }
    free(ents);
    return names;
}

void store_names_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

bool store_join(char *buf, size_t n, const char *a, const char *b)
{
    int len = snprintf(buf, n, "%s/%s", a, b);
    return len >= 0 && (size_t)len < n;
}

bool store_is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

cf_json *store_read_json(const char *path, cf_err *err)
{
    /* far beyond any manifest: a bigger file is no manifest */
    static const cf_json_limits lim = {1 << 20, 32};
    struct stat sb;
    size_t len;
    cf_json *j = NULL;
    if (stat(path, &sb) == 0 && (uint64_t)sb.st_size > lim.max_bytes) {
        cf_fail(err, "%s: too big for a manifest", path);
        return NULL;
    }
    char *text = sess_read_file(path, &len, err);
    if (text && cf_json_parse(text, len, &lim, &j, err) < 0)
        j = NULL;
    free(text);
    return j;
}

const char *store_json_str(const cf_json *obj, const char *key)
{
    const cf_json *v = cf_json_get(obj, key);
    return v && v->type == CF_JSON_STRING ? v->str : NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcasecmp(s + n - k, suffix);
}

bool store_is_gguf(const char *file_name)
{
    return ends_with(file_name, ".gguf") && !strcasestr(file_name, "mmproj");
}

/* "x-00001-of-00003.gguf" (llama-gguf-split's names): the part count, and
 * the part in *part; 0 for a whole file. */
static int split_parts(const char *file_name, int *part)
{
    static const char pattern[] = "-00000-of-00000.gguf";
    size_t n = strlen(file_name), k = sizeof pattern - 1;
    if (n < k)
        return 0;
    const char *s = file_name + n - k;
    for (size_t i = 0; i < k; i++)
        if (pattern[i] == '0' ? !isdigit((unsigned char)s[i]) : s[i] != pattern[i])
            return 0;
    *part = atoi(s + 1);
    return atoi(s + 10);
}

static bool is_quant(const char *seg, size_t n)
{
    static const char *const whole[] = {"F16", "F32", "BF16", "FP16", "FP32", "MXFP4"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (n == strlen(whole[i]) && !strncasecmp(seg, whole[i], n))
            return true;
    if (n > 6 && !strncasecmp(seg, "MXFP4_", 6))
        return true;
    int first = toupper((unsigned char)seg[0]);
    size_t p = n >= 2 && (first == 'I' || first == 'T') ? 1 : 0; /* IQ, TQ */
    return n > p + 1 && toupper((unsigned char)seg[p]) == 'Q' && isdigit((unsigned char)seg[p + 1]);
}

bool store_quant_of(const char *file_name, char *out, size_t n)
{
    int part;
    size_t len = strlen(file_name);
    if (ends_with(file_name, ".gguf"))
        len -= 5;
    if (split_parts(file_name, &part))
        len -= 15;
    /* the last segment (between '-' and '.') that is a quant type */
    size_t end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && file_name[start - 1] != '-' && file_name[start - 1] != '.')
            start--;
        if (is_quant(file_name + start, end - start)) {
            /* Unsloth's dynamic quants: "UD-Q4_K_XL" */
            bool ud = start >= 3 && !strncasecmp(file_name + start - 3, "UD", 2) &&
                      (start == 3 || file_name[start - 4] == '-' || file_name[start - 4] == '.');
            size_t from = ud ? start - 3 : start;
            if (end - from >= n)
                return false;
            for (size_t i = from; i < end; i++)
                *out++ = (char)toupper((unsigned char)file_name[i]);
            *out = 0;
            return true;
        }
        end = start ? start - 1 : 0;
    }
    return false;
}

static void add_file(cf_store *st, cf_store_kind k, const char *name, const char *file_name,
                     const char *path, int parts)
{
    cf_store_entry *e = store_add(st, k, name, file_name, path);
    if (e && parts && !e->problem)
        store_split_problem(st, e, parts);
}

void store_add_repo_file(cf_store *st, cf_store_kind k, const char *repo, const char *rel,
                         const char *path)
{
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    int part = 1, parts = split_parts(base, &part);
    char file_name[4096], name[4200], quant[64];
    if (!store_is_gguf(base) || part != 1 || !store_join(file_name, sizeof file_name, repo, rel) ||
        store_has_file(st, k, file_name))
        return;
    if (store_quant_of(base, quant, sizeof quant)) {
        snprintf(name, sizeof name, "%s:%s", repo, quant);
        add_file(st, k, name, file_name, path, parts);
    } else {
        add_file(st, k, file_name, NULL, path, parts);
    }
}

void store_add_plain(cf_store *st, cf_store_kind k, const char *file, const char *path)
{
    int part = 1, parts = split_parts(file, &part);
    if (!store_is_gguf(file) || part != 1)
        return;
    /* "x-00001-of-00003.gguf" is "x" */
    char *stem = strndup(file, strlen(file) - (parts ? 20 : 5));
    if (!stem) {
        st->oom = true;
        return;
    }
    add_file(st, k, stem, file, path, parts);
    free(stem);
}

void store_walk_repo(cf_store *st, cf_store_kind k, const char *repo, const char *dir,
                     const char *rel, int depth)
{
    int n;
    char **names = store_names(dir, &n);
    for (int i = 0; i < n; i++) {
        char path[4096], sub[4096];
        if (!store_join(path, sizeof path, dir, names[i]))
            continue;
        if (*rel ? !store_join(sub, sizeof sub, rel, names[i])
                 : snprintf(sub, sizeof sub, "%s", names[i]) >= (int)sizeof sub)
            continue;
        if (!store_is_dir(path))
            store_add_repo_file(st, k, repo, sub, path);
        else if (depth < REPO_DEPTH)
            store_walk_repo(st, k, repo, path, sub, depth + 1);
    }
    store_names_free(names, n);
}

void store_scan_plain(cf_store *st, cf_store_kind k, const char *root)
{
    int n;
    char **names = store_names(root, &n);
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (store_join(path, sizeof path, root, names[i]) && !store_is_dir(path))
            store_add_plain(st, k, names[i], path);
    }
    store_names_free(names, n);
}

void store_scan_lmstudio(cf_store *st, const char *root)
{
    int np;
    char **pubs = store_names(root, &np);
    for (int i = 0; i < np; i++) {
        char pub[4096];
        int nr;
        if (!store_join(pub, sizeof pub, root, pubs[i]))
            continue;
        char **repos = store_names(pub, &nr);
        for (int j = 0; j < nr; j++) {
            char dir[4096], repo[600];
            if (store_join(dir, sizeof dir, pub, repos[j]) && store_is_dir(dir) &&
                store_join(repo, sizeof repo, pubs[i], repos[j]))
                store_walk_repo(st, CF_STORE_LMSTUDIO, repo, dir, "", 1);
        }
        store_names_free(repos, nr);
    }
    store_names_free(pubs, np);
}
