/* The config file: defaults for the chat options. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "paths.h"

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

int config_load(chat_opts *o, const char *path)
{
    char def[4096];
    if (!path && !(path = xdg_path(XDG_CONFIG, "config", def, sizeof def)))
        return 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        cli_error("%s: %s", path, strerror(errno));
        return 1;
    }
    int errors = 0, lineno = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char where[4200];
        snprintf(where, sizeof where, "%s:%d", path, ++lineno);
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            cli_error("%s: expected 'key = value'", where);
            errors++;
            continue;
        }
        *eq = 0;
        char *key = trim(s), *value = trim(eq + 1);
        /* "quoted" values keep their spaces at the ends */
        size_t n = strlen(value);
        if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
            value[n - 1] = 0;
            value++;
        }
        if (opts_set(o, key, value, where) < 0)
            errors++;
    }
    free(line);
    fclose(f);
    return errors;
}
