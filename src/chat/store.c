/* The model stores: where each one is, the list of entries, what their GGUF
 * headers say. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "confab/gguf.h"
#include "store_internal.h"

const char *cf_store_kind_name(cf_store_kind k)
{
    static const char *const names[CF_STORE_KINDS] = {"confab", "ollama", "hf", "llama.cpp",
                                                      "lmstudio"};
    return (unsigned)k < CF_STORE_KINDS ? names[k] : "?";
}

/* arch and quant before a header is read */
static const char unread[] = "";

static char *copy(cf_store *st, const char *s)
{
    char *c = s ? strdup(s) : NULL;
    if (s && !c)
        st->oom = true;
    return c;
}

cf_store_entry *store_add(cf_store *st, cf_store_kind k, const char *name, const char *file_name,
                          const char *path)
{
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 32;
        cf_store_entry *e = realloc(st->e, (size_t)cap * sizeof *e);
        if (!e) {
            st->oom = true;
            return NULL;
        }
        st->e = e;
        st->cap = cap;
    }
    cf_store_entry *e = &st->e[st->n];
    *e = (cf_store_entry){.name = copy(st, name), .file_name = copy(st, file_name),
                          .path = copy(st, path), .store = k, .arch = unread, .quant = unread};
    if (!e->name || !e->path || (file_name && !e->file_name)) {
        free((char *)e->name);
        free((char *)e->file_name);
        free((char *)e->path);
        st->oom = true;
        return NULL;
    }
    st->n++;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        e->size = (uint64_t)sb.st_size;
    } else {
        int why = errno;
        store_problem(st, e, "%s", why != ENOENT               ? strerror(why)
                                   : lstat(path, &sb) == 0 ? "it links to a file that is missing"
                                                           : "the file is missing");
    }
    return e;
}

void store_problem(cf_store *st, cf_store_entry *e, const char *fmt, ...)
{
    char buf[CF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free((char *)e->problem);
    e->problem = copy(st, buf);
}

void store_split_problem(cf_store *st, cf_store_entry *e, long long parts)
{
    store_problem(st, e, "split into %lld files, which confab does not load "
                         "(llama-gguf-split --merge joins them)", parts);
}

bool store_has_file(const cf_store *st, cf_store_kind k, const char *file_name)
{
    for (int i = 0; i < st->n; i++) {
        const cf_store_entry *e = &st->e[i];
        if (e->store == k && (!strcasecmp(e->name, file_name) ||
                              (e->file_name && !strcasecmp(e->file_name, file_name))))
            return true;
    }
    return false;
}

/* The type that holds most of the tensor bytes, for files that do not say. */
static const char *main_type(const cf_gguf *g)
{
    uint64_t bytes[64] = {0};
    uint32_t best = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        if ((uint32_t)t->type < 64 && (bytes[t->type] += t->nbytes) > bytes[best])
            best = (uint32_t)t->type;
    }
    return cf_gguf_n_tensors(g) ? cf_type_name(best) : "";
}

static void read_header(cf_store *st, cf_store_entry *e)
{
    cf_gguf *g;
    cf_err err;
    if (e->problem)
        return;
    if (cf_gguf_open(e->path, &g, &err) < 0) {
        size_t n = strlen(e->path);
        bool named = !strncmp(err.msg, e->path, n) && err.msg[n] == ':';
        store_problem(st, e, "%s", named ? err.msg + n + 2 : err.msg);
        return;
    }
    cf_str arch = {"", 0};
    uint64_t v;
    char key[160];
    cf_gguf_get_str(g, "general.architecture", &arch);
    snprintf(key, sizeof key, "%.*s.context_length", (int)(arch.len < 100 ? arch.len : 100),
             arch.ptr);
    if (cf_gguf_get_u64(g, key, &v))
        e->n_ctx = v;
    const char *quant = cf_gguf_get_u64(g, "general.file_type", &v) && v <= UINT32_MAX
                            ? cf_gguf_file_type_name((uint32_t)v)
                            : NULL;
    /* the header's strings live in the mapping, which closes here */
    char *a = strndup(arch.ptr, arch.len), *q = copy(st, quant ? quant : main_type(g));
    if (!a || !q) {
        free(a);
        free(q);
        st->oom = true;
    } else {
        e->arch = a;
        e->quant = q;
    }
    if (cf_gguf_get_u64(g, "split.count", &v) && v > 1)
        store_split_problem(st, e, (long long)v);
    cf_gguf_close(g);
}

/* Two files of one store under one name (a repository with two files that
 * show one quant type): each goes by its file name instead. */
static void unclash(cf_store *st)
{
    for (int i = 0; i < st->n; i++) {
        cf_store_entry *a = &st->e[i];
        bool clash = false;
        for (int j = i + 1; j < st->n; j++) {
            cf_store_entry *b = &st->e[j];
            if (b->store != a->store || strcasecmp(a->name, b->name) || !b->file_name)
                continue;
            free((char *)b->name);
            b->name = b->file_name;
            b->file_name = NULL;
            clash = true;
        }
        if (clash && a->file_name) {
            free((char *)a->name);
            a->name = a->file_name;
            a->file_name = NULL;
        }
    }
}

