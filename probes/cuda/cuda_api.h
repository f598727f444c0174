/* cuda_api.h: the part of the CUDA driver API gpucheckup calls, declared here and loaded with dlopen (no SDK header). */
#ifndef GPUCHECKUP_CUDA_API_H
#define GPUCHECKUP_CUDA_API_H

#include <stddef.h>

/* Our own minimal types, ABI-compatible with cuda.h (CUDA 10 to 13 on x86-64 and aarch64 Linux). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit since the _v2 API (cuda.h: CUdeviceptr_v2) */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;
typedef struct {
    char bytes[16];
} CUuuid;

/* CUresult values gpucheckup treats specially (cuda.h, enum cudaError_enum). */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_SYSTEM_NOT_READY = 802,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_UNKNOWN = 999,
};

/* Device attributes (cuda.h, enum CUdevice_attribute_enum). */
enum {
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,           /* kHz */
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
    CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,         /* 0 default, 2 prohibited, 3 exclusive process */
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,    /* kHz */
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
};

/* JIT options for cuModuleLoadDataEx (cuda.h, enum CUjit_option_enum). */
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_LOG_VERBOSE = 12,
};

/* The functions, resolved by cuda_api_load. Where cuda.h maps a name to a versioned symbol
 * (cuMemAlloc -> cuMemAlloc_v2: the unversioned ones take 32-bit sizes and pointers), the versioned
 * symbol is asked for first; see the table in cuda_api.c. Optional ones may be NULL. */
struct cuda_api {
    void *handle;
    /* required: enumeration */
    CUresult (*cuInit)(unsigned int flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);         /* _v2 */
    /* optional: enumeration */
    CUresult (*cuDeviceGetUuid)(CUuuid *uuid, CUdevice dev);            /* _v2, then plain */
    CUresult (*cuDeviceGetPCIBusId)(char *busid, int len, CUdevice dev);
    CUresult (*cuGetErrorName)(CUresult error, const char **name);     /* fails in the stub: use cuda_result_name */
    /* optional: compute (the smoke test); cuda_api_has_compute says whether all are there */
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);                /* _v2 */
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes); /* _v2 */
    CUresult (*cuMemAlloc)(CUdeviceptr *dptr, size_t bytes);            /* _v2 */
    CUresult (*cuMemFree)(CUdeviceptr dptr);                            /* _v2 */
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes); /* _v2 */
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);       /* _v2 */
    CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned int value, size_t count); /* _v2 */
    CUresult (*cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned int n_options,
                                   CUjit_option *options, void **values);
    CUresult (*cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*cuModuleUnload)(CUmodule mod);
    CUresult (*cuLaunchKernel)(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                               CUstream stream, void **params, void **extra);
    CUresult (*cuEventCreate)(CUevent *ev, unsigned int flags);
    CUresult (*cuEventRecord)(CUevent ev, CUstream stream);
    CUresult (*cuEventSynchronize)(CUevent ev);
    CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end); /* _v2 (CUDA 12.8), then plain */
    CUresult (*cuEventDestroy)(CUevent ev);                             /* _v2 */
    /* optional: the peer check (cuda_p2p.c) */
    CUresult (*cuDeviceCanAccessPeer)(int *can, CUdevice dev, CUdevice peer);
    CUresult (*cuCtxEnablePeerAccess)(CUcontext peer, unsigned int flags);
    CUresult (*cuCtxDisablePeerAccess)(CUcontext peer);
    CUresult (*cuMemcpyPeer)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes);
    /* optional: pinned host memory (bench's host-to-device copies) */
    CUresult (*cuMemAllocHost)(void **p, size_t bytes);                 /* _v2 */
    CUresult (*cuMemFreeHost)(void *p);
};

/* Resolve every function of struct cuda_api from HANDLE (a dlopen handle of libcuda) into API.
 * Returns 0 when every required (enumeration) function is there, else -1 with *MISSING naming the
 * first missing one (static string). API->handle is set to HANDLE either way. */
int cuda_api_load(void *handle, struct cuda_api *api, const char **missing);

/* True when every function the smoke test needs was resolved. */
int cuda_api_has_compute(const struct cuda_api *api);

/* "CUDA_ERROR_STUB_LIBRARY" for 34: gpucheckup's own table (cuGetErrorName fails in the stub and
 * in a driver that failed to initialise). NULL for a code not in the table. */
const char *cuda_result_name(CUresult r);

#endif
