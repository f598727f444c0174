/* pci_binding.c: why a GPU has the driver it has: nouveau's causes in order, nova_core and drivers gpucheckup does not know. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci_internal.h"
#include "strutil.h"
#include "vendor.h"

const struct check pci_binding_checks[] = {
    /* modprobe.d(5) is read from the root filesystem; a module the initramfs loads is loaded before it, by the
     * initramfs's own copy of modprobe.d (update-initramfs(8), dracut(8): rebuilt only when asked). */
    {"drv.nouveau-blacklist-ignored", REPORT_SEV_ERROR,
     "nouveau drives an NVIDIA GPU although a blacklist names it: the blacklist did not take effect",
     "Rebuild the initramfs so it carries the blacklist (`sudo update-initramfs -u`; dracut: `sudo dracut -f`, or "
     "boot with `rd.driver.blacklist=nouveau modprobe.blacklist=nouveau`), then `sudo reboot`; `lspci -k` should "
     "then say \"Kernel driver in use: nvidia\".", CHECK_LAYER_KERNEL},
    /* nova_core (drivers/gpu/nova-core, Linux 6.15 and later) binds GSP-based NVIDIA GPUs (Turing and later)
     * and offers no compute API of its own: CUDA, NVIDIA's OpenCL and Vulkan need the nvidia module. */
    {"pci.nova-core-bound", REPORT_SEV_ERROR,
     "An NVIDIA GPU is driven by nova_core (Linux's Rust driver): no CUDA, no NVIDIA OpenCL or Vulkan",
     "Keep nova_core off the GPU: `echo blacklist nova_core | sudo tee /etc/modprobe.d/blacklist-nova.conf`, "
     "`sudo update-initramfs -u`, install the NVIDIA driver and reboot (now: unbind it through "
     "/sys/bus/pci/drivers/nova_core/unbind, then `sudo modprobe nvidia`).", CHECK_LAYER_KERNEL},
    {"pci.unknown-driver", REPORT_SEV_WARNING,
     "A GPU is bound to a kernel driver gpucheckup does not know: its vendor's compute stack needs another",
     "`lspci -k -s ADDRESS` shows the driver in use and the candidates; unbind it and load the vendor's driver "
     "(nvidia, amdgpu, i915 or xe), and blacklist the other if it takes the GPU at boot.", CHECK_LAYER_KERNEL},
};
const size_t pci_binding_n_checks = sizeof(pci_binding_checks) / sizeof(pci_binding_checks[0]);

/* The EFI variable that says whether Secure Boot is on (UEFI spec, global variable GUID): 4 bytes of attributes,
 * then the value (1 = on). The cuda probe reads the same one for cuda.secure-boot-module. */
#define PCI_SECUREBOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

static int pci_binding_secure_boot(const struct pci_state *st)
{
    char *buf = NULL;
    size_t len = 0;
    if (hostfs_read_file(st->ctx->fs, PCI_SECUREBOOT_VAR, 64, &buf, &len) != 0)
        return -1;
    int v = len >= 5 ? (unsigned char)buf[4] == 1 : -1;
    free(buf);
    return v;
}

bool pci_binding_is_vm_driver(const char *driver)
{
    /* vfio-pci and its variant drivers (nvgrace_gpu_vfio_pci...), pci-stub, Xen's pciback */
    return strstr(driver, "vfio") != NULL || strcmp(driver, "pci-stub") == 0 || strcmp(driver, "pciback") == 0 ||
           strcmp(driver, "xen-pciback") == 0;
}

/* An NVIDIA GPU with no driver bound and the nvidia module not loaded: a blacklist or a module missing
 * for the running kernel is a finding of its own (added once, for every such GPU), the cause of their
 * pci.no-driver. Returns its ID, or NULL. Call it before adding pci.no-driver: adding a finding moves
 * the report's findings. */
