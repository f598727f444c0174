/* pci.c: the pci probe: GPUs on the PCI bus, their kernel drivers and links, modules, device nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci_internal.h"
#include "compute_path.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "vendor.h"
#include "results/result_pci.h"

static const struct check pci_checks[] = {
    {"pci.no-gpu", REPORT_SEV_INFO, "No GPU or accelerator was found on the PCI bus",
     "If this machine should have one: check that it is seated, powered and enabled in the firmware setup, "
     "or passed through to this VM or container; `lspci -nn | grep -Ei 'vga|3d|display|accel'` lists what the "
     "bus shows.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_PLATFORM},
    {"pci.no-driver", REPORT_SEV_ERROR, "A GPU or accelerator has no kernel driver bound: nothing can use it",
     "Install and load the vendor's kernel driver; `lspci -k` shows the candidate modules and `sudo dmesg` why "
     "binding failed.", CHECK_LAYER_KERNEL},
    {"pci.nouveau-bound", REPORT_SEV_ERROR,
     "An NVIDIA GPU is driven by nouveau: no CUDA, and no NVIDIA OpenCL",
     "Install the NVIDIA driver (Debian: `sudo apt install nvidia-driver`, from non-free), which blacklists "
     "nouveau, then `sudo reboot`; `lspci -k` should then say \"Kernel driver in use: nvidia\".", CHECK_LAYER_KERNEL},
    {"pci.radeon-bound", REPORT_SEV_WARNING,
     "An AMD GPU is driven by the legacy radeon driver: compute (ROCm, rusticl) needs amdgpu",
     "For GCN 1.0/1.1 cards, boot with `radeon.si_support=0 amdgpu.si_support=1 radeon.cik_support=0 "
     "amdgpu.cik_support=1` (add them to GRUB_CMDLINE_LINUX in /etc/default/grub, `sudo update-grub`, reboot); "
     "older cards cannot use amdgpu.", CHECK_LAYER_KERNEL},
    {"pci.vfio-bound", REPORT_SEV_WARNING,
     "A GPU is reserved for virtual machines (vfio-pci or pci-stub): this system cannot compute on it",
     "To use it here, remove its ID from `vfio-pci.ids=` (kernel command line or /etc/modprobe.d), "
     "`sudo update-initramfs -u` and reboot.", CHECK_LAYER_KERNEL},
    {"pci.link-degraded", REPORT_SEV_WARNING,
     "A GPU's PCIe link is narrower than the card supports (wrong slot, riser, poor seating)",
     "Move the card to a slot wired for its full width, check riser cables and seating; compare LnkCap with "
     "LnkSta in `sudo lspci -vv -s ADDRESS`.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE},
    {"pci.link-slow", REPORT_SEV_INFO,
     "A GPU's PCIe link runs below its top speed (normal while idle: GPUs slow the link to save power)",
     "Check again under load (`sudo lspci -vv -s ADDRESS | grep LnkSta`); if it stays low, check the slot's "
     "PCIe generation and the firmware's link-speed setting.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE},
    {"pci.not-responding", REPORT_SEV_ERROR,
     "A GPU's configuration space reads all ones: it fell off the bus",
     "Look for the cause with `sudo dmesg | grep -iE 'AER|Xid|fallen off|pcieport'`; a reboot or power cycle "
     "usually brings it back; check power cables and cooling.", CHECK_LAYER_HARDWARE},
    {"drv.nouveau-and-nvidia", REPORT_SEV_WARNING,
     "Both nouveau and nvidia kernel modules are loaded: they fight over NVIDIA GPUs",
     "Blacklist nouveau: `echo blacklist nouveau | sudo tee /etc/modprobe.d/blacklist-nouveau.conf`, then "
     "`sudo update-initramfs -u` and `sudo reboot`.", CHECK_LAYER_KERNEL},
    {"drv.nvidia-version-mismatch", REPORT_SEV_ERROR,
     "The NVIDIA kernel module and userspace libraries differ in version (\"Driver/library version mismatch\")",
     "Reboot to load the kernel module that matches the installed libraries (`sudo reboot`); if it persists, "
     "reinstall the driver so both come from one version (`dpkg -l | grep -i nvidia`).", CHECK_LAYER_KERNEL},
    /* modprobe.d(5): "blacklist" stops loading by alias (the GPU's modalias, how the module loads at
     * boot), "install NAME /bin/false" any loading; modprobe(8) reads modprobe.blacklist= from the
     * kernel command line, the kernel itself module_blacklist= (kernel-parameters.txt). */
    {"drv.nvidia-blacklisted", REPORT_SEV_ERROR,
     "An NVIDIA GPU has no driver bound because the nvidia kernel module is blacklisted",
     "Remove the blacklist line (or the kernel parameter), run `sudo update-initramfs -u` and reboot; "
     "`sudo modprobe nvidia` loads it now.", CHECK_LAYER_KERNEL},
    /* An out-of-tree module is built per kernel (DKMS builds it for each kernel whose headers are
     * installed: dkms(8), "autoinstall"); a new kernel without headers boots with no nvidia module. */
    {"drv.nvidia-not-built", REPORT_SEV_ERROR,
     "The NVIDIA driver is installed, but no nvidia kernel module exists for the running kernel",
     "Install the running kernel's headers and let DKMS build the module: `sudo apt install "
     "linux-headers-$(uname -r)`, then `sudo dkms autoinstall` and `sudo modprobe nvidia` (or boot a kernel "
     "it was built for).", CHECK_LAYER_KERNEL},
    {"dev.missing-node", REPORT_SEV_ERROR,
     "A device node the loaded driver needs is absent (e.g. a container started without GPU access)",
     "In a container, pass the device through (`docker run --gpus all`, or `--device /dev/...`); on the "
     "host, check that udev created it (`sudo udevadm trigger`).", CHECK_LAYER_KERNEL},
    {"dev.no-access", REPORT_SEV_ERROR, "A device node exists but this user cannot open it read-write",
     "Join the node's group (`sudo usermod -aG render $USER`), then log out and in again.", CHECK_LAYER_KERNEL},
};

