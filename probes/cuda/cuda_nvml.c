/* cuda_nvml.c: the cuda probe's NVML findings: DCGM's level-1 deployment checks on what the NVML child found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "jsonget.h"
#include "results/result_cuda.h"
#include "libarch.h"
#include "jsonstr.h"
#include "nvml_api.h"
#include "strutil.h"
#include "results/result_pci.h"

/* ---- the catalogue -------------------------------------------------------------------------------
 * The rules follow the software plugin of NVIDIA's DCGM level-1 diagnostic (NVIDIA/DCGM,
 * nvvs/src/Software.cpp, Software::Go: denylist, libraries_nvml, libraries_cuda, libraries_cudatk,
 * permissions, persistence_mode, env_variables, page_retirement, inforom, gpu_recovery_state), each row
 * saying where its rule comes from. Not here: the nouveau denylist (pci.nouveau-bound, probes/pci/pci.c), the
 * CUDA main library and toolkit libraries (the driver-API and library parts of this probe), fabric manager
 * (CUDA_ERROR_SYSTEM_NOT_READY 802 in the driver-API part). Left out on purpose: graphics_processes (DCGM
 * warns about any graphics process, which is every desktop with a display: a false alarm here),
 * sram_threshold and memory_health (DCGM fields without an NVML call we could read reliably across drivers). */