const char *pci_nvidia_why_unbound(struct pci_state *st)
{
    struct report *r = st->ctx->report;
    const struct pci_nvkmod *k = &st->nvkmod;
    const char *user = st->n_nvlibs > 0 ? st->nvlibs[0].version : NULL;
    struct report_finding *f;
    if (!k->checked)
        return NULL;
    if (k->n_blocked_by > 0) {
        f = report_find_finding(r, "drv.nvidia-blacklisted", "nvidia");
        if (!f) {
            f = report_add_finding(r, "drv.nvidia-blacklisted", "nvidia",
                                   "The nvidia kernel module is blocked from loading (%s), so no NVIDIA GPU gets "
                                   "its driver",
                                   k->blocked_by[0]);
            for (size_t i = 0; i < k->n_blocked_by; i++) {
                /* "FILE:LINE: text": the place as the source, the line as the value */
                const char *sep = strstr(k->blocked_by[i], ": ");
                char src[512];
                snprintf(src, sizeof(src), "%.*s", sep ? (int)(sep - k->blocked_by[i]) : 0, k->blocked_by[i]);
                report_finding_add_evidence(f, src, "%s", sep ? sep + 2 : k->blocked_by[i]);
            }
        }
        return "drv.nvidia-blacklisted";
    }
    bool built_elsewhere = false;
    for (size_t i = 0; i < k->n_dkms; i++)
        built_elsewhere |= k->dkms[i].n_kernels > 0;
    if (k->kernel && k->modules_dep >= 0 && k->n_files == 0 && (user || k->n_dkms > 0)) {
        f = report_find_finding(r, "drv.nvidia-not-built", "nvidia");
        if (!f) {
            char built[512] = "";
            if (built_elsewhere) {
                const struct pci_nvkmod_dkms *d = &k->dkms[0];
                size_t at = (size_t)snprintf(built, sizeof(built), "; DKMS built %s %s for", d->module ? d->module : "",
                                             d->version ? d->version : "");
                for (size_t j = 0; j < d->n_kernels && at < sizeof(built); j++)
                    at += (size_t)snprintf(built + at, sizeof(built) - at, "%s %s", j ? "," : "", d->kernels[j]);
                if (at < sizeof(built))
                    snprintf(built + at, sizeof(built) - at, " only");
            } else if (k->n_dkms > 0) {
                snprintf(built, sizeof(built), "; DKMS has %s %s but built it for no kernel",
                         k->dkms[0].module ? k->dkms[0].module : "", k->dkms[0].version ? k->dkms[0].version : "");
            }
            f = report_add_finding(r, "drv.nvidia-not-built", "nvidia",
                                   "The NVIDIA driver%s%s is installed, but no nvidia kernel module exists for the "
                                   "running kernel %s%s",
                                   user ? " " : "", user ? user : "", k->kernel, built);
            report_finding_add_evidence(f, "/proc/sys/kernel/osrelease", "%s", k->kernel);
            char dep[512];
            snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", k->kernel);
            report_finding_add_evidence(f, dep, "%s", k->modules_dep ? "no nvidia module listed" : "absent");
            if (user)
                report_finding_add_evidence(f, st->nvlibs[0].path, "%s", user);
            if (!built_elsewhere && k->n_dkms == 0)
                report_finding_set_hint(f, "Install the kernel half of the driver%s%s for this kernel (Debian: `sudo "
                                           "apt install nvidia-kernel-dkms linux-headers-$(uname -r)`; Ubuntu: `sudo "
                                           "apt install linux-modules-nvidia-%.*s-$(uname -r)`), then `sudo modprobe "
                                           "nvidia`.",
                                        user ? ", version " : "", user ? user : "",
                                        user ? (int)strcspn(user, ".") : 3, user ? user : "<branch>");
        }
        return "drv.nvidia-not-built";
    }
    return NULL;
}

