/* opencl_require.c: the opencl probe's --require names: gpu, opencl, fp64, gpus>=N, opencl-version>=X.Y.
 * All but the last are proven by the smoke test of the OpenCL devices (the smoke section). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "doctor_facts.h"
#include "opencl_internal.h"
#include "strutil.h"

enum { OCL_REQ_GPU, OCL_REQ_OPENCL, OCL_REQ_FP64 };

/* gpu, opencl and fp64: which one in *ARG. */
static int ocl_req_parse_device(const char *name, int *arg)
{
    static const char *const names[] = {[OCL_REQ_GPU] = "gpu", [OCL_REQ_OPENCL] = "opencl", [OCL_REQ_FP64] = "fp64"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, names[i]) == 0) {
            *arg = i;
            return 0;
        }
    }
    return -1;
}

static int ocl_req_parse_gpus(const char *name, int *arg)
{
    uint64_t n;
    if (!str_starts_with(name, "gpus>=") || str_to_u64(name + 6, 10, &n) < 0 || n < 1 || n > 4096)
        return -1;
    *arg = (int)n;
    return 0;
}

/* version * 100 + minor */
static int ocl_req_parse_version(const char *name, int *arg)
{
    if (!str_starts_with(name, "opencl-version>="))
        return -1;
    const char *v = name + 16;
    unsigned maj, min;
    char tail;
    if (sscanf(v, "%u.%u%c", &maj, &min, &tail) != 2 || maj < 1 || maj > 9 || min > 9 || !isdigit((unsigned char)v[0]))
        return -1;
    *arg = (int)(maj * 100 + min);
    return 0;
}

/* gpu: a GPU computes through any API, the one definition the gpu verdict target uses too (an NVIDIA
 * GPU proven by the CUDA smoke test counts where no NVIDIA OpenCL ICD is registered, as in containers). */
static bool ocl_req_eval_gpu(const struct report *r, char **detail)
{
    char label[320];
    size_t n = doctor_gpu_count(r, label, sizeof(label));
    if (n == 0) {
        *detail = str_printf("no GPU passed a compute test (OpenCL smoke test%s)",
                             doctor_data(r, "smoke") ? "" : ": did not run");
        return false;
    }
    *detail = str_printf("%zu GPU%s passed, e.g. %s", n, n == 1 ? "" : "s", label);
    return true;
}

static bool ocl_req_eval_device(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const struct result_smoke_dev *first = NULL;
    char label[256];
    if (arg == OCL_REQ_GPU)
        return ocl_req_eval_gpu(r, detail);
    if (!doctor_data(r, "smoke")) {
        *detail = str_printf("the smoke test did not run, so no device is proven to compute");
        return false;
    }
    size_t n = doctor_passed_devices(r, arg == OCL_REQ_GPU, arg == OCL_REQ_FP64 ? doctor_fp64_passed : NULL, &first);
    if (n == 0) {
        *detail = str_printf(arg == OCL_REQ_GPU    ? "no GPU passed the smoke test"
                             : arg == OCL_REQ_FP64 ? "no device passed the smoke test in fp64"
                                                   : "no OpenCL device passed the smoke test");
        return false;
    }
    *detail = str_printf("%zu device%s passed, e.g. %s", n, n == 1 ? "" : "s",
                         doctor_smoke_label(first, label, sizeof(label)));
    return true;
}

static bool ocl_req_eval_gpus(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    size_t n = doctor_gpu_count(r, NULL, 0);
    *detail = str_printf("%zu GPU%s passed a compute test (any API), %d needed", n, n == 1 ? "" : "s", arg);
    return (int)n >= arg;
}

static bool ocl_req_eval_version(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const char *dev = NULL;
    int best = doctor_best_opencl_version(r, &dev);
    return doctor_req_version(best, arg, 100, "best device supports OpenCL", dev ? dev : "unnamed",
                              "no OpenCL device found", detail);
}

/* Unmet, they are explained by any finding about the GPU stack (a GPU may compute through CUDA too). */
const struct probe_require ocl_requires[] = {
    {"gpu, opencl, fp64", NULL, ocl_req_parse_device, ocl_req_eval_device, PROBE_CHAIN_GPU},
    {"gpus>=N", NULL, ocl_req_parse_gpus, ocl_req_eval_gpus, PROBE_CHAIN_GPU},
    {"opencl-version>=X.Y", NULL, ocl_req_parse_version, ocl_req_eval_version, PROBE_CHAIN_GPU},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_GPU},
};
