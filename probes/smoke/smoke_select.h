/* smoke_select.h: which OpenCL devices the smoke test runs on (the opencl section's list, or its own). */
#ifndef GPUCHECKUP_SMOKE_SELECT_H
#define GPUCHECKUP_SMOKE_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* One OpenCL device the smoke test knows of. */
struct smoke_target {
    int platform, device; /* indices as the loader enumerates them */
    char *name;           /* sanitised device name, or NULL when unknown */
    json_object *type;    /* array of type names (["GPU"]), or NULL when unknown; owned reference */
    char *pci_address;    /* "dddd:bb:dd.f", or NULL */
    bool is_gpu;
    bool run;             /* false: listed as skipped (SKIP_REASON says why) */
    const char *skip_reason; /* static text, or NULL */
};

struct smoke_inventory {
    struct smoke_target *targets; /* in platform, device order */
    size_t n_targets;
    int *platform_indices;        /* the platforms seen (even those without devices) */
    size_t n_platforms;
};

/* Fill INV from PLATFORMS, an array shaped like the opencl probe's "platforms":
 * [{index, name, devices: [{index, name, type, pci_address, ...}]}] (missing indices count by
 * position). Returns 0, or -1 when PLATFORMS is not that shape (INV is then empty). Free with
 * smoke_inventory_free. */
int smoke_inventory_from_platforms(struct smoke_inventory *inv, json_object *platforms);

/* Apply --device P[:D] (DEV_PLATFORM < 0: every device; DEV_INDEX < 0: every device of P) by
 * dropping the others, and --smoke=gpu (GPU_ONLY) by marking non-GPU devices as skipped.
 * Returns 0, or -1 with *ERR (heap, caller frees) when --device names no platform or device. */
int smoke_inventory_select(struct smoke_inventory *inv, int dev_platform, int dev_index, bool gpu_only, char **err);

void smoke_inventory_free(struct smoke_inventory *inv);

struct probe_ctx;
struct report_section;
/* The device list: the opencl section's when it is there and ok, else an enumeration of our own (in an
 * isolated child). Returns 0 (INV filled, *SOURCE "opencl" or "enumeration") or -1 with SEC's status set.
 * Used by the smoke and bench probes. */
int smoke_find_devices(struct probe_ctx *ctx, struct report_section *sec, struct smoke_inventory *inv,
                       const char **source);

/* smoke_find_devices, then only --device's devices (and only GPUs with GPU_ONLY). Returns 1 (INV
 * filled and selected), 0 (SEC's status set: nothing to test) or -1 (a bad --device: ctx->error set, INV
 * freed). Used by the smoke and bench probes. */
int smoke_pick_devices(struct probe_ctx *ctx, struct report_section *sec, struct smoke_inventory *inv,
                       const char **source, bool gpu_only);

/* Who a finding is about: the PCI address when known, else "P:D name". Heap string (caller frees). */
char *smoke_target_subject(const struct smoke_target *t);

#endif
