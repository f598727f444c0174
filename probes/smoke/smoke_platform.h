/* smoke_platform.h: one smoke child per OpenCL platform, its devices side by side in threads there. */
#ifndef GPUCHECKUP_SMOKE_PLATFORM_H
#define GPUCHECKUP_SMOKE_PLATFORM_H

#include <stddef.h>
#include <json-c/json.h>

#include "isolate.h"
#include "probe.h"
#include "smoke_device.h"

/* Called in the parent as soon as the result of device INDEX (into DEVS) is known. */
typedef void (*smoke_done_fn)(size_t index, const struct isolate_result *res, void *arg);

/* Test the N devices DEVS (each with its own stage slot) within what is left of CTX's time budget:
 * one child per platform (the devices with the same .platform), each device in a thread of its own
 * there, so the driver is loaded once per platform. When a platform's child crashes, its devices
 * run again one child each, so that the result names the device whose driver crashed. Fills RES[i]
 * for DEVS[i] (free each with isolate_result_clear): ISOLATE_OK with smoke_device_child's object,
 * ISOLATE_TIMEOUT for a device still running at the deadline (its stage slot says where), or how
 * the child that tested it alone ended. DONE (may be NULL) is called once per device. */
void smoke_platform_run(struct probe_ctx *ctx, struct smoke_device_args *devs, size_t n, struct isolate_result *res,
                        smoke_done_fn done, void *arg);

/* What one platform's child gets. */
struct smoke_platform_args {
    struct smoke_device_args *devs; /* every device of the run */
    const size_t *idx;              /* the indices into DEVS of this platform's devices */
    size_t n;
    double deadline_ms;             /* when to answer with what is finished (jsonnum_now_ms's clock) */
};

/* isolate_fn, in the child: test ARG's devices (struct smoke_platform_args *), each in a thread;
 * at the deadline answer for those done. Returns {"devices": [{"result": object or null (still
 * running), "elapsed_ms": number}]}, in ARG's order. */
json_object *smoke_platform_child(void *arg);

/* In a child: test the N devices DEVS[IDX[0..N)] (of one platform or several) side by side, each in
 * a thread, with one set of inputs for all and one kernel build per platform and model; at
 * DEADLINE_MS answer for those done. Returns smoke_platform_child's object (NULL when out of memory). */
json_object *smoke_platform_test(struct smoke_device_args *devs, const size_t *idx, size_t n, double deadline_ms);

#endif
