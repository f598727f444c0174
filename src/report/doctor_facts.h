/* doctor_facts.h: reads of the probes' sections for the verdict and the probes' --require evaluators. */
#ifndef GPUCHECKUP_DOCTOR_FACTS_H
#define GPUCHECKUP_DOCTOR_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"

/* DATA of section NAME when it ran ok, else NULL. */
json_object *doctor_data(const struct report *r, const char *name);

/* Distinct physical GPUs proven to compute through any API (the compute paths: the OpenCL smoke test's
 * GPUs, the CUDA smoke test's devices...), one per PCI address (devices without one count once each);
 * LABEL (LEN bytes, may be NULL) gets the first, "ADDR NAME (API)", or "" when there is none. */
size_t doctor_gpu_count(const struct report *r, char *label, size_t len);

struct compute_paths;
/* True when every compute GPU on the PCI bus (of VENDOR, a vendor table name, unless NULL) is served by a
 * compute path of an API other than OTHER_THAN (NULL: any) that did not fail (passed, or enumerated and
 * untested); *VIA gets the first such path's API label. False when there is no such GPU. */
bool doctor_gpus_served(const struct report *r, const struct compute_paths *ps, const char *vendor,
                        const char *other_than, const char **via);

/* How many compute GPUs the PCI bus has (a probe's bus_gpus over its section), or -1 when no section that
 * knows the bus ran. */
long doctor_bus_gpu_count(const struct report *r);

/* "ADDR NAME" ("0000:01:00.0 NVIDIA H100") in BUF (LEN bytes): either may be NULL (no address; "device"). */
const char *doctor_device_label(const char *addr, const char *name, char *buf, size_t len);

/* A "best version >= wanted" requirement: BEST and WANT as major * SCALE + minor (BEST < 0: none is
 * known, and NONE is the detail). Otherwise the detail is "WHAT M.m (LABEL), M.m needed". Returns
 * whether it is met; *DETAIL is a new string. */
bool doctor_req_version(int best, int want, int scale, const char *what, const char *label, const char *none,
                        char **detail);

#endif
