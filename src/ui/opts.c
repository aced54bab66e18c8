/* The chat command's options.  Names follow llama.cpp's llama-cli where it
 * has them, so commands carry over. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/session.h"
#include "opts.h"

enum opt_id {
    O_MODEL, O_TOKENIZER, O_CTX, O_THREADS, O_KV, O_MMAP, O_NO_MMAP, O_TEMPLATE, O_TEMPLATE_FILE,
    O_SETTING, O_PROMPT, O_SYSTEM, O_SYSTEM_FILE, O_SESSION, O_ANY_MODEL, O_AUTOSAVE, O_WHOLE,
    O_TUI, O_VERBOSE, O_NO_COLOR, O_MARKDOWN, O_HELP, O_SHOW_THINKING, O_ENDPOINT, O_API_KEY_ENV,
    O_TIMEOUT, O_DRAFT_MODEL, O_LOOKUP, O_DRAFT_MAX, O_DRAFT_MIN, O_DRAFT_P_MIN, O_GPU, O_TOOLS,
    O_TOOL_CHOICE,
};

enum opt_group { G_MODEL, G_REMOTE, G_SAMPLING, G_THINKING, G_CONVERSATION, G_INTERFACE, G_COUNT };

static const char *const group_titles[G_COUNT] = {
    "Model",
    "Remote model (an OpenAI-compatible server: vLLM, llama-server, ollama, TGI,\n"
    "a hosted API, confab serve; -m names its model, the options above are unused)",
    "Sampling (each also a /set name in the chat)",
    "Thinking (reasoning models; each also a /set name)", "Conversation", "Interface",
};

typedef struct opt_def {
    const char *name; /* --name and the config file key */
    char short_name;
    const char *arg;  /* what the value is; NULL for a flag */
    enum opt_id id;
    enum opt_group group;
    const char *help;
} opt_def;

