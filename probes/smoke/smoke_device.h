/* smoke_device.h: the smoke test's isolated children: device enumeration, and the test of one device. */
#ifndef GPUCHECKUP_SMOKE_DEVICE_H
#define GPUCHECKUP_SMOKE_DEVICE_H

#include <stdbool.h>
#include <json-c/json.h>

/* Size of the stage buffer a device child writes what it is doing into. */
#define SMOKE_STAGE_MAX 160

struct smoke_prep;
struct smoke_build_share;

/* What one device child gets. */
struct smoke_device_args {
    int platform, device; /* indices, as the loader enumerates them */
    unsigned n;           /* matrix size */
    char *stage;          /* SMOKE_STAGE_MAX bytes shared with the parent (MAP_SHARED), or NULL: the child
                             keeps the stage it is in there, so a crash or a timeout can say where */
    struct smoke_prep *prep; /* inputs and references shared with the other devices of the child, or NULL:
                                the test prepares its own */
    struct smoke_build_share *share; /* the first build of the child's devices, shared (see below), or NULL */
};

/* The kernel build of one device, offered to the other devices of the same child: a device with the
 * same name, driver version, OpenCL version and build options loads the first one's program binary
 * instead of compiling the source again (PoCL 3.1 preprocesses and hashes the source under its
 * compiler lock for each device, even with a warm kernel cache: ~40 ms of CPU per device, one
 * device at a time). A device whose binary build fails, or that waited SMOKE_SHARE_WAIT_MS for the
 * first build, builds the source itself. Lives until the child ends. */
struct smoke_build_share *smoke_build_share_new(void);

/* How long a device waits for another device's build before it builds the source itself. */
#define SMOKE_SHARE_WAIT_MS 3000

/* isolate_fn, in the child: run the smoke test on one device (ARG: struct smoke_device_args *).
 * Returns a new object with the keys name, type, status ("pass", "fail" or "error"), n, build_ms,
 * build_from, kernel_ms, gflops, max_error, wrong_elements, first_mismatches, precisions, passes, round_trip,
 * build_log, error, detail (see the schema's $defs/smoke), or NULL when out of memory. */
json_object *smoke_device_child(void *arg);

/* isolate_fn, in the child: every OpenCL platform and device, as
 * {"platforms": [{index, name, devices: [{index, name, type, pci_address}]}]}, the shape of the opencl
 * probe's section; or {"loader_error": "..."} when no loader could be loaded; or
 * {"error": {call, code, name}} when clGetPlatformIDs failed. ARG is unused. */


/* For tests only: call HOOK(stage) in the child each time the device test enters a stage (to
 * simulate a driver that crashes or hangs there). NULL removes it. */
void smoke_set_stage_hook_for_tests(void (*hook)(const char *stage));

struct compute_peak_props;
/* For tests only: call HOOK in the child with the fastest fp32 times (profiling, host; NAN when
 * unknown) and the device's peak properties before the clock is chosen, to simulate a driver whose
 * profiling events or properties are wrong. NULL removes it. */
void smoke_set_timer_hook_for_tests(void (*hook)(double *prof_ms, double *host_ms, struct compute_peak_props *peak));

#endif
