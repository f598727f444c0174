/* cuda_findings.c: the cuda probe's driver-API findings: its catalogue rows and the rules on libcuda, cuInit and devices. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_driver.h"
#include "jsonget.h"
#include "libarch.h"
#include "strutil.h"
#include "results/result_pci.h"

/* The driver-API part's catalogue rows. Every hint that states how NVIDIA's stack behaves names its
 * source in a comment. */
const struct check cuda_driver_checks[] = {
    {"cuda.no-driver", REPORT_SEV_INFO, "No NVIDIA driver (libcuda.so.1) and no NVIDIA GPU: CUDA does not apply here",
     "Nothing to fix unless you expected an NVIDIA GPU: then check `gpucheckup pci`.",
     CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE},
    {"cuda.no-gpu", REPORT_SEV_INFO, "An NVIDIA driver library is installed but there is no NVIDIA GPU to use",
     "Nothing to fix unless you expected an NVIDIA GPU (check `gpucheckup pci`).", CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE},
    /* The kernel driver and libcuda come from one driver package (NVIDIA's installation guide, "Driver
     * Installation"); the toolkit does not ship a working libcuda. */
    {"cuda.no-libcuda", REPORT_SEV_ERROR,
     "An NVIDIA GPU is bound to the nvidia kernel driver, but no libcuda.so.1 can be loaded",
     "Install the user-space half of the driver, the same version as the kernel module (Debian: `sudo apt install "
     "libcuda1`; Ubuntu: `sudo apt install libnvidia-compute-<version>`); in a container, use the NVIDIA "
     "container toolkit (`--gpus all`) so the host's libcuda is mounted in.", CHECK_LAYER_RUNTIME | CHECK_F_KIND_FILE},
    /* glibc's loader skips a library of another ELF class or machine without a word (elf/dl-load.c,
     * open_verify): dlopen then says "cannot open shared object file", as if nothing were there. */
    {"cuda.driver-wrong-arch", REPORT_SEV_WARNING,
     "An NVIDIA library (libcuda, NVML) on the library search path is built for another architecture",
     "Install the NVIDIA driver's user-space libraries built for this machine (Debian: `sudo apt install "
     "libcuda1:amd64`, the host's architecture) and remove the foreign copy, or take its directory off "
     "LD_LIBRARY_PATH; in a container, use an image built for this platform.", CHECK_LAYER_RUNTIME | CHECK_F_KIND_FILE},
    {"cuda.library-unusable", REPORT_SEV_ERROR,
     "libcuda.so.1 was found but cannot be used (a dlopen error or missing entry points)",
     "Reinstall the NVIDIA driver's user-space libraries so that libcuda.so.1 matches this architecture and the "
     "kernel module; the message says what the dynamic linker reported.", CHECK_LAYER_RUNTIME},
    /* cuda.h: CUDA_ERROR_STUB_LIBRARY (34) "the CUDA driver is a stub library"; the toolkit's
     * lib64/stubs/libcuda.so exists for linking only (CUDA installation guide). */
    {"cuda.stub-library", REPORT_SEV_ERROR,
     "libcuda.so.1 resolves to the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY, 34): nothing can run",
     "Remove the stubs directory from LD_LIBRARY_PATH (or from /etc/ld.so.conf.d, then `sudo ldconfig`): stubs "
     "are for linking only (LIBRARY_PATH); install the NVIDIA driver if it is missing.", CHECK_LAYER_RUNTIME},
    /* cuda.h: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804); CUDA Compatibility guide: forward
     * compatibility is for data-center GPUs (and select NGC-ready RTX cards) only. */
    {"cuda.compat-unsupported", REPORT_SEV_ERROR,
     "A forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does not support it (804)",
     "Take the .../compat directory off LD_LIBRARY_PATH (or ld.so.conf.d) so the driver's own libcuda is used, "
     "or upgrade the NVIDIA driver to one that supports the CUDA version you need.", CHECK_LAYER_RUNTIME},
    /* cuda.h: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). CUDA Compatibility guide, "Forward Compatibility":
     * a cuda-compat libcuda works only on top of the kernel driver branches it supports, and only helps
     * when it is newer than the driver. Seen on a real H100 image: /usr/local/cuda/compat holds libcuda
     * 580.95.05 under a 580.159.04 kernel module; put on LD_LIBRARY_PATH, cuInit answers 803. */
    {"cuda.compat-mismatch", REPORT_SEV_ERROR,
     "A forward-compatibility libcuda (cuda-compat) does not fit the installed kernel driver (803)",
     "Take the .../compat directory off LD_LIBRARY_PATH (or ld.so.conf.d) so the driver's own libcuda is used; "
     "install a cuda-compat package only when it is newer than the driver and built for the driver's branch.", CHECK_LAYER_RUNTIME},
    /* DOMAIN.md: the library carries its version in its file name; a difference means "Driver/library
     * version mismatch" until the matching module is loaded. */
    {"cuda.driver-library-mismatch", REPORT_SEV_ERROR,
     "The loaded libcuda and the NVIDIA kernel module are different driver versions",
     "Reboot so the kernel module that matches the installed libraries is loaded (`sudo reboot`); if it persists, "
     "reinstall the driver so both come from one version (`dpkg -l | grep -i nvidia`).", CHECK_LAYER_RUNTIME},
    /* CUDA needs the nvidia_uvm module and /dev/nvidia-uvm (NVIDIA driver README, "Installed
     * Components"); without it cuInit fails with CUDA_ERROR_UNKNOWN (999). */
    {"cuda.uvm-missing", REPORT_SEV_ERROR,
     "cuInit failed with CUDA_ERROR_UNKNOWN (999) and nvidia_uvm is not loaded or /dev/nvidia-uvm is missing",
     "Load the module and create its node: `sudo modprobe nvidia-uvm` (or `sudo nvidia-modprobe -u -c=0`); in a "
     "container, start it with GPU access (`--gpus all`).", CHECK_LAYER_RUNTIME},
    /* CUDA C Programming Guide, "CUDA Environment Variables": CUDA_VISIBLE_DEVICES lists indices or
     * UUIDs; the list stops at the first invalid entry, and an empty or all-invalid list hides every
     * device (cuInit: CUDA_ERROR_NO_DEVICE, 100). */
    {"cuda.visible-devices-none", REPORT_SEV_ERROR, "CUDA_VISIBLE_DEVICES hides every GPU from CUDA",
     "Unset CUDA_VISIBLE_DEVICES or set it to indices or UUIDs that exist (`nvidia-smi -L` lists them).", CHECK_LAYER_RUNTIME},
    /* cuda.h: CUDA_ERROR_SYSTEM_NOT_READY (802); NVIDIA Fabric Manager user guide: on NVSwitch systems
     * CUDA initialisation fails until nvidia-fabricmanager has configured the fabric. */
    {"cuda.fabric-manager", REPORT_SEV_ERROR,
     "cuInit failed with CUDA_ERROR_SYSTEM_NOT_READY (802): the NVSwitch fabric is not ready",
     "Install and start NVIDIA Fabric Manager of exactly the driver's version: `sudo systemctl enable --now "
     "nvidia-fabricmanager` (`journalctl -u nvidia-fabricmanager` says why it fails).", CHECK_LAYER_RUNTIME},
    /* DOMAIN.md: Secure Boot refuses an unsigned module ("Key was rejected by service"). Its layer is the
     * firmware's, below the kernel's: the refused module is why the GPU has no driver bound (pci.no-driver)
     * and why CUDA cannot start, never their consequence. */
    {"cuda.secure-boot-module", REPORT_SEV_ERROR,
     "The nvidia kernel module is not loaded while Secure Boot is on: an unsigned module is refused",
     "Sign the module with a key enrolled in MOK (DKMS does it: `sudo mokutil --import "
     "/var/lib/dkms/mok.pub`, then reboot and enrol it), use your distribution's signed driver packages, or "
     "turn Secure Boot off.", CHECK_LAYER_FIRMWARE},
    /* cuda.h: CU_COMPUTEMODE_PROHIBITED (2): no context can be created on the device. */
    {"cuda.compute-prohibited", REPORT_SEV_ERROR, "A GPU is in compute mode Prohibited: no program can use it",
     "Set the default compute mode: `sudo nvidia-smi -i <index> -c DEFAULT`.", CHECK_LAYER_RUNTIME},
    {"cuda.gpu-not-visible", REPORT_SEV_WARNING, "An NVIDIA GPU bound to the nvidia driver is not among the CUDA devices",
     "Check `nvidia-smi -L` and `sudo dmesg | grep -i nvrm` (the driver may have failed to initialise that GPU); "
     "NVIDIA_VISIBLE_DEVICES in a container also hides GPUs.", CHECK_LAYER_RUNTIME},
    {"cuda.init-failed", REPORT_SEV_ERROR, "cuInit(0) failed: no CUDA program can run",
     "The message names the CUresult; `sudo dmesg | grep -i nvrm` usually says more. Reinstalling the driver or "
     "a reboot fixes most of them.", CHECK_LAYER_RUNTIME},
    {"cuda.driver-crash", REPORT_SEV_ERROR, "Loading libcuda or cuInit crashed (or ended the process)",
     "Reinstall the NVIDIA driver (kernel module and libraries of one version); `sudo dmesg | grep -i nvrm` says "
     "more.", CHECK_LAYER_RUNTIME},
    {"cuda.driver-hang", REPORT_SEV_ERROR, "Loading libcuda or cuInit did not finish before the timeout",
     "A hung GPU or driver: check `sudo dmesg | grep -i nvrm`, `nvidia-smi`; a longer --timeout rules out a slow "
     "start (many GPUs without persistence mode take seconds: `sudo nvidia-smi -pm 1`).", CHECK_LAYER_RUNTIME},
};
const size_t cuda_driver_n_checks = sizeof(cuda_driver_checks) / sizeof(cuda_driver_checks[0]);

