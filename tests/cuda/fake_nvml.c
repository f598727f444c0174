/* fake_nvml.c: a fake libnvidia-ml.so.1 for the tests, its GPUs and failures chosen by environment variables. */
/*
 * GC_FAKE_NVML_MODE   healthy (default), mismatch, driver-not-loaded, no-permission, init-unknown, crash,
 *                     hang, mig-no-instance, mig-ok, mig-pending, remap-pending, remap-failure, remap-limit,
 *                     retired-pending, retired-limit, ecc-unc, ecc-pending, hw-slowdown, thermal, idle,
 *                     inforom-invalid, gpu-lost, persistence-off, unsupported, recovery-reset, recovery-reboot,
 *                     handle-perm
 * GC_FAKE_NVML_GPUS   number of GPUs (default 1, at most 16)
 * GC_FAKE_NVML_BAD    index of the GPU the per-GPU mode applies to (default 0; "all" for every GPU)
 * GC_FAKE_NVML_BUSIDS comma-separated PCI addresses ("0000:00:06.0,0000:01:00.0"), matching a fake sysfs;
 *                     default 0000:00:06.0 for GPU 0 and 0000:NN:00.0 after it
 * GC_FAKE_NVML_DRIVER driver version (default 580.159.04)
 * GC_FAKE_NVML_NVLINK  links per GPU (unset: no NVLink, every link call NVML_ERROR_NOT_SUPPORTED); link L
 *                     of GPU G joins GPU (G + 1 + L % (N - 1)) % N; every counter starts at 5 (errors since
 *                     the driver loaded, not growing). GC_FAKE_NVML_NVLINK_DOWN=G:L makes that link inactive,
 *                     GC_FAKE_NVML_NVLINK_GROW=G:L makes its CRC flit counter grow by 3 on every read.
 *                     Only in the new-ABI build (an old driver's library has no _v2 remote PCI info).
 * GC_FAKE_NVML_MEM_TOTAL_MIB, GC_FAKE_NVML_PROCS: memory and processes; GC_FAKE_NVML_TEMP,
 *                     GC_FAKE_NVML_VIOLATION_S: temperature and throttling history (at the end of this file)
 * Built twice: the default exports the versioned names of NVML 13 (nvmlInit_v2, ..._v3 PCI info,
 * nvmlDeviceGetCurrentClocksEventReasons); with FAKE_NVML_OLD only the plain names of an old driver
 * (nvmlInit, the 52-byte nvmlDeviceGetPciInfo layout, nvmlDeviceGetCurrentClocksThrottleReasons, no
 * nvmlDeviceGetFieldValues).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 16

typedef int ret_t;
enum { OK = 0, E_UNINIT = 1, E_ARG = 2, E_NOTSUP = 3, E_PERM = 4, E_NOTFOUND = 6, E_SIZE = 7, E_NODRV = 9,
       E_INFOROM = 14, E_LOST = 15, E_MISMATCH = 18, E_UNKNOWN = 999 };

struct fake_gpu {
    unsigned int index;
    unsigned int domain, bus, dev, fn;
};

static struct fake_gpu gpus[MAX_GPUS];
static unsigned int n_gpus;
static int initialised;

static const char *mode(void)
{
    const char *m = getenv("GC_FAKE_NVML_MODE");
    return m && *m ? m : "healthy";
}

static int is(const char *m)
{
    return strcmp(mode(), m) == 0;
}

/* The per-GPU mode applies to this GPU. */
static int bad(const struct fake_gpu *g)
{
    const char *b = getenv("GC_FAKE_NVML_BAD");
    if (b && strcmp(b, "all") == 0)
        return 1;
    return g->index == (unsigned int)(b ? atoi(b) : 0);
}

static int bad_is(const struct fake_gpu *g, const char *m)
{
    return is(m) && bad(g);
}

