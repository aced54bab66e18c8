/* The Vulkan loader, opened at run time: a machine without one (or
 * without a device) runs confab on the CPU after one line, instead of
 * failing to start.  One instance serves the process. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "vk_internal.h"

static cf_vk_fns fns;
static VkInstance instance;
static cf_err load_err;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

const char *cf_vk_result(VkResult r)
{
    switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case VK_ERROR_INITIALIZATION_FAILED: return "initialization failed";
    case VK_ERROR_DEVICE_LOST: return "the device was lost";
    case VK_ERROR_MEMORY_MAP_FAILED: return "memory map failed";
    case VK_ERROR_LAYER_NOT_PRESENT: return "a layer is not present";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "an extension is not present";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "a feature is not present";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "no Vulkan 1.1 driver is installed";
    case VK_ERROR_TOO_MANY_OBJECTS: return "too many objects";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "out of pool memory";
    case VK_TIMEOUT: return "timed out";
    default: return "Vulkan error";
    }
}

static void load(void)
{
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cf_fail(&load_err, "no GPU: no Vulkan loader (libvulkan.so.1) on this system");
        return;
    }
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    PFN_vkCreateInstance create = gipa ? (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance") : NULL;
    if (!create) {
        cf_fail(&load_err, "no GPU: the Vulkan loader lacks vkGetInstanceProcAddr");
        return;
    }
    const VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "confab",
        .pEngineName = "confab",
        .apiVersion = VK_API_VERSION_1_1,
    };
    const VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = create(&ci, NULL, &instance);
    if (r != VK_SUCCESS) {
        cf_fail(&load_err, "no GPU: cannot create a Vulkan instance (%s)", cf_vk_result(r));
        return;
    }
#define CF_VK_LOAD(f)                                                                                         \
    if (!(fns.f = (PFN_##f)gipa(instance, #f))) {                                                             \
        cf_fail(&load_err, "no GPU: the Vulkan loader lacks %s", #f);                                          \
        return;                                                                                               \
    }
    CF_VK_FNS(CF_VK_LOAD)
#undef CF_VK_LOAD
    loaded = true;
}

const cf_vk_fns *cf_vk_load(VkInstance *inst, cf_err *err)
{
    pthread_once(&once, load);
    if (!loaded) {
        if (err)
            *err = load_err;
        return NULL;
    }
    *inst = instance;
    return &fns;
}

/* --device order: discrete GPUs, then integrated, virtual, others, and
 * CPU implementations (lavapipe) last. */
static int rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 4;
    default: return 3;
    }
}

/* Vulkan 1.1 with a compute queue: what the backend needs of a device. */
static bool usable(const cf_vk_fns *vk, VkPhysicalDevice pd)
{
    VkPhysicalDeviceProperties p;
    vk->vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_1)
        return false;
    uint32_t n = 0;
    vk->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[16];
    n = n < 16 ? n : 16;
    vk->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++)
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            return true;
    return false;
}

int cf_vk_devices(VkPhysicalDevice *out, int max, cf_err *err)
{
    VkInstance inst;
    const cf_vk_fns *vk = cf_vk_load(&inst, err);
    if (!vk)
        return 0;
    uint32_t n = 0;
    VkPhysicalDevice all[32];
    if (vk->vkEnumeratePhysicalDevices(inst, &n, NULL) != VK_SUCCESS)
        n = 0;
    n = n < 32 ? n : 32;
    if (n && vk->vkEnumeratePhysicalDevices(inst, &n, all) < 0)
        n = 0;
    int count = 0;
    for (int r = 0; r <= 4; r++)
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vk->vkGetPhysicalDeviceProperties(all[i], &p);
            if (rank(p.deviceType) == r && usable(vk, all[i]) && count < max)
                out[count++] = all[i];
        }
    if (!count)
        cf_fail(err, "no GPU: Vulkan finds no device with Vulkan 1.1 and a compute queue");
    return count;
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

static bool has_extension(const cf_vk_fns *vk, VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vk->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
        return false;
    VkExtensionProperties *e = malloc(n * sizeof *e);
    bool found = false;
    if (e && vk->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) >= 0)
        for (uint32_t i = 0; i < n && !found; i++)
            found = !strcmp(e[i].extensionName, name);
    free(e);
    return found;
}

void cf_vk_describe(VkPhysicalDevice pd, cf_gpu_info *out)
{
    VkInstance inst;
    const cf_vk_fns *vk = cf_vk_load(&inst, NULL);
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
    vk->vkGetPhysicalDeviceProperties2(pd, &p);
    VkPhysicalDeviceMemoryProperties mem;
    vk->vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", p.properties.deviceName);
    snprintf(out->type, sizeof out->type, "%s", type_name(p.properties.deviceType));
    for (uint32_t i = 0; i < mem.memoryHeapCount; i++)
        if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT && mem.memoryHeaps[i].size > out->mem_bytes)
            out->mem_bytes = mem.memoryHeaps[i].size;
    out->subgroup = sub.subgroupSize;
    out->coopmat = has_extension(vk, pd, "VK_KHR_cooperative_matrix");
}
