/* What a pass keeps besides its commands: the copies between host and
 * device recorded into it (cf_gpu_upload, cf_gpu_download), through
 * chunks of host-visible memory, a new chunk when the pass's copies fill
 * the ones it has, all kept for the next passes; and the ops' device
 * scratch. */
#include <stdlib.h>

#include "vk_internal.h"

#define CHUNK_BYTES (4u << 20)

void cf_vk_pass_copies_reset(cf_gpu *g)
{
    for (int i = 0; i < g->n_chunks; i++)
        g->chunks[i].used = 0;
    g->chunk = 0;
    g->n_downs = 0;
}

void cf_vk_pass_copies_finish(cf_gpu *g)
{
    for (int i = 0; i < g->n_downs; i++)
        memcpy(g->downs[i].to, g->downs[i].from, g->downs[i].n);
    g->n_downs = 0;
}

void cf_vk_pass_copies_free(cf_gpu *g)
{
    for (int i = 0; i < g->n_chunks; i++)
        cf_vk_buffer_free(g, g->chunks[i].buf);
    free(g->chunks);
    free(g->downs);
    g->chunks = NULL;
    g->downs = NULL;
    g->n_chunks = g->cap_downs = 0;
}

/* n bytes of staging for this pass: its chunk and offset. */
static cf_vk_chunk *stage(cf_gpu *g, size_t n, size_t *off)
{
    for (; g->chunk < g->n_chunks; g->chunk++) {
        cf_vk_chunk *c = &g->chunks[g->chunk];
        const size_t at = (c->used + 15) & ~(size_t)15;
        if (at <= c->buf->bytes && n <= c->buf->bytes - at) {
            c->used = at + n;
            *off = at;
            return c;
        }
    }
    cf_vk_chunk *chunks = realloc(g->chunks, (size_t)(g->n_chunks + 1) * sizeof *chunks);
    if (!chunks) {
        cf_vk_fail(g, "out of memory");
        return NULL;
    }
    g->chunks = chunks;
    cf_vk_chunk *c = &chunks[g->n_chunks];
    cf_err err = {0};
    c->buf = cf_vk_buffer(g, n > CHUNK_BYTES ? n : CHUNK_BYTES, g->mem_host, &err);
    if (!c->buf) {
        cf_vk_fail(g, "staging for the pass's copies: %s", err.msg);
        return NULL;
    }
    void *map;
    VkResult r = g->vk->vkMapMemory(g->dev, c->buf->mem, 0, VK_WHOLE_SIZE, 0, &map);
    if (r != VK_SUCCESS) {
        cf_vk_buffer_free(g, c->buf);
        cf_vk_fail(g, "cannot map staging for the pass's copies (%s)", cf_vk_result(r));
        return NULL;
    }
    c->map = map;
    c->used = n;
    g->chunk = g->n_chunks++;
    *off = 0;
    return c;
}

static bool copy_ok(cf_gpu *g, cf_gpu_view v, size_t n, const char *what)
{
    if (!cf_vk_can_record(g, what))
        return false;
    if (!v.buf || v.off > v.buf->bytes || n > v.buf->bytes - v.off)
        return cf_vk_fail(g, "%s of %zu bytes at offset %zu runs past its buffer", what, n, v.off);
    return n > 0;
}

void cf_gpu_upload(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n)
{
    size_t off;
    cf_vk_chunk *c = copy_ok(g, dst, n, "upload") ? stage(g, n, &off) : NULL;
    if (!c)
        return;
    memcpy(c->map + off, src, n);
    cf_vk_barrier(g);
    const VkBufferCopy bc = {.srcOffset = off, .dstOffset = dst.off, .size = n};
    g->vk->vkCmdCopyBuffer(g->cmd, c->buf->buf, dst.buf->buf, 1, &bc);
}

void cf_gpu_download(cf_gpu *g, cf_gpu_view src, void *dst, size_t n)
{
    size_t off;
    cf_vk_chunk *c = copy_ok(g, src, n, "download") ? stage(g, n, &off) : NULL;
    if (!c)
        return;
    if (g->n_downs == g->cap_downs) {
        const int cap = g->cap_downs ? 2 * g->cap_downs : 16;
        cf_vk_down *d = realloc(g->downs, (size_t)cap * sizeof *d);
        if (!d)
            return (void)cf_vk_fail(g, "out of memory");
        g->downs = d;
        g->cap_downs = cap;
    }
    g->downs[g->n_downs++] = (cf_vk_down){c->map + off, dst, n};
    cf_vk_barrier(g);
    const VkBufferCopy bc = {.srcOffset = src.off, .dstOffset = off, .size = n};
    g->vk->vkCmdCopyBuffer(g->cmd, src.buf->buf, c->buf->buf, 1, &bc);
}

cf_gpu_buf *cf_vk_scratch(cf_gpu *g, size_t bytes)
{
    if (g->scratch && g->scratch->bytes >= bytes)
        return g->scratch;
    if (g->scratch) {
        cf_gpu_buf **r = realloc(g->retired, (size_t)(g->n_retired + 1) * sizeof *r);
        if (!r) {
            cf_vk_fail(g, "out of memory");
            return NULL;
        }
        g->retired = r;
        g->retired[g->n_retired++] = g->scratch;
        g->scratch = NULL;
    }
    cf_err err = {0};
    /* grown by half again, so that a longer context does not grow it each token */
    const size_t want = bytes + bytes / 2 < g->max_buffer ? bytes + bytes / 2 : bytes;
    if (!(g->scratch = cf_vk_buffer(g, want, g->mem_local, &err)))
        cf_vk_fail(g, "scratch for the pass: %s", err.msg);
    return g->scratch;
}

void cf_vk_scratch_release(cf_gpu *g, bool all)
{
    for (int i = 0; i < g->n_retired; i++)
        cf_vk_buffer_free(g, g->retired[i]);
    g->n_retired = 0;
    if (all) {
        cf_vk_buffer_free(g, g->scratch);
        g->scratch = NULL;
        free(g->retired);
        g->retired = NULL;
    }
}
