/* clquery.c: typed OpenCL queries (enumeration, strings, numbers, extensions, PCI address) through a struct clapi. */
#include "clquery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What to list: the platforms, or the devices of type TYPE on platform P. */
struct clquery_lister {
    const struct clapi *api;
    bool devices;
    cl_platform_id p;
    cl_device_type type;
};

static cl_int clquery_list_call(const struct clquery_lister *l, cl_uint num, void *out, cl_uint *n)
{
    return l->devices ? l->api->clGetDeviceIDs(l->p, l->type, num, out, n) : l->api->clGetPlatformIDs(num, out, n);
}

/* The two-call list protocol (count, then ids), at most MAX ids. cl_platform_id and cl_device_id are
 * both pointers: the list is an array of pointers either way. */
static cl_int clquery_list(const struct clquery_lister *l, cl_uint max, void **ids, cl_uint *n)
{
    *ids = NULL;
    *n = 0;
    cl_uint count = 0; /* some drivers leave it untouched on an error (CL_DEVICE_NOT_FOUND) */
    cl_int e = clquery_list_call(l, 0, NULL, &count);
    if (e != CL_SUCCESS || count == 0)
        return e;
    if (count > max)
        count = max;
    void **list = calloc(count, sizeof(*list));
    if (!list)
        return CL_OUT_OF_HOST_MEMORY;
    cl_uint got = 0;
    e = clquery_list_call(l, count, list, &got);
    if (e != CL_SUCCESS) {
        free(list);
        return e;
    }
    /* Fewer than counted (one gone meanwhile): keep those; more: only COUNT were written. */
    if (got < count)
        count = got;
    if (count == 0) {
        free(list);
        return CL_SUCCESS;
    }
    *ids = list;
    *n = count;
    return CL_SUCCESS;
}

cl_int clquery_platform_ids(const struct clapi *api, cl_platform_id **ids, cl_uint *n)
{
    struct clquery_lister l = {.api = api};
    void *list = NULL;
    cl_int e = clquery_list(&l, CLQUERY_MAX_PLATFORMS, &list, n);
    *ids = list;
    return e;
}

cl_int clquery_device_ids(const struct clapi *api, cl_platform_id p, cl_device_type type, cl_device_id **ids,
                          cl_uint *n)
{
    struct clquery_lister l = {.api = api, .devices = true, .p = p, .type = type};
    void *list = NULL;
    cl_int e = clquery_list(&l, CLQUERY_MAX_DEVICES, &list, n);
    *ids = list;
    return e;
}

/* The two-call string protocol of clGet*Info (size, then value) over either object kind. */
static char *clquery_str(clquery_platform_info_fn pfn, cl_platform_id p, const struct clapi *api, cl_device_id d,
                         cl_uint what, cl_int *err)
{
    cl_int dummy;
    if (!err)
        err = &dummy;
    size_t len = 0;
    *err = pfn ? pfn(p, what, 0, NULL, &len) : api->clGetDeviceInfo(d, what, 0, NULL, &len);
    if (*err != CL_SUCCESS)
        return NULL;
    if (len > CLQUERY_STR_MAX) {
        *err = CL_INVALID_VALUE;
        return NULL;
    }
    char *s = calloc(1, len + 1); /* the NUL a driver may leave out */
    if (!s) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    if (len > 0) {
        *err = pfn ? pfn(p, what, len, s, NULL) : api->clGetDeviceInfo(d, what, len, s, NULL);
        if (*err != CL_SUCCESS) {
            free(s);
            return NULL;
        }
    }
    return s;
}

char *clquery_platform_str_fn(clquery_platform_info_fn fn, cl_platform_id p, cl_platform_info what, cl_int *err)
{
    return clquery_str(fn, p, NULL, NULL, what, err);
}

char *clquery_platform_str(const struct clapi *api, cl_platform_id p, cl_platform_info what, cl_int *err)
{
    return clquery_str(api->clGetPlatformInfo, p, NULL, NULL, what, err);
}

char *clquery_device_str(const struct clapi *api, cl_device_id d, cl_device_info what, cl_int *err)
{
    return clquery_str(NULL, NULL, api, d, what, err);
}

