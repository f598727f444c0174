/* cuda.c: the cuda probe: the NVIDIA CUDA stack end to end (driver API, NVML, libraries, smoke), orchestrated. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_driver.h"
#include "cuda_internal.h"
#include "isolate.h"
#include "pci_internal.h"
#include "strutil.h"

/* The driver-API part's catalogue rows. Every hint that states how NVIDIA's stack behaves names its
 * source in a comment. */
static const struct check cuda_driver_checks[] = {
    {"cuda.no-driver", REPORT_SEV_INFO, "No NVIDIA driver (libcuda.so.1) and no NVIDIA GPU: CUDA does not apply here",
     "Nothing to fix unless you expected an NVIDIA GPU: then check `gpucheckup pci`."},
    {"cuda.no-gpu", REPORT_SEV_INFO, "An NVIDIA driver library is installed but there is no NVIDIA GPU to use",
     "Nothing to fix unless you expected an NVIDIA GPU (check `gpucheckup pci`)."},
    /* The kernel driver and libcuda come from one driver package (NVIDIA's installation guide, "Driver
     * Installation"); the toolkit does not ship a working libcuda. */
    {"cuda.no-libcuda", REPORT_SEV_ERROR,
     "An NVIDIA GPU is bound to the nvidia kernel driver, but no libcuda.so.1 can be loaded",
     "Install the user-space half of the driver, the same version as the kernel module (Debian: `sudo apt install "
     "libcuda1`; Ubuntu: `sudo apt install libnvidia-compute-<version>`); in a container, use the NVIDIA "
     "container toolkit (`--gpus all`) so the host's libcuda is mounted in."},
    {"cuda.library-unusable", REPORT_SEV_ERROR,
     "libcuda.so.1 was found but cannot be used (a dlopen error or missing entry points)",
     "Reinstall the NVIDIA driver's user-space libraries so that libcuda.so.1 matches this architecture and the "
     "kernel module; the message says what the dynamic linker reported."},
    /* cuda.h: CUDA_ERROR_STUB_LIBRARY (34) "the CUDA driver is a stub library"; the toolkit's
     * lib64/stubs/libcuda.so exists for linking only (CUDA installation guide). */
    {"cuda.stub-library", REPORT_SEV_ERROR,
     "libcuda.so.1 resolves to the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY, 34): nothing can run",
     "Remove the stubs directory from LD_LIBRARY_PATH (or from /etc/ld.so.conf.d, then `sudo ldconfig`): stubs "
     "are for linking only (LIBRARY_PATH); install the NVIDIA driver if it is missing."},
    /* cuda.h: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804); CUDA Compatibility guide: forward
     * compatibility is for data-center GPUs (and select NGC-ready RTX cards) only. */
    {"cuda.compat-unsupported", REPORT_SEV_ERROR,
     "A forward-compatibility libcuda (cuda-compat) is loaded on a GPU that does not support it (804)",
     "Take the .../compat directory off LD_LIBRARY_PATH (or ld.so.conf.d) so the driver's own libcuda is used, "
     "or upgrade the NVIDIA driver to one that supports the CUDA version you need."},
    /* cuda.h: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). CUDA Compatibility guide, "Forward Compatibility":
     * a cuda-compat libcuda works only on top of the kernel driver branches it supports, and only helps
     * when it is newer than the driver. Seen on a real H100 image: /usr/local/cuda/compat holds libcuda
     * 580.95.05 under a 580.159.04 kernel module; put on LD_LIBRARY_PATH, cuInit answers 803. */
    {"cuda.compat-mismatch", REPORT_SEV_ERROR,
     "A forward-compatibility libcuda (cuda-compat) does not fit the installed kernel driver (803)",
     "Take the .../compat directory off LD_LIBRARY_PATH (or ld.so.conf.d) so the driver's own libcuda is used; "
     "install a cuda-compat package only when it is newer than the driver and built for the driver's branch."},
    /* DOMAIN.md: the library carries its version in its file name; a difference means "Driver/library
     * version mismatch" until the matching module is loaded. */
    {"cuda.driver-library-mismatch", REPORT_SEV_ERROR,
     "The loaded libcuda and the NVIDIA kernel module are different driver versions",
     "Reboot so the kernel module that matches the installed libraries is loaded (`sudo reboot`); if it persists, "
     "reinstall the driver so both come from one version (`dpkg -l | grep -i nvidia`)."},
    /* CUDA needs the nvidia_uvm module and /dev/nvidia-uvm (NVIDIA driver README, "Installed
     * Components"); without it cuInit fails with CUDA_ERROR_UNKNOWN (999). */
    {"cuda.uvm-missing", REPORT_SEV_ERROR,
     "cuInit failed with CUDA_ERROR_UNKNOWN (999) and nvidia_uvm is not loaded or /dev/nvidia-uvm is missing",
     "Load the module and create its node: `sudo modprobe nvidia-uvm` (or `sudo nvidia-modprobe -u -c=0`); in a "
     "container, start it with GPU access (`--gpus all`)."},
    /* CUDA C Programming Guide, "CUDA Environment Variables": CUDA_VISIBLE_DEVICES lists indices or
     * UUIDs; the list stops at the first invalid entry, and an empty or all-invalid list hides every
     * device (cuInit: CUDA_ERROR_NO_DEVICE, 100). */
    {"cuda.visible-devices-none", REPORT_SEV_ERROR, "CUDA_VISIBLE_DEVICES hides every GPU from CUDA",
     "Unset CUDA_VISIBLE_DEVICES or set it to indices or UUIDs that exist (`nvidia-smi -L` lists them)."},
    /* cuda.h: CUDA_ERROR_SYSTEM_NOT_READY (802); NVIDIA Fabric Manager user guide: on NVSwitch systems
     * CUDA initialisation fails until nvidia-fabricmanager has configured the fabric. */
    {"cuda.fabric-manager", REPORT_SEV_ERROR,
     "cuInit failed with CUDA_ERROR_SYSTEM_NOT_READY (802): the NVSwitch fabric is not ready",
     "Install and start NVIDIA Fabric Manager of exactly the driver's version: `sudo systemctl enable --now "
     "nvidia-fabricmanager` (`journalctl -u nvidia-fabricmanager` says why it fails)."},
    /* DOMAIN.md: Secure Boot refuses an unsigned module ("Key was rejected by service"). */
    {"cuda.secure-boot-module", REPORT_SEV_ERROR,
     "The nvidia kernel module is not loaded while Secure Boot is on: an unsigned module is refused",
     "Sign the module with a key enrolled in MOK (DKMS does it: `sudo mokutil --import "
     "/var/lib/dkms/mok.pub`, then reboot and enrol it), use your distribution's signed driver packages, or "
     "turn Secure Boot off."},
    /* cuda.h: CU_COMPUTEMODE_PROHIBITED (2): no context can be created on the device. */
    {"cuda.compute-prohibited", REPORT_SEV_ERROR, "A GPU is in compute mode Prohibited: no program can use it",
     "Set the default compute mode: `sudo nvidia-smi -i <index> -c DEFAULT`."},
    {"cuda.gpu-not-visible", REPORT_SEV_WARNING, "An NVIDIA GPU bound to the nvidia driver is not among the CUDA devices",
     "Check `nvidia-smi -L` and `sudo dmesg | grep -i nvrm` (the driver may have failed to initialise that GPU); "
     "NVIDIA_VISIBLE_DEVICES in a container also hides GPUs."},
    {"cuda.init-failed", REPORT_SEV_ERROR, "cuInit(0) failed: no CUDA program can run",
     "The message names the CUresult; `sudo dmesg | grep -i nvrm` usually says more. Reinstalling the driver or "
     "a reboot fixes most of them."},
    {"cuda.driver-crash", REPORT_SEV_ERROR, "Loading libcuda or cuInit crashed (or ended the process)",
     "Reinstall the NVIDIA driver (kernel module and libraries of one version); `sudo dmesg | grep -i nvrm` says "
     "more."},
    {"cuda.driver-hang", REPORT_SEV_ERROR, "Loading libcuda or cuInit did not finish before the timeout",
     "A hung GPU or driver: check `sudo dmesg | grep -i nvrm`, `nvidia-smi`; a longer --timeout rules out a slow "
     "start (many GPUs without persistence mode take seconds: `sudo nvidia-smi -pm 1`)."},
};

