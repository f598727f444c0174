/* cuda_verdict.c: the cuda probe's verdict: the cuda12 and cuda13 targets and the CUDA wheel line. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "doctor.h"
#include "doctor_facts.h"
#include "strutil.h"

extern const struct probe probe_cuda;

/* The CUDA wheel series of PyTorch, TensorFlow and JAX, the one table the verdict and --require use.
 * A series runs when the driver supports its CUDA major version (CUDA minor version compatibility: a
 * 12.x runtime runs on any driver that supports 12.0; CUDA Compatibility guide, "Minor Version
 * Compatibility") and the GPU's compute capability is one the toolkit still builds for:
 * - CUDA 12: sm_50 and newer (CUDA 12.0 release notes: Kepler, sm_35/sm_37, removed);
 * - CUDA 13: sm_75 and newer (CUDA 13.0 release notes, "Deprecated Architectures": Maxwell, Pascal
 *   and Volta, sm_50 to sm_72, removed).
 * Frameworks may build their wheels for fewer architectures than the toolkit allows. */
static const struct {
    const char *target; /* verdict target name */
    const char *label;
    int cuda_major;
    int min_cc;         /* major * 10 + minor */
} cuda_series[] = {
    {"cuda12", "CUDA 12", 12, 50},
    {"cuda13", "CUDA 13", 13, 75},
};

/* The CUDA wheel line and the cuda12/cuda13 targets: "CUDA for PyTorch / TensorFlow / JAX wheels
 * (CUDA 12, CUDA 13): ...". */
void cuda_verdict(struct report *r, struct doctor_lines *out)
{
    if (!doctor_data(r, "cuda"))
        return;
    size_t nreasons = 0;
    const char **reasons = doctor_target_reasons(r, &probe_cuda, &nreasons);
    const struct report_finding *root = doctor_target_root(r, &probe_cuda);
    int dv = doctor_cuda_driver_version(r);
    const struct result_cuda *cuda = result_cuda_get(r);
    size_t ndev = cuda ? cuda->n_devs : 0;
    const char *smoke_missing = doctor_cuda_smoke_missing(r);
    char *parts[2] = {NULL, NULL}, *whys[2] = {NULL, NULL};
    bool all_ready = true, any_ready = false;
    char label[256];
    size_t ns = sizeof(cuda_series) / sizeof(cuda_series[0]);
    for (size_t i = 0; i < ns && i < 2; i++) {
        int need = cuda_series[i].cuda_major * 1000;
        const struct result_cuda_dev *dev = NULL;
        size_t n = doctor_cuda_passed(r, cuda_series[i].min_cc, &dev);
        char *why;
        if (dv < 0 || ndev == 0)
            why = root ? str_printf("%s (%s)", root->message, root->id)
                       : str_printf("no CUDA device%s", dv < 0 ? " (no working NVIDIA driver)" : "");
        else if (dv < need)
            why = str_printf("the driver supports CUDA %d.%d only", dv / 1000, (dv % 1000) / 10);
        else if (n > 0)
            why = NULL;
        else {
            int best = -1;
            for (size_t j = 0; j < ndev; j++)
                if (cuda->devs[j].cc > best)
                    best = cuda->devs[j].cc;
            if (best >= 0 && best < cuda_series[i].min_cc)
                why = str_printf("compute capability %d.%d is below the %d.%d this series needs", best / 10, best % 10,
                                 cuda_series[i].min_cc / 10, cuda_series[i].min_cc % 10);
            else if (smoke_missing)
                why = str_printf("not proven: the CUDA smoke test did not run (%s)", smoke_missing);
            else
                why = root ? str_printf("no GPU passed the CUDA smoke test: %s (%s)", root->message, root->id)
                           : str_printf("no GPU passed the CUDA smoke test");
        }
        char *detail = why ? str_printf("not ready: %s", why)
                           : str_printf("ready on %s", doctor_cuda_label(dev, label, sizeof(label)));
        report_set_target(r, cuda_series[i].target, why == NULL, detail, reasons);
        parts[i] = str_printf("%s %s", cuda_series[i].label, why ? detail : "ready");
        all_ready &= why == NULL;
        any_ready |= why == NULL;
        whys[i] = why;
        free(detail);
    }
    free(reasons);
    const struct result_cuda_dev *first = NULL;
    doctor_cuda_passed(r, -1, &first);
    char *line;
    if (dv < 0 && !root)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available (no NVIDIA driver)");
    else if (root && root->severity == REPORT_SEV_INFO && !any_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available: %s (%s)", root->message, root->id);
    else if (all_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): ready on %s (driver CUDA "
                          "%d.%d)",
                          doctor_cuda_label(first, label, sizeof(label)), dv / 1000, (dv % 1000) / 10);
    else if (whys[0] && whys[1] && strcmp(whys[0], whys[1]) == 0)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): not ready: %s", whys[0]);
    else
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: %s; %s", parts[0] ? parts[0] : "",
                          parts[1] ? parts[1] : "");
    for (size_t i = 0; i < 2; i++) {
        free(parts[i]);
        free(whys[i]);
    }
    doctor_lines_add(out, line);
}
