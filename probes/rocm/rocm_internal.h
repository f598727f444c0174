/* rocm_internal.h: the rocm probe's private interface: the KFD files, the gfx table, the runtime child, the verdict. */
#ifndef GPUCHECKUP_ROCM_INTERNAL_H
#define GPUCHECKUP_ROCM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "probe.h"
#include "results/result_pci.h"

/* ---- the KFD topology (rocm_kfd.c) ---- */

/* The members of one /sys/class/kfd/kfd/topology/nodes/N/properties file gpucheckup reads (the kernel's
 * drivers/gpu/drm/amd/amdkfd/kfd_topology.c, node_show(), prints one "name value" line each). -1: absent. */
struct rocm_kfd_props {
    int64_t cpu_cores_count;
    int64_t simd_count;
    int64_t gfx_target_version; /* major * 10000 + minor * 100 + stepping; 0 for a CPU node */
    int64_t vendor_id;
    int64_t device_id;
    int64_t location_id;        /* bus << 8 | device << 3 | function */
    int64_t domain;
    int64_t drm_render_minor;
};

/* Parse a properties file's TEXT (LEN bytes, not trusted: any bytes, no NUL needed). Every member found
 * with a decimal value that fits is set, the others stay -1. Returns how many members were set. */
size_t rocm_kfd_parse(const char *text, size_t len, struct rocm_kfd_props *out);
/* The LLVM target name of a gfx_target_version ("gfx90a" for 90010, "gfx1100" for 110000) in BUF (LEN >= 16);
 * NULL for 0 (a CPU node) or a value no target name can spell. */
const char *rocm_gfx_name(int64_t gfx_target_version, char *buf, size_t len);
/* "0000:03:00.0" from a node's domain and location_id in BUF (LEN >= 16); NULL when either is absent or out
 * of range. */
const char *rocm_kfd_pci_address(const struct rocm_kfd_props *p, char *buf, size_t len);

/* The most KFD nodes read (a CPU node per socket and a GPU node per GPU or per XCP partition: 8 MI300X in CPX
 * mode make 64); those past it are counted and noted. */
#define ROCM_MAX_NODES 256
/* Read the kernel side through CTX's hostfs into a new "kernel" object (module, DKMS, KFD) and a new "nodes"
 * array (each KFD node tied to the pci section's device and its VRAM; *NOT_READ counts the nodes past the first
 * ROCM_MAX_NODES listed, not read). */
json_object *rocm_kernel_read(struct probe_ctx *ctx);
json_object *rocm_nodes_read(struct probe_ctx *ctx, const struct result_pci *pci_devs, size_t *not_read);
/* Open /dev/kfd and the render node of each KFD GPU node in NODES O_RDWR as the runtime does (live host files only): a new array of
 * {path, open, errno, group, user_in_group}, or NULL when the files are not this machine's. */
json_object *rocm_nodes_open(struct probe_ctx *ctx, json_object *nodes);

/* ---- the gfx support table (rocm_gfx.c) ---- */

enum rocm_support {
    ROCM_SUPPORTED = 0, /* on the ROCm Linux support list */
    ROCM_DEPRECATED,    /* listed, but in maintenance: the next release may drop it */
    ROCM_UNSUPPORTED,   /* known, not on the list */
    ROCM_UNKNOWN,       /* a target the table does not know */
};
struct rocm_gfx {
    const char *gfx;
    const char *examples;  /* products that carry it */
    bool igpu;             /* found only in APUs (an integrated GPU) */
    enum rocm_support support;
    const char *override;  /* the HSA_OVERRIDE_GFX_VERSION users set for it, NULL when none works */
};
/* An AMD chip KFD refuses (no KFD node at all, whatever ROCm is installed): its PCI device IDs, names. */
struct rocm_kfd_chip {
    unsigned first, last;  /* PCI device IDs */
    const char *chip;      /* "Tahiti" */
    const char *gen;       /* "GCN 1 (Southern Islands)" */
    const char *examples;
    bool experimental;     /* KFD takes it with amdgpu.exp_hw_support=1 */
};
/* The row of the chip with PCI device ID DEVICE_ID (vendor 0x1002), or NULL when KFD takes it (or it is unknown). */
const struct rocm_kfd_chip *rocm_kfd_chip_find(unsigned device_id);
/* The row of GFX ("gfx1100"), or NULL. */
const struct rocm_gfx *rocm_gfx_find(const char *gfx);
const char *rocm_support_name(enum rocm_support s);

