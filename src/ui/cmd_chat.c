/* confab chat: options, the session, then line mode, full-screen mode or
 * scripting. */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chat.h"
#include "confab/template.h"
#include "confab/platform.h"
#include "cli.h"
#include "load.h"
#include "prompts.h"
#include "repl.h"

static char *system_prompt(const chat_opts *o)
{
    if (o->system_from == SYSTEM_TEXT)
        return strdup(o->system);
    if (o->system_from == SYSTEM_FILE)
        return prompt_load(o->system);
    return NULL;
}

/* The template options are checked before the model loads: a bad one is
 * a bad option value. */
static int check_template_opts(const chat_opts *o)
{
    if (o->chat_template) {
        bool known = false;
        for (const char *const *n = cf_chat_builtin_names(); *n && !known; n++)
            known = !strcmp(*n, o->chat_template);
        if (!known) {
            cli_error("--chat-template: no built-in template '%s' (see 'confab template --help')",
                      o->chat_template);
            return -1;
        }
    }
    if (o->chat_template_file && access(o->chat_template_file, R_OK) < 0) {
        cli_error("--chat-template-file: cannot read %s: %s", o->chat_template_file,
                  strerror(errno));
        return -1;
    }
    return 0;
}

/* The sampler options, checked by the session against the model. */
static int apply_settings(cf_session *s, const chat_opts *o)
{
    for (int i = 0; i < OPTS_N_SETTINGS; i++) {
        cf_err err = {0};
        if (o->settings[i] && cf_session_set(s, opts_setting_names[i], o->settings[i], &err) < 0) {
            cli_option_error(opts_setting_names[i], err.msg);
            return -1;
        }
    }
    return 0;
}

/* Whether FILE is there with something in it: an empty --session file
 * (touch new.session) is a new session, as a missing one is. */