/* The EFI variable that says whether Secure Boot is on (UEFI spec, global variable GUID); the file
 * holds 4 bytes of attributes, then the value (1 = on). */
#define CUDA_SECUREBOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* The node PATH as the pci section saw it: 1 present, 0 absent, -1 unknown (then asks hostfs). */
static int cuda_node_present(struct probe_ctx *ctx, const char *path)
{
    const struct result_pci_node *n = result_pci_node_at(result_pci_get(ctx->report), path);
    if (n)
        return n->present;
    struct stat st;
    int rc = hostfs_stat(ctx->fs, path, &st, true);
    return rc == 0 ? 1 : rc == -ENOENT ? 0 : -1;
}

/* Secure Boot: 1 on, 0 off, -1 unknown (no EFI, unreadable). */
static int cuda_secure_boot(struct probe_ctx *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    if (hostfs_read_file(ctx->fs, CUDA_SECUREBOOT_VAR, 64, &buf, &len) != 0)
        return -1;
    int v = len >= 5 ? (unsigned char)buf[4] == 1 : -1;
    free(buf);
    return v;
}

/* The subject of a finding about device D: its PCI address, else "CUDA device N". */
static const char *cuda_dev_subject(json_object *d, char *buf, size_t len)
{
    const char *a = jsonget_str(d, "pci_address");
    if (a)
        return a;
    snprintf(buf, len, "CUDA device %lld", (long long)jsonget_int(d, "ordinal", 0));
    return buf;
}

