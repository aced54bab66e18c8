/* XDG base directories. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"

char *xdg_path(xdg_kind kind, const char *rel, char *buf, size_t n)
{
    static const char *const vars[] = {"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"};
    static const char *const fallbacks[] = {".config", ".local/state", ".local/share"};
    const char *base = getenv(vars[kind]);
    const char *home = getenv("HOME");
    int len;
    /* The XDG spec ignores relative values. */
    if (base && base[0] == '/')
        len = snprintf(buf, n, "%s/confab/%s", base, rel);
    else
        len = snprintf(buf, n, "%s/%s/confab/%s", home ? home : ".", fallbacks[kind], rel);
    return len < 0 || (size_t)len >= n ? NULL : buf;
}

int make_parent_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}
