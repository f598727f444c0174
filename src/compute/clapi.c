/* clapi.c: the OpenCL API, loaded at run time with dlopen (gpucheckup never links -lOpenCL). */
#include "clapi.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int clapi_open(struct clapi *api, const char *libname, char *err, size_t errlen)
{
    memset(api, 0, sizeof(*api));
    if (!libname) {
        const char *env = getenv("GPUCHECKUP_LIBOPENCL");
        libname = (env && *env) ? env : "libOpenCL.so.1";
    }
    api->handle = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) {
        const char *e = dlerror();
        size_t n = strlen(libname);
        if (e && strncmp(e, libname, n) == 0 && e[n] == ':') /* glibc's text names the library itself */
            snprintf(err, errlen, "cannot load %s", e);
        else
            snprintf(err, errlen, "cannot load %s: %s", libname, e ? e : "unknown error");
        return -1;
    }
    struct link_map *lm = NULL;
    if (dlinfo(api->handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name) {
        char *rp = realpath(lm->l_name, NULL);
        api->path = rp ? rp : strdup(lm->l_name);
    }
#define CLAPI_LOAD(name, req)                                                                      \
    *(void **)(&api->name) = dlsym(api->handle, #name);                                            \
    if (!api->name && (req)) {                                                                     \
        snprintf(err, errlen, "%s has no %s: not an OpenCL 1.2 loader", libname, #name);           \
        clapi_close(api);                                                                          \
        return -1;                                                                                 \
    }
    CLAPI_FUNCTIONS(CLAPI_LOAD)
#undef CLAPI_LOAD
    if (!api->clCreateCommandQueue && !api->clCreateCommandQueueWithProperties) {
        snprintf(err, errlen, "%s has no clCreateCommandQueue", libname);
        clapi_close(api);
        return -1;
    }
    return 0;
}

void clapi_close(struct clapi *api)
{
    if (api->handle)
        dlclose(api->handle);
    free(api->path);
    memset(api, 0, sizeof(*api));
}

static const struct {
    cl_int code;
    const char *name;
} clapi_errors[] = {
#define E(x) {x, #x}
    E(CL_SUCCESS), E(CL_DEVICE_NOT_FOUND), E(CL_DEVICE_NOT_AVAILABLE), E(CL_COMPILER_NOT_AVAILABLE),
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE), E(CL_OUT_OF_RESOURCES), E(CL_OUT_OF_HOST_MEMORY),
    E(CL_PROFILING_INFO_NOT_AVAILABLE), E(CL_MEM_COPY_OVERLAP), E(CL_IMAGE_FORMAT_MISMATCH),
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED), E(CL_BUILD_PROGRAM_FAILURE), E(CL_MAP_FAILURE),
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET), E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
    E(CL_COMPILE_PROGRAM_FAILURE), E(CL_LINKER_NOT_AVAILABLE), E(CL_LINK_PROGRAM_FAILURE),
    E(CL_DEVICE_PARTITION_FAILED), E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE), E(CL_INVALID_VALUE),
    E(CL_INVALID_DEVICE_TYPE), E(CL_INVALID_PLATFORM), E(CL_INVALID_DEVICE), E(CL_INVALID_CONTEXT),
    E(CL_INVALID_QUEUE_PROPERTIES), E(CL_INVALID_COMMAND_QUEUE), E(CL_INVALID_HOST_PTR),
    E(CL_INVALID_MEM_OBJECT), E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), E(CL_INVALID_IMAGE_SIZE),
    E(CL_INVALID_SAMPLER), E(CL_INVALID_BINARY), E(CL_INVALID_BUILD_OPTIONS), E(CL_INVALID_PROGRAM),
    E(CL_INVALID_PROGRAM_EXECUTABLE), E(CL_INVALID_KERNEL_NAME), E(CL_INVALID_KERNEL_DEFINITION),
    E(CL_INVALID_KERNEL), E(CL_INVALID_ARG_INDEX), E(CL_INVALID_ARG_VALUE), E(CL_INVALID_ARG_SIZE),
    E(CL_INVALID_KERNEL_ARGS), E(CL_INVALID_WORK_DIMENSION), E(CL_INVALID_WORK_GROUP_SIZE),
    E(CL_INVALID_WORK_ITEM_SIZE), E(CL_INVALID_GLOBAL_OFFSET), E(CL_INVALID_EVENT_WAIT_LIST),
    E(CL_INVALID_EVENT), E(CL_INVALID_OPERATION), E(CL_INVALID_GL_OBJECT), E(CL_INVALID_BUFFER_SIZE),
    E(CL_INVALID_MIP_LEVEL), E(CL_INVALID_GLOBAL_WORK_SIZE), E(CL_INVALID_PROPERTY),
    E(CL_INVALID_IMAGE_DESCRIPTOR), E(CL_INVALID_COMPILER_OPTIONS), E(CL_INVALID_LINKER_OPTIONS),
    E(CL_INVALID_DEVICE_PARTITION_COUNT), E(CL_INVALID_PIPE_SIZE), E(CL_INVALID_DEVICE_QUEUE),
    E(CL_INVALID_SPEC_ID), E(CL_MAX_SIZE_RESTRICTION_EXCEEDED), E(CL_PLATFORM_NOT_FOUND_KHR),
#undef E
};

const char *clapi_error_name(cl_int err)
{
    for (size_t i = 0; i < sizeof(clapi_errors) / sizeof(clapi_errors[0]); i++)
        if (clapi_errors[i].code == err)
            return clapi_errors[i].name;
    static _Thread_local char buf[40]; /* the smoke test calls this from one thread per device */
    snprintf(buf, sizeof(buf), "CL_UNKNOWN_ERROR_%d", (int)err);
    return buf;
}

json_object *clapi_error_json(const char *call, cl_int err, bool have_code)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "call", json_object_new_string(call));
    json_object_object_add(e, "code", have_code ? json_object_new_int(err) : NULL);
    json_object_object_add(e, "name", have_code ? json_object_new_string(clapi_error_name(err)) : NULL);
    return e;
}
