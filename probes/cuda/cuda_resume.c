/* cuda_resume.c: cuInit 999 or NVML's "Unknown Error" after a suspend/resume: nvidia_uvm's lost state (issue 40). */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* NVIDIA's driver README, "Configuring Power Management Support": without
 * NVreg_PreserveVideoMemoryAllocations=1 and nvidia-suspend/nvidia-resume.service, video memory and the
 * unified-memory module's state do not survive a suspend; CUDA then fails to initialise with
 * CUDA_ERROR_UNKNOWN (999) and NVML with "Unknown Error" until nvidia_uvm is reloaded (the NVIDIA developer
 * forums' "CUDA fails after suspend" threads). The machine's layer, below CUDA: it causes the init failure. */
const struct check cuda_resume_checks[] = {
    {"cuda.uvm-lost-after-resume", REPORT_SEV_ERROR,
     "CUDA cannot start since the machine resumed from suspend: nvidia_uvm lost its state",
     "Reload the unified-memory module with no CUDA program running: `sudo rmmod nvidia_uvm && sudo modprobe "
     "nvidia_uvm` (or reboot). To keep it from recurring, enable NVIDIA's suspend services (`sudo systemctl enable "
     "nvidia-suspend.service nvidia-resume.service nvidia-hibernate.service`) with the module option "
     "`NVreg_PreserveVideoMemoryAllocations=1` (in /etc/modprobe.d/, then update the initramfs and reboot).",
     CHECK_LAYER_KERNEL},
};
const size_t cuda_resume_n_checks = sizeof(cuda_resume_checks) / sizeof(cuda_resume_checks[0]);

/* How many suspends succeeded since boot (/sys/power/suspend_stats/success, the kernel's
 * Documentation/ABI/testing/sysfs-power), or -1 when unknown. */
static int64_t cuda_resume_count(const struct probe_ctx *ctx)
{
    uint64_t n = 0;
    if (hostfs_read_u64(ctx->fs, "/sys/power/suspend_stats/success", &n) != 0)
        return -1;
    return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

struct report_finding *cuda_resume_explain(struct probe_ctx *ctx, struct report_finding *f, const char *what)
{
    if (!f)
        return NULL;
    int64_t n = cuda_resume_count(ctx);
    if (n <= 0)
        return f;
    struct report_finding *c = report_find_finding(ctx->report, "cuda.uvm-lost-after-resume", "nvidia_uvm");
    if (!c) {
        c = report_add_finding(ctx->report, "cuda.uvm-lost-after-resume", "nvidia_uvm",
                               "%s on a machine that has resumed from suspend %lld time%s since boot: the known loss of "
                               "nvidia_uvm's state across a suspend",
                               what, (long long)n, n == 1 ? "" : "s");
        if (!c)
            return f;
        report_finding_add_evidence(c, "/sys/power/suspend_stats/success", "%lld", (long long)n);
        /* Whether the driver was told to keep video memory across a suspend (/proc/driver/nvidia/params):
         * then NVIDIA's suspend services were meant to be in use, and the evidence says so. */
        char *params = NULL;
        if (hostfs_read_file(ctx->fs, "/proc/driver/nvidia/params", 0, &params, NULL) == 0) {
            const char *k = strstr(params, "PreserveVideoMemoryAllocations:");
            if (k) {
                int v = atoi(k + strlen("PreserveVideoMemoryAllocations:"));
                report_finding_add_evidence(c, "/proc/driver/nvidia/params", "PreserveVideoMemoryAllocations: %d%s", v,
                                            v ? " (set: check that nvidia-suspend.service and nvidia-resume.service "
                                                "are enabled and ran)" : " (not set)");
            }
            free(params);
        }
    } else {
        report_finding_add_evidence(c, "also", "%s", what);
    }
    report_finding_set_cause(f, "cuda.uvm-lost-after-resume", "nvidia_uvm");
    return f;
}
