/* opencl_internal.h: declarations shared by the opencl probe's files (property table, enumeration, correlation, text). */
#ifndef GPUCHECKUP_OPENCL_INTERNAL_H
#define GPUCHECKUP_OPENCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "clapi.h"
#include "clonce_parts.h"
#include "probe.h"
#include "results/result_opencl.h"
#include "results/result_pci.h"

/* How a property's raw bytes become a JSON value. */
enum ocl_type {
    OCL_T_STR,        /* char[] -> string */
    OCL_T_NUM,        /* cl_uint, cl_ulong, size_t (read by the size the driver returns) -> number */
    OCL_T_BOOL,       /* cl_bool -> true/false */
    OCL_T_BITS,       /* bit field -> array of symbolic names (unknown bits as "0x...") */
    OCL_T_ENUM,       /* enumerated value -> one symbolic name */
    OCL_T_NUMS,       /* size_t[] -> array of numbers */
    OCL_T_PARTITION,  /* cl_device_partition_property[] -> array of names */
    OCL_T_VERSION,    /* packed cl_version -> "major.minor.patch" */
    OCL_T_NAMEVER,    /* cl_name_version[] -> [{name, version}] */
    OCL_T_UUID,       /* 16 bytes -> "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    OCL_T_LUID,       /* 8 bytes -> 16 hex digits */
    OCL_T_PCI_BUS,    /* cl_khr_pci_bus_info struct -> {domain, bus, device, function} */
    OCL_T_AMD_TOPO,   /* AMD topology union -> {type, bus, device, function} */
    OCL_T_INTEL_IP,   /* Intel IP version (arch.release.revision packing) -> "a.r.v" */
    OCL_T_PLATFORM,   /* cl_platform_id -> index of that platform in platforms[] (null if not found) */
    OCL_T_DEVICE,     /* cl_device_id -> null for a root device (no parent), "sub-device" otherwise */
};

/* Text formatting hints (text output only; JSON always carries the plain value). */
enum ocl_unit { OCL_U_NONE = 0, OCL_U_BYTES, OCL_U_MHZ, OCL_U_NS, OCL_U_KIB, OCL_U_HEX };

struct ocl_name {
    uint64_t value;
    const char *name;
};

struct ocl_names {
    const struct ocl_name *v;
    size_t n;
};

/* Versions as major * 100 + minor. */
#define OCL_V(maj, min) ((maj) * 100 + (min))
#define OCL_NEVER 0xffff /* "since" of a property legal only through its extension */

/* One row of the property table. */
struct ocl_prop {
    const char *name;             /* symbolic name: the JSON key */
    unsigned id;                  /* query id */
    enum ocl_type type;
    const struct ocl_names *names; /* OCL_T_BITS / OCL_T_ENUM / OCL_T_PARTITION */
    unsigned since;               /* legal from this version (OCL_V) ... */
    unsigned until;               /* ... up to, excluding, this one (0: no end) ... */
    const char *ext;              /* ... or whenever this extension is listed (may be NULL) */
    bool gpu_only;                /* legal on GPU devices only (vendor GPU queries that fail on CPUs) */
    enum ocl_unit unit;
    const char *label;            /* for people: "Max compute units" */
};

extern const struct ocl_prop ocl_platform_props[];
extern const size_t ocl_n_platform_props;
extern const struct ocl_prop ocl_device_props[];
extern const size_t ocl_n_device_props;

/* The row called NAME (platform or device table), or NULL. */
const struct ocl_prop *ocl_prop_find(const char *name);

/* "OpenCL 3.0 PoCL ..." -> 300; 0 when S does not start with "OpenCL M.m". */
unsigned ocl_parse_version(const char *s);
/* True when row P may be queried on something of VERSION with extensions EXTS (GPU: device type). */
bool ocl_prop_legal(const struct ocl_prop *p, unsigned version, const char *exts, bool gpu);

/* Enumeration context for the child: the loaded API and the platform list (for OCL_T_PLATFORM). */
struct ocl_query_ctx {
    const struct clapi *api;
    const cl_platform_id *platforms;
    cl_uint n_platforms;
};

/* Query row P on platform PLAT (DEV NULL) or device DEV; returns a new JSON value: the typed value,
 * or {"error": "CL_...", "code": n} when the driver refused. Caller owns the result. */
json_object *ocl_query_prop(const struct ocl_query_ctx *q, const struct ocl_prop *p, cl_platform_id plat,
                            cl_device_id dev);

/* {"error": NAME, "code": CODE}; caller owns. */
json_object *ocl_error_value(cl_int code);

/* The PCI address of a device from its decoded PROPS: cl_khr_pci_bus_info, then the AMD topology, then
 * the NVIDIA bus/slot/domain queries. Writes "dddd:bb:dd.f" into BUF and the method into *SOURCE
 * ("cl_khr_pci_bus_info", "amd_topology", "nvidia_attribute_query"); returns 0, or -1 when none applies. */
int ocl_device_pci_address(json_object *props, char *buf, size_t len, const char **source);

/* The isolated child's work (alone, or as the shared child's opencl part): enumerate every platform and
 * device through the system loader and return the opencl section's facts (loader, enumeration,
 * platforms). ARG is unused. The returned object is owned by the caller (the isolation helper). */
json_object *ocl_enumerate(void *arg);
/* The opencl probe's part of the shared child (opencl_enum.c), listed in probe_opencl. */
extern const struct clonce_part opencl_clonce_part;

/* Cross-checks (pure: reads only its arguments). OCL is the opencl section's data (enumeration,
 * platforms); PCI is the pci section's data (devices[]) or NULL when the pci probe did not run or
 * failed. Adds cl.* findings to R; returns how many. */
size_t ocl_correlate(json_object *ocl, const struct result_pci *pci, struct report *r);

/* Text printer of the opencl section (clinfo-like details, or `list` lines when T->command is
 * "list"). */
void ocl_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

/* Small JSON readers that tolerate missing keys and wrong types (the child's JSON is not trusted). */
const char *ocl_jstr(json_object *o, const char *key);   /* NULL unless a string */
int64_t ocl_jint(json_object *o, const char *key, int64_t dflt);
json_object *ocl_jarr(json_object *o, const char *key);  /* NULL unless an array */
json_object *ocl_jobj(json_object *o, const char *key);  /* NULL unless an object */

/* The --require names the opencl probe answers (opencl_require.c). */
extern const struct probe_require ocl_requires[];

#endif
