/* confab template: render a chat template for a conversation, exactly. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/gguf.h"
#include "confab/template.h"

#define MAX_VARS 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: confab template (-f FILE.jinja | -m MODEL | --name BUILTIN)\n"
            "                       --messages FILE.json [--bos S] [--eos S]\n"
            "                       [--add-generation-prompt] [--tools FILE.json] [--var KEY=JSON]...\n"
            "\n"
            "Render a chat template for a conversation and print the text exactly (no newline\n"
            "added); on failure print one error line, with the template line and column, and\n"
            "exit 1.  Jinja templates run as Hugging Face's apply_chat_template runs them.\n"
            "\n"
            "  -f FILE.jinja        a Jinja template file\n"
            "  -m MODEL             the model's tokenizer.chat_template (a GGUF file or a name\n"
            "                       'confab models' lists); bos/eos default to the text of the\n"
            "                       model's BOS and EOS tokens\n"
            "  --name BUILTIN       a built-in format, as llama.cpp writes it\n"
            "  --messages FILE      a JSON list of {\"role\", \"content\", ...} objects (every\n"
            "                       field reaches the template, e.g. tool_calls)\n"
            "  --bos S, --eos S     bos_token / eos_token (unset: the template sees them undefined)\n"
            "  --add-generation-prompt  end with the opening of an assistant turn\n"
            "  --tools FILE         a JSON list of tools (default: tools is none)\n"
            "  --var KEY=JSON       a further variable, e.g. --var enable_thinking=false\n"
            "\n"
            "built-in formats:");
    for (const char *const *n = cf_chat_builtin_names(); *n; n++)
        fprintf(f, " %s", *n);
    fprintf(f, "\n");
}

static char *read_or_complain(const char *what, const char *path, size_t *len)
{
    char *text = cli_read_file(path, len);
    if (!text)
        cli_error("%s: cannot read '%s'", what, path);
    return text;
}

/* The text of token `key`'s id in the vocabulary, or NULL. */
static const char *token_text(const cf_gguf *g, const char *key, char **owned)
{
    uint64_t id;
    const cf_gguf_kv *toks = cf_gguf_get_arr(g, "tokenizer.ggml.tokens", CF_GGUF_STRING);
    if (!cf_gguf_get_u64(g, key, &id) || !toks || id >= toks->n)
        return NULL;
    cf_str s = cf_gguf_kv_str(toks, id);
    *owned = malloc(s.len + 1);
    if (!*owned)
        return NULL;
    memcpy(*owned, s.ptr, s.len);
    (*owned)[s.len] = 0;
    return *owned;
}

typedef struct args {
    const char *file, *model, *name, *messages, *bos, *eos, *tools;
    bool agp;
    size_t n_vars;
    const char *var_names[MAX_VARS];
    const char *var_json[MAX_VARS];
} args;

static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"file", required_argument, 0, 'f'},
        {"model", required_argument, 0, 'm'},
        {"name", required_argument, 0, 'N'},
        {"messages", required_argument, 0, 'M'},
        {"bos", required_argument, 0, 'B'},
        {"eos", required_argument, 0, 'E'},
        {"add-generation-prompt", no_argument, 0, 'A'},
        {"tools", required_argument, 0, 'T'},
        {"var", required_argument, 0, 'V'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    static char names[MAX_VARS][64];
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': a->file = optarg; break;
        case 'm': a->model = optarg; break;
        case 'N': a->name = optarg; break;
        case 'M': a->messages = optarg; break;
        case 'B': a->bos = optarg; break;
        case 'E': a->eos = optarg; break;
        case 'A': a->agp = true; break;
        case 'T': a->tools = optarg; break;
        case 'V': {
            const char *eq = strchr(optarg, '=');
            size_t klen = eq ? (size_t)(eq - optarg) : 0;
            if (!eq || klen == 0 || klen >= sizeof names[0] || a->n_vars == MAX_VARS) {
                cli_error("--var: expected KEY=JSON (a name of 1..63 characters), got '%s'", optarg);
                return CF_EXIT_USAGE;
            }
            memcpy(names[a->n_vars], optarg, klen);
            names[a->n_vars][klen] = 0;
            a->var_names[a->n_vars] = names[a->n_vars];
            a->var_json[a->n_vars++] = eq + 1;
            break;
        }
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc || !!a->file + !!a->model + !!a->name != 1 || !a->messages) {
        if (optind != argc)
            cli_error("unexpected argument '%s'", argv[optind]);
        else
            cli_error("give one of -f FILE, -m MODEL or --name BUILTIN, and --messages FILE");
        return CF_EXIT_USAGE;
    }
    return 0;
}

int cmd_template(int argc, char **argv)
{
    args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? CF_EXIT_OK : rc;
    cf_err err;
    cf_chat_template *t = NULL;
    cf_gguf *g = NULL;
    char *src = NULL, *msgs = NULL, *tools = NULL, *bos_owned = NULL, *eos_owned = NULL;
    char *out = NULL, *model = NULL;
    size_t src_len = 0, msgs_len = 0, out_len = 0;
    rc = CF_EXIT_ERROR;
    if (a.model) {
        cf_str tmpl;
        rc = CF_EXIT_MODEL;
        if (!(model = cli_model_path(a.model)))
            goto done;
        if (cf_gguf_open(model, &g, &err) < 0) {
            cli_error("%s", err.msg);
            goto done;
        }
        rc = CF_EXIT_ERROR;
        if (!cf_gguf_get_str(g, "tokenizer.chat_template", &tmpl)) {
            cli_error("%s has no tokenizer.chat_template (use --name BUILTIN)", a.model);
            goto done;
        }
        if (cf_chat_template_from_jinja(tmpl.ptr, tmpl.len, "GGUF", &t, &err) < 0) {
            cli_error("%s", err.msg);
            goto done;
        }
        if (!a.bos)
            a.bos = token_text(g, "tokenizer.ggml.bos_token_id", &bos_owned);
        if (!a.eos)
            a.eos = token_text(g, "tokenizer.ggml.eos_token_id", &eos_owned);
    } else if (a.file) {
        if (!(src = read_or_complain("-f", a.file, &src_len)))
            goto done;
        if (cf_chat_template_from_jinja(src, src_len, a.file, &t, &err) < 0) {
            cli_error("%s", err.msg);
            goto done;
        }
    } else if (cf_chat_template_from_name(a.name, &t, &err) < 0) {
        cli_error("%s", err.msg);
        rc = CF_EXIT_USAGE;
        goto done;
    }
    if (!(msgs = read_or_complain("--messages", a.messages, &msgs_len)))
        goto done;
    if (a.tools && !(tools = read_or_complain("--tools", a.tools, NULL)))
        goto done;
    cf_chat_opts o = {0};
    o.bos_token = a.bos;
    o.eos_token = a.eos;
    o.add_generation_prompt = a.agp;
    o.tools_json = tools;
    o.n_vars = a.n_vars;
    o.var_names = a.var_names;
    o.var_json = a.var_json;
    if (cf_chat_render_json(t, msgs, msgs_len, &o, &out, &out_len, &err) < 0) {
        cli_error("%s", err.msg);
        goto done;
    }
    if (fwrite(out, 1, out_len, stdout) != out_len || fflush(stdout) != 0) {
        cli_error("writing the output failed");
        goto done;
    }
    rc = CF_EXIT_OK;
done:
    free(out);
    free(model);
    free(tools);
    free(msgs);
    free(src);
    free(bos_owned);
    free(eos_owned);
    cf_chat_template_free(t);
    if (g)
        cf_gguf_close(g);
    return rc;
}
