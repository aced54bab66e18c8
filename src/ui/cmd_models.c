/* confab models: the GGUF files in confab's folder and other programs'
 * stores, with their names for -m. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/store.h"
#include "paths.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: confab models [--json]\n"
               "\n"
               "List the GGUF models in confab's folder (${XDG_DATA_HOME:-~/.local/share}/\n"
               "confab/models) and where other programs keep them: ollama ($OLLAMA_MODELS or\n"
               "~/.ollama/models), the Hugging Face hub cache ($HF_HUB_CACHE, $HF_HOME/hub or\n"
               "~/.cache/huggingface/hub), llama.cpp's cache ($LLAMA_CACHE or ~/.cache/llama.cpp)\n"
               "and LM Studio (~/.lmstudio/models, ~/.cache/lm-studio/models): name,\n"
               "architecture, size, quant type, context length, store, and the file on the\n"
               "line below.  -m takes the name (qwen3:0.6b, Qwen/Qwen3-0.6B-GGUF:Q8_0, a\n"
               "repository's org/repo/file.gguf) or the start of only one.  Files that cannot\n"
               "be used are noted on stderr.\n"
               "\n"
               "  --json   a JSON array instead: one object per file with name, file_name,\n"
               "           store, path, size, arch, quant, context, problem (null if none)\n");
}

/* "523 MB", decimal units as the loader prints them */
static void human_size(char *buf, size_t n, uint64_t bytes)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1000 && u < 4)
        v /= 1000, u++;
    snprintf(buf, n, u && v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* $HOME/x as ~/x */
static const char *shorter(const char *path, char *buf, size_t n)
{
    const char *home = getenv("HOME");
    size_t k = home ? strlen(home) : 0;
    if (k > 1 && !strncmp(path, home, k) && path[k] == '/') {
        snprintf(buf, n, "~%s", path + k);
        return buf;
    }
    return path;
}

static void none_found(const cf_store *st)
{
    char buf[4200];
    printf("no models found; confab looks in:\n");
    for (int k = 0; k < CF_STORE_KINDS; k++) {
        const char *also = cf_store_dir_also(st, (cf_store_kind)k);
        if (cf_store_dir(st, (cf_store_kind)k))
            printf("  %-10s %s\n", cf_store_kind_name((cf_store_kind)k),
                   shorter(cf_store_dir(st, (cf_store_kind)k), buf, sizeof buf));
        if (also)
            printf("  %-10s %s\n", "", shorter(also, buf, sizeof buf));
    }
    printf("Get a GGUF chat model: 'ollama pull qwen3:0.6b', Qwen/Qwen3-0.6B-GGUF from Hugging\n"
           "Face, or any .gguf file in confab's folder; -m FILE.gguf runs a file anywhere.\n");
}

static void table(const cf_store *st)
{
    int wn = 4, wa = 4, wq = 5;
    for (int i = 0; i < cf_store_count(st); i++) {
        const cf_store_entry *e = cf_store_at(st, i);
        if (e->problem)
            continue;
        wn = (int)strlen(e->name) > wn ? (int)strlen(e->name) : wn;
        wa = (int)strlen(e->arch) > wa ? (int)strlen(e->arch) : wa;
        wq = (int)strlen(e->quant) > wq ? (int)strlen(e->quant) : wq;
    }
    printf("%-*s  %-*s  %8s  %-*s  %7s  %s\n", wn, "NAME", wa, "ARCH", "SIZE", wq, "QUANT",
           "CONTEXT", "STORE");
    for (int i = 0; i < cf_store_count(st); i++) {
        const cf_store_entry *e = cf_store_at(st, i);
        char size[32], ctx[24] = "-", path[4200];
        if (e->problem)
            continue;
        human_size(size, sizeof size, e->size);
        if (e->n_ctx)
            snprintf(ctx, sizeof ctx, "%" PRIu64, e->n_ctx);
        printf("%-*s  %-*s  %8s  %-*s  %7s  %s\n    %s\n", wn, e->name, wa, e->arch, size, wq,
               e->quant, ctx, cf_store_kind_name(e->store), shorter(e->path, path, sizeof path));
    }
}

int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j') {
            json = true;
        } else if (c == 'h') {
            usage(stdout);
            return CF_EXIT_OK;
        } else {
            cli_error("unknown option '%s' (see confab models --help)", argv[optind - 1]);
            return CF_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("models takes no arguments: '%s' (see confab models --help)", argv[optind]);
        return CF_EXIT_USAGE;
    }
    char dir[4096];
    cf_store *st;
    cf_err err;
    if (cf_store_scan(xdg_path(XDG_DATA, "models", dir, sizeof dir), true, &st, &err) < 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_ERROR;
    }
    int usable = 0;
    for (int i = 0; i < cf_store_count(st); i++)
        usable += !cf_store_at(st, i)->problem;
    char *text = json ? cf_store_json(st) : NULL;
    if (json && text)
        fputs(text, stdout);
    else if (json)
        cli_error("out of memory");
    else if (usable)
        table(st);
    else
        none_found(st);
    for (int i = 0; i < cf_store_count(st); i++) {
        const cf_store_entry *e = cf_store_at(st, i);
        char path[4200];
        if (e->problem && !json)
            cli_error("skipped %s (%s): %s", e->name, shorter(e->path, path, sizeof path),
                      e->problem);
    }
    free(text);
    cf_store_free(st);
    return json && !text ? CF_EXIT_ERROR : CF_EXIT_OK;
}
