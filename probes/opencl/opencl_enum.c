/* opencl_enum.c: the isolated child's work: every OpenCL platform and device through the system loader, as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clquery.h"
#include "jsonget.h"
#include "opencl_internal.h"
#include "strutil.h"

/* The probe's names for jsonget's readers (its many callers stay as they are). */
const char *ocl_jstr(json_object *o, const char *key)
{
    return jsonget_str(o, key);
}

int64_t ocl_jint(json_object *o, const char *key, int64_t dflt)
{
    return jsonget_int(o, key, dflt);
}

json_object *ocl_jarr(json_object *o, const char *key)
{
    size_t n;
    return jsonget_array(o, key, &n);
}

json_object *ocl_jobj(json_object *o, const char *key)
{
    return jsonget_object(o, key);
}

/* A string value, or a new JSON null (for top-level fields copied from properties). */
static json_object *ocl_copy_string(json_object *props, const char *key)
{
    const char *s = ocl_jstr(props, key);
    return s ? json_object_new_string(s) : NULL;
}

/* Is the number KEY of PROPS present (not an error object)? */
static bool ocl_num(json_object *props, const char *key, int64_t *out)
{
    return jsonget_int_ex(props, key, out);
}

int ocl_device_pci_address(json_object *props, char *buf, size_t len, const char **source)
{
    struct clquery_pci_raw raw;
    memset(&raw, 0, sizeof(raw));
    json_object *khr = ocl_jobj(props, "CL_DEVICE_PCI_BUS_INFO_KHR");
    if (khr && !json_object_object_get_ex(khr, "error", NULL)) {
        raw.have_khr = true;
        raw.khr_domain = ocl_jint(khr, "domain", -1);
        raw.khr_bus = ocl_jint(khr, "bus", -1);
        raw.khr_device = ocl_jint(khr, "device", -1);
        raw.khr_function = ocl_jint(khr, "function", -1);
    }
    json_object *amd = ocl_jobj(props, "CL_DEVICE_TOPOLOGY_AMD");
    const char *type = ocl_jstr(amd, "type");
    if (type && strcmp(type, "PCIe") == 0) {
        raw.have_amd = true;
        raw.amd_bus = ocl_jint(amd, "bus", -1);
        raw.amd_device = ocl_jint(amd, "device", -1);
        raw.amd_function = ocl_jint(amd, "function", -1);
    }
    raw.have_nv = ocl_num(props, "CL_DEVICE_PCI_BUS_ID_NV", &raw.nv_bus) &&
                  ocl_num(props, "CL_DEVICE_PCI_SLOT_ID_NV", &raw.nv_slot);
    raw.have_nv_domain = ocl_num(props, "CL_DEVICE_PCI_DOMAIN_ID_NV", &raw.nv_domain);
    char addr[CLQUERY_PCI_LEN];
    enum clquery_pci_source src = clquery_pci_format(&raw, addr);
    *source = clquery_pci_source_name(src);
    snprintf(buf, len, "%s", addr);
    return src == CLQUERY_PCI_NONE ? -1 : 0;
}

/* Query every legal row of TABLE into a new properties object. PRE holds values already fetched (by row
 * index; consumed). */
static json_object *ocl_query_table(const struct ocl_query_ctx *q, const struct ocl_prop *table, size_t n,
                                    json_object **pre, unsigned version, const char *exts, bool gpu,
                                    cl_platform_id plat, cl_device_id dev)
{
    json_object *props = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *v = pre[i];
        pre[i] = NULL;
        if (!v) {
            if (!ocl_prop_legal(&table[i], version, exts, gpu))
                continue;
            v = ocl_query_prop(q, &table[i], plat, dev);
        }
        json_object_object_add(props, table[i].name, v);
    }
    return props;
}

