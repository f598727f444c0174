/* cuda_nvml_child.c: the cuda probe's NVML child: libnvidia-ml loaded in isolation, the system and each GPU asked. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "nvml_api.h"

const struct nvml_clock_reason nvml_clock_reasons[] = {
    {NVML_CLOCKS_EVENT_GPU_IDLE, "gpu_idle", false},
    {NVML_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING, "applications_clocks_setting", false},
    {NVML_CLOCKS_EVENT_SW_POWER_CAP, "sw_power_cap", false},
    {NVML_CLOCKS_EVENT_HW_SLOWDOWN, "hw_slowdown", true},
    {NVML_CLOCKS_EVENT_SYNC_BOOST, "sync_boost", false},
    {NVML_CLOCKS_EVENT_SW_THERMAL, "sw_thermal_slowdown", true},
    {NVML_CLOCKS_EVENT_HW_THERMAL, "hw_thermal_slowdown", true},
    {NVML_CLOCKS_EVENT_HW_POWER_BRAKE, "hw_power_brake_slowdown", true},
    {NVML_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING, "display_clock_setting", false},
};
const size_t nvml_n_clock_reasons = sizeof(nvml_clock_reasons) / sizeof(nvml_clock_reasons[0]);

/* KEY = VALUE on success; otherwise KEY = null, and KEY listed in "not_supported" (the function or
 * the feature is absent) or in "errors" (KEY -> the NVML error's name). Takes VALUE. */
static void nvml_put(json_object *dev, const char *key, nvmlReturn_t r, json_object *value)
{
    if (r == NVML_SUCCESS) {
        json_object_object_add(dev, key, value);
        return;
    }
    json_object_put(value);
    json_object_object_add(dev, key, NULL);
    if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND) {
        json_object *ns = NULL;
        if (!json_object_object_get_ex(dev, "not_supported", &ns))
            json_object_object_add(dev, "not_supported", ns = json_object_new_array());
        json_object_array_add(ns, json_object_new_string(key));
    } else {
        json_object *errs = NULL;
        if (!json_object_object_get_ex(dev, "errors", &errs))
            json_object_object_add(dev, "errors", errs = json_object_new_object());
        const char *name = nvml_return_name(r);
        json_object_object_add(errs, key, name ? json_object_new_string(name) : json_object_new_int(r));
    }
}

/* Normalise an NVML bus id ("00000000:00:06.0", legacy "0000:00:06.0") to sysfs's "0000:00:06.0".
 * Returns 0, or -1 when S is not a bus id. */
static int nvml_norm_bus_id(const char *s, char out[16])
{
    unsigned int dom, bus, dev, fn;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff || bus > 0xff ||
        dev > 0x1f || fn > 7)
        return -1;
    snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return 0;
}

/* A NUL-terminated copy of a vendor-filled buffer as a JSON string. */
static json_object *nvml_jstr(char *buf, size_t size)
{
    buf[size - 1] = '\0';
    return json_object_new_string(buf);
}

static json_object *nvml_bool(unsigned int v)
{
    return json_object_new_boolean(v != 0);
}


/* Name, UUID, PCI address (as sysfs writes it) and minor number. */
static void nvml_query_ident(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    char buf[NVML_STR];
    memset(buf, 0, sizeof(buf));
    nvmlReturn_t r = api->nvmlDeviceGetName ? api->nvmlDeviceGetName(dev, buf, sizeof(buf))
                                         : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "name", r, r == NVML_SUCCESS ? nvml_jstr(buf, sizeof(buf)) : NULL);
    memset(buf, 0, sizeof(buf));
    r = api->nvmlDeviceGetUUID ? api->nvmlDeviceGetUUID(dev, buf, sizeof(buf)) : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "uuid", r, r == NVML_SUCCESS ? nvml_jstr(buf, sizeof(buf)) : NULL);

    struct nvml_pci_info pci;
    memset(&pci, 0, sizeof(pci));
    r = api->nvmlDeviceGetPciInfo ? api->nvmlDeviceGetPciInfo(dev, &pci) : NVML_ERROR_FUNCTION_NOT_FOUND;
    json_object *bus = NULL;
    if (r == NVML_SUCCESS) {
        char norm[16];
        pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
        pci.bus_id_legacy[sizeof(pci.bus_id_legacy) - 1] = '\0';
        /* _v3 fills bus_id; _v2 and plain leave it zero and fill the legacy field. */
        if (nvml_norm_bus_id(pci.bus_id, norm) == 0 || nvml_norm_bus_id(pci.bus_id_legacy, norm) == 0)
            bus = json_object_new_string(norm);
        else if (pci.domain <= 0xffff && pci.bus <= 0xff && pci.device <= 0x1f) {
            snprintf(norm, sizeof(norm), "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
            bus = json_object_new_string(norm);
        }
        json_object_object_add(d, "pci_device_id", json_object_new_int64(pci.pci_device_id));
    }
    nvml_put(d, "pci_bus_id", r == NVML_SUCCESS && !bus ? NVML_ERROR_UNKNOWN : r, bus);

    unsigned int u = 0;
    r = api->nvmlDeviceGetMinorNumber ? api->nvmlDeviceGetMinorNumber(dev, &u) : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "minor_number", r, json_object_new_int64(u));
}