static const struct check_set pci_check_sets[] = {
    {pci_wsl_checks, &pci_wsl_n_checks},
    {pci_container_checks, &pci_container_n_checks},
    {pci_binding_checks, &pci_binding_n_checks},
    {pci_bar_checks, &pci_bar_n_checks},
    {NULL, NULL},
};

/* ---- findings ------------------------------------------------------------------------------- */

static const char *pci_gpu_label(const struct pci_gpu *g)
{
    return g->device_name ? g->device_name : g->vendor_name ? g->vendor_name : "unknown device";
}

/* The hint of pci.no-driver NO_DRIVER on an NVIDIA GPU when no finding of pci_nvidia_why_unbound explains
 * it: what is there (the module installed for this kernel but not loaded, or the userspace only).
 * Returns whether it set one. */
static bool pci_nvidia_unbound_hint(const struct pci_state *st, struct report_finding *no_driver)
{
    const struct pci_nvkmod *k = &st->nvkmod;
    const char *user = st->n_nvlibs > 0 ? st->nvlibs[0].version : NULL;
    if (!k->checked)
        return false;
    if (k->n_files > 0) {
        report_finding_set_hint(no_driver, "The nvidia module for the running kernel is installed (%s) but not "
                                           "loaded: `sudo modprobe nvidia`; if that fails, `sudo dmesg | grep -i "
                                           "nvrm` says why (\"Key was rejected by service\": Secure Boot refuses "
                                           "the unsigned module).",
                                k->files[0]);
        return true;
    }
    if (user) {
        report_finding_set_hint(no_driver, "The NVIDIA driver's user-space libraries %s are installed; load its "
                                           "kernel module: `sudo modprobe nvidia` (`sudo dmesg | grep -i nvrm` says "
                                           "why it fails).",
                                user);
        return true;
    }
    return false;
}

static void pci_no_driver_hint(struct pci_state *st, struct report_finding *f, const struct pci_gpu *g)
{
    const struct pci_module *m = st->modules;
    int nv = pci_module_index("nvidia"), amd = pci_module_index("amdgpu");
    if (g->vendor == VENDOR_PCI_NVIDIA && m[nv].loaded != 1 && f->caused_by_id) {
        report_finding_set_hint(f, "Fix %s first: the GPU gets its driver once the nvidia module can load.",
                                f->caused_by_id);
        return;
    }
    if (g->vendor == VENDOR_PCI_NVIDIA && m[nv].loaded != 1 && pci_nvidia_unbound_hint(st, f))
        return;
    if (g->vendor == VENDOR_PCI_NVIDIA && m[nv].loaded == 1)
        report_finding_set_hint(f, "The nvidia module is loaded but did not take %s: `sudo dmesg | grep -i nvrm` "
                                   "says why (a GPU too new or too old for this driver version, Secure Boot...).",
                                g->addr);
    else if (g->vendor == VENDOR_PCI_NVIDIA)
        report_finding_set_hint(f, "Install the NVIDIA driver (Debian: `sudo apt install nvidia-driver`, from "
                                   "non-free) or load it: `sudo modprobe nvidia`; `sudo dmesg | grep -i nvrm` "
                                   "says why it failed.");
    else if (g->vendor == VENDOR_PCI_AMD && m[amd].loaded == 1)
        report_finding_set_hint(f, "amdgpu is loaded but did not take %s: `sudo dmesg | grep -i amdgpu` says why "
                                   "(often missing firmware: `sudo apt install firmware-amd-graphics`).",
                                g->addr);
    else if (g->vendor == VENDOR_PCI_AMD)
        report_finding_set_hint(f, "Load amdgpu: `sudo modprobe amdgpu` (firmware: `sudo apt install "
                                   "firmware-amd-graphics`); `sudo dmesg | grep -i amdgpu` says why it failed.");
    else if (g->vendor == VENDOR_PCI_INTEL)
        report_finding_set_hint(f, "Load the Intel GPU driver: `sudo modprobe i915` (or `xe` for newer GPUs); "
                                   "`sudo dmesg | grep -iE 'i915|xe'` says why it failed.");
    else
        report_finding_set_hint(f, "Install and load the vendor's kernel driver; `lspci -k -s %s` lists candidate "
                                   "modules, `sudo dmesg` says why binding failed.",
                                g->addr);
}

