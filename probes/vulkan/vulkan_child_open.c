/* vulkan_child_open.c: in a Vulkan child: the loader pointed at one driver's manifest, its instance and devices (the enumeration's and the smoke test's). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_child.h"

/* ---- the loader, pointed at one manifest ---- */

void vulkan_child_close(struct vulkan_loader *l)
{
    if (l->inst && l->DestroyInstance)
        l->DestroyInstance(l->inst, NULL);
    l->inst = NULL;
    /* The library stays loaded: the child ends with _exit, and some drivers crash in their destructors. */
}

/* The loader's VkResult names for the JSON (the few the loader and drivers answer at instance level). */
const char *vulkan_child_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    default: return "VkResult";
    }
}

static void vulkan_child_error(json_object *out, const char *error, const char *call, VkResult r, const char *detail)
{
    json_object_object_add(out, "error", json_object_new_string(error));
    if (call)
        json_object_object_add(out, "call", json_object_new_string(call));
    if (call)
        json_object_object_add(out, "result", json_object_new_int(r));
    if (call)
        json_object_object_add(out, "result_name", json_object_new_string(vulkan_child_result_name(r)));
    if (detail)
        json_object_object_add(out, "detail", json_object_new_string(detail));
}

/* Does the instance offer extension NAME? */
static bool vulkan_child_instance_ext(PFN_vkEnumerateInstanceExtensionProperties enumerate, const char *name)
{
    uint32_t n = 0;
    if (!enumerate || enumerate(NULL, &n, NULL) != VK_SUCCESS || n == 0 || n > 4096)
        return false;
    VkExtensionProperties *e = calloc(n, sizeof(*e));
    bool found = false;
    if (e && enumerate(NULL, &n, e) >= 0)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strncmp(e[i].extensionName, name, sizeof(e[i].extensionName)) == 0;
    free(e);
    return found;
}

#define VULKAN_INSTANCE_FN(l, name) ((PFN_vk##name)(l)->gipa((l)->inst, "vk" #name))