static void setup(void)
{
    const char *n = getenv("GC_FAKE_NVML_GPUS");
    n_gpus = n ? (unsigned int)atoi(n) : 1;
    if (n_gpus > MAX_GPUS)
        n_gpus = MAX_GPUS;
    const char *ids = getenv("GC_FAKE_NVML_BUSIDS");
    for (unsigned int i = 0; i < n_gpus; i++) {
        struct fake_gpu *g = &gpus[i];
        g->index = i;
        g->domain = 0;
        g->bus = i == 0 ? 0 : i;
        g->dev = i == 0 ? 6 : 0;
        g->fn = 0;
        if (ids) {
            const char *p = ids;
            for (unsigned int k = 0; k < i && p; k++) {
                p = strchr(p, ',');
                if (p)
                    p++;
            }
            if (p)
                sscanf(p, "%x:%x:%x.%x", &g->domain, &g->bus, &g->dev, &g->fn);
        }
    }
}

static ret_t do_init(void)
{
    if (is("crash")) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (is("hang"))
        for (;;)
            pause();
    if (is("mismatch"))
        return E_MISMATCH;
    if (is("driver-not-loaded"))
        return E_NODRV;
    if (is("no-permission"))
        return E_PERM;
    if (is("init-unknown"))
        return E_UNKNOWN;
    setup();
    initialised = 1;
    return OK;
}

static ret_t get_count(unsigned int *count)
{
    if (!initialised)
        return E_UNINIT;
    if (!count)
        return E_ARG;
    *count = n_gpus;
    return OK;
}

static ret_t get_handle(unsigned int index, struct fake_gpu **dev)
{
    if (!initialised)
        return E_UNINIT;
    if (index >= n_gpus || !dev)
        return E_ARG;
    if (is("handle-perm") && bad(&gpus[index]))
        return E_PERM;
    *dev = &gpus[index];
    return OK;
}

/* Common guard of per-device calls. */
#define DEV_GUARD(d)                                                                                             \
    do {                                                                                                         \
        if (!initialised)                                                                                        \
            return E_UNINIT;                                                                                     \
        if (!(d))                                                                                                \
            return E_ARG;                                                                                        \
        if (bad_is((d), "gpu-lost"))                                                                             \
            return E_LOST;                                                                                       \
        if (bad_is((d), "unsupported"))                                                                          \
            return E_NOTSUP;                                                                                     \
    } while (0)

#ifndef FAKE_NVML_OLD
EXPORT ret_t nvmlInit_v2(void) { return do_init(); }
EXPORT ret_t nvmlDeviceGetCount_v2(unsigned int *count) { return get_count(count); }
EXPORT ret_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, struct fake_gpu **dev) { return get_handle(index, dev); }

