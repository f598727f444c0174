/* cuda_internal.h: the cuda probe's private interface between its parts (driver API, NVML, libraries, smoke). */
#ifndef GPUCHECKUP_CUDA_INTERNAL_H
#define GPUCHECKUP_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <json-c/json.h>

#include "isolate.h"
#include "probe.h"

/* Facts the parts share, filled by cuda.c from the pci section and the driver-API child before the
 * NVML and library parts report. Unknown numbers are -1, unknown strings "" (never a made-up 0). */
struct cuda_facts {
    bool nvidia_gpu_present;        /* the pci section lists a GPU with PCI vendor 0x10de */
    bool nvidia_gpu_bound;          /* ... and one of them is bound to the nvidia kernel driver */
    bool nvidia_module_loaded;      /* /proc/modules lists nvidia */
    bool nvidia_module_unloadable;  /* the pci section says no nvidia module can load: none is built for the
                                       running kernel, or it is blacklisted (nvidia.kernel_module) */
    char kernel_driver_version[32]; /* "580.159.04" from /proc/driver/nvidia/version, or "" */
    char libcuda_version[32];       /* "535.261.03" from the name of the libcuda file loaded, or "" */
    int driver_cuda_version;        /* cuDriverGetVersion() (13000 = 13.0), or -1 (no driver, stub...) */
    int cuinit_result;              /* CUresult of cuInit(0), or -1 when libcuda was not loaded */
    int device_count;               /* cuDeviceGetCount() after a good cuInit, or -1 */
    bool pci_known;                 /* the pci facts can say "no NVIDIA GPU" */
    bool libcuda_missing;           /* dlopen("libcuda.so.1") found no such file (no NVIDIA driver) */
    bool wsl2;                      /* the pci section's platform is WSL2: the GPU is the Windows host's, behind
                                       /dev/dxg; CUDA's bus IDs are the host's, no /dev/nvidia* nodes exist, and
                                       devices are matched by UUID or not at all, never to guest sysfs */
};

/* ---- NVML (cuda_nvml.c) ---------------------------------------------------------------------------
 * cuda_nvml_child: isolate work: dlopen("libnvidia-ml.so.1") (ARG: NULL; tests may pass another library
 * name as a const char *), query the system and every GPU, return the JSON object that becomes
 * data["nvml"] (sanitised again by the parent). Runs beside the driver-API child in one isolate batch.
 * cuda_nvml_report: in the parent, after the batch: put data["nvml"] into SEC from RES (any outcome:
 * ok, crash, timeout...) and add the NVML findings (cuda.nvml-*), the /dev/nvidiaN count check (through
 * ctx->fs) and the environment-variable check (DCGM's list). FACTS are complete by then.
 * data["nvml"] (schema $defs/cuda_nvml): {"status": "ok" | "no-library" | "missing-symbol" |
 * "init-failed" | "crash" | "timeout" | "error" | "not-run", "library", "path", "error",
 * "init_result", "init_result_name", "driver_version", "nvml_version", "cuda_driver_version",
 * "device_count", "devices": [{"index", "name", "uuid", "pci_bus_id" ("0000:00:06.0", as the pci
 * probe names it), "persistence_mode", "ecc_mode": {"current", "pending"}, "mig": {"current", "pending",
 * "devices"}, ... "not_supported": [keys], "errors": {key: NVML error name}}], "device_nodes",
 * "environment"}. A value NVML could not give is null (never a made-up 0).
 * cuda_nvml_checks: the catalogue rows of these findings (cuda.c gathers them into the probe's).
 * cuda_nvml_print_text: data["nvml"] for people (one line, one per GPU; clock events and ECC counts with
 * --verbose), defined in cuda_text.c. */
json_object *cuda_nvml_child(void *arg);
void cuda_nvml_report(struct probe_ctx *ctx, struct report_section *sec, const struct isolate_result *res,
                      const struct cuda_facts *facts);
extern const struct check cuda_nvml_checks[];
extern const size_t cuda_nvml_n_checks;
void cuda_nvml_print_text(json_object *nvml, struct text_out *t);

/* ---- memory held by other processes (cuda_nvml_mem.c) ----------------------------------------------
 * cuda_nvml_mem_check: for NVML GPU D (SUBJ, GPU its name), resolve each process NVML lists (adds "ours",
 * "user", "command", "started" to it) and add cuda.nvml-memory-held(-most) or, with --expect-idle,
 * cuda.nvml-not-idle. cuda_option_rows: --expect-idle. cuda_mem_req_*: --require free-memory>=NGiB. */
void cuda_nvml_mem_check(struct probe_ctx *ctx, json_object *d, const char *subj, const char *gpu);
/* data["metrics"] (Prometheus' gpucheckup_gpu_memory_held_bytes per GPU) from data["nvml"]. */
void cuda_nvml_mem_metrics(struct report_section *sec);
extern const struct check cuda_nvml_mem_checks[];
extern const size_t cuda_nvml_mem_n_checks;
extern const struct probe_option cuda_option_rows[];
void cuda_mem_opts_reset(void);
int cuda_mem_req_parse(const char *name, int *arg);
bool cuda_mem_req_eval(const struct report *r, const char *name, int arg, char **detail);

