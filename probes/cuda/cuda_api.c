/* cuda_api.c: load the CUDA driver API table from libcuda, and gpucheckup's own CUresult name table. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "cuda_api.h"
#include "dlsyms.h"

#define CUDA_FN(field) offsetof(struct cuda_api, field)

/* Versioned names first: cuda.h #defines cuDeviceTotalMem as cuDeviceTotalMem_v2 and so on (CUDA 13.0
 * cuda.h, lines 89-172); the plain symbols are the 32-bit-size ABI kept for old binaries. */
static const char *const fb_total_mem[] = {"cuDeviceTotalMem", NULL};
static const char *const fb_uuid[] = {"cuDeviceGetUuid", NULL};
static const char *const fb_ctx_release[] = {"cuDevicePrimaryCtxRelease", NULL};
static const char *const fb_mem_info[] = {"cuMemGetInfo", NULL};
static const char *const fb_elapsed[] = {"cuEventElapsedTime", NULL};
static const char *const fb_event_destroy[] = {"cuEventDestroy", NULL};

static const struct dlsym_entry cuda_api_table[] = {
    {"cuInit", true, NULL, CUDA_FN(cuInit)},
    {"cuDriverGetVersion", true, NULL, CUDA_FN(cuDriverGetVersion)},
    {"cuDeviceGetCount", true, NULL, CUDA_FN(cuDeviceGetCount)},
    {"cuDeviceGet", true, NULL, CUDA_FN(cuDeviceGet)},
    {"cuDeviceGetName", true, NULL, CUDA_FN(cuDeviceGetName)},
    {"cuDeviceGetAttribute", true, NULL, CUDA_FN(cuDeviceGetAttribute)},
    {"cuDeviceTotalMem_v2", true, fb_total_mem, CUDA_FN(cuDeviceTotalMem)},
    {"cuDeviceGetUuid_v2", false, fb_uuid, CUDA_FN(cuDeviceGetUuid)},
    {"cuDeviceGetPCIBusId", false, NULL, CUDA_FN(cuDeviceGetPCIBusId)},
    {"cuGetErrorName", false, NULL, CUDA_FN(cuGetErrorName)},
    {"cuDevicePrimaryCtxRetain", false, NULL, CUDA_FN(cuDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease_v2", false, fb_ctx_release, CUDA_FN(cuDevicePrimaryCtxRelease)},
    {"cuCtxSetCurrent", false, NULL, CUDA_FN(cuCtxSetCurrent)},
    {"cuCtxSynchronize", false, NULL, CUDA_FN(cuCtxSynchronize)},
    {"cuMemGetInfo_v2", false, fb_mem_info, CUDA_FN(cuMemGetInfo)},
    {"cuMemAlloc_v2", false, NULL, CUDA_FN(cuMemAlloc)},
    {"cuMemFree_v2", false, NULL, CUDA_FN(cuMemFree)},
    {"cuMemcpyHtoD_v2", false, NULL, CUDA_FN(cuMemcpyHtoD)},
    {"cuMemcpyDtoH_v2", false, NULL, CUDA_FN(cuMemcpyDtoH)},
    {"cuMemsetD32_v2", false, NULL, CUDA_FN(cuMemsetD32)},
    {"cuModuleLoadDataEx", false, NULL, CUDA_FN(cuModuleLoadDataEx)},
    {"cuModuleGetFunction", false, NULL, CUDA_FN(cuModuleGetFunction)},
    {"cuModuleUnload", false, NULL, CUDA_FN(cuModuleUnload)},
    {"cuLaunchKernel", false, NULL, CUDA_FN(cuLaunchKernel)},
    {"cuEventCreate", false, NULL, CUDA_FN(cuEventCreate)},
    {"cuEventRecord", false, NULL, CUDA_FN(cuEventRecord)},
    {"cuEventSynchronize", false, NULL, CUDA_FN(cuEventSynchronize)},
    {"cuEventElapsedTime_v2", false, fb_elapsed, CUDA_FN(cuEventElapsedTime)},
    {"cuEventDestroy_v2", false, fb_event_destroy, CUDA_FN(cuEventDestroy)},
    {"cuDeviceCanAccessPeer", false, NULL, CUDA_FN(cuDeviceCanAccessPeer)},
    {"cuCtxEnablePeerAccess", false, NULL, CUDA_FN(cuCtxEnablePeerAccess)},
    {"cuCtxDisablePeerAccess", false, NULL, CUDA_FN(cuCtxDisablePeerAccess)},
    {"cuMemcpyPeer", false, NULL, CUDA_FN(cuMemcpyPeer)},
    {"cuMemAllocHost_v2", false, NULL, CUDA_FN(cuMemAllocHost)},
    {"cuMemFreeHost", false, NULL, CUDA_FN(cuMemFreeHost)},
};

int cuda_api_load(void *handle, struct cuda_api *api, const char **missing)
{
    int rc = dlsyms_load(handle, cuda_api_table, sizeof(cuda_api_table) / sizeof(cuda_api_table[0]), api, missing);
    api->handle = handle;
    return rc;
}

int cuda_api_has_compute(const struct cuda_api *api)
{
    return api->cuDevicePrimaryCtxRetain && api->cuDevicePrimaryCtxRelease && api->cuCtxSetCurrent &&
           api->cuCtxSynchronize && api->cuMemAlloc && api->cuMemFree && api->cuMemcpyHtoD && api->cuMemcpyDtoH &&
           api->cuMemsetD32 && api->cuModuleLoadDataEx && api->cuModuleGetFunction && api->cuModuleUnload &&
           api->cuLaunchKernel && api->cuEventCreate && api->cuEventRecord && api->cuEventSynchronize &&
           api->cuEventElapsedTime && api->cuEventDestroy;
}

/* Codes and names as cuda.h (CUDA 13.0) defines them in enum cudaError_enum; sorted by code. */
static const struct {
    int code;
    const char *name;
} cuda_result_names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {4, "CUDA_ERROR_DEINITIALIZED"}, {5, "CUDA_ERROR_PROFILER_DISABLED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"}, {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"}, {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"}, {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"},
    {205, "CUDA_ERROR_MAP_FAILED"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"}, {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"},
    {218, "CUDA_ERROR_INVALID_PTX"}, {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"}, {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"}, {226, "CUDA_ERROR_CONTAINED"},
    {300, "CUDA_ERROR_INVALID_SOURCE"}, {301, "CUDA_ERROR_FILE_NOT_FOUND"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"}, {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM"}, {400, "CUDA_ERROR_INVALID_HANDLE"}, {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"}, {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {710, "CUDA_ERROR_ASSERT"}, {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {800, "CUDA_ERROR_NOT_PERMITTED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"}, {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED"}, {806, "CUDA_ERROR_MPS_RPC_FAILURE"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY"}, {909, "CUDA_ERROR_TIMEOUT"}, {999, "CUDA_ERROR_UNKNOWN"},
};

const char *cuda_result_name(CUresult r)
{
    size_t lo = 0, hi = sizeof(cuda_result_names) / sizeof(cuda_result_names[0]);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cuda_result_names[mid].code == r)
            return cuda_result_names[mid].name;
        if (cuda_result_names[mid].code < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
