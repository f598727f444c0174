/* opencl_props.c: the OpenCL property table (one row per platform/device query) and the typed decoding of each value. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clquery.h"
#include "opencl_internal.h"
#include "strutil.h"

/* Vendor query ids the Khronos headers of Debian 12 do not carry (values from the vendors' extension specs). */
#define OCL_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV 0x4007
#define OCL_MAX_REAL_TIME_COMPUTE_QUEUES_AMD 0x404D
#define OCL_MAX_REAL_TIME_COMPUTE_UNITS_AMD 0x404E
#define OCL_TERMINATE_CAPABILITY_CONTEXT_KHR 1u

/* ---- name tables for bit fields and enumerations ---- */

#define N(x) {(uint64_t)(x), #x}
#define NAMES(var, ...)                                                                                      \
    static const struct ocl_name var##_v[] = {__VA_ARGS__};                                                  \
    static const struct ocl_names var = {var##_v, sizeof(var##_v) / sizeof(var##_v[0])}

NAMES(ocl_n_devtype, N(CL_DEVICE_TYPE_DEFAULT), N(CL_DEVICE_TYPE_CPU), N(CL_DEVICE_TYPE_GPU),
      N(CL_DEVICE_TYPE_ACCELERATOR), N(CL_DEVICE_TYPE_CUSTOM));
NAMES(ocl_n_fp, N(CL_FP_DENORM), N(CL_FP_INF_NAN), N(CL_FP_ROUND_TO_NEAREST), N(CL_FP_ROUND_TO_ZERO),
      N(CL_FP_ROUND_TO_INF), N(CL_FP_FMA), N(CL_FP_SOFT_FLOAT), N(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT));
NAMES(ocl_n_exec, N(CL_EXEC_KERNEL), N(CL_EXEC_NATIVE_KERNEL));
NAMES(ocl_n_queue, N(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), N(CL_QUEUE_PROFILING_ENABLE), N(CL_QUEUE_ON_DEVICE),
      N(CL_QUEUE_ON_DEVICE_DEFAULT));
NAMES(ocl_n_svm, N(CL_DEVICE_SVM_COARSE_GRAIN_BUFFER), N(CL_DEVICE_SVM_FINE_GRAIN_BUFFER),
      N(CL_DEVICE_SVM_FINE_GRAIN_SYSTEM), N(CL_DEVICE_SVM_ATOMICS));
NAMES(ocl_n_affinity, N(CL_DEVICE_AFFINITY_DOMAIN_NUMA), N(CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE),
      N(CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE), N(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE),
      N(CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE), N(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE));
NAMES(ocl_n_atomic, N(CL_DEVICE_ATOMIC_ORDER_RELAXED), N(CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
      N(CL_DEVICE_ATOMIC_ORDER_SEQ_CST), N(CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM), N(CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),
      N(CL_DEVICE_ATOMIC_SCOPE_DEVICE), N(CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES));
NAMES(ocl_n_enqueue, N(CL_DEVICE_QUEUE_SUPPORTED), N(CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT));
NAMES(ocl_n_cmdbuf, N(CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR),
      N(CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR), N(CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR),
      N(CL_COMMAND_BUFFER_CAPABILITY_OUT_OF_ORDER_KHR));
NAMES(ocl_n_terminate, {OCL_TERMINATE_CAPABILITY_CONTEXT_KHR, "CL_DEVICE_TERMINATE_CAPABILITY_CONTEXT_KHR"});
NAMES(ocl_n_dot, N(CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR),
      N(CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR));
NAMES(ocl_n_intel_feat, N(CL_DEVICE_FEATURE_FLAG_DP4A_INTEL), N(CL_DEVICE_FEATURE_FLAG_DPAS_INTEL));
NAMES(ocl_n_cache, N(CL_NONE), N(CL_READ_ONLY_CACHE), N(CL_READ_WRITE_CACHE));
NAMES(ocl_n_lmem, N(CL_NONE), N(CL_LOCAL), N(CL_GLOBAL));
NAMES(ocl_n_partition, N(CL_DEVICE_PARTITION_EQUALLY), N(CL_DEVICE_PARTITION_BY_COUNTS),
      N(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN));
#undef N
#undef NAMES

/* ---- the tables ---- */

/* Row helpers: ROW spells everything out; P (always legal from a version), PU (with a unit), PN (with
 * names), PE (a version or an extension). */
#define ROW(nm, ty, nms, since, until, ext, gpu, unit, label) {#nm, nm, ty, nms, since, until, ext, gpu, unit, label}
#define ROWI(nm, id, ty, nms, since, until, ext, gpu, unit, label) {nm, id, ty, nms, since, until, ext, gpu, unit, label}
/* Each helper stringizes NM itself: passed on to ROW, the argument would be macro-expanded first. */
#define P(nm, ty, since, label) ROWI(#nm, nm, ty, NULL, since, 0, NULL, false, OCL_U_NONE, label)
#define PU(nm, ty, since, unit, label) ROWI(#nm, nm, ty, NULL, since, 0, NULL, false, unit, label)
#define PN(nm, ty, nms, since, label) ROWI(#nm, nm, ty, &nms, since, 0, NULL, false, OCL_U_NONE, label)
#define PE(nm, ty, since, ext, label) ROWI(#nm, nm, ty, NULL, since, 0, ext, false, OCL_U_NONE, label)
#define V10 OCL_V(1, 0)
#define V11 OCL_V(1, 1)
#define V12 OCL_V(1, 2)
#define V20 OCL_V(2, 0)
#define V21 OCL_V(2, 1)
#define V30 OCL_V(3, 0)

const struct ocl_prop ocl_platform_props[] = {
    P(CL_PLATFORM_NAME, OCL_T_STR, V10, "Platform Name"),
    P(CL_PLATFORM_VENDOR, OCL_T_STR, V10, "Platform Vendor"),
    P(CL_PLATFORM_VERSION, OCL_T_STR, V10, "Platform Version"),
    P(CL_PLATFORM_PROFILE, OCL_T_STR, V10, "Platform Profile"),
    P(CL_PLATFORM_EXTENSIONS, OCL_T_STR, V10, "Platform Extensions"),
    PE(CL_PLATFORM_EXTENSIONS_WITH_VERSION, OCL_T_NAMEVER, V30, "cl_khr_extended_versioning",
       "Platform Extensions with Version"),
    PE(CL_PLATFORM_NUMERIC_VERSION, OCL_T_VERSION, V30, "cl_khr_extended_versioning", "Platform Numeric Version"),
    PE(CL_PLATFORM_ICD_SUFFIX_KHR, OCL_T_STR, OCL_NEVER, "cl_khr_icd", "Platform Extensions function suffix"),
    PU(CL_PLATFORM_HOST_TIMER_RESOLUTION, OCL_T_NUM, V21, OCL_U_NS, "Platform Host timer resolution"),
};
const size_t ocl_n_platform_props = sizeof(ocl_platform_props) / sizeof(ocl_platform_props[0]);

const struct ocl_prop ocl_device_props[] = {
    /* identity */
    P(CL_DEVICE_NAME, OCL_T_STR, V10, "Device Name"),
    P(CL_DEVICE_VENDOR, OCL_T_STR, V10, "Device Vendor"),
    PU(CL_DEVICE_VENDOR_ID, OCL_T_NUM, V10, OCL_U_HEX, "Device Vendor ID"),
    P(CL_DEVICE_VERSION, OCL_T_STR, V10, "Device Version"),
    PE(CL_DEVICE_NUMERIC_VERSION, OCL_T_VERSION, V30, "cl_khr_extended_versioning", "Device Numeric Version"),
    P(CL_DRIVER_VERSION, OCL_T_STR, V10, "Driver Version"),
    P(CL_DEVICE_OPENCL_C_VERSION, OCL_T_STR, V11, "Device OpenCL C Version"),
    PE(CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR, OCL_T_VERSION, OCL_NEVER, "cl_khr_extended_versioning",
       "Device OpenCL C Numeric Version"),
    P(CL_DEVICE_OPENCL_C_ALL_VERSIONS, OCL_T_NAMEVER, V30, "Device OpenCL C all versions"),
    P(CL_DEVICE_OPENCL_C_FEATURES, OCL_T_NAMEVER, V30, "Device OpenCL C features"),
    P(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, OCL_T_STR, V30, "Latest conformance test passed"),
    PN(CL_DEVICE_TYPE, OCL_T_BITS, ocl_n_devtype, V10, "Device Type"),
    P(CL_DEVICE_PROFILE, OCL_T_STR, V10, "Device Profile"),
    P(CL_DEVICE_PLATFORM, OCL_T_PLATFORM, V10, "Device Platform (index)"),
    P(CL_DEVICE_PARENT_DEVICE, OCL_T_DEVICE, V12, "Parent device"),
    P(CL_DEVICE_REFERENCE_COUNT, OCL_T_NUM, V12, "Reference count"),
    P(CL_DEVICE_AVAILABLE, OCL_T_BOOL, V10, "Device Available"),
    P(CL_DEVICE_COMPILER_AVAILABLE, OCL_T_BOOL, V10, "Compiler Available"),
    P(CL_DEVICE_LINKER_AVAILABLE, OCL_T_BOOL, V12, "Linker Available"),
    /* cl_khr_device_uuid */
    PE(CL_DEVICE_UUID_KHR, OCL_T_UUID, OCL_NEVER, "cl_khr_device_uuid", "Device UUID"),
    PE(CL_DRIVER_UUID_KHR, OCL_T_UUID, OCL_NEVER, "cl_khr_device_uuid", "Driver UUID"),
    PE(CL_DEVICE_LUID_VALID_KHR, OCL_T_BOOL, OCL_NEVER, "cl_khr_device_uuid", "Valid Device LUID"),
    PE(CL_DEVICE_LUID_KHR, OCL_T_LUID, OCL_NEVER, "cl_khr_device_uuid", "Device LUID"),
    ROW(CL_DEVICE_NODE_MASK_KHR, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_khr_device_uuid", false, OCL_U_HEX, "Device Node Mask"),
    /* where the device sits on the bus */
    PE(CL_DEVICE_PCI_BUS_INFO_KHR, OCL_T_PCI_BUS, OCL_NEVER, "cl_khr_pci_bus_info", "Device PCI bus info (KHR)"),
    PE(CL_DEVICE_TOPOLOGY_AMD, OCL_T_AMD_TOPO, OCL_NEVER, "cl_amd_device_attribute_query", "Device Topology (AMD)"),
    PE(CL_DEVICE_BOARD_NAME_AMD, OCL_T_STR, OCL_NEVER, "cl_amd_device_attribute_query", "Device Board Name (AMD)"),
    ROW(CL_DEVICE_PCIE_ID_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_HEX,
        "Device PCI-e ID (AMD)"),
    ROWI("CL_DEVICE_PCI_BUS_ID_NV", CLQUERY_PCI_BUS_ID_NV, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_nv_device_attribute_query",
         false, OCL_U_NONE, "Device PCI bus (NV)"),
    ROWI("CL_DEVICE_PCI_SLOT_ID_NV", CLQUERY_PCI_SLOT_ID_NV, OCL_T_NUM, NULL, OCL_NEVER, 0,
         "cl_nv_device_attribute_query", false, OCL_U_NONE, "Device PCI slot (NV)"),
    ROWI("CL_DEVICE_PCI_DOMAIN_ID_NV", CLQUERY_PCI_DOMAIN_ID_NV, OCL_T_NUM, NULL, OCL_NEVER, 0,
         "cl_nv_device_attribute_query", false, OCL_U_NONE, "Device PCI domain (NV)"),
    /* compute units and clocks */
    P(CL_DEVICE_MAX_COMPUTE_UNITS, OCL_T_NUM, V10, "Max compute units"),
    ROW(CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "SIMD per compute unit (AMD)"),
    ROW(CL_DEVICE_SIMD_WIDTH_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_NONE,
        "SIMD width (AMD)"),
    ROW(CL_DEVICE_SIMD_INSTRUCTION_WIDTH_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "SIMD instruction width (AMD)"),
    PU(CL_DEVICE_MAX_CLOCK_FREQUENCY, OCL_T_NUM, V10, OCL_U_MHZ, "Max clock frequency"),
    PE(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, OCL_T_NUM, OCL_NEVER, "cl_nv_device_attribute_query",
       "Compute Capability Major (NV)"),
    PE(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, OCL_T_NUM, OCL_NEVER, "cl_nv_device_attribute_query",
       "Compute Capability Minor (NV)"),
    ROW(CL_DEVICE_GFXIP_MAJOR_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_NONE,
        "Graphics IP major (AMD)"),
    ROW(CL_DEVICE_GFXIP_MINOR_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_NONE,
        "Graphics IP minor (AMD)"),
    PE(CL_DEVICE_IP_VERSION_INTEL, OCL_T_INTEL_IP, OCL_NEVER, "cl_intel_device_attribute_query", "Device IP (Intel)"),
    PE(CL_DEVICE_ID_INTEL, OCL_T_NUM, OCL_NEVER, "cl_intel_device_attribute_query", "Device ID (Intel)"),
    PE(CL_DEVICE_NUM_SLICES_INTEL, OCL_T_NUM, OCL_NEVER, "cl_intel_device_attribute_query", "Slices (Intel)"),
    PE(CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL, OCL_T_NUM, OCL_NEVER, "cl_intel_device_attribute_query",
       "Sub-slices per slice (Intel)"),
    PE(CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL, OCL_T_NUM, OCL_NEVER, "cl_intel_device_attribute_query",
       "EUs per sub-slice (Intel)"),
    PE(CL_DEVICE_NUM_THREADS_PER_EU_INTEL, OCL_T_NUM, OCL_NEVER, "cl_intel_device_attribute_query",
       "Threads per EU (Intel)"),
    ROW(CL_DEVICE_FEATURE_CAPABILITIES_INTEL, OCL_T_BITS, &ocl_n_intel_feat, OCL_NEVER, 0,
        "cl_intel_device_attribute_query", false, OCL_U_NONE, "Feature capabilities (Intel)"),
    /* partitioning */
    P(CL_DEVICE_PARTITION_MAX_SUB_DEVICES, OCL_T_NUM, V12, "Max number of sub-devices"),
    PN(CL_DEVICE_PARTITION_PROPERTIES, OCL_T_PARTITION, ocl_n_partition, V12, "Supported partition types"),
    PN(CL_DEVICE_PARTITION_AFFINITY_DOMAIN, OCL_T_BITS, ocl_n_affinity, V12, "Supported affinity domains"),
    PN(CL_DEVICE_PARTITION_TYPE, OCL_T_PARTITION, ocl_n_partition, V12, "Partition type of this device"),
    /* work items and groups */
    P(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, OCL_T_NUM, V10, "Max work item dimensions"),
    P(CL_DEVICE_MAX_WORK_ITEM_SIZES, OCL_T_NUMS, V10, "Max work item sizes"),
    P(CL_DEVICE_MAX_WORK_GROUP_SIZE, OCL_T_NUM, V10, "Max work group size"),
    ROW(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query",
        true, OCL_U_NONE, "Preferred work group size (AMD)"),
    ROW(CL_DEVICE_MAX_WORK_GROUP_SIZE_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Max work group size (AMD)"),
    P(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, OCL_T_NUM, V30, "Preferred work group size multiple (device)"),
    PE(CL_DEVICE_WARP_SIZE_NV, OCL_T_NUM, OCL_NEVER, "cl_nv_device_attribute_query", "Warp size (NV)"),
    ROW(CL_DEVICE_WAVEFRONT_WIDTH_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Wavefront width (AMD)"),
    P(CL_DEVICE_MAX_NUM_SUB_GROUPS, OCL_T_NUM, V21, "Max sub-groups per work group"),
    PE(CL_DEVICE_SUB_GROUP_SIZES_INTEL, OCL_T_NUMS, OCL_NEVER, "cl_intel_required_subgroup_size",
       "Sub-group sizes (Intel)"),
    /* vector widths */
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, OCL_T_NUM, V10, "Preferred vector width char"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, OCL_T_NUM, V11, "Native vector width char"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, OCL_T_NUM, V10, "Preferred vector width short"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, OCL_T_NUM, V11, "Native vector width short"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, OCL_T_NUM, V10, "Preferred vector width int"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, OCL_T_NUM, V11, "Native vector width int"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, OCL_T_NUM, V10, "Preferred vector width long"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, OCL_T_NUM, V11, "Native vector width long"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, OCL_T_NUM, V11, "Preferred vector width half"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, OCL_T_NUM, V11, "Native vector width half"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, OCL_T_NUM, V10, "Preferred vector width float"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, OCL_T_NUM, V11, "Native vector width float"),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, OCL_T_NUM, V10, "Preferred vector width double"),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, OCL_T_NUM, V11, "Native vector width double"),
    /* floating point */
    ROW(CL_DEVICE_HALF_FP_CONFIG, OCL_T_BITS, &ocl_n_fp, OCL_NEVER, 0, "cl_khr_fp16", false, OCL_U_NONE,
        "Half-precision Floating-point support"),
    PN(CL_DEVICE_SINGLE_FP_CONFIG, OCL_T_BITS, ocl_n_fp, V10, "Single-precision Floating-point support"),
    ROW(CL_DEVICE_DOUBLE_FP_CONFIG, OCL_T_BITS, &ocl_n_fp, V12, 0, "cl_khr_fp64", false, OCL_U_NONE,
        "Double-precision Floating-point support"),
    P(CL_DEVICE_ADDRESS_BITS, OCL_T_NUM, V10, "Address bits"),
    P(CL_DEVICE_ENDIAN_LITTLE, OCL_T_BOOL, V10, "Little Endian"),
    /* memory */
    PU(CL_DEVICE_GLOBAL_MEM_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Global memory size"),
    ROW(CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, OCL_T_NUMS, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_KIB, "Global free memory (AMD, KiB)"),
    ROW(CL_DEVICE_GLOBAL_MEM_CHANNELS_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Global memory channels (AMD)"),
    ROW(CL_DEVICE_GLOBAL_MEM_CHANNEL_BANKS_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Global memory banks per channel (AMD)"),
    ROW(CL_DEVICE_GLOBAL_MEM_CHANNEL_BANK_WIDTH_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query",
        true, OCL_U_BYTES, "Global memory bank width (AMD)"),
    P(CL_DEVICE_ERROR_CORRECTION_SUPPORT, OCL_T_BOOL, V10, "Error Correction support"),
    PU(CL_DEVICE_MAX_MEM_ALLOC_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Max memory allocation"),
    P(CL_DEVICE_HOST_UNIFIED_MEMORY, OCL_T_BOOL, V11, "Unified memory for Host and Device"),
    PE(CL_DEVICE_INTEGRATED_MEMORY_NV, OCL_T_BOOL, OCL_NEVER, "cl_nv_device_attribute_query",
       "Integrated memory (NV)"),
    PN(CL_DEVICE_SVM_CAPABILITIES, OCL_T_BITS, ocl_n_svm, V20, "Shared Virtual Memory (SVM) capabilities"),
    PU(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Minimum alignment for any data type"),
    P(CL_DEVICE_MEM_BASE_ADDR_ALIGN, OCL_T_NUM, V10, "Alignment of base address (bits)"),
    PU(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT, OCL_T_NUM, V20, OCL_U_BYTES,
       "Preferred alignment for atomics (SVM)"),
    PU(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, OCL_T_NUM, V20, OCL_U_BYTES,
       "Preferred alignment for atomics (global)"),
    PU(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT, OCL_T_NUM, V20, OCL_U_BYTES,
       "Preferred alignment for atomics (local)"),
    PN(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, OCL_T_BITS, ocl_n_atomic, V30, "Atomic memory capabilities"),
    PN(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, OCL_T_BITS, ocl_n_atomic, V30, "Atomic fence capabilities"),
    PU(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, OCL_T_NUM, V20, OCL_U_BYTES, "Max size for global variable"),
    PU(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, OCL_T_NUM, V20, OCL_U_BYTES,
       "Preferred total size of global vars"),
    PN(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, OCL_T_ENUM, ocl_n_cache, V10, "Global Memory cache type"),
    PU(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Global Memory cache size"),
    PU(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Global Memory cache line size"),
    /* images */
    P(CL_DEVICE_IMAGE_SUPPORT, OCL_T_BOOL, V10, "Image support"),
    P(CL_DEVICE_MAX_SAMPLERS, OCL_T_NUM, V10, "Max number of samplers per kernel"),
    P(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, OCL_T_NUM, V12, "Max size for 1D images from buffer (pixels)"),
    P(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, OCL_T_NUM, V12, "Max 1D or 2D image array size"),
    ROW(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, OCL_T_NUM, NULL, V20, 0, "cl_khr_image2d_from_buffer", false,
        OCL_U_BYTES, "Base address alignment for 2D image buffers"),
    PE(CL_DEVICE_IMAGE_PITCH_ALIGNMENT, OCL_T_NUM, V20, "cl_khr_image2d_from_buffer",
       "Pitch alignment for 2D image buffers (pixels)"),
    P(CL_DEVICE_IMAGE2D_MAX_HEIGHT, OCL_T_NUM, V10, "Max 2D image height"),
    P(CL_DEVICE_IMAGE2D_MAX_WIDTH, OCL_T_NUM, V10, "Max 2D image width"),
    P(CL_DEVICE_IMAGE3D_MAX_HEIGHT, OCL_T_NUM, V10, "Max 3D image height"),
    P(CL_DEVICE_IMAGE3D_MAX_WIDTH, OCL_T_NUM, V10, "Max 3D image width"),
    P(CL_DEVICE_IMAGE3D_MAX_DEPTH, OCL_T_NUM, V10, "Max 3D image depth"),
    P(CL_DEVICE_MAX_READ_IMAGE_ARGS, OCL_T_NUM, V10, "Max number of read image args"),
    P(CL_DEVICE_MAX_WRITE_IMAGE_ARGS, OCL_T_NUM, V10, "Max number of write image args"),
    P(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, OCL_T_NUM, V20, "Max number of read/write image args"),
    /* pipes */
    P(CL_DEVICE_PIPE_SUPPORT, OCL_T_BOOL, V30, "Pipe support"),
    P(CL_DEVICE_MAX_PIPE_ARGS, OCL_T_NUM, V20, "Max number of pipe args"),
    P(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, OCL_T_NUM, V20, "Max active pipe reservations"),
    PU(CL_DEVICE_PIPE_MAX_PACKET_SIZE, OCL_T_NUM, V20, OCL_U_BYTES, "Max pipe packet size"),
    /* local and constant memory */
    PN(CL_DEVICE_LOCAL_MEM_TYPE, OCL_T_ENUM, ocl_n_lmem, V10, "Local memory type"),
    PU(CL_DEVICE_LOCAL_MEM_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Local memory size"),
    ROW(CL_DEVICE_LOCAL_MEM_SIZE_PER_COMPUTE_UNIT_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query",
        true, OCL_U_BYTES, "Local memory size per CU (AMD)"),
    ROW(CL_DEVICE_LOCAL_MEM_BANKS_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Local memory banks (AMD)"),
    PE(CL_DEVICE_REGISTERS_PER_BLOCK_NV, OCL_T_NUM, OCL_NEVER, "cl_nv_device_attribute_query",
       "Registers per block (NV)"),
    P(CL_DEVICE_MAX_CONSTANT_ARGS, OCL_T_NUM, V10, "Max number of constant args"),
    PU(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Max constant buffer size"),
    ROW(CL_DEVICE_PREFERRED_CONSTANT_BUFFER_SIZE_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query",
        true, OCL_U_BYTES, "Preferred constant buffer size (AMD)"),
    P(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, OCL_T_BOOL, V30, "Generic address space support"),
    PU(CL_DEVICE_MAX_PARAMETER_SIZE, OCL_T_NUM, V10, OCL_U_BYTES, "Max size of kernel argument"),
    /* queues */
    ROW(CL_DEVICE_QUEUE_PROPERTIES, OCL_T_BITS, &ocl_n_queue, V10, V20, NULL, false, OCL_U_NONE, "Queue properties"),
    PN(CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, OCL_T_BITS, ocl_n_queue, V20, "Queue properties (on host)"),
    PN(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, OCL_T_BITS, ocl_n_enqueue, V30, "Device enqueue capabilities"),
    PN(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, OCL_T_BITS, ocl_n_queue, V20, "Queue properties (on device)"),
    PU(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, OCL_T_NUM, V20, OCL_U_BYTES, "On-device queue preferred size"),
    PU(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, OCL_T_NUM, V20, OCL_U_BYTES, "On-device queue max size"),
    P(CL_DEVICE_MAX_ON_DEVICE_QUEUES, OCL_T_NUM, V20, "Max queues on device"),
    P(CL_DEVICE_MAX_ON_DEVICE_EVENTS, OCL_T_NUM, V20, "Max events on device"),
    ROW(CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, OCL_T_BITS, &ocl_n_cmdbuf, OCL_NEVER, 0, "cl_khr_command_buffer",
        false, OCL_U_NONE, "Command buffer capabilities"),
    ROW(CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, OCL_T_BITS, &ocl_n_queue, OCL_NEVER, 0,
        "cl_khr_command_buffer", false, OCL_U_NONE, "Required queue properties for command buffer"),
    ROW(CL_DEVICE_TERMINATE_CAPABILITY_KHR, OCL_T_BITS, &ocl_n_terminate, OCL_NEVER, 0, "cl_khr_terminate_context",
        false, OCL_U_NONE, "Terminate capability"),
    P(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, OCL_T_BOOL, V12, "Prefer user sync for interop"),
    PU(CL_DEVICE_PROFILING_TIMER_RESOLUTION, OCL_T_NUM, V10, OCL_U_NS, "Profiling timer resolution"),
    ROW(CL_DEVICE_PROFILING_TIMER_OFFSET_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", false,
        OCL_U_NS, "Profiling timer offset since Epoch (AMD)"),
    /* execution */
    PN(CL_DEVICE_EXECUTION_CAPABILITIES, OCL_T_BITS, ocl_n_exec, V10, "Execution capabilities"),
    P(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, OCL_T_BOOL, V30, "Non-uniform work-groups"),
    P(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, OCL_T_BOOL, V30, "Work-group collective functions"),
    P(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, OCL_T_BOOL, V21, "Sub-group independent forward progress"),
    ROW(CL_DEVICE_THREAD_TRACE_SUPPORTED_AMD, OCL_T_BOOL, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Thread trace supported (AMD)"),
    PE(CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV, OCL_T_BOOL, OCL_NEVER, "cl_nv_device_attribute_query",
       "Kernel execution timeout (NV)"),
    PE(CL_DEVICE_GPU_OVERLAP_NV, OCL_T_BOOL, OCL_NEVER, "cl_nv_device_attribute_query",
       "Concurrent copy and kernel execution (NV)"),
    ROWI("CL_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV", OCL_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV, OCL_T_NUM, NULL,
         OCL_NEVER, 0, "cl_nv_device_attribute_query", false, OCL_U_NONE, "Number of async copy engines (NV)"),
    ROW(CL_DEVICE_AVAILABLE_ASYNC_QUEUES_AMD, OCL_T_NUM, NULL, OCL_NEVER, 0, "cl_amd_device_attribute_query", true,
        OCL_U_NONE, "Number of async queues (AMD)"),
    ROWI("CL_DEVICE_MAX_REAL_TIME_COMPUTE_QUEUES_AMD", OCL_MAX_REAL_TIME_COMPUTE_QUEUES_AMD, OCL_T_NUM, NULL,
         OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_NONE, "Max real-time compute queues (AMD)"),
    ROWI("CL_DEVICE_MAX_REAL_TIME_COMPUTE_UNITS_AMD", OCL_MAX_REAL_TIME_COMPUTE_UNITS_AMD, OCL_T_NUM, NULL,
         OCL_NEVER, 0, "cl_amd_device_attribute_query", true, OCL_U_NONE, "Max real-time compute units (AMD)"),
    ROW(CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR, OCL_T_BITS, &ocl_n_dot, OCL_NEVER, 0,
        "cl_khr_integer_dot_product", false, OCL_U_NONE, "Integer dot product capabilities"),
    /* intermediate languages and kernels */
    PE(CL_DEVICE_IL_VERSION, OCL_T_STR, V21, "cl_khr_il_program", "IL version"),
    PE(CL_DEVICE_ILS_WITH_VERSION, OCL_T_NAMEVER, V30, "cl_khr_extended_versioning", "ILs with version"),
    PE(CL_DEVICE_SPIR_VERSIONS, OCL_T_STR, OCL_NEVER, "cl_khr_spir", "SPIR versions"),
    PU(CL_DEVICE_PRINTF_BUFFER_SIZE, OCL_T_NUM, V12, OCL_U_BYTES, "printf() buffer size"),
    P(CL_DEVICE_BUILT_IN_KERNELS, OCL_T_STR, V12, "Built-in kernels"),
    PE(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, OCL_T_NAMEVER, V30, "cl_khr_extended_versioning",
       "Built-in kernels with version"),
    P(CL_DEVICE_EXTENSIONS, OCL_T_STR, V10, "Device Extensions"),
    PE(CL_DEVICE_EXTENSIONS_WITH_VERSION, OCL_T_NAMEVER, V30, "cl_khr_extended_versioning",
       "Device Extensions with Version"),
};
const size_t ocl_n_device_props = sizeof(ocl_device_props) / sizeof(ocl_device_props[0]);

const struct ocl_prop *ocl_prop_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < ocl_n_device_props; i++)
        if (strcmp(ocl_device_props[i].name, name) == 0)
            return &ocl_device_props[i];
    for (size_t i = 0; i < ocl_n_platform_props; i++)
        if (strcmp(ocl_platform_props[i].name, name) == 0)
            return &ocl_platform_props[i];
    return NULL;
}

/* ---- legality ---- */

unsigned ocl_parse_version(const char *s)
{
    unsigned maj = 0, min = 0;
    if (!s || strncmp(s, "OpenCL ", 7) != 0)
        return 0;
    if (sscanf(s + 7, "%u.%u", &maj, &min) != 2 || maj > 99 || min > 99)
        return 0;
    return OCL_V(maj, min);
}

bool ocl_prop_legal(const struct ocl_prop *p, unsigned version, const char *exts, bool gpu)
{
    if (p->gpu_only && !gpu)
        return false;
    /* An unparsable version string: assume 1.0, the floor every driver claims. */
    if (version == 0)
        version = OCL_V(1, 0);
    bool by_version = p->since != OCL_NEVER && version >= p->since && (p->until == 0 || version < p->until);
    return by_version || (p->ext && clquery_has_ext(exts, p->ext));
}

/* ---- decoding ---- */

json_object *ocl_error_value(cl_int code)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(clapi_error_name(code)));
    json_object_object_add(o, "code", json_object_new_int(code));
    return o;
}

/* {"error": "unexpected value size N", ...}: a driver answered with bytes of the wrong shape. */
static json_object *ocl_size_error(size_t size)
{
    json_object *o = json_object_new_object();
    char buf[64];
    snprintf(buf, sizeof(buf), "unexpected value size %zu", size);
    json_object_object_add(o, "error", json_object_new_string(buf));
    json_object_object_add(o, "code", json_object_new_null());
    return o;
}

static json_object *ocl_new_u64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? json_object_new_uint64(v) : json_object_new_int64((int64_t)v);
}

/* Read an unsigned integer of SIZE bytes (1, 2, 4 or 8); false for any other size. */
static bool ocl_read_uint(const unsigned char *buf, size_t size, uint64_t *out)
{
    switch (size) {
    case 1: *out = buf[0]; return true;
    case 2: { uint16_t v; memcpy(&v, buf, 2); *out = v; return true; }
    case 4: { uint32_t v; memcpy(&v, buf, 4); *out = v; return true; }
    case 8: { uint64_t v; memcpy(&v, buf, 8); *out = v; return true; }
    default: return false;
    }
}

static json_object *ocl_version_string(uint32_t v)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%u.%u.%u", (unsigned)CL_VERSION_MAJOR(v), (unsigned)CL_VERSION_MINOR(v),
             (unsigned)CL_VERSION_PATCH(v));
    return json_object_new_string(buf);
}

static json_object *ocl_string_of(const unsigned char *buf, size_t size)
{
    size_t n = strnlen((const char *)buf, size);
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, buf, n);
    s[n] = '\0';
    json_object *o = json_object_new_string(str_sanitize(s));
    free(s);
    return o;
}

static const char *ocl_name_of(const struct ocl_names *names, uint64_t v)
{
    for (size_t i = 0; names && i < names->n; i++)
        if (names->v[i].value == v)
            return names->v[i].name;
    return NULL;
}

static json_object *ocl_bits(const struct ocl_names *names, uint64_t v)
{
    json_object *a = json_object_new_array();
    for (unsigned bit = 0; bit < 64; bit++) {
        uint64_t m = (uint64_t)1 << bit;
        if (!(v & m))
            continue;
        const char *nm = ocl_name_of(names, m);
        char buf[24];
        if (!nm) {
            snprintf(buf, sizeof(buf), "0x%" PRIx64, m);
            nm = buf;
        }
        json_object_array_add(a, json_object_new_string(nm));
    }
    return a;
}

static json_object *ocl_enum(const struct ocl_names *names, uint64_t v)
{
    const char *nm = ocl_name_of(names, v);
    char buf[24];
    if (!nm) {
        snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
        nm = buf;
    }
    return json_object_new_string(nm);
}

static json_object *ocl_hex_bytes(const unsigned char *b, size_t n, bool uuid_dashes)
{
    char buf[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 3 < sizeof(buf); i++) {
        if (uuid_dashes && (i == 4 || i == 6 || i == 8 || i == 10))
            buf[k++] = '-';
        k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%02x", b[i]);
    }
    buf[k] = '\0';
    return json_object_new_string(buf);
}

static json_object *ocl_decode(const struct ocl_query_ctx *q, const struct ocl_prop *p, const unsigned char *buf,
                               size_t size)
{
    uint64_t v = 0;
    switch (p->type) {
    case OCL_T_STR:
        return ocl_string_of(buf, size);
    case OCL_T_NUM:
        return ocl_read_uint(buf, size, &v) ? ocl_new_u64(v) : ocl_size_error(size);
    case OCL_T_BOOL:
        return ocl_read_uint(buf, size, &v) ? json_object_new_boolean(v != 0) : ocl_size_error(size);
    case OCL_T_BITS:
        return ocl_read_uint(buf, size, &v) ? ocl_bits(p->names, v) : ocl_size_error(size);
    case OCL_T_ENUM:
        return ocl_read_uint(buf, size, &v) ? ocl_enum(p->names, v) : ocl_size_error(size);
    case OCL_T_VERSION:
        return size == sizeof(cl_version) && ocl_read_uint(buf, size, &v) ? ocl_version_string((uint32_t)v)
                                                                            : ocl_size_error(size);
    case OCL_T_INTEL_IP: {
        if (size != 4 || !ocl_read_uint(buf, size, &v))
            return ocl_size_error(size);
        char s[40];
        /* cl_intel_device_attribute_query: architecture (10 bits), release (8 bits), revision (6 bits). */
        snprintf(s, sizeof(s), "%u.%u.%u", (unsigned)(v >> 22) & 0x3ffu, (unsigned)(v >> 14) & 0xffu,
                 (unsigned)v & 0x3fu);
        return json_object_new_string(s);
    }
    case OCL_T_NUMS: {
        if (size % sizeof(size_t) != 0)
            return ocl_size_error(size);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < size / sizeof(size_t); i++) {
            size_t e;
            memcpy(&e, buf + i * sizeof(size_t), sizeof(e));
            json_object_array_add(a, ocl_new_u64(e));
        }
        return a;
    }
    case OCL_T_PARTITION: {
        if (size % sizeof(cl_device_partition_property) != 0)
            return ocl_size_error(size);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < size / sizeof(cl_device_partition_property); i++) {
            cl_device_partition_property e;
            memcpy(&e, buf + i * sizeof(e), sizeof(e));
            if (e == 0) /* list terminator */
                break;
            json_object_array_add(a, ocl_enum(p->names, (uint64_t)e));
        }
        return a;
    }
    case OCL_T_NAMEVER: {
        if (size % sizeof(cl_name_version) != 0)
            return ocl_size_error(size);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < size / sizeof(cl_name_version); i++) {
            cl_name_version nv;
            memcpy(&nv, buf + i * sizeof(nv), sizeof(nv));
            json_object *e = json_object_new_object();
            json_object_object_add(e, "name", ocl_string_of((const unsigned char *)nv.name, sizeof(nv.name)));
            json_object_object_add(e, "version", ocl_version_string(nv.version));
            json_object_array_add(a, e);
        }
        return a;
    }
    case OCL_T_UUID:
        return size == 16 ? ocl_hex_bytes(buf, 16, true) : ocl_size_error(size);
    case OCL_T_LUID:
        return size == 8 ? ocl_hex_bytes(buf, 8, false) : ocl_size_error(size);
    case OCL_T_PCI_BUS: {
        if (size != 4 * sizeof(cl_uint))
            return ocl_size_error(size);
        cl_uint f[4];
        memcpy(f, buf, sizeof(f));
        json_object *o = json_object_new_object();
        json_object_object_add(o, "domain", json_object_new_int64(f[0]));
        json_object_object_add(o, "bus", json_object_new_int64(f[1]));
        json_object_object_add(o, "device", json_object_new_int64(f[2]));
        json_object_object_add(o, "function", json_object_new_int64(f[3]));
        return o;
    }
    case OCL_T_AMD_TOPO: {
        /* 24 bytes: cl_uint type, 17 bytes of padding, then signed char bus, device, function. */
        if (size != 24)
            return ocl_size_error(size);
        cl_uint type;
        memcpy(&type, buf, sizeof(type));
        json_object *o = json_object_new_object();
        if (type == 1) {
            json_object_object_add(o, "type", json_object_new_string("PCIe"));
            json_object_object_add(o, "bus", json_object_new_int(buf[21]));
            json_object_object_add(o, "device", json_object_new_int(buf[22]));
            json_object_object_add(o, "function", json_object_new_int(buf[23]));
        } else {
            json_object_object_add(o, "type", json_object_new_int64(type));
        }
        return o;
    }
    case OCL_T_PLATFORM: {
        if (size != sizeof(cl_platform_id))
            return ocl_size_error(size);
        cl_platform_id id;
        memcpy(&id, buf, sizeof(id));
        for (cl_uint i = 0; i < q->n_platforms; i++)
            if (q->platforms[i] == id)
                return json_object_new_int64(i);
        return NULL;
    }
    case OCL_T_DEVICE: {
        if (size != sizeof(cl_device_id))
            return ocl_size_error(size);
        cl_device_id id;
        memcpy(&id, buf, sizeof(id));
        return id ? json_object_new_string("sub-device") : NULL;
    }
    }
    return ocl_size_error(size);
}

json_object *ocl_query_prop(const struct ocl_query_ctx *q, const struct ocl_prop *p, cl_platform_id plat,
                            cl_device_id dev)
{
    /* One call with a stack buffer answers nearly every query; the size query is only for long values
     * and for errors (a too-small buffer and an unknown query both give CL_INVALID_VALUE). */
    unsigned char small[4096];
    size_t size = 0;
    cl_int err = dev ? q->api->clGetDeviceInfo(dev, p->id, sizeof(small), small, &size)
                     : q->api->clGetPlatformInfo(plat, p->id, sizeof(small), small, &size);
    if (err == CL_SUCCESS && size <= sizeof(small))
        return ocl_decode(q, p, small, size);
    cl_int first = err;
    size = 0;
    err = dev ? q->api->clGetDeviceInfo(dev, p->id, 0, NULL, &size)
              : q->api->clGetPlatformInfo(plat, p->id, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return ocl_error_value(err);
    if (size <= sizeof(small)) /* the first call failed although the value fits: report that failure */
        return ocl_error_value(first != CL_SUCCESS ? first : CL_INVALID_VALUE);
    if (size > ((size_t)16 << 20))
        return ocl_size_error(size);
    unsigned char *big = calloc(1, size);
    if (!big)
        return ocl_error_value(CL_OUT_OF_HOST_MEMORY);
    size_t got = 0;
    err = dev ? q->api->clGetDeviceInfo(dev, p->id, size, big, &got)
              : q->api->clGetPlatformInfo(plat, p->id, size, big, &got);
    json_object *v = err == CL_SUCCESS ? ocl_decode(q, p, big, got <= size ? got : size) : ocl_error_value(err);
    free(big);
    return v;
}