static void pci_device_findings(struct pci_state *st, const struct pci_gpu *g)
{
    struct report *r = st->ctx->report;
    char *base = str_printf("/sys/bus/pci/devices/%s", g->addr);
    char src[256];
    struct report_finding *f;
    const char *name = pci_gpu_label(g);
    bool compute = g->kind == PCI_KIND_COMPUTE || g->kind == PCI_KIND_ACCEL;

    if (g->responding == 0) {
        if (g->power_state && strcmp(g->power_state, "D3cold") == 0) {
            report_section_add_note(st->sec, "%s reads all ones but is in D3cold (powered off): not judged", g->addr);
        } else {
            f = report_add_finding(r, "pci.not-responding", g->addr,
                                   "%s (%s) does not answer: its configuration space reads all ones", g->addr,
                                   st->dump ? "in the dump" : name);
            snprintf(src, sizeof(src), "%s/config", st->dump ? st->access_path : base ? base : "");
            report_finding_add_evidence(f, st->dump ? st->access_path : src, "ff ff ff ff (vendor ID 0xffff)");
        }
        free(base);
        return;
    }

    if (compute && g->driver_known && !g->driver) {
        const char *cause = g->vendor == VENDOR_PCI_NVIDIA && st->modules[pci_module_index("nvidia")].loaded != 1
                                ? pci_nvidia_why_unbound(st)
                                : NULL;
        f = report_add_finding(r, "pci.no-driver", g->addr, "%s %s has no kernel driver bound", g->addr, name);
        if (cause)
            report_finding_set_cause(f, cause, "nvidia");
        pci_no_driver_hint(st, f, g);
        snprintf(src, sizeof(src), "%s/driver", base ? base : "");
        report_finding_add_evidence(f, src, "absent");
        if (g->modalias) {
            snprintf(src, sizeof(src), "%s/modalias", base ? base : "");
            report_finding_add_evidence(f, src, "%s", g->modalias);
        }
    }
    if (g->driver) {
        snprintf(src, sizeof(src), "%s/driver", base ? base : "");
        if (g->vendor == VENDOR_PCI_NVIDIA && strcmp(g->driver, "nouveau") == 0) {
            char *hint = NULL;
            const char *cause = pci_binding_nouveau_cause(st, &hint); /* before adding the finding it explains */
            f = report_add_finding(r, "pci.nouveau-bound", g->addr, "%s %s is driven by nouveau", g->addr, name);
            report_finding_add_evidence(f, src, "nouveau");
            if (cause)
                report_finding_set_cause(f, cause, strcmp(cause, "drv.nouveau-blacklist-ignored") == 0 ? "nouveau"
                                                                                                        : "nvidia");
            else if (hint)
                report_finding_set_hint(f, "%s", hint);
            free(hint);
        } else if (g->vendor == VENDOR_PCI_AMD && strcmp(g->driver, "radeon") == 0) {
            f = report_add_finding(r, "pci.radeon-bound", g->addr, "%s %s is driven by radeon, not amdgpu", g->addr,
                                   name);
            report_finding_add_evidence(f, src, "radeon");
        } else if (compute && pci_binding_is_vm_driver(g->driver)) {
            f = report_add_finding(r, "pci.vfio-bound", g->addr, "%s %s is bound to %s (reserved for VMs)", g->addr,
                                   name, g->driver);
            report_finding_add_evidence(f, src, "%s", g->driver);
        } else {
            pci_binding_other_driver(st, g, name, src);
        }
    }

    if (g->driver_known)
        pci_bar_findings(st, g, name);
    bool asleep = g->power_state && str_starts_with(g->power_state, "D3");
    if (compute && !asleep && g->link_source) {
        const char *lsrc = strcmp(g->link_source, "config") == 0 ? (st->dump ? st->access_path : "config space")
                                                                 : NULL;
        if (g->cur_width > 0 && g->max_width > 0 && g->cur_width < g->max_width) {
            f = report_add_finding(r, "pci.link-degraded", g->addr, "%s %s runs at x%d of its x%d PCIe lanes",
                                   g->addr, name, g->cur_width, g->max_width);
            report_finding_set_hint(f, "Move the card to a slot wired for x%d, check riser cables and seating; "
                                       "compare LnkCap with LnkSta in `sudo lspci -vv -s %s`.",
                                    g->max_width, g->addr);
            if (lsrc) {
                report_finding_add_evidence(f, lsrc, "link width x%d, capable of x%d", g->cur_width, g->max_width);
            } else {
                snprintf(src, sizeof(src), "%s/current_link_width", base ? base : "");
                report_finding_add_evidence(f, src, "%d", g->cur_width);
                snprintf(src, sizeof(src), "%s/max_link_width", base ? base : "");
                report_finding_add_evidence(f, src, "%d", g->max_width);
            }
        } else if (g->cur_speed > 0 && g->max_speed > 0 && g->cur_speed + 0.01 < g->max_speed) {
            f = report_add_finding(r, "pci.link-slow", g->addr, "%s %s links at %.1f GT/s of its %.1f GT/s",
                                   g->addr, name, g->cur_speed, g->max_speed);
            report_finding_set_hint(f, "Often normal: idle GPUs slow the link. Check again under load "
                                       "(`sudo lspci -vv -s %s | grep LnkSta`); if it stays low, check the slot's "
                                       "PCIe generation and the firmware's link-speed setting.",
                                    g->addr);
            if (lsrc) {
                report_finding_add_evidence(f, lsrc, "link speed %.1f GT/s, capable of %.1f GT/s", g->cur_speed,
                                            g->max_speed);
            } else {
                snprintf(src, sizeof(src), "%s/current_link_speed", base ? base : "");
                report_finding_add_evidence(f, src, "%.1f GT/s", g->cur_speed);
                snprintf(src, sizeof(src), "%s/max_link_speed", base ? base : "");
                report_finding_add_evidence(f, src, "%.1f GT/s", g->max_speed);
            }
        }
    }
    free(base);
}

