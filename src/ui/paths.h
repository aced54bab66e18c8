/* Where confab keeps its files (XDG base directories). */
#ifndef CONFAB_UI_PATHS_H
#define CONFAB_UI_PATHS_H

#include <stddef.h>

typedef enum xdg_kind {
    XDG_CONFIG, /* $XDG_CONFIG_HOME or ~/.config */
    XDG_STATE,  /* $XDG_STATE_HOME or ~/.local/state */
    XDG_DATA,   /* $XDG_DATA_HOME or ~/.local/share */
} xdg_kind;

/* "<base>/confab/<rel>" into buf; returns buf, or NULL when it does not fit. */
char *xdg_path(xdg_kind kind, const char *rel, char *buf, size_t n);
/* Create the folders leading to the file `path` (mode 0700); 0 or -1. */
int make_parent_dirs(const char *path);

#endif