const struct check cuda_nvml_checks[] = {
    /* DCGM libraries_nvml (Software::checkLibraries CHECK_NVML) fails when libnvidia-ml.so.1 cannot be
     * loaded; we warn only where an NVIDIA GPU is bound to nvidia (no GPU: nothing to monitor). */
    {"cuda.nvml-missing", REPORT_SEV_WARNING,
     "libnvidia-ml.so.1 (NVML) cannot be loaded although an NVIDIA GPU is bound to the nvidia driver",
     "Install the NVML library of the installed driver (Debian/Ubuntu: libnvidia-compute-<version> or "
     "libnvidia-ml1; in a container, give it the utility capability: NVIDIA_DRIVER_CAPABILITIES=compute,utility). "
     "Without it nvidia-smi, monitoring tools and frameworks' GPU memory queries fail.",
     CHECK_LAYER_RUNTIME | CHECK_F_KIND_FILE},
    {"cuda.nvml-unusable", REPORT_SEV_WARNING,
     "libnvidia-ml.so.1 loads but could not be queried (missing functions, crash or hang)",
     "Reinstall the NVIDIA driver's user-space libraries so that libnvidia-ml.so.1 matches the kernel module; "
     "check that no other copy comes first on LD_LIBRARY_PATH.", CHECK_LAYER_RUNTIME},
    /* nvml.h: NVML_ERROR_LIB_RM_VERSION_MISMATCH 18, "RM detects a driver/library version mismatch"
     * (nvidia-smi prints "Failed to initialize NVML: Driver/library version mismatch"). */
    {"cuda.nvml-version-mismatch", REPORT_SEV_ERROR,
     "The loaded NVIDIA kernel module and the user-space driver libraries are different versions",
     "Reboot, so that the kernel module of the installed driver packages is loaded (the usual cause is a driver "
     "upgrade without a reboot); if it persists, reinstall the driver so that kernel module and libraries match.", CHECK_LAYER_RUNTIME},
    /* nvml.h: NVML_ERROR_DRIVER_NOT_LOADED 9. */
    {"cuda.nvml-driver-not-loaded", REPORT_SEV_ERROR,
     "NVML reports that the NVIDIA kernel driver is not loaded",
     "Load it (sudo modprobe nvidia) and look at `sudo dmesg | grep -i nvrm` for why it failed; with Secure Boot on, "
     "the module must be signed (or enrolled with mokutil).", CHECK_LAYER_RUNTIME},
    {"cuda.nvml-no-driver", REPORT_SEV_INFO,
     "The NVML library is installed but there is no NVIDIA driver or GPU to talk to",
     "Nothing to do on a machine without an NVIDIA GPU.", CHECK_LAYER_RUNTIME},
    /* nvml.h: NVML_ERROR_NO_PERMISSION 4, NVML_ERROR_OPERATING_SYSTEM 17 ("blocked by the operating
     * system/cgroups"); DCGM permissions (Software::checkPermissions). */
    {"cuda.nvml-no-permission", REPORT_SEV_ERROR,
     "NVML may not open the NVIDIA device nodes (permissions or a container's device cgroup)",
     "Check the modes of /dev/nvidiactl and /dev/nvidia* (the driver's default is 0666, or a group set by "
     "NVreg_DeviceFileGID); in a container, pass the GPU with --gpus or the device plugin.", CHECK_LAYER_RUNTIME},
    {"cuda.nvml-init-failed", REPORT_SEV_ERROR, "nvmlInit failed",
     "See the NVML error name in the message; `nvidia-smi` shows the same failure; check `sudo dmesg | grep -i nvrm`.", CHECK_LAYER_RUNTIME},
    /* /proc/driver/nvidia/version against nvmlSystemGetDriverVersion (issue 14, section 1). */
    {"cuda.nvml-driver-version", REPORT_SEV_ERROR,
     "The driver version NVML reports differs from the loaded kernel module's",
     "Reboot so that the installed driver's kernel module is loaded, or reinstall matching driver packages.", CHECK_LAYER_RUNTIME},
    /* DCGM permissions (Software::checkPermissions): readable /dev/nvidiaN nodes fewer than the GPUs NVML
     * sees gives DCGM_FR_DEVICE_COUNT_MISMATCH (a warning). We also want them writable: CUDA opens them
     * read-write. */
    {"cuda.nvml-device-nodes", REPORT_SEV_WARNING,
     "Fewer usable /dev/nvidiaN device nodes than GPUs NVML sees",
     "Check the /dev/nvidia* nodes' modes and owner (nvidia-modprobe creates them); in a container, pass every "
     "GPU's node (--gpus all or --device /dev/nvidiaN).", CHECK_LAYER_RUNTIME},
    /* DCGM persistence_mode (Software::checkPersistenceMode) warns when it is off. Info here: a desktop with a
     * display or a single job does not need it; it only saves the driver's start-up time per process. */
    {"cuda.nvml-persistence-off", REPORT_SEV_INFO,
     "Persistence mode is off: each CUDA process that starts on an idle GPU waits for the driver to initialise it",
     "On a headless compute server, run nvidia-persistenced (systemctl enable --now nvidia-persistenced) "
     "or `sudo nvidia-smi -pm 1`.", CHECK_LAYER_RUNTIME},
    /* DCGM env_variables (Software::checkForBadEnvVaribles, DCGM_FR_BAD_CUDA_ENV, a warning). */
    {"cuda.nvml-cuda-env", REPORT_SEV_WARNING,
     "An environment variable that slows CUDA down or changes its behaviour (profiling, debugging) is set",
     "Unset it (e.g. `unset CUDA_INJECTION64_PATH`) unless you are profiling or debugging on purpose.", CHECK_LAYER_RUNTIME},
    /* DCGM page_retirement (Software::checkPageRetirement: DCGM_FR_PENDING_PAGE_RETIREMENTS). */
    {"cuda.nvml-retired-pages-pending", REPORT_SEV_WARNING,
     "GPU memory pages are waiting to be retired after ECC errors: they stay in use until the GPU is reset",
     "Reset the GPU (nvidia-smi -r with no process on it) or reboot; if pages keep being retired, have the GPU "
     "replaced.", CHECK_LAYER_RUNTIME},
    /* DCGM page_retirement: DCGM_FR_RETIRED_PAGES_LIMIT at 63 retired pages. */
    {"cuda.nvml-retired-pages-limit", REPORT_SEV_ERROR,
     "The GPU has retired as many memory pages as NVIDIA's limit allows: its memory is failing",
     "Have the GPU replaced (NVIDIA's field diagnostic or your vendor's RMA process).", CHECK_LAYER_RUNTIME},
    /* DCGM page_retirement (Software::checkRowRemapping: DCGM_FR_PENDING_ROW_REMAP). */
    {"cuda.nvml-row-remap-pending", REPORT_SEV_WARNING,
     "Memory rows are waiting to be remapped after errors: the remap takes effect at the next GPU reset",
     "Reset the GPU (nvidia-smi -r with no process on it) or reboot.", CHECK_LAYER_RUNTIME},
    /* DCGM page_retirement: DCGM_FR_ROW_REMAP_FAILURE. */
    {"cuda.nvml-row-remap-failed", REPORT_SEV_ERROR,
     "A memory row remap failed: the GPU has memory errors it cannot repair",
     "Have the GPU replaced; until then expect uncorrectable ECC errors.", CHECK_LAYER_RUNTIME},
    /* DCGM page_retirement: DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT at 512 rows. */
    {"cuda.nvml-row-remap-limit", REPORT_SEV_ERROR,
     "The GPU has remapped as many rows for uncorrectable errors as NVIDIA's limit allows",
     "Have the GPU replaced.", CHECK_LAYER_RUNTIME},
    /* nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE): since the driver loaded. DCGM's page_retirement
     * consults the same volatile DBE count (DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS). */
    {"cuda.nvml-ecc-uncorrectable", REPORT_SEV_WARNING,
     "The GPU had uncorrectable ECC memory errors since the driver loaded: programs on it may have crashed",
     "Look at `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`; reset the GPU or reboot; if errors come back, "
     "have it replaced.", CHECK_LAYER_RUNTIME},
    /* nvmlDeviceGetEccMode: the pending mode applies at the next reboot (nvml.h). */
    {"cuda.nvml-ecc-pending", REPORT_SEV_INFO, "An ECC mode change is pending until the next reboot",
     "Reboot to apply it, or set it back with `sudo nvidia-smi -e 0|1`.", CHECK_LAYER_RUNTIME},
    /* nvml.h nvmlDeviceGetMigMode, NVIDIA MIG user guide: with MIG enabled, CUDA sees only MIG devices
     * (GPU instance + compute instance); none created means no CUDA device at all. */
    {"cuda.nvml-mig-no-instance", REPORT_SEV_ERROR,
     "MIG mode is enabled but no MIG device (GPU instance with a compute instance) exists: nothing can compute",
     "Create instances (e.g. `sudo nvidia-smi mig -cgi 19 -C`) or disable MIG (`sudo nvidia-smi -i N -mig 0`, "
     "then reset the GPU).", CHECK_LAYER_RUNTIME},
    {"cuda.nvml-mig-pending", REPORT_SEV_INFO, "A MIG mode change is pending until the GPU is reset",
     "Reset the GPU (nvidia-smi -r) or reboot to apply it.", CHECK_LAYER_RUNTIME},
    /* nvml.h nvmlClocksEventReason*: HW slowdown (0x8), SW thermal (0x20), HW thermal (0x40) and HW power
     * brake (0x80) mean a thermal or power problem. GPU idle, application clocks, SW power cap, sync
     * boost and display clocks are normal operation. */
    {"cuda.nvml-clocks-slowdown", REPORT_SEV_WARNING,
     "The GPU's clocks are being cut for a thermal or power reason (HW slowdown, thermal, power brake)",
     "Check cooling (fans, airflow, `nvidia-smi -q -d TEMPERATURE,PERFORMANCE`) and the power supply's cables; "
     "a power brake is asserted by the system board.", CHECK_LAYER_RUNTIME},
    /* DCGM inforom (Software::checkInforom: DCGM_FR_CORRUPT_INFOROM); nvmlDeviceValidateInforom returns
     * NVML_ERROR_CORRUPTED_INFOROM (14). */
    {"cuda.nvml-inforom-invalid", REPORT_SEV_WARNING, "The GPU's InfoROM is corrupted",
     "Update the GPU's firmware (InfoROM) through your vendor; if it persists, have the GPU replaced.", CHECK_LAYER_RUNTIME},
    /* DCGM gpu_recovery_state (Software::checkGpuRecoveryState): NVML_FI_DEV_GET_GPU_RECOVERY_ACTION other
     * than NONE (reset, reboot, drain P2P, drain and reset) fails the GPU. */
    {"cuda.nvml-recovery-action", REPORT_SEV_ERROR,
     "The driver reports that the GPU needs a recovery action (reset, reboot or drain) before it is usable again",
     "Stop the work on the GPU and do what the message says: `sudo nvidia-smi -r -i N` for a reset, or reboot; "
     "look at `sudo dmesg | grep -i xid` for the error that caused it.", CHECK_LAYER_RUNTIME},
    /* nvml.h: nvmlDeviceGetHandleByIndex answers NVML_ERROR_NO_PERMISSION for a GPU "the user doesn't
     * have permission to talk to" (a device cgroup: containers, batch schedulers). */
    {"cuda.nvml-gpu-blocked", REPORT_SEV_INFO,
     "A GPU NVML lists may not be opened by this process (a container's or job's device restrictions)",
     "Nothing to do if the GPU belongs to another job or container; otherwise ask for it (--gpus, the scheduler's "
     "GPU request).", CHECK_LAYER_RUNTIME},
    /* nvml.h: NVML_ERROR_GPU_IS_LOST 15, "fallen off the bus". */
    {"cuda.nvml-gpu-lost", REPORT_SEV_ERROR, "The GPU has fallen off the bus (NVML_ERROR_GPU_IS_LOST)",
     "Reboot; look at `sudo dmesg | grep -i -e nvrm -e xid`; if it recurs, check power, cooling and the slot.", CHECK_LAYER_RUNTIME},
};
const size_t cuda_nvml_n_checks = sizeof(cuda_nvml_checks) / sizeof(cuda_nvml_checks[0]);

