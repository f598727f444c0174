/* icd_child.c: what the icd probe runs inside isolated children: vendor libraries, loaders, combined view. */
#include "icd_impl.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include "clapi.h"
#include "clquery.h"
#include "jsonnum.h"
#include "jsonstr.h"
#include "strutil.h"

/* Most platforms one child reports (a driver claiming millions is answered with the first ones). */
#define ICD_MAX_PLATFORMS 64

/* clGetICDLoaderInfoOCLICD (ocl-icd's extension, also in Khronos since 2023): not in the headers. */
typedef cl_int (*icd_loader_info_fn)(cl_uint param, size_t size, void *value, size_t *size_ret);
enum { ICD_ICDL_OCL_VERSION = 1, ICD_ICDL_VERSION = 2, ICD_ICDL_NAME = 3, ICD_ICDL_VENDOR = 4 };

/* cl_khr_icd2: a platform whose dispatch table carries this tag wants its functions looked up. */
#if UINTPTR_MAX > 0xffffffffu
#define ICD_ICD2_TAG ((uintptr_t)0x4F50454E434C3331ull)
#else
#define ICD_ICD2_TAG ((uintptr_t)0x434C3331u)
#endif
typedef void *(*icd_gfafp_fn)(cl_platform_id platform, const char *name);

typedef void *(*icd_gefa_fn)(const char *name);

static const char *const icd_stage_names[] = {
    [ICD_STAGE_START] = "start",
    [ICD_STAGE_DLOPEN] = "dlopen",
    [ICD_STAGE_GEFA] = "clGetExtensionFunctionAddress",
    [ICD_STAGE_ENTRY] = "clIcdGetPlatformIDsKHR",
    [ICD_STAGE_PLATFORM_INFO] = "clGetPlatformInfo",
    [ICD_STAGE_DEVICE_IDS] = "clGetDeviceIDs",
    [ICD_STAGE_LOADER_INFO] = "clGetICDLoaderInfoOCLICD",
    [ICD_STAGE_PLATFORM_IDS] = "clGetPlatformIDs",
    [ICD_STAGE_DONE] = "done",
};

const char *icd_stage_name(int stage)
{
    stage &= 0xff;
    if (stage < 0 || (size_t)stage >= sizeof(icd_stage_names) / sizeof(icd_stage_names[0]))
        return "start";
    return icd_stage_names[stage];
}

static void icd_set_stage(const struct icd_child_arg *a, int base, int stage)
{
    if (a->stage)
        *a->stage = base + stage;
}

/* Add KEY (a string property) to O, or KEY_code when the query fails. */
static void icd_add_info(json_object *o, const char *key, cl_api_clGetPlatformInfo fn, cl_platform_id p,
                         cl_platform_info what, char **keep)
{
    cl_int err = CL_SUCCESS;
    char *s = clquery_platform_str_fn(fn, p, what, &err);
    json_object_object_add(o, key, jsonstr_sanitized(s));
    if (!s && err != CL_SUCCESS) {
        char k[64];
        snprintf(k, sizeof(k), "%s_code", key);
        json_object_object_add(o, k, json_object_new_int(err));
    }
    if (keep)
        *keep = s;
    else
        free(s);
}

/* Describe platform P using its own functions (INFO, IDS); STAGE_BASE marks progress. */
static json_object *icd_describe_platform(const struct icd_child_arg *a, int base, cl_platform_id p,
                                          cl_api_clGetPlatformInfo info, cl_api_clGetDeviceIDs ids)
{
    json_object *o = json_object_new_object();
    if (!info) {
        json_object_object_add(o, "error", json_object_new_string("no clGetPlatformInfo in its dispatch table"));
        return o;
    }
    icd_set_stage(a, base, ICD_STAGE_PLATFORM_INFO);
    icd_add_info(o, "name", info, p, CL_PLATFORM_NAME, NULL);
    icd_add_info(o, "vendor", info, p, CL_PLATFORM_VENDOR, NULL);
    icd_add_info(o, "version", info, p, CL_PLATFORM_VERSION, NULL);
    icd_add_info(o, "icd_suffix", info, p, CL_PLATFORM_ICD_SUFFIX_KHR, NULL);
    char *ext = NULL;
    cl_int err = CL_SUCCESS;
    ext = clquery_platform_str_fn(info, p, CL_PLATFORM_EXTENSIONS, &err);
    if (ext) {
        /* ocl-icd checks with strstr, so a substring is what counts */
        bool has = strstr(ext, "cl_khr_icd") != NULL;
        json_object_object_add(o, "has_khr_icd", json_object_new_boolean(has));
        free(ext);
    } else {
        json_object_object_add(o, "has_khr_icd", NULL);
        json_object_object_add(o, "extensions_code", json_object_new_int(err));
    }
    if (!ids) {
        json_object_object_add(o, "devices", NULL);
        json_object_object_add(o, "gpu_devices", NULL);
        return o;
    }
    icd_set_stage(a, base, ICD_STAGE_DEVICE_IDS);
    cl_uint n = 0;
    err = ids(p, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND)
        n = 0, err = CL_SUCCESS;
    if (err == CL_SUCCESS) {
        json_object_object_add(o, "devices", json_object_new_int64((int64_t)n));
    } else {
        json_object_object_add(o, "devices", NULL);
        json_object_object_add(o, "devices_code", json_object_new_int(err));
    }
    cl_uint g = 0;
    err = ids(p, CL_DEVICE_TYPE_GPU, 0, NULL, &g);
    if (err == CL_DEVICE_NOT_FOUND)
        g = 0, err = CL_SUCCESS;
    json_object_object_add(o, "gpu_devices", err == CL_SUCCESS ? json_object_new_int64((int64_t)g) : NULL);
    return o;
}