/* How the library was found, for people: "LD_LIBRARY_PATH entry /x" or "ld.so.cache (/usr/lib/...)". */
static char *cuda_found_via_text(json_object *lib)
{
    const char *via = jsonget_str(lib, "found_via"), *entry = jsonget_str(lib, "search_entry");
    if (via && strcmp(via, "LD_LIBRARY_PATH") == 0)
        return str_printf("the LD_LIBRARY_PATH entry %s", entry ? entry : "?");
    return str_printf("the dynamic linker's cache or default directories (ld.so.cache, directory %s)",
                      entry ? entry : "?");
}

void cuda_findings_secure_boot(struct cuda_run *cr)
{
    /* No module to refuse (none built for this kernel, or blacklisted): the pci finding that says so is
     * the cause, and blaming Secure Boot would name the wrong reason. */
    if (!cr->facts.nvidia_gpu_present || cr->facts.nvidia_module_loaded || !cr->pci_known ||
        cr->facts.nvidia_module_unloadable)
        return;
    int sb = cuda_secure_boot(cr->ctx);
    if (sb == 1) {
        struct report_finding *f =
            report_add_finding(cr->ctx->report, "cuda.secure-boot-module", "nvidia",
                               "An NVIDIA GPU is present, the nvidia kernel module is not loaded, and Secure Boot is "
                               "on: the kernel refuses an unsigned module");
        report_finding_add_evidence(f, CUDA_SECUREBOOT_VAR, "enabled");
        report_finding_add_evidence(f, "/proc/modules", "no nvidia");
    } else if (sb < 0) {
        report_section_add_note(cr->sec, "Secure Boot state unknown (%s not readable): a refused unsigned nvidia "
                                         "module cannot be ruled out",
                                CUDA_SECUREBOOT_VAR);
    }
}

