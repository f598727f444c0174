/* vulkan_child.c: in a child: one driver alone through the Vulkan loader (vulkan_child_open.c): each physical device's facts, and its smoke test. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_options.h"
#include "vulkan_child.h"

/* ---- one physical device's facts ---- */

static bool vulkan_child_dev_ext(struct vulkan_loader *l, VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (!l->EnumerateDeviceExtensionProperties || l->EnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS ||
        n == 0 || n > 4096)
        return false;
    VkExtensionProperties *e = calloc(n, sizeof(*e));
    bool found = false;
    if (e && l->EnumerateDeviceExtensionProperties(pd, NULL, &n, e) >= 0)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strncmp(e[i].extensionName, name, sizeof(e[i].extensionName)) == 0;
    free(e);
    return found;
}

static json_object *vulkan_child_str(const char *s, size_t max)
{
    char buf[512];
    size_t len = strnlen(s, max < sizeof(buf) - 1 ? max : sizeof(buf) - 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    return json_object_new_string(buf);
}

/* driverVersion as vulkaninfo prints it: NVIDIA packs 10.8.8.6 bits, the others VK_MAKE_VERSION. */
static void vulkan_child_driver_version(uint32_t vendor, uint32_t v, char *buf, size_t len)
{
    if (vendor == 0x10de)
        snprintf(buf, len, "%u.%u.%u.%u", (v >> 22) & 0x3ff, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
    else
        snprintf(buf, len, "%u.%u.%u", v >> 22, (v >> 12) & 0x3ff, v & 0xfff);
}

static const char *const vulkan_child_types[] = {"other", "integrated-gpu", "discrete-gpu", "virtual-gpu", "cpu"};

static json_object *vulkan_child_queues(struct vulkan_loader *l, VkPhysicalDevice pd)
{
    uint32_t n = 0;
    l->GetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    if (n > 64)
        n = 64;
    VkQueueFamilyProperties q[64];
    l->GetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    json_object *arr = json_object_new_array();
    for (uint32_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "index", json_object_new_int((int)i));
        json_object_object_add(o, "count", json_object_new_int64(q[i].queueCount));
        json_object_object_add(o, "compute", json_object_new_boolean(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT));
        json_object_object_add(o, "graphics", json_object_new_boolean(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT));
        json_object_object_add(o, "transfer", json_object_new_boolean(q[i].queueFlags & VK_QUEUE_TRANSFER_BIT));
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *vulkan_child_heaps(struct vulkan_loader *l, VkPhysicalDevice pd)
{
    VkPhysicalDeviceMemoryProperties m;
    memset(&m, 0, sizeof(m));
    l->GetPhysicalDeviceMemoryProperties(pd, &m);
    json_object *arr = json_object_new_array();
    for (uint32_t i = 0; i < m.memoryHeapCount && i < VK_MAX_MEMORY_HEAPS; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "size", json_object_new_int64((int64_t)(m.memoryHeaps[i].size & INT64_MAX)));
        json_object_object_add(o, "device_local", json_object_new_boolean(m.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT));
        json_object_array_add(arr, o);
    }
    return arr;
}

/* The properties and features reached through the *2 queries (Vulkan 1.1 or the instance extension). */
static void vulkan_child_props2(struct vulkan_loader *l, VkPhysicalDevice pd, uint32_t api, json_object *o)
{
    if (!l->GetPhysicalDeviceProperties2 || (api < VK_API_VERSION_1_1 && !l->props2_ext))
        return;
    bool drv = api >= VK_API_VERSION_1_2 || vulkan_child_dev_ext(l, pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    bool pci = vulkan_child_dev_ext(l, pd, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDevicePCIBusInfoPropertiesEXT pp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceSubgroupProperties sp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    void **next = &p2.pNext;
    if (api >= VK_API_VERSION_1_1) {
        *next = &sp;
        next = &sp.pNext;
    }
    if (drv) {
        *next = &dp;
        next = &dp.pNext;
    }
    if (pci)
        *next = &pp;
    l->GetPhysicalDeviceProperties2(pd, &p2);
    if (api >= VK_API_VERSION_1_1)
        json_object_object_add(o, "subgroup_size", json_object_new_int64(sp.subgroupSize));
    if (drv) {
        json_object_object_add(o, "driver_id", json_object_new_int64(dp.driverID));
        json_object_object_add(o, "driver_name", vulkan_child_str(dp.driverName, VK_MAX_DRIVER_NAME_SIZE));
        json_object_object_add(o, "driver_info", vulkan_child_str(dp.driverInfo, VK_MAX_DRIVER_INFO_SIZE));
    }
    if (pci) {
        char addr[32];
        snprintf(addr, sizeof(addr), "%04x:%02x:%02x.%x", pp.pciDomain & 0xffff, pp.pciBus & 0xff, pp.pciDevice & 0x1f,
                 pp.pciFunction & 7);
        json_object_object_add(o, "pci_address", json_object_new_string(addr));
    }
    if (!l->GetPhysicalDeviceFeatures2)
        return;
    bool s16 = api >= VK_API_VERSION_1_1 || vulkan_child_dev_ext(l, pd, VK_KHR_16BIT_STORAGE_EXTENSION_NAME);
    bool f16 = api >= VK_API_VERSION_1_2 || vulkan_child_dev_ext(l, pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDevice16BitStorageFeatures st = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features fi = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    next = &f2.pNext;
    if (s16) {
        *next = &st;
        next = &st.pNext;
    }
    if (f16)
        *next = &fi;
    l->GetPhysicalDeviceFeatures2(pd, &f2);
    json_object_object_add(o, "storage_16bit", s16 ? json_object_new_boolean(st.storageBuffer16BitAccess) : NULL);
    json_object_object_add(o, "shader_float16", f16 ? json_object_new_boolean(fi.shaderFloat16) : NULL);
    json_object_object_add(o, "shader_int8", f16 ? json_object_new_boolean(fi.shaderInt8) : NULL);
}

static json_object *vulkan_child_device(struct vulkan_loader *l, VkPhysicalDevice pd, int index)
{
    VkPhysicalDeviceProperties p;
    memset(&p, 0, sizeof(p));
    l->GetPhysicalDeviceProperties(pd, &p);
    json_object *o = json_object_new_object();
    char buf[64];
    json_object_object_add(o, "index", json_object_new_int(index));
    json_object_object_add(o, "name", vulkan_child_str(p.deviceName, VK_MAX_PHYSICAL_DEVICE_NAME_SIZE));
    json_object_object_add(o, "type", (unsigned)p.deviceType < 5 ? json_object_new_string(vulkan_child_types[p.deviceType])
                                                                 : NULL);
    /* The device's version as the instance may use it: no higher than the instance's (the spec's rule). */
    uint32_t api = p.apiVersion < l->instance_api ? p.apiVersion : l->instance_api;
    snprintf(buf, sizeof(buf), "%u.%u.%u", VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
             VK_API_VERSION_PATCH(p.apiVersion));
    json_object_object_add(o, "api_version", json_object_new_string(buf));
    vulkan_child_driver_version(p.vendorID, p.driverVersion, buf, sizeof(buf));
    json_object_object_add(o, "driver_version", json_object_new_string(buf));
    json_object_object_add(o, "vendor_id", json_object_new_int64(p.vendorID));
    json_object_object_add(o, "device_id", json_object_new_int64(p.deviceID));
    vulkan_child_props2(l, pd, api, o);
    json_object_object_add(o, "queue_families", vulkan_child_queues(l, pd));
    json_object_object_add(o, "memory_heaps", vulkan_child_heaps(l, pd));
    return o;
}

/* Does the run want a smoke test on device DEV (the parent's rule in vulkan_smoke_all: not with --no-smoke,
 * not on a CPU device with --smoke gpu)? */
static bool vulkan_child_is_cpu(json_object *dev)
{
    json_object *t = NULL;
    return json_object_object_get_ex(dev, "type", &t) && t && strcmp(json_object_get_string(t), "cpu") == 0;
}

static bool vulkan_child_wants_smoke(json_object *dev)
{
    const struct compute_options *co = compute_options();
    return co->which != COMPUTE_WHICH_NONE && !(co->which == COMPUTE_WHICH_GPU && vulkan_child_is_cpu(dev));
}

/* The answer so far into the shared progress region, then the mark that the smoke test begins: from
 * here on, a crash or hang is the smoke test's. False when it does not fit (no smoke test here then). */
bool vulkan_child_say_progress(struct vulkan_progress *p, json_object *out)
{
    size_t len = 0;
    const char *s = json_object_to_json_string_length(out, JSON_C_TO_STRING_PLAIN, &len);
    if (!s || len >= VULKAN_PROGRESS_MAX)
        return false;
    memcpy(p->json, s, len);
    p->len = (unsigned)len;
    __atomic_store_n(&p->stage, VULKAN_STAGE_SMOKE, __ATOMIC_RELEASE);
    return true;
}

bool vulkan_child_list(const struct vulkan_driver *d, struct vulkan_loader *l, json_object *out)
{
    /* The driver's library held open as the loader opens it (dlopen with RTLD_LAZY | RTLD_LOCAL): the
     * loader loads and unloads it for each query before the instance (its version, its extensions),
     * and a driver that is not kept loaded (RADV) was mapped and relocated three times over. When this
     * fails, the loader's own dlopen fails too, and says why. */
    if (d->library)
        dlopen(d->library, RTLD_LAZY | RTLD_LOCAL);
    if (vulkan_child_open(l, d->real_path, out) < 0)
        return false;
    VkPhysicalDevice devs[VULKAN_CHILD_MAX_DEVS];
    int n = vulkan_child_devices(l, devs, out);
    json_object *arr = NULL;
    if (n >= 0) {
        arr = json_object_new_array();
        for (int i = 0; i < n; i++)
            json_object_array_add(arr, vulkan_child_device(l, devs[i], i));
        json_object_object_add(out, "devices", arr);
    }
    if (n == 1 && vulkan_child_wants_smoke(json_object_array_get_idx(arr, 0)))
        return true;
    vulkan_child_close(l);
    return false;
}

json_object *vulkan_child_smoke_here(struct vulkan_loader *l, json_object *out)
{
    json_object *devs = NULL;
    json_object_object_get_ex(out, "devices", &devs);
    unsigned size = compute_options_size_for(vulkan_child_is_cpu(json_object_array_get_idx(devs, 0)));
    return vulkan_child_smoke_on(l, 0, size);
}

json_object *vulkan_child_enumerate(void *arg)
{
    const struct vulkan_driver *d = arg;
    json_object *out = json_object_new_object();
    struct vulkan_loader l;
    /* One device: its smoke test here, with this instance and this load of the driver (a second child
     * would load the driver, and LLVM with lavapipe or RADV, all over again). With several, each gets its
     * own child after this one, all at once. */
    if (vulkan_child_list(d, &l, out)) {
        if (d->progress && vulkan_child_say_progress(d->progress, out)) {
            json_object_object_add(out, "smoke", vulkan_child_smoke_here(&l, out));
            return out; /* the instance and the device are left to _exit, as the smoke test's objects */
        }
        vulkan_child_close(&l);
    }
    return out;
}
