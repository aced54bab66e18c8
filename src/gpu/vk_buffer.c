/* Device memory: one allocation a buffer, and the copies to and from the
 * host through a mapped staging buffer, a chunk a submission. */
#include <stdlib.h>

#include "vk_internal.h"

cf_gpu_buf *cf_vk_buffer(cf_gpu *g, size_t bytes, uint32_t mem_type, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    cf_gpu_buf *b = calloc(1, sizeof *b);
    if (!b) {
        cf_fail(err, "out of memory");
        return NULL;
    }
    b->bytes = bytes;
    const VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                    .size = (bytes + 3) & ~(size_t)3,
                                    .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                    .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vk->vkCreateBuffer(g->dev, &bci, NULL, &b->buf);
    if (r != VK_SUCCESS)
        goto fail;
    VkMemoryRequirements req;
    vk->vkGetBufferMemoryRequirements(g->dev, b->buf, &req);
    if (!(req.memoryTypeBits & (1u << mem_type))) {
        cf_vk_buffer_free(g, b);
        cf_fail(err, "GPU %s: no memory of the kind a buffer needs", g->info.name);
        return NULL;
    }
    const VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                      .allocationSize = req.size,
                                      .memoryTypeIndex = mem_type};
    r = vk->vkAllocateMemory(g->dev, &mai, NULL, &b->mem);
    if (r != VK_SUCCESS)
        goto fail;
    r = vk->vkBindBufferMemory(g->dev, b->buf, b->mem, 0);
    if (r != VK_SUCCESS)
        goto fail;
    return b;
fail:
    cf_vk_buffer_free(g, b);
    cf_fail(err, "GPU %s: cannot allocate %zu bytes (%s)", g->info.name, bytes, cf_vk_result(r));
    return NULL;
}

void cf_vk_buffer_free(cf_gpu *g, cf_gpu_buf *b)
{
    if (!b)
        return;
    if (b->buf)
        g->vk->vkDestroyBuffer(g->dev, b->buf, NULL);
    if (b->mem)
        g->vk->vkFreeMemory(g->dev, b->mem, NULL);
    free(b);
}

cf_gpu_buf *cf_gpu_alloc(cf_gpu *g, size_t bytes, cf_err *err)
{
    if (bytes == 0 || bytes > g->max_buffer) {
        cf_fail(err, "GPU %s: a buffer of %zu bytes: one buffer takes 1 to %llu", g->info.name, bytes,
                (unsigned long long)g->max_buffer);
        return NULL;
    }
    return cf_vk_buffer(g, bytes, g->mem_local, err);
}

void cf_gpu_free(cf_gpu *g, cf_gpu_buf *b)
{
    cf_vk_buffer_free(g, b);
}

size_t cf_gpu_buf_bytes(const cf_gpu_buf *b)
{
    return b->bytes;
}

/* Copy n bytes between the staging buffer and the view, then wait. */
static int copy_staged(cf_gpu *g, cf_gpu_view v, size_t n, bool to_device, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    const VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                         .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vk->vkBeginCommandBuffer(g->xfer, &bi);
    if (r == VK_SUCCESS) {
        const VkBufferCopy c = {.srcOffset = to_device ? 0 : v.off, .dstOffset = to_device ? v.off : 0, .size = n};
        vk->vkCmdCopyBuffer(g->xfer, to_device ? g->staging->buf : v.buf->buf,
                            to_device ? v.buf->buf : g->staging->buf, 1, &c);
        r = vk->vkEndCommandBuffer(g->xfer);
    }
    if (r == VK_SUCCESS)
        r = cf_vk_run(g, g->xfer);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU %s: a copy %s the device failed (%s)", g->info.name, to_device ? "to" : "from",
                       cf_vk_result(r));
    return 0;
}

static int check_copy(cf_gpu *g, cf_gpu_view v, size_t n, cf_err *err)
{
    if (!v.buf || v.off > v.buf->bytes || n > v.buf->bytes - v.off)
        return cf_fail(err, "GPU: a copy of %zu bytes at offset %zu runs past its buffer", n, v.off);
    if (g->recording)
        return cf_fail(err, "GPU: a copy between host and device while a pass is being recorded");
    return 0;
}

int cf_gpu_write(cf_gpu *g, cf_gpu_view dst, const void *src, size_t n, cf_err *err)
{
    if (check_copy(g, dst, n, err))
        return -1;
    for (size_t done = 0; done < n;) {
        const size_t chunk = n - done < g->staging->bytes ? n - done : g->staging->bytes;
        memcpy(g->staging_map, (const char *)src + done, chunk);
        if (copy_staged(g, (cf_gpu_view){dst.buf, dst.off + done}, chunk, true, err))
            return -1;
        done += chunk;
    }
    return 0;
}

int cf_gpu_read(cf_gpu *g, cf_gpu_view src, void *dst, size_t n, cf_err *err)
{
    if (check_copy(g, src, n, err))
        return -1;
    for (size_t done = 0; done < n;) {
        const size_t chunk = n - done < g->staging->bytes ? n - done : g->staging->bytes;
        if (copy_staged(g, (cf_gpu_view){src.buf, src.off + done}, chunk, false, err))
            return -1;
        memcpy((char *)dst + done, g->staging_map, chunk);
        done += chunk;
    }
    return 0;
}