static size_t ocl_row_index(const struct ocl_prop *table, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

/* Pre-fetch row NAME into PRE (skipped if the table lacks it); returns the value or NULL. */
static json_object *ocl_prefetch(const struct ocl_query_ctx *q, const struct ocl_prop *table, size_t n,
                                 json_object **pre, const char *name, cl_platform_id plat, cl_device_id dev)
{
    size_t i = ocl_row_index(table, n, name);
    if (i == SIZE_MAX)
        return NULL;
    pre[i] = ocl_query_prop(q, &table[i], plat, dev);
    return pre[i];
}

static json_object *ocl_device_json(const struct ocl_query_ctx *q, cl_platform_id plat, cl_device_id dev, size_t index)
{
    const struct ocl_prop *t = ocl_device_props;
    size_t n = ocl_n_device_props;
    json_object **pre = calloc(n, sizeof(*pre));
    if (!pre)
        return NULL;
    json_object *jv = ocl_prefetch(q, t, n, pre, "CL_DEVICE_VERSION", plat, dev);
    json_object *je = ocl_prefetch(q, t, n, pre, "CL_DEVICE_EXTENSIONS", plat, dev);
    json_object *jt = ocl_prefetch(q, t, n, pre, "CL_DEVICE_TYPE", plat, dev);
    unsigned version = ocl_parse_version(json_object_is_type(jv, json_type_string) ? json_object_get_string(jv) : NULL);
    char *exts = str_dup(json_object_is_type(je, json_type_string) ? json_object_get_string(je) : "");
    bool gpu = false;
    json_object *types = json_object_new_array();
    if (json_object_is_type(jt, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(jt); i++) {
            const char *s = json_object_get_string(json_object_array_get_idx(jt, i));
            if (s && str_starts_with(s, "CL_DEVICE_TYPE_"))
                s += strlen("CL_DEVICE_TYPE_");
            if (s && strcmp(s, "GPU") == 0)
                gpu = true;
            json_object_array_add(types, json_object_new_string(s ? s : "?"));
        }
    }
    json_object *props = ocl_query_table(q, t, n, pre, version, exts, gpu, plat, dev);
    free(exts);
    free(pre);

    json_object *d = json_object_new_object();
    json_object_object_add(d, "index", json_object_new_int64((int64_t)index));
    json_object_object_add(d, "name", ocl_copy_string(props, "CL_DEVICE_NAME"));
    json_object_object_add(d, "vendor", ocl_copy_string(props, "CL_DEVICE_VENDOR"));
    int64_t vid;
    if (ocl_num(props, "CL_DEVICE_VENDOR_ID", &vid)) {
        char buf[24];
        snprintf(buf, sizeof(buf), "%04llx", (unsigned long long)vid);
        json_object_object_add(d, "vendor_id", json_object_new_string(buf));
    } else {
        json_object_object_add(d, "vendor_id", NULL);
    }
    json_object_object_add(d, "type", types);
    json_object *av = NULL;
    json_object_object_get_ex(props, "CL_DEVICE_AVAILABLE", &av);
    json_object_object_add(d, "available",
                           json_object_is_type(av, json_type_boolean) ? json_object_new_boolean(json_object_get_boolean(av))
                                                                      : NULL);
    char addr[32];
    const char *source = NULL;
    if (ocl_device_pci_address(props, addr, sizeof(addr), &source) == 0) {
        json_object_object_add(d, "pci_address", json_object_new_string(addr));
        json_object_object_add(d, "pci_address_source", json_object_new_string(source));
    } else {
        json_object_object_add(d, "pci_address", NULL);
        json_object_object_add(d, "pci_address_source", NULL);
    }
    json_object_object_add(d, "uuid", ocl_copy_string(props, "CL_DEVICE_UUID_KHR"));
    unsigned ver = ocl_parse_version(ocl_jstr(props, "CL_DEVICE_VERSION"));
    if (ver) {
        char buf[16];
        snprintf(buf, sizeof(buf), "%u.%u", ver / 100, ver % 100);
        json_object_object_add(d, "opencl_version", json_object_new_string(buf));
    } else {
        json_object_object_add(d, "opencl_version", NULL);
    }
    json_object_object_add(d, "driver_version", ocl_copy_string(props, "CL_DRIVER_VERSION"));
    json_object_object_add(d, "properties", props);
    return d;
}

static json_object *ocl_platform_json(const struct ocl_query_ctx *q, cl_uint index)
{
    cl_platform_id plat = q->platforms[index];
    const struct ocl_prop *t = ocl_platform_props;
    size_t n = ocl_n_platform_props;
    json_object *pre[16] = {NULL};
    if (n > sizeof(pre) / sizeof(pre[0]))
        return NULL;
    json_object *jv = ocl_prefetch(q, t, n, pre, "CL_PLATFORM_VERSION", plat, NULL);
    json_object *je = ocl_prefetch(q, t, n, pre, "CL_PLATFORM_EXTENSIONS", plat, NULL);
    unsigned version = ocl_parse_version(json_object_is_type(jv, json_type_string) ? json_object_get_string(jv) : NULL);
    char *exts = str_dup(json_object_is_type(je, json_type_string) ? json_object_get_string(je) : "");
    json_object *props = ocl_query_table(q, t, n, pre, version, exts, false, plat, NULL);
    free(exts);

    json_object *p = json_object_new_object();
    json_object_object_add(p, "index", json_object_new_int64(index));
    json_object_object_add(p, "name", ocl_copy_string(props, "CL_PLATFORM_NAME"));
    json_object_object_add(p, "vendor", ocl_copy_string(props, "CL_PLATFORM_VENDOR"));
    json_object_object_add(p, "version", ocl_copy_string(props, "CL_PLATFORM_VERSION"));
    json_object_object_add(p, "icd_suffix", ocl_copy_string(props, "CL_PLATFORM_ICD_SUFFIX_KHR"));
    json_object_object_add(p, "properties", props);

    json_object *devs = json_object_new_array();
    cl_uint nd = 0; /* some drivers leave it untouched on CL_DEVICE_NOT_FOUND */
    cl_int err = q->api->clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (err == CL_SUCCESS && nd > 0) {
        cl_device_id *ids = calloc(nd, sizeof(*ids));
        cl_uint got = 0;
        err = ids ? q->api->clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, nd, ids, &got) : CL_OUT_OF_HOST_MEMORY;
        if (err == CL_SUCCESS) {
            if (got == 0 || got > nd)
                got = nd;
            for (cl_uint i = 0; i < got; i++) {
                json_object *d = ocl_device_json(q, plat, ids[i], i);
                if (d)
                    json_object_array_add(devs, d);
            }
        }
        free(ids);
    }
    json_object_object_add(p, "devices", devs);
    if (err != CL_SUCCESS) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "code", json_object_new_int(err));
        json_object_object_add(e, "name", json_object_new_string(clapi_error_name(err)));
        json_object_object_add(p, "error", e);
    } else {
        json_object_object_add(p, "error", NULL);
    }
    return p;
}