/* What is kept of the NVML child's JSON: it ran vendor code and its strings came from the library. */
static const struct jsonstr_limits nvml_child_limits = {.depth = 8, .string = 1024, .items = NVML_MAX_DEVICES, .key = 64};

/* ---- the parent ------------------------------------------------------------------------------- */

/* True when any of D's queries failed with NVML_ERROR_GPU_IS_LOST. */
static bool nvml_gpu_lost(json_object *d)
{
    const char *h = jsonget_str(d, "handle_error");
    if (h && strcmp(h, "NVML_ERROR_GPU_IS_LOST") == 0)
        return true;
    json_object *errs = jsonget(d, "errors");
    if (errs && json_object_is_type(errs, json_type_object)) {
        json_object_object_foreach(errs, key, val) {
            (void)key;
            if (json_object_is_type(val, json_type_string) &&
                strcmp(json_object_get_string(val), "NVML_ERROR_GPU_IS_LOST") == 0)
                return true;
        }
    }
    return false;
}

/* The per-GPU rules (DCGM software plugin, see the catalogue above). */
static void nvml_check_device(struct probe_ctx *ctx, json_object *d)
{
    struct report *rep = ctx->report;
    char *subj = nvml_subject(d);
    const char *name = jsonget_str(d, "name");
    const char *gpu = name ? name : "the GPU";
    struct report_finding *f;

    if (nvml_gpu_lost(d)) {
        f = report_add_finding(rep, "cuda.nvml-gpu-lost", subj, "%s (%s) is lost: NVML answers NVML_ERROR_GPU_IS_LOST",
                               gpu, subj);
        free(subj);
        return; /* every other value is meaningless */
    }
    const char *herr = jsonget_str(d, "handle_error");
    if (herr) {
        /* A GPU this process may not open (a container's or batch job's device cgroup) is somebody
         * else's GPU, not a fault: info. */
        bool blocked = strcmp(herr, "NVML_ERROR_NO_PERMISSION") == 0 || strcmp(herr, "NVML_ERROR_OPERATING_SYSTEM") == 0;
        report_add_finding(rep, blocked ? "cuda.nvml-gpu-blocked" : "cuda.nvml-unusable", subj,
                           "NVML could not open GPU %lld: %s", (long long)nvml_num(d, "index"), herr);
        free(subj);
        return;
    }
    if (jsonget_tri(d, "persistence_mode") == 0)
        report_add_finding(rep, "cuda.nvml-persistence-off", subj, "Persistence mode is off on %s (%s)", gpu, subj);

    json_object *ecc = jsonget(d, "ecc_mode");
    int ecc_cur = jsonget_tri(ecc, "current"), ecc_pend = jsonget_tri(ecc, "pending");
    if (ecc_cur >= 0 && ecc_pend >= 0 && ecc_cur != ecc_pend)
        report_add_finding(rep, "cuda.nvml-ecc-pending", subj, "ECC on %s (%s) is %s now and will be %s after a reboot",
                           gpu, subj, ecc_cur ? "on" : "off", ecc_pend ? "on" : "off");
    int64_t unc_vol = nvml_num(d, "ecc_uncorrected_volatile");
    if (unc_vol > 0) {
        f = report_add_finding(rep, "cuda.nvml-ecc-uncorrectable", subj,
                               "%s (%s) had %lld uncorrectable ECC error%s since the driver loaded", gpu, subj,
                               (long long)unc_vol, unc_vol == 1 ? "" : "s");
        if (f)
            report_finding_add_evidence(f, "nvmlDeviceGetTotalEccErrors(uncorrected, aggregate)", "%lld",
                                        (long long)nvml_num(d, "ecc_uncorrected_aggregate"));
    }

    if (jsonget_tri(d, "retired_pages_pending") == 1)
        report_add_finding(rep, "cuda.nvml-retired-pages-pending", subj,
                           "%s (%s) has memory pages pending retirement until the GPU is reset", gpu, subj);
    json_object *ret = jsonget(d, "retired_pages");
    int64_t sbe = nvml_num(ret, "single_bit"), dbe = nvml_num(ret, "double_bit");
    if (sbe >= 0 && dbe >= 0 && sbe + dbe >= NVML_RETIRED_PAGES_LIMIT) {
        f = report_add_finding(rep, "cuda.nvml-retired-pages-limit", subj,
                               "%s (%s) has retired %lld memory pages (limit %u)", gpu, subj, (long long)(sbe + dbe),
                               NVML_RETIRED_PAGES_LIMIT);
        if (f)
            report_finding_add_evidence(f, "nvmlDeviceGetRetiredPages", "%lld single-bit, %lld double-bit",
                                        (long long)sbe, (long long)dbe);
    }

    json_object *rows = jsonget(d, "remapped_rows");
    int64_t unc_rows = nvml_num(rows, "uncorrectable");
    /* DCGM order (checkRowRemapping): a failure first, then the uncorrectable limit, then pending. */
    if (jsonget_tri(rows, "failure") == 1)
        report_add_finding(rep, "cuda.nvml-row-remap-failed", subj, "A memory row remap failed on %s (%s)", gpu, subj);
    if (unc_rows >= NVML_UNC_REMAP_LIMIT)
        report_add_finding(rep, "cuda.nvml-row-remap-limit", subj,
                           "%s (%s) has %lld rows remapped for uncorrectable errors (limit %u)", gpu, subj,
                           (long long)unc_rows, NVML_UNC_REMAP_LIMIT);
    if (jsonget_tri(rows, "pending") == 1)
        report_add_finding(rep, "cuda.nvml-row-remap-pending", subj,
                           "%s (%s) has memory row remaps pending until the GPU is reset (%lld uncorrectable, %lld "
                           "correctable rows remapped so far)",
                           gpu, subj, (long long)unc_rows, (long long)nvml_num(rows, "correctable"));

    json_object *mig = jsonget(d, "mig");
    int mig_cur = jsonget_tri(mig, "current"), mig_pend = jsonget_tri(mig, "pending");
    if (mig_cur == 1 && nvml_num(mig, "devices") == 0)
        report_add_finding(rep, "cuda.nvml-mig-no-instance", subj,
                           "MIG is enabled on %s (%s) but no MIG device exists: CUDA sees no device on it", gpu, subj);
    if (mig_cur >= 0 && mig_pend >= 0 && mig_cur != mig_pend)
        report_add_finding(rep, "cuda.nvml-mig-pending", subj, "MIG on %s (%s) is %s now and will be %s after a reset",
                           gpu, subj, mig_cur ? "enabled" : "disabled", mig_pend ? "enabled" : "disabled");

    int64_t reasons = nvml_num(d, "clocks_event_reasons");
    if (reasons > 0) {
        char list[256] = "";
        for (size_t i = 0; i < nvml_n_clock_reasons; i++)
            if (nvml_clock_reasons[i].problem && ((unsigned long long)reasons & nvml_clock_reasons[i].bit)) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", nvml_clock_reasons[i].name);
            }
        if (list[0]) {
            f = report_add_finding(rep, "cuda.nvml-clocks-slowdown", subj, "%s (%s) is slowing its clocks: %s", gpu,
                                   subj, list);
            if (f)
                report_finding_add_evidence(f, "nvmlDeviceGetCurrentClocksEventReasons", "0x%llx",
                                            (unsigned long long)reasons);
        }
    }

    int64_t action = nvml_num(d, "recovery_action");
    if (action > NVML_GPU_RECOVERY_ACTION_NONE) {
        static const char *const actions[] = {"none", "a GPU reset", "a node reboot", "draining peer-to-peer traffic",
                                              "draining peer-to-peer traffic and a GPU reset",
                                              "recovering the IMEX domain"};
        f = report_add_finding(rep, "cuda.nvml-recovery-action", subj, "The driver asks for %s on %s (%s)",
                               action < (int64_t)(sizeof(actions) / sizeof(actions[0])) ? actions[action]
                                                                                       : "an unknown recovery action",
                               gpu, subj);
        if (f) {
            report_finding_add_evidence(f, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", "%lld", (long long)action);
            if (action == NVML_GPU_RECOVERY_ACTION_NODE_REBOOT)
                report_finding_set_hint(f, "Reboot the machine.");
        }
    }

    if (jsonget_tri(d, "inforom_valid") == 0)
        report_add_finding(rep, "cuda.nvml-inforom-invalid", subj, "The InfoROM of %s (%s) is corrupted", gpu, subj);
    cuda_nvml_mem_check(ctx, d, subj, gpu);
    cuda_nvml_thermal_check(ctx, d, subj, gpu);
    free(subj);
}

