/* smoke_shared.h: the smoke test inside the shared cl-once child, after its enumeration (issue 17). */
#ifndef GPUCHECKUP_SMOKE_SHARED_H
#define GPUCHECKUP_SMOKE_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "isolate.h"
#include "probe.h"
#include "smoke_device.h"
#include "smoke_platform.h"

/* Devices the shared child tests at most; any more are tested the per-platform way. */
#define SMOKE_SHARED_MAX 64

/* One device under test in the shared child: which it is, and the stage it is in. */
struct smoke_shared_slot {
    int platform, device;
    char stage[SMOKE_STAGE_MAX];
};

/* Memory shared by the parent and the cl-once child (MAP_SHARED), written by the child only and read
 * by the parent once the child is gone (never trusted: bounds checked): which devices the smoke part
 * tests, and where each is, so that a crash or a hang there names them. */
struct smoke_shared_page {
    volatile int started; /* the smoke part began: slots[0..n) are filled */
    int n;
    struct smoke_shared_slot slots[SMOKE_SHARED_MAX];
};

/* What the child's smoke part does, fixed in the parent before the fork. */
struct smoke_shared_plan {
    bool on;            /* the smoke probe runs in this run, and would test devices (not --smoke=none) */
    unsigned n;         /* --smoke-size */
    int dev_platform, dev_index; /* --device, as cli_options has it */
    bool gpu_only;      /* --smoke=gpu */
    double deadline_ms; /* the run's deadline (jsonnum_now_ms's clock) */
};

/* In the parent, before the cl-once child is forked: the smoke part it runs, if any. The caller has
 * checked that the run shares the child (clonce_wanted): live, with the icd and opencl probes. */
void smoke_shared_plan(const struct probe_ctx *ctx, struct smoke_shared_plan *plan);

/* In the cl-once child, once its enumeration OPENCL (ocl_enumerate's object) is safe in the parent's
 * hands: the devices the smoke probe will select, tested as the per-platform child tests them (all
 * at once, each in a thread), PAGE marking each. Returns {"elapsed_ms": number, "devices":
 * [{"platform", "device", "result": object or null (still running at the deadline), "elapsed_ms"}]},
 * or NULL when there is nothing it can select. */
json_object *smoke_shared_child(const struct smoke_shared_plan *plan, struct smoke_shared_page *page,
                                json_object *opencl);

/* In the parent, once the child is gone: PAGE as [{"platform", "device", "stage"}], or NULL when the
 * smoke part never started. */
json_object *smoke_shared_page_json(const struct smoke_shared_page *page);

/* For the smoke probe: smoke_platform_run, except that the devices the shared cl-once child tested
 * take its answers (a device still running at its deadline, or in a child that hung, a timeout with
 * its stage), and only the others (all of them when nothing was shared, or when the shared child
 * crashed in its smoke part) get children of their own, with what is left of the budget. */
void smoke_shared_run(struct probe_ctx *ctx, struct smoke_device_args *devs, size_t n, struct isolate_result *res,
                      smoke_done_fn done, void *arg);

#endif
