/* rocm_child.c: the ROCm runtime child: libhsa-runtime64 (hsa_init, version, agents) and libamdhip64 (versions, devices). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rocm_internal.h"

/* Our own minimal declarations of the few functions used, from ROCR-Runtime's public headers
 * (src/inc/hsa.h, hsa_ext_amd.h) and HIP's (include/hip/hip_runtime_api.h): gpucheckup builds and runs
 * where no ROCm headers are installed (Debian's libhsa-runtime-dev and libamdhip64-dev are not needed), and
 * the functions chosen have the same signature in ROCm 5, 6 and 7. hipDeviceProp_t is not used: its layout
 * changed between ROCm 5 and 6 (hipDeviceProp_tR0600); the gfx name comes from the HSA agent instead. */
typedef uint32_t rocm_hsa_status;               /* hsa_status_t */
typedef struct { uint64_t handle; } rocm_hsa_agent; /* hsa_agent_t */
enum {
    ROCM_HSA_SYSTEM_INFO_VERSION_MAJOR = 0, /* uint16_t */
    ROCM_HSA_SYSTEM_INFO_VERSION_MINOR = 1,
    ROCM_HSA_AGENT_INFO_NAME = 0,     /* char[64]: "gfx1100" for a GPU */
    ROCM_HSA_AGENT_INFO_DEVICE = 17,  /* hsa_device_type_t: 0 CPU, 1 GPU, 2 DSP */
    ROCM_HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT = 0xA002, /* uint32_t */
    ROCM_HSA_AMD_AGENT_INFO_BDFID = 0xA006,              /* bus << 8 | device << 3 | function */
    ROCM_HSA_AMD_AGENT_INFO_PRODUCT_NAME = 0xA009,       /* char[64] */
    ROCM_HSA_AMD_AGENT_INFO_DOMAIN = 0xA00F,             /* uint32_t */
};

struct rocm_hsa_api {
    rocm_hsa_status (*init)(void);
    rocm_hsa_status (*shut_down)(void);
    rocm_hsa_status (*status_string)(rocm_hsa_status, const char **);
    rocm_hsa_status (*system_get_info)(int, void *);
    rocm_hsa_status (*iterate_agents)(rocm_hsa_status (*)(rocm_hsa_agent, void *), void *);
    rocm_hsa_status (*agent_get_info)(rocm_hsa_agent, int, void *);
};

/* The most agents described (a CPU per socket and a GPU per XCP partition). */
#define ROCM_CHILD_MAX_AGENTS 128

