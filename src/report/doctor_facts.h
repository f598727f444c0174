/* doctor_facts.h: reads of the probes' sections for the verdict and the probes' --require evaluators. */
#ifndef GPUCHECKUP_DOCTOR_FACTS_H
#define GPUCHECKUP_DOCTOR_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "results/result_cuda.h"
#include "results/result_smoke.h"

/* DATA of section NAME when it ran ok, else NULL. */
json_object *doctor_data(const struct report *r, const char *name);

/* The smoke section (its typed result): devices that passed (only GPUs with GPU_ONLY; only those WANT
 * accepts when it is not NULL); *FIRST (may be NULL) gets the first. Returns the count. */
size_t doctor_passed_devices(const struct report *r, bool gpu_only, bool (*want)(const struct result_smoke_dev *dev),
                             const struct result_smoke_dev **first);
/* A smoke device whose fp64 pass passed. */
bool doctor_fp64_passed(const struct result_smoke_dev *dev);
/* Distinct physical GPUs proven to compute through any API (the compute paths: the OpenCL smoke test's
 * GPUs, the CUDA smoke test's devices...), one per PCI address (devices without one count once each);
 * LABEL (LEN bytes, may be NULL) gets the first, "ADDR NAME (API)", or "" when there is none. */
size_t doctor_gpu_count(const struct report *r, char *label, size_t len);

/* The cuda section (its typed facts, result_cuda_get): devices that passed the CUDA smoke test with
 * compute capability >= MIN_CC (-1: any); *FIRST (may be NULL) gets the first. */
size_t doctor_cuda_passed(const struct report *r, int min_cc, const struct result_cuda_dev **first);
/* cuDriverGetVersion (13000 = 13.0), or -1. */
int doctor_cuda_driver_version(const struct report *r);
/* Why the CUDA smoke test did not run, or NULL when it ran. */
const char *doctor_cuda_smoke_missing(const struct report *r);
struct compute_paths;
/* True when every compute GPU on the PCI bus (of VENDOR, a vendor table name, unless NULL) is served by a
 * compute path of an API other than OTHER_THAN (NULL: any) that did not fail (passed, or enumerated and
 * untested); *VIA gets the first such path's API label. False when there is no such GPU. */
bool doctor_gpus_served(const struct report *r, const struct compute_paths *ps, const char *vendor,
                        const char *other_than, const char **via);

/* How many compute GPUs the PCI bus has (a probe's bus_gpus over its section), or -1 when no section that
 * knows the bus ran. */
long doctor_bus_gpu_count(const struct report *r);

/* "0000:01:00.0 NVIDIA H100" for a CUDA device, in BUF. */
const char *doctor_cuda_label(const struct result_cuda_dev *d, char *buf, size_t len);
/* The same for a smoke device. */
const char *doctor_smoke_label(const struct result_smoke_dev *d, char *buf, size_t len);

/* A "best version >= wanted" requirement: BEST and WANT as major * SCALE + minor (BEST < 0: none is
 * known, and NONE is the detail). Otherwise the detail is "WHAT M.m (LABEL), M.m needed". Returns
 * whether it is met; *DETAIL is a new string. */
bool doctor_req_version(int best, int want, int scale, const char *what, const char *label, const char *none,
                        char **detail);

#endif
