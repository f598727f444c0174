/* clonce_parts.h: the parts table of the shared cl-once child, and the types its icd, opencl and smoke parts share. */
#ifndef GPUCHECKUP_CLONCE_PARTS_H
#define GPUCHECKUP_CLONCE_PARTS_H

/* The shared child (clonce*.c) sees its parts through this header only, never through a probe's
 * private header, and calls none of them by name: each probe defines its `const struct clonce_part`
 * (below) in its own folder and lists it in its registry row (struct probe's clonce_part); the child
 * finds the parts it needs by walking probe_registry (clonce_part_find) and runs them in one fixed
 * order: icd, opencl, smoke. So the arrows point one way: the probes to this header, the child to the
 * registry; no probe is called back by name. */

#include <stdbool.h>
#include <json-c/json.h>

#include "probe.h"

/* ---- the icd part (probes/icd/icd_child.c) ---- */

struct icd_child_arg {
    const char *lib;          /* vendor/pair: the library string handed to dlopen; loader: a path,
                                 or NULL for the default loader (clapi_open) */
    const char *lib2;         /* pair: the second library, loaded after LIB in the same process */
    int dlflags;              /* RTLD_* for vendor libraries */
    const char *vendors_env;  /* combined: OCL_ICD_VENDORS for the loader, or NULL to keep ours */
    volatile int *stage;      /* shared page: the stage reached (lib2 adds 0x100); may be NULL */
};

/* ---- the opencl part (probes/opencl/opencl_enum.c): no types of its own ---- */

/* ---- the smoke part (probes/smoke/smoke_shared.c) ---- */

/* Devices the shared child tests at most; any more are tested the per-platform way. */
#define SMOKE_SHARED_MAX 64
/* Bytes of a device's stage text (the smoke probe's SMOKE_STAGE_MAX: smoke_shared.c checks they agree). */
#define SMOKE_SHARED_STAGE_MAX 160

/* One device under test in the shared child: which it is, and the stage it is in. */
struct smoke_shared_slot {
    int platform, device;
    char stage[SMOKE_SHARED_STAGE_MAX];
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
    unsigned cpu_n;     /* a CPU device's size (compute_options_size_for(true)) */
    int dev_platform, dev_index; /* --device, as cli_options has it */
    bool gpu_only;      /* --smoke=gpu */
    double deadline_ms; /* the run's deadline (jsonnum_now_ms's clock) */
};

/* ---- the parts table ---- */

/* One probe's part of the shared child: its name (the probe's) and the callbacks of its kind; a part
 * leaves the others' NULL. The child calls them as their comments say, in the order icd, opencl,
 * smoke; a part it needs and cannot find (a registry without it) is run by its probe alone. */
struct clonce_part {
    const char *name; /* "icd", "opencl" or "smoke" */

    /* icd (isolate_fn, ARG a struct icd_child_arg *): clGetPlatformIDs through the real loader. */
    json_object *(*icd_combined)(void *arg);
    /* icd, in the child that ran icd_combined (issue 17): each vendor library the loader (loaded from
     * LOADER, or NULL) holds open, described as the icd probe's vendor child describes it, on the
     * loader's handle: [{"loaded": its path, "ms", "output": whether it printed (on OUT_FD, where stdout
     * and stderr go), "answer": what the vendor child returns}]. */
    json_object *(*icd_loaded)(const char *loader, int out_fd);
    /* icd, in the parent before the child is forked (under --health, the speed policy's rule 2): a
     * temporary vendors directory holding the .icd files whose drivers' hardware may be here, for the
     * child's loader to read instead (heap; icd_health_done removes and frees it), or NULL: load every
     * driver. The icd probe leaves the same drivers unloaded (icd_health_plan). *KEPT: how many .icd files
     * the directory holds (0: the loader loads no driver, and the enumeration says so: not_loaded).
     * *SKIPPED: the .icd files left out (a JSON array of paths, the caller's), or NULL. Called also when
     * the icd probe is not in the run (the opencl command): the loader loads the same drivers. */
    char *(*icd_health_vendors)(const struct probe_ctx *ctx, size_t *kept, json_object **skipped);
    void (*icd_health_done)(char *dir);

    /* opencl (isolate_fn, ARG unused): enumerate every platform and device through the system loader
     * and return the opencl section's facts (loader, enumeration, platforms), owned by the caller. */
    json_object *(*enumerate)(void *arg);

    /* smoke, in the parent before the cl-once child is forked: the smoke part it runs, if any. The
     * caller has checked that the run shares the child (clonce_wanted): live, with the opencl probe. */
    void (*smoke_plan)(const struct probe_ctx *ctx, struct smoke_shared_plan *plan);
    /* smoke, in the cl-once child, once its enumeration OPENCL (enumerate's object) is safe in the
     * parent's hands: the devices the smoke probe will select, tested as the per-platform child tests
     * them (all at once, each in a thread), PAGE marking each. Returns {"elapsed_ms": number, "devices":
     * [{"platform", "device", "result": object or null (still running at the deadline), "elapsed_ms"}]},
     * or NULL when there is nothing it can select. */
    json_object *(*smoke_child)(const struct smoke_shared_plan *plan, struct smoke_shared_page *page,
                                json_object *opencl);
    /* smoke, in the parent once the child is gone: PAGE as [{"platform", "device", "stage"}], or NULL
     * when the smoke part never started. */
    json_object *(*smoke_page_json)(const struct smoke_shared_page *page);
};

#endif
