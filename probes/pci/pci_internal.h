/* pci_internal.h: what the pci probe's files (bus, drivers, nodes, text) share; not a public API. */
#ifndef GPUCHECKUP_PCI_INTERNAL_H
#define GPUCHECKUP_PCI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe.h"

/* Limits on hostile input: the largest --pci-dump read (`lspci -xxxx` of 4096 functions is about
 * 55 MB), and the most GPUs and accelerators reported (beyond, a note says how many were left out;
 * a report of thousands of GPUs is a made-up dump, and each GPU costs findings and correlation). */
#define PCI_DUMP_MAX_BYTES (64u * 1024u * 1024u)
#define PCI_MAX_GPUS 1024u

/* What a PCI function is for gpucheckup. */
enum pci_kind {
    PCI_KIND_NONE = 0,   /* not a GPU or accelerator (or unknown: an unreadable device) */
    PCI_KIND_COMPUTE,    /* "compute-gpu" */
    PCI_KIND_DISPLAY,    /* "display-only": BMC or virtual VGA */
    PCI_KIND_ACCEL,      /* "accelerator": class 0x12xx or 0x0b40 */
    PCI_KIND_PARAVIRT,   /* "paravirtual-gpu": WSL2's 1414:008e/008a, a Windows GPU lent through dxgkrnl; its
                            address and driver are the guest's, never the GPU's (CUDA's bus IDs are the host's) */
};

/* The machine the tree is, as far as GPUs care (pci_wsl.c). */
enum pci_platform_kind {
    PCI_PLATFORM_NONE = 0, /* "bare-metal-or-vm": a Linux kernel that drives its own PCI GPUs */
    PCI_PLATFORM_WSL1,     /* "wsl1": Windows answering Linux system calls; no GPU possible */
    PCI_PLATFORM_WSL2,     /* "wsl2": a Hyper-V VM whose GPU is the Windows driver's, through /dev/dxg */
};
/* The container this runs in, if any (pci_container.c); JSON "platform.container". */
enum pci_container {
    PCI_CONTAINER_NONE = 0,   /* null: no container recognised */
    PCI_CONTAINER_DOCKER,     /* "docker": /.dockerenv, or docker in /proc/1/cgroup */
    PCI_CONTAINER_PODMAN,     /* "podman": /run/.containerenv, or libpod in /proc/1/cgroup */
    PCI_CONTAINER_KUBERNETES, /* "kubernetes": kubepods in /proc/1/cgroup */
    PCI_CONTAINER_CONTAINERD, /* "containerd": containerd without Kubernetes */
    PCI_CONTAINER_OTHER,      /* "other": a container manager's own statement (LXC, systemd-nspawn...) or a cgroup
                                 namespace, without a runtime's marker file */
};
/* Vendors whose Windows GPU driver a WSL2 guest sees (bits of pci_platform.wsl_vendors; JSON names in order). */
enum {
    PCI_WSL_NVIDIA = 1u << 0,
    PCI_WSL_AMD = 1u << 1,
    PCI_WSL_INTEL = 1u << 2,
};
struct pci_platform {
    enum pci_platform_kind kind;
    char *osrelease;       /* /proc/sys/kernel/osrelease, heap, or NULL */
    bool dxg;              /* /dev/dxg exists */
    bool lib_dir;          /* /usr/lib/wsl/lib is a directory */
    bool gpu_disabled;     /* /etc/wsl.conf: [gpu] enabled=false */
    unsigned wsl_vendors;  /* WSL2: PCI_WSL_* bits, whose Windows GPU driver the guest sees (pci_wsl_stacks.c) */
    char **stores;         /* WSL2: /usr/lib/wsl/drivers folders of GPU drivers (names, heap, at most 16) */
    size_t n_stores;
    char *rocdxg;          /* WSL2: ROCm's librocdxg.so (the /dev/dxg thunk), heap or NULL */
    char *hsa_dxg;         /* WSL2: HSA_ENABLE_DXG_DETECTION (live; the captured run's on replay), heap or NULL */
    char *ld_library_path; /* WSL: the LD_LIBRARY_PATH the loader checks use (live modes; a snapshot's captured
                              one on replay), heap or NULL */
    enum pci_container container;
    const char *container_from; /* the file that told (static string), NULL when none */
    char container_label[32];   /* for messages, with PCI_CONTAINER_OTHER: the manager's name ("lxc") or
                                   "cgroup-namespaced" */
    char *nv_visible;      /* NVIDIA_VISIBLE_DEVICES (live modes only), heap or NULL */
    char *nv_caps;         /* NVIDIA_DRIVER_CAPABILITIES (live modes only), heap or NULL */
    bool driver_tmpfs;     /* /proc/mounts: the toolkit's tmpfs on /proc/driver/nvidia */
    char *injected_libcuda; /* /proc/mounts: a libcuda.so.<version> mounted as a file, heap or NULL */
};

