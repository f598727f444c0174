/* vulkan_smoke.c: in a child: the Vulkan smoke test: the GEMM compute shader on one device, checked on the CPU. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_check.h"
#include "jsonnum.h"
#include "strutil.h"
#include "vulkan_child.h"
#include "vulkan_gemm_spv.h"

/* The OpenCL and CUDA smoke tests' seed: all three multiply the same matrices. */
#define VULKAN_SMOKE_SEED 0x5EED0F5310CEull
/* The output buffer is filled with this quiet NaN before each dispatch: an element the shader did not
 * write stays NaN, and an output equal to it is "the dispatch left the buffer as it was". */
#define VULKAN_SMOKE_POISON 0x7FC0FFEEu
#define VULKAN_SMOKE_LOCAL 16u

/* The device-level entry points the test uses (through vkGetInstanceProcAddr: the loader's trampolines). */
#define VULKAN_SMOKE_FNS(X)                                                                                      \
    X(CreateDevice) X(DestroyDevice) X(GetDeviceQueue) X(CreateBuffer) X(DestroyBuffer)                        \
    X(GetBufferMemoryRequirements) X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory)             \
    X(CreateShaderModule) X(CreateDescriptorSetLayout) X(CreatePipelineLayout) X(CreateComputePipelines)       \
    X(CreateDescriptorPool) X(AllocateDescriptorSets) X(UpdateDescriptorSets) X(CreateCommandPool)              \
    X(AllocateCommandBuffers) X(BeginCommandBuffer) X(CmdBindPipeline) X(CmdBindDescriptorSets)                 \
    X(CmdPushConstants) X(CmdDispatch) X(EndCommandBuffer) X(CreateFence) X(ResetFences) X(QueueSubmit)        \
    X(WaitForFences) X(GetPhysicalDeviceMemoryProperties)

struct vulkan_smoke {
#define VULKAN_SMOKE_MEMBER(name) PFN_vk##name name;
    VULKAN_SMOKE_FNS(VULKAN_SMOKE_MEMBER)
#undef VULKAN_SMOKE_MEMBER
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue queue;
    VkBuffer buf[3];
    VkDeviceMemory mem[3];
    void *map[3];
    VkPipeline pipe;
    VkPipelineLayout layout;
    VkDescriptorSet set;
    VkCommandBuffer cmd;
    VkFence fence;
    unsigned n;
    json_object *out;
    bool failed;
};

/* Record the first failed call (and VkResult) as the outcome. */
static bool vulkan_smoke_check(struct vulkan_smoke *s, VkResult r, const char *call)
{
    if (r == VK_SUCCESS || s->failed)
        return !s->failed;
    s->failed = true;
    json_object_object_add(s->out, "status", json_object_new_string("run-failed"));
    json_object_object_add(s->out, "call", json_object_new_string(call));
    json_object_object_add(s->out, "result", json_object_new_int(r));
    json_object_object_add(s->out, "result_name", json_object_new_string(vulkan_child_result_name(r)));
    return false;
}

static int vulkan_smoke_queue_family(struct vulkan_loader *l, VkPhysicalDevice pd)
{
    uint32_t n = 0;
    l->GetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[64];
    if (n > 64)
        n = 64;
    l->GetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0)
            return (int)i;
    return -1;
}

/* A memory type of BITS that the host can map and sees coherently, device-local ones first. */
static int vulkan_smoke_memtype(struct vulkan_smoke *s, uint32_t bits)
{
    VkPhysicalDeviceMemoryProperties m;
    memset(&m, 0, sizeof(m));
    s->GetPhysicalDeviceMemoryProperties(s->pd, &m);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < m.memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++) {
            VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
            if ((bits & (1u << i)) && (f & host) == host && (pass == 1 || (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)))
                return (int)i;
        }
    return -1;
}

