/* fake_ze.c: a fake libze_loader.so.1, behaviours chosen by GC_FAKE_ZE_* variables. */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* GC_FAKE_ZE_INIT: ok (default), uninit (ZE_RESULT_ERROR_UNINITIALIZED), hang, crash.
 * Built twice: as a 1.8 loader (zeInit only, as Debian's libze1 1.8.12), and with FAKE_ZE_INIT_DRIVERS as a
 * 1.10 loader that also exports zeInitDrivers, which takes GC_FAKE_ZE_INIT the same way and writes
 * "zeInitDrivers flags=N" to GC_FAKE_ZE_LOG where set (what the caller asked for).
 * GC_FAKE_ZE_GPUS: how many GPU devices its one driver lists (default 1), at 0000:00:02.0, 0000:03:00.0... */
#define EXPORT __attribute__((visibility("default")))

static uint32_t fake_init(void)
{
    const char *m = getenv("GC_FAKE_ZE_INIT");
    if (m && strcmp(m, "uninit") == 0)
        return 0x78000001;
    if (m && strcmp(m, "hang") == 0)
        for (;;)
            pause();
    if (m && strcmp(m, "crash") == 0)
        raise(SIGSEGV);
    return 0;
}

EXPORT uint32_t zeInit(uint32_t flags)
{
    (void)flags;
    return fake_init();
}

static uint32_t ngpus(void)
{
    const char *g = getenv("GC_FAKE_ZE_GPUS");
    return g ? (uint32_t)atoi(g) : 1;
}

EXPORT uint32_t zeDriverGet(uint32_t *count, void **drivers)
{
    if (drivers && *count >= 1)
        drivers[0] = (void *)0x1;
    *count = 1;
    return 0;
}

EXPORT uint32_t zeDriverGetApiVersion(void *drv, uint32_t *v)
{
    (void)drv;
    *v = (1u << 16) | 3; /* 1.3 */
    return 0;
}

EXPORT uint32_t zeDeviceGet(void *drv, uint32_t *count, void **devs)
{
    (void)drv;
    uint32_t n = ngpus();
    for (uint32_t i = 0; devs && i < n && i < *count; i++)
        devs[i] = (void *)(uintptr_t)(i + 1);
    *count = n;
    return 0;
}

/* ze_device_properties_t up to name (ze_api.h). */
struct props {
    uint32_t stype;
    void *pNext;
    uint32_t type, vendorId, deviceId, flags, subdeviceId, coreClockRate;
    uint64_t maxMemAllocSize;
    uint32_t a, b, c, d, e, f, g;
    uint64_t timerResolution;
    uint32_t ts, kts;
    uint8_t uuid[16];
    char name[256];
};

EXPORT uint32_t zeDeviceGetProperties(void *dev, struct props *p)
{
    p->type = 1;
    p->vendorId = 0x8086;
    p->deviceId = 0xa780;
    p->flags = (uintptr_t)dev == 1 ? 1 : 0;
    memset(p->uuid, (int)(uintptr_t)dev, sizeof(p->uuid));
    strcpy(p->name, "Fake Intel Graphics");
    return 0;
}

struct pci {
    uint32_t stype;
    void *pNext;
    uint32_t domain, bus, device, function;
    int32_t gen, width;
    int64_t bw;
};

EXPORT uint32_t zeDevicePciGetPropertiesExt(void *dev, struct pci *p)
{
    uintptr_t i = (uintptr_t)dev;
    p->domain = 0;
    p->bus = i == 1 ? 0 : (uint32_t)i + 1;
    p->device = i == 1 ? 2 : 0;
    p->function = 0;
    return 0;
}

#ifdef FAKE_ZE_INIT_DRIVERS
struct init_desc {
    uint32_t stype;
    const void *pNext;
    uint32_t flags;
};

EXPORT uint32_t zeInitDrivers(uint32_t *count, void **drivers, struct init_desc *desc)
{
    const char *log = getenv("GC_FAKE_ZE_LOG");
    if (log) {
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "zeInitDrivers stype=0x%x flags=%u\n", desc ? desc->stype : 0u, desc ? desc->flags : 0u);
            fclose(f);
        }
    }
    uint32_t r = fake_init();
    if (r != 0)
        return r;
    return zeDriverGet(count, drivers);
}
#endif