/* One GPU or accelerator (or a device that does not answer). Strings are heap, owned, may be NULL. */
struct pci_gpu {
    unsigned domain, bus, dev, func;
    char addr[32];              /* "0000:01:00.0" (the domain may have more digits) */
    int vendor, device, cls;    /* IDs; cls is the 16-bit class (0x0302); -1 when unknown */
    int sub_vendor, sub_device; /* -1 when unknown */
    char *vendor_name, *device_name, *class_name, *subsystem_vendor_name, *subsystem_name;
    bool driver_known;          /* false with --pci-dump: no kernel there */
    char *driver;               /* bound driver, NULL when none */
    enum pci_kind kind;
    int responding;             /* config space answers: 1, 0 (all ones), -1 unknown */
    double cur_speed, max_speed; /* GT/s; < 0 unknown */
    int cur_width, max_width;   /* lanes; < 0 unknown */
    const char *link_source;    /* "sysfs", "config" or NULL */
    bool has_numa;
    int64_t numa_node;
    int boot_vga;               /* 1, 0, -1 unknown */
    char *power_state;          /* "D0", "D3cold"... */
    char *modalias;
    char *id_source;            /* "libpci" or, when libpci failed, "sysfs" */
    char **drm;                 /* DRM minors from sysfs drm/: "card0", "renderD128" */
    size_t n_drm;
};

/* The kernel modules gpucheckup looks at, in report order (NULL-terminated). */
extern const char *const pci_module_names[];
#define PCI_N_MODULES 8

struct pci_module {
    int loaded;        /* 1, 0, -1 unknown */
    bool builtin;      /* built into the kernel (no /proc/modules line) */
    char *version;     /* /sys/module/NAME/version */
    int64_t refcount;  /* -1 unknown */
};

struct pci_nvlib {
    char *path;
    char *version;
};

struct pci_node {
    char *path;            /* "/dev/nvidiactl" */
    bool present;
    const char *type;      /* "char", "block", "file", "fifo", "dir", "link", "other"; NULL when absent */
    unsigned mode;         /* permission bits (07777) */
    int64_t uid, gid;      /* -1 when absent */
    char *group;           /* group name from the tree's /etc/group; NULL when unknown */
    int accessible;        /* read-write for this user: 1, 0, -1 unknown */
    int in_group;          /* this process is in the node's group: 1, 0, -1 */
    int listed_in_group;   /* /etc/group lists this user in that group: 1, 0, -1 */
    char *required_by;     /* why it must exist ("module nvidia is loaded"), NULL when merely present */
    char *device;          /* PCI address it belongs to, or NULL */
    bool compute;          /* compute needs it (render nodes, nvidia*, kfd; not card*) */
};

/* One DKMS build of the NVIDIA module: its DKMS name and version, the kernels it was built for. */
struct pci_nvkmod_dkms {
    char *module, *version;
    char **kernels;
    size_t n_kernels;
};

/* Where the NVIDIA kernel module stands, from files (pci_nvkmod.c). Strings heap, owned. */
struct pci_nvkmod {
    bool checked;
    char *kernel;              /* the running kernel's release (/proc/sys/kernel/osrelease), NULL unknown */
    int modules_dep;           /* its modules.dep: 1 read, 0 absent, -1 unreadable or kernel unknown */
    char **files;              /* the core module's files modules.dep lists for that kernel */
    size_t n_files;
    struct pci_nvkmod_dkms *dkms;
    size_t n_dkms;
    char **blocked_by;         /* "FILE:LINE: blacklist nvidia", "/proc/cmdline: module_blacklist=nvidia" */
    size_t n_blocked_by;
    char **nouveau_blocked;    /* the same for nouveau, from modprobe.d ("FILE:LINE: blacklist nouveau") */
    size_t n_nouveau_blocked;
    char **nouveau_cmdline;    /* and from the kernel command line ("/proc/cmdline: rd.driver.blacklist=nouveau") */
    size_t n_nouveau_cmdline;
    size_t not_read;           /* directory entries past the cap per directory, not read (a section note) */
};