void cuda_findings_no_library(struct cuda_run *cr, json_object *drv)
{
    struct report *r = cr->ctx->report;
    const char *err = jsonget_str(drv, "dlopen_error");
    bool not_found = !err || strstr(err, "cannot open shared object file") != NULL;
    struct report_finding *f;
    if (!not_found && (cr->facts.nvidia_gpu_present || !cr->pci_known)) {
        f = report_add_finding(r, "cuda.library-unusable", "libcuda.so.1", "libcuda.so.1 cannot be loaded: %s", err);
        report_finding_add_evidence(f, "dlopen(libcuda.so.1)", "%s", err);
        return;
    }
    /* A libcuda.so.1 for another machine is not "not installed": name it. */
    size_t foreign = not_found ? libarch_report_fs(r, "cuda.driver-wrong-arch", cr->ctx->fs, getenv("LD_LIBRARY_PATH"),
                                                   "libcuda.so.1", "The NVIDIA driver's libcuda")
                               : 0;
    if (cr->facts.nvidia_gpu_bound || (cr->facts.nvidia_gpu_present && cr->facts.nvidia_module_loaded)) {
        f = report_add_finding(r, "cuda.no-libcuda", "libcuda.so.1",
                               "An NVIDIA GPU is bound to the nvidia driver%s%s%s, but libcuda.so.1 cannot be found: "
                               "no CUDA program (PyTorch, TensorFlow, JAX) can use it",
                               cr->facts.kernel_driver_version[0] ? " (kernel module " : "",
                               cr->facts.kernel_driver_version,
                               cr->facts.kernel_driver_version[0] ? ")" : "");
        report_finding_add_evidence(f, "dlopen(libcuda.so.1)", "%s", err ? err : "not found");
        const char *ldlp = getenv("LD_LIBRARY_PATH");
        report_finding_add_evidence(f, "LD_LIBRARY_PATH", "%s", ldlp ? ldlp : "(unset)");
        if (cr->facts.kernel_driver_version[0])
            report_finding_set_hint(f, "Install the NVIDIA user-space libraries of version %s, matching the kernel "
                                       "module (Debian: `sudo apt install libcuda1`; Ubuntu: `sudo apt install "
                                       "libnvidia-compute-%.*s`); in a container, use the NVIDIA container toolkit "
                                       "(`--gpus all`) so the host's libcuda is mounted in.",
                                    cr->facts.kernel_driver_version,
                                    (int)strcspn(cr->facts.kernel_driver_version, "."),
                                    cr->facts.kernel_driver_version);
    } else if (cr->facts.nvidia_gpu_present) {
        report_section_add_note(cr->sec, "an NVIDIA GPU is present but not bound to the nvidia driver and libcuda.so.1 "
                                         "is not found: see the pci findings");
    } else if (!foreign) {
        f = report_add_finding(r, "cuda.no-driver", NULL, "No NVIDIA driver: libcuda.so.1 %s%s",
                               not_found ? "is not installed" : "cannot be loaded",
                               cr->pci_known ? ", and there is no NVIDIA GPU" : "");
        report_finding_add_evidence(f, "dlopen(libcuda.so.1)", "%s", err ? err : "not found");
    }
}

/* Whether the GPU at ADDR is given to this system or container: 1 yes, 0 no, -1 unknown. sysfs lists
 * every GPU even inside a container, but the container runtime creates only the /dev/nvidiaN nodes of
 * the GPUs it grants; /proc/driver/nvidia/gpus/ADDR/information names the GPU's "Device Minor" and
 * whether the driver excluded it ("GPU Excluded: Yes"; NVIDIA driver README, "Procfs interface"). */
