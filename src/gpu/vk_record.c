/* Recording a pass: one command buffer from cf_gpu_begin to
 * cf_gpu_submit, a barrier between commands (each op may read what the
 * one before wrote), descriptor sets from pools reset every pass, and
 * each shader's pipeline made the first time it is used. */
#include <stdarg.h>
#include <stdlib.h>

#include "vk_internal.h"
#include "vk_shaders.h"

bool cf_vk_fail(cf_gpu *g, const char *fmt, ...)
{
    if (g->failed)
        return false;
    va_list ap;
    va_start(ap, fmt);
    char msg[CF_ERR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cf_fail(&g->err, "GPU %s: %s", g->info.name, msg);
    g->failed = true;
    return false;
}

bool cf_vk_can_record(cf_gpu *g, const char *op)
{
    if (!g->recording && !g->failed)
        return cf_vk_fail(g, "%s recorded outside cf_gpu_begin / cf_gpu_submit", op);
    return !g->failed;
}

bool cf_vk_range_ok(cf_gpu *g, cf_gpu_view v, uint64_t bytes, const char *what)
{
    if (!v.buf)
        return cf_vk_fail(g, "%s has no buffer", what);
    if (v.off > v.buf->bytes || bytes > v.buf->bytes - v.off)
        return cf_vk_fail(g, "%s needs %llu bytes at offset %zu of a %zu-byte buffer", what,
                          (unsigned long long)bytes, v.off, v.buf->bytes);
    if (v.off + bytes > UINT32_MAX)
        return cf_vk_fail(g, "%s ends past 4 GiB of its buffer", what);
    return true;
}

bool cf_vk_view_ok(cf_gpu *g, cf_gpu_view v, uint64_t bytes, const char *what)
{
    if (v.buf && v.off % 4)
        return cf_vk_fail(g, "%s is at offset %zu, not a multiple of 4", what, v.off);
    return cf_vk_range_ok(g, v, bytes, what);
}

VkResult cf_vk_run(cf_gpu *g, VkCommandBuffer cb)
{
    const cf_vk_fns *vk = g->vk;
    const VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VkResult r = vk->vkQueueSubmit(g->queue, 1, &si, g->fence);
    if (r == VK_SUCCESS) {
        r = vk->vkWaitForFences(g->dev, 1, &g->fence, VK_TRUE, UINT64_MAX);
        vk->vkResetFences(g->dev, 1, &g->fence);
    }
    return r;
}

void cf_gpu_begin(cf_gpu *g)
{
    const cf_vk_fns *vk = g->vk;
    g->failed = false;
    g->recorded = false;
    g->recording = true;
    for (int i = 0; i < g->n_pools; i++)
        vk->vkResetDescriptorPool(g->dev, g->pools[i], 0);
    g->pool = 0;
    g->pool_sets = 0;
    cf_vk_pass_copies_reset(g);
    cf_vk_scratch_release(g, false);
    const VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                         .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vk->vkResetCommandBuffer(g->cmd, 0);
    if (r == VK_SUCCESS)
        r = vk->vkBeginCommandBuffer(g->cmd, &bi);
    if (r != VK_SUCCESS) {
        cf_vk_fail(g, "cannot begin a command buffer (%s)", cf_vk_result(r));
        g->recording = false;
    }
}

int cf_gpu_submit(cf_gpu *g, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    if (!g->recording && !g->failed)
        cf_vk_fail(g, "cf_gpu_submit without cf_gpu_begin");
    if (g->recording) {
        g->recording = false;
        if (g->n_downs) {
            /* the downloads' bytes, made visible to the host */
            const VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            vk->vkCmdPipelineBarrier(g->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                                     NULL, 0, NULL);
        }
        VkResult r = vk->vkEndCommandBuffer(g->cmd);
        if (r != VK_SUCCESS)
            cf_vk_fail(g, "cannot end the command buffer (%s)", cf_vk_result(r));
        if (!g->failed) {
            r = cf_vk_run(g, g->cmd);
            if (r != VK_SUCCESS)
                cf_vk_fail(g, "the pass failed (%s)", cf_vk_result(r));
            else
                cf_vk_pass_copies_finish(g);
        }
        cf_vk_scratch_release(g, false);
    }
    if (g->failed) {
        g->failed = false;
        if (err)
            *err = g->err;
        return -1;
    }
    return 0;
}

void cf_vk_barrier(cf_gpu *g)
{
    if (!g->recorded) {
        g->recorded = true;
        return;
    }
    const VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    const VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    g->vk->vkCmdPipelineBarrier(g->cmd, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
}

static int by_name(const void *key, const void *s)
{
    return strcmp(key, ((const cf_vk_shader *)s)->name);
}

static VkPipeline pipeline(cf_gpu *g, const char *name)
{
    const cf_vk_shader *s = bsearch(name, cf_vk_shaders, (size_t)cf_vk_n_shaders, sizeof *s, by_name);
    if (!s) {
        cf_vk_fail(g, "no shader %s in this build", name);
        return VK_NULL_HANDLE;
    }
    VkPipeline *p = &g->pipes[s - cf_vk_shaders];
    if (*p)
        return *p;
    const cf_vk_fns *vk = g->vk;
    const VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                          .codeSize = s->bytes,
                                          .pCode = s->code};
    VkShaderModule mod;
    VkResult r = vk->vkCreateShaderModule(g->dev, &mci, NULL, &mod);
    if (r == VK_SUCCESS) {
        const VkComputePipelineCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = mod,
                      .pName = "main"},
            .layout = g->layout,
        };
        r = vk->vkCreateComputePipelines(g->dev, VK_NULL_HANDLE, 1, &ci, NULL, p);
        vk->vkDestroyShaderModule(g->dev, mod, NULL);
    }
    if (r != VK_SUCCESS) {
        *p = VK_NULL_HANDLE;
        cf_vk_fail(g, "cannot make the %s pipeline (%s)", name, cf_vk_result(r));
    }
    return *p;
}

