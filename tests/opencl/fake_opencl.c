/* fake_opencl.c: a fake OpenCL loader for the opencl tests: GPU platforms that do not exist here, and drivers that crash or hang. */
/* gpucheckup loads it through GPUCHECKUP_LIBOPENCL. GC_OCL_FAKE_MODE picks the behaviour:
 *   gpus    three platforms: "Fake CUDA" (an NVIDIA GPU found through the NVIDIA attribute query),
 *           "Fake rusticl" (the same GPU through cl_khr_pci_bus_info, an OpenCL 1.2 device, and an AMD
 *           GPU through the AMD topology) and "Fake Clover" (no device)
 *   crash   clGetPlatformIDs dereferences NULL (SIGSEGV)
 *   abort   clGetPlatformIDs calls abort() (SIGABRT)
 *   hang    clGetPlatformIDs never returns
 *   exit    clGetPlatformIDs calls _exit(7)
 *   error   clGetPlatformIDs returns CL_OUT_OF_HOST_MEMORY
 *   none    clGetPlatformIDs returns CL_PLATFORM_NOT_FOUND_KHR */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

struct _cl_platform_id {
    int index;
};
struct _cl_device_id {
    int platform;
    int index;
};

static struct _cl_platform_id fake_platforms[3] = {{0}, {1}, {2}};
static struct _cl_device_id fake_devices[3] = {{0, 0}, {1, 0}, {1, 1}};

static const char *fake_mode(void)
{
    const char *m = getenv("GC_OCL_FAKE_MODE");
    return m ? m : "gpus";
}

static cl_int fake_answer(const void *value, size_t size, size_t param_value_size, void *param_value,
                          size_t *param_value_size_ret)
{
    if (param_value_size_ret)
        *param_value_size_ret = size;
    if (param_value) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, value, size);
    }
    return CL_SUCCESS;
}

static cl_int fake_string(const char *s, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    return fake_answer(s, strlen(s) + 1, param_value_size, param_value, param_value_size_ret);
}

static cl_int fake_uint(cl_uint v, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    return fake_answer(&v, sizeof(v), param_value_size, param_value, param_value_size_ret);
}