static void pci_kernel_findings(struct pci_state *st)
{
    struct report *r = st->ctx->report;
    const struct pci_module *m = st->modules;
    struct report_finding *f;
    if (m[pci_module_index("nouveau")].loaded == 1 && m[pci_module_index("nvidia")].loaded == 1) {
        bool ignored = report_find_finding(r, "drv.nouveau-blacklist-ignored", "nouveau") != NULL;
        f = report_add_finding(r, "drv.nouveau-and-nvidia", "nouveau",
                               "Both the nouveau and the nvidia kernel modules are loaded");
        report_finding_add_evidence(f, "/proc/modules", "nouveau");
        report_finding_add_evidence(f, "/proc/modules", "nvidia");
        if (ignored) /* nouveau is blacklisted already: its hint would say what is done */
            report_finding_set_cause(f, "drv.nouveau-blacklist-ignored", "nouveau");
    }

    if (st->nv_kmod_version) {
        size_t bad = 0;
        const char *other = NULL;
        for (size_t i = 0; i < st->n_nvlibs; i++)
            if (strcmp(st->nvlibs[i].version, st->nv_kmod_version) != 0) {
                bad++;
                if (!other)
                    other = st->nvlibs[i].version;
            }
        if (bad > 0) {
            f = report_add_finding(r, "drv.nvidia-version-mismatch", "nvidia",
                                   "The NVIDIA kernel module is %s but %zu userspace librar%s %s (e.g. %s)",
                                   st->nv_kmod_version, bad, bad == 1 ? "y is" : "ies are",
                                   bad == 1 ? "another version" : "other versions", other);
            report_finding_add_evidence(f, st->nv_kmod_source, "%s", st->nv_kmod_version);
            for (size_t i = 0; i < st->n_nvlibs; i++)
                if (strcmp(st->nvlibs[i].version, st->nv_kmod_version) != 0)
                    report_finding_add_evidence(f, st->nvlibs[i].path, "%s", st->nvlibs[i].version);
        }
    }

    for (size_t i = 0; i < st->n_nodes; i++) {
        const struct pci_node *n = &st->nodes[i];
        if (!n->present && n->required_by) {
            f = report_add_finding(r, "dev.missing-node", n->path, "%s does not exist, but %s", n->path,
                                   n->required_by);
            report_finding_add_evidence(f, n->path, "absent");
            if (str_starts_with(n->path, "/dev/nvidia") && pci_container_wanted_no_nodes(st))
                report_finding_set_cause(f, "container.no-gpu", NULL); /* its hint is the fix */
            else if (pci_container_amd_node_missing(st, n))
                report_finding_set_cause(f, "container.no-amd-devices", n->device);
            else if (str_starts_with(n->path, "/dev/nvidia"))
                report_finding_set_hint(f, "In a container, start it with GPU access (`docker run --gpus all`, or "
                                           "the NVIDIA container toolkit); on the host, `sudo nvidia-modprobe%s` "
                                           "creates it (or check the nvidia udev rules).",
                                        strcmp(n->path, "/dev/nvidia-uvm") == 0 ? " -u -c=0" : " -c=0");
            else
                report_finding_set_hint(f, "In a container, pass it through (`docker run --device %s`); on the "
                                           "host, check that udev created it (`sudo udevadm trigger`, "
                                           "`ls -l /dev/dri`).",
                                        str_starts_with(n->path, "/dev/dri/") ? "/dev/dri" : n->path);
        } else if (n->present && n->compute && n->accessible == 0) {
            char mode[16];
            snprintf(mode, sizeof(mode), "%04o", n->mode);
            f = report_add_finding(r, "dev.no-access", n->path,
                                   "%s is mode %s, group %s: this user cannot open it read-write", n->path, mode,
                                   n->group ? n->group : "(unnamed)");
            report_finding_add_evidence(f, n->path, "mode %s uid %lld gid %lld", mode, (long long)n->uid,
                                        (long long)n->gid);
            if (st->platform.container != PCI_CONTAINER_NONE && (n->mode & 060) == 060)
                pci_container_group_hint(f, n); /* the container's groups, not the host's usermod */
            else if (n->group && (n->mode & 060) == 060 && n->in_group == 0 && n->listed_in_group == 1)
                report_finding_set_hint(f, "You were added to group %s after this session started: log out and "
                                           "in again (or run `newgrp %s`).",
                                        n->group, n->group);
            else if (n->group && (n->mode & 060) == 060 && n->in_group == 0)
                report_finding_set_hint(f, "Join group %s: `sudo usermod -aG %s $USER`, then log out and in "
                                           "again.",
                                        n->group, n->group);
            else if (!n->group && (n->mode & 060) == 060)
                report_finding_set_hint(f, "The node's group (gid %lld) has no name in /etc/group: ask the "
                                           "administrator to give it one and add you to it (`sudo usermod -aG "
                                           "GROUP $USER`).",
                                        (long long)n->gid);
            else
                report_finding_set_hint(f, "The node's mode does not let its group read and write it: a udev rule "
                                           "should make it `MODE=\"0660\", GROUP=\"render\"` (then `sudo udevadm "
                                           "trigger`), and you join that group (`sudo usermod -aG render $USER`).");
        }
    }
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static json_object *pci_json_hex(int v)
{
    if (v < 0)
        return NULL;
    char b[16];
    snprintf(b, sizeof(b), "%04x", (unsigned)v);
    return json_object_new_string(b);
}

static json_object *pci_json_speed(double v)
{
    if (!(v > 0))
        return NULL;
    char b[16];
    snprintf(b, sizeof(b), "%.1f", v);
    return json_object_new_double_s(v, b);
}

static json_object *pci_json_tri(int v)
{
    return v < 0 ? NULL : json_object_new_boolean(v);
}

static json_object *pci_json_gpu(const struct pci_gpu *g)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "address", json_object_new_string(g->addr));
    json_object_object_add(o, "vendor_id", pci_json_hex(g->vendor));
    json_object_object_add(o, "device_id", pci_json_hex(g->device));
    json_object_object_add(o, "subsystem_vendor_id", pci_json_hex(g->sub_vendor));
    json_object_object_add(o, "subsystem_device_id", pci_json_hex(g->sub_device));
    json_object_object_add(o, "class", pci_json_hex(g->cls));
    json_object_object_add(o, "class_name", jsonstr_or_null(g->class_name));
    json_object_object_add(o, "vendor_name", jsonstr_or_null(g->vendor_name));
    json_object_object_add(o, "device_name", jsonstr_or_null(g->device_name));
    json_object_object_add(o, "subsystem_vendor_name", jsonstr_or_null(g->subsystem_vendor_name));
    json_object_object_add(o, "subsystem_name", jsonstr_or_null(g->subsystem_name));
    json_object_object_add(o, "driver", jsonstr_or_null(g->driver));
    json_object_object_add(o, "driver_known", json_object_new_boolean(g->driver_known));
    json_object_object_add(o, "kind", jsonstr_or_null(pci_kind_name(g->kind)));
    json_object_object_add(o, "responding", pci_json_tri(g->responding));
    if (g->link_source) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "current_speed", pci_json_speed(g->cur_speed));
        json_object_object_add(l, "current_width", g->cur_width > 0 ? json_object_new_int(g->cur_width) : NULL);
        json_object_object_add(l, "max_speed", pci_json_speed(g->max_speed));
        json_object_object_add(l, "max_width", g->max_width > 0 ? json_object_new_int(g->max_width) : NULL);
        json_object_object_add(l, "source", json_object_new_string(g->link_source));
        json_object_object_add(o, "link", l);
    } else {
        json_object_object_add(o, "link", NULL);
    }
    json_object_object_add(o, "numa_node", g->has_numa ? json_object_new_int64(g->numa_node) : NULL);
    json_object_object_add(o, "boot_vga", pci_json_tri(g->boot_vga));
    json_object_object_add(o, "power_state", jsonstr_or_null(g->power_state));
    json_object_object_add(o, "modalias", jsonstr_or_null(g->modalias));
    json_object *drm = json_object_new_array();
    for (size_t i = 0; i < g->n_drm; i++)
        json_object_array_add(drm, json_object_new_string(g->drm[i]));
    json_object_object_add(o, "drm", drm);
    json_object_object_add(o, "id_source", jsonstr_or_null(g->id_source));
    return o;
}

