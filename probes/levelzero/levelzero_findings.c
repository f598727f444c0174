/* levelzero_findings.c: the levelzero probe's findings: zeInit's failures named by the file checks' cause. */
#include <stdlib.h>
#include <string.h>

#include "devnode.h"
#include "jsonget.h"
#include "levelzero_internal.h"
#include "strutil.h"

const struct check levelzero_checks[] = {
    {"levelzero.no-device", REPORT_SEV_INFO, "A Level Zero loader is installed, but this machine has no Intel GPU for it",
     "Nothing to fix unless you expected an Intel GPU here.", CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE | CHECK_F_NEVER_CAUSE},
    {"levelzero.no-loader", REPORT_SEV_INFO, "An Intel GPU is here, but no Level Zero loader (libze_loader.so.1) is installed",
     "oneAPI, SYCL and PyTorch XPU need it: install libze1 (Debian, Ubuntu) or Intel's level-zero package. OpenCL "
     "does not need it.", CHECK_LAYER_LOADER | CHECK_F_NEVER_CAUSE},
    {"levelzero.no-backend", REPORT_SEV_WARNING, "The Level Zero loader is installed, but no Intel GPU backend (libze_intel_gpu.so.1)",
     "zeInit fails with ZE_RESULT_ERROR_UNINITIALIZED without one: install Intel's compute runtime "
     "(intel-level-zero-gpu, or Debian's intel-opencl-icd, which ships it).", CHECK_LAYER_DRIVER},
    {"levelzero.gpu-not-bound", REPORT_SEV_WARNING, "An Intel GPU is bound to neither i915 nor xe, so Level Zero cannot reach it",
     "Load i915 (or xe for newer GPUs); a GPU reserved with vfio-pci is for a VM.", CHECK_LAYER_KERNEL},
    /* GuC: i915 uses GuC submission by default from Alder Lake-P on, and DG2 and Meteor Lake have no other
     * submission at all (GuC firmware is a hard requirement there: Phoronix, "Intel Meteor Lake GuC Firmware
     * Support Published", May 2023); on older GPUs it only authenticates HuC, hence warnings. */
    {"levelzero.guc-firmware-missing", REPORT_SEV_WARNING,
     "An Intel GPU's kernel driver asked for GuC firmware that is not installed, so the GPU runs without GuC",
     "Install the firmware (Debian: firmware-misc-nonfree; elsewhere linux-firmware), update the initramfs "
     "(update-initramfs -u) and reboot. Level Zero needs GuC submission on DG2/Arc, Meteor Lake and later GPUs.",
     CHECK_LAYER_KERNEL},
    {"levelzero.guc-not-running", REPORT_SEV_WARNING, "An Intel GPU's GuC firmware is installed, but the kernel did not get it running",
     "MISSING with the file present: the initramfs lacks it (update-initramfs -u, reboot); ERROR: a file too old for "
     "the kernel (update the firmware package); LOAD FAIL or INIT FAIL: see dmesg for i915 or xe, then update the "
     "kernel and firmware together.", CHECK_LAYER_KERNEL},
    {"levelzero.node-open-failed", REPORT_SEV_ERROR, "An Intel GPU's render node cannot be opened read-write",
     "EACCES: add the user to the node's group (usually render) and log in again; in a container pass --device /dev/dri.",
     CHECK_LAYER_KERNEL | CHECK_F_PATH_RELIEF_VENDOR},
    {"levelzero.init-failed", REPORT_SEV_ERROR, "zeInit fails on this machine's Intel GPU",
     "ZE_RESULT_ERROR_UNINITIALIZED means no backend took a device: the finding names the cause the file checks found.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"levelzero.runtime-crashed", REPORT_SEV_ERROR, "The Level Zero loader or a backend crashed or hung in zeInit",
     "Reinstall the loader and Intel's compute runtime of matching releases.", CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"levelzero.no-gpu-device", REPORT_SEV_ERROR, "zeInit succeeds, but no Level Zero driver lists an Intel GPU",
     "The compute runtime may be older than the GPU: update intel-level-zero-gpu / intel-opencl-icd.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"levelzero.opencl-only", REPORT_SEV_WARNING, "Intel's OpenCL driver lists an Intel GPU, but Level Zero does not",
     "The Level Zero loader is missing or older than the compute runtime: install or update libze1 / level-zero.",
     CHECK_LAYER_LOADER},
};
const size_t levelzero_n_checks = sizeof(levelzero_checks) / sizeof(levelzero_checks[0]);