static json_object *rocm_str(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* The file a symbol of a loaded library came from, or NULL. */
static const char *rocm_lib_path(void *sym)
{
    Dl_info info;
    return sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : NULL;
}

struct rocm_agents {
    const struct rocm_hsa_api *api;
    json_object *arr;
};

static rocm_hsa_status rocm_agent_cb(rocm_hsa_agent agent, void *data)
{
    struct rocm_agents *a = data;
    if (json_object_array_length(a->arr) >= ROCM_CHILD_MAX_AGENTS)
        return 0;
    char name[65] = {0}, product[65] = {0};
    uint32_t type = 0xffffffffu, cus = 0, bdf = 0, domain = 0;
    json_object *o = json_object_new_object();
    a->api->agent_get_info(agent, ROCM_HSA_AGENT_INFO_NAME, name);
    bool have_type = a->api->agent_get_info(agent, ROCM_HSA_AGENT_INFO_DEVICE, &type) == 0;
    bool have_bdf = a->api->agent_get_info(agent, ROCM_HSA_AMD_AGENT_INFO_BDFID, &bdf) == 0;
    bool have_dom = a->api->agent_get_info(agent, ROCM_HSA_AMD_AGENT_INFO_DOMAIN, &domain) == 0;
    bool have_cus = a->api->agent_get_info(agent, ROCM_HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus) == 0;
    a->api->agent_get_info(agent, ROCM_HSA_AMD_AGENT_INFO_PRODUCT_NAME, product);
    name[64] = product[64] = '\0';
    json_object_object_add(o, "name", rocm_str(name[0] ? name : NULL));
    json_object_object_add(o, "product_name", rocm_str(product[0] ? product : NULL));
    json_object_object_add(o, "device_type", have_type ? json_object_new_string(type == 0 ? "cpu" : type == 1 ? "gpu" : type == 2 ? "dsp" : "other") : NULL);
    json_object_object_add(o, "compute_units", have_cus ? json_object_new_int64(cus) : NULL);
    char addr[24];
    if (have_bdf && type == 1) {
        bdf &= 0xffff;
        snprintf(addr, sizeof(addr), "%04x:%02x:%02x.%x", have_dom ? domain & 0xffff : 0u, bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
    }
    json_object_object_add(o, "pci_address", have_bdf && type == 1 ? json_object_new_string(addr) : NULL);
    json_object_array_add(a->arr, o);
    return 0;
}

static json_object *rocm_hsa_part(void)
{
    json_object *o = json_object_new_object();
    void *h = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        json_object_object_add(o, "status", json_object_new_string("no-library"));
        json_object_object_add(o, "error", rocm_str(e));
        return o;
    }
    struct rocm_hsa_api api = {
        .init = (rocm_hsa_status(*)(void))dlsym(h, "hsa_init"),
        .shut_down = (rocm_hsa_status(*)(void))dlsym(h, "hsa_shut_down"),
        .status_string = (rocm_hsa_status(*)(rocm_hsa_status, const char **))dlsym(h, "hsa_status_string"),
        .system_get_info = (rocm_hsa_status(*)(int, void *))dlsym(h, "hsa_system_get_info"),
        .iterate_agents = (rocm_hsa_status(*)(rocm_hsa_status(*)(rocm_hsa_agent, void *), void *))dlsym(h, "hsa_iterate_agents"),
        .agent_get_info = (rocm_hsa_status(*)(rocm_hsa_agent, int, void *))dlsym(h, "hsa_agent_get_info"),
    };
    json_object_object_add(o, "library", rocm_str(rocm_lib_path((void *)api.init)));
    if (!api.init || !api.status_string || !api.system_get_info || !api.iterate_agents || !api.agent_get_info) {
        json_object_object_add(o, "status", json_object_new_string("missing-symbols"));
        return o;
    }
    printf("hsa_init\n"); /* where a hang or crash happened: the parent reads the child's output tail */
    fflush(stdout);
    rocm_hsa_status st = api.init();
    const char *text = NULL;
    if (api.status_string(st, &text) != 0)
        text = NULL;
    json_object *init = json_object_new_object();
    json_object_object_add(init, "code", json_object_new_int64(st));
    json_object_object_add(init, "text", rocm_str(text));
    json_object_object_add(o, "init", init);
    if (st != 0) {
        json_object_object_add(o, "status", json_object_new_string("init-failed"));
        return o;
    }
    uint16_t major = 0, minor = 0;
    if (api.system_get_info(ROCM_HSA_SYSTEM_INFO_VERSION_MAJOR, &major) == 0 &&
        api.system_get_info(ROCM_HSA_SYSTEM_INFO_VERSION_MINOR, &minor) == 0) {
        char v[16];
        snprintf(v, sizeof(v), "%u.%u", major, minor);
        json_object_object_add(o, "version", json_object_new_string(v));
    }
    struct rocm_agents a = {&api, json_object_new_array()};
    api.iterate_agents(rocm_agent_cb, &a);
    json_object_object_add(o, "agents", a.arr);
    json_object_object_add(o, "status", json_object_new_string("ok"));
    if (api.shut_down)
        api.shut_down();
    return o;
}

/* ---- HIP ---- */

typedef int (*rocm_hip_int_fn)(int *);
typedef const char *(*rocm_hip_name_fn)(int);
typedef int (*rocm_hip_str_fn)(char *, int, int);

/* HIP's version number (HIP_VERSION: major * 10000000 + minor * 100000 + patch) as "5.2.21153". */
static json_object *rocm_hip_version(int v)
{
    char buf[32];
    if (v <= 0)
        return NULL;
    snprintf(buf, sizeof(buf), "%d.%d.%d", v / 10000000, (v / 100000) % 100, v % 100000);
    return json_object_new_string(buf);
}

static json_object *rocm_hip_part(void)
{
    static const char *const names[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    json_object *o = json_object_new_object();
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        json_object_object_add(o, "status", json_object_new_string("no-library"));
        return o;
    }
    rocm_hip_int_fn rt = (rocm_hip_int_fn)dlsym(h, "hipRuntimeGetVersion"), drv = (rocm_hip_int_fn)dlsym(h, "hipDriverGetVersion"),
                    count = (rocm_hip_int_fn)dlsym(h, "hipGetDeviceCount");
    rocm_hip_name_fn ename = (rocm_hip_name_fn)dlsym(h, "hipGetErrorName");
    rocm_hip_str_fn dname = (rocm_hip_str_fn)dlsym(h, "hipDeviceGetName"), bus = (rocm_hip_str_fn)dlsym(h, "hipDeviceGetPCIBusId");
    json_object_object_add(o, "library", rocm_str(rocm_lib_path((void *)count)));
    if (!rt || !count) {
        json_object_object_add(o, "status", json_object_new_string("missing-symbols"));
        return o;
    }
    int v = 0;
    if (rt(&v) == 0)
        json_object_object_add(o, "runtime_version", rocm_hip_version(v));
    if (drv && drv(&v) == 0)
        json_object_object_add(o, "driver_version", rocm_hip_version(v));
    printf("hipGetDeviceCount\n");
    fflush(stdout);
    int n = 0, rc = count(&n);
    json_object *res = json_object_new_object();
    json_object_object_add(res, "code", json_object_new_int(rc));
    json_object_object_add(res, "name", rocm_str(ename ? ename(rc) : NULL));
    json_object_object_add(o, "device_count_result", res);
    json_object_object_add(o, "device_count", rc == 0 ? json_object_new_int(n) : NULL);
    json_object *devs = json_object_new_array();
    for (int i = 0; rc == 0 && i < n && i < ROCM_CHILD_MAX_AGENTS; i++) {
        json_object *d = json_object_new_object();
        char name[256] = {0}, addr[64] = {0};
        json_object_object_add(d, "ordinal", json_object_new_int(i));
        json_object_object_add(d, "name", dname && dname(name, (int)sizeof(name) - 1, i) == 0 && name[0] ? json_object_new_string(name) : NULL);
        json_object_object_add(d, "pci_bus_id", bus && bus(addr, (int)sizeof(addr) - 1, i) == 0 && addr[0] ? json_object_new_string(addr) : NULL);
        json_object_array_add(devs, d);
    }
    json_object_object_add(o, "devices", devs);
    json_object_object_add(o, "status", json_object_new_string(rc == 0 ? "ok" : "error"));
    return o;
}

/* rocm-smi's library (ROCm's management library, rocm_smi.h): rsmi_init(0), its devices, the status's text.
 * Facts only: the compute path does not go through it. */
static json_object *rocm_smi_part(void)
{
    json_object *o = json_object_new_object();
    void *h = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        json_object_object_add(o, "status", json_object_new_string("no-library"));
        return o;
    }
    int (*init)(uint64_t) = (int (*)(uint64_t))dlsym(h, "rsmi_init");
    int (*num)(uint32_t *) = (int (*)(uint32_t *))dlsym(h, "rsmi_num_monitor_devices");
    int (*text)(int, const char **) = (int (*)(int, const char **))dlsym(h, "rsmi_status_string");
    json_object_object_add(o, "library", rocm_str(rocm_lib_path((void *)init)));
    if (!init || !num) {
        json_object_object_add(o, "status", json_object_new_string("missing-symbols"));
        return o;
    }
    printf("rsmi_init\n");
    fflush(stdout);
    int rc = init(0);
    const char *t = NULL;
    if (!text || text(rc, &t) != 0)
        t = NULL;
    json_object *r = json_object_new_object();
    json_object_object_add(r, "code", json_object_new_int(rc));
    json_object_object_add(r, "text", rocm_str(t));
    json_object_object_add(o, "init", r);
    uint32_t n = 0;
    json_object_object_add(o, "devices", rc == 0 && num(&n) == 0 ? json_object_new_int64(n) : NULL);
    json_object_object_add(o, "status", json_object_new_string(rc == 0 ? "ok" : "init-failed"));
    return o;
}

json_object *rocm_runtime_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object();
    json_object *hsa = rocm_hsa_part();
    json_object_object_add(o, "hsa", hsa);
    /* HIP runs over HSA: without an HSA runtime there is no HIP either. */
    json_object_object_add(o, "hip", rocm_hip_part());
    json_object_object_add(o, "smi", rocm_smi_part());
    return o;
}