static void pci_json(struct pci_state *st)
{
    json_object *data = st->sec->data;
    json_object_object_add(data, "source", json_object_new_string(st->dump ? "dump" : "sysfs"));
    json_object_object_add(data, "access_path", jsonstr_or_null(st->access_path));
    json_object_object_add(data, "bus_visible", json_object_new_boolean(st->bus_visible));
    json_object_object_add(data, "scanned", json_object_new_int64((int64_t)st->scanned));
    json_object *devs = json_object_new_array();
    for (size_t i = 0; i < st->n_gpus; i++)
        json_object_array_add(devs, pci_json_gpu(&st->gpus[i]));
    json_object_object_add(data, "devices", devs);
    json_object *platform = st->kernel_checked ? pci_wsl_json(&st->platform) : NULL;
    if (platform) {
        json_object_object_add(platform, "container", pci_container_json(&st->platform));
        if (st->platform.container_from)
            json_object_object_add(platform, "container_from", json_object_new_string(st->platform.container_from));
        json_object_object_add(platform, "nvidia_container_toolkit", pci_container_toolkit_json(&st->platform));
    }
    json_object_object_add(data, "platform", platform);

    if (!st->kernel_checked) {
        json_object_object_add(data, "modules", NULL);
        json_object_object_add(data, "nvidia", NULL);
        json_object_object_add(data, "nodes", NULL);
        return;
    }
    json_object *mods = json_object_new_object();
    for (int i = 0; pci_module_names[i]; i++) {
        const struct pci_module *m = &st->modules[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "loaded", pci_json_tri(m->loaded));
        json_object_object_add(o, "builtin", json_object_new_boolean(m->builtin));
        json_object_object_add(o, "version", jsonstr_or_null(m->version));
        json_object_object_add(o, "refcount", m->refcount >= 0 ? json_object_new_int64(m->refcount) : NULL);
        json_object_object_add(mods, pci_module_names[i], o);
    }
    json_object_object_add(data, "modules", mods);

    json_object *nv = json_object_new_object();
    json_object_object_add(nv, "kernel_module_version", jsonstr_or_null(st->nv_kmod_version));
    json_object_object_add(nv, "kernel_module_open", pci_json_tri(st->nv_kmod_open));
    json_object_object_add(nv, "kernel_module_source", jsonstr_or_null(st->nv_kmod_source));
    json_object *libs = json_object_new_array();
    for (size_t i = 0; i < st->n_nvlibs; i++) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "path", json_object_new_string(st->nvlibs[i].path));
        json_object_object_add(l, "version", json_object_new_string(st->nvlibs[i].version));
        json_object_array_add(libs, l);
    }
    json_object_object_add(nv, "libraries", libs);
    json_object *dirs = json_object_new_array();
    for (size_t i = 0; i < st->n_lib_dirs; i++)
        json_object_array_add(dirs, json_object_new_string(st->lib_dirs[i]));
    json_object_object_add(nv, "library_dirs", dirs);
    if (st->nvkmod.checked) /* only where an NVIDIA GPU waits for a module that is not loaded */
        json_object_object_add(nv, "kernel_module", pci_nvkmod_json(&st->nvkmod));
    json_object_object_add(data, "nvidia", nv);

    json_object *nodes = json_object_new_array();
    for (size_t i = 0; i < st->n_nodes; i++) {
        const struct pci_node *n = &st->nodes[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(n->path));
        json_object_object_add(o, "present", json_object_new_boolean(n->present));
        json_object_object_add(o, "type", jsonstr_or_null(n->type));
        char mode[16];
        snprintf(mode, sizeof(mode), "%04o", n->mode);
        json_object_object_add(o, "mode", n->present ? json_object_new_string(mode) : NULL);
        json_object_object_add(o, "uid", n->present ? json_object_new_int64(n->uid) : NULL);
        json_object_object_add(o, "gid", n->present ? json_object_new_int64(n->gid) : NULL);
        json_object_object_add(o, "group", jsonstr_or_null(n->group));
        json_object_object_add(o, "accessible", pci_json_tri(n->accessible));
        json_object_object_add(o, "user_in_group", pci_json_tri(n->in_group));
        json_object_object_add(o, "listed_in_group", pci_json_tri(n->listed_in_group));
        json_object_object_add(o, "compute", json_object_new_boolean(n->compute));
        json_object_object_add(o, "required_by", jsonstr_or_null(n->required_by));
        json_object_object_add(o, "device", jsonstr_or_null(n->device));
        json_object_array_add(nodes, o);
    }
    json_object_object_add(data, "nodes", nodes);
}

