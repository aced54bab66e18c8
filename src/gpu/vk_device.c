/* Devices: listing them, opening one (its compute queue, command buffers,
 * the layout every shader shares), closing it. */
#include <stdlib.h>

#include "vk_internal.h"
#include "vk_shaders.h"

#define MAX_DEVICES 16
#define STAGING_BYTES (8u << 20)

bool cf_gpu_built(void)
{
    return true;
}

int cf_gpu_count(cf_err *err)
{
    VkPhysicalDevice pd[MAX_DEVICES];
    return cf_vk_devices(pd, MAX_DEVICES, err);
}

int cf_gpu_info_get(int i, cf_gpu_info *out, cf_err *err)
{
    VkPhysicalDevice pd[MAX_DEVICES];
    const int n = cf_vk_devices(pd, MAX_DEVICES, err);
    if (i < 0 || i >= n)
        return n ? cf_fail_as(err, CF_E_USAGE, "no GPU device %d: there are %d (0 to %d)", i, n, n - 1) : -1;
    cf_vk_describe(pd[i], out);
    return 0;
}

static int queue_family(const cf_vk_fns *vk, VkPhysicalDevice pd)
{
    uint32_t n = 0;
    VkQueueFamilyProperties q[16];
    vk->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    n = n < 16 ? n : 16;
    vk->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* a compute queue without graphics first: it shares less */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n; i++)
            if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && (pass || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
                return (int)i;
    return -1;
}

/* The memory type with all of `want` on the largest heap, one without
 * `avoid` first (-1: none): device-local memory that is not also the
 * small host-visible window some GPUs have. */
static int memory_type(const cf_vk_fns *vk, VkPhysicalDevice pd, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid)
{
    VkPhysicalDeviceMemoryProperties mem;
    vk->vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    int best = -1;
    for (int pass = 0; pass < 2 && best < 0; pass++)
        for (uint32_t i = 0; i < mem.memoryTypeCount; i++) {
            const VkMemoryType *t = &mem.memoryTypes[i];
            if ((t->propertyFlags & want) != want || (!pass && (t->propertyFlags & avoid)))
                continue;
            if (best < 0 || mem.memoryHeaps[t->heapIndex].size > mem.memoryHeaps[mem.memoryTypes[best].heapIndex].size)
                best = (int)i;
        }
    return best;
}

static uint64_t max_buffer(const cf_vk_fns *vk, VkPhysicalDevice pd)
{
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
    vk->vkGetPhysicalDeviceProperties2(pd, &p);
    const uint64_t range = p.properties.limits.maxStorageBufferRange;
    return range < m3.maxMemoryAllocationSize ? range : m3.maxMemoryAllocationSize;
}

static int make_layouts(cf_gpu *g, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    VkDescriptorSetLayoutBinding b[CF_VK_BINDINGS];
    for (int i = 0; i < CF_VK_BINDINGS; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    const VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                 .bindingCount = CF_VK_BINDINGS,
                                                 .pBindings = b};
    VkResult r = vk->vkCreateDescriptorSetLayout(g->dev, &dci, NULL, &g->dsl);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU: cannot make a descriptor set layout (%s)", cf_vk_result(r));
    const VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = CF_VK_PUSH_BYTES};
    const VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1,
                                            .pSetLayouts = &g->dsl,
                                            .pushConstantRangeCount = 1,
                                            .pPushConstantRanges = &pc};
    r = vk->vkCreatePipelineLayout(g->dev, &lci, NULL, &g->layout);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU: cannot make a pipeline layout (%s)", cf_vk_result(r));
    return 0;
}

static int make_commands(cf_gpu *g, uint32_t qf, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    const VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                         .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                         .queueFamilyIndex = qf};
    VkResult r = vk->vkCreateCommandPool(g->dev, &pci, NULL, &g->cmd_pool);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU: cannot make a command pool (%s)", cf_vk_result(r));
    VkCommandBuffer cb[2];
    const VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = g->cmd_pool,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 2};
    r = vk->vkAllocateCommandBuffers(g->dev, &ai, cb);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU: cannot allocate command buffers (%s)", cf_vk_result(r));
    g->cmd = cb[0];
    g->xfer = cb[1];
    const VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vk->vkCreateFence(g->dev, &fci, NULL, &g->fence);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU: cannot make a fence (%s)", cf_vk_result(r));
    return 0;
}

