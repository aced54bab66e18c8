/* The KV cache on the command line (chat, complete, bench, serve):
 * llama.cpp's -ctk / --cache-type-k and -ctv / --cache-type-v, confab's
 * --kv-type for both, and --kv-rotate on|off for a quantized cache's
 * Hadamard rotation. */
#ifndef CONFAB_UI_CACHE_OPTS_H
#define CONFAB_UI_CACHE_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "confab/model.h"

typedef struct ui_cache {
    cf_kv_type k, v;
    bool no_rotate;
} ui_cache;

/* Both types t, rotated. */
void ui_cache_init(ui_cache *c, cf_kv_type t);
/* Option `name` (without dashes) with its value: 1 when it was a cache
 * option, 0 when it is not one, -1 after an error line on a bad value. */
int ui_cache_option(ui_cache *c, const char *name, const char *value);
/* -ctk and -ctv written as llama.cpp writes them: argv's words become
 * --cache-type-k and --cache-type-v, so that getopt does not read -c tk. */
void ui_cache_argv(int argc, char **argv);
/* The help lines of the options; dflt: the command's default type. */
void ui_cache_usage(FILE *f, const char *dflt);

#endif