static const opt_def defs[] = {
    {"model", 'm', "FILE", O_MODEL, G_MODEL,
     "model file, GGUF or llama2.c .bin, or a name 'confab models' lists\n"
     "(else $CONFAB_MODEL, else the first *.gguf in ~/.local/share/confab/models)"},
    {"tokenizer", 0, "FILE", O_TOKENIZER, G_MODEL, "tokenizer.bin of a llama2.c checkpoint"},
    {"ctx-size", 'c', "N", O_CTX, G_MODEL, "context size in tokens (default: the model's, at most 4096)"},
    {"threads", 't', "N", O_THREADS, G_MODEL, "threads (default: the physical cores)"},
    {"cache-type-k", 0, "TYPE", O_KV, G_MODEL,
     "the KV cache's keys (also -ctk): f16 (default), q8_0, q4_0, bf16, f32"},
    {"cache-type-v", 0, "TYPE", O_KV, G_MODEL, "its values (also -ctv), the same types"},
    {"kv-type", 0, "TYPE", O_KV, G_MODEL, "the keys' and values' type at once"},
    {"kv-rotate", 0, "on|off", O_KV, G_MODEL,
     "keep a q8_0 / q4_0 cache in a Walsh-Hadamard basis per head (default on)"},
    {"gpu-layers", 0, "N|all", O_GPU, G_MODEL,
     "offload the last N layers to the GPU (also -ngl; 99 or all: every layer\n"
     "and the output; default 0)"},
    {"device", 0, "N", O_GPU, G_MODEL, "the GPU to offload to, as 'confab devices' numbers them"},
    {"mmap", 0, NULL, O_MMAP, G_MODEL, "map the model file (default: copy it into huge pages when it fits)"},
    {"no-mmap", 0, NULL, O_NO_MMAP, G_MODEL, "copy the model into memory (huge pages where the kernel has them)"},
    {"chat-template", 0, "NAME", O_TEMPLATE, G_MODEL,
     "built-in chat template (default: the model's own)"},
    {"chat-template-file", 0, "FILE", O_TEMPLATE_FILE, G_MODEL, "Jinja chat template file"},
    {"model-draft", 0, "FILE", O_DRAFT_MODEL, G_MODEL,
     "speculative decoding (also -md): a smaller model of the same vocabulary\n"
     "guesses, the model checks the guesses in one pass (the same replies)"},
    {"lookup", 0, NULL, O_LOOKUP, G_MODEL, "speculative decoding with guesses from the conversation itself"},
    {"draft-max", 0, "N", O_DRAFT_MAX, G_MODEL, "guesses checked at most in one pass (default 16)"},
    {"draft-min", 0, "N", O_DRAFT_MIN, G_MODEL, "fewer guesses are not checked (default 0)"},
    {"draft-p-min", 0, "P", O_DRAFT_P_MIN, G_MODEL,
     "the draft model stops guessing below this probability (default 0.75)"},

    {"endpoint", 0, "URL", O_ENDPOINT, G_REMOTE,
     "the server's base URL, e.g. http://localhost:8080/v1\n"
     "(requests go to URL/chat/completions; no -m: its only model)"},
    {"api-key-env", 0, "VAR", O_API_KEY_ENV, G_REMOTE,
     "send the key in $VAR (Authorization: Bearer); never saved"},
    {"timeout", 0, "SECONDS", O_TIMEOUT, G_REMOTE,
     "give up when the server is silent this long (default 300)"},

    {"temp", 0, "X", O_SETTING, G_SAMPLING, "temperature; 0 = greedy (default 0.8)"},
    {"top-k", 0, "N", O_SETTING, G_SAMPLING, "keep the N most likely tokens; 0 = all (default 40)"},
    {"top-p", 0, "X", O_SETTING, G_SAMPLING, "nucleus sampling threshold (default 0.95)"},
    {"min-p", 0, "X", O_SETTING, G_SAMPLING, "drop tokens below X times the top one (default 0.05)"},
    {"typical", 0, "X", O_SETTING, G_SAMPLING, "locally typical sampling; 1 = off (default 1)"},
    {"repeat-penalty", 0, "X", O_SETTING, G_SAMPLING, "penalise repeated tokens; 1 = off (default 1)"},
    {"repeat-last-n", 0, "N", O_SETTING, G_SAMPLING, "how many recent tokens the penalties see (default 64)"},
    {"presence-penalty", 0, "X", O_SETTING, G_SAMPLING, "presence penalty; 0 = off (default 0)"},
    {"frequency-penalty", 0, "X", O_SETTING, G_SAMPLING, "frequency penalty; 0 = off (default 0)"},
    {"seed", 's', "N|random", O_SETTING, G_SAMPLING, "random seed (default: a new one each run)"},
    {"n-predict", 'n', "N", O_SETTING, G_SAMPLING, "most tokens per reply; -1 = no limit (default; also --predict)"},

    {"thinking", 0, "on|off|auto", O_SETTING, G_THINKING,
     "think before answering: the template's enable_thinking (auto: its default)"},
    {"reasoning-effort", 0, "LEVEL", O_SETTING, G_THINKING,
     "how long to think, low|medium|high|auto: the template's reasoning_effort\n"
     "(gpt-oss; auto: its default)"},
    {"format", 0, "json|FILE", O_SETTING, G_CONVERSATION,
     "replies only as a JSON object (json) or as JSON the schema in FILE\n"
     "describes, as ollama's format (default off; also /set format)"},
    {"show-thinking", 0, NULL, O_SHOW_THINKING, G_THINKING,
     "show the thinking as it streams (default in the chat; with stdin not a\n"
     "terminal it goes to stderr, and only with this option)"},

    {"prompt", 'p', "TEXT", O_PROMPT, G_CONVERSATION, "one chat turn: print the reply to TEXT and exit"},
    {"system", 0, "TEXT", O_SYSTEM, G_CONVERSATION, "system prompt (also -sys, --system-prompt)"},
    {"system-file", 0, "FILE|NAME", O_SYSTEM_FILE, G_CONVERSATION,
     "system prompt from a file or a preset (default, storyteller, concise)"},
    {"session", 0, "FILE", O_SESSION, G_CONVERSATION,
     "resume the chat saved in FILE, or start it there; it is saved after each\n"
     "reply and on leaving (no -m: the model it was saved with)"},
    {"session-any-model", 0, NULL, O_ANY_MODEL, G_CONVERSATION,
     "a session file saved with another model (--session, /load) brings its\n"
     "transcript, evaluated afresh, instead of being refused"},
    {"autosave", 0, NULL, O_AUTOSAVE, G_CONVERSATION, "save the session when the chat ends"},
    {"tools", 0, "FILE", O_TOOLS, G_CONVERSATION,
     "tools the model may call: a JSON list of functions (name, description,\n"
     "parameters), each with the shell command that runs it, which gets the\n"
     "arguments as JSON on stdin and in $CONFAB_TOOL_ARGS; every call asks\n"
     "first (y/N), its output goes back to the model (default none)"},
    {"tool-choice", 0, "auto|required", O_TOOL_CHOICE, G_CONVERSATION,
     "with --tools: the model may call one (auto, default), or must in its\n"
     "reply to each message (required: a grammar holds it to a call)"},
    {"whole", 0, NULL, O_WHOLE, G_CONVERSATION,
     "with stdin not a terminal: all of stdin is one message (default: one per line)"},

    {"tui", 0, NULL, O_TUI, G_INTERFACE, "full-screen mode: transcript, status bar, sampler hotkeys"},
    {"verbose", 0, NULL, O_VERBOSE, G_INTERFACE, "scripting: statistics of each reply on stderr"},
    {"no-color", 0, NULL, O_NO_COLOR, G_INTERFACE, "no colours (also when NO_COLOR is set)"},
    {"markdown", 0, "on|off", O_MARKDOWN, G_INTERFACE,
     "render the replies' markdown on a terminal, rows wrapped at\n"
     "spaces (default on; also /set markdown)"},
    {"probs", 0, "on|off", O_SETTING, G_INTERFACE,
     "colour each token by its probability; /show probs lists them (default off)"},
    {"help", 'h', NULL, O_HELP, G_INTERFACE, "this help"},
};
#define N_DEFS (sizeof defs / sizeof defs[0])