static int make_device(cf_gpu *g, VkPhysicalDevice pd, cf_err *err)
{
    const cf_vk_fns *vk = g->vk;
    const int qf = queue_family(vk, pd);
    const int local = memory_type(vk, pd, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    /* staging in system memory: the host reads it back, and a device-local
     * window is slow to read */
    const int host = memory_type(vk, pd, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (qf < 0 || local < 0 || host < 0)
        return cf_fail(err, "GPU %s: no compute queue or no device-local and host-visible memory", g->info.name);
    const float prio = 1.0f;
    const VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                         .queueFamilyIndex = (uint32_t)qf,
                                         .queueCount = 1,
                                         .pQueuePriorities = &prio};
    const VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                    .queueCreateInfoCount = 1,
                                    .pQueueCreateInfos = &qci};
    VkResult r = vk->vkCreateDevice(pd, &dci, NULL, &g->dev);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU %s: cannot open the device (%s)", g->info.name, cf_vk_result(r));
    vk->vkGetDeviceQueue(g->dev, (uint32_t)qf, 0, &g->queue);
    g->phys = pd;
    g->mem_local = (uint32_t)local;
    g->mem_host = (uint32_t)host;
    g->max_buffer = max_buffer(vk, pd);
    if (make_commands(g, (uint32_t)qf, err) || make_layouts(g, err))
        return -1;
    g->pipes = calloc((size_t)cf_vk_n_shaders, sizeof *g->pipes);
    if (!g->pipes)
        return cf_fail(err, "out of memory");
    if (!(g->dummy = cf_vk_buffer(g, 16, g->mem_local, err)) ||
        !(g->staging = cf_vk_buffer(g, STAGING_BYTES, g->mem_host, err)))
        return -1;
    r = vk->vkMapMemory(g->dev, g->staging->mem, 0, VK_WHOLE_SIZE, 0, &g->staging_map);
    if (r != VK_SUCCESS)
        return cf_fail(err, "GPU %s: cannot map the staging buffer (%s)", g->info.name, cf_vk_result(r));
    return 0;
}

cf_gpu *cf_gpu_open(int device, cf_err *err)
{
    VkPhysicalDevice pd[MAX_DEVICES];
    const int n = cf_vk_devices(pd, MAX_DEVICES, err);
    if (!n)
        return NULL;
    if (device < -1 || device >= n) {
        cf_fail_as(err, CF_E_USAGE, "no GPU device %d: there are %d (0 to %d)", device, n, n - 1);
        return NULL;
    }
    cf_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        cf_fail(err, "out of memory");
        return NULL;
    }
    VkInstance inst;
    g->vk = cf_vk_load(&inst, err);
    cf_vk_describe(pd[device < 0 ? 0 : device], &g->info);
    if (make_device(g, pd[device < 0 ? 0 : device], err)) {
        cf_gpu_close(g);
        return NULL;
    }
    return g;
}

void cf_gpu_close(cf_gpu *g)
{
    if (!g)
        return;
    const cf_vk_fns *vk = g->vk;
    if (g->dev) {
        vk->vkDeviceWaitIdle(g->dev);
        if (g->pipes)
            for (int i = 0; i < cf_vk_n_shaders; i++)
                if (g->pipes[i])
                    vk->vkDestroyPipeline(g->dev, g->pipes[i], NULL);
        for (int i = 0; i < g->n_pools; i++)
            vk->vkDestroyDescriptorPool(g->dev, g->pools[i], NULL);
        cf_vk_pass_copies_free(g);
        cf_vk_scratch_release(g, true);
        cf_vk_buffer_free(g, g->staging);
        cf_vk_buffer_free(g, g->dummy);
        if (g->layout)
            vk->vkDestroyPipelineLayout(g->dev, g->layout, NULL);
        if (g->dsl)
            vk->vkDestroyDescriptorSetLayout(g->dev, g->dsl, NULL);
        if (g->fence)
            vk->vkDestroyFence(g->dev, g->fence, NULL);
        if (g->cmd_pool)
            vk->vkDestroyCommandPool(g->dev, g->cmd_pool, NULL);
        vk->vkDestroyDevice(g->dev, NULL);
    }
    free(g->pipes);
    free(g->pools);
    free(g);
}

const cf_gpu_info *cf_gpu_device(const cf_gpu *g)
{
    return &g->info;
}

uint64_t cf_gpu_max_buffer(const cf_gpu *g)
{
    return g->max_buffer;
}
