/* vulkan_child.h: the Vulkan loader as a child sees it (the Khronos headers, no prototypes: all through vkGetInstanceProcAddr). */
#ifndef GPUCHECKUP_VULKAN_CHILD_H
#define GPUCHECKUP_VULKAN_CHILD_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "vulkan_internal.h"

/* The most physical devices one driver's child reports. */
#define VULKAN_CHILD_MAX_DEVS 16

struct vulkan_loader {
    void *lib;
    PFN_vkGetInstanceProcAddr gipa;
    VkInstance inst;
    uint32_t instance_api;  /* the apiVersion the instance was made with */
    bool props2_ext;        /* VK_KHR_get_physical_device_properties2 enabled */
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2;
    PFN_vkGetPhysicalDeviceFeatures2 GetPhysicalDeviceFeatures2;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
    PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
};

/* vulkan_child_open.c: point the loader at MANIFEST alone (VK_DRIVER_FILES), dlopen libvulkan.so.1 and make
 * an instance (with VK_KHR_get_physical_device_properties2 when offered). 0, or -1 with {error, call,
 * result, detail} in OUT. */
int vulkan_child_open(struct vulkan_loader *l, const char *manifest, json_object *out);
void vulkan_child_close(struct vulkan_loader *l);
/* The physical devices into DEVS (VULKAN_CHILD_MAX_DEVS): how many, or -1 with the error in OUT. */
int vulkan_child_devices(struct vulkan_loader *l, VkPhysicalDevice *devs, json_object *out);
/* The smoke test (vulkan_smoke.c) on device INDEX of L's open instance, with N x N matrices: its JSON
 * {status, passes, ...}. Leaves every object it makes to the child's _exit. */
json_object *vulkan_child_smoke_on(struct vulkan_loader *l, int index, unsigned n);
/* Driver D alone through the loader (vulkan_child_open, then each device's facts): its answer into OUT,
 * without a smoke test. True when L is left open on D's only device, which the run wants smoke-tested
 * (vulkan_child_smoke_here then); false when L is closed (or never opened). */
bool vulkan_child_list(const struct vulkan_driver *d, struct vulkan_loader *l, json_object *out);
/* The smoke test on the one device of L's open instance, whose listing is OUT (vulkan_child_list's). */
json_object *vulkan_child_smoke_here(struct vulkan_loader *l, json_object *out);
/* OUT, the answer so far, into progress region P, then P's stage VULKAN_STAGE_SMOKE: from here on a crash
 * or hang is the smoke test's. False when it does not fit. */
bool vulkan_child_say_progress(struct vulkan_progress *p, json_object *out);
/* "VK_ERROR_INITIALIZATION_FAILED" for R ("VkResult" for one not named here). */
const char *vulkan_child_result_name(VkResult r);

#endif
