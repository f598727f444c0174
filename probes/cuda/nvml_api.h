/* nvml_api.h: the part of NVML (libnvidia-ml) gpucheckup calls, declared here and loaded with dlopen (no SDK header). */
#ifndef GPUCHECKUP_NVML_API_H
#define GPUCHECKUP_NVML_API_H

/* Our own minimal types, ABI-compatible with nvml.h (NVML API version 13, as NVIDIA/go-nvml
 * pkg/nvml/nvml.h carries it; the layouts below are unchanged since NVML 10 / CUDA 10). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t; /* NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1 */

/* nvml.h: NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32. */
#define NVML_BUS_ID_LEGACY_SIZE 16
#define NVML_BUS_ID_SIZE 32

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it (68 bytes). The _v2 and plain functions fill the
 * older 52-byte layout (busId[16], the same five numbers, then four reserved words): its first 36 bytes
 * coincide with this one's, so a zeroed nvml_pci_info is a safe buffer for all three, and the bus id of
 * the old layout is in bus_id_legacy. */
struct nvml_pci_info {
    char bus_id_legacy[NVML_BUS_ID_LEGACY_SIZE]; /* "0000:00:06.0"-like, 16 bytes with the NUL */
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pci_device_id;     /* device id << 16 | vendor id */
    unsigned int pci_subsystem_id;
    char bus_id[NVML_BUS_ID_SIZE];  /* "00000000:00:06.0" (v3 only) */
};

/* nvmlReturn_t values gpucheckup treats specially (nvml.h, enum nvmlReturn_enum). */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_UNKNOWN = 999,
};

/* nvml.h: nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlPageRetirementCause_t, MIG modes. */
enum {
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
    NVML_VOLATILE_ECC = 0,
    NVML_AGGREGATE_ECC = 1,
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
    NVML_DEVICE_MIG_DISABLE = 0,
    NVML_DEVICE_MIG_ENABLE = 1,
};

/* nvmlFieldValue_t (nvml.h; 40 bytes on LP64) for nvmlDeviceGetFieldValues, and the one field we ask. */
struct nvml_field_value {
    unsigned int field_id;
    unsigned int scope_id;
    long long timestamp;
    long long latency_usec;
    int value_type;       /* nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int, 6 ushort */
    nvmlReturn_t result;  /* this field's own return code */
    union {
        double d;
        int si;
        unsigned int ui;
        unsigned long ul;
        unsigned long long ull;
        long long sll;
        unsigned short us;
    } value;
};
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
/* nvml.h nvmlDeviceGpuRecoveryAction_t */
enum {
    NVML_GPU_RECOVERY_ACTION_NONE = 0,
    NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
    NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
    NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
    NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4,
    NVML_GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN = 5,
};

/* Clock event ("throttle") reason bits (nvml.h, nvmlClocksEventReason* / nvmlClocksThrottleReason*). */
#define NVML_CLOCKS_EVENT_GPU_IDLE 0x1ULL
#define NVML_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING 0x2ULL
#define NVML_CLOCKS_EVENT_SW_POWER_CAP 0x4ULL
#define NVML_CLOCKS_EVENT_HW_SLOWDOWN 0x8ULL
#define NVML_CLOCKS_EVENT_SYNC_BOOST 0x10ULL
#define NVML_CLOCKS_EVENT_SW_THERMAL 0x20ULL
#define NVML_CLOCKS_EVENT_HW_THERMAL 0x40ULL
#define NVML_CLOCKS_EVENT_HW_POWER_BRAKE 0x80ULL
#define NVML_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING 0x100ULL

/* nvmlMemory_t (nvml.h; v1, as nvmlDeviceGetMemoryInfo fills it): bytes. */
struct nvml_memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

/* nvmlProcessInfo_v2_t (nvml.h since API 11), the layout nvmlDeviceGet{Compute,Graphics}RunningProcesses_v2
 * and _v3 fill (API 12 names it nvmlProcessInfo_t too). USED_GPU_MEMORY is NVML_VALUE_NOT_AVAILABLE when
 * the driver cannot tell (Windows WDDM, some containers). */
struct nvml_process_info {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};
#define NVML_VALUE_NOT_AVAILABLE_ULL (~0ULL)

/* nvmlViolationTime_t (nvml.h): REFERENCE_TIME a CPU timestamp (us), VIOLATION_TIME nanoseconds spent
 * below the requested clocks for the policy asked, since the driver loaded. */
struct nvml_violation_time {
    unsigned long long reference_time;
    unsigned long long violation_time;
};
/* nvml.h nvmlPerfPolicyType_t, nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t (the ones asked). */
enum {
    NVML_PERF_POLICY_POWER = 0,
    NVML_PERF_POLICY_THERMAL = 1,
    NVML_TEMPERATURE_GPU = 0,
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
};

/* nvml.h: NVML_NVLINK_MAX_LINKS (18 since the Hopper generation), nvmlNvLinkErrorCounter_t. */
#define NVML_NVLINK_MAX_LINKS 18u
enum {
    NVML_NVLINK_ERROR_DL_REPLAY = 0,
    NVML_NVLINK_ERROR_DL_RECOVERY = 1,
    NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
    NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
};