static int nvml_cmp_str(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

/* DCGM permissions: count /dev/nvidiaN nodes this user can open read-write (hostfs), compare with the
 * GPUs NVML sees. Adds data["nvml"]["device_nodes"]. */
static void nvml_check_nodes(struct probe_ctx *ctx, json_object *nvml, int64_t gpus)
{
    DIR *dir = hostfs_opendir(ctx->fs, "/dev");
    if (!dir)
        return;
    json_object *nodes = json_object_new_array();
    json_object *bad = json_object_new_array();
    size_t usable = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        const char *n = e->d_name;
        if (strncmp(n, "nvidia", 6) != 0 || !n[6] || strspn(n + 6, "0123456789") != strlen(n + 6) ||
            strlen(n) > 16)
            continue;
        char path[sizeof(e->d_name) + 8];
        snprintf(path, sizeof(path), "/dev/%s", n);
        json_object_array_add(nodes, json_object_new_string(path));
        if (hostfs_access(ctx->fs, path, R_OK | W_OK) == 0)
            usable++;
        else
            json_object_array_add(bad, json_object_new_string(path));
    }
    closedir(dir);
    json_object_array_sort(nodes, nvml_cmp_str);
    json_object *dn = json_object_new_object();
    json_object_object_add(dn, "present", nodes);
    json_object_object_add(dn, "usable", json_object_new_int64((int64_t)usable));
    json_object_object_add(dn, "unusable", bad);
    json_object_object_add(nvml, "device_nodes", dn);
    if ((int64_t)usable < gpus) {
        struct report_finding *f = report_add_finding(
            ctx->report, "cuda.nvml-device-nodes", "/dev", "NVML sees %lld GPU%s but only %zu /dev/nvidiaN node%s %s usable",
            (long long)gpus, gpus == 1 ? "" : "s", usable, usable == 1 ? "" : "s", usable == 1 ? "is" : "are");
        for (size_t i = 0; f && i < json_object_array_length(bad); i++)
            report_finding_add_evidence(f, json_object_get_string(json_object_array_get_idx(bad, i)),
                                        "not readable and writable by this user");
    }
}