/* ---- rocBLAS's kernels (rocm_rocblas.c) ---- */

/* The rocBLAS the dynamic linker finds and the gfx targets its Tensile library files name: a new object
 * {library, tensile_dir, targets}, or NULL when no librocblas is found. */
json_object *rocm_rocblas_read(struct probe_ctx *ctx);
/* Does RB (rocm_rocblas_read's) carry kernels for GFX? */
bool rocm_rocblas_has(json_object *rb, const char *gfx);
/* The target HSA_OVERRIDE_GFX_VERSION's value V ("10.3.0") stands for ("gfx1030"), in BUF; NULL when V is
 * not MAJOR.MINOR.STEPPING. */
const char *rocm_override_gfx(const char *v, char *buf, size_t len);

/* ---- the runtime child (rocm_child.c) ---- */

/* The child: dlopen libhsa-runtime64.so.1, hsa_init, the agents; then libamdhip64: versions and devices.
 * ARG is unused. Returns the JSON the parent reads (rocm_runtime_report). */
json_object *rocm_runtime_child(void *arg);

/* ---- the HIP smoke test (rocm_smoke.c) ---- */

/* The most HIP devices one smoke child tests. */
#define ROCM_SMOKE_MAX_DEVICES 64
/* Run it on every HIP device of DATA's runtime child (live modes, unless --no-smoke or SKIP, the reason
 * not to, is set): a new object, {devices: [{ordinal, gfx, n, status, failed_call, error_code, error_name,
 * compile_log, passes}], missing} from the child, {status: crash|timeout, detail, ordinal} when it died,
 * or {not_run: WHY}. */
json_object *rocm_smoke_run(struct probe_ctx *ctx, json_object *data, const char *skip);
/* Its findings, from DATA's "smoke" member. */
void rocm_smoke_findings(struct probe_ctx *ctx, json_object *data);

/* ---- the HIP peer check (rocm_p2p.c) ---- */

extern const struct check rocm_p2p_checks[];
extern const size_t rocm_p2p_n_checks;
/* Every ordered pair of the HIP devices that passed DATA's smoke test, in a child: a new object {pairs: [{from,
 * to, status: pass|unsupported|corrupt|failed|hang|crash, can_access_peer, bytes, wrong_words, first_wrong_offset,
 * ms, bandwidth_gbps, failed_call, error_code, error_name}], devices: [{ordinal, pci_bus_id}], error, detail},
 * or {pairs: [], not_run: WHY}. */
json_object *rocm_p2p_run(struct probe_ctx *ctx, json_object *data);
/* Its findings and summary lines in SEC, from P2P (rocm_p2p_run's, or a snapshot's). */
void rocm_p2p_report(struct probe_ctx *ctx, struct report_section *sec, json_object *p2p);

/* ---- findings (rocm_findings.c) ---- */

extern const struct check rocm_checks[];
extern const size_t rocm_n_checks;
void rocm_findings(struct probe_ctx *ctx, json_object *data, const struct result_pci *pci_devs);
/* Is PCI device D (an entry of the pci section's devices) an AMD compute GPU or accelerator? */
bool rocm_is_amd_gpu(const struct result_pci_dev *d);

/* ---- result, verdict, --require, labels, text (rocm_verdict.c) ---- */

extern const struct report_result_ops result_rocm_ops;
extern const struct probe_require rocm_requires[];
void rocm_verdict(struct report *r, struct doctor_lines *out);
void rocm_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);
void rocm_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