/* ---- summary -------------------------------------------------------------------------------- */

static enum report_mark pci_mark_for(const struct report *r, const char *subject)
{
    int worst = -1;
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i]->subject && strcmp(r->findings[i]->subject, subject) == 0 &&
            (int)r->findings[i]->severity > worst)
            worst = (int)r->findings[i]->severity;
    return worst == REPORT_SEV_ERROR ? REPORT_MARK_ERROR
         : worst == REPORT_SEV_WARNING ? REPORT_MARK_WARN
         : worst == REPORT_SEV_INFO ? REPORT_MARK_INFO
                                     : REPORT_MARK_OK;
}

static void pci_summary(struct pci_state *st, size_t n_compute)
{
    for (size_t i = 0; i < st->n_gpus; i++) {
        const struct pci_gpu *g = &st->gpus[i];
        char link[64] = "";
        if (g->cur_width > 0 && g->cur_speed > 0)
            snprintf(link, sizeof(link), ", PCIe %.1f GT/s x%d", g->cur_speed, g->cur_width);
        const char *drv = !g->driver_known ? "" : g->driver ? g->driver : "none";
        if (g->responding == 0)
            report_section_add_line(st->sec, pci_mark_for(st->ctx->report, g->addr), "GPU", "%s not responding%s%s",
                                    g->addr, g->device_name ? ": " : "", g->device_name ? g->device_name : "");
        else
            report_section_add_line(st->sec, pci_mark_for(st->ctx->report, g->addr), "GPU", "%s %s%s%s%s%s%s",
                                    g->addr, pci_gpu_label(g), g->kind == PCI_KIND_DISPLAY ? " (display only)"
                                                               : g->kind == PCI_KIND_ACCEL ? " (accelerator)"
                                                               : g->kind == PCI_KIND_PARAVIRT
                                                                   ? " (WSL2 paravirtual GPU: the Windows driver's)"
                                                                   : "",
                                    g->driver_known ? ", driver " : "", drv, link, "");
    }
    if (st->platform.kind == PCI_PLATFORM_WSL2 && n_compute == 0)
        report_section_add_line(st->sec, pci_mark_for(st->ctx->report, "/dev/dxg"), "WSL2",
                                "WSL2 without a GPU passed in (/dev/dxg %s)", st->platform.dxg ? "present" : "absent");
    else if (st->platform.kind == PCI_PLATFORM_WSL2)
        report_section_add_line(st->sec, REPORT_MARK_OK, "WSL2", "WSL2: the GPU is the Windows driver's, through "
                                                                 "/dev/dxg (Windows GPU drivers seen:%s%s%s%s)",
                                st->platform.wsl_vendors & PCI_WSL_NVIDIA ? " NVIDIA" : "",
                                st->platform.wsl_vendors & PCI_WSL_AMD ? " AMD" : "",
                                st->platform.wsl_vendors & PCI_WSL_INTEL ? " Intel" : "",
                                st->platform.wsl_vendors ? "" : " none recognised");
    if (n_compute == 0 && st->platform.kind != PCI_PLATFORM_NONE)
        return; /* WSL: the wsl.* findings say why there is no GPU */
    if (n_compute == 0)
        report_section_add_line(st->sec, REPORT_MARK_INFO, "GPU", "no GPU found (%zu PCI device%s%s)", st->scanned,
                                st->scanned == 1 ? "" : "s", st->dump ? " in the dump" : "");
}

