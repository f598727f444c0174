/* levelzero_child.c: the Level Zero child: libze_loader.so.1, zeInitDrivers or zeInit, each driver's API version and its devices. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "levelzero_internal.h"

/* The most drivers and devices described. */
#define LZ_MAX 64

const char *levelzero_result_name(uint32_t code)
{
    static const struct {
        uint32_t code;
        const char *name;
    } t[] = {
        {0, "ZE_RESULT_SUCCESS"},
        {0x70000001, "ZE_RESULT_ERROR_DEVICE_LOST"},
        {0x70000002, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"},
        {0x70010000, "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"},
        {0x70020000, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"},
        {0x78000001, "ZE_RESULT_ERROR_UNINITIALIZED"},
        {0x78000002, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION"},
        {0x78000003, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"},
        {0x7ffffffe, "ZE_RESULT_ERROR_UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].code == code)
            return t[i].name;
    return NULL;
}

static json_object *lz_result_json(lz_result r)
{
    json_object *o = json_object_new_object();
    const char *n = levelzero_result_name(r);
    json_object_object_add(o, "code", json_object_new_int64(r));
    json_object_object_add(o, "name", n ? json_object_new_string(n) : NULL);
    return o;
}

typedef lz_result (*lz_get_fn)(lz_handle, uint32_t *, lz_handle *);

static json_object *lz_device(void *h, lz_handle dev)
{
    lz_result (*props)(lz_handle, struct lz_device_properties *) =
        (lz_result(*)(lz_handle, struct lz_device_properties *))dlsym(h, "zeDeviceGetProperties");
    lz_result (*pci)(lz_handle, struct lz_pci_ext_properties *) =
        (lz_result(*)(lz_handle, struct lz_pci_ext_properties *))dlsym(h, "zeDevicePciGetPropertiesExt");
    json_object *o = json_object_new_object();
    struct lz_device_properties p;
    memset(&p, 0, sizeof(p));
    p.stype = 0x3;
    if (!props || props(dev, &p) != 0)
        return o;
    p.name[sizeof(p.name) - 1] = '\0';
    static const char *const types[] = {NULL, "gpu", "cpu", "fpga", "mca", "vpu"};
    json_object_object_add(o, "name", json_object_new_string(p.name));
    json_object_object_add(o, "type", p.type < 6 && types[p.type] ? json_object_new_string(types[p.type]) : NULL);
    char id[8], uuid[40];
    snprintf(id, sizeof(id), "%04x", p.vendorId & 0xffff);
    json_object_object_add(o, "vendor_id", json_object_new_string(id));
    snprintf(id, sizeof(id), "%04x", p.deviceId & 0xffff);
    json_object_object_add(o, "device_id", json_object_new_string(id));
    json_object_object_add(o, "integrated", json_object_new_boolean(p.flags & 1));
    for (int i = 0; i < 16; i++)
        snprintf(uuid + 2 * i, sizeof(uuid) - 2 * (size_t)i, "%02x", p.uuid[i]);
    json_object_object_add(o, "uuid", json_object_new_string(uuid));
    struct lz_pci_ext_properties x;
    memset(&x, 0, sizeof(x));
    x.stype = 0x10008;
    if (pci && pci(dev, &x) == 0 && x.bus <= 0xff && x.device <= 0x1f && x.function <= 7) {
        char a[24];
        snprintf(a, sizeof(a), "%04x:%02x:%02x.%x", x.domain & 0xffff, x.bus, x.device, x.function);
        json_object_object_add(o, "pci_address", json_object_new_string(a));
    } else {
        json_object_object_add(o, "pci_address", NULL);
    }
    return o;
}

static json_object *lz_driver(void *h, lz_handle drv)
{
    lz_result (*api)(lz_handle, uint32_t *) = (lz_result(*)(lz_handle, uint32_t *))dlsym(h, "zeDriverGetApiVersion");
    lz_get_fn devget = (lz_get_fn)dlsym(h, "zeDeviceGet");
    json_object *o = json_object_new_object();
    uint32_t v = 0;
    char vs[16];
    if (api && api(drv, &v) == 0) {
        snprintf(vs, sizeof(vs), "%u.%u", v >> 16, v & 0xffff);
        json_object_object_add(o, "api_version", json_object_new_string(vs));
    }
    json_object *devs = json_object_new_array();
    uint32_t n = 0;
    lz_handle hs[LZ_MAX];
    if (devget && devget(drv, &n, NULL) == 0) {
        if (n > LZ_MAX)
            n = LZ_MAX;
        if (devget(drv, &n, hs) == 0)
            for (uint32_t i = 0; i < n && i < LZ_MAX; i++)
                json_object_array_add(devs, lz_device(h, hs[i]));
    }
    json_object_object_add(o, "devices", devs);
    return o;
}

/* ze_init_driver_type_desc_t (ze_api.h, Level Zero 1.10): the drivers zeInitDrivers is to initialise. */
struct lz_init_driver_type_desc {
    uint32_t stype; /* ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC = 0x00020021 */
    const void *pNext;
    uint32_t flags; /* ZE_INIT_DRIVER_TYPE_FLAG_GPU = 1 */
};
typedef lz_result (*lz_init_drivers_fn)(uint32_t *, lz_handle *, struct lz_init_driver_type_desc *);

/* Initialise and list the drivers: zeInitDrivers for GPU drivers where the loader has it (1.10 and later:
 * the specification's replacement for zeInit), else zeInit(0) and zeDriverGet. Records which in "init_call".
 * Returns the result of the init call; *N drivers in DRVS. */
static lz_result lz_init(void *h, json_object *o, lz_handle *drvs, uint32_t *n)
{
    lz_init_drivers_fn initd = (lz_init_drivers_fn)dlsym(h, "zeInitDrivers");
    lz_result (*init)(uint32_t) = (lz_result(*)(uint32_t))dlsym(h, "zeInit");
    lz_result (*drvget)(uint32_t *, lz_handle *) = (lz_result(*)(uint32_t *, lz_handle *))dlsym(h, "zeDriverGet");
    uint32_t cap = *n;
    *n = 0;
    json_object_object_add(o, "init_call", json_object_new_string(initd ? "zeInitDrivers" : "zeInit"));
    printf("zeInit\n"); /* where a hang or crash happened, for the parent */
    fflush(stdout);
    lz_result r;
    if (initd) {
        struct lz_init_driver_type_desc desc = {0x00020021, NULL, 1};
        r = initd(n, NULL, &desc);
        if (r == 0 && *n > 0) {
            if (*n > cap)
                *n = cap;
            r = initd(n, drvs, &desc);
        }
        return r;
    }
    r = init(0);
    if (r != 0)
        return r;
    printf("zeDriverGet\n");
    fflush(stdout);
    if (drvget(n, NULL) == 0) {
        if (*n > cap)
            *n = cap;
        if (drvget(n, drvs) != 0)
            *n = 0;
    } else {
        *n = 0;
    }
    return 0;
}

json_object *levelzero_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object();
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        json_object_object_add(o, "status", json_object_new_string("no-loader"));
        return o;
    }
    void *init = dlsym(h, "zeInit"), *drvget = dlsym(h, "zeDriverGet");
    Dl_info info;
    if (init && dladdr(init, &info) && info.dli_fname)
        json_object_object_add(o, "loader", json_object_new_string(info.dli_fname));
    if (!init || !drvget) {
        json_object_object_add(o, "status", json_object_new_string("missing-symbols"));
        return o;
    }
    uint32_t n = LZ_MAX;
    lz_handle drvs[LZ_MAX];
    lz_result r = lz_init(h, o, drvs, &n);
    json_object_object_add(o, "init", lz_result_json(r));
    if (r != 0) {
        json_object_object_add(o, "status", json_object_new_string("init-failed"));
        return o;
    }
    json_object *arr = json_object_new_array();
    for (uint32_t i = 0; i < n && i < LZ_MAX; i++)
        json_object_array_add(arr, lz_driver(h, drvs[i]));
    json_object_object_add(o, "drivers", arr);
    json_object_object_add(o, "status", json_object_new_string("ok"));
    return o;
}