/* Does Intel's OpenCL platform list an Intel GPU device (the opencl section's data)? */
static bool levelzero_opencl_intel_gpu(const struct result_opencl *cl)
{
    for (size_t i = 0; cl && i < cl->n_platforms; i++) {
        const struct result_opencl_platform *p = &cl->platforms[i];
        if (!p->name || !strstr(p->name, "Intel"))
            continue;
        for (size_t j = 0; j < p->n_devs; j++)
            if (p->devs[j].gpu)
                return true;
    }
    return false;
}

/* Level Zero GPU devices the child listed. */
static size_t levelzero_gpu_devices(json_object *rt)
{
    size_t n = 0;
    json_object *drvs = jsonget(rt, "drivers");
    for (size_t i = 0; drvs && i < json_object_array_length(drvs); i++) {
        json_object *devs = jsonget(json_object_array_get_idx(drvs, i), "devices");
        for (size_t j = 0; devs && j < json_object_array_length(devs); j++) {
            const char *t = jsonget_str(json_object_array_get_idx(devs, j), "type");
            n += t && strcmp(t, "gpu") == 0;
        }
    }
    return n;
}

/* The first GPU whose debugfs guc_info reports a GuC firmware that failed: its finding (ID and SUBJECT,
 * borrowed from GPUS), and the cause as words (heap); NULL when none did. */
static char *levelzero_guc_cause(struct probe_ctx *ctx, json_object *gpus, const char **id, const char **subject)
{
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        json_object *g = json_object_array_get_idx(gpus, i), *guc = jsonget(g, "guc");
        const char *st = jsonget_str(guc, "status"), *fw = jsonget_str(guc, "firmware"), *file = jsonget_str(guc, "file");
        const char *addr = jsonget_str(g, "pci_address"), *drv = jsonget_str(g, "driver");
        if (!st || !fw || !addr || !levelzero_guc_failed(st))
            continue;
        *id = file ? "levelzero.guc-not-running" : "levelzero.guc-firmware-missing";
        *subject = addr;
        struct report_finding *f =
            file ? report_add_finding(ctx->report, *id, addr, "%s: %s reports the GuC firmware %s as %s, though %s is installed", addr,
                                      drv ? drv : "the kernel", fw, st, file)
                 : report_add_finding(ctx->report, *id, addr, "%s: %s asked for the GuC firmware %s (status %s), which is not "
                                      "installed under /lib/firmware", addr, drv ? drv : "the kernel", fw, st);
        if (f)
            report_finding_add_evidence(f, jsonget_str(guc, "debugfs"), "status: %s", st);
        return file ? str_printf("%s's GuC firmware %s is %s", addr, fw, st)
                    : str_printf("%s's GuC firmware %s is not installed", addr, fw);
    }
    return NULL;
}

/* The first file-side cause of a failed zeInit, as words (heap), or NULL: the checks below run first so
 * that ZE_RESULT_ERROR_UNINITIALIZED is explained by what it stands for. */
static char *levelzero_cause(struct probe_ctx *ctx, json_object *data, bool *reported, const char **cause_id,
                             const char **cause_subject)
{
    json_object *gpus = jsonget(data, "gpus"), *libs = jsonget(data, "libraries"), *nodes = jsonget(data, "device_nodes");
    *reported = true;
    if (!jsonget_str(libs, "intel_gpu") && !jsonget_str(libs, "intel_gpu_legacy")) {
        report_add_finding(ctx->report, "levelzero.no-backend", jsonget_str(libs, "loader"),
                           "%s is installed, but neither libze_intel_gpu.so.1 nor libze_intel_gpu_legacy1.so.1: no backend for the "
                           "Intel GPU", jsonget_str(libs, "loader") ? jsonget_str(libs, "loader") : "libze_loader.so.1");
        return str_dup("no Intel GPU backend is installed");
    }
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        json_object *g = json_object_array_get_idx(gpus, i);
        const char *drv = jsonget_str(g, "driver"), *addr = jsonget_str(g, "pci_address");
        if (!drv || (strcmp(drv, "i915") != 0 && strcmp(drv, "xe") != 0)) {
            report_add_finding(ctx->report, "levelzero.gpu-not-bound", addr, "%s %s is bound to %s, not i915 or xe", addr ? addr : "?",
                               jsonget_str(g, "name") ? jsonget_str(g, "name") : "", drv ? drv : "no driver");
            return str_printf("%s is bound to %s", addr ? addr : "the GPU", drv ? drv : "no driver");
        }
    }
    char *guc = levelzero_guc_cause(ctx, gpus, cause_id, cause_subject);
    if (guc) {
        *reported = false; /* zeInit's own finding is still reported, as this one's consequence */
        return guc;
    }
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *o = json_object_array_get_idx(nodes, i);
        char *why = devnode_why(o);
        if (!why)
            continue;
        const char *path = jsonget_str(o, "path");
        if (!report_find_finding(ctx->report, "dev.no-access", path) && !report_find_finding(ctx->report, "dev.missing-node", path))
            report_add_finding(ctx->report, "levelzero.node-open-failed", path, "%s cannot be opened read-write: %s", path, why);
        char *s = str_printf("%s: %s", path, why);
        free(why);
        return s;
    }
    *reported = false;
    return NULL;
}

