/* Helpers shared by the session tests: opening a session on a shared
 * model with fixed settings, running an exchange, variants of a model. */
#ifndef CONFAB_TESTS_SESS_UTIL_H
#define CONFAB_TESTS_SESS_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confab/gguf.h"
#include "confab/session.h"
#include "harness.h"

/* A session on path with seed 7 and the given n-predict; NULL on failure. */
static inline cf_session *open_at(const char *path, int n_ctx, const char *system, int n_predict)
{
    cf_session_params p = {.model_path = path, .n_ctx = n_ctx, .n_threads = 1,
                           .system_prompt = system};
    cf_session *s;
    cf_err err;
    char np[16];
    snprintf(np, sizeof np, "%d", n_predict);
    if (cf_session_new(&p, &s, &err) != 0) {
        CHECKF(0, "%s: %s", path, err.msg);
        return NULL;
    }
    CHECK(cf_session_set(s, "seed", "7", &err) == 0 &&
          cf_session_set(s, "n-predict", np, &err) == 0);
    return s;
}

static inline cf_session *open_shared(const char *model_rel, int n_ctx, const char *system,
                                      int n_predict)
{
    return open_at(shared_path(model_rel), n_ctx, system, n_predict);
}

/* One exchange; the streamed text goes to text (cap bytes) when given.
 * Returns the reply's stop reason, or -1 on an error. */
static inline int exchange(cf_session *s, const char *msg, char *text, size_t cap)
{
    cf_err err;
    const char *piece;
    int rc;
    size_t n = 0;
    if (cf_session_begin_reply(s, msg, &err) != 0) {
        CHECKF(0, "begin_reply: %s", err.msg);
        return -1;
    }
    while ((rc = cf_session_next(s, &piece, &err)) == CF_NEXT_TOKEN) {
        size_t k = strlen(piece);
        if (text && n + k < cap) {
            memcpy(text + n, piece, k);
            n += k;
        }
    }
    if (text)
        text[n] = '\0';
    cf_session_end_reply(s, false);
    if (rc < 0) {
        CHECKF(0, "next: %s", err.msg);
        return -1;
    }
    return (int)cf_session_last_stats(s)->stop;
}

/* A copy of the session's token history (free it). */
static inline int32_t *history(const cf_session *s, int *n)
{
    const int32_t *ids = cf_session_tokens(s, n);
    int32_t *copy = malloc(((size_t)*n + 1) * sizeof *copy);
    if (*n) /* an empty history's ids may be NULL */
        memcpy(copy, ids, (size_t)*n * sizeof *copy);
    return copy;
}

/* Write a variant of the GGUF at src to dst: only its first keep_layers
 * blocks (0: all), and the final norm zeroed when flat_logits (every logit
 * is then 0: sampling draws evenly among the lowest ids top-k keeps). */
static inline int write_variant(const char *src, const char *dst, int keep_layers, bool flat_logits)
{
    cf_gguf *g;
    cf_err err;
    if (cf_gguf_open(src, &g, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return -1;
    }
    cf_gguf_writer *w = cf_gguf_writer_new();
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        cf_gguf_w_copy_kv(w, cf_gguf_kv_at(g, i));
    if (keep_layers > 0)
        cf_gguf_w_u32(w, "llama.block_count", (uint32_t)keep_layers);
    float *zeros = calloc(1 << 16, sizeof *zeros);
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        int layer = -1;
        if (sscanf(t->name, "blk.%d.", &layer) == 1 && keep_layers > 0 && layer >= keep_layers)
            continue;
        const void *data =
            flat_logits && strcmp(t->name, "output_norm.weight") == 0 ? zeros : t->data;
        cf_gguf_w_tensor(w, t->name, t->type, t->n_dims, t->ne, data);
    }
    int rc = cf_gguf_writer_write_file(w, dst, NULL, NULL, &err);
    CHECKF(rc == 0, "%s", err.msg);
    cf_gguf_writer_free(w);
    cf_gguf_close(g);
    free(zeros);
    return rc;
}

/* A temporary file name (the file exists, empty). */
static inline void temp_path(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/confab-%s-XXXXXX", tag);
    int fd = mkstemp(buf);
    if (fd >= 0)
        close(fd);
}

#endif