struct pci_v3 {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

EXPORT ret_t nvmlDeviceGetPciInfo_v3(struct fake_gpu *d, struct pci_v3 *p)
{
    if (!initialised)
        return E_UNINIT;
    if (!d || !p)
        return E_ARG;
    if (bad_is(d, "gpu-lost"))
        return E_LOST;
    memset(p, 0, sizeof(*p));
    /* nvml.h NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT and NVML_DEVICE_PCI_BUS_ID_FMT */
    snprintf(p->bus_id_legacy, sizeof(p->bus_id_legacy), "%04X:%02X:%02X.0", d->domain, d->bus, d->dev);
    snprintf(p->bus_id, sizeof(p->bus_id), "%08X:%02X:%02X.0", d->domain, d->bus, d->dev);
    p->domain = d->domain;
    p->bus = d->bus;
    p->device = d->dev;
    p->pci_device_id = 0x233010de;
    p->pci_subsystem_id = 0x16c110de;
    return OK;
}

/* ---- NVLink: GC_FAKE_NVML_NVLINK, _DOWN, _GROW ---- */

static int nvlink_links(void)
{
    const char *e = getenv("GC_FAKE_NVML_NVLINK");
    return e ? atoi(e) : 0;
}

/* Does "G:L" in variable NAME name link L of GPU D? */
static int nvlink_named(const char *name, const struct fake_gpu *d, unsigned int link)
{
    const char *e = getenv(name);
    unsigned int g, l;
    return e && sscanf(e, "%u:%u", &g, &l) == 2 && g == d->index && l == link;
}

static ret_t nvlink_guard(const struct fake_gpu *d, unsigned int link)
{
    if (!initialised)
        return E_UNINIT;
    if (!d)
        return E_ARG;
    if (nvlink_links() <= 0)
        return E_NOTSUP;
    return link < (unsigned int)nvlink_links() ? OK : E_ARG;
}

EXPORT ret_t nvmlDeviceGetNvLinkState(struct fake_gpu *d, unsigned int link, int *active)
{
    ret_t r = nvlink_guard(d, link);
    if (r != OK || !active)
        return r != OK ? r : E_ARG;
    *active = !nvlink_named("GC_FAKE_NVML_NVLINK_DOWN", d, link);
    return OK;
}

EXPORT ret_t nvmlDeviceGetNvLinkErrorCounter(struct fake_gpu *d, unsigned int link, int counter,
                                             unsigned long long *value)
{
    static unsigned long long grown;
    ret_t r = nvlink_guard(d, link);
    if (r != OK || !value || counter < 0 || counter > 4)
        return r != OK ? r : E_ARG;
    *value = 5;
    if (counter == 2 && nvlink_named("GC_FAKE_NVML_NVLINK_GROW", d, link))
        *value += (grown += 3);
    return OK;
}

EXPORT ret_t nvmlDeviceGetNvLinkRemotePciInfo_v2(struct fake_gpu *d, unsigned int link, struct pci_v3 *p)
{
    ret_t r = nvlink_guard(d, link);
    if (r != OK || !p)
        return r != OK ? r : E_ARG;
    if (n_gpus < 2)
        return E_NOTSUP;
    const struct fake_gpu *far = &gpus[(d->index + 1 + link % (n_gpus - 1)) % n_gpus];
    return nvmlDeviceGetPciInfo_v3((struct fake_gpu *)far, p);
}
#else
EXPORT ret_t nvmlInit(void) { return do_init(); }
EXPORT ret_t nvmlDeviceGetCount(unsigned int *count) { return get_count(count); }
EXPORT ret_t nvmlDeviceGetHandleByIndex(unsigned int index, struct fake_gpu **dev) { return get_handle(index, dev); }

struct pci_v1 {
    char bus_id[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    unsigned int reserved[4];
};

EXPORT ret_t nvmlDeviceGetPciInfo(struct fake_gpu *d, struct pci_v1 *p)
{
    if (!initialised)
        return E_UNINIT;
    if (!d || !p)
        return E_ARG;
    memset(p, 0, sizeof(*p));
    snprintf(p->bus_id, sizeof(p->bus_id), "%04X:%02X:%02X.0", d->domain, d->bus, d->dev);
    p->domain = d->domain;
    p->bus = d->bus;
    p->device = d->dev;
    p->pci_device_id = 0x1db410de;
    return OK;
}
#endif

EXPORT ret_t nvmlShutdown(void)
{
    initialised = 0;
    return OK;
}

EXPORT ret_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    const char *v = getenv("GC_FAKE_NVML_DRIVER");
    if (!buf || len == 0)
        return E_ARG;
    snprintf(buf, len, "%s", v ? v : "580.159.04");
    return OK;
}

EXPORT ret_t nvmlSystemGetNVMLVersion(char *buf, unsigned int len)
{
    if (!buf || len == 0)
        return E_ARG;
    snprintf(buf, len, "13.580.159.04");
    return OK;
}

EXPORT ret_t nvmlSystemGetCudaDriverVersion(int *v)
{
    if (!v)
        return E_ARG;
    *v = 13000;
    return OK;
}

EXPORT ret_t nvmlDeviceGetName(struct fake_gpu *d, char *buf, unsigned int len)
{
    if (!initialised)
        return E_UNINIT;
    if (!d || !buf)
        return E_ARG;
    if (bad_is(d, "gpu-lost"))
        return E_LOST;
    snprintf(buf, len, "NVIDIA H100 80GB HBM3");
    return OK;
}

EXPORT ret_t nvmlDeviceGetUUID(struct fake_gpu *d, char *buf, unsigned int len)
{
    DEV_GUARD(d);
    snprintf(buf, len, "GPU-6b1e5c2a-0000-4000-8000-%012x", d->index);
    return OK;
}

EXPORT ret_t nvmlDeviceGetMinorNumber(struct fake_gpu *d, unsigned int *minor)
{
    DEV_GUARD(d);
    *minor = d->index;
    return OK;
}

EXPORT ret_t nvmlDeviceGetPersistenceMode(struct fake_gpu *d, int *mode_out)
{
    DEV_GUARD(d);
    *mode_out = bad_is(d, "persistence-off") ? 0 : 1;
    return OK;
}

EXPORT ret_t nvmlDeviceGetEccMode(struct fake_gpu *d, int *current, int *pending)
{
    DEV_GUARD(d);
    *current = 1;
    *pending = bad_is(d, "ecc-pending") ? 0 : 1;
    return OK;
}

EXPORT ret_t nvmlDeviceGetTotalEccErrors(struct fake_gpu *d, int type, int counter, unsigned long long *n)
{
    DEV_GUARD(d);
    if (!n || type < 0 || type > 1 || counter < 0 || counter > 1)
        return E_ARG;
    *n = 0;
    if (type == 1 && bad_is(d, "ecc-unc"))
        *n = counter == 0 ? 2 : 5;
    return OK;
}

EXPORT ret_t nvmlDeviceGetRetiredPagesPendingStatus(struct fake_gpu *d, int *pending)
{
    DEV_GUARD(d);
    /* Ampere and later retire nothing (row remapping instead): NOT_SUPPORTED, as on an H100 */
    if (!is("retired-pending") && !is("retired-limit"))
        return E_NOTSUP;
    *pending = bad_is(d, "retired-pending");
    return OK;
}

EXPORT ret_t nvmlDeviceGetRetiredPages(struct fake_gpu *d, int cause, unsigned int *count, unsigned long long *addr)
{
    DEV_GUARD(d);
    if (!count || cause < 0 || cause > 1)
        return E_ARG;
    if (!is("retired-pending") && !is("retired-limit"))
        return E_NOTSUP;
    unsigned int have = bad_is(d, "retired-limit") ? (cause == 0 ? 40 : 30) : (cause == 1 ? 1 : 0);
    if (*count < have) {
        *count = have;
        return E_SIZE;
    }
    for (unsigned int i = 0; i < have && addr; i++)
        addr[i] = 0x1000ull * (i + 1);
    *count = have;
    return OK;
}

EXPORT ret_t nvmlDeviceGetRemappedRows(struct fake_gpu *d, unsigned int *corr, unsigned int *unc, unsigned int *pending,
                                       unsigned int *failure)
{
    DEV_GUARD(d);
    if (!corr || !unc || !pending || !failure)
        return E_ARG;
    if (is("mig-no-instance") || is("mig-ok"))
        return E_NOTSUP; /* nvml.h: not supported while MIG is enabled */
    *corr = 0;
    *unc = 0;
    *pending = 0;
    *failure = 0;
    if (bad_is(d, "remap-pending")) {
        *unc = 1;
        *pending = 1;
    }
    if (bad_is(d, "remap-failure"))
        *failure = 1;
    if (bad_is(d, "remap-limit"))
        *unc = 512;
    return OK;
}

EXPORT ret_t nvmlDeviceGetMigMode(struct fake_gpu *d, unsigned int *current, unsigned int *pending)
{
    DEV_GUARD(d);
    int on = bad_is(d, "mig-no-instance") || bad_is(d, "mig-ok");
    *current = on;
    *pending = bad_is(d, "mig-pending") ? 1 : on;
    return OK;
}

EXPORT ret_t nvmlDeviceGetMaxMigDeviceCount(struct fake_gpu *d, unsigned int *count)
{
    DEV_GUARD(d);
    unsigned int cur = 0, pend = 0;
    nvmlDeviceGetMigMode(d, &cur, &pend);
    *count = cur ? 7 : 0;
    return OK;
}

static struct fake_gpu mig_handles[2];

EXPORT ret_t nvmlDeviceGetMigDeviceHandleByIndex(struct fake_gpu *d, unsigned int index, struct fake_gpu **mig)
{
    DEV_GUARD(d);
    if (!mig)
        return E_ARG;
    if (!bad_is(d, "mig-ok") || index >= 2)
        return E_NOTFOUND;
    *mig = &mig_handles[index];
    return OK;
}

static ret_t clocks(struct fake_gpu *d, unsigned long long *r)
{
    DEV_GUARD(d);
    if (!r)
        return E_ARG;
    /* an idle healthy GPU: GPU idle; "idle" adds application clocks and SW power cap (still healthy) */
    *r = 0x1;
    if (bad_is(d, "idle"))
        *r |= 0x2 | 0x4 | 0x10;
    if (bad_is(d, "hw-slowdown"))
        *r = 0x8 | 0x80;
    if (bad_is(d, "thermal"))
        *r = 0x20 | 0x40;
    return OK;
}

#ifndef FAKE_NVML_OLD
EXPORT ret_t nvmlDeviceGetCurrentClocksEventReasons(struct fake_gpu *d, unsigned long long *r) { return clocks(d, r); }
#else
EXPORT ret_t nvmlDeviceGetCurrentClocksThrottleReasons(struct fake_gpu *d, unsigned long long *r) { return clocks(d, r); }
#endif

EXPORT ret_t nvmlDeviceValidateInforom(struct fake_gpu *d)
{
    DEV_GUARD(d);
    return bad_is(d, "inforom-invalid") ? E_INFOROM : OK;
}

#ifndef FAKE_NVML_OLD
/* nvmlFieldValue_t (nvml.h) */
struct field_value {
    unsigned int field_id, scope_id;
    long long timestamp, latency_usec;
    int value_type;
    ret_t result;
    unsigned long long value;
};

EXPORT ret_t nvmlDeviceGetFieldValues(struct fake_gpu *d, int count, struct field_value *v)
{
    DEV_GUARD(d);
    if (!v || count < 0)
        return E_ARG;
    for (int i = 0; i < count; i++) {
        v[i].value = 0;
        if (v[i].field_id != 230) { /* NVML_FI_DEV_GET_GPU_RECOVERY_ACTION */
            v[i].result = E_ARG;
            continue;
        }
        v[i].result = OK;
        v[i].value_type = 1; /* unsigned int */
        unsigned int action = bad_is(d, "recovery-reset") ? 1 : bad_is(d, "recovery-reboot") ? 2 : 0;
        memcpy(&v[i].value, &action, sizeof(action));
    }
    return OK;
}
#endif

/* Memory and processes. GC_FAKE_NVML_MEM_TOTAL_MIB: each GPU's memory (default 81559, an H100 80GB);
 * GC_FAKE_NVML_PROCS: the processes on the GPU(s) GC_FAKE_NVML_BAD names, "PID:MIB[:g],..." (g: a
 * graphics process, else compute; MIB "na": NVML_VALUE_NOT_AVAILABLE; PID "parent": the process that
 * started this one, gpucheckup itself). Used memory is theirs plus 512 MiB the driver keeps. */
struct proc_info {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
};

#define FAKE_MIB (1024ull * 1024ull)

static unsigned long long mem_total(void)
{
    const char *t = getenv("GC_FAKE_NVML_MEM_TOTAL_MIB");
    return (t ? strtoull(t, NULL, 10) : 81559ull) * FAKE_MIB;
}

/* The processes of KIND ('c' compute, 'g' graphics) on D into OUT (at most MAX); returns how many there are. */
static unsigned int procs_of(struct fake_gpu *d, char kind, struct proc_info *out, unsigned int max)
{
    const char *spec = getenv("GC_FAKE_NVML_PROCS");
    unsigned int n = 0;
    if (!spec || !bad(d))
        return 0;
    for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char pid[32] = "", mib[32] = "", k = 'c';
        if (sscanf(p, "%31[^:,]:%31[^:,]:%c", pid, mib, &k) < 2)
            continue;
        if (k != kind)
            continue;
        if (n < max && out) {
            out[n].pid = strcmp(pid, "parent") == 0 ? (unsigned int)getppid() : (unsigned int)strtoul(pid, NULL, 10);
            out[n].used = strcmp(mib, "na") == 0 ? ~0ull : strtoull(mib, NULL, 10) * FAKE_MIB;
            out[n].gi = out[n].ci = ~0u;
        }
        n++;
    }
    return n;
}