/* Everything the probe gathered; findings and JSON are made from it. */
struct pci_state {
    struct probe_ctx *ctx;
    struct report_section *sec;
    bool dump;                 /* --pci-dump */
    char *access_path;         /* sysfs.path or dump.name handed to libpci */
    struct pci_gpu *gpus;
    size_t n_gpus;
    size_t scanned;            /* PCI functions seen, of any class */
    size_t n_dropped;          /* GPUs and accelerators beyond PCI_MAX_GPUS, not reported */
    bool bus_visible;          /* /sys/bus/pci/devices could be listed (or a dump was read) */
    /* kernel side (not with --pci-dump) */
    bool kernel_checked;
    struct pci_module modules[PCI_N_MODULES];
    char *nv_kmod_version;
    int nv_kmod_open;          /* 1 open, 0 proprietary, -1 unknown */
    char *nv_kmod_source;
    struct pci_nvlib *nvlibs;
    size_t n_nvlibs;
    char **lib_dirs;
    size_t n_lib_dirs;
    struct pci_node *nodes;
    size_t n_nodes;
    size_t n_notes;            /* libpci messages recorded (capped) */
    struct pci_nvkmod nvkmod;  /* the NVIDIA kernel module's files (kernel side only) */
    struct pci_platform platform; /* WSL or not (kernel side only) */
};

/* --- pci_bus.c ----------------------------------------------------------------------------- */
/* Enumerate GPUs and accelerators (libpci: sysfs under the root, or the --pci-dump file) into
 * ST->gpus. Returns PROBE_DONE, or PROBE_INPUT_ERROR with ctx->error set (unusable dump). */
int pci_bus_scan(struct pci_state *st);
/* Classify by class and vendor/device. */
enum pci_kind pci_classify(int cls, int vendor, int device);
const char *pci_kind_name(enum pci_kind k);
/* Parse a sysfs link speed ("8.0 GT/s PCIe", "2.5 GT/s"): GT/s, or -1 when unknown. */
double pci_parse_link_speed(const char *s);
/* GT/s for a PCIe link-speed code (LNKCAP/LNKSTA bits 3:0), or -1. */
double pci_speed_from_code(unsigned code);
/* Parse "DDDD:BB:DD.F" (the domain with 4 to 8 hex digits); true when canonical. */
bool pci_parse_address(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn);
void pci_gpu_free(struct pci_gpu *g);

/* --- pci_drivers.c ------------------------------------------------------------------------- */
/* Kernel modules, the NVIDIA kernel module version and the NVIDIA userspace libraries. */
void pci_drivers_collect(struct pci_state *st);
/* Index of module NAME in pci_module_names, or -1. */
int pci_module_index(const char *name);
/* Is NAME listed in /proc/modules content TEXT? Sets *REFCOUNT (or -1). */
bool pci_modules_has(const char *text, const char *name, int64_t *refcount);
/* The version carried by a library file name: "libcuda.so.550.90.07" -> "550.90.07" (heap), NULL
 * when NAME is not one of the NVIDIA libraries or carries only a soname number ("libcuda.so.1"). */
char *pci_nvidia_lib_version(const char *name);

/* --- pci_nvkmod.c -------------------------------------------------------------------------- */
/* Read the running kernel's modules.dep, DKMS's tree, modprobe.d and the kernel command line into
 * ST->nvkmod (through hostfs: --root trees answer). */
void pci_nvkmod_collect(struct pci_state *st);
void pci_nvkmod_free(struct pci_nvkmod *k);
/* The "kernel_module" object of the pci section's nvidia member (new). */
json_object *pci_nvkmod_json(const struct pci_nvkmod *k);
/* Is NAME[0..LEN) the NVIDIA core module under a distribution's name (nvidia, nvidia-current,
 * nvidia-tesla-535), not a companion (nvidia-uvm, nvidia_drm...)? */
bool pci_nvkmod_is_core_name(const char *name, size_t len);
/* Append (heap strings, capped) the core module's paths in modules.dep TEXT to *FILES; the lines of
 * modprobe.d file FILE's TEXT that stop it from loading ("FILE:LINE: text"); the kernel command line's
 * modprobe.blacklist= / module_blacklist= naming it. */