static int by_store_then_name(const void *pa, const void *pb)
{
    const cf_store_entry *a = pa, *b = pb;
    if (a->store != b->store)
        return (int)a->store - (int)b->store;
    int c = strcasecmp(a->name, b->name);
    return c ? c : strcmp(a->name, b->name);
}

/* "$VAR" when set and not empty, else "$base/rest" (base another variable,
 * or HOME when NULL); NULL when neither is there. */
static char *env_dir(const char *var, const char *base, const char *rest)
{
    const char *v = var ? getenv(var) : NULL;
    if (v && *v)
        return strdup(v);
    const char *b = base ? getenv(base) : NULL;
    const char *home = getenv("HOME");
    char buf[4096];
    if (b && *b)
        snprintf(buf, sizeof buf, "%s/%s", b, rest);
    else if (home && *home)
        snprintf(buf, sizeof buf, "%s/%s%s", home, base ? ".cache/" : "", rest);
    else
        return NULL;
    return strdup(buf);
}

/* huggingface_hub's rule */
static char *hub_dir(void)
{
    const char *hub = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME");
    if (!(hub && *hub) && home && *home)
        return env_dir(NULL, "HF_HOME", "hub");
    return env_dir("HF_HUB_CACHE", "XDG_CACHE_HOME", "huggingface/hub");
}

int cf_store_scan(const char *confab_dir, bool headers, cf_store **out, cf_err *err)
{
    *out = NULL;
    cf_store *st = calloc(1, sizeof *st);
    if (!st)
        return cf_fail(err, "out of memory");
    st->dirs[CF_STORE_CONFAB] = confab_dir ? strdup(confab_dir) : NULL;
    st->dirs[CF_STORE_OLLAMA] = env_dir("OLLAMA_MODELS", NULL, ".ollama/models");
    st->dirs[CF_STORE_HF] = hub_dir();
    st->dirs[CF_STORE_LLAMACPP] = env_dir("LLAMA_CACHE", "XDG_CACHE_HOME", "llama.cpp");
    st->dirs[CF_STORE_LMSTUDIO] = env_dir(NULL, NULL, ".lmstudio/models");
    st->lmstudio_old = env_dir(NULL, NULL, ".cache/lm-studio/models");

    if (st->dirs[CF_STORE_CONFAB])
        store_scan_plain(st, CF_STORE_CONFAB, st->dirs[CF_STORE_CONFAB]);
    if (st->dirs[CF_STORE_OLLAMA])
        store_scan_ollama(st, st->dirs[CF_STORE_OLLAMA]);
    if (st->dirs[CF_STORE_HF])
        store_scan_hub(st, st->dirs[CF_STORE_HF]);
    if (st->dirs[CF_STORE_LLAMACPP])
        store_scan_llamacpp(st, st->dirs[CF_STORE_LLAMACPP]);
    if (st->dirs[CF_STORE_LMSTUDIO])
        store_scan_lmstudio(st, st->dirs[CF_STORE_LMSTUDIO]);
    if (st->lmstudio_old)
        store_scan_lmstudio(st, st->lmstudio_old);

    unclash(st);
    if (st->n)
        qsort(st->e, (size_t)st->n, sizeof *st->e, by_store_then_name);
    for (int i = 0; headers && i < st->n; i++)
        read_header(st, &st->e[i]);
    if (st->oom) {
        cf_store_free(st);
        return cf_fail(err, "out of memory listing the model stores");
    }
    *out = st;
    return 0;
}

void cf_store_free(cf_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->n; i++) {
        cf_store_entry *e = &st->e[i];
        free((char *)e->name);
        free((char *)e->file_name);
        free((char *)e->path);
        free((char *)e->problem);
        if (e->arch != unread)
            free((char *)e->arch);
        if (e->quant != unread)
            free((char *)e->quant);
    }
    for (int k = 0; k < CF_STORE_KINDS; k++)
        free(st->dirs[k]);
    free(st->lmstudio_old);
    free(st->e);
    free(st);
}

int cf_store_count(const cf_store *st)
{
    return st->n;
}

const cf_store_entry *cf_store_at(const cf_store *st, int i)
{
    return i >= 0 && i < st->n ? &st->e[i] : NULL;
}

const char *cf_store_dir(const cf_store *st, cf_store_kind k)
{
    return (unsigned)k < CF_STORE_KINDS ? st->dirs[k] : NULL;
}

const char *cf_store_dir_also(const cf_store *st, cf_store_kind k)
{
    return k == CF_STORE_LMSTUDIO ? st->lmstudio_old : NULL;
}