/* The probe's catalogue: each part owns its rows (cuda_internal.h declares them). */
static const struct check_set cuda_check_sets[] = {
    {cuda_nvml_checks, &cuda_nvml_n_checks},
    {cuda_libs_checks, &cuda_libs_n_checks},
    {cuda_smoke_checks, &cuda_smoke_n_checks},
    {NULL, NULL},
};

/* The EFI variable that says whether Secure Boot is on (UEFI spec, global variable GUID); the file
 * holds 4 bytes of attributes, then the value (1 = on). */
#define CUDA_SECUREBOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* Environment variables that change what CUDA sees or loads (recorded as facts). */
static const char *const cuda_env_vars[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", NULL,
};

/* ---- small JSON helpers ------------------------------------------------------------------------ */

static json_object *cuda_get(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *cuda_str(json_object *o, const char *key)
{
    json_object *v = cuda_get(o, key);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* An int member, or DEF when absent or not an int. */
static int64_t cuda_int(json_object *o, const char *key, int64_t def)
{
    json_object *v = cuda_get(o, key);
    return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

/* -1 for null or missing, else the boolean. */
static int cuda_bool(json_object *o, const char *key)
{
    json_object *v = cuda_get(o, key);
    return v && json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) : -1;
}

/* A deep copy of V from a child with every string sanitised and sizes bounded. */
static json_object *cuda_clean(json_object *v, int depth)
{
    if (!v || depth > 8)
        return NULL;
    switch (json_object_get_type(v)) {
    case json_type_string: {
        char *s = str_dup(json_object_get_string(v));
        if (!s)
            return NULL;
        if (strlen(s) > 4096)
            s[4096] = '\0';
        json_object *o = json_object_new_string(str_sanitize(s));
        free(s);
        return o;
    }
    case json_type_array: {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v) && i < 1024; i++)
            json_object_array_add(a, cuda_clean(json_object_array_get_idx(v, i), depth + 1));
        return a;
    }
    case json_type_object: {
        json_object *o = json_object_new_object();
        json_object_object_foreach(v, key, val)
        {
            char *k = str_dup(key);
            if (k)
                json_object_object_add(o, str_sanitize(k), cuda_clean(val, depth + 1));
            free(k);
        }
        return o;
    }
    case json_type_boolean:
        return json_object_new_boolean(json_object_get_boolean(v));
    case json_type_int:
        return json_object_new_int64(json_object_get_int64(v));
    case json_type_double:
        return json_object_new_double(json_object_get_double(v));
    default:
        return NULL;
    }
}

