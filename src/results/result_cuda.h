/* result_cuda.h: the cuda probe's typed facts: driver status and version, devices, CUDA smoke statuses. */
#ifndef GPUCHECKUP_RESULT_CUDA_H
#define GPUCHECKUP_RESULT_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* A first step of issue 13 item 5 for this section: the facts the doctor and --require read, typed,
 * beside the section's JSON, which the probe still builds as data (its parts, cuda_libs and NVML,
 * interleave their members with these). result_cuda_ops has no to_json: the JSON printed is the
 * data; a captured section is read into these facts without taking anything out of it. */

/* data.driver.status: how loading libcuda.so.1 and cuInit(0) went. */
enum result_cuda_driver_status {
    RESULT_CUDA_DRV_OK = 0,
    RESULT_CUDA_DRV_FAILED,          /* the child could not start */
    RESULT_CUDA_DRV_TIMEOUT,
    RESULT_CUDA_DRV_CRASH,
    RESULT_CUDA_DRV_NO_LIBRARY,
    RESULT_CUDA_DRV_MISSING_SYMBOLS,
    RESULT_CUDA_DRV_INIT_FAILED,
};
extern const struct gc_names result_cuda_driver_status_names;

/* data.smoke[].status: one GPU's CUDA smoke test. */
enum result_cuda_smoke_status {
    RESULT_CUDA_SMOKE_PASS = 0,
    RESULT_CUDA_SMOKE_WRONG_RESULT,
    RESULT_CUDA_SMOKE_JIT_FAILED,
    RESULT_CUDA_SMOKE_RUN_FAILED,
    RESULT_CUDA_SMOKE_NO_COMPUTE_API,
    RESULT_CUDA_SMOKE_INIT_FAILED,
    RESULT_CUDA_SMOKE_TIMEOUT,
    RESULT_CUDA_SMOKE_CRASH,
    RESULT_CUDA_SMOKE_NOT_RUN,
    RESULT_CUDA_SMOKE_SKIPPED,
};
extern const struct gc_names result_cuda_smoke_status_names;

struct result_cuda_dev {
    int ordinal;         /* -1: unknown */
    char *name;          /* NULL: unknown */
    char *pci_address;   /* domain:bus:device.function, NULL: unknown */
    int cc;              /* compute capability as major * 10 + minor, -1: unknown */
};

struct result_cuda_smoke {
    int ordinal;         /* the device tested */
    int status;          /* enum result_cuda_smoke_status; -1: missing; -2: a status this version does not know */
    json_object *entry;  /* its data.smoke[] object (a reference held): the measurements, for writers */
};

struct result_cuda {
    int driver_status;   /* enum result_cuda_driver_status, -1: unknown (no driver part) */
    int driver_version;  /* cuDriverGetVersion (13000 = 13.0), -1: unknown */
    struct result_cuda_dev *devs;
    size_t n_devs;
    struct result_cuda_smoke *smoke;
    size_t n_smoke;
    char *smoke_not_run; /* why the CUDA smoke test did not run, NULL when it ran */
    /* The peer check (data.p2p): ordered GPU pairs checked and how many copied right both ways (pass);
     * p2p_not_run: why it did not run (fewer than two GPUs passed the smoke test...), NULL when it ran. */
    int p2p_pairs, p2p_passed;
    char *p2p_not_run;
    char p2p_failing[192]; /* the pairs that did not pass, "0->1, 1->0" (peer_check_add_failing), "" when none */
    /* data.driver.library.path and .version (the libcuda loaded), data.driver.kernel_module_version; NULL:
     * unknown. Read from the section's driver object once it is built (result_cuda_read_driver). */
    char *library_path, *library_version, *kernel_module_version;
    /* data.nvml.devices (a reference held, or NULL): each GPU's NVLinks, for result_cuda_nvlinks */
    json_object *nvml_devices;
};

extern const struct report_result_ops result_cuda_ops;

/* A new result with everything unknown (free with result_cuda_ops.free); NULL on allocation failure. */
struct result_cuda *result_cuda_new(void);
/* The device from the report's device object D (ordinal, name, pci_address, cc_major, cc_minor):
 * appended to R. 0, or -1 on allocation failure. */
int result_cuda_add_dev(struct result_cuda *r, json_object *d);
/* One smoke test's ORDINAL and STATUS (a name from the table, or unknown), and its data.smoke[] ENTRY (may
 * be NULL; a reference is taken): appended. 0 or -1. */
int result_cuda_add_smoke(struct result_cuda *r, int ordinal, const char *status, json_object *entry);

/* The driver's library and kernel module (data.driver.library, .kernel_module_version) of the section's DATA,
 * into R. 0, or -1 on allocation failure. */
int result_cuda_read_driver(struct result_cuda *r, json_object *data);

/* The cuda facts S carries (the probe filling them while it runs), or NULL. */
struct result_cuda *result_cuda_of(struct report_section *s);
/* The cuda facts of R when the cuda section ran ok, else NULL. */
const struct result_cuda *result_cuda_get(const struct report *r);
/* The CUDA smoke status of device ORDINAL, or -1 when it was not tested (or unknown). */
int result_cuda_smoke_of(const struct result_cuda *c, int ordinal);

/* ---- what the verdicts and --require read of it (cuda, frameworks) ---- */

/* Devices of R's cuda section that passed the CUDA smoke test with compute capability >= MIN_CC (-1: any);
 * *FIRST (may be NULL) gets the first. */
size_t result_cuda_passed(const struct report *r, int min_cc, const struct result_cuda_dev **first);
/* cuDriverGetVersion (13000 = 13.0) of R's cuda section, or -1. */
int result_cuda_driver_version(const struct report *r);
/* Why the CUDA smoke test did not run, or NULL when it ran (or the cuda section did not). */
const char *result_cuda_smoke_missing(const struct report *r);
/* The active NVLinks joining the GPUs at PCI addresses A and B ("0000:03:00.0") as NVML reports them: the
 * links of A whose far end is B, or, where both reach NVSwitches, the fewer of their links to switches
 * (every GPU of an NVSwitch fabric reaches every other over all of them). 0: none; -1: NVML did not say
 * (no cuda section, no NVML, a GPU it did not list). */
int result_cuda_nvlinks(const struct result_cuda *c, const char *a, const char *b);

/* "0000:01:00.0 NVIDIA H100" for a CUDA device (D may be NULL), in BUF. */
const char *result_cuda_label(const struct result_cuda_dev *d, char *buf, size_t len);

#endif
