/* fake_libcuda.c: a fake libcuda.so.1 for the tests: the driver API on the host, behaviour chosen by environment. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Environment (all optional):
 *   GC_FAKE_CUDA_INIT=N        cuInit returns CUresult N (default 0)
 *   GC_FAKE_CUDA_MODE=crash    cuInit dereferences NULL; =hang: cuInit never returns
 *   GC_FAKE_CUDA_GPUS=N        N devices (default 1, at most 64), PCI bus ids 0000:0X:00.0, X = 1..N
 *   GC_FAKE_CUDA_BUSIDS=A,B    the bus ids of devices 0, 1... as the driver prints them instead
 *   GC_FAKE_CUDA_VERSION=N     cuDriverGetVersion (default 13000)
 *   GC_FAKE_CUDA_CC=M.m        compute capability (default 9.0)
 *   GC_FAKE_CUDA_COMPUTE_MODE=N  compute mode attribute (default 0)
 *   GC_FAKE_CUDA_COMPUTE=correct|lazy|jit-fail|hang-load   the smoke kernel: computed on the host,
 *                              accepted and skipped (a device that computes nothing), a JIT failure
 *                              (221 + log), or a cuModuleLoadDataEx that never returns
 *   GC_FAKE_CUDA_P2P=ok|no-access|corrupt|hang   the peer functions: cuMemcpyPeer copies (default),
 *                              cuDeviceCanAccessPeer says no, the copy flips one byte, or it never returns
 *   GC_FAKE_CUDA_P2P_PAIR=A,B  the P2P behaviour only for the ordered pair device A -> device B (others ok)
 *   GC_FAKE_CUDA_COPY_LOG=PATH  every cuMemcpyHtoD and cuMemcpyPeer appends "htod BYTES" or "peer BYTES"
 *                              to PATH: what was really copied, for a test to hold bench's figures against
 *   GC_FAKE_CUDA_COPY_US_PER_MIB=N  those copies sleep N microseconds per MiB first: a bandwidth the
 *                              measurement cannot exceed (1 MiB per N us), whatever the host's memcpy does
 * CUDA_VISIBLE_DEVICES is honoured as the real driver does for indices: the list stops at the first
 * entry that is not a device, and an empty result makes cuInit return CUDA_ERROR_NO_DEVICE. */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct {
    char bytes[16];
} CUuuid;

#define EXPORT __attribute__((visibility("default")))

static int fake_initialised;
static int fake_count = -1;
static int fake_visible[64];

static int fake_env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

static void fake_setup(void)
{
    int n = fake_env_int("GC_FAKE_CUDA_GPUS", 1);
    if (n < 0)
        n = 0;
    if (n > 64)
        n = 64;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    fake_count = 0;
    if (!cvd) {
        for (int i = 0; i < n; i++)
            fake_visible[fake_count++] = i;
        return;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", cvd);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (end == tok || *end || v < 0 || v >= n || fake_count >= 64)
            break;
        fake_visible[fake_count++] = (int)v;
    }
}

EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    const char *mode = getenv("GC_FAKE_CUDA_MODE");
    if (mode && strcmp(mode, "crash") == 0) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (mode && strcmp(mode, "hang") == 0)
        for (;;)
            pause();
    int rc = fake_env_int("GC_FAKE_CUDA_INIT", 0);
    if (rc != 0)
        return rc;
    fake_setup();
    if (fake_count == 0)
        return 100; /* CUDA_ERROR_NO_DEVICE */
    fake_initialised = 1;
    return 0;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return 1;
    *v = fake_env_int("GC_FAKE_CUDA_VERSION", 13000);
    return 0;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **name)
{
    (void)r;
    *name = "FAKE";
    return 0;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    if (!fake_initialised)
        return 3;
    *count = fake_count;
    return 0;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (!fake_initialised)
        return 3;
    if (ordinal < 0 || ordinal >= fake_count)
        return 101;
    *dev = fake_visible[ordinal];
    return 0;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    snprintf(name, (size_t)len, "%s", dev == 0 ? "NVIDIA H100 80GB HBM3" : "NVIDIA H100 80GB HBM3 (fake)");
    return 0;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    (void)dev;
    *bytes = 85520809984ull;
    return 0;
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice dev)
{
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(0x10 * (i % 16) + dev);
    return 0;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    const char *list = getenv("GC_FAKE_CUDA_BUSIDS");
    if (list) {
        for (int i = 0; i < dev && list; i++) {
            list = strchr(list, ',');
            list = list ? list + 1 : NULL;
        }
        if (list) {
            snprintf(bus, (size_t)len, "%.*s", (int)strcspn(list, ","), list);
            return 0;
        }
    }
    snprintf(bus, (size_t)len, "00000000:%02X:00.0", dev + 1);
    return 0;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice dev)
{
    const char *cc = getenv("GC_FAKE_CUDA_CC");
    int ma = 9, mi = 0;
    if (cc)
        sscanf(cc, "%d.%d", &ma, &mi);
    switch (attr) {
    case 13: *v = 1980000; return 0;          /* clock rate, kHz */
    case 16: *v = 132; return 0;              /* multiprocessors */
    case 18: *v = 0; return 0;                /* integrated */
    case 20: *v = fake_env_int("GC_FAKE_CUDA_COMPUTE_MODE", 0); return 0;
    case 32: *v = 1; return 0;                /* ECC */
    case 33: *v = dev + 1; return 0;          /* PCI bus */
    case 35: *v = 0; return 0;                /* TCC driver: 0, as on Linux and under WSL2 (WDDM) */
    case 34: *v = 0; return 0;                /* PCI device */
    case 50: *v = 0; return 0;                /* PCI domain */
    case 75: *v = ma; return 0;
    case 76: *v = mi; return 0;
    case 84: *v = 0; return 0;
    default: return 1;                        /* CUDA_ERROR_INVALID_VALUE */
    }
}

/* ---- compute: the smoke kernel contract of probes/cuda/cuda_internal.h, on the host ---- */

struct fake_ctx {
    int dev;
};
static struct fake_ctx fake_ctxs[64];

static const char *fake_compute(void)
{
    const char *m = getenv("GC_FAKE_CUDA_COMPUTE");
    return m ? m : "correct";
}

EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice dev)
{
    if (dev < 0 || dev >= 64)
        return 101;
    fake_ctxs[dev].dev = dev;
    *ctx = &fake_ctxs[dev];
    return 0;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    (void)dev;
    return 0;
}

EXPORT CUresult cuCtxSetCurrent(void *ctx)
{
    (void)ctx;
    return 0;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    return 0;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    *free_bytes = 84000000000ull;
    *total = 85520809984ull;
    return 0;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m)
        return 2;
    *p = (CUdeviceptr)(uintptr_t)m;
    return 0;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return 0;
}

/* GC_FAKE_CUDA_COPY_LOG and GC_FAKE_CUDA_COPY_US_PER_MIB for one copy of KIND. */
static void fake_copy_note(const char *kind, size_t bytes)
{
    const char *us = getenv("GC_FAKE_CUDA_COPY_US_PER_MIB"), *log = getenv("GC_FAKE_CUDA_COPY_LOG");
    if (us && atoi(us) > 0)
        usleep((useconds_t)((double)atoi(us) * (double)bytes / 1048576.0));
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "%s %zu\n", kind, bytes);
        fclose(f);
    }
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
    fake_copy_note("htod", bytes);
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return 0;
}

EXPORT CUresult cuMemAllocHost_v2(void **p, size_t bytes)
{
    *p = malloc(bytes ? bytes : 1);
    return *p ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    free(p);
    return 0;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return 0;
}

EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count)
{
    unsigned int *d = (unsigned int *)(uintptr_t)dst;
    for (size_t i = 0; i < count; i++)
        d[i] = value;
    return 0;
}

static int fake_module;
static int fake_function;

EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned int n, int *options, void **values)
{
    if (strcmp(fake_compute(), "hang-load") == 0)
        for (;;)
            pause();
    if (strcmp(fake_compute(), "jit-fail") == 0) {
        /* As a driver without libnvidia-ptxjitcompiler answers: CUDA_ERROR_JIT_COMPILER_NOT_FOUND. */
        char *log = NULL;
        size_t size = 0;
        for (unsigned i = 0; i < n; i++) {
            if (options[i] == 5)
                log = values[i];
            if (options[i] == 6)
                size = (size_t)(uintptr_t)values[i];
        }
        if (log && size)
            snprintf(log, size, "ptxas fatal   : fake: PTX JIT compiler library not found");
        return 221;
    }
    if (!image || !strstr((const char *)image, "gc_sgemm_f32"))
        return 218; /* CUDA_ERROR_INVALID_PTX */
    *mod = &fake_module;
    return 0;
}

EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    if (mod != &fake_module || strcmp(name, "gc_sgemm_f32") != 0)
        return 500; /* CUDA_ERROR_NOT_FOUND */
    *fn = &fake_function;
    return 0;
}

EXPORT CUresult cuModuleUnload(void *mod)
{
    (void)mod;
    return 0;
}

EXPORT CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, void *stream, void **params, void **extra)
{
    (void)gz;
    (void)bz;
    (void)shared;
    (void)stream;
    (void)extra;
    if (fn != &fake_function || !params)
        return 400; /* CUDA_ERROR_INVALID_HANDLE */
    if (strcmp(fake_compute(), "lazy") == 0)
        return 0;
    const float *a = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
    const float *b = (const float *)(uintptr_t) * (CUdeviceptr *)params[1];
    float *c = (float *)(uintptr_t) * (CUdeviceptr *)params[2];
    unsigned n = *(unsigned *)params[3];
    /* The contract: any grid that covers n x n; rows and columns outside it are not computed. */
    unsigned rows = gy * by < n ? gy * by : n, cols = gx * bx < n ? gx * bx : n;
    for (unsigned i = 0; i < rows; i++)
        for (unsigned j = 0; j < cols; j++) {
            float s = 0.0f;
            for (unsigned k = 0; k < n; k++)
                s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
            c[(size_t)i * n + j] = s;
        }
    return 0;
}

static int fake_events[2];

EXPORT CUresult cuEventCreate(void **ev, unsigned flags)
{
    (void)flags;
    *ev = &fake_events[0];
    return 0;
}

EXPORT CUresult cuEventRecord(void *ev, void *stream)
{
    (void)ev;
    (void)stream;
    return 0;
}

EXPORT CUresult cuEventSynchronize(void *ev)
{
    (void)ev;
    return 0;
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    (void)a;
    (void)b;
    *ms = 0.25f;
    return 0;
}

EXPORT CUresult cuEventDestroy_v2(void *ev)
{
    (void)ev;
    return 0;
}

/* ---- peer to peer: GC_FAKE_CUDA_P2P, optionally for one ordered pair only ---- */

static const char *fake_p2p(int from, int to)
{
    const char *m = getenv("GC_FAKE_CUDA_P2P"), *pair = getenv("GC_FAKE_CUDA_P2P_PAIR");
    int a = -1, b = -1;
    if (pair && sscanf(pair, "%d,%d", &a, &b) == 2 && (a != from || b != to))
        return "ok";
    return m ? m : "ok";
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    if (dev < 0 || dev >= 64 || peer < 0 || peer >= 64)
        return 101;
    *can = dev != peer && strcmp(fake_p2p(dev, peer), "no-access") != 0;
    return 0;
}

EXPORT CUresult cuCtxEnablePeerAccess(void *peer, unsigned flags)
{
    (void)flags;
    return peer ? 0 : 201; /* CUDA_ERROR_INVALID_CONTEXT */
}

EXPORT CUresult cuCtxDisablePeerAccess(void *peer)
{
    return peer ? 0 : 201;
}

EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, void *dst_ctx, CUdeviceptr src, void *src_ctx, size_t bytes)
{
    if (!dst_ctx || !src_ctx)
        return 201;
    const char *m = fake_p2p(((struct fake_ctx *)src_ctx)->dev, ((struct fake_ctx *)dst_ctx)->dev);
    if (strcmp(m, "hang") == 0)
        for (;;)
            pause();
    fake_copy_note("peer", bytes);
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    if (strcmp(m, "corrupt") == 0 && bytes > 4096)
        ((unsigned char *)(uintptr_t)dst)[4096] ^= 0x10;
    return 0;
}