const char *const opts_setting_names[OPTS_N_SETTINGS] = {
    "temp", "top-k", "top-p", "min-p", "typical", "repeat-penalty", "repeat-last-n",
    "presence-penalty", "frequency-penalty", "seed", "n-predict", "thinking", "reasoning-effort",
    "probs", "format",
};

void opts_init(chat_opts *o)
{
    memset(o, 0, sizeof *o);
    ui_cache_init(&o->cache, CF_KV_F16);
    o->show_thinking = -1;
    o->markdown = true;
    cf_spec_params_default(&o->spec);
}

static int setting_index(const char *name)
{
    for (int i = 0; i < OPTS_N_SETTINGS; i++)
        if (!strcmp(opts_setting_names[i], name))
            return i;
    return -1;
}

static int replace(char **dst, const char *value)
{
    char *v = strdup(value);
    if (!v) {
        cli_error("out of memory");
        return -1;
    }
    free(*dst);
    *dst = v;
    return 0;
}

static int parse_bool(const char *label, const char *value, bool *out)
{
    int b = cf_parse_bool(value);
    if (b < 0) {
        cli_error("%s: '%s' is not one of on, off", label, value);
        return -1;
    }
    *out = b;
    return 0;
}

void opts_canonical_name(const char *name, size_t len, char *canon, size_t n)
{
    /* ollama's and llama-cli's spellings of the same settings */
    static const char *const alias[][2] = {
        {"temperature", "temp"}, {"typical-p", "typical"}, {"num-predict", "n-predict"},
        {"predict", "n-predict"}, {"system-prompt", "system"},
    };
    snprintf(canon, n, "%.*s", (int)len, name);
    for (char *p = canon; *p; p++)
        if (*p == '_')
            *p = '-';
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcmp(canon, alias[i][0]))
            snprintf(canon, n, "%s", alias[i][1]);
}

/* The session's check of a setting; its message names the setting,
 * which label (the option and where it was given) replaces. */
static int check_setting(const char *label, const char *name, const char *value)
{
    cf_err err = {0};
    if (cf_session_setting_check(name, value, &err) == 0)
        return 0;
    size_t n = strlen(name);
    bool named = !strncmp(err.msg, name, n) && err.msg[n] == ':';
    cli_error("%s: %s", label, named ? err.msg + n + 2 : err.msg);
    return -1;
}

/* Apply a definition; label names the option in errors ("--temp",
 * "FILE:3: temp"); value is NULL for a flag on the command line. */
