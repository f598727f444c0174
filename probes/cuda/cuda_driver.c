/* cuda_driver.c: the driver-API child: load libcuda.so.1 as a program would, cuInit, and describe every device. */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_driver.h"
#include "cuda_internal.h"

/* The most devices one child describes (an 8-GPU board times a few; beyond that is not a real machine). */
#define CUDA_DRV_MAX_DEVICES 256

/* "580.159.04" from a real file name such as "libcuda.so.580.159.04"; NULL for "libcuda.so",
 * "libcuda.so.1" or anything else (NVIDIA's packages name the real file after the driver version). */
char *cuda_driver_file_version(const char *base)
{
    static const char prefix[] = "libcuda.so.";
    if (!base || strncmp(base, prefix, sizeof(prefix) - 1) != 0)
        return NULL;
    const char *v = base + sizeof(prefix) - 1;
    size_t dots = 0, len = strlen(v);
    if (len == 0 || len > 31 || v[0] == '.' || v[len - 1] == '.')
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '.') {
            if (v[i + 1] == '.')
                return NULL;
            dots++;
        } else if (v[i] < '0' || v[i] > '9') {
            return NULL;
        }
    }
    return dots > 0 ? strdup(v) : NULL;
}

/* Normalise a PCI bus id ("00000000:00:06.0", "0000:00:06.0") to the pci probe's form "0000:00:06.0".
 * Returns 0 and fills OUT (LEN >= 24), or -1 when TEXT is not a bus id. */
int cuda_driver_normalize_busid(const char *text, char *out, size_t len)
{
    unsigned dom, bus, dev, fn;
    char tail;
    /* Hex digits, ':' and '.' only (sscanf's %x would also take a sign, blanks and "0x"), the function
     * one digit at the end, the domain at most 8 hex digits. */
    size_t len_t = text ? strlen(text) : 0;
    if (!text || len_t < 7 || len_t > 20 || strspn(text, "0123456789abcdefABCDEF:.") != len_t ||
        text[len_t - 2] != '.' || strcspn(text, ":") > 8)
        return -1;
    if (sscanf(text, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff || dev > 0x1f || fn > 7)
        return -1;
    snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return 0;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints a CUuuid. */
static void cuda_drv_uuid_text(const CUuuid *u, char *out, size_t len)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, len,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
             b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static json_object *cuda_drv_result(CUresult r)
{
    json_object *o = json_object_new_object();
    const char *name = cuda_result_name(r);
    json_object_object_add(o, "code", json_object_new_int(r));
    json_object_object_add(o, "name", name ? json_object_new_string(name) : NULL);
    return o;
}

/* An attribute as a JSON int, or null when the driver refuses it. */
static json_object *cuda_drv_attr(const struct cuda_api *api, CUdevice dev, int attr, int *value)
{
    int v = 0;
    if (api->cuDeviceGetAttribute(&v, attr, dev) != CUDA_SUCCESS) {
        if (value)
            *value = -1;
        return NULL;
    }
    if (value)
        *value = v;
    return json_object_new_int(v);
}

static json_object *cuda_drv_device(const struct cuda_api *api, int ordinal)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "ordinal", json_object_new_int(ordinal));
    CUdevice dev = 0;
    CUresult r = api->cuDeviceGet(&dev, ordinal);
    if (r != CUDA_SUCCESS) {
        json_object_object_add(o, "error", cuda_drv_result(r));
        return o;
    }
    char name[256] = "";
    if (api->cuDeviceGetName(name, (int)sizeof(name) - 1, dev) == CUDA_SUCCESS) {
        name[sizeof(name) - 1] = '\0';
        json_object_object_add(o, "name", json_object_new_string(name));
    } else {
        json_object_object_add(o, "name", NULL);
    }
    CUuuid u;
    memset(&u, 0, sizeof(u));
    char ut[48];
    if (api->cuDeviceGetUuid && api->cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
        cuda_drv_uuid_text(&u, ut, sizeof(ut));
        json_object_object_add(o, "uuid", json_object_new_string(ut));
    } else {
        json_object_object_add(o, "uuid", NULL);
    }
    char busid[64] = "";
    if (api->cuDeviceGetPCIBusId && api->cuDeviceGetPCIBusId(busid, (int)sizeof(busid) - 1, dev) == CUDA_SUCCESS) {
        busid[sizeof(busid) - 1] = '\0';
        json_object_object_add(o, "pci_bus_id", json_object_new_string(busid));
    } else {
        json_object_object_add(o, "pci_bus_id", NULL);
    }
    int dom = -1, bus = -1, slot = -1;
    json_object_put(cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &dom));
    json_object_put(cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus));
    json_object_put(cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &slot));
    if (dom >= 0 && bus >= 0 && slot >= 0) {
        char a[48];
        snprintf(a, sizeof(a), "%04x:%02x:%02x.0", (unsigned)dom, (unsigned)bus, (unsigned)slot);
        json_object_object_add(o, "pci_from_attributes", json_object_new_string(a));
    }
    json_object_object_add(o, "cc_major", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, NULL));
    json_object_object_add(o, "cc_minor", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, NULL));
    size_t bytes = 0;
    if (api->cuDeviceTotalMem(&bytes, dev) == CUDA_SUCCESS)
        json_object_object_add(o, "memory_bytes", json_object_new_int64((int64_t)bytes));
    else
        json_object_object_add(o, "memory_bytes", NULL);
    json_object_object_add(o, "multiprocessors",
                           cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, NULL));
    json_object_object_add(o, "clock_khz", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, NULL));
    json_object_object_add(o, "ecc_enabled", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, NULL));
    json_object_object_add(o, "compute_mode", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, NULL));
    json_object_object_add(o, "integrated", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_INTEGRATED, NULL));
    json_object_object_add(o, "multi_gpu_board", cuda_drv_attr(api, dev, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, NULL));
    return o;
}