static void pci_state_free(struct pci_state *st)
{
    for (size_t i = 0; i < st->n_gpus; i++)
        pci_gpu_free(&st->gpus[i]);
    free(st->gpus);
    for (int i = 0; i < PCI_N_MODULES; i++)
        free(st->modules[i].version);
    free(st->nv_kmod_version);
    free(st->nv_kmod_source);
    for (size_t i = 0; i < st->n_nvlibs; i++) {
        free(st->nvlibs[i].path);
        free(st->nvlibs[i].version);
    }
    free(st->nvlibs);
    for (size_t i = 0; i < st->n_lib_dirs; i++)
        free(st->lib_dirs[i]);
    free(st->lib_dirs);
    for (size_t i = 0; i < st->n_nodes; i++) {
        free(st->nodes[i].path);
        free(st->nodes[i].group);
        free(st->nodes[i].required_by);
        free(st->nodes[i].device);
    }
    free(st->nodes);
    free(st->access_path);
    pci_nvkmod_free(&st->nvkmod);
    free(st->platform.osrelease);
    free(st->platform.ld_library_path);
    pci_wsl_stacks_free(&st->platform);
    pci_container_free(&st->platform);
}

/* The section's typed facts: its result, or (a section without one) *OWN read from its data, to free. */
static const struct result_pci *pci_facts(const struct report_section *sec, struct result_pci **own)
{
    *own = NULL;
    if (sec->result_ops == &result_pci_ops && sec->result)
        return sec->result;
    return *own = result_pci_read(sec->data);
}

/* Node labels: the GPUs and accelerators on the bus (display-only adapters, a server's BMC VGA, do not
 * count), and their vendor ("mixed" for more than one). */
static void pci_node_labels(const struct report_section *sec,
                            void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    struct result_pci *own;
    const struct result_pci *pci = pci_facts(sec, &own);
    size_t n = 0;
    const char *vendor = NULL;
    bool mixed = false;
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        if (d->kind != RESULT_PCI_KIND_COMPUTE && d->kind != RESULT_PCI_KIND_ACCEL && d->kind != RESULT_PCI_KIND_PARAVIRT)
            continue;
        const struct vendor *v = vendor_by_pci_text(d->vendor_id);
        const char *name = v ? v->name : d->vendor_id;
        if (vendor && name && strcmp(vendor, name) != 0)
            mixed = true;
        if (!vendor)
            vendor = name;
        n++;
    }
    char count[32];
    snprintf(count, sizeof(count), "%zu", n);
    emit(arg, "gpu", "present", n > 0 ? "true" : "false");
    emit(arg, "gpu", "count", count);
    if (n > 0)
        emit(arg, "gpu", "vendor", mixed ? "mixed" : vendor);
    result_pci_ops.free(own);
}

/* The compute GPUs among the section's devices (display-only adapters and accelerators are not). The
 * doctor asks an ok section only, which has its result (the addresses point into it). */
static size_t pci_bus_gpus(const struct report_section *sec, struct bus_gpu *out, size_t max)
{
    const struct result_pci *pci = sec->result_ops == &result_pci_ops ? sec->result : NULL;
    size_t n = 0;
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        if (d->kind != RESULT_PCI_KIND_COMPUTE)
            continue;
        const struct vendor *v = vendor_by_pci_text(d->vendor_id);
        if (n < max)
            out[n] = (struct bus_gpu){.pci_address = d->address, .vendor = v ? v->name : NULL};
        n++;
    }
    return n;
}

/* The vendor of SUBJECT in PCI's devices, through its GPU for a device node (DEPTH: one hop at most). */
static const char *pci_vendor_of(const struct result_pci *pci, const char *subject, int depth)
{
    /* a device node (/dev/dri/renderD128) is its GPU's vendor's */
    for (size_t i = 0; pci && depth < 2 && i < pci->n_nodes; i++) {
        const struct result_pci_node *n = &pci->nodes[i];
        if (n->path && n->device && strcmp(n->path, subject) == 0 && strcmp(n->device, subject) != 0)
            return pci_vendor_of(pci, n->device, depth + 1);
    }
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        if (d->address && strcmp(d->address, subject) == 0) {
            const struct vendor *v = vendor_by_pci_text(d->vendor_id);
            return v ? v->name : NULL;
        }
    }
    return NULL;
}

