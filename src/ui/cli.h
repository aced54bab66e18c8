/* The command line: subcommands, shared option parsing, exit codes. */
#ifndef CONFAB_UI_CLI_H
#define CONFAB_UI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confab/common.h"

/* Exit codes, one per class of error (documented in confab(1)). */
enum {
    CF_EXIT_OK = 0,
    CF_EXIT_ERROR = 1,     /* a runtime error (I/O, template, generation) */
    CF_EXIT_USAGE = 2,     /* bad command line or bad option value */
    CF_EXIT_MODEL = 3,     /* the model file could not be loaded */
    CF_EXIT_SESSION = 4,   /* a session file could not be loaded or saved */
    CF_EXIT_CONTEXT = 5,   /* the prompt does not fit in the context */
    CF_EXIT_INTERRUPT = 130,
};

typedef int (*cf_cmd_fn)(int argc, char **argv);

int cmd_chat(int argc, char **argv);
int cmd_complete(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_mkmodel(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* The exit code for a failure of the class err->code. */
int cli_exit_for(const cf_err *err);

/* Print "confab: <message>" on stderr. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void cli_error(const char *fmt, ...);
/* The library's message msg about option --name, naming the option once. */
void cli_option_error(const char *name, const char *msg);

/* Strict number parsing for option values; on failure print one error
 * naming the option and return false. */
bool cli_parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out);
bool cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out);

/* -t N: a whole number from 1 to CLI_THREADS_MAX, and at most the CPUs
 * online (more is capped there, with one line saying so). */
#define CLI_THREADS_MAX 1024
bool cli_parse_threads(const char *opt, const char *s, long long *out);

/* Read a whole file into a NUL-terminated malloc'ed buffer. */
char *cli_read_file(const char *path, size_t *len);

/* The model to use (model_arg.c): the -m value, else $CONFAB_MODEL, each
 * as cli_model_path takes it, else the first *.gguf (sorted by name; not
 * a split one) in confab's models folder.  Returns a malloc'ed path, or NULL after printing
 * where to put a model. */
char *cli_resolve_model(const char *m_opt);
/* The file a model argument means: a file that exists, or a path (it
 * starts with '/', '.' or '~': loading says what is wrong with it), else a
 * name in the model stores (confab/store.h).  Returns a malloc'ed path, or
 * NULL after one error line (an unknown name lists the names close to it,
 * an ambiguous one those it could mean). */
char *cli_model_path(const char *arg);

/* The file a name of the model stores means, or NULL (nothing said). */
char *cli_store_path(const char *name);

#endif