/* ---- throttling history and temperature (cuda_nvml_thermal.c) --------------------------------------
 * cuda_nvml_thermal_check: for NVML GPU D, cuda.nvml-throttled-past from the violation counters, and the
 * temperature as evidence of a current cuda.nvml-clocks-slowdown. */
void cuda_nvml_thermal_check(struct probe_ctx *ctx, json_object *d, const char *subj, const char *gpu);
extern const struct check cuda_nvml_thermal_checks[];
extern const size_t cuda_nvml_thermal_n_checks;

/* ---- NVLink (cuda_nvml_nvlink.c) ----------------------------------------------------------------------
 * In the NVML child: nvml_query_nvlink adds D's "nvlink" (each link's state, far end and error counters;
 * null without NVLink); nvml_nvlink_recount reads the counters of DEVS' links again ("grown"). In the parent:
 * cuda_nvml_nvlink_check adds cuda.nvlink-errors and cuda.nvlink-inactive from the NVML devices DEVS. */
struct nvml_api;
struct nvmlDevice_st;
void nvml_query_nvlink(const struct nvml_api *api, struct nvmlDevice_st *dev, json_object *d);
void nvml_nvlink_recount(const struct nvml_api *api, json_object *devs);
void cuda_nvml_nvlink_check(struct probe_ctx *ctx, json_object *devs);
/* "      NVLink: 4 of 4 links active" for NVML GPU D when it has NVLinks (the text output). */
void cuda_nvml_nvlink_text(json_object *d, FILE *f);
extern const struct check cuda_nvlink_checks[];
extern const size_t cuda_nvlink_n_checks;

/* ---- after suspend/resume (cuda_resume.c) -----------------------------------------------------------
 * cuda_resume_explain: F (a cuInit 999 or an NVML "Unknown Error" finding, WHAT saying which) on a machine
 * that has resumed from suspend (/sys/power/suspend_stats/success > 0) is caused by
 * cuda.uvm-lost-after-resume, added once. Nothing when there was no suspend or F is NULL. Returns F. */
struct report_finding *cuda_resume_explain(struct probe_ctx *ctx, struct report_finding *f, const char *what);
extern const struct check cuda_resume_checks[];
extern const size_t cuda_resume_n_checks;

/* ---- the libraries frameworks load (cuda_libs.c) --------------------------------------------------
 * Finds every CUDA user-space library as the dynamic linker would (LD_LIBRARY_PATH, ld.so.cache, the
 * default directories) and in pip wheel layouts (site-packages/nvidia/x/lib), asks each for its version
 * in isolated children, sets data["libraries"] in SEC and adds the library findings (cuda.lib-*).
 * data["libraries"] is an array of objects, one per file found, in the dynamic linker's order:
 *   {"library": "cudart"            family key: cudart cublas cublasLt cufft cusparse cusolver cudnn
 *                                   cudnn_<sub> nccl nvrtc nvJitLink
 *    "file": "libcudart.so.13",     the name looked up
 *    "path": "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96"  (resolved)
 *    "found_via": "LD_LIBRARY_PATH" | "ld.so.cache" | "default" | "pip",
 *    "search_entry": the directory or cache entry that brought it in,
 *    "wheel": the site-packages/nvidia/... directory, or null,
 *    "loaded_first": true when it is the one dlopen(file) in this environment would load,
 *    "version": "13.0.96" or null, "version_from": "library" | "file name" | "SONAME" | null,
 *    "cuda_major": 13 or null, "cuda_minor": 0 or null,
 *    "error": null or why the version could not be read}
 * cuda.c reads "library", "loaded_first", "cuda_major"/"cuda_minor" (the runtime a framework will
 * use) for the verdict lines. */
void cuda_libs_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts);
/* The libraries are not loaded (only listed, versions from their file names, data["libraries_not_loaded"]
 * says why) under --root (they belong to the tree, never to this host) and, in a check, on a host with
 * neither an NVIDIA GPU on the PCI bus nor an NVIDIA driver (FACTS: pci known, no GPU, no module,
 * libcuda.so.1 not found), unless the cuda probe was asked by name or --require names CUDA. Returns
 * why not, or NULL to load. */
const char *cuda_libs_no_load_reason(const struct probe_ctx *ctx, const struct cuda_facts *facts);
/* The library part's catalogue rows (cuda.lib-*), for the probe's combined catalogue. Besides the fields
 * above, each library object carries "found_at" (the path as found, before symlinks), and
 * "cuda_version_from" (what decided cuda_major); data["toolkits"] lists the toolkits found
 * ({"dir", "found_via", "version", "version_from"}). */
extern const struct check cuda_libs_checks[];
extern const size_t cuda_libs_n_checks;

