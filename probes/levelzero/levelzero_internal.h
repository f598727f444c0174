/* levelzero_internal.h: the levelzero probe's private interface: its child, findings and verdict. */
#ifndef GPUCHECKUP_LEVELZERO_INTERNAL_H
#define GPUCHECKUP_LEVELZERO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "probe.h"
#include "results/result_opencl.h"
#include "results/result_pci.h"

/* ---- the child (levelzero_child.c) ---- */

/* Our own declarations of the few types and functions used, from the Level Zero specification's ze_api.h
 * (oneapi-src/level-zero, include/ze_api.h; Debian's libze-dev 1.8.12 has the same layout): the build needs
 * no Level Zero headers and the binary runs without the loader. unit-levelzero compares these layouts with
 * the installed header where it exists. */
typedef uint32_t lz_result;
typedef void *lz_handle;
struct lz_device_properties {  /* ze_device_properties_t */
    uint32_t stype;            /* ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES = 0x3 */
    void *pNext;
    uint32_t type;             /* ze_device_type_t: 1 GPU, 2 CPU, 3 FPGA, 4 MCA, 5 VPU */
    uint32_t vendorId;
    uint32_t deviceId;
    uint32_t flags;            /* ZE_DEVICE_PROPERTY_FLAG_INTEGRATED = 1 */
    uint32_t subdeviceId;
    uint32_t coreClockRate;
    uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts;
    uint32_t maxCommandQueuePriority;
    uint32_t numThreadsPerEU;
    uint32_t physicalEUSimdWidth;
    uint32_t numEUsPerSubslice;
    uint32_t numSubslicesPerSlice;
    uint32_t numSlices;
    uint64_t timerResolution;
    uint32_t timestampValidBits;
    uint32_t kernelTimestampValidBits;
    uint8_t uuid[16];
    char name[256];
};
struct lz_pci_ext_properties { /* ze_pci_ext_properties_t (ZE_extension_pci_properties) */
    uint32_t stype;            /* ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES = 0x10008 */
    void *pNext;
    uint32_t domain, bus, device, function;
    int32_t gen, width;
    int64_t max_bandwidth;
};

/* The child: dlopen libze_loader.so.1, zeInit(0), every driver's API version and devices. ARG unused. */
json_object *levelzero_child(void *arg);
/* "ZE_RESULT_ERROR_UNINITIALIZED" for 0x78000001, NULL for a code the table does not know. */
const char *levelzero_result_name(uint32_t code);

/* ---- the GuC firmware (levelzero_guc.c) ---- */

/* What debugfs guc_info says of the GuC firmware (strings sanitised, truncated to fit). */
struct levelzero_guc_info {
    char firmware[256]; /* the file the kernel selected, relative to /lib/firmware ("i915/dg2_guc_70.bin") */
    char wanted[256];   /* the file it wanted, where it fell back to another; "" otherwise */
    char status[32];    /* intel_uc_fw_status_repr's word: "RUNNING", "MISSING", "LOAD FAIL"... */
};
/* Parse guc_info's TEXT (LEN bytes, need not end in NUL). 0 when a firmware line and its status were found. */
int levelzero_guc_parse(const char *text, size_t len, struct levelzero_guc_info *out);
/* Is STATUS a failure to fetch or load the firmware (MISSING, ERROR, INIT FAIL, LOAD FAIL, FAIL)? */
bool levelzero_guc_failed(const char *status);
/* Add "guc" to each of GPUS (i915 or xe bound; null where debugfs is unreadable), PCI_DEVS naming their cards. */
void levelzero_guc(struct probe_ctx *ctx, json_object *gpus, const struct result_pci *pci_devs);

extern const struct check levelzero_checks[];
extern const size_t levelzero_n_checks;
/* Findings from the section's DATA, the pci facts PCI_DEVS (NULL unless they list the bus's devices) and the
 * opencl facts OPENCL (NULL when that probe did not run ok). */
void levelzero_findings(struct probe_ctx *ctx, json_object *data, const struct result_pci *pci_devs,
                        const struct result_opencl *opencl);

extern const struct report_result_ops result_levelzero_ops;
extern const struct probe_require levelzero_requires[];
void levelzero_verdict(struct report *r, struct doctor_lines *out);
void levelzero_node_labels(const struct report_section *sec,
                           void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);

void levelzero_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
