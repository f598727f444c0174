/* bench_internal.h: what the parts of the bench probe share: the device child's state and the sweep. */
#ifndef GPUCHECKUP_BENCH_INTERNAL_H
#define GPUCHECKUP_BENCH_INTERNAL_H

#include <stdbool.h>
#include <json-c/json.h>

#include "bench_blas.h"
#include "bench_kernel.h"
#include "bench_parts.h"
#include "clapi.h"
#include "compute_timer.h"

/* Size of the stage buffer a child writes what it is doing into (shared with the parent). */
#define BENCH_STAGE_MAX 160
/* The matrix sizes of the sweep, in order (powers of two and the halves between). */
#define BENCH_SIZES BENCH_PARTS_SIZES
#define BENCH_MAX_N 4096u
/* Runs per size: at least BENCH_MIN_RUNS; up to BENCH_MAX_RUNS while a run is shorter than
 * BENCH_SHORT_RUN_MS. */
#define BENCH_MIN_RUNS 3u
#define BENCH_MAX_RUNS 7u
#define BENCH_SHORT_RUN_MS 20.0
/* Bytes moved per bandwidth transfer, runs per direction, and empty-kernel launches for the latency. */
#define BENCH_BW_BYTES (64u << 20)
#define BENCH_BW_RUNS 5u
#define BENCH_LAUNCHES 101u
/* The seed of the problems (one per size, the same for every device and implementation). */
#define BENCH_SEED BENCH_PARTS_SEED

/* What a device child gets. */
struct bench_device_args {
    int platform, device;   /* indices, as the loader enumerates them */
    double budget_ms;       /* for everything this device does */
    unsigned precs;         /* bit (1 << enum bench_prec) per precision asked for */
    char *stage;            /* BENCH_STAGE_MAX bytes shared with the parent, or NULL */
};

/* What the CPU BLAS child gets. */
struct bench_cpu_args {
    double budget_ms;
    unsigned precs;         /* fp32 and fp64 only (CBLAS has no fp16 GEMM) */
    unsigned max_n;         /* largest N a device measured (0: BENCH_MAX_N) */
    char *stage;
};

/* isolate_fn, in the child: bench one OpenCL device (ARG: struct bench_device_args *). Returns the device
 * object (see the schema's $defs/bench/$defs/device), or NULL when out of memory. */
json_object *bench_device_child(void *arg);
/* isolate_fn, in the child: the CPU BLAS sweep (ARG: struct bench_cpu_args *). */
json_object *bench_cpu_child(void *arg);

/* One device child's OpenCL state. */
struct bench_dev {
    struct bench_device_args *args;
    struct clapi api;
    struct bench_clblast clblast;
    bool have_clblast;
    struct bench_cblas cblas;      /* the CPU BLAS, for the references of large sizes */
    bool have_cblas;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    struct bench_kernel_hints hints;
    struct compute_peak_props peak;  /* for the plausibility ceiling of each timing */
    unsigned long long global_mem, max_alloc;
    bool supported[3];
    char *vendor;
    double t0;                     /* when the child started (jsonnum_now_ms) */
    bool clblast_busy;             /* a CLBlast call left running (bench_sweep: its build outlasted its budget) */
};

/* Write the stage (also to the shared buffer). */
void bench_stage(char *shared, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* {"call", "code", "name"} for a failed OpenCL call. */
json_object *bench_error_json(const char *call, cl_int code);

/* The implementations swept on an OpenCL device. */
enum bench_impl { BENCH_IMPL_OURS = 0, BENCH_IMPL_CLBLAST = 1 };
/* "gpucheckup", "clblast". */
const char *bench_impl_name(enum bench_impl i);

/* Sweep implementation I in precision P on D's device within BUDGET_MS. Returns the sweep object. */
json_object *bench_sweep(struct bench_dev *d, enum bench_impl i, enum bench_prec p, double budget_ms);

/* The median of V[0..N) (sorts V); NAN when N is 0 or a value is NAN. */
double bench_median(double *v, size_t n);

/* Findings about one sweep SW (bench_sweep.c): wrong sizes (bench.wrong-result) and a failed run (bench.run-failed). */
struct probe_ctx;
struct report_section;
void bench_sweep_findings(struct probe_ctx *ctx, const char *subject, const char *who, json_object *sw);

/* CUDA devices (bench_cuda.c), through the cuda probe's part (bench_parts.h), each in its own child:
 * bench_cuda_list: the devices the driver lists (the section's "cuda" object, devices not yet run);
 * bench_cuda_count: how many of them run; bench_cuda_run: each in turn with SHARE_MS, its object replacing
 * the listed one; bench_cuda_report: findings and the section's lines. */
json_object *bench_cuda_list(struct probe_ctx *ctx, char *stage);
size_t bench_cuda_count(json_object *cuda);
void bench_cuda_run(struct probe_ctx *ctx, json_object *cuda, double share_ms, char *stage);
void bench_cuda_report(struct probe_ctx *ctx, struct report_section *sec, json_object *cuda);

/* For tests only: replace gpucheckup's kernel by K (NULL restores bench_kernel_pick). */
void bench_set_kernel_for_tests(const struct bench_kernel *k);

#endif
