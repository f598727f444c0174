/* nvml_api.c: load the NVML function table from libnvidia-ml, and gpucheckup's own nvmlReturn_t name table. */
#include <stddef.h>
#include <stdlib.h>

#include "dlsyms.h"
#include "nvml_api.h"

#define NVML_FN(field) offsetof(struct nvml_api, field)

/* Versioned names first, as nvml.h maps them (NVML API 13, the "#define nvmlInit nvmlInit_v2" block);
 * the plain symbols are the older ABI kept for old binaries. nvmlDeviceGetCurrentClocksThrottleReasons
 * is the pre-CUDA-12.2 name of nvmlDeviceGetCurrentClocksEventReasons (same signature, deprecated in
 * NVML 13). nvmlSystemGetCudaDriverVersion asks the driver (no libcuda needed); _v2 asks libcuda. */
static const char *const fb_init[] = {"nvmlInit", NULL};
static const char *const fb_count[] = {"nvmlDeviceGetCount", NULL};
static const char *const fb_handle[] = {"nvmlDeviceGetHandleByIndex", NULL};
static const char *const fb_pci[] = {"nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo", NULL};
static const char *const fb_cuda_version[] = {"nvmlSystemGetCudaDriverVersion_v2", NULL};
static const char *const fb_clocks[] = {"nvmlDeviceGetCurrentClocksThrottleReasons", NULL};
static const char *const fb_compute_procs[] = {"nvmlDeviceGetComputeRunningProcesses_v2", NULL};
static const char *const fb_graphics_procs[] = {"nvmlDeviceGetGraphicsRunningProcesses_v2", NULL};
/* nvml.h maps nvmlDeviceGetNvLinkRemotePciInfo to _v2 (the current nvmlPciInfo_t); the plain name fills the
 * older layout, whose first 36 bytes (the legacy bus id, domain, bus) are the same. */
static const char *const fb_nvlink_remote[] = {"nvmlDeviceGetNvLinkRemotePciInfo", NULL};

static const struct dlsym_entry nvml_api_table[] = {
    {"nvmlInit_v2", true, fb_init, NVML_FN(nvmlInit)},
    {"nvmlShutdown", true, NULL, NVML_FN(nvmlShutdown)},
    {"nvmlDeviceGetCount_v2", true, fb_count, NVML_FN(nvmlDeviceGetCount)},
    {"nvmlDeviceGetHandleByIndex_v2", true, fb_handle, NVML_FN(nvmlDeviceGetHandleByIndex)},
    {"nvmlSystemGetDriverVersion", false, NULL, NVML_FN(nvmlSystemGetDriverVersion)},
    {"nvmlSystemGetNVMLVersion", false, NULL, NVML_FN(nvmlSystemGetNVMLVersion)},
    {"nvmlSystemGetCudaDriverVersion", false, fb_cuda_version, NVML_FN(nvmlSystemGetCudaDriverVersion)},
    {"nvmlDeviceGetName", false, NULL, NVML_FN(nvmlDeviceGetName)},
    {"nvmlDeviceGetUUID", false, NULL, NVML_FN(nvmlDeviceGetUUID)},
    {"nvmlDeviceGetPciInfo_v3", false, fb_pci, NVML_FN(nvmlDeviceGetPciInfo)},
    {"nvmlDeviceGetMinorNumber", false, NULL, NVML_FN(nvmlDeviceGetMinorNumber)},
    {"nvmlDeviceGetPersistenceMode", false, NULL, NVML_FN(nvmlDeviceGetPersistenceMode)},
    {"nvmlDeviceGetEccMode", false, NULL, NVML_FN(nvmlDeviceGetEccMode)},
    {"nvmlDeviceGetTotalEccErrors", false, NULL, NVML_FN(nvmlDeviceGetTotalEccErrors)},
    {"nvmlDeviceGetRetiredPagesPendingStatus", false, NULL, NVML_FN(nvmlDeviceGetRetiredPagesPendingStatus)},
    {"nvmlDeviceGetRetiredPages", false, NULL, NVML_FN(nvmlDeviceGetRetiredPages)},
    {"nvmlDeviceGetRemappedRows", false, NULL, NVML_FN(nvmlDeviceGetRemappedRows)},
    {"nvmlDeviceGetMigMode", false, NULL, NVML_FN(nvmlDeviceGetMigMode)},
    {"nvmlDeviceGetMaxMigDeviceCount", false, NULL, NVML_FN(nvmlDeviceGetMaxMigDeviceCount)},
    {"nvmlDeviceGetMigDeviceHandleByIndex", false, NULL, NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex)},
    {"nvmlDeviceGetCurrentClocksEventReasons", false, fb_clocks, NVML_FN(nvmlDeviceGetCurrentClocksEventReasons)},
    {"nvmlDeviceValidateInforom", false, NULL, NVML_FN(nvmlDeviceValidateInforom)},
    {"nvmlDeviceGetFieldValues", false, NULL, NVML_FN(nvmlDeviceGetFieldValues)},
    {"nvmlDeviceGetMemoryInfo", false, NULL, NVML_FN(nvmlDeviceGetMemoryInfo)},
    {"nvmlDeviceGetComputeRunningProcesses_v3", false, fb_compute_procs, NVML_FN(nvmlDeviceGetComputeRunningProcesses)},
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", false, fb_graphics_procs, NVML_FN(nvmlDeviceGetGraphicsRunningProcesses)},
    {"nvmlDeviceGetViolationStatus", false, NULL, NVML_FN(nvmlDeviceGetViolationStatus)},
    {"nvmlDeviceGetTemperature", false, NULL, NVML_FN(nvmlDeviceGetTemperature)},
    {"nvmlDeviceGetTemperatureThreshold", false, NULL, NVML_FN(nvmlDeviceGetTemperatureThreshold)},
    {"nvmlDeviceGetNvLinkState", false, NULL, NVML_FN(nvmlDeviceGetNvLinkState)},
    {"nvmlDeviceGetNvLinkErrorCounter", false, NULL, NVML_FN(nvmlDeviceGetNvLinkErrorCounter)},
    {"nvmlDeviceGetNvLinkRemotePciInfo_v2", false, fb_nvlink_remote, NVML_FN(nvmlDeviceGetNvLinkRemotePciInfo)},
};