/* Persistence, ECC mode and uncorrected counts, retired pages and remapped rows (DCGM page_retirement). */
static void nvml_query_memory(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    unsigned int u = 0, u2 = 0, u3 = 0, u4 = 0;
    nvmlEnableState_t st = 0, st2 = 0;
    nvmlReturn_t r = api->nvmlDeviceGetPersistenceMode ? api->nvmlDeviceGetPersistenceMode(dev, &st)
                                                        : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "persistence_mode", r, nvml_bool((unsigned)st));

    r = api->nvmlDeviceGetEccMode ? api->nvmlDeviceGetEccMode(dev, &st, &st2) : NVML_ERROR_FUNCTION_NOT_FOUND;
    json_object *ecc = json_object_new_object();
    json_object_object_add(ecc, "current", nvml_bool((unsigned)st));
    json_object_object_add(ecc, "pending", nvml_bool((unsigned)st2));
    nvml_put(d, "ecc_mode", r, ecc);

    static const struct {
        const char *key;
        int counter;
    } ecc_counts[] = {{"ecc_uncorrected_volatile", NVML_VOLATILE_ECC}, {"ecc_uncorrected_aggregate", NVML_AGGREGATE_ECC}};
    for (size_t i = 0; i < 2; i++) {
        unsigned long long n = 0;
        r = api->nvmlDeviceGetTotalEccErrors
                ? api->nvmlDeviceGetTotalEccErrors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, ecc_counts[i].counter, &n)
                : NVML_ERROR_FUNCTION_NOT_FOUND;
        nvml_put(d, ecc_counts[i].key, r, json_object_new_int64(n > INT64_MAX ? INT64_MAX : (int64_t)n));
    }

    r = api->nvmlDeviceGetRetiredPagesPendingStatus ? api->nvmlDeviceGetRetiredPagesPendingStatus(dev, &st)
                                                    : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "retired_pages_pending", r, nvml_bool((unsigned)st));

    /* Counts only: a buffer as large as DCGM's limit + 1, so INSUFFICIENT_SIZE already means "over". */
    json_object *retired = json_object_new_object();
    nvmlReturn_t rr = NVML_SUCCESS;
    static const struct {
        const char *key;
        int cause;
    } causes[] = {{"single_bit", NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS},
                  {"double_bit", NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR}};
    for (size_t i = 0; i < 2 && rr == NVML_SUCCESS; i++) {
        unsigned long long addrs[NVML_RETIRED_PAGES_LIMIT + 1];
        unsigned int n = NVML_RETIRED_PAGES_LIMIT + 1;
        rr = api->nvmlDeviceGetRetiredPages ? api->nvmlDeviceGetRetiredPages(dev, causes[i].cause, &n, addrs)
                                            : NVML_ERROR_FUNCTION_NOT_FOUND;
        if (rr == NVML_ERROR_INSUFFICIENT_SIZE)
            rr = NVML_SUCCESS; /* N is the count needed */
        json_object_object_add(retired, causes[i].key, json_object_new_int64(n));
    }
    nvml_put(d, "retired_pages", rr, retired);

    r = api->nvmlDeviceGetRemappedRows ? api->nvmlDeviceGetRemappedRows(dev, &u, &u2, &u3, &u4)
                                       : NVML_ERROR_FUNCTION_NOT_FOUND;
    json_object *rows = json_object_new_object();
    json_object_object_add(rows, "correctable", json_object_new_int64(u));
    json_object_object_add(rows, "uncorrectable", json_object_new_int64(u2));
    json_object_object_add(rows, "pending", nvml_bool(u3));
    json_object_object_add(rows, "failure", nvml_bool(u4));
    nvml_put(d, "remapped_rows", r, rows);
}

