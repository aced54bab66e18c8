/* Shared command-line helpers: errors, number parsing, model discovery. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("confab: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_exit_for(const cf_err *err)
{
    switch (err->code) {
    case CF_E_USAGE:
    case CF_E_TEMPLATE: /* templates come from options */
        return CF_EXIT_USAGE;
    case CF_E_MODEL:
        return CF_EXIT_MODEL;
    case CF_E_SESSION:
        return CF_EXIT_SESSION;
    case CF_E_CONTEXT:
        return CF_EXIT_CONTEXT;
    default:
        return CF_EXIT_ERROR;
    }
}

void cli_option_error(const char *name, const char *msg)
{
    /* the library usually names the setting first ("temp: '-5' is not
     * ..."): then that becomes the option's name */
    const size_t n = strlen(name);
    if (strncmp(msg, name, n) == 0 && msg[n] == ':')
        cli_error("--%s", msg);
    else
        cli_error("--%s: %s", name, msg);
}

bool cli_parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) {
        cli_error("%s: '%s' is not an integer", opt, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s: %lld is out of range [%lld, %lld]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) {
        cli_error("%s: '%s' is not a number", opt, s);
        return false;
    }
    if (v < lo || v > hi) {
        cli_error("%s: %g is out of range [%g, %g]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = n;
    }
    return buf;
}

static char *models_dir(void)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    char buf[4096];
    if (xdg && *xdg)
        snprintf(buf, sizeof buf, "%s/confab/models", xdg);
    else
        snprintf(buf, sizeof buf, "%s/.local/share/confab/models", home ? home : ".");
    return strdup(buf);
}

static int has_gguf_suffix(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".gguf") == 0;
}

char *cli_resolve_model(const char *m_opt)
{
    if (m_opt && *m_opt)
        return strdup(m_opt);
    const char *env = getenv("CONFAB_MODEL");
    if (env && *env)
        return strdup(env);
    char *dir = models_dir();
    struct dirent **names = NULL;
    int n = scandir(dir, &names, has_gguf_suffix, alphasort);
    char *found = NULL;
    if (n > 0) {
        size_t len = strlen(dir) + strlen(names[0]->d_name) + 2;
        found = malloc(len);
        if (found)
            snprintf(found, len, "%s/%s", dir, names[0]->d_name);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (!found)
        cli_error("no model given. Use -m FILE.gguf, set CONFAB_MODEL, or put a .gguf file in\n"
                  "  %s/\n"
                  "Any GGUF chat model from Hugging Face works, e.g. SmolLM2-135M-Instruct "
                  "(bartowski/SmolLM2-135M-Instruct-GGUF).",
                  dir);
    free(dir);
    return found;
}

int cli_default_threads(void)
{
    /* Physical cores: count distinct (physical id, core id) pairs. */
    FILE *f = fopen("/proc/cpuinfo", "r");
    int cores = 0;
    if (f) {
        char line[256];
        long phys = 0, seen[1024][2];
        int nseen = 0;
        while (fgets(line, sizeof line, f)) {
            long v;
            if (sscanf(line, "physical id : %ld", &v) == 1)
                phys = v;
            else if (sscanf(line, "core id : %ld", &v) == 1) {
                int dup = 0;
                for (int i = 0; i < nseen; i++)
                    dup |= seen[i][0] == phys && seen[i][1] == v;
                if (!dup && nseen < 1024) {
                    seen[nseen][0] = phys;
                    seen[nseen][1] = v;
                    nseen++;
                }
            }
        }
        fclose(f);
        cores = nseen;
    }
    if (cores <= 0)
        cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}
