/* Which model file a -m value (or $CONFAB_MODEL, or inspect's FILE)
 * means: a file, or a name in the model stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "confab/store.h"
#include "paths.h"

static cf_store *scan(void)
{
    char dir[4096];
    cf_store *st;
    cf_err err;
    if (cf_store_scan(xdg_path(XDG_DATA, "models", dir, sizeof dir), false, &st, &err) < 0) {
        cli_error("%s", err.msg);
        return NULL;
    }
    return st;
}

/* "a, b, c" (", ..." when more match than are listed) */
static void list_names(char *buf, size_t n, const cf_store_match *m)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < m->n_near && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", m->near[i]->name);
    if (m->n_matching > m->n_near && at < n)
        snprintf(buf + at, n - at, ", ...");
}

char *cli_model_path(const char *arg)
{
    struct stat sb;
    if (stat(arg, &sb) == 0 || !*arg || arg[0] == '/' || arg[0] == '.' || arg[0] == '~')
        return strdup(arg);
    cf_store *st = scan();
    if (!st)
        return NULL;
    cf_store_match m;
    char names[1024];
    char *path = NULL;
    cf_store_find(st, arg, &m);
    list_names(names, sizeof names, &m);
    if (m.found && m.found->problem)
        cli_error("%s (%s): %s", m.found->name, m.found->path, m.found->problem);
    else if (m.found && !(path = strdup(m.found->path)))
        cli_error("out of memory");
    else if (m.ambiguous)
        cli_error("'%s' could be any of %s: give more of the name", arg, names);
    else if (!m.found && m.n_near)
        cli_error("no model file or name '%s'; close names: %s ('confab models' lists all)", arg,
                  names);
    else if (!m.found)
        cli_error("no model file or name '%s' ('confab models' lists the models found)", arg);
    cf_store_free(st);
    return path;
}

char *cli_store_path(const char *name)
{
    cf_store *st = scan();
    cf_store_match m;
    char *path = NULL;
    if (!st)
        return NULL;
    cf_store_find(st, name, &m);
    if (m.found && !m.found->problem && !(path = strdup(m.found->path)))
        cli_error("out of memory");
    cf_store_free(st);
    return path;
}

char *cli_resolve_model(const char *m_opt)
{
    const char *env = getenv("CONFAB_MODEL");
    if (m_opt && *m_opt)
        return cli_model_path(m_opt);
    if (env && *env)
        return cli_model_path(env);
    cf_store *st = scan();
    if (!st)
        return NULL;
    char *found = NULL;
    int others = 0;
    for (int i = 0; i < cf_store_count(st); i++) {
        const cf_store_entry *e = cf_store_at(st, i);
        if (e->store == CF_STORE_CONFAB && !e->problem && !found)
            found = strdup(e->path);
        others += e->store != CF_STORE_CONFAB && !e->problem;
    }
    if (!found) {
        char hint[160] = "";
        if (others)
            snprintf(hint, sizeof hint, "\n'confab models' lists the %d model%s found in other "
                     "programs' stores (-m NAME picks one).", others, others > 1 ? "s" : "");
        cli_error("no model given. Use -m FILE.gguf, set CONFAB_MODEL, or put a .gguf file in\n"
                  "  %s/\n"
                  "Any GGUF chat model from Hugging Face works, e.g. SmolLM2-135M-Instruct "
                  "(bartowski/SmolLM2-135M-Instruct-GGUF).%s",
                  cf_store_dir(st, CF_STORE_CONFAB) ? cf_store_dir(st, CF_STORE_CONFAB) : "", hint);
    }
    cf_store_free(st);
    return found;
}
