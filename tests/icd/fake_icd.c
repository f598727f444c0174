/* fake_icd.c: a fake OpenCL vendor driver (ICD) for tests; FAKE_ICD_MODE picks how it (mis)behaves. */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

/* Modes (one shared library is built per mode; see tests/icd/README.md). */
#define FAKE_WORKING 0   /* one platform, GC_FAKE_ICD_DEVICES devices (default 1 GPU) */
#define FAKE_NOPLAT 1    /* clIcdGetPlatformIDsKHR returns CL_PLATFORM_NOT_FOUND_KHR (-1001) */
#define FAKE_SEGV 2      /* clIcdGetPlatformIDsKHR writes through a NULL pointer */
#define FAKE_ABORT 3     /* clIcdGetPlatformIDsKHR prints an LLVM-like message and aborts */
#define FAKE_HANG 4      /* clIcdGetPlatformIDsKHR never returns */
#define FAKE_NOENTRY 5   /* no clIcdGetPlatformIDsKHR at all */
#define FAKE_ERROR 6     /* clIcdGetPlatformIDsKHR returns CL_OUT_OF_HOST_MEMORY (-6) */
#define FAKE_CONFLICT 7  /* works alone; aborts when another FAKE_CONFLICT library ran in the process */
#define FAKE_NOKHRICD 8  /* works, but its extensions lack cl_khr_icd (ocl-icd skips the platform) */

#ifndef FAKE_ICD_MODE
#define FAKE_ICD_MODE FAKE_WORKING
#endif
#ifndef FAKE_ICD_NAME
#define FAKE_ICD_NAME "working"
#endif

#define FAKE_MAX_DEVICES 8

struct _cl_platform_id {
    cl_icd_dispatch *dispatch; /* every ICD object starts with its dispatch table */
};

struct _cl_device_id {
    cl_icd_dispatch *dispatch;
    unsigned index;
};

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name);

/* What loaders call through: filled at load time, before any entry point runs. */
static cl_icd_dispatch fake_dispatch = {
    .clGetPlatformInfo = clGetPlatformInfo,
    .clGetDeviceIDs = clGetDeviceIDs,
    .clGetDeviceInfo = clGetDeviceInfo,
    .clCreateContext = clCreateContext,
    .clCreateContextFromType = clCreateContextFromType,
    .clRetainDevice = clRetainDevice,
    .clReleaseDevice = clReleaseDevice,
    .clGetExtensionFunctionAddress = clGetExtensionFunctionAddress,
};
static struct _cl_platform_id fake_platform = {&fake_dispatch};
static struct _cl_device_id fake_devices[FAKE_MAX_DEVICES];

static const char *fake_env(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

/* GC_FAKE_ICD_LOG=FILE: every process that loads this driver appends "PID NAME" to FILE, so a test
 * can count the processes that load it. */
__attribute__((constructor)) static void fake_log_load(void)
{
    const char *path = getenv("GC_FAKE_ICD_LOG");
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), FAKE_ICD_NAME);
    if (n > 0 && write(fd, line, (size_t)n) < 0)
        n = 0;
    close(fd);
}

static unsigned fake_device_count(void)
{
    long n = strtol(fake_env("GC_FAKE_ICD_DEVICES", "1"), NULL, 10);
    if (n < 0)
        n = 0;
    if (n > FAKE_MAX_DEVICES)
        n = FAKE_MAX_DEVICES;
    return (unsigned)n;
}

static cl_device_type fake_device_type(void)
{
    const char *t = fake_env("GC_FAKE_ICD_DEVICE_TYPE", "gpu");
    if (strcmp(t, "cpu") == 0)
        return CL_DEVICE_TYPE_CPU;
    if (strcmp(t, "accelerator") == 0)
        return CL_DEVICE_TYPE_ACCELERATOR;
    return CL_DEVICE_TYPE_GPU;
}

static cl_int fake_answer(const void *v, size_t n, size_t size, void *out, size_t *size_ret)
{
    if (size_ret)
        *size_ret = n;
    if (out) {
        if (size < n)
            return CL_INVALID_VALUE;
        memcpy(out, v, n);
    }
    return CL_SUCCESS;
}