/* DCGM env_variables (nvvs/src/Software.cpp, checkForBadEnvVaribles): any of these set is a warning. */
static const char *const nvml_bad_env[] = {
    "NSIGHT_CUDA_DEBUGGER", "CUDA_INJECTION32_PATH", "CUDA_INJECTION64_PATH", "CUDA_AUTO_BOOST",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_COREDUMP_FILE", "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_PROFILE",
    "COMPUTE_PROFILE", "OPENCL_PROFILE", NULL,
};

static void nvml_check_env(struct probe_ctx *ctx, json_object *nvml)
{
    json_object *env = json_object_new_object();
    for (size_t i = 0; nvml_bad_env[i]; i++) {
        const char *v = getenv(nvml_bad_env[i]);
        if (!v)
            continue;
        char *val = str_sanitize(strndup(v, 256));
        json_object_object_add(env, nvml_bad_env[i], json_object_new_string(val ? val : ""));
        struct report_finding *f = report_add_finding(ctx->report, "cuda.nvml-cuda-env", nvml_bad_env[i],
                                                      "%s is set (\"%s\")", nvml_bad_env[i], val ? val : "");
        if (f)
            report_finding_set_hint(f, "Unset %s unless you are profiling or debugging on purpose: NVIDIA's DCGM "
                                       "diagnostic flags it as a variable that changes CUDA's behaviour or speed.",
                                    nvml_bad_env[i]);
        free(val);
    }
    /* Not in DCGM's list: CUDA_LAUNCH_BLOCKING=1 makes every kernel launch synchronous (CUDA C++
     * Programming Guide, "CUDA Environment Variables"); 0 or empty is the default behaviour. */
    const char *lb = getenv("CUDA_LAUNCH_BLOCKING");
    if (lb && *lb && strcmp(lb, "0") != 0) {
        char *val = str_sanitize(strndup(lb, 256));
        json_object_object_add(env, "CUDA_LAUNCH_BLOCKING", json_object_new_string(val ? val : ""));
        struct report_finding *f = report_add_finding(ctx->report, "cuda.nvml-cuda-env", "CUDA_LAUNCH_BLOCKING",
                                                      "CUDA_LAUNCH_BLOCKING is set (\"%s\"): every kernel launch waits "
                                                      "for the previous one",
                                                      val ? val : "");
        if (f)
            report_finding_set_hint(f, "Unset CUDA_LAUNCH_BLOCKING unless you are debugging on purpose.");
        free(val);
    }
    json_object_object_add(nvml, "environment", env);
}