static bool vulkan_smoke_buffers(struct vulkan_smoke *s)
{
    VkDeviceSize bytes = (VkDeviceSize)s->n * s->n * sizeof(float);
    for (int i = 0; i < 3; i++) {
        VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                                 .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
        if (!vulkan_smoke_check(s, s->CreateBuffer(s->dev, &bi, NULL, &s->buf[i]), "vkCreateBuffer"))
            return false;
        VkMemoryRequirements req;
        memset(&req, 0, sizeof(req));
        s->GetBufferMemoryRequirements(s->dev, s->buf[i], &req);
        int type = vulkan_smoke_memtype(s, req.memoryTypeBits);
        if (type < 0)
            return vulkan_smoke_check(s, VK_ERROR_FEATURE_NOT_PRESENT, "host-visible memory type");
        VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                   .memoryTypeIndex = (uint32_t)type};
        if (!vulkan_smoke_check(s, s->AllocateMemory(s->dev, &ai, NULL, &s->mem[i]), "vkAllocateMemory") ||
            !vulkan_smoke_check(s, s->BindBufferMemory(s->dev, s->buf[i], s->mem[i], 0), "vkBindBufferMemory") ||
            !vulkan_smoke_check(s, s->MapMemory(s->dev, s->mem[i], 0, VK_WHOLE_SIZE, 0, &s->map[i]), "vkMapMemory"))
            return false;
        if (!s->map[i])
            return vulkan_smoke_check(s, VK_ERROR_MEMORY_MAP_FAILED, "vkMapMemory");
    }
    return true;
}

static bool vulkan_smoke_pipeline(struct vulkan_smoke *s)
{
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = sizeof(vulkan_gemm_spv), .pCode = vulkan_gemm_spv};
    VkShaderModule mod;
    if (!vulkan_smoke_check(s, s->CreateShaderModule(s->dev, &mi, NULL, &mod), "vkCreateShaderModule"))
        return false;
    VkDescriptorSetLayoutBinding b[3];
    for (uint32_t i = 0; i < 3; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = 3, .pBindings = b};
    VkDescriptorSetLayout dsl;
    if (!vulkan_smoke_check(s, s->CreateDescriptorSetLayout(s->dev, &li, NULL, &dsl), "vkCreateDescriptorSetLayout"))
        return false;
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = sizeof(uint32_t)};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pc};
    if (!vulkan_smoke_check(s, s->CreatePipelineLayout(s->dev, &pli, NULL, &s->layout), "vkCreatePipelineLayout"))
        return false;
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main"},
        .layout = s->layout};
    if (!vulkan_smoke_check(s, s->CreateComputePipelines(s->dev, VK_NULL_HANDLE, 1, &ci, NULL, &s->pipe),
                            "vkCreateComputePipelines"))
        return false;
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 3};
    VkDescriptorPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                     .poolSizeCount = 1, .pPoolSizes = &ps};
    VkDescriptorPool pool;
    if (!vulkan_smoke_check(s, s->CreateDescriptorPool(s->dev, &pi, NULL, &pool), "vkCreateDescriptorPool"))
        return false;
    VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = pool,
                                       .descriptorSetCount = 1, .pSetLayouts = &dsl};
    if (!vulkan_smoke_check(s, s->AllocateDescriptorSets(s->dev, &dai, &s->set), "vkAllocateDescriptorSets"))
        return false;
    VkDescriptorBufferInfo bi[3];
    VkWriteDescriptorSet w[3];
    for (uint32_t i = 0; i < 3; i++) {
        bi[i] = (VkDescriptorBufferInfo){.buffer = s->buf[i], .offset = 0, .range = VK_WHOLE_SIZE};
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = s->set, .dstBinding = i,
                                      .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &bi[i]};
    }
    s->UpdateDescriptorSets(s->dev, 3, w, 0, NULL);
    return true;
}

