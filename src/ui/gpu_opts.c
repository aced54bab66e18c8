/* GPU offload options (gpu_opts.h). */
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "gpu_opts.h"

/* -ngl all: more layers than any model has */
#define ALL_LAYERS (1 << 20)

int ui_gpu_option(ui_gpu *g, const char *name, const char *value)
{
    char label[32];
    snprintf(label, sizeof label, "--%s", name);
    long long n;
    if (!strcmp(name, "gpu-layers")) {
        if (!strcmp(value, "all")) {
            g->layers = ALL_LAYERS;
            return 1;
        }
        if (!cli_parse_int(label, value, 0, ALL_LAYERS, &n))
            return -1;
        g->layers = (int)n;
        return 1;
    }
    if (!strcmp(name, "device")) {
        if (!cli_parse_int(label, value, 0, INT_MAX, &n))
            return -1;
        g->device = (int)n;
        return 1;
    }
    return 0;
}

void ui_gpu_argv(int argc, char **argv)
{
    static char ngl[] = "--gpu-layers";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-ngl"))
            argv[i] = ngl;
}

void ui_gpu_usage(FILE *f)
{
    fputs("  -ngl, --gpu-layers N     offload the last N layers to the GPU (99 or all:\n"
          "                           every layer and the output; default 0)\n"
          "      --device N           the GPU to use, as 'confab devices' numbers them\n",
          f);
}

void ui_gpu_note(const char *note)
{
    if (note && note[0])
        fprintf(stderr, "confab: %s\n", note);
}