static int cuda_gpu_granted(struct probe_ctx *ctx, const char *addr)
{
    char *path = str_printf("/proc/driver/nvidia/gpus/%s/information", addr), *text = NULL;
    int rc = path ? hostfs_read_file(ctx->fs, path, 64 * 1024, &text, NULL) : -ENOMEM;
    free(path);
    if (rc != 0)
        return -1;
    int granted = -1;
    const char *ex = strstr(text, "GPU Excluded:");
    if (ex && strstr(ex, "Yes") && strcspn(ex, "\n") > (size_t)(strstr(ex, "Yes") - ex))
        granted = 0;
    const char *m = strstr(text, "Device Minor:");
    if (granted != 0 && m) {
        m += strlen("Device Minor:");
        while (*m == ' ' || *m == '\t')
            m++;
        uint64_t minor;
        char num[24];
        size_t n = strspn(m, "0123456789");
        if (n > 0 && n < sizeof(num)) {
            memcpy(num, m, n);
            num[n] = '\0';
            if (str_to_u64(num, 10, &minor) == 0 && minor < 4096) {
                char node[48];
                snprintf(node, sizeof(node), "/dev/nvidia%llu", (unsigned long long)minor);
                int present = cuda_node_present(ctx, node);
                granted = present < 0 ? -1 : present;
            }
        }
    }
    free(text);
    return granted;
}

/* What cuda_findings_loaded's rules read about the library that loaded. */
struct cuda_loaded {
    const char *path;    /* the real file */
    const char *loaded;  /* the name dlopen was given */
    const char *libver;  /* the version in its file name, or NULL */
    const char *kver;    /* the kernel module's version, or NULL */
    int code;            /* cuInit's CUresult, -1 unknown */
    const char *cname;   /* its name, or NULL */
    bool stub, compat;   /* the toolkit's stub, a forward-compatibility libcuda */
    const char *via;     /* how it was found, for people */
    const char *entry;   /* the search entry that brought it in */
    bool by_ldlp;        /* found through LD_LIBRARY_PATH */
};