/* A descriptor set from the pass's pools, adding a pool when they are
 * full. */
static VkDescriptorSet descriptor_set(cf_gpu *g)
{
    const cf_vk_fns *vk = g->vk;
    if (g->pool == g->n_pools || g->pool_sets == CF_VK_POOL_SETS) {
        if (g->pool_sets == CF_VK_POOL_SETS) {
            g->pool++;
            g->pool_sets = 0;
        }
        if (g->pool == g->n_pools) {
            VkDescriptorPool *pools = realloc(g->pools, (size_t)(g->n_pools + 1) * sizeof *pools);
            if (!pools) {
                cf_vk_fail(g, "out of memory");
                return VK_NULL_HANDLE;
            }
            g->pools = pools;
            const VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .descriptorCount = CF_VK_POOL_SETS * CF_VK_BINDINGS};
            const VkDescriptorPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                                    .maxSets = CF_VK_POOL_SETS,
                                                    .poolSizeCount = 1,
                                                    .pPoolSizes = &ps};
            VkResult r = vk->vkCreateDescriptorPool(g->dev, &pci, NULL, &g->pools[g->n_pools]);
            if (r != VK_SUCCESS) {
                cf_vk_fail(g, "cannot make a descriptor pool (%s)", cf_vk_result(r));
                return VK_NULL_HANDLE;
            }
            g->n_pools++;
        }
    }
    const VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                            .descriptorPool = g->pools[g->pool],
                                            .descriptorSetCount = 1,
                                            .pSetLayouts = &g->dsl};
    VkDescriptorSet set;
    VkResult r = vk->vkAllocateDescriptorSets(g->dev, &ai, &set);
    if (r != VK_SUCCESS) {
        cf_vk_fail(g, "cannot allocate a descriptor set (%s)", cf_vk_result(r));
        return VK_NULL_HANDLE;
    }
    g->pool_sets++;
    return set;
}

#define MAX_GROUPS 65535u

void cf_vk_dispatch(cf_gpu *g, const char *name, cf_gpu_buf *const b[CF_VK_BINDINGS], const void *push,
                    size_t push_bytes, uint64_t groups)
{
    if (groups == 0 || g->failed)
        return;
    if (groups > (uint64_t)MAX_GROUPS * MAX_GROUPS) {
        cf_vk_fail(g, "%s over %llu workgroups: too many", name, (unsigned long long)groups);
        return;
    }
    const cf_vk_fns *vk = g->vk;
    VkPipeline p = pipeline(g, name);
    VkDescriptorSet set = p ? descriptor_set(g) : VK_NULL_HANDLE;
    if (!set)
        return;
    VkDescriptorBufferInfo bi[CF_VK_BINDINGS];
    VkWriteDescriptorSet w[CF_VK_BINDINGS];
    for (int i = 0; i < CF_VK_BINDINGS; i++) {
        bi[i] = (VkDescriptorBufferInfo){.buffer = (b[i] ? b[i] : g->dummy)->buf, .range = VK_WHOLE_SIZE};
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = set,
                                      .dstBinding = (uint32_t)i,
                                      .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &bi[i]};
    }
    vk->vkUpdateDescriptorSets(g->dev, CF_VK_BINDINGS, w, 0, NULL);
    cf_vk_barrier(g);
    vk->vkCmdBindPipeline(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    vk->vkCmdBindDescriptorSets(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->layout, 0, 1, &set, 0, NULL);
    vk->vkCmdPushConstants(g->cmd, g->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes, push);
    const uint32_t x = groups < MAX_GROUPS ? (uint32_t)groups : MAX_GROUPS;
    vk->vkCmdDispatch(g->cmd, x, (uint32_t)((groups + x - 1) / x), 1);
}

void cf_gpu_copy(cf_gpu *g, cf_gpu_view dst, cf_gpu_view src, size_t bytes)
{
    if (!cf_vk_can_record(g, "copy") || !cf_vk_view_ok(g, dst, bytes, "copy's destination") ||
        !cf_vk_view_ok(g, src, bytes, "copy's source"))
        return;
    cf_vk_barrier(g);
    const VkBufferCopy c = {.srcOffset = src.off, .dstOffset = dst.off, .size = bytes};
    if (bytes)
        g->vk->vkCmdCopyBuffer(g->cmd, src.buf->buf, dst.buf->buf, 1, &c);
}
