/* cuda_driver.h: the cuda probe's driver-API part: the child, its parsers, its findings, the wheel table. */
#ifndef GPUCHECKUP_CUDA_DRIVER_H
#define GPUCHECKUP_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "cuda_internal.h"
#include "results/result_pci.h"

/* Isolate work (ARG unused): dlopen("libcuda.so.1"), cuInit(0), describe every device. Returns the
 * object that cuda.c turns into data["driver"] and data["devices"] (sanitised there). */
json_object *cuda_driver_child(void *arg);

/* "580.159.04" for "libcuda.so.580.159.04" (heap, caller frees); NULL for any other name. */
char *cuda_driver_file_version(const char *base);

/* Normalise a CUDA PCI bus id ("00000000:00:06.0") to "0000:00:06.0" in OUT (LEN >= 24). 0, or -1
 * when TEXT is not a bus id. */
int cuda_driver_normalize_busid(const char *text, char *out, size_t len);

/* One run of the probe: what the driver-API findings (cuda_findings.c) need from cuda.c. */
struct cuda_run {
    struct probe_ctx *ctx;
    struct report_section *sec;
    struct cuda_facts facts;
    const struct result_pci *pci_devs; /* the pci facts when they list the bus's devices (borrowed), else NULL */
    bool pci_known;
    int uvm_loaded;
};

/* The driver-API part's catalogue rows (cuda.*, besides NVML, libraries and smoke). */
extern const struct check cuda_driver_checks[];
extern const size_t cuda_driver_n_checks;

/* The driver-API findings (cuda_findings.c), from the driver child's object DRV ("library", "cuinit",
 * "dlopen_error", "missing_symbol") and the report's DEVICES array:
 * cuda_findings_secure_boot: an NVIDIA GPU without the nvidia module while Secure Boot is on (the module
 * was refused); cuda_findings_no_library: libcuda.so.1 could not be loaded; cuda_findings_loaded: it
 * loaded: stub, compat, version mismatch, cuInit codes, devices. */
void cuda_findings_secure_boot(struct cuda_run *cr);
void cuda_findings_no_library(struct cuda_run *cr, json_object *drv);
void cuda_findings_loaded(struct cuda_run *cr, json_object *drv, json_object *devices);

/* The CUDA text printer (cuda_text.c). */
void cuda_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