static cl_int fake_string(const char *s, size_t size, void *out, size_t *size_ret)
{
    return fake_answer(s, strlen(s) + 1, size, out, size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size,
                                                  void *value, size_t *size_ret)
{
    if (platform != &fake_platform)
        return CL_INVALID_PLATFORM;
    char name[256];
    switch (param) {
    case CL_PLATFORM_PROFILE:
        return fake_string("FULL_PROFILE", size, value, size_ret);
    case CL_PLATFORM_VERSION:
        return fake_string("OpenCL 1.2 gpucheckup-fake", size, value, size_ret);
    case CL_PLATFORM_NAME:
        snprintf(name, sizeof(name), "%s", fake_env("GC_FAKE_ICD_PLATFORM_NAME", "gpucheckup fake " FAKE_ICD_NAME));
        return fake_string(name, size, value, size_ret);
    case CL_PLATFORM_VENDOR:
        return fake_string(fake_env("GC_FAKE_ICD_PLATFORM_VENDOR", "gpucheckup"), size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS:
        return fake_string(FAKE_ICD_MODE == FAKE_NOKHRICD ? "cl_khr_fake" : "cl_khr_icd", size, value, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR:
        return fake_string("FAKE", size, value, size_ret);
    case CL_PLATFORM_HOST_TIMER_RESOLUTION: {
        cl_ulong r = 0;
        return fake_answer(&r, sizeof(r), size, value, size_ret);
    }
    default:
        return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type type, cl_uint num_entries,
                                               cl_device_id *devices, cl_uint *num_devices)
{
    if (platform != &fake_platform)
        return CL_INVALID_PLATFORM;
    if (!devices && !num_devices)
        return CL_INVALID_VALUE;
    unsigned n = (type & fake_device_type()) ? fake_device_count() : 0;
    if (n == 0)
        return CL_DEVICE_NOT_FOUND;
    if (num_devices)
        *num_devices = n;
    for (cl_uint i = 0; devices && i < num_entries && i < n; i++) {
        fake_devices[i].dispatch = &fake_dispatch;
        fake_devices[i].index = i;
        devices[i] = &fake_devices[i];
    }
    return CL_SUCCESS;
}

static bool fake_is_device(cl_device_id d)
{
    return d >= &fake_devices[0] && d < &fake_devices[FAKE_MAX_DEVICES] && d->index < fake_device_count();
}

/* "DDDD:BB:DD.F" from GC_FAKE_ICD_PCI (device I adds I to the device number unless
 * GC_FAKE_ICD_PCI_SHARED is set), or -1. */
static int fake_pci(unsigned i, cl_device_pci_bus_info_khr *out)
{
    const char *s = getenv("GC_FAKE_ICD_PCI");
    unsigned dom, bus, dev, fn;
    if (!s || sscanf(s, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return -1;
    out->pci_domain = dom;
    out->pci_bus = bus;
    out->pci_device = dev + (getenv("GC_FAKE_ICD_PCI_SHARED") ? 0 : i);
    out->pci_function = fn;
    return 0;
}

/* Which query tells the address (GC_FAKE_ICD_PCI_VIA): 'k' cl_khr_pci_bus_info (the default), 'a' AMD's
 * CL_DEVICE_TOPOLOGY_AMD, 'n' NVIDIA's CL_DEVICE_PCI_BUS_ID_NV / SLOT_ID_NV (no domain query, as
 * drivers before CUDA 10.2). */
static char fake_pci_via(void)
{
    const char *v = fake_env("GC_FAKE_ICD_PCI_VIA", "khr");
    return strcmp(v, "amd") == 0 ? 'a' : strcmp(v, "nv") == 0 ? 'n' : 'k';
}

static const char *fake_extensions(void)
{
    if (!getenv("GC_FAKE_ICD_PCI"))
        return "";
    switch (fake_pci_via()) {
    case 'a': return "cl_amd_device_attribute_query";
    case 'n': return "cl_nv_device_attribute_query";
    default: return "cl_khr_pci_bus_info";
    }
}

/* The vendor PCI queries (ids and layouts as in Khronos cl_ext.h and the vendors' extension texts). */
static cl_int fake_vendor_pci(cl_device_id device, cl_device_info param, size_t size, void *value, size_t *size_ret)
{
    cl_device_pci_bus_info_khr pci;
    char via = fake_pci_via();
    if (fake_pci(device->index, &pci) != 0)
        return CL_INVALID_VALUE;
    if (param == CL_DEVICE_TOPOLOGY_AMD && via == 'a') {
        unsigned char topo[24] = {0};
        cl_uint type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
        memcpy(topo, &type, sizeof(type));
        topo[21] = (unsigned char)pci.pci_bus;
        topo[22] = (unsigned char)pci.pci_device;
        topo[23] = (unsigned char)pci.pci_function;
        return fake_answer(topo, sizeof(topo), size, value, size_ret);
    }
    if (via != 'n')
        return CL_INVALID_VALUE;
    cl_uint u;
    if (param == 0x4008) /* CL_DEVICE_PCI_BUS_ID_NV */
        u = pci.pci_bus;
    else if (param == 0x4009) /* CL_DEVICE_PCI_SLOT_ID_NV: device << 3 | function */
        u = pci.pci_device << 3 | pci.pci_function;
    else
        return CL_INVALID_VALUE;
    return fake_answer(&u, sizeof(u), size, value, size_ret);
}

static volatile int *volatile fake_nowhere;

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void *value,
                                                size_t *size_ret)
{
    if (!fake_is_device(device))
        return CL_INVALID_DEVICE;
    /* A driver that lists its platform fine but dies on a property only a full enumeration reads. */
    const char *crash = getenv("GC_FAKE_ICD_CRASH_AT");
    if (param == CL_DEVICE_NAME && crash && strcmp(crash, "device-name") == 0) {
        fprintf(stderr, "fake ICD %s: crashing in clGetDeviceInfo(CL_DEVICE_NAME)\n", FAKE_ICD_NAME);
        *(volatile int *)fake_nowhere = 1; /* not raise(): LLVM's handler (PoCL's) would return from it */
    }
    char buf[512];
    cl_uint u;
    cl_ulong ul;
    cl_bool b;
    size_t sz;
    cl_device_pci_bus_info_khr pci;
    switch (param) {
    case CL_DEVICE_TYPE: {
        cl_device_type t = fake_device_type();
        return fake_answer(&t, sizeof(t), size, value, size_ret);
    }
    case CL_DEVICE_NAME:
        snprintf(buf, sizeof(buf), "%s", fake_env("GC_FAKE_ICD_DEVICE_NAME", "gpucheckup fake GPU"));
        return fake_string(buf, size, value, size_ret);
    case CL_DEVICE_VENDOR:
        return fake_string(fake_env("GC_FAKE_ICD_PLATFORM_VENDOR", "gpucheckup"), size, value, size_ret);
    case CL_DEVICE_VERSION:
        return fake_string("OpenCL 1.2 gpucheckup-fake", size, value, size_ret);
    case CL_DRIVER_VERSION:
        return fake_string(fake_env("GC_FAKE_ICD_DRIVER_VERSION", "1.0"), size, value, size_ret);
    case CL_DEVICE_OPENCL_C_VERSION:
        return fake_string("OpenCL C 1.2", size, value, size_ret);
    case CL_DEVICE_PROFILE:
        return fake_string("FULL_PROFILE", size, value, size_ret);
    case CL_DEVICE_EXTENSIONS:
        return fake_string(fake_extensions(), size, value, size_ret);
    case CL_DEVICE_VENDOR_ID:
        u = (cl_uint)strtoul(fake_env("GC_FAKE_ICD_VENDOR_ID", "0"), NULL, 0);
        return fake_answer(&u, sizeof(u), size, value, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        u = 4;
        return fake_answer(&u, sizeof(u), size, value, size_ret);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
        u = 1000;
        return fake_answer(&u, sizeof(u), size, value, size_ret);
    case CL_DEVICE_ADDRESS_BITS:
        u = 64;
        return fake_answer(&u, sizeof(u), size, value, size_ret);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
        u = 3;
        return fake_answer(&u, sizeof(u), size, value, size_ret);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
        size_t s3[3] = {256, 256, 64};
        return fake_answer(s3, sizeof(s3), size, value, size_ret);
    }
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
        sz = 256;
        return fake_answer(&sz, sizeof(sz), size, value, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
        ul = 1ull << 30;
        return fake_answer(&ul, sizeof(ul), size, value, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        ul = 1ull << 28;
        return fake_answer(&ul, sizeof(ul), size, value, size_ret);
    case CL_DEVICE_LOCAL_MEM_SIZE:
        ul = 32768;
        return fake_answer(&ul, sizeof(ul), size, value, size_ret);
    case CL_DEVICE_DOUBLE_FP_CONFIG:
        ul = 0;
        return fake_answer(&ul, sizeof(ul), size, value, size_ret);
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE:
    case CL_DEVICE_ENDIAN_LITTLE:
        b = CL_TRUE;
        return fake_answer(&b, sizeof(b), size, value, size_ret);
    case CL_DEVICE_PLATFORM: {
        cl_platform_id p = &fake_platform;
        return fake_answer(&p, sizeof(p), size, value, size_ret);
    }
    case CL_DEVICE_PCI_BUS_INFO_KHR:
        if (fake_pci_via() != 'k' || fake_pci(device->index, &pci) != 0)
            return CL_INVALID_VALUE;
        return fake_answer(&pci, sizeof(pci), size, value, size_ret);
    case CL_DEVICE_TOPOLOGY_AMD:
    case 0x4008:
    case 0x4009:
        return fake_vendor_pci(device, param, size, value, size_ret);
    default:
        return CL_INVALID_VALUE;
    }
}

/* A fake GPU cannot compute: contexts fail as on a device that is present but unusable. */
CL_API_ENTRY cl_context CL_API_CALL clCreateContext(const cl_context_properties *props, cl_uint n,
                                                    const cl_device_id *devices,
                                                    void(CL_CALLBACK *notify)(const char *, const void *, size_t,
                                                                              void *),
                                                    void *user, cl_int *err)
{
    (void)props, (void)n, (void)devices, (void)notify, (void)user;
    if (err)
        *err = CL_DEVICE_NOT_AVAILABLE;
    return NULL;
}

CL_API_ENTRY cl_context CL_API_CALL clCreateContextFromType(const cl_context_properties *props, cl_device_type type,
                                                            void(CL_CALLBACK *notify)(const char *, const void *,
                                                                                      size_t, void *),
                                                            void *user, cl_int *err)
{
    (void)props, (void)type, (void)notify, (void)user;
    if (err)
        *err = CL_DEVICE_NOT_AVAILABLE;
    return NULL;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainDevice(cl_device_id d)
{
    return fake_is_device(d) ? CL_SUCCESS : CL_INVALID_DEVICE;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseDevice(cl_device_id d)
{
    return fake_is_device(d) ? CL_SUCCESS : CL_INVALID_DEVICE;
}

#if FAKE_ICD_MODE != FAKE_NOENTRY
static int *volatile fake_null;

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                       cl_uint *num_platforms)
{
    const char *say = getenv("GC_FAKE_ICD_SAY");
    if (say && *say)
        fprintf(stderr, "fake ICD %s: %s\n", FAKE_ICD_NAME, say);
    /* A driver that dies when asked to count its platforms a second time in one process: a loader
     * asks once, so it works under a loader and alone, and dies where it is asked again. */
    static int counted;
    const char *crash = getenv("GC_FAKE_ICD_CRASH_AT");
    if (!platforms && crash && (strcmp(crash, "second-count") == 0 || strcmp(crash, "hang-second-count") == 0) &&
        counted++ > 0) {
        if (strcmp(crash, "hang-second-count") == 0)
            for (;;)
                pause();
        fprintf(stderr, "fake ICD %s: crashing on a second clIcdGetPlatformIDsKHR count\n", FAKE_ICD_NAME);
        *(volatile int *)fake_nowhere = 1;
    }
    if (FAKE_ICD_MODE == FAKE_SEGV)
        *fake_null = 1;
    if (FAKE_ICD_MODE == FAKE_ABORT) {
        fprintf(stderr, "fake ICD: CommandLine Error: Option 'fake' registered more than once!\n");
        abort();
    }
    if (FAKE_ICD_MODE == FAKE_HANG)
        for (;;)
            pause();
    if (FAKE_ICD_MODE == FAKE_ERROR)
        return CL_OUT_OF_HOST_MEMORY;
    if (FAKE_ICD_MODE == FAKE_NOPLAT) {
        if (num_platforms)
            *num_platforms = 0;
        return CL_PLATFORM_NOT_FOUND_KHR;
    }
    if (FAKE_ICD_MODE == FAKE_CONFLICT) {
        /* Two copies of one "LLVM": the second to initialise in a process dies. */
        const char *owner = getenv("GC_FAKE_ICD_CONFLICT_OWNER");
        if (owner && strcmp(owner, FAKE_ICD_NAME) != 0) {
            fprintf(stderr, "fake ICD %s: CommandLine Error: Option 'fake' registered more than once! (%s)\n",
                    FAKE_ICD_NAME, owner);
            abort();
        }
        setenv("GC_FAKE_ICD_CONFLICT_OWNER", FAKE_ICD_NAME, 1);
    }
    if (!platforms && !num_platforms)
        return CL_INVALID_VALUE;
    if (platforms && num_entries == 0)
        return CL_INVALID_VALUE;
    if (num_platforms)
        *num_platforms = 1;
    if (platforms)
        platforms[0] = &fake_platform;
    return CL_SUCCESS;
}
#endif

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    if (!name)
        return NULL;
#if FAKE_ICD_MODE != FAKE_NOENTRY
    if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
        return (void *)(uintptr_t)clIcdGetPlatformIDsKHR;
#endif
    if (strcmp(name, "clGetPlatformInfo") == 0)
        return (void *)(uintptr_t)clGetPlatformInfo;
    return NULL;
}