/* List the platforms of the vendor library loaded at H as a loader would, into O; the stage goes to
 * BASE+n. Returns O. */
static json_object *icd_probe_handle(const struct icd_child_arg *a, void *h, int base, json_object *o)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
        json_object_object_add(o, "loaded", jsonstr_sanitized(lm->l_name));
    icd_set_stage(a, base, ICD_STAGE_GEFA);
    icd_gefa_fn gefa = NULL;
    *(void **)&gefa = dlsym(h, "clGetExtensionFunctionAddress");
    json_object_object_add(o, "exports_gefa", json_object_new_boolean(gefa != NULL));
    clIcdGetPlatformIDsKHR_fn entry_gefa = NULL, entry_sym = NULL;
    if (gefa)
        *(void **)&entry_gefa = gefa("clIcdGetPlatformIDsKHR");
    *(void **)&entry_sym = dlsym(h, "clIcdGetPlatformIDsKHR");
    void *gpi = gefa ? gefa("clGetPlatformInfo") : NULL;
    if (!gpi)
        gpi = dlsym(h, "clGetPlatformInfo");
    json_object_object_add(o, "entry_via_gefa", json_object_new_boolean(entry_gefa != NULL));
    json_object_object_add(o, "entry_via_dlsym", json_object_new_boolean(entry_sym != NULL));
    json_object_object_add(o, "exports_platform_info", json_object_new_boolean(gpi != NULL));
    icd_gfafp_fn gfafp = NULL;
    if (gefa)
        *(void **)&gfafp = gefa("clIcdGetFunctionAddressForPlatformKHR");
    clIcdGetPlatformIDsKHR_fn entry = entry_gefa ? entry_gefa : entry_sym;
    if (!entry)
        return o;

    icd_set_stage(a, base, ICD_STAGE_ENTRY);
    cl_uint n = 0;
    cl_int err = entry(0, NULL, &n);
    json_object_object_add(o, "count_code", json_object_new_int(err));
    json_object_object_add(o, "count", json_object_new_int64((int64_t)n));
    if (err != CL_SUCCESS || n == 0)
        return o;
    cl_uint want = n > ICD_MAX_PLATFORMS ? ICD_MAX_PLATFORMS : n;
    cl_platform_id *ps = calloc(want, sizeof(*ps));
    if (!ps)
        return o;
    err = entry(want, ps, NULL);
    json_object_object_add(o, "list_code", json_object_new_int(err));
    if (err != CL_SUCCESS)
        return o;
    json_object *arr = json_object_new_array();
    json_object_object_add(o, "platforms", arr);
    for (cl_uint i = 0; i < want; i++) {
        if (!ps[i]) {
            json_object *e = json_object_new_object();
            json_object_object_add(e, "error", json_object_new_string("a NULL platform"));
            json_object_array_add(arr, e);
            continue;
        }
        /* Every ICD object starts with a pointer to its dispatch table. */
        const cl_icd_dispatch *d = *(const cl_icd_dispatch *const *)ps[i];
        if (!d) {
            json_object *e = json_object_new_object();
            json_object_object_add(e, "error", json_object_new_string("no dispatch table"));
            json_object_array_add(arr, e);
            continue;
        }
        cl_api_clGetPlatformInfo info = d->clGetPlatformInfo;
        cl_api_clGetDeviceIDs ids = d->clGetDeviceIDs;
        uintptr_t tag = 0;
        memcpy(&tag, &d->clGetPlatformIDs, sizeof(tag) < sizeof(d->clGetPlatformIDs) ? sizeof(tag) : sizeof(d->clGetPlatformIDs));
        bool icd2 = tag == ICD_ICD2_TAG;
        if (icd2) {
            info = NULL;
            ids = NULL;
            if (gfafp) {
                *(void **)&info = gfafp(ps[i], "clGetPlatformInfo");
                *(void **)&ids = gfafp(ps[i], "clGetDeviceIDs");
            }
        }
        json_object *po = icd_describe_platform(a, base, ps[i], info, ids);
        if (icd2)
            json_object_object_add(po, "icd2", json_object_new_boolean(true));
        json_object_array_add(arr, po);
    }
    icd_set_stage(a, base, ICD_STAGE_DONE);
    return o;
}