/* drv.nouveau-blacklist-ignored, added once; returns its ID. */
static const char *pci_binding_blacklist_ignored(struct pci_state *st)
{
    struct report *r = st->ctx->report;
    const struct pci_nvkmod *k = &st->nvkmod;
    if (report_find_finding(r, "drv.nouveau-blacklist-ignored", "nouveau"))
        return "drv.nouveau-blacklist-ignored";
    const char *first = k->n_nouveau_blocked ? k->nouveau_blocked[0] : k->nouveau_cmdline[0];
    struct report_finding *f =
        report_add_finding(r, "drv.nouveau-blacklist-ignored", "nouveau",
                           "nouveau is loaded and drives the GPU although it is blacklisted (%s): the blacklist "
                           "did not take effect, most often because the initramfs was built without it",
                           first);
    for (size_t i = 0; i < k->n_nouveau_blocked + k->n_nouveau_cmdline; i++) {
        const char *b = i < k->n_nouveau_blocked ? k->nouveau_blocked[i] : k->nouveau_cmdline[i - k->n_nouveau_blocked];
        const char *sep = strstr(b, ": ");
        char src[512];
        snprintf(src, sizeof(src), "%.*s", sep ? (int)(sep - b) : 0, b);
        report_finding_add_evidence(f, src, "%s", sep ? sep + 2 : b);
    }
    report_finding_add_evidence(f, "/proc/modules", "nouveau");
    if (k->n_nouveau_blocked == 0)
        report_finding_set_hint(f, "The blacklist is only on the kernel command line%s: also write it where modprobe "
                                   "reads it after boot (`echo blacklist nouveau | sudo tee "
                                   "/etc/modprobe.d/blacklist-nouveau.conf`), `sudo update-initramfs -u` (dracut: "
                                   "`sudo dracut -f`) and reboot.",
                                strstr(first, "rd.driver.blacklist=") ? " as rd.driver.blacklist=, which only the "
                                                                        "initramfs reads"
                                                                      : "");
    return "drv.nouveau-blacklist-ignored";
}

const char *pci_binding_nouveau_cause(struct pci_state *st, char **hint)
{
    const struct pci_nvkmod *k = &st->nvkmod;
    const char *user = st->n_nvlibs > 0 ? st->nvlibs[0].version : NULL;
    bool nv_loaded = st->modules[pci_module_index("nvidia")].loaded == 1;
    *hint = NULL;
    if (!k->checked)
        return NULL;
    /* 1. no nvidia module can load (blacklisted, or none for the running kernel): nothing else matters first */
    const char *cause = nv_loaded ? NULL : pci_nvidia_why_unbound(st);
    if (cause)
        return cause;
    bool blacklisted = k->n_nouveau_blocked + k->n_nouveau_cmdline > 0;
    /* 2. the module is there for this kernel but not loaded, with Secure Boot on: refused unsigned. The cuda
     * probe's cuda.secure-boot-module (firmware layer) is the cause the doctor links; this hint says it alone. */
    if (!nv_loaded && k->n_files > 0 && pci_binding_secure_boot(st) == 1) {
        *hint = str_printf("Secure Boot is on and the nvidia module for this kernel (%s) is not loaded: the kernel "
                           "refuses it unsigned, and nouveau took the GPU. Sign it with a key enrolled in MOK (`sudo "
                           "mokutil --import /var/lib/dkms/mok.pub`, reboot, enrol it) or turn Secure Boot off%s.",
                           k->files[0], blacklisted ? "" : "; then blacklist nouveau (`echo blacklist nouveau | sudo "
                                                           "tee /etc/modprobe.d/blacklist-nouveau.conf`, `sudo "
                                                           "update-initramfs -u`) and reboot");
        return NULL;
    }
    /* 3. a blacklist exists but nouveau loaded all the same: the initramfs loads it */
    if (blacklisted)
        return pci_binding_blacklist_ignored(st);
    /* 4. the NVIDIA driver is installed, nothing keeps nouveau away */
    if (user || k->n_files > 0)
        *hint = str_printf("The NVIDIA driver%s%s is installed, but nothing keeps nouveau off the GPU: `echo "
                           "blacklist nouveau | sudo tee /etc/modprobe.d/blacklist-nouveau.conf`, `sudo "
                           "update-initramfs -u` (dracut: `sudo dracut -f`), then `sudo reboot`.",
                           user ? " " : "", user ? user : "");
    return NULL;
}

