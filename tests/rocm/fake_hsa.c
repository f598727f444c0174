/* fake_hsa.c: a fake libhsa-runtime64.so.1 and libamdhip64.so.6 in one library, behaviours chosen by GC_FAKE_HSA_* variables. */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* GC_FAKE_HSA_INIT: ok (default), oor (HSA_STATUS_ERROR_OUT_OF_RESOURCES, 0x1008), hang, crash.
 * GC_FAKE_HSA_GPUS: "gfx1100@0300" entries separated by commas (name@BDFID in hex); unset: one gfx1100 at
 * 0000:03:00.0; "" for a CPU agent only. GC_FAKE_HIP_COUNT: hipGetDeviceCount's answer (default: the GPUs;
 * "nodevice": hipErrorNoDevice). The same file stands for both libraries: the test links it under both names. */
#define EXPORT __attribute__((visibility("default")))

typedef struct { uint64_t handle; } agent_t;

static const char *gpus(void)
{
    const char *g = getenv("GC_FAKE_HSA_GPUS");
    return g ? g : "gfx1100@0300";
}

EXPORT uint32_t hsa_init(void)
{
    const char *m = getenv("GC_FAKE_HSA_INIT");
    if (m && strcmp(m, "oor") == 0)
        return 0x1008;
    if (m && strcmp(m, "hang") == 0)
        for (;;)
            pause();
    if (m && strcmp(m, "crash") == 0)
        raise(SIGSEGV);
    return 0;
}

EXPORT uint32_t hsa_shut_down(void)
{
    return 0;
}

EXPORT uint32_t hsa_status_string(uint32_t st, const char **text)
{
    *text = st == 0x1008 ? "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources."
                         : st == 0 ? "HSA_STATUS_SUCCESS" : "HSA_STATUS_ERROR";
    return 0;
}

EXPORT uint32_t hsa_system_get_info(int attr, void *value)
{
    *(uint16_t *)value = attr == 0 ? 1 : 14;
    return 0;
}

/* Entry I of the GPU list ("gfx1100@0300"), or -1 past its end. */
static int gpu_entry(size_t i, char *name, size_t len, unsigned *bdf)
{
    const char *p = gpus();
    for (size_t k = 0; k < i && p; k++) {
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p)
        return -1;
    size_t n = strcspn(p, "@,");
    if (n >= len)
        n = len - 1;
    memcpy(name, p, n);
    name[n] = '\0';
    *bdf = p[n] == '@' ? (unsigned)strtoul(p + n + 1, NULL, 16) : 0;
    return 0;
}

EXPORT uint32_t hsa_iterate_agents(uint32_t (*cb)(agent_t, void *), void *data)
{
    cb((agent_t){0}, data); /* the CPU */
    char name[64];
    unsigned bdf;
    for (size_t i = 0; gpu_entry(i, name, sizeof(name), &bdf) == 0; i++)
        cb((agent_t){i + 1}, data);
    return 0;
}

EXPORT uint32_t hsa_agent_get_info(agent_t a, int attr, void *value)
{
    char name[64] = "AMD Ryzen";
    unsigned bdf = 0;
    if (a.handle && gpu_entry(a.handle - 1, name, sizeof(name), &bdf) < 0)
        return 0x1001;
    switch (attr) {
    case 0:
        strcpy(value, name);
        return 0;
    case 17:
        *(uint32_t *)value = a.handle ? 1 : 0;
        return 0;
    case 0xA006:
        *(uint32_t *)value = bdf;
        return 0;
    case 0xA00F:
        *(uint32_t *)value = 0;
        return 0;
    case 0xA002:
        *(uint32_t *)value = a.handle ? 96 : 16;
        return 0;
    case 0xA009:
        strcpy(value, a.handle ? "Fake Radeon" : "Fake CPU");
        return 0;
    default:
        return 0x1001;
    }
}

/* ---- HIP ---- */

EXPORT int hipRuntimeGetVersion(int *v)
{
    *v = 60241133; /* 6.2.41133 */
    return 0;
}

EXPORT int hipDriverGetVersion(int *v)
{
    *v = 60241133;
    return 0;
}