/* MIG mode and, when enabled, how many MIG devices exist. */
static void nvml_query_mig(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    unsigned int u = 0, u2 = 0;
    nvmlReturn_t r = api->nvmlDeviceGetMigMode ? api->nvmlDeviceGetMigMode(dev, &u, &u2) : NVML_ERROR_FUNCTION_NOT_FOUND;
    json_object *mig = json_object_new_object();
    json_object_object_add(mig, "current", nvml_bool(u == NVML_DEVICE_MIG_ENABLE));
    json_object_object_add(mig, "pending", nvml_bool(u2 == NVML_DEVICE_MIG_ENABLE));
    if (r == NVML_SUCCESS && u == NVML_DEVICE_MIG_ENABLE) {
        /* MIG devices (a compute instance in a GPU instance) are what CUDA enumerates under MIG; listing
         * them needs no privilege, unlike nvmlDeviceGetGpuInstances (nvml.h). */
        unsigned int max = 0, found = 0;
        nvmlReturn_t rm = api->nvmlDeviceGetMaxMigDeviceCount ? api->nvmlDeviceGetMaxMigDeviceCount(dev, &max)
                                                              : NVML_ERROR_FUNCTION_NOT_FOUND;
        for (unsigned int i = 0; rm == NVML_SUCCESS && i < max && i < NVML_MAX_MIG; i++) {
            nvmlDevice_t m = NULL;
            nvmlReturn_t ri = api->nvmlDeviceGetMigDeviceHandleByIndex
                                  ? api->nvmlDeviceGetMigDeviceHandleByIndex(dev, i, &m)
                                  : NVML_ERROR_FUNCTION_NOT_FOUND;
            if (ri == NVML_SUCCESS)
                found++;
            else if (ri != NVML_ERROR_NOT_FOUND)
                rm = ri;
        }
        nvml_put(mig, "devices", rm, json_object_new_int64(found));
    }
    nvml_put(d, "mig", r, mig);
}

/* Clock event reasons, by bit and by name. */
static void nvml_query_clocks(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    unsigned long long reasons = 0;
    nvmlReturn_t r = api->nvmlDeviceGetCurrentClocksEventReasons
                         ? api->nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons)
                         : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "clocks_event_reasons", r, json_object_new_int64((int64_t)(reasons & 0x7fffffffffffffffULL)));
    if (r == NVML_SUCCESS) {
        json_object *names = json_object_new_array();
        for (size_t i = 0; i < nvml_n_clock_reasons; i++)
            if (reasons & nvml_clock_reasons[i].bit)
                json_object_array_add(names, json_object_new_string(nvml_clock_reasons[i].name));
        json_object_object_add(d, "clocks_event_names", names);
    }
}

/* InfoROM validity and the driver's recommended recovery action (DCGM inforom, gpu_recovery_state). */
static void nvml_query_recovery(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    nvmlReturn_t r =
        api->nvmlDeviceValidateInforom ? api->nvmlDeviceValidateInforom(dev) : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "inforom_valid", r == NVML_ERROR_CORRUPTED_INFOROM ? NVML_SUCCESS : r,
             json_object_new_boolean(r == NVML_SUCCESS));

    /* The driver's recommended recovery action (DCGM checkGpuRecoveryState reads the same field). */
    struct nvml_field_value fv;
    memset(&fv, 0, sizeof(fv));
    fv.field_id = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    r = api->nvmlDeviceGetFieldValues ? api->nvmlDeviceGetFieldValues(dev, 1, &fv) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (r == NVML_SUCCESS)
        r = fv.result;
    /* A driver older than the field answers it as an invalid argument: that is "not supported". */
    if (r == NVML_ERROR_INVALID_ARGUMENT)
        r = NVML_ERROR_NOT_SUPPORTED;
    long long action = -1;
    if (r == NVML_SUCCESS) {
        switch (fv.value_type) {
        case 1: action = fv.value.ui; break;
        case 2: action = (long long)fv.value.ul; break;
        case 3: action = (long long)fv.value.ull; break;
        case 4: action = fv.value.sll; break;
        case 5: action = fv.value.si; break;
        case 6: action = fv.value.us; break;
        default: r = NVML_ERROR_UNKNOWN; break;
        }
    }
    nvml_put(d, "recovery_action", r, json_object_new_int64(action < 0 ? 0 : action));
}