/* The compute stacks a vendor's GPU needs its own driver for, and that driver's names. */
static bool pci_binding_vendor(int vendor, const char **stacks, const char **wants)
{
    switch (vendor) {
    case VENDOR_PCI_NVIDIA:
        *stacks = "CUDA, NVIDIA's OpenCL and Vulkan";
        *wants = "nvidia";
        return true;
    case VENDOR_PCI_AMD:
        *stacks = "ROCm (HIP), OpenCL and Vulkan";
        *wants = "amdgpu";
        return true;
    case VENDOR_PCI_INTEL:
        *stacks = "Level Zero, OpenCL and Vulkan";
        *wants = "i915 or xe";
        return true;
    default:
        return false;
    }
}

static bool pci_binding_known(int vendor, const char *driver)
{
    /* gma500_gfx: Intel's PowerVR-based GMA 500/600/3600 (Atom), which no Intel compute stack drives: its own
     * driver is the right one, nothing to fix */
    static const char *const known[] = {"nvidia", "nouveau", "nova_core", "amdgpu", "radeon",    "i915",
                                        "xe",     "gma500_gfx", NULL};
    (void)vendor;
    for (size_t i = 0; known[i]; i++)
        if (strcmp(driver, known[i]) == 0)
            return true;
    return pci_binding_is_vm_driver(driver);
}

void pci_binding_other_driver(struct pci_state *st, const struct pci_gpu *g, const char *name, const char *src)
{
    struct report *r = st->ctx->report;
    const char *stacks, *wants;
    if (!g->driver || g->kind != PCI_KIND_COMPUTE || !pci_binding_vendor(g->vendor, &stacks, &wants))
        return;
    if (g->vendor == VENDOR_PCI_NVIDIA && strcmp(g->driver, "nova_core") == 0) {
        const char *cause = st->modules[pci_module_index("nvidia")].loaded != 1 ? pci_nvidia_why_unbound(st) : NULL;
        struct report_finding *f = report_add_finding(r, "pci.nova-core-bound", g->addr,
                                                      "%s %s is driven by nova_core (Linux's Rust driver, no compute "
                                                      "API): %s need the nvidia driver",
                                                      g->addr, name, stacks);
        report_finding_add_evidence(f, src, "nova_core");
        if (cause)
            report_finding_set_cause(f, cause, "nvidia");
        else
            report_finding_set_hint(f, "Keep nova_core off the GPU: `echo blacklist nova_core | sudo tee "
                                       "/etc/modprobe.d/blacklist-nova.conf`, `sudo update-initramfs -u`, install the "
                                       "NVIDIA driver and reboot; now: `echo %s | sudo tee "
                                       "/sys/bus/pci/drivers/nova_core/unbind`, then `sudo modprobe nvidia`.",
                                    g->addr);
        return;
    }
    if (pci_binding_known(g->vendor, g->driver))
        return;
    struct report_finding *f = report_add_finding(r, "pci.unknown-driver", g->addr,
                                                  "%s %s is bound to %s, a driver gpucheckup does not know: %s "
                                                  "need %s",
                                                  g->addr, name, g->driver, stacks, wants);
    report_finding_add_evidence(f, src, "%s", g->driver);
    report_finding_set_hint(f, "`lspci -k -s %s` shows the driver in use and the candidates; to compute through %s, "
                               "unbind it (`echo %s | sudo tee /sys/bus/pci/drivers/%s/unbind`), load %s, and "
                               "blacklist %s if it takes the GPU at boot.",
                            g->addr, stacks, g->addr, g->driver, wants, g->driver);
}