static int apply(chat_opts *o, const opt_def *d, const char *label, const char *value)
{
    long long n;
    double x;
    bool flag = true;
    if (!d->arg && value && parse_bool(label, value, &flag) < 0)
        return -1;
    switch (d->id) {
    case O_MODEL:
        return replace(&o->model, value);
    case O_TOKENIZER:
        return replace(&o->tokenizer, value);
    case O_CTX:
        if (!cli_parse_int(label, value, 0, 1 << 20, &n))
            return -1;
        o->n_ctx = (int)n;
        return 0;
    case O_THREADS:
        if (!cli_parse_threads(label, value, &n))
            return -1;
        o->n_threads = (int)n;
        return 0;
    case O_KV:
        return ui_cache_option(&o->cache, d->name, value) < 0 ? -1 : 0;
    case O_GPU:
        return ui_gpu_option(&o->gpu, d->name, value) < 0 ? -1 : 0;
    case O_MMAP:
    case O_NO_MMAP:
        o->load_mode = flag == (d->id == O_MMAP) ? CF_LOAD_MMAP : CF_LOAD_COPY;
        return 0;
    case O_TEMPLATE:
        return replace(&o->chat_template, value);
    case O_TEMPLATE_FILE:
        return replace(&o->chat_template_file, value);
    case O_ENDPOINT:
        return replace(&o->endpoint, value);
    case O_API_KEY_ENV:
        return replace(&o->api_key_env, value);
    case O_TIMEOUT:
        if (!cli_parse_float(label, value, 0.05, 86400, &x))
            return -1;
        o->timeout = x;
        return 0;
    case O_DRAFT_MODEL:
        return replace(&o->draft_model, value);
    case O_LOOKUP:
        o->lookup = flag;
        return 0;
    case O_DRAFT_MAX:
    case O_DRAFT_MIN:
        if (!cli_parse_int(label, value, d->id == O_DRAFT_MAX ? 1 : 0, 64, &n))
            return -1;
        *(d->id == O_DRAFT_MAX ? &o->spec.draft_max : &o->spec.draft_min) = (int)n;
        return 0;
    case O_DRAFT_P_MIN:
        if (!cli_parse_float(label, value, 0, 1, &x))
            return -1;
        o->spec.p_min = (float)x;
        return 0;
    case O_SETTING:
        return check_setting(label, d->name, value) < 0
                   ? -1
                   : replace(&o->settings[setting_index(d->name)], value);
    case O_PROMPT:
        return replace(&o->prompt, value);
    case O_SYSTEM:
    case O_SYSTEM_FILE:
        o->system_from = d->id == O_SYSTEM ? SYSTEM_TEXT : SYSTEM_FILE;
        return replace(&o->system, value);
    case O_SESSION:
        return replace(&o->session, value);
    case O_TOOLS:
        return replace(&o->tools, value);
    case O_TOOL_CHOICE:
        if (strcmp(value, "auto") && strcmp(value, "required")) {
            cli_error("%s: '%s' is not auto or required", label, value);
            return -1;
        }
        o->tools_required = !strcmp(value, "required");
        return 0;
    case O_ANY_MODEL:
        o->any_model = flag;
        return 0;
    case O_AUTOSAVE:
        o->autosave = flag;
        return 0;
    case O_WHOLE:
        o->whole = flag;
        return 0;
    case O_TUI:
        o->tui = flag;
        return 0;
    case O_VERBOSE:
        o->verbose = flag;
        return 0;
    case O_NO_COLOR:
        o->no_color = flag;
        return 0;
    case O_MARKDOWN:
        return parse_bool(label, value, &o->markdown);
    case O_HELP:
        o->help = flag;
        return 0;
    case O_SHOW_THINKING:
        o->show_thinking = flag;
        return 0;
    }
    return 0;
}

int opts_set(chat_opts *o, const char *name, const char *value, const char *where)
{
    char label[600], canon[64];
    opts_canonical_name(name, strlen(name), canon, sizeof canon);
    for (size_t i = 0; i < N_DEFS; i++) {
        if (strcmp(defs[i].name, canon))
            continue;
        snprintf(label, sizeof label, "%s: %s", where, name);
        if (defs[i].id == O_PROMPT || defs[i].id == O_HELP) {
            cli_error("%s is a command-line option only", label);
            return -1;
        }
        return apply(o, &defs[i], label, value);
    }
    cli_error("%s: unknown key '%s' (keys are the long option names, see confab --help)", where,
              name);
    return -1;
}

static const opt_def *find_long(const char *name, size_t len)
{
    char canon[64];
    opts_canonical_name(name, len, canon, sizeof canon);
    for (size_t i = 0; i < N_DEFS; i++)
        if (!strcmp(defs[i].name, canon))
            return &defs[i];
    return NULL;
}

static const opt_def *find_short(char c)
{
    for (size_t i = 0; i < N_DEFS; i++)
        if (defs[i].short_name == c)
            return &defs[i];
    return NULL;
}

