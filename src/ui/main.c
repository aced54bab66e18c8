/* confab: chat with a local language model in the terminal. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    cf_cmd_fn fn;
    const char *summary;
} commands[] = {
    {"chat", cmd_chat, "interactive chat (the default)"},
    {"complete", cmd_complete, "plain text completion"},
    {"tokenize", cmd_tokenize, "show the tokens of a text"},
    {"inspect", cmd_inspect, "print a model file's metadata and tensors"},
    {"models", cmd_models, "list the GGUF models on this machine, with their names for -m"},
    {"devices", cmd_devices, "list the GPUs that -ngl can offload to"},
    {"template", cmd_template, "render a chat template"},
    {"serve", cmd_serve, "serve the model over the OpenAI chat completions protocol"},
    {"bench", cmd_bench, "measure prompt and generation speed"},
    {"mkmodel", cmd_mkmodel, "write a GGUF with random weights in a real model's shape"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: confab [COMMAND] [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nWith no command (or options only), confab chats: confab -m MODEL.gguf\n"
               "'confab COMMAND --help' describes each command; see also confab(1).\n");
}

int main(int argc, char **argv)
{
    /* Past a file-size limit (ulimit -f) a write then fails with EFBIG, and
     * a save says so with one error line, instead of SIGXFSZ ending confab. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
                      !strcmp(argv[1], "help"))) {
        if (argc >= 3 && strcmp(argv[1], "help") == 0) {
            char *sub[] = {argv[2], (char *)"--help", NULL};
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(argv[2], commands[i].name))
                    return commands[i].fn(2, sub);
        }
        usage(stdout);
        /* chat is the default command: its options follow */
        char *chat_help[] = {(char *)"chat", (char *)"--help", NULL};
        putchar('\n');
        return cmd_chat(2, chat_help);
    }
    if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
        printf("confab %s\n", CONFAB_VERSION);
        return CF_EXIT_OK;
    }
    if (argc >= 2 && argv[1][0] != '-') {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[1], commands[i].name))
                return commands[i].fn(argc - 1, argv + 1);
        cli_error("unknown command '%s' (try 'confab --help')", argv[1]);
        return CF_EXIT_USAGE;
    }
    argv[0] = (char *)"chat";
    return cmd_chat(argc, argv);
}
