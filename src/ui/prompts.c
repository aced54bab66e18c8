/* System prompt presets. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paths.h"
#include "prompts.h"

#ifndef CONFAB_PROMPTS_INSTALLED
#define CONFAB_PROMPTS_INSTALLED "/usr/local/share/confab/prompts"
#endif
#ifndef CONFAB_PROMPTS_SOURCE
#define CONFAB_PROMPTS_SOURCE "prompts"
#endif

static const char *preset_dir(int i, char *buf, size_t n)
{
    switch (i) {
    case 0:
        return xdg_path(XDG_CONFIG, "prompts", buf, n);
    case 1:
        return CONFAB_PROMPTS_INSTALLED;
    case 2:
        return CONFAB_PROMPTS_SOURCE;
    }
    return NULL;
}
#define N_PRESET_DIRS 3

static char *strip_newlines(char *text, size_t len)
{
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = 0;
    return text;
}

/* The preset names found, for the error message. */
static void list_presets(char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < N_PRESET_DIRS; i++) {
        char buf[4096];
        const char *dir = preset_dir(i, buf, sizeof buf);
        struct dirent **names;
        int k = dir ? scandir(dir, &names, NULL, alphasort) : -1;
        for (int j = 0; j < k; j++) {
            const char *name = names[j]->d_name;
            size_t len = strlen(name);
            if (len > 4 && !strcmp(name + len - 4, ".txt")) {
                char item[300];
                snprintf(item, sizeof item, "%.*s", (int)(len - 4), name);
                if (!strstr(out, item) && used + len + 2 < n)
                    used += (size_t)snprintf(out + used, n - used, "%s%s", used ? ", " : "", item);
            }
            free(names[j]);
        }
        if (k >= 0)
            free(names);
    }
}

char *prompt_load(const char *arg)
{
    size_t len;
    char *text = cli_read_file(arg, &len);
    if (text)
        return strip_newlines(text, len);
    if (strchr(arg, '/')) {
        cli_error("--system-file: cannot read %s: %s", arg, strerror(errno));
        return NULL;
    }
    for (int i = 0; i < N_PRESET_DIRS; i++) {
        char buf[4096], path[4400];
        const char *dir = preset_dir(i, buf, sizeof buf);
        if (!dir)
            continue;
        snprintf(path, sizeof path, "%s/%s.txt", dir, arg);
        if ((text = cli_read_file(path, &len)))
            return strip_newlines(text, len);
    }
    char names[1024];
    list_presets(names, sizeof names);
    cli_error("--system-file: no file or preset named '%s' (presets: %s)", arg,
              *names ? names : "none found");
    return NULL;
}