static bool has_session(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* --session FILE: resume it when it holds one, else it is where the chat
 * is saved. */
static int resume(chat *c, const char *path)
{
    cf_err err = {0};
    struct stat st;
    c->session_path = strdup(path);
    if (stat(path, &st) < 0 && errno != ENOENT) {
        cli_error("%s: %s", path, strerror(errno));
        return -1;
    }
    if (!has_session(path))
        return 0;
    if (cf_session_load(c->s, path, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

/* What --session FILE was saved with, when neither -m nor --endpoint
 * says what to talk to (into org; nothing for a new file). */
static int session_origin(const chat_opts *o, cf_session_origin *org, int *status)
{
    cf_err err = {.msg = ""};
    if (o->endpoint || o->model || !o->session || !has_session(o->session))
        return 0;
    if (cf_session_file_origin(o->session, org, &err) < 0) {
        cli_error("%s", err.msg);
        *status = CF_EXIT_SESSION;
        return -1;
    }
    return 0;
}

/* The model file of a chat: -m, else the one a local session file was
 * saved with (its path, else the name 'confab models' picked it by),
 * else the default.  NULL after one error line. */
static char *model_file(const chat_opts *o, const cf_session_origin *org)
{
    if (o->model || !org->model)
        return cli_resolve_model(o->model);
    char *found = NULL;
    if (org->path && access(org->path, R_OK) == 0)
        found = strdup(org->path);
    else if (org->pick)
        found = cli_store_path(org->pick);
    if (!found)
        cli_error("%s was saved with the model '%s', not at %s%s%s%s; -m FILE names the model "
                  "to load it into", o->session, org->model, org->path ? org->path : "a path it records",
                  org->pick ? " nor '" : "", org->pick ? org->pick : "",
                  org->pick ? "' in 'confab models'" : "");
    return found;
}

/* The server a chat talks to: --endpoint, else the one a remote chat
 * saved in --session was talking to.  Returns 1 when there is one (into
 * p; *endpoint owned), 0 when the chat is local, -1 after an error line. */
static int remote_params(const chat_opts *o, const cf_session_origin *org, cf_session_params *p,
                         char **endpoint, int *status)
{
    const char *url = o->endpoint ? o->endpoint : org->endpoint;
    if (!url)
        return 0;
    if (!(*endpoint = strdup(url))) {
        cli_error("out of memory");
        return -1;
    }
    const char *key = NULL;
    if (o->api_key_env && (!(key = getenv(o->api_key_env)) || !*key)) {
        cli_error("--api-key-env: $%s is not set (or empty)", o->api_key_env);
        *status = CF_EXIT_USAGE;
        return -1;
    }
    p->endpoint = *endpoint;
    p->remote_model = o->model ? o->model : org->model;
    p->api_key = key;
    p->timeout_ms = (int)(o->timeout * 1000);
    return 1;
}

static int run(chat_opts *o, bool interactive)
{
    char *system = NULL, *model = NULL, *endpoint = NULL, *draft = NULL;
    cf_session_origin org = {0};
    cf_session *s = NULL;
    int status = CF_EXIT_USAGE;
    if (check_template_opts(o) < 0 ||
        (o->system_from != SYSTEM_NONE && !(system = system_prompt(o))))
        goto out;
    cf_session_params p = {
        .tokenizer_path = o->tokenizer,
        .n_ctx = o->n_ctx,
        .n_threads = o->n_threads ? o->n_threads : cf_cpu_cores(),
        .type_k = o->cache.k,
        .type_v = o->cache.v,
        .kv_no_rotate = o->cache.no_rotate,
        .n_gpu_layers = o->gpu.layers,
        .gpu_device = o->gpu.device,
        .load_mode = o->load_mode,
        .chat_template = o->chat_template,
        .chat_template_file = o->chat_template_file,
        .system_prompt = system,
        .lookup = o->lookup,
        .spec = &o->spec,
        .any_model = o->any_model,
    };
    cf_err err = {0};
    int remote = session_origin(o, &org, &status) < 0 ? -1
                                                      : remote_params(o, &org, &p, &endpoint, &status);
    if (remote < 0)
        goto out;
    if (remote && (o->draft_model || o->lookup)) {
        cli_error("%s: speculative decoding is for local models (the server decides how it decodes)",
                  o->lookup ? "--lookup" : "-md");
        goto out;
    }
    if (remote) {
        if (cf_session_new(&p, &s, &err) < 0) {
            cli_error("--endpoint: %s", err.msg);
            status = cli_exit_for(&err);
            goto out;
        }
    } else {
        status = CF_EXIT_MODEL;
        if (!(model = model_file(o, &org)) || (o->draft_model && !(draft = cli_model_path(o->draft_model))))
            goto out;
        p.model_path = model;
        p.draft_model = draft;
        /* a name the stores resolved goes into the session file */
        p.model_pick = o->model && strcmp(o->model, model) ? o->model : org.pick;
        if (session_open(&p, interactive && isatty(STDERR_FILENO), &s, &err) < 0) {
            cli_error("%s", err.msg);
            status = err.code == CF_E_FAIL ? CF_EXIT_MODEL : cli_exit_for(&err);
            goto out;
        }
        ui_gpu_note(cf_session_gpu_note(s));
    }
    /* a chat shows the thinking unless told not to; a script only when told */
    chat c = {.s = s, .opts = o, .model_path = model,
              .show_thinking = o->show_thinking >= 0 ? o->show_thinking : interactive,
              .markdown = o->markdown};
    cf_session_set_cancel(s, chat_interrupted, &c);
    status = CF_EXIT_SESSION;
    if (o->session && resume(&c, o->session) < 0)
        goto out_chat;
    status = CF_EXIT_USAGE;
    if (apply_settings(s, o) < 0)
        goto out_chat;
    if (o->tools && chat_tools_open(&c, o->tools, o->tools_required, &err) < 0) {
        cli_error("%s", err.msg);
        goto out_chat;
    }
    status = o->tui ? tui_run(&c) : interactive ? repl_run(&c) : script_run(&c);
out_chat:
    chat_tools_close(&c);
    free(c.session_path);
out:
    cf_session_free(s);
    free(model);
    free(draft);
    free(endpoint);
    cf_session_origin_free(&org);
    free(system);
    return status;
}

/* -n 0 is taken, as llama-cli takes it, but leaves every reply empty. */
static void zero_predict_note(const chat_opts *o)
{
    for (int i = 0; i < OPTS_N_SETTINGS; i++)
        if (!strcmp(opts_setting_names[i], "n-predict") && o->settings[i] && !atoi(o->settings[i]))
            cli_error("-n 0: every reply ends before its first token (-n -1: no limit)");
}

int cmd_chat(int argc, char **argv)
{
    chat_opts o;
    /* Characters only: numbers keep their C spelling (0.5, not 0,5). */
    setlocale(LC_CTYPE, "");
    opts_init(&o);
    config_load(&o, NULL);
    if (opts_parse_args(&o, argc, argv) < 0) {
        opts_free(&o);
        return CF_EXIT_USAGE;
    }
    int status = CF_EXIT_USAGE;
    bool interactive = !o.prompt && isatty(STDIN_FILENO);
    if (o.help) {
        opts_help(stdout);
        status = CF_EXIT_OK;
    } else if (o.tui && (!interactive || !isatty(STDOUT_FILENO))) {
        cli_error("--tui needs a terminal on stdin and stdout (and no -p)");
    } else if (o.tools_required && !o.tools) {
        cli_error("--tool-choice: there are no tools (--tools FILE)");
    } else if (o.whole && o.prompt) {
        cli_error("--whole reads the message from stdin; it cannot go with -p");
    } else if (o.prompt && !o.prompt[strspn(o.prompt, " \t\n")]) {
        cli_error("-p: the message is empty (nothing to send)");
    } else {
        zero_predict_note(&o);
        status = run(&o, interactive);
    }
    opts_free(&o);
    return status;
}
