/* result_opencl.h: the opencl probe's typed facts other probes read: each platform's name and its devices' types. */
#ifndef GPUCHECKUP_RESULT_OPENCL_H
#define GPUCHECKUP_RESULT_OPENCL_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"

/* Issue 38, as result_cpu: the probe builds the section as data (filtered by --device/--prop), then reads it
 * with FROM_JSON, which types the platforms and leaves a null in data.platforms' place (KEEPS_PLACES); TO_JSON
 * prints each platform's and device's typed members (name, vendor, devices; name, type, opencl_version) from
 * the struct, in their places, and their other members (properties, identity, errors) from the captured
 * objects the struct holds (PLATFORMS_JSON), so the JSON stays byte for byte. A member of another shape
 * prints as it was. */

/* Bits of struct result_opencl_dev.have and result_opencl_platform.have: the typed members that print from
 * the struct (a member of another shape prints from the captured object). */
enum {
    RESULT_OPENCL_HAVE_NAME = 1u << 0,
    RESULT_OPENCL_HAVE_VENDOR = 1u << 1,   /* a platform's */
    RESULT_OPENCL_HAVE_DEVICES = 1u << 2,  /* a platform's */
    RESULT_OPENCL_HAVE_TYPE = 1u << 3,     /* a device's */
    RESULT_OPENCL_HAVE_VERSION = 1u << 4,  /* a device's */
};

/* One data.platforms[].devices[] entry. */
struct result_opencl_dev {
    unsigned have;              /* RESULT_OPENCL_HAVE_* */
    char **types;               /* its "type" list, as it names them ("GPU"); NULL with types_known false: null */
    size_t n_types;
    bool types_known;
    bool gpu, cpu, accelerator; /* its "type" list names GPU, CPU, ACCELERATOR */
    char *name;
    char *version;              /* "opencl_version" ("3.0"), NULL: unknown */
};

/* One data.platforms[] entry. */
struct result_opencl_platform {
    unsigned have;              /* RESULT_OPENCL_HAVE_* */
    char *name, *vendor;        /* NULL: unknown */
    struct result_opencl_dev *devs;
    size_t n_devs;
};

struct result_opencl {
    bool have_platforms;        /* data.platforms (an array) prints from here */
    struct result_opencl_platform *platforms;
    size_t n_platforms;
    /* data.platforms as it was captured (a reference held; NULL when not an array): the members not typed yet
     * (each device's properties and identity), printed at their places and read by the shared OpenCL
     * child's device list (cldevices.c) and the text */
    json_object *platforms_json;
    /* data.enumeration.not_loaded: --health loaded no OpenCL driver (only CPU drivers and drivers for absent
     * hardware are registered), so no platform is no fault */
    bool none_loaded;
};

extern const struct report_result_ops result_opencl_ops;

/* The facts of the opencl section's DATA, or NULL on allocation failure. DATA is left as it is, and the
 * result prints nothing: for a reader of a section that has no result. */
struct result_opencl *result_opencl_read(json_object *data);
/* Free a result of result_opencl_read (NULL is fine). */
void result_opencl_free(struct result_opencl *r);
/* The opencl facts of R when the opencl section ran ok, else NULL. */
const struct result_opencl *result_opencl_get(const struct report *r);

#endif