static bool vulkan_smoke_commands(struct vulkan_smoke *s, uint32_t family)
{
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    VkCommandPool pool;
    if (!vulkan_smoke_check(s, s->CreateCommandPool(s->dev, &pi, NULL, &pool), "vkCreateCommandPool"))
        return false;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    if (!vulkan_smoke_check(s, s->AllocateCommandBuffers(s->dev, &ai, &s->cmd), "vkAllocateCommandBuffers"))
        return false;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (!vulkan_smoke_check(s, s->BeginCommandBuffer(s->cmd, &bi), "vkBeginCommandBuffer"))
        return false;
    uint32_t n = s->n, groups = (n + VULKAN_SMOKE_LOCAL - 1) / VULKAN_SMOKE_LOCAL;
    s->CmdBindPipeline(s->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipe);
    s->CmdBindDescriptorSets(s->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0, NULL);
    s->CmdPushConstants(s->cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(n), &n);
    s->CmdDispatch(s->cmd, groups, groups, 1);
    if (!vulkan_smoke_check(s, s->EndCommandBuffer(s->cmd), "vkEndCommandBuffer"))
        return false;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    return vulkan_smoke_check(s, s->CreateFence(s->dev, &fi, NULL, &s->fence), "vkCreateFence");
}

/* Set up device, buffers, pipeline and the recorded dispatch on device INDEX. */
static bool vulkan_smoke_setup(struct vulkan_smoke *s, struct vulkan_loader *l, int index)
{
#define VULKAN_SMOKE_GET(name) s->name = (PFN_vk##name)l->gipa(l->inst, "vk" #name);
    VULKAN_SMOKE_FNS(VULKAN_SMOKE_GET)
#undef VULKAN_SMOKE_GET
#define VULKAN_SMOKE_HAVE(name) &&s->name
    if (!(1 VULKAN_SMOKE_FNS(VULKAN_SMOKE_HAVE)))
        return vulkan_smoke_check(s, VK_ERROR_INITIALIZATION_FAILED, "vkGetInstanceProcAddr");
#undef VULKAN_SMOKE_HAVE
    VkPhysicalDevice devs[VULKAN_CHILD_MAX_DEVS];
    int n = vulkan_child_devices(l, devs, s->out);
    if (n <= index)
        return vulkan_smoke_check(s, VK_ERROR_DEVICE_LOST, "vkEnumeratePhysicalDevices");
    s->pd = devs[index];
    int family = vulkan_smoke_queue_family(l, s->pd);
    if (family < 0)
        return vulkan_smoke_check(s, VK_ERROR_FEATURE_NOT_PRESENT, "a compute queue family");
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)family,
                                  .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &qi};
    if (!vulkan_smoke_check(s, s->CreateDevice(s->pd, &di, NULL, &s->dev), "vkCreateDevice"))
        return false;
    s->GetDeviceQueue(s->dev, (uint32_t)family, 0, &s->queue);
    return vulkan_smoke_buffers(s) && vulkan_smoke_pipeline(s) && vulkan_smoke_commands(s, (uint32_t)family);
}

