/* result_vulkan.h: the vulkan probe's typed facts: the loader, each driver manifest, each device and its smoke test. */
#ifndef GPUCHECKUP_RESULT_VULKAN_H
#define GPUCHECKUP_RESULT_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* drivers[].status: what became of one driver manifest (ICD JSON). */
enum result_vulkan_driver_status {
    RESULT_VULKAN_DRV_OK = 0,          /* loaded alone, lists at least one device */
    RESULT_VULKAN_DRV_NO_DEVICE,       /* loaded, lists no device (its hardware may be here or unknown) */
    RESULT_VULKAN_DRV_ABSENT_HARDWARE, /* lists no device, and the bus has none of the hardware it drives */
    RESULT_VULKAN_DRV_UNREADABLE,      /* the manifest cannot be read */
    RESULT_VULKAN_DRV_MALFORMED,       /* the manifest is not one the loader takes */
    RESULT_VULKAN_DRV_MISSING_LIBRARY, /* the library it names is not there */
    RESULT_VULKAN_DRV_WRONG_ARCH,      /* the library is built for another machine or class */
    RESULT_VULKAN_DRV_INIT_FAILED,     /* vkCreateInstance or vkEnumeratePhysicalDevices failed */
    RESULT_VULKAN_DRV_CRASH,           /* its child died */
    RESULT_VULKAN_DRV_TIMEOUT,         /* its child was still running at the deadline */
    RESULT_VULKAN_DRV_NOT_LOADED,      /* not loaded: no loader, no time left, or not a live run */
};
extern const struct gc_names result_vulkan_driver_status_names;

/* devices[].smoke.status: one device's compute smoke test. */
enum result_vulkan_smoke_status {
    RESULT_VULKAN_SMOKE_PASS = 0,
    RESULT_VULKAN_SMOKE_WRONG_RESULT,
    RESULT_VULKAN_SMOKE_RUN_FAILED, /* a Vulkan call failed (device, memory, pipeline, submit) */
    RESULT_VULKAN_SMOKE_CRASH,
    RESULT_VULKAN_SMOKE_TIMEOUT,
    RESULT_VULKAN_SMOKE_SKIPPED,    /* --no-smoke, --smoke gpu on a CPU device, no time left */
};
extern const struct gc_names result_vulkan_smoke_status_names;

/* devices[].type: VkPhysicalDeviceType. */
enum result_vulkan_dev_type {
    RESULT_VULKAN_TYPE_OTHER = 0,
    RESULT_VULKAN_TYPE_INTEGRATED_GPU,
    RESULT_VULKAN_TYPE_DISCRETE_GPU,
    RESULT_VULKAN_TYPE_VIRTUAL_GPU,
    RESULT_VULKAN_TYPE_CPU,
};
extern const struct gc_names result_vulkan_dev_type_names;

struct result_vulkan_driver {
    char *manifest;    /* the JSON file's path (as the loader names it) */
    char *library;     /* ICD.library_path as written, NULL: unknown */
    char *api_version; /* ICD.api_version, NULL: unknown */
    int status;        /* enum result_vulkan_driver_status, -1: unknown */
    char *detail;      /* one line for people, NULL: none */
};

struct result_vulkan_dev {
    char *manifest;       /* the driver (manifest) that lists it */
    int index;            /* its index among that driver's physical devices, -1: unknown */
    char *name;
    int type;             /* enum result_vulkan_dev_type, -1: unknown */
    char *api_version;    /* "1.3.230" */
    char *driver_version; /* decoded as vulkaninfo does ("0.0.1", NVIDIA's "535.183.1") */
    int64_t vendor_id, device_id; /* -1: unknown */
    int64_t driver_id;    /* VkPhysicalDeviceDriverProperties.driverID (VkDriverId: 13 is Mesa's llvmpipe), -1: unknown */
    char *driver_name, *driver_info; /* VkPhysicalDeviceDriverProperties, NULL: not supported */
    char *pci_address;    /* VK_EXT_pci_bus_info: "0000:01:00.0", NULL: not given */
    enum gc_tri on_pci_bus; /* the pci section lists that address */
    int64_t subgroup_size;  /* -1: unknown */
    enum gc_tri storage_16bit, shader_float16, shader_int8;
    json_object *queue_families; /* array (a reference held), NULL: unknown */
    json_object *memory_heaps;   /* array, NULL: unknown */
    int smoke;            /* enum result_vulkan_smoke_status; -1: no smoke object */
    json_object *smoke_json; /* the smoke object, status included (n, passes, kernel_ms, gflops, detail) */
};

struct result_vulkan {
    char *loader;         /* the loader library found (a path), NULL: none */
    struct result_vulkan_driver *drivers;
    size_t n_drivers;
    struct result_vulkan_dev *devs;
    size_t n_devs;
};

extern const struct report_result_ops result_vulkan_ops;

/* A new empty result (free with result_vulkan_ops.free); NULL on allocation failure. */
struct result_vulkan *result_vulkan_new(void);
/* Append a driver or a device with every member unknown; the new element, or NULL (memory). */
struct result_vulkan_driver *result_vulkan_add_driver(struct result_vulkan *r);
struct result_vulkan_dev *result_vulkan_add_dev(struct result_vulkan *r);
/* Read one device's members from its JSON object O (the section's devices[] shape) into D. */
void result_vulkan_dev_read(struct result_vulkan_dev *d, json_object *o);
/* The vulkan facts of R when the vulkan section ran ok, else NULL. */
const struct result_vulkan *result_vulkan_get(const struct report *r);

#endif