static json_object *ocl_enumeration(const char *status, const char *detail)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "status", json_object_new_string(status));
    json_object_object_add(e, "detail", detail ? json_object_new_string(detail) : NULL);
    return e;
}

json_object *ocl_enumerate(void *arg)
{
    (void)arg;
    json_object *out = json_object_new_object();
    json_object *plats = json_object_new_array();
    struct clapi api;
    char err[512];
    if (clapi_open(&api, NULL, err, sizeof(err)) != 0) {
        json_object_object_add(out, "loader", NULL);
        json_object_object_add(out, "enumeration", ocl_enumeration("no-loader", str_sanitize(err)));
        json_object_object_add(out, "platforms", plats);
        return out;
    }
    json_object_object_add(out, "loader", api.path ? json_object_new_string(str_sanitize(api.path)) : NULL);

    cl_uint n = 0;
    cl_int e = api.clGetPlatformIDs(0, NULL, &n);
    cl_platform_id *ids = NULL;
    if (e == CL_SUCCESS && n > 0) {
        ids = calloc(n, sizeof(*ids));
        cl_uint got = 0;
        e = ids ? api.clGetPlatformIDs(n, ids, &got) : CL_OUT_OF_HOST_MEMORY;
        if (e == CL_SUCCESS && got < n)
            n = got;
    }
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && n == 0)) {
        snprintf(err, sizeof(err), "clGetPlatformIDs: %s (no platform)",
                 e == CL_SUCCESS ? "0 platforms" : clapi_error_name(e));
        json_object_object_add(out, "enumeration", ocl_enumeration("ok", err));
    } else if (e != CL_SUCCESS) {
        snprintf(err, sizeof(err), "clGetPlatformIDs failed: %s (%d)", clapi_error_name(e), (int)e);
        json_object_object_add(out, "enumeration", ocl_enumeration("error", err));
    } else {
        struct ocl_query_ctx q = {.api = &api, .platforms = ids, .n_platforms = n};
        for (cl_uint i = 0; i < n; i++) {
            json_object *p = ocl_platform_json(&q, i);
            if (p)
                json_object_array_add(plats, p);
        }
        json_object_object_add(out, "enumeration", ocl_enumeration("ok", NULL));
    }
    json_object_object_add(out, "platforms", plats);
    /* No clapi_close and no free: the child ends right after, and unloading vendor drivers is where
     * some of them crash. */
    return out;
}

const struct clonce_part opencl_clonce_part = {
    .name = "opencl",
    .enumerate = ocl_enumerate,
};