/* ---- facts from the pci section ----------------------------------------------------------------- */

/* Fill FACTS from the pci section (and /proc/driver/nvidia/version when pci could not read the
 * kernel side); returns the pci devices array (borrowed) or NULL. *PCI_KNOWN says whether the pci
 * facts can be trusted to say "no NVIDIA GPU". */
static json_object *cuda_facts_collect(struct probe_ctx *ctx, struct report_section *sec, struct cuda_facts *f,
                                       bool *pci_known, int *uvm_loaded)
{
    memset(f, 0, sizeof(*f));
    f->driver_cuda_version = -1;
    f->cuinit_result = -1;
    f->device_count = -1;
    *pci_known = false;
    *uvm_loaded = -1;
    struct report_section *pci = report_find_section(ctx->report, "pci");
    json_object *pd = pci && pci->status == REPORT_STATUS_OK ? pci->data : NULL;
    json_object *devs = cuda_get(pd, "devices");
    if (devs && json_object_is_type(devs, json_type_array)) {
        *pci_known = true;
        for (size_t i = 0; i < json_object_array_length(devs); i++) {
            json_object *d = json_object_array_get_idx(devs, i);
            const char *vid = cuda_str(d, "vendor_id"), *kind = cuda_str(d, "kind"), *drv = cuda_str(d, "driver");
            if (!vid || strcmp(vid, "10de") != 0 || !kind ||
                (strcmp(kind, "compute-gpu") != 0 && strcmp(kind, "accelerator") != 0))
                continue;
            f->nvidia_gpu_present = true;
            if (drv && strcmp(drv, "nvidia") == 0)
                f->nvidia_gpu_bound = true;
        }
    } else {
        report_section_add_note(sec, "no PCI facts (pci probe %s): GPU checks that need them are skipped",
                                pci ? report_status_name(pci->status) : "did not run");
    }
    json_object *mods = cuda_get(pd, "modules");
    f->nvidia_module_loaded = cuda_bool(cuda_get(mods, "nvidia"), "loaded") == 1;
    *uvm_loaded = cuda_bool(cuda_get(mods, "nvidia_uvm"), "loaded");
    const char *kv = cuda_str(cuda_get(pd, "nvidia"), "kernel_module_version");
    if (kv) {
        snprintf(f->kernel_driver_version, sizeof(f->kernel_driver_version), "%s", kv);
    } else if (!json_object_is_type(mods, json_type_object)) {
        /* pci did not look at the kernel (a --pci-dump run): read the version file ourselves. */
        char *text = NULL;
        if (hostfs_read_file(ctx->fs, "/proc/driver/nvidia/version", 64 * 1024, &text, NULL) == 0) {
            int open_mod = -1;
            char *v = pci_nvidia_parse_version(text, &open_mod);
            if (v) {
                snprintf(f->kernel_driver_version, sizeof(f->kernel_driver_version), "%s", v);
                f->nvidia_module_loaded = true;
            }
            free(v);
            free(text);
        }
    }
    return devs;
}