int nvml_api_load(void *handle, struct nvml_api *api, const char **missing)
{
    int rc = dlsyms_load(handle, nvml_api_table, sizeof(nvml_api_table) / sizeof(nvml_api_table[0]), api, missing);
    api->handle = handle;
    return rc;
}

const char *nvml_api_pci_info_symbol(void *handle)
{
    for (size_t i = 0; i < sizeof(nvml_api_table) / sizeof(nvml_api_table[0]); i++)
        if (nvml_api_table[i].offset == NVML_FN(nvmlDeviceGetPciInfo))
            return dlsyms_resolved_name(handle, &nvml_api_table[i]);
    return NULL;
}

/* Codes and names as nvml.h (NVML API 13) defines them in enum nvmlReturn_enum; sorted by code. */
struct nvml_return_row {
    int code;
    const char *name;
};
static const struct nvml_return_row nvml_return_names[] = {
    {0, "NVML_SUCCESS"},
    {1, "NVML_ERROR_UNINITIALIZED"},
    {2, "NVML_ERROR_INVALID_ARGUMENT"},
    {3, "NVML_ERROR_NOT_SUPPORTED"},
    {4, "NVML_ERROR_NO_PERMISSION"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED"},
    {6, "NVML_ERROR_NOT_FOUND"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED"},
    {10, "NVML_ERROR_TIMEOUT"},
    {11, "NVML_ERROR_IRQ_ISSUE"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM"},
    {15, "NVML_ERROR_GPU_IS_LOST"},
    {16, "NVML_ERROR_RESET_REQUIRED"},
    {17, "NVML_ERROR_OPERATING_SYSTEM"},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"},
    {19, "NVML_ERROR_IN_USE"},
    {20, "NVML_ERROR_MEMORY"},
    {21, "NVML_ERROR_NO_DATA"},
    {22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED"},
    {23, "NVML_ERROR_INSUFFICIENT_RESOURCES"},
    {24, "NVML_ERROR_FREQ_NOT_SUPPORTED"},
    {25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"},
    {26, "NVML_ERROR_DEPRECATED"},
    {27, "NVML_ERROR_NOT_READY"},
    {28, "NVML_ERROR_GPU_NOT_FOUND"},
    {29, "NVML_ERROR_INVALID_STATE"},
    {30, "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED"},
    {999, "NVML_ERROR_UNKNOWN"},
};

static int nvml_return_cmp(const void *key, const void *elem)
{
    int k = *(const int *)key;
    int c = ((const struct nvml_return_row *)elem)->code;
    return (k > c) - (k < c);
}

const char *nvml_return_name(nvmlReturn_t r)
{
    const size_t n = sizeof(nvml_return_names) / sizeof(nvml_return_names[0]);
    const void *row = bsearch(&r, nvml_return_names, n, sizeof(nvml_return_names[0]), nvml_return_cmp);
    return row ? ((const struct nvml_return_row *)row)->name : NULL;
}