/* False only when A and B are both versions ("580.159.04": digits and dots at the start, whatever
 * follows) and those leading parts differ: nothing to compare is no mismatch. */
static bool nvml_same_version(const char *a, const char *b)
{
    size_t la = strspn(a, "0123456789."), lb = strspn(b, "0123456789.");
    if (la == 0 || lb == 0)
        return true;
    return la == lb && strncmp(a, b, la) == 0;
}

/* The nvml object for a child that did not return one. */
static json_object *nvml_from_failure(const struct isolate_result *res)
{
    json_object *o = json_object_new_object();
    const char *st = res->status == ISOLATE_SIGNAL    ? "crash"
                     : res->status == ISOLATE_TIMEOUT ? "timeout"
                     : res->status == ISOLATE_SPAWN_FAILED ? "not-run"
                                                          : "error";
    json_object_object_add(o, "status", json_object_new_string(st));
    json_object_object_add(o, "library", json_object_new_string("libnvidia-ml.so.1"));
    json_object_object_add(o, "error", res->detail ? json_object_new_string(res->detail)
                                                   : json_object_new_string(isolate_status_name(res->status)));
    return o;
}

/* nvmlInit's NVML_ERROR_UNKNOWN ("Failed to initialize NVML: Unknown Error") in a container whose NVIDIA nodes exist
 * (the pci section's platform.container and nodes) is the container's lost device access: with systemd managing its
 * cgroups, a `systemctl daemon-reload` on the host drops the device rules runc set (NVIDIA/nvidia-docker#1730;
 * NVIDIA/nvidia-container-toolkit#48). Adds cuda.nvml-init-failed saying so, with that fix, caused by pci's
 * container.devices-denied where a live run saw open() denied; NULL when this is no such container. */