void pci_nvkmod_scan_dep(const char *text, char ***files, size_t *n);
void pci_nvkmod_scan_modprobe(const char *file, const char *text, char ***found, size_t *n);
void pci_nvkmod_scan_cmdline(const char *text, char ***found, size_t *n);
/* The lines of modprobe.d file FILE's TEXT that stop nouveau from loading ("FILE:LINE: text"). */
void pci_nvkmod_scan_nouveau(const char *file, const char *text, char ***found, size_t *n);

/* --- pci_nodes.c --------------------------------------------------------------------------- */
/* Device nodes: present ones and those the loaded drivers and bound GPUs need. */
void pci_nodes_collect(struct pci_state *st);
/* May a process (UID, groups GIDS[N]) open a node (MODE, owner OUID, group OGID) for WANT
 * (bits of 4 = read, 2 = write)? Classic POSIX rules: root may; else the owner class if UID owns it,
 * else the group class if one of GIDS is OGID, else the other class. */
bool pci_mode_allows(unsigned mode, uid_t ouid, gid_t ogid, uid_t uid, const gid_t *gids, size_t n,
                     unsigned want);
/* The name of group GID and whether USER is listed as a member, from /etc/group content TEXT.
 * Returns the heap name or NULL; *LISTED = 1, 0 or -1 (no such group line). */
char *pci_group_lookup(const char *text, gid_t gid, const char *user, int *listed);

/* --- pci_wsl.c ---------------------------------------------------------------------------- */
/* Recognise WSL1/WSL2 from the tree (osrelease, /dev/dxg, the paravirtual GPU, /usr/lib/wsl/lib, wsl.conf)
 * into ST->platform; call after the bus scan. pci_wsl_findings adds wsl.*; pci_wsl_json is the section's
 * "platform" member. */
extern const struct check pci_wsl_checks[];
extern const size_t pci_wsl_n_checks;
void pci_wsl_collect(struct pci_state *st);
/* Does /etc/wsl.conf TEXT set KEY in [SECTION] to false ("false", "0", "no"; names case-insensitive,
 * "#" and ";" start comments)? */
bool pci_wsl_conf_false(const char *text, const char *section, const char *key);
void pci_wsl_findings(struct pci_state *st);
json_object *pci_wsl_json(const struct pci_platform *p);

/* --- pci_wsl_stacks.c ---------------------------------------------------------------------- */
/* WSL2: the vendors whose Windows GPU driver the guest sees (/usr/lib/wsl/lib, /usr/lib/wsl/drivers), ROCm's
 * librocdxg (on the loader's path S, or /opt/rocm*) and HSA_ENABLE_DXG_DETECTION into ST->platform; the JSON is
 * the platform's "wsl" member, which the compute probes read (AMD and Intel compute there needs no /dev/kfd, amdgpu
 * or i915). */
struct ldsearch;
void pci_wsl_stacks_collect(struct pci_state *st, const struct ldsearch *s);
void pci_wsl_stacks_free(struct pci_platform *p);
json_object *pci_wsl_stacks_json(const struct pci_platform *p);

/* --- pci_dpkg.c --------------------------------------------------------------------------- */
/* Does dpkg's file list TEXT (one absolute path a line) name PATH exactly? */
bool pci_dpkg_list_has(const char *text, const char *path);
/* The Debian/Ubuntu package ("libnvidia-compute-550:amd64") whose /var/lib/dpkg/info list names PATH (as found,
 * canonical, or across a merged /usr), read through FS with bounded reads; heap, or NULL when none does. */
char *pci_dpkg_owner(const struct hostfs *fs, const char *path);

/* --- pci_container.c ---------------------------------------------------------------------- */
/* Recognise a container (/.dockerenv, /run/.containerenv, /proc/1/cgroup) and the NVIDIA Container Toolkit's
 * traces (its variables in live modes, its mounts in /proc/mounts) into ST->platform; call after the nodes.
 * pci_container_findings adds container.*; pci_container_wanted_no_nodes: a container given no NVIDIA node
 * where NVIDIA is wanted (dev.missing-node for /dev/nvidia* is then container.no-gpu's consequence). */
extern const struct check pci_container_checks[];
extern const size_t pci_container_n_checks;
enum pci_container pci_container_from_cgroup(const char *text);
/* The container a manager's name says ("docker", "podman", "lxc", "oci"... from /run/host/container-manager,
 * /run/systemd/container or PID 1's container= variable): PCI_CONTAINER_NONE for an empty name and for "wsl"
 * (systemd's name for WSL, no container), PCI_CONTAINER_OTHER for names it does not know. */