int vulkan_child_open(struct vulkan_loader *l, const char *manifest, json_object *out)
{
    memset(l, 0, sizeof(*l));
    setenv("VK_DRIVER_FILES", manifest, 1);
    setenv("VK_ICD_FILENAMES", manifest, 1);
    unsetenv("VK_ADD_DRIVER_FILES");
    /* The loader says why it drops a driver only when asked (to stderr, which the parent keeps). */
    setenv("VK_LOADER_DEBUG", "error", 0);
    l->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!l->lib) {
        const char *e = dlerror();
        vulkan_child_error(out, "no-loader", NULL, VK_SUCCESS, e ? e : "dlopen failed");
        return -1;
    }
    l->gipa = (PFN_vkGetInstanceProcAddr)dlsym(l->lib, "vkGetInstanceProcAddr");
    if (!l->gipa) {
        vulkan_child_error(out, "no-loader", NULL, VK_SUCCESS, "libvulkan.so.1 has no vkGetInstanceProcAddr");
        return -1;
    }
    PFN_vkEnumerateInstanceVersion ver = VULKAN_INSTANCE_FN(l, EnumerateInstanceVersion);
    uint32_t iv = VK_API_VERSION_1_0;
    if (ver && ver(&iv) != VK_SUCCESS)
        iv = VK_API_VERSION_1_0;
    char buf[32];
    snprintf(buf, sizeof(buf), "%u.%u.%u", VK_API_VERSION_MAJOR(iv), VK_API_VERSION_MINOR(iv), VK_API_VERSION_PATCH(iv));
    json_object_object_add(out, "loader_version", json_object_new_string(buf));
    const char *exts[1];
    uint32_t n_ext = 0;
    if (vulkan_child_instance_ext(VULKAN_INSTANCE_FN(l, EnumerateInstanceExtensionProperties),
                                 VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME))
        exts[n_ext++] = VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME;
    l->props2_ext = n_ext > 0;
    l->instance_api = iv >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : iv;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "gpucheckup",
                             .pEngineName = "gpucheckup", .apiVersion = l->instance_api};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app,
                               .enabledExtensionCount = n_ext, .ppEnabledExtensionNames = exts};
    PFN_vkCreateInstance create = VULKAN_INSTANCE_FN(l, CreateInstance);
    VkResult r = create ? create(&ci, NULL, &l->inst) : VK_ERROR_INITIALIZATION_FAILED;
    if (r != VK_SUCCESS) {
        l->inst = NULL;
        vulkan_child_error(out, "create-instance", "vkCreateInstance", r, NULL);
        return -1;
    }
    l->DestroyInstance = VULKAN_INSTANCE_FN(l, DestroyInstance);
    l->EnumeratePhysicalDevices = VULKAN_INSTANCE_FN(l, EnumeratePhysicalDevices);
    l->GetPhysicalDeviceProperties = VULKAN_INSTANCE_FN(l, GetPhysicalDeviceProperties);
    l->GetPhysicalDeviceProperties2 = VULKAN_INSTANCE_FN(l, GetPhysicalDeviceProperties2);
    if (!l->GetPhysicalDeviceProperties2 && l->props2_ext)
        l->GetPhysicalDeviceProperties2 = (PFN_vkGetPhysicalDeviceProperties2)l->gipa(l->inst, "vkGetPhysicalDeviceProperties2KHR");
    l->GetPhysicalDeviceFeatures2 = VULKAN_INSTANCE_FN(l, GetPhysicalDeviceFeatures2);
    if (!l->GetPhysicalDeviceFeatures2 && l->props2_ext)
        l->GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)l->gipa(l->inst, "vkGetPhysicalDeviceFeatures2KHR");
    l->GetPhysicalDeviceQueueFamilyProperties = VULKAN_INSTANCE_FN(l, GetPhysicalDeviceQueueFamilyProperties);
    l->GetPhysicalDeviceMemoryProperties = VULKAN_INSTANCE_FN(l, GetPhysicalDeviceMemoryProperties);
    l->EnumerateDeviceExtensionProperties = VULKAN_INSTANCE_FN(l, EnumerateDeviceExtensionProperties);
    if (!l->EnumeratePhysicalDevices || !l->GetPhysicalDeviceProperties || !l->GetPhysicalDeviceQueueFamilyProperties ||
        !l->GetPhysicalDeviceMemoryProperties) {
        vulkan_child_error(out, "create-instance", NULL, VK_SUCCESS, "the instance lacks a Vulkan 1.0 entry point");
        return -1;
    }
    return 0;
}

/* The physical devices (at most VULKAN_CHILD_MAX_DEVS) into DEVS; how many, or -1 with the error in OUT. The
 * loader answers VK_ERROR_INITIALIZATION_FAILED when its drivers list no device at all (Vulkan-Loader 1.3,
 * setup_loader_term_phys_devs: "Failed to detect any valid GPUs"): that is no device, not a failure. */
int vulkan_child_devices(struct vulkan_loader *l, VkPhysicalDevice *devs, json_object *out)
{
    uint32_t n = 0;
    VkResult r = l->EnumeratePhysicalDevices(l->inst, &n, NULL);
    if (r == VK_ERROR_INITIALIZATION_FAILED) {
        json_object_object_add(out, "enumerate_result", json_object_new_int(r));
        return 0;
    }
    if (r != VK_SUCCESS) {
        vulkan_child_error(out, "enumerate", "vkEnumeratePhysicalDevices", r, NULL);
        return -1;
    }
    if (n > VULKAN_CHILD_MAX_DEVS)
        n = VULKAN_CHILD_MAX_DEVS;
    r = l->EnumeratePhysicalDevices(l->inst, &n, devs);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        vulkan_child_error(out, "enumerate", "vkEnumeratePhysicalDevices", r, NULL);
        return -1;
    }
    return (int)n;
}
