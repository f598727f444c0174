/* cldevices.h: the OpenCL devices the smoke test and bench run on (a part of the shared OpenCL code in probes/). */
#ifndef GPUCHECKUP_CLDEVICES_H
#define GPUCHECKUP_CLDEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* One OpenCL device the smoke test or bench may run on. */
struct cldev_target {
    int platform, device; /* indices as the loader enumerates them */
    char *name;           /* sanitised device name, or NULL when unknown */
    json_object *type;    /* array of type names (["GPU"]), or NULL when unknown; owned reference */
    char *pci_address;    /* "dddd:bb:dd.f", or NULL */
    bool is_gpu;
    bool run;             /* false: listed as skipped (SKIP_REASON says why) */
    const char *skip_reason; /* static text, or NULL */
};

struct cldev_inventory {
    struct cldev_target *targets; /* in platform, device order */
    size_t n_targets;
    int *platform_indices;        /* the platforms seen (even those without devices) */
    size_t n_platforms;
};

/* Fill INV from PLATFORMS, an array shaped like the opencl probe's "platforms":
 * [{index, name, devices: [{index, name, type, pci_address, ...}]}] (missing indices count by
 * position). Returns 0, or -1 when PLATFORMS is not that shape (INV is then empty). Free with
 * cldev_inventory_free. */
int cldev_inventory_from_platforms(struct cldev_inventory *inv, json_object *platforms);

/* Apply --device P[:D] (DEV_PLATFORM < 0: every device; DEV_INDEX < 0: every device of P) by
 * dropping the others, and --smoke=gpu (GPU_ONLY) by marking non-GPU devices as skipped.
 * Returns 0, or -1 with *ERR (heap, caller frees) when --device names no platform or device. */
int cldev_inventory_select(struct cldev_inventory *inv, int dev_platform, int dev_index, bool gpu_only, char **err);

void cldev_inventory_free(struct cldev_inventory *inv);

struct probe_ctx;
struct report_section;
/* The device list: the opencl section's when it is there and ok, else an enumeration of our own (in an
 * isolated child). Returns 0 (INV filled, *SOURCE "opencl" or "enumeration") or -1 with SEC's status set.
 * Used by the smoke and bench probes. */
int cldev_find_devices(struct probe_ctx *ctx, struct report_section *sec, struct cldev_inventory *inv,
                       const char **source);

/* cldev_find_devices, then only --device's devices (and only GPUs with GPU_ONLY). Returns 1 (INV
 * filled and selected), 0 (SEC's status set: nothing to test) or -1 (a bad --device: ctx->error set, INV
 * freed). Used by the smoke and bench probes. */
int cldev_pick_devices(struct probe_ctx *ctx, struct report_section *sec, struct cldev_inventory *inv,
                       const char **source, bool gpu_only);

/* isolate work: load the OpenCL loader and list every platform and device ({"platforms": [{index, name,
 * devices: [{index, name, type, pci_address}]}]}, or {"loader_error": ...} / {"error": {call, code,
 * name}}): the device list when the opencl section is not there. */
json_object *cldev_enumerate_child(void *arg);

/* Who a finding is about: the PCI address when known, else "P:D name". Heap string (caller frees). */
char *cldev_target_subject(const struct cldev_target *t);

#endif
