/* cuda_verdict.c: the cuda probe's verdict (the cuda12 and cuda13 targets, the CUDA wheel line) and its node labels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "doctor.h"
#include "doctor_facts.h"
#include "results/result_cuda.h"
#include "jsonget.h"
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

/* Node labels: the CUDA version the driver supports, the NVIDIA driver's version, the devices and their
 * lowest compute capability. */
void cuda_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    json_object *drv = jsonget(sec->data, "driver");
    emit(arg, "cuda", "driver-version", jsonget_str(drv, "cuda_version"));
    const char *kmod = jsonget_str(drv, "kernel_module_version");
    emit(arg, "nvidia", "driver-version", kmod ? kmod : jsonget_str(jsonget(drv, "library"), "version"));
    json_object *devs = jsonget(sec->data, "devices");
    int best_major = -1, best_minor = -1;
    size_t n = 0;
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i), *ma = jsonget(d, "cc_major"), *mi = jsonget(d, "cc_minor");
        n++;
        if (!ma || !mi || !json_object_is_type(ma, json_type_int) || !json_object_is_type(mi, json_type_int))
            continue;
        int a = json_object_get_int(ma), b = json_object_get_int(mi);
        if (a < 0 || b < 0 || a > 999 || b > 999)
            continue;
        if (best_major < 0 || a < best_major || (a == best_major && b < best_minor)) {
            best_major = a;
            best_minor = b;
        }
    }
    char buf[32];
    snprintf(buf, sizeof(buf), "%zu", n);
    emit(arg, "cuda", "device-count", buf);
    if (best_major >= 0) {
        snprintf(buf, sizeof(buf), "%d.%d", best_major, best_minor);
        emit(arg, "cuda", "compute-capability", buf);
        snprintf(buf, sizeof(buf), "%d", best_major);
        emit(arg, "cuda", "compute-capability-major", buf);
    }
    /* cuda.p2p: the NFD writer's, from the typed result's peer check (peer_check.h), for every API alike. */
}

/* The CUDA major of the library at PATH as the cuda section lists it (data.libraries[].cuda_major), or -1. */
static int cuda_lib_major(const struct report *r, const char *path)
{
    json_object *libs = jsonget(doctor_data(r, "cuda"), "libraries");
    for (size_t i = 0; path && libs && json_object_is_type(libs, json_type_array) && i < json_object_array_length(libs); i++) {
        json_object *l = json_object_array_get_idx(libs, i);
        const char *p = jsonget_str(l, "path");
        if (p && strcmp(p, path) == 0)
            return (int)jsonget_int(l, "cuda_major", -1);
    }
    return -1;
}

/* REASONS (N of them) for the series of CUDA MAJOR: a library finding stays when one finding of that ID
 * is about no library of another CUDA major (a CUDA 13 runtime's trouble is no reason of the CUDA 12
 * series). A new array, NULL-terminated; the strings are REASONS'. */
static const char **cuda_series_reasons(const struct report *r, const char **reasons, size_t n, int major)
{
    const char **out = calloc(n + 2, sizeof(*out));
    size_t k = 0;
    for (size_t i = 0; out && i < n; i++) {
        bool keep = false, any = false;
        for (size_t j = 0; j < r->n_findings && !keep; j++) {
            const struct report_finding *f = r->findings[j];
            if (strcmp(f->id, reasons[i]) != 0)
                continue;
            any = true;
            int m = cuda_lib_major(r, f->subject);
            keep = m < 0 || m == major;
        }
        if (keep || !any)
            out[k++] = reasons[i];
    }
    return out;
}

/* The CUDA wheel line and the cuda12/cuda13 targets: "CUDA for PyTorch / TensorFlow / JAX wheels
 * (CUDA 12, CUDA 13): ...". */
void cuda_verdict(struct report *r, struct doctor_lines *out)
{
    if (!doctor_data(r, "cuda"))
        return;
    size_t nreasons = 0;
    const char **reasons = doctor_target_reasons(r, &probe_cuda, &nreasons);
    const struct report_finding *root = doctor_target_root(r, &probe_cuda);
    int dv = result_cuda_driver_version(r);
    const struct result_cuda *cuda = result_cuda_get(r);
    size_t ndev = cuda ? cuda->n_devs : 0;
    const char *smoke_missing = result_cuda_smoke_missing(r);
    char *parts[2] = {NULL, NULL}, *whys[2] = {NULL, NULL};
    bool all_ready = true, any_ready = false;
    char label[256];
    size_t ns = sizeof(cuda_series) / sizeof(cuda_series[0]);
    for (size_t i = 0; i < ns && i < 2; i++) {
        int need = cuda_series[i].cuda_major * 1000;
        const struct result_cuda_dev *dev = NULL;
        size_t n = result_cuda_passed(r, cuda_series[i].min_cc, &dev);
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
                           : str_printf("ready on %s", result_cuda_label(dev, label, sizeof(label)));
        const char **mine = cuda_series_reasons(r, reasons, nreasons, cuda_series[i].cuda_major);
        report_set_target(r, cuda_series[i].target, why == NULL, detail, mine ? mine : reasons);
        free(mine);
        parts[i] = str_printf("%s %s", cuda_series[i].label, why ? detail : "ready");
        all_ready &= why == NULL;
        any_ready |= why == NULL;
        whys[i] = why;
        free(detail);
    }
    free(reasons);
    const struct result_cuda_dev *first = NULL;
    result_cuda_passed(r, -1, &first);
    char *line;
    if (dv < 0 && !root)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available (no NVIDIA driver)");
    else if (root && root->severity == REPORT_SEV_INFO && !any_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available: %s (%s)", root->message, root->id);
    else if (all_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): ready on %s (driver CUDA "
                          "%d.%d)",
                          result_cuda_label(first, label, sizeof(label)), dv / 1000, (dv % 1000) / 10);
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