/* Whether a word is one of the options (-1 is a value, -p an option). */
static bool is_option(const char *a)
{
    if (a[0] != '-')
        return false;
    if (a[1] == '-' && a[2])
        return find_long(a + 2, strcspn(a + 2, "=")) != NULL;
    return !strcmp(a, "-sys") || !strcmp(a, "-ctk") || !strcmp(a, "-ctv") || !strcmp(a, "-ngl") ||
           (a[1] && !a[2] && find_short(a[1]));
}

int opts_parse_args(chat_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        const opt_def *d = NULL;
        char label[128];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            d = find_long(a + 2, len);
            snprintf(label, sizeof label, "--%.*s", (int)len, a + 2);
            if (eq)
                value = eq + 1;
            if (d && eq && !d->arg) {
                cli_error("%s takes no value", label);
                return -1;
            }
        } else if (!strcmp(a, "-sys")) { /* llama-cli's */
            d = find_long("system", 6);
            snprintf(label, sizeof label, "%s", a);
        } else if (!strcmp(a, "-md")) {
            d = find_long("model-draft", 11);
            snprintf(label, sizeof label, "%s", a);
        } else if (!strcmp(a, "-ngl")) { /* llama.cpp's */
            d = find_long("gpu-layers", 10);
            snprintf(label, sizeof label, "%s", a);
        } else if (!strcmp(a, "-ctk") || !strcmp(a, "-ctv")) {
            d = find_long(a[3] == 'k' ? "cache-type-k" : "cache-type-v", 12);
            snprintf(label, sizeof label, "%s", a);
        } else if (a[0] == '-' && a[1] && !a[2]) {
            d = find_short(a[1]);
            snprintf(label, sizeof label, "-%c", a[1]);
        } else {
            cli_error("unexpected argument '%s' (messages go after -p, or on stdin)", a);
            return -1;
        }
        if (!d) {
            cli_error("unknown option '%s' (see confab --help)", a);
            return -1;
        }
        if (d->arg && !value) {
            if (i + 1 >= argc || is_option(argv[i + 1])) {
                cli_error("%s needs a value (%s)%s%s", label, d->arg, i + 1 < argc ? " before " : "",
                          i + 1 < argc ? argv[i + 1] : "");
                return -1;
            }
            value = argv[++i];
        }
        if (apply(o, d, label, value) < 0)
            return -1;
    }
    return 0;
}

void opts_help(FILE *f)
{
    fputs("usage: confab [chat] [OPTIONS]\n\n"
          "Chat with a local model, or one on a server (--endpoint).  On a terminal: an\n"
          "interactive chat (type /help), full screen with --tui.  With stdin not a\n"
          "terminal: each line is one message and only the replies are printed.  Defaults\n"
          "come from\n"
          "${XDG_CONFIG_HOME:-~/.config}/confab/config (key = value, the long names).\n",
          f);
    for (int g = 0; g < G_COUNT; g++) {
        fprintf(f, "\n%s:\n", group_titles[g]);
        for (size_t i = 0; i < N_DEFS; i++) {
            const opt_def *d = &defs[i];
            if ((int)d->group != g)
                continue;
            char head[64];
            int n = d->short_name ? snprintf(head, sizeof head, "-%c, --%s", d->short_name, d->name)
                                  : snprintf(head, sizeof head, "    --%s", d->name);
            if (d->arg)
                snprintf(head + n, sizeof head - (size_t)n, " %s", d->arg);
            /* Help texts may span lines; indent the continuations. */
            fprintf(f, "  %-28s ", head);
            for (const char *h = d->help; *h; h++) {
                fputc(*h, f);
                if (*h == '\n')
                    fprintf(f, "  %-28s ", "");
            }
            fputc('\n', f);
        }
    }
    fputs("\nExit status: 0 ok, 1 runtime error, 2 bad option, 3 model not loaded,\n"
          "4 session file not loaded or saved, 5 message too long for the context,\n"
          "130 interrupted.  See confab(1) for the slash commands and hotkeys.\n",
          f);
}

void opts_free(chat_opts *o)
{
    free(o->model);
    free(o->tokenizer);
    free(o->chat_template);
    free(o->chat_template_file);
    free(o->endpoint);
    free(o->api_key_env);
    free(o->system);
    free(o->session);
    free(o->tools);
    free(o->prompt);
    free(o->draft_model);
    for (int i = 0; i < OPTS_N_SETTINGS; i++)
        free(o->settings[i]);
    opts_init(o);
}