/* Load one vendor library and list its platforms as a loader would; the stage goes to BASE+n. */
static json_object *icd_probe_library(const struct icd_child_arg *a, const char *lib, int base)
{
    json_object *o = json_object_new_object();
    icd_set_stage(a, base, ICD_STAGE_DLOPEN);
    dlerror();
    void *h = dlopen(lib, a->dlflags ? a->dlflags : RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        json_object_object_add(o, "dlopen_error", jsonstr_sanitized(e ? e : "unknown dlopen error"));
        return o;
    }
    return icd_probe_handle(a, h, base, o);
}

json_object *icd_child_vendor(void *arg)
{
    const struct icd_child_arg *a = arg;
    return icd_probe_library(a, a->lib, 0);
}

json_object *icd_child_pair(void *arg)
{
    const struct icd_child_arg *a = arg;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "first", icd_probe_library(a, a->lib, 0));
    json_object_object_add(o, "second", icd_probe_library(a, a->lib2, 0x100));
    return o;
}

/* Keep the loader from loading any vendor or layer: identification must run no driver code. */
static void icd_neutral_env(void)
{
    setenv("OCL_ICD_VENDORS", "/nonexistent/gpucheckup-no-vendors.icd", 1);
    setenv("OPENCL_VENDOR_PATH", "/nonexistent/gpucheckup-no-vendors", 1);
    setenv("OPENCL_LAYER_PATH", "/nonexistent/gpucheckup-no-layers", 1);
    unsetenv("OCL_ICD_FILENAMES");
    unsetenv("OPENCL_LAYERS");
}

static void icd_add_loader_info(const struct icd_child_arg *a, json_object *o, icd_loader_info_fn fn)
{
    static const struct {
        int param;
        const char *key;
    } rows[] = {{ICD_ICDL_NAME, "name"},
                {ICD_ICDL_VENDOR, "vendor"},
                {ICD_ICDL_VERSION, "version"},
                {ICD_ICDL_OCL_VERSION, "ocl_version"}};
    icd_set_stage(a, 0, ICD_STAGE_LOADER_INFO);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t size = 0;
        char *s = NULL;
        if (fn((cl_uint)rows[i].param, 0, NULL, &size) == CL_SUCCESS && size > 0 && size < 4096) {
            s = calloc(1, size + 1);
            if (s && fn((cl_uint)rows[i].param, size, s, NULL) != CL_SUCCESS) {
                free(s);
                s = NULL;
            }
        }
        json_object_object_add(o, rows[i].key, jsonstr_sanitized(s));
        free(s);
    }
}

json_object *icd_child_loader(void *arg)
{
    const struct icd_child_arg *a = arg;
    icd_neutral_env();
    json_object *o = json_object_new_object();
    struct clapi api;
    char err[512];
    icd_set_stage(a, 0, ICD_STAGE_DLOPEN);
    if (clapi_open(&api, a->lib, err, sizeof(err)) != 0) {
        json_object_object_add(o, "ok", json_object_new_boolean(false));
        json_object_object_add(o, "error", jsonstr_sanitized(err));
        return o;
    }
    json_object_object_add(o, "ok", json_object_new_boolean(true));
    json_object_object_add(o, "path", jsonstr_sanitized(api.path));
    icd_loader_info_fn fn = NULL;
    if (api.clGetExtensionFunctionAddress) {
        icd_set_stage(a, 0, ICD_STAGE_GEFA);
        *(void **)&fn = api.clGetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD");
    }
    json_object_object_add(o, "has_info", json_object_new_boolean(fn != NULL));
    if (fn)
        icd_add_loader_info(a, o, fn);
    icd_set_stage(a, 0, ICD_STAGE_DONE);
    return o;
}

