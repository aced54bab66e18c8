/* KV cache options (cache_opts.h). */
#include <string.h>

#include "cache_opts.h"
#include "cli.h"
#include "confab/common.h"

void ui_cache_init(ui_cache *c, cf_kv_type t)
{
    c->k = c->v = t;
    c->no_rotate = false;
}

static int parse_type(const char *label, const char *value, cf_kv_type *t)
{
    const int parsed = cf_kv_type_parse(value);
    if (parsed < 0) {
        cli_error("%s: '%s' is not f16, q8_0, q4_0, bf16 or f32", label, value);
        return -1;
    }
    *t = (cf_kv_type)parsed;
    return 1;
}

int ui_cache_option(ui_cache *c, const char *name, const char *value)
{
    char label[32];
    snprintf(label, sizeof label, "--%s", name);
    if (!strcmp(name, "cache-type-k"))
        return parse_type(label, value, &c->k);
    if (!strcmp(name, "cache-type-v"))
        return parse_type(label, value, &c->v);
    if (!strcmp(name, "kv-type")) {
        if (parse_type(label, value, &c->k) < 0)
            return -1;
        c->v = c->k;
        return 1;
    }
    if (!strcmp(name, "kv-rotate")) {
        const int on = cf_parse_bool(value);
        if (on < 0) {
            cli_error("%s: '%s' is not one of on, off", label, value);
            return -1;
        }
        c->no_rotate = !on;
        return 1;
    }
    return 0;
}

void ui_cache_argv(int argc, char **argv)
{
    static char k[] = "--cache-type-k", v[] = "--cache-type-v";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-ctk"))
            argv[i] = k;
        else if (!strcmp(argv[i], "-ctv"))
            argv[i] = v;
}

void ui_cache_usage(FILE *f, const char *dflt)
{
    fprintf(f,
            "  -ctk, --cache-type-k T   the KV cache's keys: f16, q8_0, q4_0, bf16 or f32\n"
            "                           (default %s)\n"
            "  -ctv, --cache-type-v T   its values, the same types\n"
            "      --kv-type T          both at once\n"
            "      --kv-rotate on|off   keep a q8_0 / q4_0 cache in a Walsh-Hadamard basis\n"
            "                           per head, as llama.cpp does (default on)\n",
            dflt);
}
