/* cuda_require.c: the cuda probe's --require names: cuda, cuda>=X.Y, compute-capability>=X.Y. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "doctor_facts.h"
#include "results/result_cuda.h"
#include "strutil.h"

static int cuda_req_parse_cuda(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "cuda") == 0 ? 0 : -1;
}

/* X or X.Y after PREFIX, digits only (at most two for X, one for Y): *MAJ, *MIN. */
static int cuda_req_parse_version(const char *name, const char *prefix, unsigned *maj, unsigned *min)
{
    if (!str_starts_with(name, prefix))
        return -1;
    const char *v = name + strlen(prefix);
    int used = 0;
    *maj = 0;
    *min = 0;
    if (!isdigit((unsigned char)v[0]) || sscanf(v, "%2u%n", maj, &used) != 1)
        return -1;
    if (v[used] == '.') {
        int used2 = 0;
        if (!isdigit((unsigned char)v[used + 1]) || sscanf(v + used + 1, "%1u%n", min, &used2) != 1)
            return -1;
        used += 1 + used2;
    }
    return v[used] == '\0' && *maj >= 1 ? 0 : -1;
}

/* CUDA 12.4 -> 12040 (cuDriverGetVersion's encoding). */
static int cuda_req_parse_cudaver(const char *name, int *arg)
{
    unsigned maj, min;
    if (cuda_req_parse_version(name, "cuda>=", &maj, &min) < 0)
        return -1;
    *arg = (int)(maj * 1000 + min * 10);
    return 0;
}

/* CC 8.6 -> 86. */
static int cuda_req_parse_cc(const char *name, int *arg)
{
    unsigned maj, min;
    if (cuda_req_parse_version(name, "compute-capability>=", &maj, &min) < 0)
        return -1;
    *arg = (int)(maj * 10 + min);
    return 0;
}

static bool cuda_req_eval_cuda(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    const struct result_cuda_dev *first = NULL;
    char label[256];
    if (!doctor_data(r, "cuda")) {
        *detail = str_printf("the cuda probe did not run");
        return false;
    }
    size_t n = result_cuda_passed(r, -1, &first);
    if (n == 0) {
        const char *why = result_cuda_smoke_missing(r);
        *detail = why ? str_printf("no CUDA device is proven to compute: the CUDA smoke test did not run (%s)", why)
                      : str_printf("no CUDA device passed the CUDA smoke test");
        return false;
    }
    *detail = str_printf("%zu CUDA device%s passed, e.g. %s", n, n == 1 ? "" : "s",
                         result_cuda_label(first, label, sizeof(label)));
    return true;
}

/* cuda>=X.Y: the driver's CUDA version is at least X.Y *and* CUDA can run here. cuDriverGetVersion
 * answers before cuInit and without a GPU (libcuda 535 says 12020 with no module loaded), so the version
 * alone would let a CI gate pass where no CUDA program can run: the requirement also needs cuInit to
 * have succeeded, a device, and (where the CUDA smoke test ran) a device that passed it. */
static bool cuda_req_eval_cudaver(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    int v = result_cuda_driver_version(r);
    if (v < 0) {
        *detail = str_printf("the CUDA version of the NVIDIA driver is unknown (no working libcuda)");
        return false;
    }
    char have[96];
    snprintf(have, sizeof(have), "the NVIDIA driver supports CUDA %d.%d, %d.%d needed", v / 1000, (v % 1000) / 10,
             arg / 1000, (arg % 1000) / 10);
    if (v < arg) {
        *detail = str_printf("%s", have);
        return false;
    }
    const struct result_cuda *cuda = result_cuda_get(r);
    if (!cuda || cuda->driver_status != RESULT_CUDA_DRV_OK) {
        *detail = str_printf("%s, but the driver did not initialise (cuInit failed): no CUDA program can run", have);
        return false;
    }
    if (cuda->n_devs == 0) {
        *detail = str_printf("%s, but there is no CUDA device", have);
        return false;
    }
    const struct result_cuda_dev *first = NULL;
    char label[256];
    size_t n = result_cuda_passed(r, -1, &first);
    const char *missing = result_cuda_smoke_missing(r);
    if (n == 0 && !missing) {
        *detail = str_printf("%s, but no CUDA device passed the CUDA smoke test", have);
        return false;
    }
    if (n > 0)
        *detail = str_printf("%s; %s computes", have, result_cuda_label(first, label, sizeof(label)));
    else
        *detail = str_printf("%s; %zu CUDA device%s (the CUDA smoke test did not run: %s)", have, cuda->n_devs,
                             cuda->n_devs == 1 ? "" : "s", missing);
    return true;
}

static bool cuda_req_eval_cc(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const struct result_cuda *cuda = result_cuda_get(r);
    const struct result_cuda_dev *first = NULL;
    char label[256];
    int best = -1;
    for (size_t i = 0; cuda && i < cuda->n_devs; i++) {
        if (cuda->devs[i].cc > best) {
            best = cuda->devs[i].cc;
            first = &cuda->devs[i];
        }
    }
    return doctor_req_version(best, arg, 10, "best CUDA device has compute capability",
                              first ? result_cuda_label(first, label, sizeof(label)) : "",
                              "no CUDA device with a known compute capability", detail);
}

/* Unmet, they are explained by the CUDA stack's findings and those of the hardware and kernel below it. */
const struct probe_require cuda_requires[] = {
    {"cuda", NULL, cuda_req_parse_cuda, cuda_req_eval_cuda, PROBE_CHAIN_STACK},
    {"cuda>=X.Y", NULL, cuda_req_parse_cudaver, cuda_req_eval_cudaver, PROBE_CHAIN_STACK},
    {"compute-capability>=X.Y", NULL, cuda_req_parse_cc, cuda_req_eval_cc, PROBE_CHAIN_STACK},
    {"free-memory>=NGiB", NULL, cuda_mem_req_parse, cuda_mem_req_eval, PROBE_CHAIN_OWN},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};