/* Which search-path entry brought LOADED in: the LD_LIBRARY_PATH entry that names its directory (as
 * written, compared after resolving links), else the ld.so.cache, which glibc consults next and which
 * also lists the default directories' libraries (ld.so(8), "Rpath token expansion" and search order). */
static void cuda_drv_found_via(json_object *lib, const char *loaded)
{
    const char *slash = loaded ? strrchr(loaded, '/') : NULL;
    if (!slash) {
        json_object_object_add(lib, "found_via", NULL);
        json_object_object_add(lib, "search_entry", NULL);
        return;
    }
    char *dir = strndup(loaded, (size_t)(slash - loaded));
    char rdir[PATH_MAX], rent[PATH_MAX];
    bool have_rdir = dir && realpath(dir, rdir) != NULL;
    const char *ldlp = getenv("LD_LIBRARY_PATH");
    char *copy = ldlp ? strdup(ldlp) : NULL, *save = NULL;
    const char *hit = NULL;
    /* glibc splits LD_LIBRARY_PATH at ':' and ';' (elf/dl-load.c, fillin_rpath). */
    for (char *e = copy ? strtok_r(copy, ":;", &save) : NULL; e && !hit; e = strtok_r(NULL, ":;", &save)) {
        size_t n = strlen(e);
        while (n > 1 && e[n - 1] == '/')
            e[--n] = '\0';
        if ((dir && strcmp(e, dir) == 0) || (have_rdir && realpath(e, rent) && strcmp(rent, rdir) == 0))
            hit = e;
    }
    json_object_object_add(lib, "found_via", json_object_new_string(hit ? "LD_LIBRARY_PATH" : "ld.so.cache"));
    json_object_object_add(lib, "search_entry", json_object_new_string(hit ? hit : dir ? dir : ""));
    free(copy);
    free(dir);
}

/* Where the dynamic linker found the library: the loaded object's own name (dladdr), the file it
 * resolves to, and the version in that file's name. */
static json_object *cuda_drv_library(void *handle, void *sym)
{
    json_object *lib = json_object_new_object();
    json_object_object_add(lib, "soname", json_object_new_string("libcuda.so.1"));
    Dl_info info;
    memset(&info, 0, sizeof(info));
    const char *loaded = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : NULL;
    (void)handle;
    json_object_object_add(lib, "loaded_from", loaded ? json_object_new_string(loaded) : NULL);
    char real[PATH_MAX];
    const char *rp = loaded && realpath(loaded, real) ? real : loaded;
    json_object_object_add(lib, "path", rp ? json_object_new_string(rp) : NULL);
    const char *base = rp ? strrchr(rp, '/') : NULL;
    char *v = cuda_driver_file_version(base ? base + 1 : rp);
    json_object_object_add(lib, "version", v ? json_object_new_string(v) : NULL);
    free(v);
    cuda_drv_found_via(lib, loaded);
    /* The toolkit installs its stub as .../lib64/stubs/libcuda.so; NVIDIA's forward-compatibility
     * package (cuda-compat) as /usr/local/cuda-X.Y/compat/libcuda.so.* (CUDA Compatibility guide). */
    json_object_object_add(lib, "compat", json_object_new_boolean(rp && strstr(rp, "/compat/") != NULL));
    json_object_object_add(lib, "stub", json_object_new_boolean(rp && strstr(rp, "/stubs/") != NULL));
    return lib;
}

json_object *cuda_driver_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object();
    /* The name a program asks for; the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache, the
     * default directories) picks the file, exactly as for PyTorch's or TensorFlow's dlopen. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        json_object_object_add(o, "library", NULL);
        json_object_object_add(o, "dlopen_error", json_object_new_string(e ? e : "dlopen failed"));
        return o;
    }
    struct cuda_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = NULL;
    int lrc = cuda_api_load(h, &api, &missing);
    void *any = api.cuInit ? (void *)api.cuInit : dlsym(h, "cuInit");
    json_object_object_add(o, "library", cuda_drv_library(h, any));
    if (lrc != 0) {
        json_object_object_add(o, "missing_symbol", json_object_new_string(missing ? missing : "?"));
        return o;
    }
    json_object_object_add(o, "has_compute", json_object_new_boolean(cuda_api_has_compute(&api)));
    CUresult r = api.cuInit(0);
    json_object_object_add(o, "cuinit", cuda_drv_result(r));
    if (r == CUDA_ERROR_STUB_LIBRARY)
        json_object_object_add(json_object_object_get(o, "library"), "stub", json_object_new_boolean(true));
    int ver = 0;
    /* cuDriverGetVersion works before (and without) a successful cuInit in real drivers; the stub
     * fails it too. */
    if (api.cuDriverGetVersion(&ver) == CUDA_SUCCESS && ver > 0)
        json_object_object_add(o, "driver_version", json_object_new_int(ver));
    else
        json_object_object_add(o, "driver_version", NULL);
    if (r != CUDA_SUCCESS)
        return o;
    int count = 0;
    CUresult cr = api.cuDeviceGetCount(&count);
    if (cr != CUDA_SUCCESS) {
        json_object_object_add(o, "device_count", NULL);
        json_object_object_add(o, "device_count_error", cuda_drv_result(cr));
        return o;
    }
    json_object_object_add(o, "device_count", json_object_new_int(count));
    json_object *devs = json_object_new_array();
    for (int i = 0; i < count && i < CUDA_DRV_MAX_DEVICES; i++)
        json_object_array_add(devs, cuda_drv_device(&api, i));
    json_object_object_add(o, "devices", devs);
    /* The handle stays open: the child ends right after, and some drivers crash in their destructors. */
    return o;
}