/* A PCI address of the section's devices: its vendor (the doctor's question for causes and relief). */
static const char *pci_subject_vendor(const struct report_section *sec, const char *subject, const char **text)
{
    (void)text;
    struct result_pci *own;
    const char *v = pci_vendor_of(pci_facts(sec, &own), subject, 0);
    result_pci_ops.free(own);
    return v;
}

static int pci_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct pci_state st;
    memset(&st, 0, sizeof(st));
    st.ctx = ctx;
    st.sec = sec;
    st.nv_kmod_open = -1;
    for (int i = 0; i < PCI_N_MODULES; i++)
        st.modules[i].loaded = st.modules[i].refcount = -1;

    int rc = pci_bus_scan(&st);
    if (rc != PROBE_DONE || sec->status == REPORT_STATUS_FAILED) {
        if (rc == PROBE_DONE)
            pci_json(&st);
        pci_state_free(&st);
        return rc;
    }
    if (!st.dump) {
        st.kernel_checked = true;
        pci_drivers_collect(&st);
        pci_nodes_collect(&st);
        pci_wsl_collect(&st);
        pci_container_collect(&st);
        /* Only where an NVIDIA GPU waits for a module that is not loaded: modules.dep is large. */
        bool nv_unbound = false;
        for (size_t i = 0; i < st.n_gpus; i++)
            nv_unbound |= st.gpus[i].vendor == VENDOR_PCI_NVIDIA && st.gpus[i].driver_known && !st.gpus[i].driver &&
                          (st.gpus[i].kind == PCI_KIND_COMPUTE || st.gpus[i].kind == PCI_KIND_ACCEL);
        /* and where nouveau or nova_core holds one: why (pci_binding.c) */
        bool nv_other = false;
        for (size_t i = 0; i < st.n_gpus; i++)
            nv_other |= st.gpus[i].vendor == VENDOR_PCI_NVIDIA && st.gpus[i].driver &&
                        (strcmp(st.gpus[i].driver, "nouveau") == 0 || strcmp(st.gpus[i].driver, "nova_core") == 0);
        if ((nv_unbound && st.modules[pci_module_index("nvidia")].loaded != 1) || nv_other)
            pci_nvkmod_collect(&st);
    } else {
        report_section_add_note(sec, "read from the dump %s: configuration space only, so no drivers, modules or "
                                     "device nodes",
                                st.access_path ? st.access_path : "");
    }

    size_t n_compute = 0;
    for (size_t i = 0; i < st.n_gpus; i++) {
        pci_device_findings(&st, &st.gpus[i]);
        if (st.gpus[i].kind == PCI_KIND_COMPUTE || st.gpus[i].kind == PCI_KIND_ACCEL ||
            st.gpus[i].kind == PCI_KIND_PARAVIRT || st.gpus[i].responding == 0)
            n_compute++;
    }
    if (st.kernel_checked) {
        pci_container_findings(&st);
        pci_kernel_findings(&st);
        pci_wsl_findings(&st);
    }
    /* Under WSL no GPU is a wsl.* finding (WSL1, no /dev/dxg, gpu disabled), never "check it is seated". */
    if (n_compute == 0 && st.platform.kind == PCI_PLATFORM_NONE) {
        size_t display = 0;
        for (size_t i = 0; i < st.n_gpus; i++)
            display += st.gpus[i].kind == PCI_KIND_DISPLAY;
        struct report_finding *f =
            report_add_finding(ctx->report, "pci.no-gpu", NULL, "No GPU or accelerator among %zu PCI device%s%s%s",
                               st.scanned, st.scanned == 1 ? "" : "s",
                               display ? " (only display-only adapters, which cannot compute)" : "",
                               st.bus_visible ? "" : "; no PCI bus is visible");
        report_finding_add_evidence(f, st.dump ? st.access_path : "/sys/bus/pci/devices", "%zu device%s scanned",
                                    st.scanned, st.scanned == 1 ? "" : "s");
    }
    pci_json(&st);
    pci_summary(&st, n_compute);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    /* devices, nodes, bus_visible and source leave the data for the result, which prints them in place */
    struct result_pci *res = result_pci_ops.from_json(sec->data);
    if (res)
        report_section_set_result(sec, &result_pci_ops, res);
    pci_state_free(&st);
    return PROBE_DONE;
}

const struct probe probe_pci = {
    .name = "pci",
    .stack = PROBE_STACK_BUS,
    .title = "GPUs and accelerators on the PCI bus, kernel drivers, device nodes",
    .needs_live = false,
    .checks = pci_checks,
    .n_checks = sizeof(pci_checks) / sizeof(pci_checks[0]),
    .check_sets = pci_check_sets,
    .run = pci_run,
    .result = &result_pci_ops,
    .subject_vendor = pci_subject_vendor,
    .print_text = pci_print_text,
    .node_labels = pci_node_labels,
    .bus_gpus = pci_bus_gpus,
};