json_object *icd_child_combined(void *arg)
{
    const struct icd_child_arg *a = arg;
    if (a->vendors_env)
        setenv("OCL_ICD_VENDORS", a->vendors_env, 1);
    json_object *o = json_object_new_object();
    struct clapi api;
    char err[512];
    icd_set_stage(a, 0, ICD_STAGE_DLOPEN);
    if (clapi_open(&api, NULL, err, sizeof(err)) != 0) {
        json_object_object_add(o, "dlopen_error", jsonstr_sanitized(err));
        return o;
    }
    json_object_object_add(o, "loaded", jsonstr_sanitized(api.path));
    icd_set_stage(a, 0, ICD_STAGE_PLATFORM_IDS);
    cl_uint n = 0;
    cl_int rc = api.clGetPlatformIDs(0, NULL, &n);
    json_object_object_add(o, "count_code", json_object_new_int(rc));
    json_object_object_add(o, "count", json_object_new_int64((int64_t)n));
    if (rc != CL_SUCCESS || n == 0)
        return o;
    cl_uint want = n > ICD_MAX_PLATFORMS ? ICD_MAX_PLATFORMS : n;
    cl_platform_id *ps = calloc(want, sizeof(*ps));
    if (!ps)
        return o;
    rc = api.clGetPlatformIDs(want, ps, NULL);
    json_object_object_add(o, "list_code", json_object_new_int(rc));
    if (rc != CL_SUCCESS)
        return o;
    json_object *arr = json_object_new_array();
    json_object_object_add(o, "platforms", arr);
    for (cl_uint i = 0; i < want; i++)
        json_object_array_add(arr, icd_describe_platform(a, 0, ps[i], api.clGetPlatformInfo, api.clGetDeviceIDs));
    icd_set_stage(a, 0, ICD_STAGE_DONE);
    return o;
}

/* dl_iterate_phdr callback: the name of each loaded object into the array ARG (no dlopen in here:
 * the callback runs under the dynamic linker's lock). */
static int icd_loaded_name(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0] == '/')
        json_object_array_add(arg, json_object_new_string(info->dlpi_name));
    return 0;
}

/* True when the object loaded at H defines clGetExtensionFunctionAddress itself (a vendor library),
 * not through one of its dependencies (a library linking libOpenCL, LLVM, libc...). */
static bool icd_defines_gefa(void *h)
{
    void *f = dlsym(h, "clGetExtensionFunctionAddress");
    struct link_map *own = NULL, *def = NULL;
    Dl_info info;
    if (!f || dlinfo(h, RTLD_DI_LINKMAP, &own) != 0 || !own)
        return false;
    if (!dladdr1(f, &info, (void **)&def, RTLD_DL_LINKMAP) || !def)
        return false;
    return def == own;
}

json_object *icd_child_loaded(const char *loader, int out_fd)
{
    json_object *out = json_object_new_array();
    json_object *names = json_object_new_array();
    dl_iterate_phdr(icd_loaded_name, names);
    /* The flags ocl-icd opens vendor libraries with (ocl_icd_loader.c, _load_icd: RTLD_LAZY|RTLD_LOCAL);
     * with RTLD_NOLOAD nothing new is loaded, only a handle to what already is. ocl-icd keeps open a
     * library without entry point, without platform or failing, and closes one whose every platform
     * it rejects (_find_and_check_platforms): that one, if unloaded, is not answered for here. */
    void *self = loader ? dlopen(loader, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD) : NULL;
    struct icd_child_arg a = {.dlflags = RTLD_LAZY | RTLD_LOCAL};
    for (size_t i = 0; i < json_object_array_length(names); i++) {
        const char *name = json_object_get_string(json_object_array_get_idx(names, i));
        void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h || h == self || !icd_defines_gefa(h))
            continue;
        fflush(NULL);
        off_t before = lseek(out_fd, 0, SEEK_CUR);
        double t0 = jsonnum_now_ms();
        json_object *answer = icd_probe_handle(&a, h, 0, json_object_new_object());
        double ms = jsonnum_now_ms() - t0;
        fflush(NULL);
        off_t after = lseek(out_fd, 0, SEEK_CUR);
        json_object *d = json_object_new_object();
        json_object_object_add(d, "loaded", jsonstr_sanitized(name));
        json_object_object_add(d, "ms", json_object_new_double(ms));
        /* What a driver prints while answered here belongs to no part of the report: its own child
         * then runs, where its output is kept as it always was. */
        json_object_object_add(d, "output", json_object_new_boolean(before < 0 || after != before));
        json_object_object_add(d, "answer", answer);
        json_object_array_add(out, d);
    }
    json_object_put(names);
    return out;
}
