/* Subcommands not built yet: each says so instead of pretending to work.
 * Every entry here is removed when its command lands. */
#include "cli.h"

#define NOT_YET(fn, name)                                                      \
    int fn(int argc, char **argv)                                              \
    {                                                                          \
        (void)argc;                                                            \
        (void)argv;                                                            \
        cli_error("'%s' is not available in this build yet", name);           \
        return CF_EXIT_ERROR;                                                  \
    }

NOT_YET(cmd_complete, "complete")
NOT_YET(cmd_tokenize, "tokenize")
NOT_YET(cmd_bench, "bench")
NOT_YET(cmd_mkmodel, "mkmodel")
