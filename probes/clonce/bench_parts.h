/* bench_parts.h: what other probes contribute to `gpucheckup bench`: the cuda probe's CUDA device children. */
#ifndef GPUCHECKUP_BENCH_PARTS_H
#define GPUCHECKUP_BENCH_PARTS_H

/* The bench probe (probes/bench/) sees these parts through this header only, never through a probe's private
 * header; bench starts the children (its budget, its limits), the part does the vendor work inside them. */

#include <json-c/json.h>

/* The matrix sizes every bench sweep runs, in order (OpenCL, CUDA and the CPU BLAS alike). */
#define BENCH_PARTS_SIZES {64u, 128u, 192u, 256u, 384u, 512u, 768u, 1024u, 1536u, 2048u, 3072u, 4096u}
/* The seed of the problems (one per size, the same for every device and implementation). */
#define BENCH_PARTS_SEED 0xBE4C4F5EEDull
/* Bytes of the stage text a child writes into memory shared with the parent. */
#define BENCH_PARTS_STAGE_MAX 160

/* ---- the cuda part (probes/cuda/cuda_bench.c) ---- */

/* isolate_fn: the CUDA devices the driver lists (ARG unused): {"status": "ok" | "missing" (no libcuda.so.1) |
 * "error", "detail": string or null, "libcuda": path or null, "devices": [{"ordinal", "name"}]}. */
json_object *bench_cuda_list_child(void *arg);

/* What a CUDA device child gets. */
struct bench_cuda_args {
    int ordinal;       /* as the driver enumerates it (after CUDA_VISIBLE_DEVICES) */
    double budget_ms;  /* for everything this device does */
    char *stage;       /* BENCH_PARTS_STAGE_MAX bytes shared with the parent, or NULL */
};

/* isolate_fn: bench one CUDA device (ARG: struct bench_cuda_args *): cuBLAS SGEMM (dlopen of libcublas, when
 * there) and gpucheckup's own PTX GEMM, every size verified. Returns the schema's $defs/bench_cuda_device. */
json_object *bench_cuda_device_child(void *arg);

/* What the transfer child gets: the budget for every copy, the shared stage text (or NULL). */
struct bench_cuda_xfer_args {
    double budget_ms;
    char *stage;
};

/* isolate_fn: host-to-device bandwidth per CUDA device (pageable and pinned host memory) and peer-to-peer
 * bandwidth per ordered pair of devices (ARG: struct bench_cuda_xfer_args *), cuMemcpyHtoD and cuMemcpyPeer
 * of one buffer, each copy synchronised and timed on the host clock, every destination read back and
 * compared. Returns the schema's $defs/bench_cuda_transfers. */
json_object *bench_cuda_transfer_child(void *arg);

#endif