/* The library itself: stub, forward compatibility, a version other than the kernel module's. */
static void cuda_findings_library(struct cuda_run *cr, const struct cuda_loaded *lf)
{
    struct report *r = cr->ctx->report;
    struct report_finding *f;
    const char *path = lf->path;
    const char *loaded = lf->loaded;
    const char *libver = lf->libver;
    const char *kver = lf->kver;
    int code = lf->code;
    const char *cname = lf->cname;
    bool stub = lf->stub;
    bool compat = lf->compat;
    const char *via = lf->via;
    const char *entry = lf->entry;
    bool by_ldlp = lf->by_ldlp;
    if (stub) {
        f = report_add_finding(r, "cuda.stub-library", path ? path : "libcuda.so.1",
                               "libcuda.so.1 is the CUDA toolkit's stub %s, brought in by %s: cuInit fails with "
                               "CUDA_ERROR_STUB_LIBRARY and no CUDA program can run",
                               path ? path : "(unknown path)", via);
        report_finding_add_evidence(f, "dlopen(libcuda.so.1)", "%s", loaded ? loaded : "?");
        if (path)
            report_finding_add_evidence(f, loaded ? loaded : "libcuda.so.1", "-> %s", path);
        if (cname)
            report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname, code);
        if (by_ldlp)
            report_finding_set_hint(f, "Remove %s from LD_LIBRARY_PATH: stub libraries are for linking only (put the "
                                       "stubs directory in LIBRARY_PATH for the linker instead)%s.",
                                    entry ? entry : "that entry",
                                    cr->facts.nvidia_gpu_present ? "" : "; install the NVIDIA driver to use a GPU");
        else
            report_finding_set_hint(f, "Remove %s from /etc/ld.so.conf.d/*.conf and run `sudo ldconfig`: stub "
                                       "libraries are for linking only%s.",
                                    entry ? entry : "the stubs directory",
                                    cr->facts.nvidia_gpu_present ? "" : "; install the NVIDIA driver to use a GPU");
    }
    if (code == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        f = report_add_finding(r, "cuda.compat-unsupported", path ? path : "libcuda.so.1",
                               "%s%s is loaded (through %s), but the GPU does not support CUDA forward compatibility: "
                               "cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
                               compat ? "The forward-compatibility libcuda " : "libcuda ", path ? path : "", via);
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
        if (kver)
            report_finding_add_evidence(f, "kernel module", "%s", kver);
        if (by_ldlp)
            report_finding_set_hint(f, "Remove %s from LD_LIBRARY_PATH so the driver's own libcuda (%s) is used, or "
                                       "upgrade the NVIDIA driver to a version that supports the CUDA you need.",
                                    entry ? entry : "the compat directory", kver ? kver : "the kernel module's version");
    }
    if (code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH && compat) {
        f = report_add_finding(r, "cuda.compat-mismatch", path ? path : "libcuda.so.1",
                               "The forward-compatibility libcuda %s%s%s (through %s) does not fit the kernel driver%s%s: "
                               "cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH%s",
                               path ? path : "", libver ? " " : "", libver ? libver : "", via, kver ? " " : "",
                               kver ? kver : "",
                               kver && libver && strverscmp(libver, kver) < 0 ? " (it is older than the driver, so it "
                                                                                "cannot add anything)"
                                                                              : "");
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
        if (kver)
            report_finding_add_evidence(f, "kernel module", "%s", kver);
        if (by_ldlp)
            report_finding_set_hint(f, "Remove %s from LD_LIBRARY_PATH so the driver's own libcuda (%s) is used; a "
                                       "cuda-compat package helps only when newer than the driver and built for its branch.",
                                    entry ? entry : "the compat directory", kver ? kver : "the kernel module's version");
    }
    bool mismatch = kver && libver && !compat && !stub && strcmp(kver, libver) != 0;
    if (mismatch || (code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH && !compat)) {
        if (mismatch)
            f = report_add_finding(r, "cuda.driver-library-mismatch", path ? path : "libcuda.so.1",
                                   "The loaded libcuda is version %s but the NVIDIA kernel module is %s%s%s%s",
                                   libver, kver, cname && code != CUDA_SUCCESS ? " (cuInit: " : "",
                                   cname && code != CUDA_SUCCESS ? cname : "", cname && code != CUDA_SUCCESS ? ")" : "");
        else
            f = report_add_finding(r, "cuda.driver-library-mismatch", path ? path : "libcuda.so.1",
                                   "cuInit reports CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: libcuda%s%s and the kernel "
                                   "module%s%s are different driver versions",
                                   libver ? " " : "", libver ? libver : "", kver ? " " : "", kver ? kver : "");
        if (path)
            report_finding_add_evidence(f, path, "%s", libver ? libver : "version not in the file name");
        if (kver)
            report_finding_add_evidence(f, "/proc/driver/nvidia/version", "%s", kver);
        if (cname)
            report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname, code);
        if (by_ldlp && mismatch)
            report_finding_set_hint(f, "libcuda %s comes from the LD_LIBRARY_PATH entry %s: remove that entry if it "
                                       "is a leftover; otherwise reboot to load the matching kernel module, or "
                                       "reinstall the driver so both are one version.",
                                    libver, entry ? entry : "?");
        else if (mismatch)
            report_finding_set_hint(f, "The libraries were upgraded to %s but the running kernel module is still %s: "
                                       "reboot (`sudo reboot`); if it persists, reinstall the driver so both come from "
                                       "one version (`dpkg -l | grep -i nvidia`).",
                                    libver, kver);
    }
}

