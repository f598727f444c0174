/* clapi.h: the OpenCL API, loaded at run time with dlopen (gpucheckup never links -lOpenCL). */
#ifndef GPUCHECKUP_CLAPI_H
#define GPUCHECKUP_CLAPI_H

#include <stdbool.h>

#include <json-c/json.h>
#include <CL/cl.h>
#include <CL/cl_ext.h>

/* X(name, required): every entry point gpucheckup uses. "required" ones must exist in any
 * OpenCL 1.2 loader; the others are looked up when present (NULL otherwise). */
#define CLAPI_FUNCTIONS(X)                                  \
    X(clGetPlatformIDs, true)                               \
    X(clGetPlatformInfo, true)                              \
    X(clGetDeviceIDs, true)                                 \
    X(clGetDeviceInfo, true)                                \
    X(clCreateContext, true)                                \
    X(clReleaseContext, true)                               \
    X(clCreateCommandQueue, false)                          \
    X(clCreateCommandQueueWithProperties, false)            \
    X(clReleaseCommandQueue, true)                          \
    X(clCreateBuffer, true)                                 \
    X(clReleaseMemObject, true)                             \
    X(clCreateProgramWithSource, true)                      \
    X(clCreateProgramWithBinary, false)                     \
    X(clGetProgramInfo, false)                              \
    X(clBuildProgram, true)                                 \
    X(clGetProgramBuildInfo, true)                          \
    X(clReleaseProgram, true)                               \
    X(clCreateKernel, true)                                 \
    X(clReleaseKernel, true)                                \
    X(clSetKernelArg, true)                                 \
    X(clEnqueueNDRangeKernel, true)                         \
    X(clEnqueueWriteBuffer, true)                           \
    X(clEnqueueReadBuffer, true)                            \
    X(clEnqueueMapBuffer, false)                            \
    X(clEnqueueUnmapMemObject, false)                       \
    X(clFlush, false)                                       \
    X(clFinish, true)                                       \
    X(clWaitForEvents, true)                                \
    X(clGetEventProfilingInfo, true)                        \
    X(clReleaseEvent, true)                                 \
    X(clGetExtensionFunctionAddress, false)                 \
    X(clGetExtensionFunctionAddressForPlatform, false)

struct clapi {
    void *handle;      /* dlopen handle of the loader */
    char *path;        /* the file that was loaded (resolved through dl_iterate_phdr / dlinfo), or NULL */
#define CLAPI_MEMBER(name, req) __typeof__(&name) name;
    CLAPI_FUNCTIONS(CLAPI_MEMBER)
#undef CLAPI_MEMBER
};

/* Load the OpenCL loader: LIBNAME, or "libOpenCL.so.1" when NULL (the environment variable
 * GPUCHECKUP_LIBOPENCL overrides the default, for tests). Returns 0, or -1 with a message in ERR
 * (ERRLEN bytes) naming the library and what is missing. On success free with clapi_close(). */
int clapi_open(struct clapi *api, const char *libname, char *err, size_t errlen);
void clapi_close(struct clapi *api);

/* "CL_DEVICE_NOT_FOUND" for -1, ..., "CL_PLATFORM_NOT_FOUND_KHR" for -1001; "CL_UNKNOWN_ERROR_<n>"
 * style text (in a static buffer) for unknown codes. */
const char *clapi_error_name(cl_int err);
/* An OpenCL call's failure as JSON: {"call": CALL, "code": ERR, "name": "CL_..."} (code and name null
 * without HAVE_CODE: a failure that is not an OpenCL error, such as dlopen). A new object. */
json_object *clapi_error_json(const char *call, cl_int err, bool have_code);

#endif
