/* result_icd.h: the icd probe's typed facts: the OpenCL loader, each ICD file, its library and driver, what programs see. */
#ifndef GPUCHECKUP_RESULT_ICD_H
#define GPUCHECKUP_RESULT_ICD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"
#include "vendor.h"

/* Issue 38, as result_pci: the probe builds the section as data, then reads it with FROM_JSON, which takes
 * loader, loaders, vendors_dir, vendors_from, icds, ignored_files and combined into the result, a null
 * keeping each place (KEEPS_PLACES). TO_JSON prints their typed members from the struct and the others
 * (times, outputs, malformed lists) from the captured objects the result holds (the *_json members), in
 * the captured order, so the JSON stays byte for byte; env stays in the data. */

/* Bits of struct result_icd.have: the top-level members the result prints (to_json). */
enum {
    RESULT_ICD_HAVE_LOADER = 1u << 0,
    RESULT_ICD_HAVE_LOADERS = 1u << 1,
    RESULT_ICD_HAVE_VENDORS_DIR = 1u << 2,
    RESULT_ICD_HAVE_VENDORS_FROM = 1u << 3,
    RESULT_ICD_HAVE_ICDS = 1u << 4,
    RESULT_ICD_HAVE_IGNORED = 1u << 5,
    RESULT_ICD_HAVE_COMBINED = 1u << 6,
};

/* One OpenCL platform a driver (or the loader, all drivers at once) listed: icds[].platforms[] and
 * combined.platforms[]. */
struct result_icd_platform {
    char *name, *vendor, *version, *icd_suffix; /* NULL: unknown */
    int64_t devices, gpu_devices;               /* -1: unknown */
    enum gc_tri accepted, has_khr_icd;          /* unknown in combined.platforms[] */
};

/* A run that listed platforms: one driver loaded alone (icds[]) or all through the loader (combined). */
struct result_icd_listing {
    char *status;   /* "ok", "duplicate", "missing-library", "not-run"...; NULL: unknown */
    char *detail;   /* why, in words; NULL: none */
    struct result_icd_platform *platforms;
    size_t n_platforms;
    double elapsed_ms; /* < 0: not probed */
};

/* data.icds[]: one driver, from an .icd file or an environment variable. */
struct result_icd_file {
    char *file;      /* the .icd file's path; NULL: named by an environment variable (SOURCE) */
    char *source;    /* "vendors-dir", "OCL_ICD_FILENAMES"... */
    char *library;   /* as the file names it */
    char *resolved;  /* the library file the dynamic loader would open; NULL: not found */
    char *found_via; /* "ld.so.cache", "LD_LIBRARY_PATH"...; NULL: not searched */
    char *vendor;    /* the recognised driver's vendor ("nvidia"); NULL: not recognised */
    bool has_driver; /* the driver members below are known (data.icds[].driver is an object) */
    char *driver_name, *driver_title, *driver_needs, *hardware_detail;
    enum vendor_hw hardware;
    bool absent_hardware; /* a driver for hardware the PCI facts show absent */
    struct result_icd_listing run;
};

/* data.loaders[]: a libOpenCL file the dynamic loader may open. */
struct result_icd_loader_file {
    char *path, *resolved, *source, *name, *version, *kind; /* NULL: unknown */
    bool searched, wins, loadable;
};

struct result_icd {
    unsigned have; /* RESULT_ICD_HAVE_*: 0 for a result read by result_icd_read */
    /* the captured members (references held; NULL when of another shape): what is not typed prints from them */
    json_object *loader_json, *loaders_json, *icds_json, *ignored_json, *combined_json;
    bool has_loader; /* data.loader is an object: the loader that was used */
    char *loader_path, *loader_name, *loader_vendor, *loader_version, *loader_ocl_version, *loader_kind;
    struct result_icd_loader_file *loaders;
    size_t n_loaders;
    char *vendors_dir;  /* NULL: no directory (one file or library) */
    char *vendors_from; /* "default", "OCL_ICD_VENDORS", "loader"... */
    struct result_icd_file *icds;
    size_t n_icds;
    char **ignored_files;
    size_t n_ignored;
    bool has_combined; /* data.combined is an object */
    struct result_icd_listing combined;
};

extern const struct report_result_ops result_icd_ops;

/* The facts of the icd section's DATA, or NULL on allocation failure. DATA is left as it is, and the result
 * prints nothing (HAVE is 0): for a reader of a section that has no result. */
struct result_icd *result_icd_read(json_object *data);
/* Free a result of result_icd_read (NULL is fine). */
void result_icd_free(struct result_icd *r);
/* The icd facts of R when the icd section ran ok, else NULL. */
const struct result_icd *result_icd_get(const struct report *r);
/* "NAME (N devices); NAME (devices unknown)" for a listing's platforms, NULL when none (free it). */
char *result_icd_platforms_text(const struct result_icd_listing *l);

#endif
