/* GPU offload on the command line (chat, complete, bench, serve), as
 * llama.cpp spells it: -ngl / --gpu-layers N (99 or all: every layer and
 * the output) and --device N (confab devices lists them). */
#ifndef CONFAB_UI_GPU_OPTS_H
#define CONFAB_UI_GPU_OPTS_H

#include <stdio.h>

#include "confab/model.h"

typedef struct ui_gpu {
    int layers; /* 0: none */
    int device;
} ui_gpu;

/* Option `name` (without dashes) with its value: 1 when it was a GPU
 * option, 0 when it is not one, -1 after an error line on a bad value. */
int ui_gpu_option(ui_gpu *g, const char *name, const char *value);
/* -ngl written as llama.cpp writes it: argv's word becomes --gpu-layers,
 * so that getopt does not read -n gl. */
void ui_gpu_argv(int argc, char **argv);
/* The help lines of the options. */
void ui_gpu_usage(FILE *f);
/* The context's line on how offloading went, on stderr (none when no
 * layers were asked for). */
void ui_gpu_note(const char *note);

#endif