void levelzero_findings(struct probe_ctx *ctx, json_object *data, const struct result_pci *pci_devs,
                        const struct result_opencl *opencl)
{
    json_object *gpus = jsonget(data, "gpus"), *rt = jsonget(data, "runtime"), *libs = jsonget(data, "libraries");
    const char *st = jsonget_str(rt, "status"), *loader = jsonget_str(libs, "loader");
    if (!loader)
        loader = jsonget_str(rt, "loader");
    size_t ng = json_object_array_length(gpus);
    if (ng == 0) {
        /* Not loaded where Intel's hardware is absent (levelzero.c): what dlopen would miss is named from the files. */
        bool not_loaded = st && strcmp(st, "not-loaded") == 0;
        const char *miss = not_loaded ? jsonget_str(rt, "missing_needed") : NULL;
        char *nl = !not_loaded ? str_dup("") : miss ? str_printf(" (not loaded; it could not be, not found: %s)", miss)
                                                    : str_dup(" (not loaded)");
        if (pci_devs && (loader || (st && strcmp(st, "no-loader") != 0)))
            report_add_finding(ctx->report, "levelzero.no-device", loader ? loader : "libze_loader.so.1",
                               "A Level Zero loader without its hardware: %s is installed, but there is no Intel GPU on the PCI bus%s%s",
                               loader ? loader : "libze_loader.so.1",
                               st && strcmp(st, "init-failed") == 0 ? " (so zeInit fails, as it must)" : "", nl ? nl : "");
        free(nl);
        return;
    }
    bool no_loader = st ? strcmp(st, "no-loader") == 0 : !loader;
    bool cl_gpu = levelzero_opencl_intel_gpu(opencl);
    if (no_loader) {
        if (cl_gpu)
            report_add_finding(ctx->report, "levelzero.opencl-only", "libze_loader.so.1",
                               "Intel's OpenCL driver lists the Intel GPU, but no Level Zero loader (libze_loader.so.1) is installed");
        else
            report_add_finding(ctx->report, "levelzero.no-loader", "libze_loader.so.1", "no Level Zero loader: libze_loader.so.1 is not found");
        return;
    }
    bool reported = false;
    const char *cause_id = NULL, *cause_subject = NULL;
    char *cause = levelzero_cause(ctx, data, &reported, &cause_id, &cause_subject);
    struct report_finding *f = NULL;
    if (!st) {
        free(cause);
        return; /* not run: not the live machine */
    }
    if (strcmp(st, "crash") == 0 || strcmp(st, "timeout") == 0 || strcmp(st, "failed") == 0) {
        report_add_finding(ctx->report, "levelzero.runtime-crashed", loader, "the Level Zero child %s in %s: %s",
                           strcmp(st, "timeout") == 0 ? "hung" : "failed", jsonget_str(rt, "where") ? jsonget_str(rt, "where") : "loading",
                           jsonget_str(rt, "detail") ? jsonget_str(rt, "detail") : st);
    } else if (strcmp(st, "init-failed") == 0 && !reported) {
        json_object *init = jsonget(rt, "init");
        bool drivers = jsonget_str(rt, "init_call") && strcmp(jsonget_str(rt, "init_call"), "zeInitDrivers") == 0;
        f = report_add_finding(ctx->report, "levelzero.init-failed", loader, "%s: %s (0x%llx)%s%s",
                               drivers ? "zeInitDrivers(GPU)" : "zeInit(0)", jsonget_str(init, "name") ? jsonget_str(init, "name") : "error",
                               (unsigned long long)jsonget_int(init, "code", -1), cause ? ": " : "", cause ? cause : "");
    } else if (strcmp(st, "ok") == 0 && levelzero_gpu_devices(rt) == 0 && !reported) {
        f = report_add_finding(ctx->report, cl_gpu ? "levelzero.opencl-only" : "levelzero.no-gpu-device", loader,
                               "zeInit succeeds, but no Level Zero driver lists one of the %zu Intel GPU%s%s%s%s", ng, ng == 1 ? "" : "s",
                               cl_gpu ? " that Intel's OpenCL driver lists" : "", cause ? ": " : "", cause ? cause : "");
    }
    if (f && cause_id)
        report_finding_set_cause(f, cause_id, cause_subject);
    free(cause);
}