/* ---- the CUDA smoke test (cuda_smoke.c) -----------------------------------------------------------
 * An exact SGEMM check per GPU through the driver API with embedded PTX (.version 6.0, .target sm_50,
 * JIT-compiled by the driver, JIT cache off), checked against the CPU reference of the OpenCL smoke
 * test (probes/smoke/compute_verify.c). The kernel's contract, which the suite's fake libcuda also implements
 * on the host: entry "gc_sgemm_f32", parameters (CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
 * unsigned int n), row-major n x n matrices, c = a * b, any grid that covers n x n with 16 x 16 blocks.
 * cuda_smoke_child: isolate work; ARG is a struct cuda_smoke_args; returns the device's result object.
 * cuda_smoke_device: the same work on an already-loaded API (what the child calls; unit-testable).
 * cuda_smoke_report: in the parent, after every GPU's child finished: data["smoke"] and cuda.smoke-*
 * findings. cuda.c (summary lines) and src/report/doctor.c (verdict, --require cuda, the GPU target) read
 * data["smoke"]["devices"][i]["ordinal"] (the CUDA ordinal of data["devices"][j]["ordinal"]) and
 * ["status"] ("pass" means it computed right; anything else is not a pass), and data["smoke"]["status"]
 * == "not-run" with ["reason"] when cuda.c did not start the children (no device, --no-smoke). */
struct cuda_api;
struct cuda_smoke_args {
    int ordinal;    /* CUDA device ordinal (as cuDeviceGet counts, after CUDA_VISIBLE_DEVICES) */
    int n;          /* matrix size (--smoke-size) */
    const char *pci_bus_id; /* the GPU's PCI address as the pci section writes it ("0000:00:06.0"), or
                               NULL: the findings' subject (else the child's cuDeviceGetPCIBusId, else
                               "cuda:N"); needed when the child crashes or times out */
};
json_object *cuda_smoke_child(void *arg);
json_object *cuda_smoke_device(const struct cuda_api *api, int ordinal, int n);
void cuda_smoke_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_smoke_args *args,
                       const struct isolate_result *results, size_t n_results);
/* data["smoke"] is an array, one object per GPU in ARGS order; "status" is pass, wrong-result,
 * jit-failed, run-failed, no-compute-api, init-failed (from the child) or crash, timeout (how the child
 * ended); see the schema's $defs/cuda_smoke. Findings: cuda.smoke-wrong-result, -jit-failed,
 * -run-failed (also init-failed and no-compute-api), -crash, -timeout; one summary line per GPU. */
extern const struct check cuda_smoke_checks[];
extern const size_t cuda_smoke_n_checks;
/* Between the smoke child (cuda_smoke.c) and the parent's report (cuda_smoke_report.c): a string
 * sanitised (line breaks and tabs kept) and cut to MAX bytes with "...", or null when empty; the
 * bytes of a JIT log kept. */
json_object *cuda_smoke_json_str(const char *s, size_t max);
#define CUDA_SMOKE_LOG_KEEP 4000
/* The kernel's PTX exactly as cuModuleLoadDataEx gets it (NUL-terminated). */
extern const char cuda_smoke_ptx[];

/* bench's CUDA part (cuda_bench.c; probes/clonce/bench_parts.h): the check of one fp32 GEMM result OUT (row-major n x n)
 * against problem P: every element against the double reference up to CUDA_BENCH_FULL_N (*METHOD "full"),
 * else CUDA_BENCH_SAMPLES pseudo-random elements, each its own dot product in double, within the same
 * tolerance ("sampled": catches a gross error, not one element slightly off). PRIOR (may be NULL): the output
 * before the run, for CHK's "unchanged". Returns false when out of memory. */
#define CUDA_BENCH_FULL_N 512u
#define CUDA_BENCH_SAMPLES 4096u
struct compute_problem;
struct compute_check;
bool cuda_bench_verify(struct compute_problem *p, const float *out, const uint32_t *prior, struct compute_check *chk,
                       const char **method);

/* The peer check (cuda_p2p.c), after the smoke test: every ordered pair of GPUs whose smoke test passed,
 * in one isolated child (a shared page names the pair in flight, so a hang names it): cuDeviceCanAccessPeer,
 * cuCtxEnablePeerAccess, an 8 MiB pattern copied with cuMemcpyPeer and verified exactly, its GB/s.
 * data["p2p"] = {"pairs": [...], "not_run"?, "error"?}; findings cuda.p2p-*; metrics p2p_bandwidth_gbps. */
void cuda_p2p_run(struct probe_ctx *ctx, struct report_section *sec);
extern const struct check cuda_p2p_checks[];
extern const size_t cuda_p2p_n_checks;

/* The --require names the cuda probe answers (cuda_require.c). */
extern const struct probe_require cuda_requires[];

/* The probe's verdict: its targets and lines (cuda_verdict.c). */
struct doctor_lines;
void cuda_verdict(struct report *r, struct doctor_lines *out);
void cuda_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);

#endif