cl_int clquery_device_uint(const struct clapi *api, cl_device_id d, cl_device_info what, size_t size, uint64_t *out)
{
    *out = 0;
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return CL_INVALID_VALUE;
    unsigned char buf[8] = {0};
    size_t got = size;
    cl_int e = api->clGetDeviceInfo(d, what, size, buf, &got);
    if (e != CL_SUCCESS)
        return e;
    if (got > size) /* it claims to have written more than it was given room for */
        return CL_INVALID_VALUE;
    switch (size) {
    case 1: *out = buf[0]; break;
    case 2: { uint16_t v; memcpy(&v, buf, 2); *out = v; break; }
    case 4: { uint32_t v; memcpy(&v, buf, 4); *out = v; break; }
    default: memcpy(out, buf, 8); break;
    }
    return CL_SUCCESS;
}

uint64_t clquery_device_uint_or0(const struct clapi *api, cl_device_id d, cl_device_info what, size_t size)
{
    uint64_t v = 0;
    return clquery_device_uint(api, d, what, size, &v) == CL_SUCCESS ? v : 0;
}

bool clquery_has_ext(const char *exts, const char *ext)
{
    if (!exts || !ext || !*ext)
        return false;
    size_t n = strlen(ext);
    for (const char *p = exts; (p = strstr(p, ext)) != NULL; p += n) {
        bool start = p == exts || p[-1] == ' ' || p[-1] == '\t';
        bool end = p[n] == '\0' || p[n] == ' ' || p[n] == '\t';
        if (start && end)
            return true;
    }
    return false;
}

static bool clquery_in(int64_t v, int64_t max)
{
    return v >= 0 && v <= max;
}

enum clquery_pci_source clquery_pci_format(const struct clquery_pci_raw *raw, char buf[CLQUERY_PCI_LEN])
{
    buf[0] = '\0';
    /* cl_khr_pci_bus_info (OpenCL Extension Specification): cl_device_pci_bus_info_khr holds the
     * domain, bus, device and function as four cl_uint. */
    if (raw->have_khr && clquery_in(raw->khr_domain, 0xffffffffLL) && clquery_in(raw->khr_bus, 0xff) &&
        clquery_in(raw->khr_device, 0x1f) && clquery_in(raw->khr_function, 7)) {
        snprintf(buf, CLQUERY_PCI_LEN, "%04x:%02x:%02x.%x", (unsigned)raw->khr_domain, (unsigned)raw->khr_bus,
                 (unsigned)raw->khr_device, (unsigned)raw->khr_function);
        return CLQUERY_PCI_KHR;
    }
    /* cl_amd_device_attribute_query (AMD's extension text; cl_device_topology_amd in Khronos cl_ext.h):
     * the topology has no domain; 0 is what the driver means on single-domain machines. */
    if (raw->have_amd && clquery_in(raw->amd_bus, 0xff) && clquery_in(raw->amd_device, 0x1f) &&
        clquery_in(raw->amd_function, 7)) {
        snprintf(buf, CLQUERY_PCI_LEN, "0000:%02x:%02x.%x", (unsigned)raw->amd_bus, (unsigned)raw->amd_device,
                 (unsigned)raw->amd_function);
        return CLQUERY_PCI_AMD;
    }
    /* cl_nv_device_attribute_query (query ids as in Khronos cl_ext.h): NVIDIA does not document the
     * slot's encoding; device << 3 | function is how hwloc's include/hwloc/opencl.h decodes it ("used
     * in many other projects"). The domain query exists since CUDA 10.2 (hwloc, same place): older
     * drivers refuse it, and only ran on domain 0. */
    if (raw->have_nv) {
        int64_t domain = raw->have_nv_domain && clquery_in(raw->nv_domain, 0xffffffffLL) ? raw->nv_domain : 0;
        snprintf(buf, CLQUERY_PCI_LEN, "%04x:%02x:%02x.%x", (unsigned)domain, (unsigned)(raw->nv_bus & 0xff),
                 (unsigned)((raw->nv_slot >> 3) & 0x1f), (unsigned)(raw->nv_slot & 7));
        return CLQUERY_PCI_NV;
    }
    return CLQUERY_PCI_NONE;
}

