/* The config file, and the same bytes as a command line (arguments split
 * at newlines and NULs): every line or argument is taken or refused with
 * one error line (on stderr: run with -close_fd_mask=2). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "opts.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chat_opts o;
    opts_init(&o);
    int errors = config_load(&o, fuzz_file(0, data, size));
    fuzz_require(errors >= 0, "a negative error count");
    opts_free(&o);

    char *copy = malloc(size + 1), *argv[MAX_ARGS + 1] = {"chat"};
    fuzz_require(copy != NULL, "out of memory");
    memcpy(copy, data, size);
    copy[size] = 0;
    int argc = 1;
    for (size_t at = 0; argc < MAX_ARGS && at <= size; argc++) {
        argv[argc] = copy + at;
        size_t k = strcspn(copy + at, "\n"); /* a NUL ends an argument too */
        copy[at + k] = 0;
        at += k + 1;
    }
    argv[argc] = NULL;
    opts_init(&o);
    (void)opts_parse_args(&o, argc, argv);
    opts_free(&o);
    free(copy);
    return 0;
}
