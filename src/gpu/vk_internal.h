/* The Vulkan backend's shared state: the loader's functions (the loader is
 * opened at run time, so that a machine without one still runs confab on
 * the CPU), a device, its buffers, and the recorder of a pass. */
#ifndef CONFAB_VK_INTERNAL_H
#define CONFAB_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "confab/gpu.h"

#define CF_VK_FNS(X)                                                                                          \
    X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                      \
    X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceMemoryProperties)                                  \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)     \
    X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)                                \
    X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) \
    X(vkUnmapMemory) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)              \
    X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkCmdCopyBuffer)                  \
    X(vkCmdPipelineBarrier) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants)            \
    X(vkCmdDispatch) X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences) \
    X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateComputePipelines) X(vkDestroyPipeline)         \
    X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateDescriptorSetLayout)                      \
    X(vkDestroyDescriptorSetLayout) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)                      \
    X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkDeviceWaitIdle)

typedef struct cf_vk_fns {
#define CF_VK_FIELD(f) PFN_##f f;
    CF_VK_FNS(CF_VK_FIELD)
#undef CF_VK_FIELD
} cf_vk_fns;

/* The process's one instance and the functions through it (vk_loader.c);
 * NULL with err saying why when there is no loader or it has no Vulkan
 * 1.1.  Opened once and kept. */
const cf_vk_fns *cf_vk_load(VkInstance *inst, cf_err *err);
/* The physical devices in --device order (discrete first, CPUs last). */
int cf_vk_devices(VkPhysicalDevice *out, int max, cf_err *err);
void cf_vk_describe(VkPhysicalDevice pd, cf_gpu_info *out);
const char *cf_vk_result(VkResult r);

struct cf_gpu_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    size_t bytes;
};

/* Storage buffers every dispatch binds (unused ones: the dummy): within
 * maxPerStageDescriptorStorageBuffers of every desktop GPU. */
#define CF_VK_BINDINGS 10
#define CF_VK_PUSH_BYTES 128
#define CF_VK_POOL_SETS 512

/* Host-visible memory a pass's recorded copies go through. */
typedef struct cf_vk_chunk {
    cf_gpu_buf *buf;
    uint8_t *map;
    size_t used;
} cf_vk_chunk;

/* A recorded download: where its bytes wait, where they go at submit. */
typedef struct cf_vk_down {
    const uint8_t *from;
    void *to;
    size_t n;
} cf_vk_down;

struct cf_gpu {
    const cf_vk_fns *vk;
    cf_gpu_info info;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t mem_local, mem_host; /* memory type indices */
    uint64_t max_buffer;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd, xfer; /* a pass's; the copies' */
    VkFence fence;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline *pipes; /* cf_vk_n_shaders, created at first use */
    VkDescriptorPool *pools;
    int n_pools, pool, pool_sets; /* the pool in use, sets taken from it */
    cf_gpu_buf *dummy;
    cf_gpu_buf *staging;
    void *staging_map;
    cf_vk_chunk *chunks; /* the pass's copies' staging, kept between passes */
    int n_chunks, chunk;
    cf_vk_down *downs;
    int n_downs, cap_downs;
    cf_gpu_buf *scratch;  /* device memory for ops' partial results (attention's chunks) */
    cf_gpu_buf **retired; /* scratch outgrown in this pass: freed once it has run */
    int n_retired;
    bool recording, recorded; /* a pass is open; it holds a command */
    bool failed;              /* the pass is skipped from here: err says why */
    cf_err err;
};

/* Keep the first failure of the pass being recorded; always false, so
 * that an op can `if (!ok) return`. */
bool cf_vk_fail(cf_gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether an op may record: a pass is open and nothing failed in it. */
bool cf_vk_can_record(cf_gpu *g, const char *op);
/* Whether view v reaches bytes bytes within its buffer, its end within
 * the shaders' 32-bit offsets, and (view_ok) its offset a multiple of 4;
 * what names it in the error.  Weights take any byte offset (the shaders
 * read them a byte at a time). */
bool cf_vk_range_ok(cf_gpu *g, cf_gpu_view v, uint64_t bytes, const char *what);
bool cf_vk_view_ok(cf_gpu *g, cf_gpu_view v, uint64_t bytes, const char *what);
/* Record shader `name` over groups workgroups with buffers b (NULL: none)
 * and push constants push. */
void cf_vk_dispatch(cf_gpu *g, const char *name, cf_gpu_buf *const b[CF_VK_BINDINGS], const void *push,
                    size_t push_bytes, uint64_t groups);
/* Submit a recorded command buffer and wait for it. */
VkResult cf_vk_run(cf_gpu *g, VkCommandBuffer cb);
/* A barrier after the last command, when there is one. */
void cf_vk_barrier(cf_gpu *g);

/* The pass's recorded copies (vk_pass_copy.c): forgotten at begin; the
 * downloads' bytes delivered after the wait, freed at close. */
void cf_vk_pass_copies_reset(cf_gpu *g);
void cf_vk_pass_copies_finish(cf_gpu *g);
void cf_vk_pass_copies_free(cf_gpu *g);

/* At least bytes of device scratch for an op being recorded (NULL after
 * a failure, kept in the pass); the last scratch it replaces lives until
 * the pass has run.  Freed at close. */
cf_gpu_buf *cf_vk_scratch(cf_gpu *g, size_t bytes);
void cf_vk_scratch_release(cf_gpu *g, bool all);

/* buffers (vk_buffer.c) */
cf_gpu_buf *cf_vk_buffer(cf_gpu *g, size_t bytes, uint32_t mem_type, cf_err *err);
void cf_vk_buffer_free(cf_gpu *g, cf_gpu_buf *b);

#endif