enum pci_container pci_container_from_manager(const char *name);
/* PID 1's container= variable in /proc/1/environ content TEXT of LEN bytes (NUL-separated), heap, or NULL. */
char *pci_container_environ(const char *text, size_t len);
void pci_container_collect(struct pci_state *st);
void pci_container_findings(struct pci_state *st);
bool pci_container_wanted_no_nodes(const struct pci_state *st);
/* --- pci_toolkit.c: the host's NVIDIA Container Toolkit configuration (container.toolkit-no-cgroups). */
/* The value of `no-cgroups` in the [nvidia-container-cli] table of the toolkit's config.toml TEXT (LEN bytes):
 * 1 true, 0 false, -1 not set (commented out, or another table's); *LINE_NO (may be NULL): its line. */
int pci_toolkit_no_cgroups(const char *text, size_t len, int *line_no);
/* On a host (no container): container.toolkit-no-cgroups where it applies. */
void pci_toolkit_findings(struct pci_state *st);
/* Is N an AMD GPU's required compute node (/dev/kfd, its render node) absent in a container? (dev.missing-node for
 * it is then container.no-amd-devices' consequence.) */
bool pci_container_amd_node_missing(const struct pci_state *st, const struct pci_node *n);
void pci_container_free(struct pci_platform *p);
/* dev.no-access's hint F for node N inside a container: the group by the host's number, with `--group-add`. */
void pci_container_group_hint(struct report_finding *f, const struct pci_node *n);
json_object *pci_container_json(const struct pci_platform *p);
json_object *pci_container_toolkit_json(const struct pci_platform *p);

/* --- pci_binding.c ------------------------------------------------------------------------ */
/* Why an NVIDIA GPU is nouveau's, in order: the nvidia module cannot load (pci_nvidia_why_unbound), Secure Boot
 * refuses it (the cuda probe's finding; *HINT says so), a nouveau blacklist that did not take effect
 * (drv.nouveau-blacklist-ignored), or the driver is installed and nothing keeps nouveau away (*HINT). Returns the
 * cause's ID or NULL; *HINT heap or NULL. Call before adding pci.nouveau-bound (it may add findings). */
extern const struct check pci_binding_checks[];
extern const size_t pci_binding_n_checks;
const char *pci_binding_nouveau_cause(struct pci_state *st, char **hint);
/* Is DRIVER one that reserves a device for virtual machines (vfio-pci and its variants, pci-stub, pciback)? */
bool pci_binding_is_vm_driver(const char *driver);
/* pci.nova-core-bound or pci.unknown-driver for G (labelled NAME), whose driver is none of the others the
 * probe judges; SRC is its driver link. */
void pci_binding_other_driver(struct pci_state *st, const struct pci_gpu *g, const char *name, const char *src);
/* drv.nvidia-blacklisted or drv.nvidia-not-built (added once) when the nvidia module cannot load; its ID. */
const char *pci_nvidia_why_unbound(struct pci_state *st);

/* --- pci_bar.c ---------------------------------------------------------------------------- */
/* pci.small-bar (warning: VRAM known, its BAR at most a quarter of it) or pci.bar-resizable (info: VRAM not known) for
 * a discrete GPU G (labelled NAME) whose largest resizable prefetchable BAR is below the largest size the device
 * supports (resourceN_resize, else the Resizable BAR capability in config). iGPUs (bus 0, Root Complex
 * Integrated Endpoints) are never judged. */
extern const struct check pci_bar_checks[];
extern const size_t pci_bar_n_checks;
void pci_bar_findings(struct pci_state *st, const struct pci_gpu *g, const char *name);
/* sysfs "resource" TEXT (a line per resource: start end flags, hex): each one's SIZE (0 unused) and FLAGS, at
 * most MAX. Returns the lines read. */
size_t pci_bar_parse_resource(const char *text, uint64_t *size, uint64_t *flags, size_t max);
/* The Resizable BAR extended capability (ID 0x0015) in config space CFG[0..LEN): MASK[bar] = its supported
 * sizes (bit n = 2^n MiB, as resourceN_resize), for BAR indexes below MAX. Returns the BARs found. */
size_t pci_bar_rebar_config(const unsigned char *cfg, size_t len, uint64_t *mask, size_t max);

/* --- pci_text.c ---------------------------------------------------------------------------- */
void pci_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
