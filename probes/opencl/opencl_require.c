/* opencl_require.c: the opencl probe's --require names: opencl, fp64, opencl-version>=X.Y.
 * All but the last are proven by the smoke test of the OpenCL devices (the smoke section). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "doctor_facts.h"
#include "results/result_smoke.h"
#include "jsonget.h"
#include "opencl_internal.h"
#include "strutil.h"
#include "results/result_smoke.h"

enum { OCL_REQ_OPENCL, OCL_REQ_FP64 };

/* opencl and fp64: which one in *ARG (gpu and gpus>=N are the core's: any API proves a GPU). */
static int ocl_req_parse_device(const char *name, int *arg)
{
    static const char *const names[] = {[OCL_REQ_OPENCL] = "opencl", [OCL_REQ_FP64] = "fp64"};
    for (int i = 0; i < 2; i++) {
        if (strcmp(name, names[i]) == 0) {
            *arg = i;
            return 0;
        }
    }
    return -1;
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

static bool ocl_req_eval_device(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const struct result_smoke_dev *first = NULL;
    char label[256];
    if (!result_smoke_get(r)) {
        *detail = str_printf("the smoke test did not run, so no device is proven to compute");
        return false;
    }
    size_t n = result_smoke_passed_devices(r, false, arg == OCL_REQ_FP64 ? result_smoke_fp64_passed : NULL, &first);
    if (n == 0) {
        *detail = str_printf(arg == OCL_REQ_FP64 ? "no device passed the smoke test in fp64"
                                                 : "no OpenCL device passed the smoke test");
        return false;
    }
    *detail = str_printf("%zu device%s passed, e.g. %s", n, n == 1 ? "" : "s",
                         result_smoke_label(first, label, sizeof(label)));
    return true;
}

/* Highest OpenCL version (major*100+minor) of any device, or -1 if none known. */
static int ocl_best_version(const struct report *r, const char **name)
{
    const struct result_opencl *cl = result_opencl_get(r);
    int best = -1;
    for (size_t i = 0; cl && i < cl->n_platforms; i++) {
        for (size_t j = 0; j < cl->platforms[i].n_devs; j++) {
            const struct result_opencl_dev *d = &cl->platforms[i].devs[j];
            const char *v = d->version;
            unsigned maj = 0, min = 0;
            if (v && sscanf(v, "%u.%u", &maj, &min) == 2 && maj < 100 && min < 100 && (int)(maj * 100 + min) > best) {
                best = (int)(maj * 100 + min);
                if (name)
                    *name = d->name;
            }
        }
    }
    return best;
}

static bool ocl_req_eval_version(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const char *dev = NULL;
    int best = ocl_best_version(r, &dev);
    return doctor_req_version(best, arg, 100, "best device supports OpenCL", dev ? dev : "unnamed",
                              "no OpenCL device found", detail);
}

/* Unmet, they are explained by any finding about the GPU stack (a GPU may compute through CUDA too). */
const struct probe_require ocl_requires[] = {
    {"opencl, fp64", NULL, ocl_req_parse_device, ocl_req_eval_device, PROBE_CHAIN_GPU},
    {"opencl-version>=X.Y", NULL, ocl_req_parse_version, ocl_req_eval_version, PROBE_CHAIN_GPU},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_GPU},
};
