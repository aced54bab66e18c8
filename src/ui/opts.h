/* The chat command's options: one table read by the command line, the
 * config file and --help. */
#ifndef CONFAB_UI_OPTS_H
#define CONFAB_UI_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "cache_opts.h"
#include "gpu_opts.h"
#include "confab/model.h"
#include "confab/spec.h"

/* The session's settings that are also options, in its spelling. */
#define OPTS_N_SETTINGS 15
extern const char *const opts_setting_names[OPTS_N_SETTINGS];

typedef enum chat_system_from {
    SYSTEM_NONE,
    SYSTEM_TEXT, /* --system */
    SYSTEM_FILE, /* --system-file: a path or a preset name */
} chat_system_from;

typedef struct chat_opts {
    char *model, *tokenizer, *chat_template, *chat_template_file;
    char *endpoint, *api_key_env; /* a remote engine: the server's URL, the key's variable */
    double timeout;               /* seconds the server may stay silent; 0: the default */
    chat_system_from system_from; /* the later of --system / --system-file wins */
    char *system;
    char *session, *prompt;
    char *draft_model;            /* -md: speculative decoding's draft */
    char *tools;                  /* --tools FILE */
    bool tools_required;          /* --tool-choice required */
    bool lookup;                  /* --lookup: its guesses from the context */
    cf_spec_params spec;
    int n_ctx, n_threads;
    ui_cache cache; /* -ctk, -ctv, --kv-rotate */
    ui_gpu gpu;     /* -ngl, --device */
    cf_load_mode load_mode;
    bool autosave, tui, whole, verbose, no_color, help;
    bool any_model;    /* --session-any-model */
    bool markdown;     /* render replies' markdown on a terminal (default) */
    int show_thinking; /* --show-thinking: 1 or 0; -1 the mode's default */
    char *settings[OPTS_N_SETTINGS]; /* values as given, NULL = default */
} chat_opts;

/* The defaults (everything the session decides left at 0 / NULL). */
void opts_init(chat_opts *o);
/* Parse the command line (argv[0] is the command name).  On a bad option
 * or value, print one error line and return -1. */
int opts_parse_args(chat_opts *o, int argc, char **argv);
/* Set one option by its long name (config files).  `where` prefixes error
 * messages ("FILE:LINE").  Returns -1 after printing one error line. */
int opts_set(chat_opts *o, const char *name, const char *value, const char *where);
/* The option or setting a name (len bytes) means as ollama or llama-cli
 * spell it (temperature, top_k, num_predict, typical-p, predict,
 * system-prompt), into canon; else the name itself. */
void opts_canonical_name(const char *name, size_t len, char *canon, size_t n);
/* The option reference, grouped, for --help. */
void opts_help(FILE *f);
void opts_free(chat_opts *o);

/* Read ${XDG_CONFIG_HOME:-~/.config}/confab/config (or `path`) into o: one
 * `key = value` per line, keys the long option names, `#` comments.  An
 * error prints one line naming FILE:LINE, and the rest is still read.
 * Returns the number of errors; a missing file is none. */
int config_load(chat_opts *o, const char *path);

#endif