static cl_int fake_ulong(cl_ulong v, size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    return fake_answer(&v, sizeof(v), param_value_size, param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                                 cl_uint *num_platforms)
{
    const char *m = fake_mode();
    if (strcmp(m, "crash") == 0) {
        volatile int *p = NULL;
        return (cl_int)*p;
    }
    if (strcmp(m, "abort") == 0)
        abort();
    if (strcmp(m, "hang") == 0)
        for (;;)
            pause();
    if (strcmp(m, "exit") == 0)
        _exit(7);
    if (strcmp(m, "error") == 0)
        return CL_OUT_OF_HOST_MEMORY;
    if (strcmp(m, "none") == 0)
        return CL_PLATFORM_NOT_FOUND_KHR;
    if (num_platforms)
        *num_platforms = 3;
    for (cl_uint i = 0; platforms && i < num_entries && i < 3; i++)
        platforms[i] = &fake_platforms[i];
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                                  size_t param_value_size, void *param_value,
                                                  size_t *param_value_size_ret)
{
    static const char *const names[] = {"Fake CUDA", "Fake rusticl", "Fake Clover"};
    static const char *const vendors[] = {"NVIDIA Corporation", "Mesa/X.org", "Mesa"};
    static const char *const versions[] = {"OpenCL 3.0 CUDA 12.4.0", "OpenCL 3.0 ", "OpenCL 1.1 Mesa 22.3.6"};
    static const char *const suffixes[] = {"NV", "MESA", "MESA"};
    if (!platform || platform->index < 0 || platform->index > 2)
        return CL_INVALID_PLATFORM;
    int i = platform->index;
    switch (param_name) {
    case CL_PLATFORM_NAME: return fake_string(names[i], param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_VENDOR: return fake_string(vendors[i], param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_VERSION: return fake_string(versions[i], param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_PROFILE: return fake_string("FULL_PROFILE", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_EXTENSIONS:
        return fake_string("cl_khr_icd", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR:
        return fake_string(suffixes[i], param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_NUMERIC_VERSION:
        return fake_uint(CL_MAKE_VERSION(3, 0, 0), param_value_size, param_value, param_value_size_ret);
    default: return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                               cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
{
    (void)device_type;
    if (!platform || platform->index < 0 || platform->index > 2)
        return CL_INVALID_PLATFORM;
    cl_uint first = platform->index == 0 ? 0 : 1, n = platform->index == 0 ? 1 : platform->index == 1 ? 2 : 0;
    if (n == 0)
        return CL_DEVICE_NOT_FOUND; /* and leaves *num_devices untouched, as some drivers do */
    if (num_devices)
        *num_devices = n;
    for (cl_uint i = 0; devices && i < num_entries && i < n; i++)
        devices[i] = &fake_devices[first + i];
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                                size_t param_value_size, void *param_value,
                                                size_t *param_value_size_ret)
{
    if (!device)
        return CL_INVALID_DEVICE;
    int which = device->platform == 0 ? 0 : device->index == 0 ? 1 : 2; /* 0 NV/CUDA, 1 NV/rusticl, 2 AMD */
    size_t sz = param_value_size;
    void *pv = param_value;
    size_t *ret = param_value_size_ret;
    static const char *const names[] = {"Fake GeForce RTX 3090", "NVIDIA GA102 (rusticl)", "Fake Radeon RX 6800"};
    static const char *const versions[] = {"OpenCL 3.0 CUDA", "OpenCL 1.2 Mesa", "OpenCL 3.0 AMD-APP (3581.0)"};
    static const char *const exts[] = {
        "cl_khr_fp64 cl_khr_icd cl_nv_device_attribute_query cl_khr_device_uuid",
        "cl_khr_icd cl_khr_pci_bus_info cl_khr_fp16",
        "cl_khr_fp64 cl_amd_device_attribute_query",
    };
    switch (param_name) {
    case CL_DEVICE_NAME: return fake_string(names[which], sz, pv, ret);
    case CL_DEVICE_VENDOR: return fake_string(which == 2 ? "Advanced Micro Devices, Inc." : "NVIDIA Corporation", sz, pv, ret);
    case CL_DEVICE_VERSION: return fake_string(versions[which], sz, pv, ret);
    case CL_DRIVER_VERSION: return fake_string(which == 0 ? "550.90.07" : "22.3.6", sz, pv, ret);
    case CL_DEVICE_EXTENSIONS: return fake_string(exts[which], sz, pv, ret);
    case CL_DEVICE_TYPE: return fake_ulong(CL_DEVICE_TYPE_GPU, sz, pv, ret);
    case CL_DEVICE_VENDOR_ID: return fake_uint(which == 2 ? 0x1002 : 0x10de, sz, pv, ret);
    case CL_DEVICE_AVAILABLE: return fake_uint(CL_TRUE, sz, pv, ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        if (which == 2) { /* a driver answering with a 3-byte value: must become a structured error */
            static const unsigned char odd[3] = {1, 2, 3};
            return fake_answer(odd, sizeof(odd), sz, pv, ret);
        }
        return fake_uint(82, sz, pv, ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return fake_ulong(25438126080ull, sz, pv, ret);
    case CL_DEVICE_QUEUE_PROPERTIES: /* also CL_DEVICE_QUEUE_ON_HOST_PROPERTIES */
        return fake_ulong(CL_QUEUE_PROFILING_ENABLE | ((cl_ulong)1 << 40), sz, pv, ret);
    case CL_DEVICE_HALF_FP_CONFIG: return fake_ulong(CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST, sz, pv, ret);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
        size_t v[3] = {1024, 1024, 64};
        return fake_answer(v, sizeof(v), sz, pv, ret);
    }
    case CL_DEVICE_UUID_KHR: {
        if (which != 0)
            return CL_INVALID_VALUE;
        unsigned char u[16];
        for (int i = 0; i < 16; i++)
            u[i] = (unsigned char)(0xa0 + i);
        return fake_answer(u, sizeof(u), sz, pv, ret);
    }
    case CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: return fake_uint(8, sz, pv, ret);
    case CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: return fake_uint(6, sz, pv, ret);
    case CL_DEVICE_WARP_SIZE_NV: return fake_uint(32, sz, pv, ret);
    case 0x4008: return fake_uint(0x01, sz, pv, ret);  /* CL_DEVICE_PCI_BUS_ID_NV */
    case 0x4009: return fake_uint(0x00, sz, pv, ret);  /* CL_DEVICE_PCI_SLOT_ID_NV: device 0, function 0 */
    case 0x400A: return CL_INVALID_VALUE;              /* CL_DEVICE_PCI_DOMAIN_ID_NV: a driver before CUDA 10.2 */
    case CL_DEVICE_PCI_BUS_INFO_KHR: {
        if (which != 1)
            return CL_INVALID_VALUE;
        cl_uint v[4] = {0, 1, 0, 0};
        return fake_answer(v, sizeof(v), sz, pv, ret);
    }
    case CL_DEVICE_TOPOLOGY_AMD: {
        if (which != 2)
            return CL_INVALID_VALUE;
        unsigned char t[24] = {0};
        cl_uint type = 1;
        memcpy(t, &type, sizeof(type));
        t[21] = (unsigned char)(signed char)-125; /* bus 0x83, stored as a negative cl_char */
        t[22] = 0;
        t[23] = 1;
        return fake_answer(t, sizeof(t), sz, pv, ret);
    }
    case CL_DEVICE_BOARD_NAME_AMD: return fake_string("AMD Radeon RX 6800", sz, pv, ret);
    case CL_DEVICE_WAVEFRONT_WIDTH_AMD: return fake_uint(32, sz, pv, ret);
    case CL_DEVICE_NUMERIC_VERSION: return fake_uint(CL_MAKE_VERSION(3, 0, 0), sz, pv, ret);
    default: return CL_INVALID_VALUE;
    }
}

/* Never used by the tests, but clapi looks it up: answer "no such function". */
CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *func_name)
{
    (void)func_name;
    return NULL;
}
