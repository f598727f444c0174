/* fake_opencl_stubs.c: entry points the fake OpenCL loader must export but the opencl tests never call. */
/* Deliberately without CL/cl.h: these are only looked up with dlsym (gpucheckup's clapi needs them to
 * exist); each answers CL_INVALID_OPERATION (-59) or a NULL object. */
#define FAKE_STUB_INT(name) int name(void) { return -59; }
#define FAKE_STUB_PTR(name) void *name(void) { return 0; }

FAKE_STUB_PTR(clCreateContext)
FAKE_STUB_INT(clReleaseContext)
FAKE_STUB_PTR(clCreateCommandQueue)
FAKE_STUB_INT(clReleaseCommandQueue)
FAKE_STUB_PTR(clCreateBuffer)
FAKE_STUB_INT(clReleaseMemObject)
FAKE_STUB_PTR(clCreateProgramWithSource)
FAKE_STUB_INT(clBuildProgram)
FAKE_STUB_INT(clGetProgramBuildInfo)
FAKE_STUB_INT(clReleaseProgram)
FAKE_STUB_PTR(clCreateKernel)
FAKE_STUB_INT(clReleaseKernel)
FAKE_STUB_INT(clSetKernelArg)
FAKE_STUB_INT(clEnqueueNDRangeKernel)
FAKE_STUB_INT(clEnqueueWriteBuffer)
FAKE_STUB_INT(clEnqueueReadBuffer)
FAKE_STUB_INT(clFinish)
FAKE_STUB_INT(clWaitForEvents)
FAKE_STUB_INT(clGetEventProfilingInfo)
FAKE_STUB_INT(clReleaseEvent)
