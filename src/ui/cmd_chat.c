/* confab chat: options, the session, then line mode, full-screen mode or
 * scripting. */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
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

/* --session FILE: resume it when it exists, else it is where /save goes. */
static int resume(chat *c, const char *path)
{
    cf_err err = {0};
    c->session_path = strdup(path);
    if (access(path, F_OK) < 0)
        return errno == ENOENT ? 0 : (cli_error("%s: %s", path, strerror(errno)), -1);
    if (cf_session_load(c->s, path, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

/* The server a chat talks to: --endpoint, else the one a remote chat
 * saved in --session was talking to (when no -m names a model file).
 * Returns 1 when there is one (into p; *endpoint, *model owned), 0 when
 * the chat is local, -1 after an error line. */
static int remote_params(const chat_opts *o, cf_session_params *p, char **endpoint, char **model,
                         int *status)
{
    if (!o->endpoint && !o->model && o->session && access(o->session, F_OK) == 0) {
        cf_err err = {.msg = ""};
        if (cf_session_file_remote(o->session, endpoint, model, &err) < 0) {
            cli_error("%s", err.msg);
            *status = CF_EXIT_SESSION;
            return -1;
        }
    }
    if (o->endpoint) {
        free(*endpoint);
        if (!(*endpoint = strdup(o->endpoint))) {
            cli_error("out of memory");
            return -1;
        }
    }
    if (!*endpoint)
        return 0;
    const char *key = NULL;
    if (o->api_key_env && (!(key = getenv(o->api_key_env)) || !*key)) {
        cli_error("--api-key-env: $%s is not set (or empty)", o->api_key_env);
        *status = CF_EXIT_USAGE;
        return -1;
    }
    p->endpoint = *endpoint;
    p->remote_model = o->model ? o->model : *model;
    p->api_key = key;
    p->timeout_ms = (int)(o->timeout * 1000);
    return 1;
}

static int run(chat_opts *o, bool interactive)
{
    char *system = NULL, *model = NULL, *endpoint = NULL, *saved_model = NULL;
    cf_session *s = NULL;
    int status = CF_EXIT_USAGE;
    if (check_template_opts(o) < 0 ||
        (o->system_from != SYSTEM_NONE && !(system = system_prompt(o))))
        goto out;
    cf_session_params p = {
        .tokenizer_path = o->tokenizer,
        .n_ctx = o->n_ctx,
        .n_threads = o->n_threads ? o->n_threads : cf_cpu_cores(),
        .kv_type = o->kv_type,
        .load_mode = o->load_mode,
        .chat_template = o->chat_template,
        .chat_template_file = o->chat_template_file,
        .system_prompt = system,
    };
    cf_err err = {0};
    int remote = remote_params(o, &p, &endpoint, &saved_model, &status);
    if (remote < 0)
        goto out;
    if (remote) {
        if (cf_session_new(&p, &s, &err) < 0) {
            cli_error("--endpoint: %s", err.msg);
            status = cli_exit_for(&err);
            goto out;
        }
    } else {
        status = CF_EXIT_MODEL;
        if (!(model = cli_resolve_model(o->model)))
            goto out;
        p.model_path = model;
        if (session_open(&p, interactive && isatty(STDERR_FILENO), &s, &err) < 0) {
            cli_error("%s", err.msg);
            status = err.code == CF_E_FAIL ? CF_EXIT_MODEL : cli_exit_for(&err);
            goto out;
        }
    }
    /* A model not trained to chat rarely ends a reply by itself: a cap,
     * which a resumed session's settings and -n replace. */
    if (cf_session_untrained(s))
        cf_session_set(s, "n-predict", CHAT_UNTRAINED_N_PREDICT, NULL);
    /* a chat shows the thinking unless told not to; a script only when told */
    chat c = {.s = s, .opts = o, .model_path = model,
              .show_thinking = o->show_thinking >= 0 ? o->show_thinking : interactive,
              .markdown = o->markdown};
    status = CF_EXIT_SESSION;
    if (o->session && resume(&c, o->session) < 0)
        goto out_chat;
    status = CF_EXIT_USAGE;
    if (apply_settings(s, o) < 0)
        goto out_chat;
    status = o->tui ? tui_run(&c) : interactive ? repl_run(&c) : script_run(&c);
out_chat:
    free(c.session_path);
out:
    cf_session_free(s);
    free(model);
    free(endpoint);
    free(saved_model);
    free(system);
    return status;
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
    } else if (o.whole && o.prompt) {
        cli_error("--whole reads the message from stdin; it cannot go with -p");
    } else {
        status = run(&o, interactive);
    }
    opts_free(&o);
    return status;
}