/* CL_DEVICE_TOPOLOGY_AMD's answer: 24 bytes, a cl_uint type (1: PCIe), 17 bytes unused, then bus,
 * device and function, one byte each (cl_device_topology_amd in Khronos cl_ext.h). */
static void clquery_amd_topology(const struct clapi *api, cl_device_id d, struct clquery_pci_raw *raw)
{
    unsigned char topo[24];
    size_t got = 0;
    if (api->clGetDeviceInfo(d, CL_DEVICE_TOPOLOGY_AMD, sizeof(topo), topo, &got) != CL_SUCCESS || got != sizeof(topo))
        return;
    cl_uint type;
    memcpy(&type, topo, sizeof(type));
    if (type != CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD)
        return;
    raw->have_amd = true;
    raw->amd_bus = topo[21];
    raw->amd_device = topo[22];
    raw->amd_function = topo[23];
}

enum clquery_pci_source clquery_device_pci(const struct clapi *api, cl_device_id d, const char *exts,
                                           char buf[CLQUERY_PCI_LEN])
{
    struct clquery_pci_raw raw;
    memset(&raw, 0, sizeof(raw));
    uint64_t v;
    /* Each query is asked only when its extension is listed: an unknown query id is an error at
     * best, and some drivers log it. */
    if (clquery_has_ext(exts, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr info;
        size_t got = 0;
        memset(&info, 0, sizeof(info));
        if (api->clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(info), &info, &got) == CL_SUCCESS &&
            got == sizeof(info)) {
            raw.have_khr = true;
            raw.khr_domain = info.pci_domain;
            raw.khr_bus = info.pci_bus;
            raw.khr_device = info.pci_device;
            raw.khr_function = info.pci_function;
        }
    }
    enum clquery_pci_source src = clquery_pci_format(&raw, buf);
    if (src != CLQUERY_PCI_NONE)
        return src; /* the later queries would not be used */
    if (clquery_has_ext(exts, "cl_amd_device_attribute_query")) {
        clquery_amd_topology(api, d, &raw);
        src = clquery_pci_format(&raw, buf);
        if (src != CLQUERY_PCI_NONE)
            return src;
    }
    if (clquery_has_ext(exts, "cl_nv_device_attribute_query") &&
        clquery_device_uint(api, d, CLQUERY_PCI_BUS_ID_NV, sizeof(cl_uint), &v) == CL_SUCCESS) {
        raw.nv_bus = (int64_t)v;
        if (clquery_device_uint(api, d, CLQUERY_PCI_SLOT_ID_NV, sizeof(cl_uint), &v) == CL_SUCCESS) {
            raw.have_nv = true;
            raw.nv_slot = (int64_t)v;
        }
        if (clquery_device_uint(api, d, CLQUERY_PCI_DOMAIN_ID_NV, sizeof(cl_uint), &v) == CL_SUCCESS) {
            raw.have_nv_domain = true;
            raw.nv_domain = (int64_t)v;
        }
    }
    return clquery_pci_format(&raw, buf);
}

const char *clquery_pci_source_name(enum clquery_pci_source s)
{
    switch (s) {
    case CLQUERY_PCI_KHR: return "cl_khr_pci_bus_info";
    case CLQUERY_PCI_AMD: return "amd_topology";
    case CLQUERY_PCI_NV: return "nvidia_attribute_query";
    case CLQUERY_PCI_NONE: break;
    }
    return NULL;
}

json_object *clquery_type_json(cl_device_type type)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } bits[] = {
        {CL_DEVICE_TYPE_DEFAULT, "DEFAULT"},         {CL_DEVICE_TYPE_CPU, "CPU"},
        {CL_DEVICE_TYPE_GPU, "GPU"},                 {CL_DEVICE_TYPE_ACCELERATOR, "ACCELERATOR"},
        {CL_DEVICE_TYPE_CUSTOM, "CUSTOM"},
    };
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        if (type & bits[i].bit)
            json_object_array_add(a, json_object_new_string(bits[i].name));
    return a;
}

cl_int clquery_none_is_empty(cl_int e)
{
    return e == CL_PLATFORM_NOT_FOUND_KHR || e == CL_DEVICE_NOT_FOUND ? CL_SUCCESS : e;
}
