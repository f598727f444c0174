/* fake_vk_icd.c: a Vulkan driver (ICD) the test suite builds, failing as GC_FAKE_VK says: crash, hang, no device, or computing nothing. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* GC_FAKE_VK picks the behaviour (read at each call, in the driver's child):
 *   crash-init  vkCreateInstance raises SIGSEGV
 *   hang-init   vkCreateInstance never returns
 *   no-device   the instance lists no physical device
 *   init-error  vkCreateInstance fails with VK_ERROR_INITIALIZATION_FAILED
 *   crash-smoke the device of "nothing", whose vkQueueSubmit raises SIGSEGV (the smoke test crashes)
 *   hang-smoke  the device of "nothing", whose vkWaitForFences never returns (the smoke test hangs)
 *   nothing     one discrete GPU that accepts every call and dispatch, and computes nothing (the default)
 *   cpu-nothing as nothing, but a CPU device (its smoke test runs at the CPU size, and must still fail)
 * The loader's interface (Vulkan-Loader docs/LoaderDriverInterface.md): the driver exports
 * vk_icdNegotiateLoaderICDInterfaceVersion and vk_icdGetInstanceProcAddr, and every dispatchable object
 * it makes begins with a pointer-sized slot holding ICD_LOADER_MAGIC, which the loader then overwrites
 * with its dispatch table. The loader (1.3, loader_icd_init_entries) requires the Vulkan 1.0 physical-device
 * queries below, format and sparse ones included, or it drops the driver without a word. */
#define FAKE_VK_LOADER_MAGIC 0x01CDC0DEu

struct fake_dispatchable {
    uintptr_t loader_data; /* must be first */
};

static struct fake_dispatchable fake_instance_obj = {FAKE_VK_LOADER_MAGIC};
static struct fake_dispatchable fake_pd_obj = {FAKE_VK_LOADER_MAGIC};
static struct fake_dispatchable fake_queue_obj = {FAKE_VK_LOADER_MAGIC};

static const char *fake_mode(void)
{
    const char *m = getenv("GC_FAKE_VK");
    return m && *m ? m : "nothing";
}

static bool fake_is(const char *m)
{
    return strcmp(fake_mode(), m) == 0;
}

/* Non-dispatchable handles are 64-bit values: pointers to small heap objects. */
struct fake_mem {
    VkDeviceSize size;
    void *data;
};
struct fake_buf {
    VkDeviceSize size;
};

