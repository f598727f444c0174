/* clquery.h: typed OpenCL queries (enumeration, strings, numbers, extensions, PCI address) through a struct clapi. */
#ifndef GPUCHECKUP_CLQUERY_H
#define GPUCHECKUP_CLQUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "clapi.h"

/* Longest string property kept (extension lists run to a few KiB; more is a broken driver). */
#define CLQUERY_STR_MAX (1u << 20)
/* Most platforms, and devices of one platform, taken from a driver's count (more are not listed). */
#define CLQUERY_MAX_PLATFORMS 64
#define CLQUERY_MAX_DEVICES 256

/* NVIDIA query ids (cl_nv_device_attribute_query) the Khronos headers of Debian 12 do not carry;
 * values as in later Khronos cl_ext.h and hwloc's include/hwloc/opencl.h. */
#define CLQUERY_PCI_BUS_ID_NV 0x4008
#define CLQUERY_PCI_SLOT_ID_NV 0x4009
#define CLQUERY_PCI_DOMAIN_ID_NV 0x400A

/* ---- enumeration ----
 * Both return the driver's error (CL_PLATFORM_NOT_FOUND_KHR and CL_DEVICE_NOT_FOUND included: the
 * caller decides whether "none" is an error) with *IDS NULL and *N 0; or CL_SUCCESS with *N ids in a
 * heap array (NULL when there are none), at most the CLQUERY_MAX_* above. */
cl_int clquery_platform_ids(const struct clapi *api, cl_platform_id **ids, cl_uint *n);
cl_int clquery_device_ids(const struct clapi *api, cl_platform_id p, cl_device_type type, cl_device_id **ids,
                          cl_uint *n);

/* clGetPlatformInfo's shape (a loader's entry point, or cl_api_clGetPlatformInfo from a dispatch table). */
typedef cl_int (*clquery_platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);

/* ---- properties ----
 * A string property as a heap string (NUL-terminated whatever the driver wrote; "" for an empty
 * answer), or NULL with *ERR (may be NULL) set to the driver's error, CL_INVALID_VALUE for an answer
 * longer than CLQUERY_STR_MAX, CL_OUT_OF_HOST_MEMORY. FN is any clGetPlatformInfo-shaped entry point
 * (a loader's, or a vendor driver's own from its dispatch table). */
char *clquery_platform_str_fn(clquery_platform_info_fn fn, cl_platform_id p, cl_platform_info what, cl_int *err);
char *clquery_platform_str(const struct clapi *api, cl_platform_id p, cl_platform_info what, cl_int *err);
char *clquery_device_str(const struct clapi *api, cl_device_id d, cl_device_info what, cl_int *err);

/* An unsigned number (cl_uint, cl_ulong, size_t, cl_bool, a bit field such as cl_device_type) of
 * SIZE bytes (1, 2, 4 or 8) into *OUT. Returns CL_SUCCESS, the driver's error, or CL_INVALID_VALUE
 * when SIZE is not one of those or the driver answers with more bytes than SIZE; *OUT is 0 then. */
cl_int clquery_device_uint(const struct clapi *api, cl_device_id d, cl_device_info what, size_t size,
                           uint64_t *out);
/* The same, with 0 for any failure (for values where 0 already means "unknown"). */
uint64_t clquery_device_uint_or0(const struct clapi *api, cl_device_id d, cl_device_info what, size_t size);

/* True when the space-separated extension list EXTS (NULL: none) names EXT as a whole token. */
bool clquery_has_ext(const char *exts, const char *ext);

/* ---- PCI address ---- */

enum clquery_pci_source {
    CLQUERY_PCI_NONE = 0,
    CLQUERY_PCI_KHR, /* cl_khr_pci_bus_info */
    CLQUERY_PCI_AMD, /* cl_amd_device_attribute_query: CL_DEVICE_TOPOLOGY_AMD */
    CLQUERY_PCI_NV,  /* cl_nv_device_attribute_query: CL_DEVICE_PCI_BUS_ID_NV / SLOT_ID_NV / DOMAIN_ID_NV */
};

/* What a device answered to each PCI query, as plain numbers (have_*: the query was answered). The
 * opencl probe fills it from its decoded properties; clquery_device_pci from live queries. */
struct clquery_pci_raw {
    bool have_khr;
    int64_t khr_domain, khr_bus, khr_device, khr_function;
    bool have_amd;   /* the topology was answered and its type is PCIe */
    int64_t amd_bus, amd_device, amd_function;
    bool have_nv;    /* both bus and slot were answered */
    int64_t nv_bus, nv_slot;
    bool have_nv_domain;
    int64_t nv_domain;
};

/* "dddd:bb:dd.f" with a domain of up to 8 hex digits, plus the NUL. */
#define CLQUERY_PCI_LEN 24

/* The address from RAW: the KHR answer, then the AMD topology, then NVIDIA's bus and slot, the first
 * whose fields are in range. Writes BUF (CLQUERY_PCI_LEN bytes) and returns the source, or
 * CLQUERY_PCI_NONE with BUF "". */
enum clquery_pci_source clquery_pci_format(const struct clquery_pci_raw *raw, char buf[CLQUERY_PCI_LEN]);

/* Ask device D for its PCI address by every query its extension list EXTS offers; as above. */
enum clquery_pci_source clquery_device_pci(const struct clapi *api, cl_device_id d, const char *exts,
                                           char buf[CLQUERY_PCI_LEN]);

/* "cl_khr_pci_bus_info", "amd_topology", "nvidia_attribute_query" (the JSON names), or NULL. */
const char *clquery_pci_source_name(enum clquery_pci_source s);

/* The names of the bits of a cl_device_type value, as a new JSON array: ["GPU"], ["CPU", "DEFAULT"]. */
json_object *clquery_type_json(cl_device_type type);

/* E, or CL_SUCCESS where E says "none" (CL_PLATFORM_NOT_FOUND_KHR, CL_DEVICE_NOT_FOUND): an empty list is
 * no failure. */
cl_int clquery_none_is_empty(cl_int e);

#endif