/* The node PATH as the pci section saw it: 1 present, 0 absent, -1 unknown (then asks hostfs). */
static int cuda_node_present(struct probe_ctx *ctx, const char *path)
{
    struct report_section *pci = report_find_section(ctx->report, "pci");
    json_object *nodes = pci && pci->status == REPORT_STATUS_OK ? cuda_get(pci->data, "nodes") : NULL;
    for (size_t i = 0; nodes && json_object_is_type(nodes, json_type_array) && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        const char *p = cuda_str(n, "path");
        if (p && strcmp(p, path) == 0)
            return cuda_bool(n, "present");
    }
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

/* ---- the driver child's result ------------------------------------------------------------------ */

static const char *cuda_compute_mode_name(int64_t m)
{
    /* cuda.h, enum CUcomputemode_enum (1, exclusive thread, was removed in CUDA 8 but may be reported). */
    switch (m) {
    case 0:
        return "default";
    case 1:
        return "exclusive-thread";
    case 2:
        return "prohibited";
    case 3:
        return "exclusive-process";
    default:
        return NULL;
    }
}

/* Turn the child's device object into the report's (normalised bus id tied to the pci section). */
static json_object *cuda_device_json(json_object *cd, json_object *pci_devs)
{
    json_object *o = cuda_clean(cd, 0);
    char addr[48] = "";
    const char *bus = cuda_str(o, "pci_bus_id");
    if (cuda_driver_normalize_busid(bus, addr, sizeof(addr)) != 0 &&
        cuda_driver_normalize_busid(cuda_str(o, "pci_from_attributes"), addr, sizeof(addr)) != 0)
        addr[0] = '\0';
    json_object_object_del(o, "pci_from_attributes");
    json_object_object_add(o, "pci_address", addr[0] ? json_object_new_string(addr) : NULL);
    bool matched = false;
    for (size_t i = 0; addr[0] && pci_devs && i < json_object_array_length(pci_devs); i++) {
        const char *a = cuda_str(json_object_array_get_idx(pci_devs, i), "address");
        matched |= a && strcmp(a, addr) == 0;
    }
    json_object_object_add(o, "on_pci_bus", pci_devs && addr[0] ? json_object_new_boolean(matched) : NULL);
    int64_t ma = cuda_int(o, "cc_major", -1), mi = cuda_int(o, "cc_minor", -1);
    if (ma >= 0 && mi >= 0 && ma < 100 && mi < 100) {
        char cc[16];
        snprintf(cc, sizeof(cc), "%d.%d", (int)ma, (int)mi);
        json_object_object_add(o, "compute_capability", json_object_new_string(cc));
    } else {
        json_object_object_add(o, "compute_capability", NULL);
    }
    int64_t cm = cuda_int(o, "compute_mode", -1);
    const char *cmn = cuda_compute_mode_name(cm);
    json_object_object_add(o, "compute_mode", cmn ? json_object_new_string(cmn) : NULL);
    int64_t ecc = cuda_int(o, "ecc_enabled", -1), integ = cuda_int(o, "integrated", -1),
            mgb = cuda_int(o, "multi_gpu_board", -1);
    json_object_object_add(o, "ecc_enabled", ecc >= 0 ? json_object_new_boolean(ecc != 0) : NULL);
    json_object_object_add(o, "integrated", integ >= 0 ? json_object_new_boolean(integ != 0) : NULL);
    json_object_object_add(o, "multi_gpu_board", mgb >= 0 ? json_object_new_boolean(mgb != 0) : NULL);
    return o;
}

/* The subject of a finding about device D: its PCI address, else "CUDA device N". */
static const char *cuda_dev_subject(json_object *d, char *buf, size_t len)
{
    const char *a = cuda_str(d, "pci_address");
    if (a)
        return a;
    snprintf(buf, len, "CUDA device %lld", (long long)cuda_int(d, "ordinal", 0));
    return buf;
}

/* How the library was found, for people: "LD_LIBRARY_PATH entry /x" or "ld.so.cache (/usr/lib/...)". */
static char *cuda_found_via_text(json_object *lib)
{
    const char *via = cuda_str(lib, "found_via"), *entry = cuda_str(lib, "search_entry");
    if (via && strcmp(via, "LD_LIBRARY_PATH") == 0)
        return str_printf("the LD_LIBRARY_PATH entry %s", entry ? entry : "?");
    return str_printf("the dynamic linker's cache or default directories (ld.so.cache, directory %s)",
                      entry ? entry : "?");
}

struct cuda_run {
    struct probe_ctx *ctx;
    struct report_section *sec;
    struct cuda_facts facts;
    json_object *pci_devs; /* borrowed */
    bool pci_known;
    int uvm_loaded;
};

/* An NVIDIA GPU without the nvidia module while Secure Boot is on: the module was refused. */
static void cuda_findings_secure_boot(struct cuda_run *cr)
{
    if (!cr->facts.nvidia_gpu_present || cr->facts.nvidia_module_loaded || !cr->pci_known)
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

static void cuda_findings_no_library(struct cuda_run *cr, json_object *drv)
{
    struct report *r = cr->ctx->report;
    const char *err = cuda_str(drv, "dlopen_error");
    bool not_found = !err || strstr(err, "cannot open shared object file") != NULL;
    struct report_finding *f;
    if (!not_found && (cr->facts.nvidia_gpu_present || !cr->pci_known)) {
        f = report_add_finding(r, "cuda.library-unusable", "libcuda.so.1", "libcuda.so.1 cannot be loaded: %s", err);
        report_finding_add_evidence(f, "dlopen(libcuda.so.1)", "%s", err);
        return;
    }
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
    } else {
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

/* The findings of a library that loaded: stub, compat, version mismatch, cuInit codes, devices. */
static void cuda_findings_loaded(struct cuda_run *cr, json_object *drv, json_object *devices)
{
    struct report *r = cr->ctx->report;
    struct report_finding *f;
    json_object *lib = cuda_get(drv, "library");
    const char *path = cuda_str(lib, "path");
    const char *loaded = cuda_str(lib, "loaded_from");
    const char *libver = cuda_str(lib, "version");
    const char *kver = cr->facts.kernel_driver_version[0] ? cr->facts.kernel_driver_version : NULL;
    int code = cr->facts.cuinit_result;
    const char *cname = cuda_str(cuda_get(drv, "cuinit"), "name");
    bool stub = cuda_bool(lib, "stub") == 1, compat = cuda_bool(lib, "compat") == 1;
    char *via = cuda_found_via_text(lib);
    const char *entry = cuda_str(lib, "search_entry");
    bool by_ldlp = cuda_str(lib, "found_via") && strcmp(cuda_str(lib, "found_via"), "LD_LIBRARY_PATH") == 0;

    if (cuda_str(drv, "missing_symbol")) {
        f = report_add_finding(r, "cuda.library-unusable", path ? path : "libcuda.so.1",
                               "%s has no %s: it is not a CUDA driver library, or a very old one",
                               path ? path : "libcuda.so.1", cuda_str(drv, "missing_symbol"));
        report_finding_add_evidence(f, "dlsym", "%s missing", cuda_str(drv, "missing_symbol"));
        free(via);
        return;
    }
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
    free(via);
    /* A cuInit failure not explained above gets the finding its code calls for. */
    bool explained = code < 0 || code == CUDA_SUCCESS || stub || code == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE ||
                     code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
    if (explained) {
        /* nothing more to say about cuInit */
    } else if (!cr->facts.nvidia_gpu_present && cr->pci_known) {
        /* No NVIDIA GPU: whatever cuInit says (100, 999...), nothing here is broken. */
        f = report_add_finding(r, "cuda.no-gpu", NULL,
                               "libcuda %s is installed but there is no NVIDIA GPU (cuInit: %s)", libver ? libver : "",
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
    }
    if (code != CUDA_SUCCESS)
        return;

    /* cuInit succeeded: the devices. */
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
        const char *cm = cuda_str(d, "compute_mode");
        char sb[48];
        if (cm && strcmp(cm, "prohibited") == 0) {
            f = report_add_finding(r, "cuda.compute-prohibited", cuda_dev_subject(d, sb, sizeof(sb)),
                                   "CUDA device %lld (%s) is in compute mode Prohibited: no program can create a "
                                   "context on it",
                                   (long long)cuda_int(d, "ordinal", 0), cuda_str(d, "name") ? cuda_str(d, "name") : "?");
            report_finding_add_evidence(f, "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE", "2 (prohibited)");
            report_finding_set_hint(f, "Set the default compute mode: `sudo nvidia-smi -i %lld -c DEFAULT` (as root; "
                                       "it does not survive a reboot unless set at boot).",
                                    (long long)cuda_int(d, "ordinal", 0));
        }
    }
    /* Every NVIDIA GPU bound to nvidia should be a CUDA device unless CUDA_VISIBLE_DEVICES selects. */
    if (cvd || nd == 0)
        return;
    for (size_t i = 0; cr->pci_devs && i < json_object_array_length(cr->pci_devs); i++) {
        json_object *p = json_object_array_get_idx(cr->pci_devs, i);
        const char *vid = cuda_str(p, "vendor_id"), *drvn = cuda_str(p, "driver"), *addr = cuda_str(p, "address");
        if (!vid || strcmp(vid, "10de") != 0 || !drvn || strcmp(drvn, "nvidia") != 0 || !addr)
            continue;
        bool seen = false;
        for (size_t j = 0; j < nd && !seen; j++) {
            const char *a = cuda_str(json_object_array_get_idx(devices, j), "pci_address");
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

/* Run the driver child's outcome into data["driver"] / data["devices"] and the findings. */
static void cuda_driver_report(struct cuda_run *cr, struct isolate_result *res)
{
    struct report *r = cr->ctx->report;
    json_object *data = cr->sec->data;
    json_object *drv = json_object_new_object();
    json_object *devices = json_object_new_array();
    json_object *child = res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object)
                             ? cuda_clean(res->value, 0)
                             : NULL;
    const char *status;
    if (res->status == ISOLATE_SPAWN_FAILED) {
        status = "failed";
        if (!res->budget_spent) /* no time left: core.timeout-spent says so */
            report_add_finding(r, "core.isolated-child-failed", "cuda", "The CUDA driver child could not start: %s",
                               res->detail ? res->detail : "fork failed");
    } else if (res->status == ISOLATE_TIMEOUT) {
        status = "timeout";
        struct report_finding *f = report_add_finding(r, "cuda.driver-hang", "libcuda.so.1",
                                                      "Loading libcuda.so.1 and cuInit(0) %s",
                                                      res->detail ? res->detail : "timed out");
        if (res->stderr_tail && *res->stderr_tail)
            report_finding_add_evidence(f, "output", "%s", res->stderr_tail);
    } else if (!child) {
        status = "crash";
        struct report_finding *f = report_add_finding(r, "cuda.driver-crash", "libcuda.so.1",
                                                      "Loading libcuda.so.1 and cuInit(0) failed: %s",
                                                      res->detail ? res->detail : isolate_status_name(res->status));
        if (res->stderr_tail && *res->stderr_tail)
            report_finding_add_evidence(f, "output", "%s", res->stderr_tail);
    } else {
        json_object *lib = cuda_get(child, "library");
        if (!lib || !json_object_is_type(lib, json_type_object))
            status = "no-library";
        else if (cuda_str(child, "missing_symbol"))
            status = "missing-symbols";
        else if (cuda_int(cuda_get(child, "cuinit"), "code", -1) == CUDA_SUCCESS)
            status = "ok";
        else
            status = "init-failed";
    }
    json_object_object_add(drv, "status", json_object_new_string(status));
    json_object_object_add(drv, "detail", res->status == ISOLATE_OK || !res->detail ? NULL : json_object_new_string(res->detail));
    static const char *const keys[] = {"library", "dlopen_error", "missing_symbol", "cuinit", "driver_version",
                                       "device_count", "has_compute", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_object *v = cuda_get(child, keys[i]);
        json_object_object_add(drv, keys[i], v ? json_object_get(v) : NULL);
    }
    int64_t dv = cuda_int(child, "driver_version", -1);
    if (dv > 0 && dv < 1000000) {
        char b[32];
        snprintf(b, sizeof(b), "%d.%d", (int)(dv / 1000), (int)(dv % 1000) / 10);
        json_object_object_add(drv, "cuda_version", json_object_new_string(b));
    } else {
        json_object_object_add(drv, "cuda_version", NULL);
    }
    json_object_object_add(drv, "kernel_module_version",
                           cr->facts.kernel_driver_version[0] ? json_object_new_string(cr->facts.kernel_driver_version)
                                                              : NULL);
    json_object_object_add(drv, "elapsed_ms", json_object_new_double(res->elapsed_ms >= 0 ? res->elapsed_ms : 0));
    if (res->stderr_tail && *res->stderr_tail)
        json_object_object_add(drv, "output", json_object_new_string(res->stderr_tail));

    json_object *cdevs = cuda_get(child, "devices");
    for (size_t i = 0; cdevs && json_object_is_type(cdevs, json_type_array) && i < json_object_array_length(cdevs); i++) {
        json_object *d = json_object_array_get_idx(cdevs, i);
        if (json_object_is_type(d, json_type_object))
            json_object_array_add(devices, cuda_device_json(d, cr->pci_devs));
    }
    cr->facts.cuinit_result = (int)cuda_int(cuda_get(child, "cuinit"), "code", -1);
    cr->facts.driver_cuda_version = (int)(dv > 0 && dv < 1000000 ? dv : -1);
    cr->facts.device_count = cr->facts.cuinit_result == CUDA_SUCCESS ? (int)json_object_array_length(devices) : -1;

    json_object_object_add(data, "driver", drv);
    json_object_object_add(data, "devices", devices);
    cuda_findings_secure_boot(cr);
    if (child && strcmp(status, "no-library") == 0)
        cuda_findings_no_library(cr, drv);
    else if (child)
        cuda_findings_loaded(cr, drv, devices);
    json_object_put(child);
}

/* ---- the smoke children ------------------------------------------------------------------------ */

static void cuda_smoke_run(struct cuda_run *cr)
{
    json_object *devices = cuda_get(cr->sec->data, "devices");
    size_t nd = devices ? json_object_array_length(devices) : 0;
    const char *why = NULL;
    if (cr->ctx->opts->smoke == CLI_SMOKE_NONE)
        why = "--no-smoke";
    else if (cr->facts.cuinit_result != CUDA_SUCCESS)
        why = "the CUDA driver did not initialise";
    else if (nd == 0)
        why = "no CUDA device";
    else if (probe_budget_ms(cr->ctx) <= 0) /* core.timeout-spent names it */
        why = "the run's --timeout was already spent";
    if (why) {
        /* data["smoke"] is the smoke part's array (one entry per GPU tested): empty, and why. */
        json_object_object_add(cr->sec->data, "smoke", json_object_new_array());
        json_object_object_add(cr->sec->data, "smoke_not_run", json_object_new_string(why));
        return;
    }
    struct cuda_smoke_args *args = calloc(nd, sizeof(*args));
    struct isolate_job *jobs = calloc(nd, sizeof(*jobs));
    struct isolate_result *results = calloc(nd, sizeof(*results));
    if (!args || !jobs || !results) {
        free(args);
        free(jobs);
        free(results);
        report_section_add_note(cr->sec, "CUDA smoke test skipped: out of memory");
        return;
    }
    for (size_t i = 0; i < nd; i++) {
        args[i].ordinal = (int)cuda_int(json_object_array_get_idx(devices, i), "ordinal", (int64_t)i);
        args[i].n = (int)cr->ctx->opts->smoke_size;
        jobs[i].fn = cuda_smoke_child;
        jobs[i].arg = &args[i];
    }
    isolate_run_many(jobs, nd, probe_budget_ms(cr->ctx));
    for (size_t i = 0; i < nd; i++)
        results[i] = jobs[i].result;
    cuda_smoke_report(cr->ctx, cr->sec, args, results, nd);
    for (size_t i = 0; i < nd; i++)
        isolate_result_clear(&results[i]);
    free(results);
    free(jobs);
    free(args);
}

/* ---- summary ------------------------------------------------------------------------------------ */

/* The smoke status of device ORDINAL from data["smoke"] (one entry per GPU tested), or NULL. */
static const char *cuda_smoke_status(json_object *data, int64_t ordinal)
{
    json_object *sd = cuda_get(data, "smoke");
    for (size_t i = 0; sd && json_object_is_type(sd, json_type_array) && i < json_object_array_length(sd); i++) {
        json_object *d = json_object_array_get_idx(sd, i);
        if (cuda_int(d, "ordinal", -1) == ordinal)
            return cuda_str(d, "status");
    }
    return NULL;
}

static void cuda_summary(struct cuda_run *cr)
{
    struct report_section *sec = cr->sec;
    json_object *data = sec->data, *drv = cuda_get(data, "driver"), *lib = cuda_get(drv, "library");
    const char *status = cuda_str(drv, "status");
    const char *cname = cuda_str(cuda_get(drv, "cuinit"), "name");
    const char *path = cuda_str(lib, "path");
    const char *cv = cuda_str(drv, "cuda_version");
    json_object *devices = cuda_get(data, "devices");
    size_t nd = devices ? json_object_array_length(devices) : 0;
    if (!status || strcmp(status, "no-library") == 0) {
        bool info = report_find_finding(cr->ctx->report, "cuda.no-driver", NULL) != NULL ||
                    (!cr->facts.nvidia_gpu_present && cr->pci_known);
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR, "CUDA", "no NVIDIA driver: libcuda.so.1 %s%s",
                                cuda_str(drv, "dlopen_error") && !strstr(cuda_str(drv, "dlopen_error"), "cannot open shared object file")
                                    ? "cannot be loaded" : "not found",
                                info ? " (no NVIDIA GPU)" : "");
    } else if (strcmp(status, "crash") == 0 || strcmp(status, "timeout") == 0 || strcmp(status, "failed") == 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "CUDA", "driver child %s: %s", status,
                                cuda_str(drv, "detail") ? cuda_str(drv, "detail") : "no detail");
    } else if (strcmp(status, "ok") != 0) {
        bool info = !cr->facts.nvidia_gpu_present && cr->pci_known &&
                    !report_find_finding(cr->ctx->report, "cuda.stub-library", NULL);
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR, "CUDA", "cuInit failed: %s (%lld), libcuda %s",
                                cname ? cname : "unknown", (long long)cuda_int(cuda_get(drv, "cuinit"), "code", -1),
                                path ? path : "?");
    } else {
        const char *kv = cuda_str(lib, "version");
        /* cuInit worked, but a driver-level finding (a version mismatch...) still marks the line. */
        enum report_mark mark = nd ? REPORT_MARK_OK : REPORT_MARK_WARN;
        for (size_t i = 0; i < cr->ctx->report->n_findings; i++) {
            const struct report_finding *f = &cr->ctx->report->findings[i];
            if (str_starts_with(f->id, "cuda.") && f->severity == REPORT_SEV_ERROR &&
                strcmp(f->id, "cuda.compute-prohibited") != 0)
                mark = REPORT_MARK_ERROR;
        }
        report_section_add_line(sec, mark, "CUDA", "driver %s, CUDA %s, %zu device%s (%s)",
                                kv ? kv : "of unknown version", cv ? cv : "?", nd, nd == 1 ? "" : "s", path ? path : "?");
    }
    for (size_t i = 0; i < nd; i++) {
        json_object *d = json_object_array_get_idx(devices, i);
        char label[32], mem[32] = "memory ?";
        int64_t ord = cuda_int(d, "ordinal", (int64_t)i);
        snprintf(label, sizeof(label), "CUDA %lld", (long long)ord);
        int64_t bytes = cuda_int(d, "memory_bytes", -1);
        if (bytes >= 0)
            snprintf(mem, sizeof(mem), "%.1f GiB", (double)bytes / (1024.0 * 1024.0 * 1024.0));
        const char *cc = cuda_str(d, "compute_capability"), *addr = cuda_str(d, "pci_address");
        const char *smoke = cuda_smoke_status(data, ord);
        const char *cm = cuda_str(d, "compute_mode");
        bool bad = (smoke && strcmp(smoke, "pass") != 0) || (cm && strcmp(cm, "prohibited") == 0);
        report_section_add_line(sec, bad ? REPORT_MARK_ERROR : REPORT_MARK_OK, label,
                                "%s%s%s, compute capability %s, %s, %lld SMs%s%s",
                                cuda_str(d, "name") ? cuda_str(d, "name") : "unnamed device", addr ? " " : "",
                                addr ? addr : "", cc ? cc : "?", mem, (long long)cuda_int(d, "multiprocessors", -1),
                                smoke ? ", smoke " : "", smoke ? smoke : "");
    }
}

static int cuda_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct cuda_run cr = {.ctx = ctx, .sec = sec};
    cr.pci_devs = cuda_facts_collect(ctx, sec, &cr.facts, &cr.pci_known, &cr.uvm_loaded);

    json_object *env = json_object_new_object();
    for (size_t i = 0; cuda_env_vars[i]; i++) {
        const char *v = getenv(cuda_env_vars[i]);
        if (v) {
            char *s = str_dup(v);
            json_object_object_add(env, cuda_env_vars[i], json_object_new_string(s ? str_sanitize(s) : ""));
            free(s);
        }
    }
    json_object_object_add(sec->data, "environment", env);

    /* One batch: the driver API and NVML children side by side (no CUDA library in this process). */
    struct isolate_job jobs[2] = {
        {.fn = cuda_driver_child, .arg = NULL},
        {.fn = cuda_nvml_child, .arg = NULL},
    };
    isolate_run_many(jobs, 2, probe_budget_ms(ctx));
    cuda_driver_report(&cr, &jobs[0].result);
    cr.facts.nvidia_module_loaded |= cr.facts.kernel_driver_version[0] != '\0';
    cuda_nvml_report(ctx, sec, &jobs[1].result, &cr.facts);
    isolate_result_clear(&jobs[0].result);
    isolate_result_clear(&jobs[1].result);

    cuda_libs_report(ctx, sec, &cr.facts);
    cuda_smoke_run(&cr);
    cuda_summary(&cr);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

static const char *const cuda_deps[] = {"pci", NULL};

const struct probe probe_cuda = {
    .name = "cuda",
    .title = "NVIDIA CUDA: driver API, NVML, the libraries frameworks load, a CUDA smoke test",
    .needs_live = true,
    .deps = cuda_deps,
    .checks = cuda_driver_checks,
    .n_checks = sizeof(cuda_driver_checks) / sizeof(cuda_driver_checks[0]),
    .check_sets = cuda_check_sets,
    .run = cuda_run,
    .print_text = cuda_print_text,
};