struct memory { unsigned long long total, free, used; };

EXPORT ret_t nvmlDeviceGetMemoryInfo(struct fake_gpu *d, struct memory *m)
{
    DEV_GUARD(d);
    if (!m)
        return E_ARG;
    struct proc_info ps[64];
    unsigned long long used = 512 * FAKE_MIB;
    for (int k = 0; k < 2; k++) {
        unsigned int n = procs_of(d, k ? 'g' : 'c', ps, 64);
        for (unsigned int i = 0; i < n && i < 64; i++)
            used += ps[i].used == ~0ull ? 0 : ps[i].used;
    }
    m->total = mem_total();
    m->used = used > m->total ? m->total : used;
    m->free = m->total - m->used;
    return OK;
}

static ret_t running(struct fake_gpu *d, char kind, unsigned int *count, struct proc_info *infos)
{
    DEV_GUARD(d);
    if (!count)
        return E_ARG;
    unsigned int n = procs_of(d, kind, NULL, 0);
    if (n > *count) {
        *count = n;
        return E_SIZE;
    }
    *count = procs_of(d, kind, infos, *count);
    return OK;
}

#ifndef FAKE_NVML_OLD
EXPORT ret_t nvmlDeviceGetComputeRunningProcesses_v3(struct fake_gpu *d, unsigned int *c, struct proc_info *i)
{
    return running(d, 'c', c, i);
}
EXPORT ret_t nvmlDeviceGetGraphicsRunningProcesses_v3(struct fake_gpu *d, unsigned int *c, struct proc_info *i)
{
    return running(d, 'g', c, i);
}
#else
EXPORT ret_t nvmlDeviceGetComputeRunningProcesses_v2(struct fake_gpu *d, unsigned int *c, struct proc_info *i)
{
    return running(d, 'c', c, i);
}
EXPORT ret_t nvmlDeviceGetGraphicsRunningProcesses_v2(struct fake_gpu *d, unsigned int *c, struct proc_info *i)
{
    return running(d, 'g', c, i);
}
#endif