static struct report_finding *cuda_nvml_container_lost(struct probe_ctx *ctx, const char *shown, const char *code)
{
    const struct result_pci *pd = result_pci_get(ctx->report);
    const char *ctr = pd ? pd->container : NULL, *node = NULL;
    for (size_t i = 0; ctr && !node && i < pd->n_nodes; i++) {
        const char *path = pd->nodes[i].path;
        if (path && str_starts_with(path, "/dev/nvidia") && pd->nodes[i].present == GC_TRI_YES)
            node = path;
    }
    if (!node)
        return NULL;
    struct report_finding *f = report_add_finding(
        ctx->report, "cuda.nvml-init-failed", shown,
        "nvmlInit failed with %s (\"Failed to initialize NVML: Unknown Error\") in this %s%scontainer although %s "
        "exists: the container has lost its access to the GPU's device nodes", code,
        strcmp(ctr, "other") == 0 ? "" : ctr, strcmp(ctr, "other") == 0 ? "" : " ", node);
    if (!f)
        return NULL;
    report_finding_add_evidence(f, node, "present (pci section)");
    report_finding_set_hint(f, "Delete the container and start it again (`docker rm` then `docker run --gpus all ...`; "
                               "a restart may not be enough): a `systemctl daemon-reload` on the host dropped its "
                               "device rules. On the host, `sudo nvidia-ctk system create-dev-char-symlinks "
                               "--create-all` keeps it from recurring (NVIDIA/nvidia-docker#1730).");
    const struct report_finding *denied = report_find_finding(ctx->report, "container.devices-denied", NULL);
    if (denied)
        report_finding_set_cause(f, "container.devices-denied", denied->subject);
    return f;
}

