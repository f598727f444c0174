/* health.c: the health probe: the GPU's health since boot as the kernel wrote it (its log, the PCIe AER counters), for each GPU of the pci section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "results/result_pci.h"

const struct check health_checks[] = {
    {"health.gpu-error", REPORT_SEV_ERROR, "The kernel log names a recent or repeated hardware error of a GPU",
     "The GPU's hardware or its bus failed (an Xid of the GPU's or the system's, such as 48 or 79, or a GPU fallen off "
     "the bus) recently or repeatedly: drain the node, reset the GPU or reboot, and check power, cooling and the slot; "
     "service the GPU if it recurs.", CHECK_LAYER_HARDWARE},
    {"health.gpu-error-past", REPORT_SEV_WARNING, "The kernel log names an earlier hardware error of a GPU",
     "A hardware or bus error of the GPU happened earlier in this boot (more than an hour ago, once or twice, or before the "
     "driver was loaded again): watch for it to recur; reset the GPU or reboot when it is convenient.",
     CHECK_LAYER_HARDWARE | CHECK_F_NEVER_CAUSE},
    {"health.xid-application", REPORT_SEV_INFO, "The NVIDIA driver logged an application's error (Xid)",
     "Xids such as 13, 31, 43 and 45 are usually a program's own fault (a bad address, a killed process): nothing to fix "
     "on the GPU unless they follow every program.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"health.driver-error", REPORT_SEV_WARNING, "The kernel log names a recent or repeated GPU driver error",
     "The GPU driver failed (a driver Xid, RmInitAdapter failed, an API mismatch between the library and the kernel "
     "module): update or reinstall the driver so that its library and module match, then reload it or reboot.",
     CHECK_LAYER_KERNEL},
    {"health.gpu-hang", REPORT_SEV_WARNING, "The kernel log shows recent or repeated GPU hangs or resets",
     "A GPU hung and was reset (amdgpu ring timeouts, i915/xe GPU HANG): the program that hung it may be at fault; if it "
     "repeats across programs, update the kernel and firmware, then check the GPU.", CHECK_LAYER_KERNEL},
    {"health.gpu-event-past", REPORT_SEV_INFO, "The kernel log names an earlier GPU event, not recent",
     "Nothing to do unless it recurs: it happened more than an hour ago, once or twice, or before the driver was loaded "
     "again.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"health.firmware-load-failed", REPORT_SEV_WARNING, "A GPU's firmware failed to load",
     "Install the firmware files the driver asked for (Debian: firmware-amd-graphics, firmware-misc-nonfree, "
     "linux-firmware) and rebuild the initramfs, then reboot.", CHECK_LAYER_KERNEL},
    {"health.kfd-unsupported", REPORT_SEV_WARNING, "amdkfd does not support this AMD GPU: no ROCm compute on it",
     "The kernel's amdkfd rejected the GPU (too old a kernel for it, or PCIe atomics missing): update the kernel, or use "
     "a GPU and slot ROCm supports.", CHECK_LAYER_KERNEL},
    {"health.pcie-fatal", REPORT_SEV_ERROR, "A GPU had a fatal PCIe error",
     "The GPU's PCIe link had an uncorrectable fatal error this boot: the device may have been reset or lost. Reseat the "
     "GPU and its riser, check power, and service it if it recurs.", CHECK_LAYER_HARDWARE},
    {"health.pcie-uncorrected", REPORT_SEV_WARNING, "A GPU or a bridge above it had uncorrectable PCIe errors",
     "Uncorrectable PCIe errors on the GPU or on a bridge between it and the CPU: check the slot, riser, cabling and "
     "firmware of the switch; watch whether they recur.", CHECK_LAYER_HARDWARE},
    {"health.pcie-uncorrected-past", REPORT_SEV_INFO,
     "A GPU or a bridge above it had a non-fatal uncorrectable PCIe error earlier this boot, neither recent nor repeated",
     "A non-fatal error is one failed transaction on a link that stays up (the kernel's PCIe AER HOWTO); once or twice, "
     "over an hour ago, it is history, not a fault of the machine now. Nothing to do unless it recurs.",
     CHECK_LAYER_HARDWARE | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"health.pcie-corrected", REPORT_SEV_INFO, "A GPU or a bridge above it corrected many PCIe errors",
     "Many corrected PCIe errors (100 or more this boot) point at a marginal link: compare the link's speed and width "
     "with its maximum, reseat the card if it is degraded.", CHECK_LAYER_HARDWARE | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
};
const size_t health_n_checks = sizeof(health_checks) / sizeof(health_checks[0]);

/* The bridges above ADDR, nearest first, from its sysfs link ("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"). */
static void health_bridges(struct probe_ctx *ctx, struct health_gpu *g)
{
    char *path = str_printf("/sys/bus/pci/devices/%s", g->addr), *link = NULL;
    if (path && hostfs_readlink(ctx->fs, path, &link) == 0) {
        char *save = NULL, *parts[64];
        size_t n = 0;
        for (char *t = strtok_r(link, "/", &save); t && n < 64; t = strtok_r(NULL, "/", &save))
            if (strlen(t) == 12 && t[4] == ':' && t[7] == ':' && t[10] == '.')
                parts[n++] = t;
        for (size_t i = n; i-- > 0 && g->n_bridges < HEALTH_MAX_BRIDGES;)
            if (strcmp(parts[i], g->addr) != 0)
                snprintf(g->bridges[g->n_bridges++], sizeof(g->bridges[0]), "%.12s", parts[i]);
    }
    free(link);
    free(path);
}

