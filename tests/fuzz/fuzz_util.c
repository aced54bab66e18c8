#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confab/model.h"
#include "confab/tokenizer.h"
#include "fuzz_util.h"

void fuzz_require(bool ok, const char *fmt, ...)
{
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: broken promise: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void fuzz_require_message(const cf_err *err)
{
    fuzz_require(err->msg[0] != 0, "a failure without a message");
    fuzz_require(!strchr(err->msg, '\n'), "a message of several lines: %s", err->msg);
}

size_t fuzz_piece(unsigned *seed, size_t left)
{
    if (!*seed)
        return left;
    *seed = *seed * 1103515245u + 12345u;
    size_t piece = 1 + *seed % 9u;
    return piece < left ? piece : left;
}

const char *fuzz_file(int slot, const uint8_t *p, size_t n)
{
    static int fds[4] = {-1, -1, -1, -1};
    static char paths[4][64];
    if (fds[slot] < 0) {
        fds[slot] = memfd_create("confab-fuzz", MFD_CLOEXEC);
        fuzz_require(fds[slot] >= 0, "memfd_create: %s", strerror(errno));
        snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
    }
    fuzz_require(ftruncate(fds[slot], 0) == 0 && (n == 0 || pwrite(fds[slot], p, n, 0) == (ssize_t)n),
                 "writing an in-memory file: %s", strerror(errno));
    return paths[slot];
}

const char *fuzz_shared(const char *rel)
{
    static char bufs[8][4096];
    static int next;
    const char *dir = getenv("CONFAB_SHARED");
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", dir && *dir ? dir : "../shared", rel);
    if (access(b, R_OK) != 0) {
        fprintf(stderr, "%s: not there (CONFAB_SHARED): skipped\n", b);
        exit(77);
    }
    return b;
}

static char dir_path[256];

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir_path);
}

const char *fuzz_dir(void)
{
    if (!dir_path[0]) {
        struct stat st;
        const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(dir_path, sizeof dir_path, "%s/confab-fuzz.XXXXXX", base);
        fuzz_require(mkdtemp(dir_path) != NULL, "mkdtemp: %s", strerror(errno));
        atexit(remove_dir);
    }
    return dir_path;
}

static void use_tokenizer(const cf_gguf *g)
{
    static const char *const texts[] = {"Hello world", " <s>a</s>\n\n 12345 \xe2\x96\x81x",
                                        "\xff\xfe bad utf-8 \xc3"};
    cf_tokenizer *t;
    cf_err err = {0};
    if (cf_tokenizer_create(g, &t, &err) != 0) {
        fuzz_require_message(&err);
        return;
    }
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cf_tokens ids = {0};
        if (cf_tokenize(t, texts[i], strlen(texts[i]), true, i == 1, &ids, &err) != 0)
            fuzz_require_message(&err);
        char buf[256];
        size_t n = cf_detokenize(t, ids.ids, ids.n, false, true, buf, sizeof buf);
        (void)n;
        cf_tokens_free(&ids);
    }
    cf_tokenizer_free(t);
}

void fuzz_use_model(cf_gguf *g)
{
    use_tokenizer(g);
    cf_model *m;
    cf_err err = {0};
    if (cf_model_from_gguf(g, &m, &err) != 0) {
        fuzz_require_message(&err);
        return;
    }
    cf_ctx *c;
    cf_ctx_params p = {.n_ctx = 8, .n_threads = 1};
    if (cf_ctx_new(m, &p, &c, &err) != 0) {
        fuzz_require_message(&err);
        cf_model_free(m);
        return;
    }
    int n_vocab = cf_model_hparams(m)->n_vocab;
    float *logits = malloc(2 * (size_t)n_vocab * sizeof *logits);
    int32_t ids[3] = {0, n_vocab - 1, n_vocab / 2};
    fuzz_require(logits != NULL, "out of memory for %d logits", n_vocab);
    if (cf_ctx_decode(c, ids, 2, logits, true, &err) != 0) {
        fuzz_require_message(&err);
        fuzz_require(cf_ctx_n_past(c) == 0, "a failed decode changed the cache");
    } else if (cf_ctx_kv_truncate(c, 1, &err) != 0 || cf_ctx_decode(c, ids + 1, 2, logits, false, &err) != 0 ||
               cf_ctx_kv_discard(c, 0, 1, &err) != 0 || cf_ctx_decode(c, ids, 1, logits, false, &err) != 0) {
        fuzz_require_message(&err);
    }
    free(logits);
    cf_ctx_free(c);
    cf_model_free(m);
}