EXPORT int hipGetDeviceCount(int *n)
{
    const char *c = getenv("GC_FAKE_HIP_COUNT");
    if (c && strcmp(c, "nodevice") == 0)
        return 100;
    int k = 0;
    char name[64];
    unsigned bdf;
    while (gpu_entry((size_t)k, name, sizeof(name), &bdf) == 0)
        k++;
    *n = c ? atoi(c) : k;
    return 0;
}

EXPORT const char *hipGetErrorName(int e)
{
    return e == 100 ? "hipErrorNoDevice" : e == 0 ? "hipSuccess" : "hipErrorUnknown";
}

EXPORT int hipDeviceGetName(char *buf, int len, int dev)
{
    (void)dev;
    strncpy(buf, "Fake Radeon", (size_t)len);
    return 0;
}

/* ---- HIP's compute calls and hipRTC, for the HIP smoke test ----
 * GC_FAKE_HIP_SMOKE: compute (default: the kernel's product, on the CPU), nothing (a device that computes
 * nothing: the output stays as it was), wrong (one element off by one), compile-error (hipRTC fails with
 * HIPRTC_ERROR_COMPILATION and a log), launch-error (hipErrorLaunchFailure), crash, hang (in the launch). */
#include <math.h>

static const char *smoke_mode(void)
{
    const char *m = getenv("GC_FAKE_HIP_SMOKE");
    return m ? m : "compute";
}

static int current_device;

EXPORT int hipSetDevice(int d)
{
    current_device = d;
    return 0;
}

EXPORT int hipMalloc(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? 0 : 2; /* hipErrorOutOfMemory */
}

EXPORT int hipFree(void *p)
{
    free(p);
    return 0;
}

EXPORT int hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
    (void)kind;
    memcpy(dst, src, n);
    return 0;
}

EXPORT int hiprtcCreateProgram(void **prog, const char *src, const char *name, int nh, const char **h, const char **hn)
{
    (void)name, (void)nh, (void)h, (void)hn;
    *prog = strstr(src, "gc_sgemm_f32") ? (void *)0x1 : NULL;
    return *prog ? 0 : 3;
}

EXPORT int hiprtcCompileProgram(void *prog, int n, const char **opts)
{
    (void)prog;
    /* the option names the device's target, as hipRTC needs it */
    if (n != 1 || strncmp(opts[0], "--gpu-architecture=gfx", 22) != 0)
        return 6;
    return strcmp(smoke_mode(), "compile-error") == 0 ? 6 : 0; /* HIPRTC_ERROR_COMPILATION */
}

static const char fake_log[] = "gc_sgemm.hip:8:13: error: use of undeclared identifier 'fmaf'";

EXPORT int hiprtcGetProgramLogSize(void *prog, size_t *n)
{
    (void)prog;
    *n = sizeof(fake_log);
    return 0;
}

EXPORT int hiprtcGetProgramLog(void *prog, char *log)
{
    (void)prog;
    memcpy(log, fake_log, sizeof(fake_log));
    return 0;
}

EXPORT int hiprtcGetCodeSize(void *prog, size_t *n)
{
    (void)prog;
    *n = 16;
    return 0;
}

EXPORT int hiprtcGetCode(void *prog, char *code)
{
    (void)prog;
    memcpy(code, "\177ELF fake code!", 16);
    return 0;
}

EXPORT int hiprtcDestroyProgram(void **prog)
{
    *prog = NULL;
    return 0;
}

EXPORT int hipModuleLoadData(void **mod, const void *image)
{
    *mod = memcmp(image, "\177ELF", 4) == 0 ? (void *)0x2 : NULL;
    return *mod ? 0 : 200; /* hipErrorInvalidImage */
}

EXPORT int hipModuleGetFunction(void **fn, void *mod, const char *name)
{
    (void)mod;
    *fn = strcmp(name, "gc_sgemm_f32") == 0 ? (void *)0x3 : NULL;
    return *fn ? 0 : 500; /* hipErrorNotFound */
}