/* The compute GPUs and accelerators of the pci section, into GPUS (at most HEALTH_MAX_GPUS); their count. */
static size_t health_gpus(struct probe_ctx *ctx, struct health_gpu *gpus)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    size_t n = 0;
    for (size_t i = 0; pci && i < pci->n_devs && n < HEALTH_MAX_GPUS; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        const char *addr = d->address;
        if (!addr || strlen(addr) != 12 || !result_pci_dev_computes(d))
            continue;
        struct health_gpu *g = &gpus[n++];
        memset(g, 0, sizeof(*g));
        snprintf(g->addr, sizeof(g->addr), "%s", addr);
        snprintf(g->name, sizeof(g->name), "%s", d->device_name ? d->device_name : "");
        snprintf(g->vendor, sizeof(g->vendor), "%s", d->vendor_id ? d->vendor_id : "");
        g->link = d->link;
        health_bridges(ctx, g);
    }
    return n;
}

static int health_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct health_gpu *gpus = calloc(HEALTH_MAX_GPUS, sizeof(*gpus));
    struct health_log *log = calloc(1, sizeof(*log));
    if (!gpus || !log) {
        free(gpus);
        free(log);
        ctx->error = str_dup("out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    size_t n = health_gpus(ctx, gpus);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *g = json_object_new_object(), *br = json_object_new_array();
        json_object_object_add(g, "pci_address", json_object_new_string(gpus[i].addr));
        json_object_object_add(g, "name", jsonstr_or_null(gpus[i].name[0] ? gpus[i].name : NULL));
        for (size_t b = 0; b < gpus[i].n_bridges; b++)
            json_object_array_add(br, json_object_new_string(gpus[i].bridges[b]));
        json_object_object_add(g, "bridges", br);
        json_object_object_add(g, "events", json_object_new_array());
        json_object_array_add(arr, g);
    }
    json_object_object_add(sec->data, "gpus", arr);
    health_log_read(ctx, log); /* first: it dates the AER counters' non-fatal errors */
    health_aer_report(ctx, sec, log, gpus, n, arr);
    health_log_report(ctx, sec, log, gpus, n, arr);
    health_hwmon_report(ctx, sec, gpus, n, arr);
    health_holders_report(ctx, sec, n);
    health_metrics_report(sec);
    free(log->reason);
    free(log);
    free(gpus);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

static const char *const health_deps[] = {"pci", NULL};

static const struct check_set health_check_sets[] = {
    {health_hwmon_checks, &health_hwmon_n_checks},
    {health_holders_checks, &health_holders_n_checks},
    {NULL, NULL},
};

const struct probe probe_health = {
    .name = "health",
    .stack = PROBE_STACK_KERNEL,
    .title = "the GPUs' health since boot as the kernel wrote it: NVIDIA Xids, amdgpu,\n"
             "i915 and xe hangs, resets and firmware failures, PCIe AER errors (the kernel\n"
             "log, read as root; the AER counters of each GPU and the bridges above it)",
    .deps = health_deps,
    .checks = health_checks,
    .n_checks = sizeof(health_checks) / sizeof(health_checks[0]),
    .check_sets = health_check_sets,
    .run = health_run,
};