/* The GPU's memory (bytes) and the processes NVML lists on it: "memory": {"total", "free", "used"},
 * "processes": [{"pid", "used_memory" (bytes, null when NVML cannot tell), "kind"}], and
 * "processes_more" (how many more a full table left out) when NVML had more than NVML_MAX_PROCS. */
static void nvml_query_procs(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    struct nvml_memory mem;
    memset(&mem, 0, sizeof(mem));
    nvmlReturn_t r = api->nvmlDeviceGetMemoryInfo ? api->nvmlDeviceGetMemoryInfo(dev, &mem)
                                                  : NVML_ERROR_FUNCTION_NOT_FOUND;
    json_object *m = json_object_new_object();
    json_object_object_add(m, "total", json_object_new_int64(mem.total > INT64_MAX ? INT64_MAX : (int64_t)mem.total));
    json_object_object_add(m, "free", json_object_new_int64(mem.free > INT64_MAX ? INT64_MAX : (int64_t)mem.free));
    json_object_object_add(m, "used", json_object_new_int64(mem.used > INT64_MAX ? INT64_MAX : (int64_t)mem.used));
    nvml_put(d, "memory", r, m);

    static const char *const kinds[] = {"compute", "graphics"};
    json_object *procs = json_object_new_array();
    nvmlReturn_t rp = NVML_SUCCESS;
    unsigned int more = 0;
    for (size_t k = 0; k < 2 && rp == NVML_SUCCESS; k++) {
        static struct nvml_process_info infos[NVML_MAX_PROCS];
        unsigned int n = NVML_MAX_PROCS;
        memset(infos, 0, sizeof(infos));
        nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *, struct nvml_process_info *) =
            k == 0 ? api->nvmlDeviceGetComputeRunningProcesses : api->nvmlDeviceGetGraphicsRunningProcesses;
        rp = fn ? fn(dev, &n, infos) : NVML_ERROR_FUNCTION_NOT_FOUND;
        if (rp == NVML_ERROR_INSUFFICIENT_SIZE) {
            /* the table is not filled: say how many there are */
            more += n;
            rp = NVML_SUCCESS;
            continue;
        }
        for (unsigned int i = 0; rp == NVML_SUCCESS && i < n && i < NVML_MAX_PROCS; i++) {
            json_object *p = json_object_new_object();
            json_object_object_add(p, "pid", json_object_new_int64(infos[i].pid));
            unsigned long long u = infos[i].used_gpu_memory;
            json_object_object_add(p, "used_memory", u == NVML_VALUE_NOT_AVAILABLE_ULL || u > INT64_MAX
                                                         ? NULL : json_object_new_int64((int64_t)u));
            json_object_object_add(p, "kind", json_object_new_string(kinds[k]));
            json_object_array_add(procs, p);
        }
    }
    nvml_put(d, "processes", rp, procs);
    if (more)
        json_object_object_add(d, "processes_more", json_object_new_int64(more));
}

/* Temperature now and the slowdown threshold (Celsius); the time spent held back for power and for heat
 * since the driver loaded: "temperature", "temperature_slowdown", "violation_seconds": {"power", "thermal"}. */
static void nvml_query_thermal(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    unsigned int c = 0;
    nvmlReturn_t r = api->nvmlDeviceGetTemperature ? api->nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &c)
                                                   : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "temperature", r, json_object_new_int64(c));
    c = 0;
    r = api->nvmlDeviceGetTemperatureThreshold
            ? api->nvmlDeviceGetTemperatureThreshold(dev, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &c)
            : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(d, "temperature_slowdown", r, json_object_new_int64(c));

    static const struct {
        const char *key;
        int policy;
    } policies[] = {{"power", NVML_PERF_POLICY_POWER}, {"thermal", NVML_PERF_POLICY_THERMAL}};
    json_object *v = json_object_new_object();
    nvmlReturn_t rv = NVML_SUCCESS;
    for (size_t i = 0; i < 2 && rv == NVML_SUCCESS; i++) {
        struct nvml_violation_time t;
        memset(&t, 0, sizeof(t));
        rv = api->nvmlDeviceGetViolationStatus ? api->nvmlDeviceGetViolationStatus(dev, policies[i].policy, &t)
                                               : NVML_ERROR_FUNCTION_NOT_FOUND;
        json_object_object_add(v, policies[i].key, json_object_new_int64((int64_t)(t.violation_time / 1000000000ULL)));
    }
    nvml_put(d, "violation_seconds", rv, v);
}

