/* result_opencl.h: the opencl probe's typed facts other probes read: each platform's name and its devices' types. */
#ifndef GPUCHECKUP_RESULT_OPENCL_H
#define GPUCHECKUP_RESULT_OPENCL_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"

/* Issue 38's first step for this section, as result_pci: the facts others read, typed, beside the JSON the
 * probe still builds as data; no to_json, so the JSON printed is the data, byte for byte; the probe's own
 * section (as filtered by --device/--prop) and a captured one are read by one parser that takes nothing. */

/* One data.platforms[].devices[] entry. */
struct result_opencl_dev {
    bool gpu, cpu, accelerator; /* its "type" list names GPU, CPU, ACCELERATOR */
    char *name;
    char *version;              /* "opencl_version" ("3.0"), NULL: unknown */
};

/* One data.platforms[] entry. */
struct result_opencl_platform {
    char *name, *vendor;        /* NULL: unknown */
    struct result_opencl_dev *devs;
    size_t n_devs;
};

struct result_opencl {
    struct result_opencl_platform *platforms;
    size_t n_platforms;
    /* data.platforms as it is (a reference held; NULL when not an array): the members not typed yet (each
     * device's properties and identity), for the shared OpenCL child's device list (cldevices.c) */
    json_object *platforms_json;
};

extern const struct report_result_ops result_opencl_ops;

/* The facts of the opencl section's DATA, or NULL on allocation failure. DATA is left as it is. */
struct result_opencl *result_opencl_read(json_object *data);
/* The opencl facts of R when the opencl section ran ok, else NULL. */
const struct result_opencl *result_opencl_get(const struct report *r);

#endif
