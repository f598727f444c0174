/* smoke_dev.h: what one device's smoke test holds, for the files of the test (not for other modules). */
#ifndef GPUCHECKUP_SMOKE_DEV_H
#define GPUCHECKUP_SMOKE_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "clapi.h"
#include "results/result_smoke.h"
#include "smoke_device.h"
#include "smoke_prep.h"
#include "compute_timer.h"
#include "compute_check.h"

/* Everything one device test holds (the child ends without releasing the OpenCL objects). */
struct smoke_dev {
    struct smoke_device_args *args;
    struct smoke_prep *prep;
    struct clapi api;
    char *model;          /* name, driver version and OpenCL version: which devices can share a build */
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_mem a, b, c;
    unsigned n;
    bool supported[COMPUTE_N_PREC];
    bool built[COMPUTE_N_PREC];
    enum result_smoke_prec_status prec_status[COMPUTE_N_PREC]; /* its JSON names: result_smoke.h */
    /* results */
    double build_ms;
    bool from_binary;     /* the program was built from another device's binary */
    double kernel_ms;     /* fastest fp32 kernel run, by the profiling events */
    double host_ms;       /* fastest fp32 kernel run, by the host clock */
    struct compute_peak_props peak; /* what the device says about itself, for its plausible peak */
    char *platform_name, *driver_version; /* for a finding that names the driver */
    double max_error;     /* largest fp32 error; INFINITY when an element was not finite */
    bool have_max_error;
    size_t wrong;         /* wrong elements, every pass */
    bool wrong_result;    /* any wrong element or round-trip word */
    json_object *mismatches, *passes, *round_trip;
    char *build_log;
    json_object *error;   /* the first failed call, or NULL */
    char *detail;         /* the first problem, for people, or NULL */
};

/* smoke_device.c: enter a stage (kept where the parent reads it after a crash); record the first
 * problem for people; true when ERR is CL_SUCCESS, else record CALL as the first failed call. */
void smoke_stage(struct smoke_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void smoke_detail(struct smoke_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool smoke_ok(struct smoke_dev *d, cl_int err, const char *call);

/* smoke_build.c: create and build D's program from the kernel source with OPTIONS. Returns the CL
 * error (d->prog set on success; *LOG the build log on failure, or NULL). */
cl_int smoke_build(struct smoke_dev *d, const char *options, char **log);

/* smoke_build.c: the same, shared with the child's other devices of D's model through
 * d->args->share (see struct smoke_build_share): the first builds the source, the others its binary. */
cl_int smoke_build_shared(struct smoke_dev *d, const char *options, char **log);

#endif