static VKAPI_ATTR VkResult VKAPI_CALL fake_EnumerateInstanceExtensionProperties(const char *layer, uint32_t *n,
                                                                              VkExtensionProperties *p)
{
    (void)layer;
    (void)p;
    *n = 0;
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *a,
                                                         VkInstance *out)
{
    (void)ci;
    (void)a;
    if (fake_is("crash-init"))
        raise(SIGSEGV);
    if (fake_is("hang-init"))
        for (;;)
            pause();
    if (fake_is("init-error"))
        return VK_ERROR_INITIALIZATION_FAILED;
    fake_instance_obj.loader_data = FAKE_VK_LOADER_MAGIC;
    *out = (VkInstance)&fake_instance_obj;
    return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fake_DestroyInstance(VkInstance i, const VkAllocationCallbacks *a)
{
    (void)i;
    (void)a;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_EnumeratePhysicalDevices(VkInstance i, uint32_t *n, VkPhysicalDevice *out)
{
    (void)i;
    uint32_t have = fake_is("no-device") ? 0 : 1;
    if (!out) {
        *n = have;
        return VK_SUCCESS;
    }
    uint32_t k = *n < have ? *n : have;
    if (k > 0) {
        fake_pd_obj.loader_data = FAKE_VK_LOADER_MAGIC;
        out[0] = (VkPhysicalDevice)&fake_pd_obj;
    }
    *n = k;
    return k < have ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fake_GetPhysicalDeviceProperties(VkPhysicalDevice pd, VkPhysicalDeviceProperties *p)
{
    (void)pd;
    memset(p, 0, sizeof(*p));
    p->apiVersion = VK_MAKE_API_VERSION(0, 1, 0, 0);
    p->driverVersion = VK_MAKE_API_VERSION(0, 1, 2, 3);
    p->vendorID = 0x1234;
    p->deviceID = 0x5678;
    bool cpu = fake_is("cpu-nothing");
    p->deviceType = cpu ? VK_PHYSICAL_DEVICE_TYPE_CPU : VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    strcpy(p->deviceName, cpu ? "gpucheckup fake Vulkan CPU" : "gpucheckup fake Vulkan GPU");
    p->limits.maxComputeWorkGroupCount[0] = p->limits.maxComputeWorkGroupCount[1] = 65535;
    p->limits.maxComputeWorkGroupCount[2] = 65535;
    p->limits.maxComputeWorkGroupInvocations = 1024;
    p->limits.maxComputeWorkGroupSize[0] = p->limits.maxComputeWorkGroupSize[1] = 1024;
    p->limits.maxComputeWorkGroupSize[2] = 64;
}

static VKAPI_ATTR void VKAPI_CALL fake_GetPhysicalDeviceFeatures(VkPhysicalDevice pd, VkPhysicalDeviceFeatures *f)
{
    (void)pd;
    memset(f, 0, sizeof(*f));
}

static VKAPI_ATTR void VKAPI_CALL fake_GetPhysicalDeviceQueueFamilyProperties(VkPhysicalDevice pd, uint32_t *n,
                                                                             VkQueueFamilyProperties *q)
{
    (void)pd;
    if (!q) {
        *n = 1;
        return;
    }
    if (*n >= 1) {
        memset(q, 0, sizeof(*q));
        q->queueFlags = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;
        q->queueCount = 1;
        *n = 1;
    }
}

static VKAPI_ATTR void VKAPI_CALL fake_GetPhysicalDeviceMemoryProperties(VkPhysicalDevice pd,
                                                                        VkPhysicalDeviceMemoryProperties *m)
{
    (void)pd;
    memset(m, 0, sizeof(*m));
    m->memoryTypeCount = 1;
    m->memoryTypes[0].propertyFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    m->memoryTypes[0].heapIndex = 0;
    m->memoryHeapCount = 1;
    m->memoryHeaps[0].size = 1ull << 30;
    m->memoryHeaps[0].flags = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_EnumerateDeviceExtensionProperties(VkPhysicalDevice pd, const char *layer,
                                                                            uint32_t *n, VkExtensionProperties *p)
{
    (void)pd;
    (void)layer;
    (void)p;
    *n = 0;
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
                                                       const VkAllocationCallbacks *a, VkDevice *out)
{
    (void)pd;
    (void)ci;
    (void)a;
    struct fake_dispatchable *d = calloc(1, sizeof(*d));
    if (!d)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    d->loader_data = FAKE_VK_LOADER_MAGIC;
    *out = (VkDevice)d;
    return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fake_GetDeviceQueue(VkDevice d, uint32_t fam, uint32_t idx, VkQueue *q)
{
    (void)d;
    (void)fam;
    (void)idx;
    fake_queue_obj.loader_data = FAKE_VK_LOADER_MAGIC;
    *q = (VkQueue)&fake_queue_obj;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_CreateBuffer(VkDevice d, const VkBufferCreateInfo *ci,
                                                       const VkAllocationCallbacks *a, VkBuffer *out)
{
    (void)d;
    (void)a;
    struct fake_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    b->size = ci->size;
    *out = (VkBuffer)(uintptr_t)b;
    return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fake_GetBufferMemoryRequirements(VkDevice d, VkBuffer b, VkMemoryRequirements *r)
{
    (void)d;
    r->size = ((struct fake_buf *)(uintptr_t)b)->size;
    r->alignment = 64;
    r->memoryTypeBits = 1;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_AllocateMemory(VkDevice d, const VkMemoryAllocateInfo *ai,
                                                         const VkAllocationCallbacks *a, VkDeviceMemory *out)
{
    (void)d;
    (void)a;
    struct fake_mem *m = calloc(1, sizeof(*m));
    if (!m || !(m->data = calloc(1, ai->allocationSize ? ai->allocationSize : 1))) {
        free(m);
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    m->size = ai->allocationSize;
    *out = (VkDeviceMemory)(uintptr_t)m;
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_MapMemory(VkDevice d, VkDeviceMemory mem, VkDeviceSize off, VkDeviceSize size,
                                                    VkMemoryMapFlags f, void **out)
{
    (void)d;
    (void)size;
    (void)f;
    *out = (char *)((struct fake_mem *)(uintptr_t)mem)->data + off;
    return VK_SUCCESS;
}

/* A non-dispatchable handle with nothing behind it. */
static uint64_t fake_handle(void)
{
    static uint64_t next = 0x1000;
    return next += 0x10;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_CreateAny(VkDevice d, const void *ci, const VkAllocationCallbacks *a, uint64_t *out)
{
    (void)d;
    (void)ci;
    (void)a;
    *out = fake_handle();
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_CreateComputePipelines(VkDevice d, VkPipelineCache c, uint32_t n,
                                                                 const VkComputePipelineCreateInfo *ci,
                                                                 const VkAllocationCallbacks *a, VkPipeline *out)
{
    (void)d;
    (void)c;
    (void)ci;
    (void)a;
    for (uint32_t i = 0; i < n; i++)
        out[i] = (VkPipeline)fake_handle();
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_AllocateDescriptorSets(VkDevice d, const VkDescriptorSetAllocateInfo *ai,
                                                                 VkDescriptorSet *out)
{
    (void)d;
    for (uint32_t i = 0; i < ai->descriptorSetCount; i++)
        out[i] = (VkDescriptorSet)fake_handle();
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_AllocateCommandBuffers(VkDevice d, const VkCommandBufferAllocateInfo *ai,
                                                                 VkCommandBuffer *out)
{
    (void)d;
    for (uint32_t i = 0; i < ai->commandBufferCount; i++) {
        struct fake_dispatchable *c = calloc(1, sizeof(*c));
        if (!c)
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        c->loader_data = FAKE_VK_LOADER_MAGIC;
        out[i] = (VkCommandBuffer)c;
    }
    return VK_SUCCESS;
}

/* Every call that only has to succeed. */
static VKAPI_ATTR VkResult VKAPI_CALL fake_Success(void)
{
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_QueueSubmit(void)
{
    if (fake_is("crash-smoke"))
        raise(SIGSEGV);
    return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL fake_WaitForFences(void)
{
    if (fake_is("hang-smoke"))
        for (;;)
            pause();
    return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL fake_Nothing(void)
{
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fake_GetDeviceProcAddr(VkDevice d, const char *name);

static const struct {
    const char *name;
    PFN_vkVoidFunction fn;
} fake_fns[] = {
#define FAKE_FN(n, f) {"vk" #n, (PFN_vkVoidFunction)(f)},
    FAKE_FN(EnumerateInstanceExtensionProperties, fake_EnumerateInstanceExtensionProperties)
    FAKE_FN(CreateInstance, fake_CreateInstance)
    FAKE_FN(DestroyInstance, fake_DestroyInstance)
    FAKE_FN(EnumeratePhysicalDevices, fake_EnumeratePhysicalDevices)
    FAKE_FN(GetPhysicalDeviceProperties, fake_GetPhysicalDeviceProperties)
    FAKE_FN(GetPhysicalDeviceFeatures, fake_GetPhysicalDeviceFeatures)
    FAKE_FN(GetPhysicalDeviceQueueFamilyProperties, fake_GetPhysicalDeviceQueueFamilyProperties)
    FAKE_FN(GetPhysicalDeviceMemoryProperties, fake_GetPhysicalDeviceMemoryProperties)
    FAKE_FN(EnumerateDeviceExtensionProperties, fake_EnumerateDeviceExtensionProperties)
    FAKE_FN(GetPhysicalDeviceFormatProperties, fake_Nothing)
    FAKE_FN(GetPhysicalDeviceImageFormatProperties, fake_Success)
    FAKE_FN(GetPhysicalDeviceSparseImageFormatProperties, fake_Nothing)
    FAKE_FN(EnumerateDeviceLayerProperties, fake_Success)
    FAKE_FN(CreateDevice, fake_CreateDevice)
    FAKE_FN(GetDeviceProcAddr, fake_GetDeviceProcAddr)
    FAKE_FN(DestroyDevice, fake_Nothing)
    FAKE_FN(GetDeviceQueue, fake_GetDeviceQueue)
    FAKE_FN(CreateBuffer, fake_CreateBuffer)
    FAKE_FN(DestroyBuffer, fake_Nothing)
    FAKE_FN(GetBufferMemoryRequirements, fake_GetBufferMemoryRequirements)
    FAKE_FN(AllocateMemory, fake_AllocateMemory)
    FAKE_FN(FreeMemory, fake_Nothing)
    FAKE_FN(BindBufferMemory, fake_Success)
    FAKE_FN(MapMemory, fake_MapMemory)
    FAKE_FN(UnmapMemory, fake_Nothing)
    FAKE_FN(CreateShaderModule, fake_CreateAny)
    FAKE_FN(DestroyShaderModule, fake_Nothing)
    FAKE_FN(CreateDescriptorSetLayout, fake_CreateAny)
    FAKE_FN(CreatePipelineLayout, fake_CreateAny)
    FAKE_FN(CreateComputePipelines, fake_CreateComputePipelines)
    FAKE_FN(CreateDescriptorPool, fake_CreateAny)
    FAKE_FN(AllocateDescriptorSets, fake_AllocateDescriptorSets)
    FAKE_FN(UpdateDescriptorSets, fake_Nothing)
    FAKE_FN(CreateCommandPool, fake_CreateAny)
    FAKE_FN(AllocateCommandBuffers, fake_AllocateCommandBuffers)
    FAKE_FN(BeginCommandBuffer, fake_Success)
    FAKE_FN(EndCommandBuffer, fake_Success)
    FAKE_FN(CmdBindPipeline, fake_Nothing)
    FAKE_FN(CmdBindDescriptorSets, fake_Nothing)
    FAKE_FN(CmdPushConstants, fake_Nothing)
    FAKE_FN(CmdDispatch, fake_Nothing)
    FAKE_FN(CreateFence, fake_CreateAny)
    FAKE_FN(ResetFences, fake_Success)
    FAKE_FN(QueueSubmit, fake_QueueSubmit)
    FAKE_FN(WaitForFences, fake_WaitForFences)
    FAKE_FN(QueueWaitIdle, fake_Success)
    FAKE_FN(DeviceWaitIdle, fake_Success)
#undef FAKE_FN
};

static PFN_vkVoidFunction fake_lookup(const char *name)
{
    for (size_t i = 0; name && i < sizeof(fake_fns) / sizeof(fake_fns[0]); i++)
        if (strcmp(fake_fns[i].name, name) == 0)
            return fake_fns[i].fn;
    return NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fake_GetDeviceProcAddr(VkDevice d, const char *name)
{
    (void)d;
    return fake_lookup(name);
}

__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vk_icdNegotiateLoaderICDInterfaceVersion(uint32_t *version)
{
    if (*version > 2)
        *version = 2;
    return VK_SUCCESS;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vk_icdGetInstanceProcAddr(VkInstance instance, const char *name)
{
    (void)instance;
    if (name && strcmp(name, "vkGetInstanceProcAddr") == 0)
        return (PFN_vkVoidFunction)vk_icdGetInstanceProcAddr;
    return fake_lookup(name);
}
