/* cuda_nvml.h: internals of the cuda probe's NVML part: bounds, DCGM limits, clock-event names, JSON reads. */
#ifndef GPUCHECKUP_CUDA_NVML_H
#define GPUCHECKUP_CUDA_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* Bounds on what a (possibly broken) library can make us loop over or keep. NVML itself supports at
 * most a few dozen GPUs per node; MIG at most 7 GPU instances per GPU (nvml.h: NVML_MAX_GPU_INSTANCES...). */
#define NVML_MAX_DEVICES 256u
#define NVML_MAX_MIG 64u
#define NVML_STR 128
#define NVML_MAX_PROCS 128u /* processes listed per GPU and kind (compute, graphics) */

/* DCGM's retired-page and row-remap limits (NVIDIA/DCGM common/DcgmGPUHardwareLimits.h:
 * DCGM_LIMIT_MAX_RETIRED_PAGES 63, DCGM_LIMIT_MAX_ROW_REMAP_UNCORRECTABLE 512); nvvs/src/Software.cpp
 * (checkPageRetirement, checkRowRemapping) fails a GPU at or above them. */
#define NVML_RETIRED_PAGES_LIMIT 63u
#define NVML_UNC_REMAP_LIMIT 512u

/* Names of the clock event reason bits (nvml.h nvmlClocksEventReason*): the child names the bits set,
 * the parent flags the ones that are a thermal or power problem. */
struct nvml_clock_reason {
    unsigned long long bit;
    const char *name;
    bool problem; /* a thermal or power problem, not normal operation */
};
extern const struct nvml_clock_reason nvml_clock_reasons[];
extern const size_t nvml_n_clock_reasons;

/* The number at KEY of the cleaned child JSON, or -1 when missing or not a non-negative integer. */
int64_t nvml_num(json_object *o, const char *key);
/* What a finding about GPU D is about: its PCI address (as the pci probe names it), else its UUID,
 * else "NVML GPU <index>" (allocated). */
char *nvml_subject(json_object *d);

#endif