/* A cuInit failure the library rules did not explain gets the finding its code calls for. */
static void cuda_findings_cuinit(struct cuda_run *cr, const struct cuda_loaded *lf)
{
    struct report *r = cr->ctx->report;
    struct report_finding *f;
    int code = lf->code;
    const char *cname = lf->cname, *path = lf->path, *kver = lf->kver;
    bool explained = code < 0 || code == CUDA_SUCCESS || lf->stub ||
                     code == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE || code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
    if (explained) {
        /* nothing more to say about cuInit */
    } else if (!cr->facts.nvidia_gpu_present && cr->pci_known && !cr->facts.wsl2) {
        /* No NVIDIA GPU: whatever cuInit says (100, 999...), nothing here is broken. */
        f = report_add_finding(r, "cuda.no-gpu", NULL,
                               "libcuda %s is installed but there is no NVIDIA GPU (cuInit: %s)",
                               lf->libver ? lf->libver : "",
                               cname ? cname : "unknown code");
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
    } else if (code == CUDA_ERROR_UNKNOWN &&
               (cr->uvm_loaded == 0 || cuda_node_present(cr->ctx, "/dev/nvidia-uvm") == 0)) {
        int node = cuda_node_present(cr->ctx, "/dev/nvidia-uvm");
        f = report_add_finding(r, "cuda.uvm-missing", "nvidia_uvm",
                               "cuInit failed with CUDA_ERROR_UNKNOWN (999): %s",
                               cr->uvm_loaded == 0 ? "the nvidia_uvm kernel module is not loaded"
                                                   : "/dev/nvidia-uvm does not exist");
        report_finding_add_evidence(f, "/proc/modules", "nvidia_uvm %s",
                                    cr->uvm_loaded == 1 ? "loaded" : cr->uvm_loaded == 0 ? "not loaded" : "unknown");
        report_finding_add_evidence(f, "/dev/nvidia-uvm", "%s", node == 1 ? "present" : node == 0 ? "absent" : "unknown");
    } else if ((code == CUDA_ERROR_NO_DEVICE || code == CUDA_ERROR_INVALID_DEVICE) && getenv("CUDA_VISIBLE_DEVICES")) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        f = report_add_finding(r, "cuda.visible-devices-none", "CUDA_VISIBLE_DEVICES",
                               "CUDA_VISIBLE_DEVICES=\"%s\" %s: CUDA sees no device (cuInit: %s)", cvd,
                               *cvd ? "names no device that exists" : "is empty", cname ? cname : "?");
        report_finding_add_evidence(f, "CUDA_VISIBLE_DEVICES", "%s", cvd);
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
    } else if (code == CUDA_ERROR_SYSTEM_NOT_READY) {
        f = report_add_finding(r, "cuda.fabric-manager", "nvidia-fabricmanager",
                               "cuInit failed with CUDA_ERROR_SYSTEM_NOT_READY (802): on an NVSwitch system this means "
                               "NVIDIA Fabric Manager is not running (or not the driver's version%s%s)",
                               kver ? ", " : "", kver ? kver : "");
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
    } else {
        f = report_add_finding(r, "cuda.init-failed", path ? path : "libcuda.so.1", "cuInit(0) failed with %s (%d)",
                               cname ? cname : "an unknown CUresult", code);
        report_finding_add_evidence(f, "cuInit(0)", "%s (%d)", cname ? cname : "?", code);
        if (path)
            report_finding_add_evidence(f, "libcuda", "%s", path);
        if (code == CUDA_ERROR_UNKNOWN)
            f = cuda_resume_explain(cr->ctx, f, "cuInit failed with CUDA_ERROR_UNKNOWN (999)");
    }
}

