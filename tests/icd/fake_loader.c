/* fake_loader.c: a fake libOpenCL.so.1 for tests: it says it is the Khronos loader and has no platform. */
#include <stdlib.h>
#include <string.h>

/* The vendors directory compiled in, a NUL-terminated string in .rodata as ocl-icd's ETC_OPENCL_VENDORS and the
 * Khronos loader's OCL_ICD_VENDORDIR are; meson builds a second copy with another prefix's. */
#ifndef FAKE_LOADER_VENDORS
#define FAKE_LOADER_VENDORS "/etc/OpenCL/vendors"
#endif
extern const char gc_fake_loader_vendors[];
const char gc_fake_loader_vendors[] = FAKE_LOADER_VENDORS;

/* No CL headers here on purpose: the stubs below only need to exist (dlsym); they are never called
 * with the real prototypes except the few written out with their real shapes. */

#define FAKE_STUB(name)                                                                                    \
    int name(void);                                                                                        \
    int name(void) { return -59; /* CL_INVALID_OPERATION */ }

FAKE_STUB(clGetPlatformInfo)
FAKE_STUB(clGetDeviceIDs)
FAKE_STUB(clGetDeviceInfo)
FAKE_STUB(clCreateContext)
FAKE_STUB(clReleaseContext)
FAKE_STUB(clCreateCommandQueue)
FAKE_STUB(clReleaseCommandQueue)
FAKE_STUB(clCreateBuffer)
FAKE_STUB(clReleaseMemObject)
FAKE_STUB(clCreateProgramWithSource)
FAKE_STUB(clBuildProgram)
FAKE_STUB(clGetProgramBuildInfo)
FAKE_STUB(clReleaseProgram)
FAKE_STUB(clCreateKernel)
FAKE_STUB(clReleaseKernel)
FAKE_STUB(clSetKernelArg)
FAKE_STUB(clEnqueueNDRangeKernel)
FAKE_STUB(clEnqueueWriteBuffer)
FAKE_STUB(clEnqueueReadBuffer)
FAKE_STUB(clFinish)
FAKE_STUB(clWaitForEvents)
FAKE_STUB(clGetEventProfilingInfo)
FAKE_STUB(clReleaseEvent)

/* GC_FAKE_LOADER_CRASH=1: clGetPlatformIDs crashes, as a loader tripping over its drivers would. */
static int *volatile fake_null;

int clGetPlatformIDs(unsigned num_entries, void **platforms, unsigned *num_platforms);
int clGetPlatformIDs(unsigned num_entries, void **platforms, unsigned *num_platforms)
{
    (void)num_entries, (void)platforms;
    const char *crash = getenv("GC_FAKE_LOADER_CRASH");
    if (crash && strcmp(crash, "1") == 0)
        *fake_null = 1;
    if (num_platforms)
        *num_platforms = 0;
    return -1001; /* CL_PLATFORM_NOT_FOUND_KHR */
}

static int fake_loader_info(unsigned param, size_t size, void *value, size_t *size_ret)
{
    const char *s;
    switch (param) {
    case 1:
        s = "OpenCL 3.0";
        break;
    case 2:
        s = "3.0.6";
        break;
    case 3:
        s = getenv("GC_FAKE_LOADER_NAME");
        s = s ? s : "Khronos OpenCL ICD Loader";
        break;
    case 4:
        s = "Khronos Group";
        break;
    default:
        return -30; /* CL_INVALID_VALUE */
    }
    size_t n = strlen(s) + 1;
    if (size_ret)
        *size_ret = n;
    if (value) {
        if (size < n)
            return -30;
        memcpy(value, s, n);
    }
    return 0;
}

/* GC_FAKE_LOADER_NAME set to "" makes it an old loader without clGetICDLoaderInfoOCLICD. */
void *clGetExtensionFunctionAddress(const char *name);
void *clGetExtensionFunctionAddress(const char *name)
{
    const char *n = getenv("GC_FAKE_LOADER_NAME");
    if (name && strcmp(name, "clGetICDLoaderInfoOCLICD") == 0 && !(n && !*n))
        return (void *)(size_t)fake_loader_info;
    return NULL;
}