/* Temperature and throttling history. GC_FAKE_NVML_TEMP: the GPU's temperature (default 34 C; slowdown
 * threshold 87 C); GC_FAKE_NVML_VIOLATION_S: "POWER,THERMAL" seconds spent held back since the driver
 * loaded (default 0,0), on the GPU(s) GC_FAKE_NVML_BAD names. */
struct violation { unsigned long long reference, ns; };

EXPORT ret_t nvmlDeviceGetTemperature(struct fake_gpu *d, int sensor, unsigned int *c)
{
    DEV_GUARD(d);
    if (!c || sensor != 0)
        return E_ARG;
    const char *t = getenv("GC_FAKE_NVML_TEMP");
    *c = t && bad(d) ? (unsigned int)atoi(t) : 34;
    return OK;
}

EXPORT ret_t nvmlDeviceGetTemperatureThreshold(struct fake_gpu *d, int which, unsigned int *c)
{
    DEV_GUARD(d);
    if (!c || which < 0 || which > 1)
        return E_ARG;
    *c = which == 1 ? 87 : 92;
    return OK;
}

EXPORT ret_t nvmlDeviceGetViolationStatus(struct fake_gpu *d, int policy, struct violation *v)
{
    DEV_GUARD(d);
    if (!v || policy < 0 || policy > 1)
        return E_ARG;
    unsigned long long s[2] = {0, 0};
    const char *e = getenv("GC_FAKE_NVML_VIOLATION_S");
    if (e && bad(d))
        sscanf(e, "%llu,%llu", &s[0], &s[1]);
    v->reference = 1700000000000000ull;
    v->ns = s[policy] * 1000000000ull;
    return OK;
}