/* The functions, resolved by nvml_api_load. nvml.h #defines nvmlInit as nvmlInit_v2,
 * nvmlDeviceGetCount as nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex as ..._v2 and
 * nvmlDeviceGetPciInfo as nvmlDeviceGetPciInfo_v3: those names are asked for first (see the table in
 * nvml_api.c). Optional ones may be NULL (an older driver): the value is then "not supported". */
struct nvml_api {
    void *handle;
    /* required */
    nvmlReturn_t (*nvmlInit)(void);                                    /* _v2, then plain */
    nvmlReturn_t (*nvmlShutdown)(void);
    nvmlReturn_t (*nvmlDeviceGetCount)(unsigned int *count);          /* _v2, then plain */
    nvmlReturn_t (*nvmlDeviceGetHandleByIndex)(unsigned int index, nvmlDevice_t *dev); /* _v2, then plain */
    /* optional: system */
    nvmlReturn_t (*nvmlSystemGetDriverVersion)(char *version, unsigned int len);
    nvmlReturn_t (*nvmlSystemGetNVMLVersion)(char *version, unsigned int len);
    nvmlReturn_t (*nvmlSystemGetCudaDriverVersion)(int *version);     /* plain, then _v2 */
    /* optional: per device */
    nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t dev, char *name, unsigned int len);
    nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t dev, char *uuid, unsigned int len);
    nvmlReturn_t (*nvmlDeviceGetPciInfo)(nvmlDevice_t dev, struct nvml_pci_info *pci); /* _v3, _v2, plain */
    nvmlReturn_t (*nvmlDeviceGetMinorNumber)(nvmlDevice_t dev, unsigned int *minor);
    nvmlReturn_t (*nvmlDeviceGetPersistenceMode)(nvmlDevice_t dev, nvmlEnableState_t *mode);
    nvmlReturn_t (*nvmlDeviceGetEccMode)(nvmlDevice_t dev, nvmlEnableState_t *current, nvmlEnableState_t *pending);
    nvmlReturn_t (*nvmlDeviceGetTotalEccErrors)(nvmlDevice_t dev, int error_type, int counter_type,
                                                unsigned long long *count);
    nvmlReturn_t (*nvmlDeviceGetRetiredPagesPendingStatus)(nvmlDevice_t dev, nvmlEnableState_t *pending);
    nvmlReturn_t (*nvmlDeviceGetRetiredPages)(nvmlDevice_t dev, int cause, unsigned int *count,
                                              unsigned long long *addresses);
    nvmlReturn_t (*nvmlDeviceGetRemappedRows)(nvmlDevice_t dev, unsigned int *corr, unsigned int *unc,
                                              unsigned int *pending, unsigned int *failure);
    nvmlReturn_t (*nvmlDeviceGetMigMode)(nvmlDevice_t dev, unsigned int *current, unsigned int *pending);
    nvmlReturn_t (*nvmlDeviceGetMaxMigDeviceCount)(nvmlDevice_t dev, unsigned int *count);
    nvmlReturn_t (*nvmlDeviceGetMigDeviceHandleByIndex)(nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig);
    nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t dev, unsigned long long *reasons);
    nvmlReturn_t (*nvmlDeviceValidateInforom)(nvmlDevice_t dev);
    nvmlReturn_t (*nvmlDeviceGetFieldValues)(nvmlDevice_t dev, int count, struct nvml_field_value *values);
    nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t dev, struct nvml_memory *mem);
    /* _v3, then _v2: both fill struct nvml_process_info (the plain names fill an older, shorter layout) */
    nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses)(nvmlDevice_t dev, unsigned int *count,
                                                         struct nvml_process_info *infos);
    nvmlReturn_t (*nvmlDeviceGetGraphicsRunningProcesses)(nvmlDevice_t dev, unsigned int *count,
                                                          struct nvml_process_info *infos);
    nvmlReturn_t (*nvmlDeviceGetViolationStatus)(nvmlDevice_t dev, int policy, struct nvml_violation_time *t);
    nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t dev, int sensor, unsigned int *celsius);
    nvmlReturn_t (*nvmlDeviceGetTemperatureThreshold)(nvmlDevice_t dev, int threshold, unsigned int *celsius);
    /* NVLink, per link 0..NVML_NVLINK_MAX_LINKS-1 */
    nvmlReturn_t (*nvmlDeviceGetNvLinkState)(nvmlDevice_t dev, unsigned int link, nvmlEnableState_t *active);
    nvmlReturn_t (*nvmlDeviceGetNvLinkErrorCounter)(nvmlDevice_t dev, unsigned int link, int counter,
                                                    unsigned long long *value);
    nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo)(nvmlDevice_t dev, unsigned int link,
                                                     struct nvml_pci_info *pci); /* _v2, then plain */
};

/* Resolve every function of struct nvml_api from HANDLE (a dlopen handle of libnvidia-ml) into API.
 * Returns 0 when every required function is there, else -1 with *MISSING naming the first missing one
 * (static string). API->handle is set to HANDLE either way. */
int nvml_api_load(void *handle, struct nvml_api *api, const char **missing);

/* The symbol under which the PCI-info function resolved ("nvmlDeviceGetPciInfo_v3"...), or NULL. */
const char *nvml_api_pci_info_symbol(void *handle);

/* "NVML_ERROR_LIB_RM_VERSION_MISMATCH" for 18: gpucheckup's own table (nvmlErrorString needs a
 * working library). NULL for a code not in the table. */
const char *nvml_return_name(nvmlReturn_t r);

#endif
