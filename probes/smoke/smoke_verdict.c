/* smoke_verdict.c: the OpenCL verdict (the smoke test proves OpenCL): the opencl target and the two OpenCL lines. */
#include <stdlib.h>

#include "compute_path.h"
#include "doctor.h"
#include "doctor_facts.h"
#include "results/result_opencl.h"
#include "results/result_smoke.h"
#include "strutil.h"

extern const struct probe probe_smoke;

/* What the OpenCL lines say when --health loaded no OpenCL driver (result_opencl's none_loaded). */
#define SMOKE_NOT_CHECKED "not checked: only CPU drivers and drivers for absent hardware are installed (--health)"

/* "GPU compute (OpenCL): ..." and "OpenCL: ...", and the opencl target, where OpenCL was looked at (the
 * smoke test ran, or the opencl probe it builds on did). Reasons come from OpenCL's path and the layers
 * below every API (doctor_target_reasons): never another API's findings. */
void smoke_verdict(struct report *r, struct doctor_lines *out)
{
    bool smoke_ran = doctor_data(r, "smoke") != NULL;
    if (!smoke_ran && !result_opencl_get(r))
        return;
    char label[256];
    size_t nocl = 0;
    const char **reasons = doctor_target_reasons(r, &probe_smoke, &nocl);
    const struct report_finding *root = doctor_target_root(r, &probe_smoke);
    struct compute_paths ps = compute_paths_of(r);
    size_t any_gpu = compute_paths_gpus(&ps, COMPUTE_PASSED, NULL); /* through any API */
    compute_paths_free(&ps);
    const struct result_smoke_dev *gpu = NULL, *any = NULL;
    size_t ngpu = 0, nany = 0;
    if (smoke_ran) {
        ngpu = result_smoke_passed_devices(r, true, NULL, &gpu);
        nany = result_smoke_passed_devices(r, false, NULL, &any);
    }
    char *why = root ? str_printf("%s (%s)", root->message, root->id) : str_printf("no GPU passed the smoke test");
    bool nothing = smoke_ran && nany == 0 && any_gpu == 0 && (!root || root->severity == REPORT_SEV_INFO);
    /* --health loaded no OpenCL driver (only CPU drivers and drivers for absent hardware): nothing was checked,
     * which is information, never a reason for not ready */
    const struct result_opencl *ocl = result_opencl_get(r);
    bool unchecked = ocl && ocl->none_loaded && nany == 0 && any_gpu == 0 && (!root || root->severity == REPORT_SEV_INFO);
    if (unchecked) {
        doctor_lines_add(out, str_printf("OpenCL: " SMOKE_NOT_CHECKED));
        out->gpu_missing = smoke_ran; /* as before: a compute test ran and no GPU passed one */
        nothing = true;                /* the one line */
    } else if (nothing) {
        /* No OpenCL device at all and nothing wrong: one line says so, not a GPU line and an OpenCL line
         * that say nearly the same */
        doctor_lines_add(out, str_printf("OpenCL: not available: %s", why));
        out->gpu_missing = true;
    } else if (!smoke_ran) {
        if (any_gpu == 0)
            doctor_lines_add(out, str_printf("GPU compute (OpenCL): not tested (the smoke test did not run)"));
    } else if (ngpu > 0) {
        doctor_lines_add(out, str_printf("GPU compute (OpenCL): ready on %s%s",
                                         result_smoke_label(gpu, label, sizeof(label)), ngpu > 1 ? " and more" : ""));
    } else if (any_gpu > 0) {
        /* No GPU computes through OpenCL, but one does through another API: the gpu target is ready */
        doctor_lines_add(out, str_printf("GPU compute (OpenCL): not available: %s", why));
    } else {
        doctor_lines_add(out, str_printf("GPU compute (OpenCL): %s: %s",
                                         root && root->severity == REPORT_SEV_INFO ? "not available" : "not ready",
                                         why));
        out->gpu_missing = true;
    }
    free(why);
    if (smoke_ran) {
        char *detail = nany > 0  ? str_printf("ready on %zu device%s, e.g. %s", nany, nany == 1 ? "" : "s",
                                              result_smoke_label(any, label, sizeof(label)))
                       : unchecked ? str_printf(SMOKE_NOT_CHECKED)
                                   : str_printf("no OpenCL device passed the smoke test");
        report_set_target(r, "opencl", nany > 0, detail, reasons);
        if (!nothing)
            doctor_lines_add(out, str_printf("OpenCL: %s", detail));
        free(detail);
    }
    free(reasons);
}
