/* result_smoke.h: the smoke probe's typed result: per OpenCL device, its status, precisions and identity. */
#ifndef GPUCHECKUP_RESULT_SMOKE_H
#define GPUCHECKUP_RESULT_SMOKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "report.h"
#include "compute_check.h"
#include "typed.h"

/* A device's outcome: data.devices[].status. */
enum result_smoke_status {
    RESULT_SMOKE_PASS = 0,
    RESULT_SMOKE_FAIL,    /* a wrong result */
    RESULT_SMOKE_ERROR,   /* an OpenCL call failed, or the test process could not start */
    RESULT_SMOKE_TIMEOUT,
    RESULT_SMOKE_CRASH,
    RESULT_SMOKE_SKIPPED, /* not selected, or no time left */
};
extern const struct gc_names result_smoke_status_names;

/* One precision's outcome: data.devices[].precisions.fp32... */
enum result_smoke_prec_status {
    RESULT_SMOKE_PREC_PASS = 0,
    RESULT_SMOKE_PREC_FAIL,
    RESULT_SMOKE_PREC_ERROR,
    RESULT_SMOKE_PREC_NOT_RUN,
    RESULT_SMOKE_PREC_UNSUPPORTED,
    RESULT_SMOKE_PREC_BUILD_FAILED,
};
extern const struct gc_names result_smoke_prec_status_names;


/* Which devices were tested: data.selection. */
enum result_smoke_selection {
    RESULT_SMOKE_SEL_ALL = 0,
    RESULT_SMOKE_SEL_GPU,
};
extern const struct gc_names result_smoke_selection_names;

/* Bits of struct result_smoke_dev.have: the typed members that are known. A live run knows them all;
 * a captured document may lack some, and a member of an unexpected shape stays in REST instead. */
enum {
    RESULT_SMOKE_HAVE_PLATFORM = 1u << 0,
    RESULT_SMOKE_HAVE_DEVICE = 1u << 1,
    RESULT_SMOKE_HAVE_NAME = 1u << 2,
    RESULT_SMOKE_HAVE_TYPE = 1u << 3,
    RESULT_SMOKE_HAVE_PCI = 1u << 4,
    RESULT_SMOKE_HAVE_STATUS = 1u << 5,
    RESULT_SMOKE_HAVE_PRECISIONS = 1u << 6,
    RESULT_SMOKE_HAVE_DETAIL = 1u << 7,
    RESULT_SMOKE_HAVE_STAGE = 1u << 8,
    RESULT_SMOKE_HAVE_ALL = (1u << 9) - 1,
};

struct result_smoke_dev {
    unsigned have;                     /* RESULT_SMOKE_HAVE_* */
    int platform_index, device_index;  /* OpenCL indices */
    char *name;                        /* NULL: unknown */
    char **types;                      /* CL_DEVICE_TYPE names ("GPU"); NULL with n_types 0: unknown */
    size_t n_types;
    bool types_known;
    enum gc_tri gpu;                   /* a GPU by its type (unknown when the type is) */
    char *pci_address;                 /* NULL: unknown */
    enum result_smoke_status status;
    int prec[COMPUTE_N_PREC];     /* enum result_smoke_prec_status, or -1: not listed */
    char *detail;                      /* why, in words; NULL: none */
    char *stage;                       /* where a child that did not answer was; NULL: none */
    json_object *rest;                 /* the members not typed yet (timings, errors, passes, build log),
                                        * an object, owned; printed at their places (result_smoke.c) */
};

/* Bits of struct result_smoke.have. */
enum {
    RESULT_SMOKE_HAVE_SOURCE = 1u << 0,
    RESULT_SMOKE_HAVE_N = 1u << 1,
    RESULT_SMOKE_HAVE_SELECTION = 1u << 2,
    RESULT_SMOKE_HAVE_DEVICES = 1u << 3,
};

struct result_smoke {
    unsigned have;
    char *source;                      /* "opencl" (the opencl section's devices) or "enumeration" */
    int64_t n;                         /* matrix size */
    enum result_smoke_selection selection;
    struct result_smoke_dev *devs;
    size_t n_devs;
};

extern const struct report_result_ops result_smoke_ops;

/* A new empty result (free with result_smoke_ops.free), NULL on allocation failure. */
struct result_smoke *result_smoke_new(void);
/* Append a zeroed device (prec all -1, gpu unknown, rest an empty object); NULL on allocation failure. */
struct result_smoke_dev *result_smoke_add_dev(struct result_smoke *s);
/* Set DEV's type from a JSON array of names (or one name); GPU from it. Unknown when TYPE is NULL.
 * 0, or -1 when TYPE has another shape (DEV's type stays unknown). */
int result_smoke_dev_set_type(struct result_smoke_dev *dev, json_object *type);
/* Set DEV's precisions from a JSON object {"fp32": "pass", ...}. 0, or -1 when it has another shape
 * (unknown key or value, keys out of order): DEV's precisions stay unlisted. */
int result_smoke_dev_set_precisions(struct result_smoke_dev *dev, json_object *prec);
/* DEV's JSON object, members in the report's order. */
json_object *result_smoke_dev_json(const struct result_smoke_dev *dev);

/* The smoke result of R when the smoke section ran ok, else NULL. */
const struct result_smoke *result_smoke_get(const struct report *r);

/* ---- what the verdicts and --require read of it (smoke, opencl) ---- */

/* Devices of R's smoke section that passed (only GPUs with GPU_ONLY; only those WANT accepts when it is not
 * NULL); *FIRST (may be NULL) gets the first. Returns the count. */
size_t result_smoke_passed_devices(const struct report *r, bool gpu_only,
                                   bool (*want)(const struct result_smoke_dev *dev),
                                   const struct result_smoke_dev **first);
/* A smoke device whose fp64 pass passed. */
bool result_smoke_fp64_passed(const struct result_smoke_dev *dev);
/* "0000:01:00.0 NVIDIA A100" for a smoke device (D may be NULL), in BUF. */
const char *result_smoke_label(const struct result_smoke_dev *d, char *buf, size_t len);

#endif