/* cuInit succeeded: the devices, and whether every GPU bound to nvidia is among them. */
static void cuda_findings_devices(struct cuda_run *cr, const struct cuda_loaded *lf, json_object *devices)
{
    struct report *r = cr->ctx->report;
    struct report_finding *f;
    const char *path = lf->path;
    size_t nd = devices ? json_object_array_length(devices) : 0;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (nd == 0 && cvd && (cr->facts.nvidia_gpu_present || !cr->pci_known)) {
        f = report_add_finding(r, "cuda.visible-devices-none", "CUDA_VISIBLE_DEVICES",
                               "CUDA_VISIBLE_DEVICES=\"%s\" %s: CUDA sees no device", cvd,
                               *cvd ? "names no device that exists" : "is empty");
        report_finding_add_evidence(f, "CUDA_VISIBLE_DEVICES", "%s", cvd);
    } else if (nd == 0 && cr->facts.nvidia_gpu_bound) {
        f = report_add_finding(r, "cuda.init-failed", path ? path : "libcuda.so.1",
                               "cuInit succeeded but CUDA lists no device while an NVIDIA GPU is bound to the nvidia "
                               "driver");
        report_finding_add_evidence(f, "cuDeviceGetCount", "0");
    }
    for (size_t i = 0; i < nd; i++) {
        json_object *d = json_object_array_get_idx(devices, i);
        const char *cm = jsonget_str(d, "compute_mode");
        char sb[48];
        if (cm && strcmp(cm, "prohibited") == 0) {
            f = report_add_finding(r, "cuda.compute-prohibited", cuda_dev_subject(d, sb, sizeof(sb)),
                                   "CUDA device %lld (%s) is in compute mode Prohibited: no program can create a "
                                   "context on it",
                                   (long long)jsonget_int(d, "ordinal", 0), jsonget_str(d, "name") ? jsonget_str(d, "name") : "?");
            report_finding_add_evidence(f, "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE", "2 (prohibited)");
            report_finding_set_hint(f, "Set the default compute mode: `sudo nvidia-smi -i %lld -c DEFAULT` (as root; "
                                       "it does not survive a reboot unless set at boot).",
                                    (long long)jsonget_int(d, "ordinal", 0));
        }
    }
    /* Every NVIDIA GPU bound to nvidia should be a CUDA device unless CUDA_VISIBLE_DEVICES selects. Not
     * under WSL2: CUDA's bus IDs there are the Windows host's, which guest sysfs never shows. */
    if (cvd || nd == 0 || cr->facts.wsl2)
        return;
    for (size_t i = 0; cr->pci_devs && i < cr->pci_devs->n_devs; i++) {
        const struct result_pci_dev *p = &cr->pci_devs->devs[i];
        const char *vid = p->vendor_id, *drvn = p->driver, *addr = p->address;
        if (!vid || strcmp(vid, "10de") != 0 || !drvn || strcmp(drvn, "nvidia") != 0 || !addr)
            continue;
        bool seen = false;
        for (size_t j = 0; j < nd && !seen; j++) {
            const char *a = jsonget_str(json_object_array_get_idx(devices, j), "pci_address");
            seen = a && strcmp(a, addr) == 0;
        }
        int granted = seen ? 1 : cuda_gpu_granted(cr->ctx, addr);
        if (!seen && (granted == 0 || (granted < 0 && getenv("NVIDIA_VISIBLE_DEVICES")))) {
            /* Not given to this container (or excluded by the driver): not a problem of this system. */
            report_section_add_note(cr->sec, "GPU %s is on the PCI bus but not given to this system or container "
                                             "(no /dev/nvidia node for it, NVIDIA_VISIBLE_DEVICES, or excluded)",
                                    addr);
        } else if (!seen) {
            f = report_add_finding(r, "cuda.gpu-not-visible", addr,
                                   "GPU %s is bound to the nvidia driver but is not among the %zu CUDA device%s", addr,
                                   nd, nd == 1 ? "" : "s");
            report_finding_add_evidence(f, "cuDeviceGetCount", "%zu", nd);
        }
    }
}

void cuda_findings_loaded(struct cuda_run *cr, json_object *drv, json_object *devices)
{
    json_object *lib = jsonget(drv, "library");
    struct cuda_loaded lf = {
        .path = jsonget_str(lib, "path"),
        .loaded = jsonget_str(lib, "loaded_from"),
        .libver = jsonget_str(lib, "version"),
        .kver = cr->facts.kernel_driver_version[0] ? cr->facts.kernel_driver_version : NULL,
        .code = cr->facts.cuinit_result,
        .cname = jsonget_str(jsonget(drv, "cuinit"), "name"),
        .stub = jsonget_tri(lib, "stub") == 1,
        .compat = jsonget_tri(lib, "compat") == 1,
        .entry = jsonget_str(lib, "search_entry"),
        .by_ldlp = jsonget_str(lib, "found_via") && strcmp(jsonget_str(lib, "found_via"), "LD_LIBRARY_PATH") == 0,
    };
    const char *missing = jsonget_str(drv, "missing_symbol");
    if (missing) {
        const char *path = lf.path ? lf.path : "libcuda.so.1";
        struct report_finding *f =
            report_add_finding(cr->ctx->report, "cuda.library-unusable", path,
                               "%s has no %s: it is not a CUDA driver library, or a very old one", path, missing);
        report_finding_add_evidence(f, "dlsym", "%s missing", missing);
        return;
    }
    char *via = cuda_found_via_text(lib);
    lf.via = via;
    cuda_findings_library(cr, &lf);
    free(via);
    lf.via = NULL;
    cuda_findings_cuinit(cr, &lf);
    if (lf.code == CUDA_SUCCESS)
        cuda_findings_devices(cr, &lf, devices);
}
