/* confab tokenize: the tokens of a text, as llama.cpp's llama-tokenize
 * prints them (one "ID -> 'piece'" line per token, or --ids as a list). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/gguf.h"
#include "confab/tokenizer.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: confab tokenize [-m FILE] (-p TEXT | -f FILE) [--ids] [--no-bos] [--special]\n"
            "\n"
            "Print the tokens the model's tokenizer makes of a text: one line per token,\n"
            "\"ID -> 'piece'\", or with --ids the ids as one list, [1, 2, 3].\n"
            "\n"
            "  -m, --model FILE     the model (GGUF, or a llama2.c .bin, or a name 'confab\n"
            "                       models' lists); default: the one 'confab chat' would use\n"
            "  -p, --prompt TEXT    the text, as given (no escape sequences)\n"
            "  -f, --file FILE      read the text from FILE\n"
            "      --ids            print only the ids, as a Python-style list\n"
            "      --no-bos         add no BOS (nor EOS) token\n"
            "      --special        turn text such as <|im_start|> into special tokens; off by\n"
            "                       default (llama-tokenize has it on), so typed text stays text\n"
            "      --tokenizer FILE the tokenizer of a llama2.c checkpoint\n");
}

static void print_tokens(const cf_tokenizer *t, const cf_tokens *v, bool ids_only)
{
    if (ids_only) {
        putchar('[');
        for (size_t i = 0; i < v->n; i++)
            printf(i ? ", %d" : "%d", v->ids[i]);
        puts("]");
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        cf_str p = cf_tok_piece(t, v->ids[i], true);
        printf("%6d -> '", v->ids[i]);
        fwrite(p.ptr, 1, p.len, stdout);
        puts("'");
    }
}

int cmd_tokenize(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'},  {"prompt", required_argument, 0, 'p'},
        {"file", required_argument, 0, 'f'},   {"ids", no_argument, 0, 'I'},
        {"no-bos", no_argument, 0, 'B'},       {"special", no_argument, 0, 'S'},
        {"tokenizer", required_argument, 0, 'T'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *model_opt = NULL, *prompt = NULL, *file = NULL, *tok_file = NULL;
    bool ids_only = false, no_bos = false, special = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:p:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            model_opt = optarg;
            break;
        case 'p':
            prompt = optarg;
            break;
        case 'f':
            file = optarg;
            break;
        case 'I':
            ids_only = true;
            break;
        case 'B':
            no_bos = true;
            break;
        case 'S':
            special = true;
            break;
        case 'T':
            tok_file = optarg;
            break;
        case 'h':
            usage(stdout);
            return CF_EXIT_OK;
        default:
            usage(stderr);
            return CF_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("tokenize: unexpected argument '%s'", argv[optind]);
        return CF_EXIT_USAGE;
    }
    if (!prompt == !file) {
        cli_error("tokenize: give the text with -p TEXT or -f FILE (one of them)");
        return CF_EXIT_USAGE;
    }

    size_t len = prompt ? strlen(prompt) : 0;
    char *text = NULL;
    if (file && !(text = cli_read_file(file, &len))) {
        cli_error("cannot read '%s'", file);
        return CF_EXIT_ERROR;
    }
    char *path = cli_resolve_model(model_opt);
    if (!path) {
        free(text);
        return CF_EXIT_MODEL;
    }
    cf_gguf *g = NULL;
    cf_tokenizer *t = NULL;
    cf_tokens v = {0};
    cf_err err;
    int rc = CF_EXIT_MODEL;
    if ((tok_file ? cf_gguf_open_llama2c(path, tok_file, &g, &err) : cf_gguf_open(path, &g, &err)) ||
        cf_tokenizer_create(g, &t, &err)) {
        cli_error("%s: %s", path, err.msg);
        goto out;
    }
    rc = CF_EXIT_ERROR;
    if (cf_tokenize(t, text ? text : prompt, len, !no_bos, special, &v, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    print_tokens(t, &v, ids_only);
    rc = fflush(stdout) == 0 ? CF_EXIT_OK : CF_EXIT_ERROR;
out:
    cf_tokens_free(&v);
    cf_tokenizer_free(t);
    cf_gguf_close(g);
    free(path);
    free(text);
    return rc;
}