/* One pass: inputs in, poison out, dispatch, wait, check. Returns false when a call failed. */
static bool vulkan_smoke_pass(struct vulkan_smoke *s, struct compute_problem *p, json_object *passes, double *best_ms,
                              size_t *wrong, char **why)
{
    size_t count = (size_t)s->n * s->n, bytes = count * sizeof(float);
    memcpy(s->map[0], p->a, bytes);
    memcpy(s->map[1], p->b, bytes);
    uint32_t *c = s->map[2];
    for (size_t i = 0; i < count; i++)
        c[i] = VULKAN_SMOKE_POISON;
    float *prior = malloc(bytes), *got = malloc(bytes);
    if (!prior || !got) {
        free(prior);
        free(got);
        return vulkan_smoke_check(s, VK_ERROR_OUT_OF_HOST_MEMORY, "malloc");
    }
    memcpy(prior, c, bytes);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &s->cmd};
    double t0 = jsonnum_now_ms();
    bool ok = vulkan_smoke_check(s, s->ResetFences(s->dev, 1, &s->fence), "vkResetFences") &&
              vulkan_smoke_check(s, s->QueueSubmit(s->queue, 1, &si, s->fence), "vkQueueSubmit") &&
              vulkan_smoke_check(s, s->WaitForFences(s->dev, 1, &s->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    double ms = jsonnum_now_ms() - t0;
    if (ok) {
        memcpy(got, c, bytes);
        struct compute_check chk;
        compute_verify(p, got, prior, &chk);
        json_object *po = json_object_new_object();
        json_object_object_add(po, "precision", json_object_new_string("fp32"));
        json_object_object_add(po, "kind", json_object_new_string(compute_pass_name(p->kind)));
        compute_check_add_json(po, &chk, NAN, ms);
        json_object_array_add(passes, po);
        if (chk.wrong > 0 && *wrong == 0)
            *why = compute_check_describe(&chk);
        *wrong += chk.wrong;
        if (isnan(*best_ms) || ms < *best_ms)
            *best_ms = ms;
    }
    free(prior);
    free(got);
    return ok;
}

/* Both passes (exact, random), each run once (a second run only made the check slower: the time is the
 * faster pass's, first dispatch included, as a program's first matrix product would see it). */
static void vulkan_smoke_run(struct vulkan_smoke *s)
{
    json_object *passes = json_object_new_array();
    json_object_object_add(s->out, "passes", passes);
    double best = NAN;
    size_t wrong = 0;
    char *why = NULL;
    for (int k = 0; k < COMPUTE_N_PASS && !s->failed; k++) {
        struct compute_problem p;
        int rc = compute_problem_generate(&p, COMPUTE_FP32, (enum compute_pass_kind)k, s->n, VULKAN_SMOKE_SEED);
        if (rc == 0 && compute_problem_reference(&p) == 0) {
            vulkan_smoke_pass(s, &p, passes, &best, &wrong, &why);
        } else if (rc < 0) {
            vulkan_smoke_check(s, VK_ERROR_OUT_OF_HOST_MEMORY, "compute_problem_generate");
        }
        compute_problem_free(&p);
    }
    if (s->failed) {
        free(why);
        return;
    }
    json_object_object_add(s->out, "status", json_object_new_string(wrong ? "wrong-result" : "pass"));
    if (why)
        json_object_object_add(s->out, "detail", json_object_new_string(why));
    free(why);
    json_object_object_add(s->out, "n", json_object_new_int((int)s->n));
    json_object_object_add(s->out, "timer", json_object_new_string("host"));
    if (!isnan(best) && best > 0) {
        json_object_object_add(s->out, "kernel_ms", jsonnum_ms(best));
        json_object_object_add(s->out, "gflops", jsonnum_sig(2.0 * s->n * (double)s->n * s->n / (best * 1e6), 4));
    }
}

json_object *vulkan_child_smoke_on(struct vulkan_loader *l, int index, unsigned n)
{
    json_object *out = json_object_new_object();
    struct vulkan_smoke s;
    memset(&s, 0, sizeof(s));
    s.out = out;
    s.n = n;
    if (vulkan_smoke_setup(&s, l, index))
        vulkan_smoke_run(&s);
    /* Objects are left to the process's end (_exit): a driver that hangs or crashes in teardown would
     * otherwise turn a passed test into a failure. */
    return out;
}

json_object *vulkan_child_smoke(void *arg)
{
    const struct vulkan_smoke_job *job = arg;
    struct vulkan_loader l;
    json_object *out = json_object_new_object();
    if (job->driver->library) /* held open across the loader's queries, as in vulkan_child_list */
        dlopen(job->driver->library, RTLD_LAZY | RTLD_LOCAL);
    if (vulkan_child_open(&l, job->driver->real_path, out) < 0) {
        json_object_object_add(out, "status", json_object_new_string("run-failed"));
        return out;
    }
    json_object_put(out);
    return vulkan_child_smoke_on(&l, job->index, job->n);
}