void cuda_nvml_report(struct probe_ctx *ctx, struct report_section *sec, const struct isolate_result *res,
                      const struct cuda_facts *facts)
{
    json_object *nvml = res->status == ISOLATE_OK && res->value && json_object_is_type(res->value, json_type_object)
                            ? jsonstr_clean_copy(res->value, &nvml_child_limits)
                            : nvml_from_failure(res);
    if (!nvml)
        return;
    json_object_object_add(sec->data, "nvml", nvml);
    const char *status = jsonget_str(nvml, "status");
    if (!status)
        status = "error";
    const char *lib_path = jsonget_str(nvml, "path");
    const char *shown = lib_path ? lib_path : "libnvidia-ml.so.1";
    /* A GPU that needs NVML: one bound to nvidia, or a loaded nvidia module (the GPU may be in a VM). */
    bool nv = facts->nvidia_gpu_bound || facts->nvidia_module_loaded;
    struct report_finding *f = NULL;

    if (res->status == ISOLATE_SPAWN_FAILED && res->budget_spent) {
        f = NULL; /* no time left: core.timeout-spent says so */
    } else if (res->status == ISOLATE_SPAWN_FAILED) {
        f = report_add_finding(ctx->report, "core.isolated-child-failed", "libnvidia-ml.so.1",
                               "The NVML child could not be started: %s", res->detail ? res->detail : "fork failed");
    } else if (res->status != ISOLATE_OK || strcmp(status, "missing-symbol") == 0) {
        /* A crash or hang in NVML with no NVIDIA driver in use is noted, not a warning. */
        if (nv) {
            f = report_add_finding(ctx->report, "cuda.nvml-unusable", shown, "NVML %s: %s",
                                   res->status == ISOLATE_OK ? "lacks a required function" : "failed",
                                   jsonget_str(nvml, "error") ? jsonget_str(nvml, "error") : "?");
            if (f && res->stderr_tail)
                report_finding_add_evidence(f, "child output", "%s", res->stderr_tail);
        } else
            report_section_add_note(sec, "NVML %s (no NVIDIA GPU here): %s", status,
                                    jsonget_str(nvml, "error") ? jsonget_str(nvml, "error") : "?");
    } else if (strcmp(status, "no-library") == 0) {
        const char *err = jsonget_str(nvml, "error");
        if (!err || strstr(err, "cannot open shared object file"))
            libarch_report_fs(ctx->report, "cuda.driver-wrong-arch", ctx->fs, getenv("LD_LIBRARY_PATH"),
                              "libnvidia-ml.so.1", "The NVIDIA driver's NVML library");
        if (facts->nvidia_gpu_bound) {
            f = report_add_finding(ctx->report, "cuda.nvml-missing", "libnvidia-ml.so.1",
                                   "libnvidia-ml.so.1 cannot be loaded although a GPU is bound to nvidia: %s",
                                   jsonget_str(nvml, "error") ? jsonget_str(nvml, "error") : "not found");
        }
    } else if (strcmp(status, "init-failed") == 0) {
        int64_t code = nvml_num(nvml, "init_result");
        const char *name = jsonget_str(nvml, "init_result_name");
        char codebuf[64];
        snprintf(codebuf, sizeof(codebuf), "%s (%lld)", name ? name : "unknown NVML error", (long long)code);
        if (code == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
            f = report_add_finding(ctx->report, "cuda.nvml-version-mismatch", shown,
                                   "nvmlInit failed with %s: Driver/library version mismatch%s%s%s", codebuf,
                                   facts->kernel_driver_version[0] ? " (kernel module " : "",
                                   facts->kernel_driver_version,
                                   facts->kernel_driver_version[0] ? ")" : "");
        } else if (!nv) {
            /* No NVIDIA driver in use: NVML cannot work and nothing needs it (a GPU without a driver is
             * the pci probe's pci.no-driver). */
            f = report_add_finding(ctx->report, "cuda.nvml-no-driver", shown, "nvmlInit failed with %s", codebuf);
        } else if (code == NVML_ERROR_NO_PERMISSION || code == NVML_ERROR_OPERATING_SYSTEM) {
            f = report_add_finding(ctx->report, "cuda.nvml-no-permission", shown, "nvmlInit failed with %s", codebuf);
        } else if (code == NVML_ERROR_DRIVER_NOT_LOADED) {
            f = report_add_finding(ctx->report, "cuda.nvml-driver-not-loaded", shown, "nvmlInit failed with %s",
                                   codebuf);
        } else if (code == NVML_ERROR_UNKNOWN && (f = cuda_nvml_container_lost(ctx, shown, codebuf))) {
            /* the container's lost device access: its message and fix are set */
        } else {
            f = report_add_finding(ctx->report, "cuda.nvml-init-failed", shown, "nvmlInit failed with %s", codebuf);
            if (code == NVML_ERROR_UNKNOWN)
                f = cuda_resume_explain(ctx, f, "nvmlInit failed with NVML_ERROR_UNKNOWN (\"Unknown Error\")");
        }
        if (f)
            report_finding_add_evidence(f, "nvmlInit_v2", "%s", codebuf);
    } else if (strcmp(status, "ok") == 0) {
        const char *drv = jsonget_str(nvml, "driver_version");
        if (drv && !nvml_same_version(drv, facts->kernel_driver_version)) {
            f = report_add_finding(ctx->report, "cuda.nvml-driver-version", shown,
                                   "NVML reports driver %s but the loaded kernel module is %s", drv,
                                   facts->kernel_driver_version);
            if (f) {
                report_finding_add_evidence(f, "/proc/driver/nvidia/version", "%s", facts->kernel_driver_version);
                report_finding_add_evidence(f, "nvmlSystemGetDriverVersion", "%s", drv);
            }
        }
        json_object *devs = jsonget(nvml, "devices");
        size_t n = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *d = json_object_array_get_idx(devs, i);
            if (d && json_object_is_type(d, json_type_object))
                nvml_check_device(ctx, d);
        }
        cuda_nvml_nvlink_check(ctx, devs);
        struct result_cuda *rc = result_cuda_of(sec);
        if (rc && devs && !rc->nvml_devices)
            rc->nvml_devices = json_object_get(devs); /* the topology matrix's NV# (result_cuda_nvlinks) */
        int64_t count = nvml_num(nvml, "device_count");
        /* WSL2 has no /dev/nvidiaN: NVML reaches the GPU through /dev/dxg and the Windows driver. */
        if (count > 0 && !facts->wsl2)
            nvml_check_nodes(ctx, nvml, count);
    }
    /* The environment matters wherever CUDA could run. */
    if (nv || facts->nvidia_gpu_present || nvml_num(nvml, "device_count") > 0)
        nvml_check_env(ctx, nvml);
}