EXPORT int hipModuleUnload(void *mod)
{
    (void)mod;
    return 0;
}

EXPORT int hipModuleLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shm, void *stream, void **args, void **extra)
{
    (void)fn, (void)gz, (void)bz, (void)shm, (void)stream, (void)extra;
    const char *m = smoke_mode();
    if (strcmp(m, "launch-error") == 0)
        return 719; /* hipErrorLaunchFailure */
    if (strcmp(m, "crash") == 0)
        raise(SIGSEGV);
    if (strcmp(m, "hang") == 0)
        for (;;)
            pause();
    if (strcmp(m, "nothing") == 0)
        return 0;
    const float *a = *(float **)args[0], *b = *(float **)args[1];
    float *c = *(float **)args[2];
    unsigned n = *(unsigned *)args[3];
    if (gx * bx < n || gy * by < n)
        return 9; /* hipErrorInvalidConfiguration: the grid does not cover the matrix */
    for (unsigned r = 0; r < n; r++)
        for (unsigned col = 0; col < n; col++) {
            float s = 0.0f;
            for (unsigned k = 0; k < n; k++)
                s = fmaf(a[r * n + k], b[k * n + col], s);
            c[r * n + col] = s;
        }
    if (strcmp(m, "wrong") == 0)
        c[n + 1] += 1.0f;
    return 0;
}

EXPORT int hipDeviceSynchronize(void)
{
    return 0;
}

/* ---- peer to peer, for the HIP peer check ----
 * GC_FAKE_HIP_P2P: ok (default: hipMemcpyPeer copies), no-access (hipDeviceCanAccessPeer says 0), corrupt (the
 * copy lands with the word at byte 4096 flipped), hang (in hipMemcpyPeer), enable-error
 * (hipDeviceEnablePeerAccess fails with hipErrorPeerAccessUnsupported, 217). GC_FAKE_HIP_P2P_PAIR=A,B: that
 * behaviour for the ordered pair device A -> device B only (the others copy). hipDeviceGetPCIBusId answers
 * each device's GC_FAKE_HSA_GPUS address. */

EXPORT int hipGetDevice(int *d)
{
    *d = current_device;
    return 0;
}

/* The P2P behaviour for FROM -> TO, "ok" when none. */
static const char *p2p_mode(int from, int to)
{
    const char *m = getenv("GC_FAKE_HIP_P2P"), *pair = getenv("GC_FAKE_HIP_P2P_PAIR");
    int a, b;
    if (!m || !*m)
        return "ok";
    if (pair && *pair && (sscanf(pair, "%d,%d", &a, &b) != 2 || a != from || b != to))
        return "ok";
    return m;
}

EXPORT int hipMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return 0;
}

EXPORT int hipDeviceCanAccessPeer(int *can, int dev, int peer)
{
    int n = 0;
    hipGetDeviceCount(&n);
    if (dev < 0 || peer < 0 || dev >= n || peer >= n)
        return 101; /* hipErrorInvalidDevice */
    *can = dev != peer && strcmp(p2p_mode(dev, peer), "no-access") != 0;
    return 0;
}

EXPORT int hipDeviceEnablePeerAccess(int peer, unsigned flags)
{
    (void)flags;
    return strcmp(p2p_mode(current_device, peer), "enable-error") == 0 ? 217 : 0;
}

EXPORT int hipDeviceDisablePeerAccess(int peer)
{
    (void)peer;
    return 0;
}

EXPORT int hipMemcpyPeer(void *dst, int dst_dev, const void *src, int src_dev, size_t n)
{
    const char *m = p2p_mode(src_dev, dst_dev);
    if (strcmp(m, "hang") == 0)
        for (;;)
            pause();
    memcpy(dst, src, n);
    if (strcmp(m, "corrupt") == 0 && n >= 4100)
        ((unsigned char *)dst)[4096] ^= 0x10;
    return 0;
}

EXPORT int hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
    char name[64];
    unsigned bdf;
    if (gpu_entry((size_t)dev, name, sizeof(name), &bdf) < 0)
        return 101;
    snprintf(buf, (size_t)len, "0000:%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
    return 0;
}