/* Everything NVML says about one GPU. */
static json_object *nvml_query_device(const struct nvml_api *api, unsigned int index)
{
    json_object *d = json_object_new_object();
    json_object_object_add(d, "index", json_object_new_int((int)index));
    nvmlDevice_t dev = NULL;
    nvmlReturn_t r = api->nvmlDeviceGetHandleByIndex(index, &dev);
    const char *rname = nvml_return_name(r);
    json_object_object_add(d, "handle_error", r == NVML_SUCCESS ? NULL
                                              : json_object_new_string(rname ? rname : "unknown NVML error"));
    if (r != NVML_SUCCESS)
        return d;
    nvml_query_ident(api, dev, d);
    nvml_query_memory(api, dev, d);
    nvml_query_mig(api, dev, d);
    nvml_query_clocks(api, dev, d);
    nvml_query_recovery(api, dev, d);
    nvml_query_procs(api, dev, d);
    nvml_query_thermal(api, dev, d);
    nvml_query_nvlink(api, dev, d);
    return d;
}

json_object *cuda_nvml_child(void *arg)
{
    const char *lib = arg ? (const char *)arg : "libnvidia-ml.so.1";
    json_object *o = json_object_new_object();
    json_object_object_add(o, "library", json_object_new_string(lib));
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        json_object_object_add(o, "status", json_object_new_string("no-library"));
        json_object_object_add(o, "error", json_object_new_string(err ? err : "dlopen failed"));
        return o;
    }
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
        json_object_object_add(o, "path", json_object_new_string(lm->l_name));

    struct nvml_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = NULL;
    if (nvml_api_load(h, &api, &missing) != 0) {
        json_object_object_add(o, "status", json_object_new_string("missing-symbol"));
        json_object_object_add(o, "error", json_object_new_string(missing ? missing : "?"));
        return o;
    }
    const char *pci_sym = nvml_api_pci_info_symbol(h);
    json_object_object_add(o, "pci_info_symbol", pci_sym ? json_object_new_string(pci_sym) : NULL);

    nvmlReturn_t r = api.nvmlInit();
    const char *rname = nvml_return_name(r);
    json_object_object_add(o, "init_result", json_object_new_int(r));
    json_object_object_add(o, "init_result_name", rname ? json_object_new_string(rname) : NULL);
    if (r != NVML_SUCCESS) {
        json_object_object_add(o, "status", json_object_new_string("init-failed"));
        return o;
    }
    json_object_object_add(o, "status", json_object_new_string("ok"));

    char buf[NVML_STR];
    memset(buf, 0, sizeof(buf));
    r = api.nvmlSystemGetDriverVersion ? api.nvmlSystemGetDriverVersion(buf, sizeof(buf))
                                       : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(o, "driver_version", r, r == NVML_SUCCESS ? nvml_jstr(buf, sizeof(buf)) : NULL);
    memset(buf, 0, sizeof(buf));
    r = api.nvmlSystemGetNVMLVersion ? api.nvmlSystemGetNVMLVersion(buf, sizeof(buf)) : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(o, "nvml_version", r, r == NVML_SUCCESS ? nvml_jstr(buf, sizeof(buf)) : NULL);
    int cv = 0;
    r = api.nvmlSystemGetCudaDriverVersion ? api.nvmlSystemGetCudaDriverVersion(&cv) : NVML_ERROR_FUNCTION_NOT_FOUND;
    nvml_put(o, "cuda_driver_version", r, json_object_new_int(cv));

    unsigned int count = 0;
    r = api.nvmlDeviceGetCount(&count);
    nvml_put(o, "device_count", r, json_object_new_int64(count));
    json_object *devs = json_object_new_array();
    for (unsigned int i = 0; r == NVML_SUCCESS && i < count && i < NVML_MAX_DEVICES; i++)
        json_object_array_add(devs, nvml_query_device(&api, i));
    nvml_nvlink_recount(&api, devs); /* the NVLink error counters again: did they grow meanwhile? */
    json_object_object_add(o, "devices", devs);
    api.nvmlShutdown();
    return o;
}
