/* result_pci.h: the pci probe's typed facts other probes read: devices, device nodes, platform, NVIDIA kernel module. */
#ifndef GPUCHECKUP_RESULT_PCI_H
#define GPUCHECKUP_RESULT_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* Issue 38, as result_cpu and result_opencl: the probe builds the section as data (its many parts add
 * their members in place), then reads it with FROM_JSON: the facts other probes read, typed. data.devices,
 * data.nodes, data.bus_visible and data.source leave the data for the result, a null keeping each place
 * (KEEPS_PLACES); TO_JSON prints them, each device's and node's typed members from the struct and their
 * other members from the captured objects the result holds (DEVICES_JSON, NODES_JSON), in the captured
 * order, so the JSON stays byte for byte. A member of another shape prints as it was. The platform,
 * modules and nvidia members are typed for readers but still print from the data. */

/* data.devices[].kind */
enum result_pci_kind {
    RESULT_PCI_KIND_COMPUTE = 0, /* "compute-gpu" */
    RESULT_PCI_KIND_DISPLAY,     /* "display-only" */
    RESULT_PCI_KIND_ACCEL,       /* "accelerator" */
    RESULT_PCI_KIND_PARAVIRT,    /* "paravirtual-gpu" */
};
extern const struct gc_names result_pci_kind_names;

/* data.platform.kind */
enum result_pci_platform {
    RESULT_PCI_PLATFORM_BARE = 0, /* "bare-metal-or-vm" */
    RESULT_PCI_PLATFORM_WSL1,     /* "wsl1" */
    RESULT_PCI_PLATFORM_WSL2,     /* "wsl2" */
};
extern const struct gc_names result_pci_platform_names;

/* One data.devices[] entry. Strings are NULL when unknown (JSON null or absent). */
struct result_pci_dev {
    char *address;       /* domain:bus:device.function */
    char *vendor_id;     /* four hex digits as printed ("10de") */
    int vendor;          /* the vendor ID as a number, -1: unreadable (or all ones) */
    char *device_id;     /* four hex digits as printed */
    char *class_code;    /* "0302": class and subclass as printed */
    int kind;            /* enum result_pci_kind, -1: none of them (or unknown) */
    char *driver;        /* the bound kernel driver */
    char *vendor_name, *device_name;
    json_object *link;   /* data.devices[].link (a reference held), NULL when absent */
    char **drm;          /* data.devices[].drm: its DRM nodes ("card0", "renderD128"), the strings of that list */
    size_t n_drm;
};

/* One data.modules member: a kernel module the probe looked at. */
struct result_pci_module {
    char *name;
    enum gc_tri loaded;
};

/* One data.nodes[] entry. */
struct result_pci_node {
    char *path;
    char *device;        /* the PCI address of the GPU it belongs to, NULL: none named */
    enum gc_tri present, compute, accessible;
    bool have_mode;
    unsigned mode;       /* permission bits, when have_mode */
    char *mode_text;     /* the mode as printed ("0660") */
    long uid, gid;       /* -1: unknown */
    char *group;
};

/* Bits of struct result_pci.have: the top-level members the result prints (to_json). */
enum {
    RESULT_PCI_HAVE_DEVICES = 1u << 0,
    RESULT_PCI_HAVE_NODES = 1u << 1,
    RESULT_PCI_HAVE_BUS_VISIBLE = 1u << 2,
    RESULT_PCI_HAVE_SOURCE = 1u << 3,
};

struct result_pci {
    unsigned have;       /* RESULT_PCI_HAVE_*: 0 for a result read by result_pci_read */
    /* data.devices and data.nodes as captured (references held; NULL when not arrays): their members not
     * typed yet (numa node, BARs, a node's type...), printed in their places and read by the text */
    json_object *devices_json, *nodes_json;
    bool have_devices;   /* data.devices is an array (the bus was read) */
    struct result_pci_dev *devs;
    size_t n_devs;
    bool have_nodes;     /* data.nodes is an array */
    struct result_pci_node *nodes;
    size_t n_nodes;
    enum gc_tri bus_visible;
    char *source;        /* "sysfs", a dump's format...; NULL: unknown */
    int platform;        /* enum result_pci_platform, -1: unknown */
    char *container;     /* data.platform.container: "docker", "other"...; NULL: not a container (or unknown) */
    bool have_wsl_vendors;          /* data.platform.wsl.gpu_vendors is an array */
    char **wsl_vendors;  /* vendor.h names of the Windows GPU drivers mounted under /usr/lib/wsl */
    size_t n_wsl_vendors;
    char *toolkit_caps;  /* data.platform.nvidia_container_toolkit.driver_capabilities */
    bool have_modules;   /* data.modules is an object (the kernel side was read: not a dump) */
    struct result_pci_module *modules;
    size_t n_modules;
    char *nvidia_kmod_version;      /* data.nvidia.kernel_module_version */
    /* data.nvidia.kernel_module: no module file installed for the running kernel, or a blocklist entry */
    bool nvidia_kmod_unloadable;
};

extern const struct report_result_ops result_pci_ops;

/* The facts of the pci section's DATA (the probe's own when done, a captured one), or NULL on
 * allocation failure. DATA is left as it is, and the result prints nothing (HAVE is 0). */
struct result_pci *result_pci_read(json_object *data);
/* The pci facts of R when the pci section ran ok, else NULL. */
const struct result_pci *result_pci_get(const struct report *r);
/* How the pci section ended, for a note when it gave no facts: its status name, or "did not run". */
const char *result_pci_status(const struct report *r);
/* The device at ADDR, or NULL. */
const struct result_pci_dev *result_pci_dev_at(const struct result_pci *p, const char *addr);
/* Is D a compute GPU or an accelerator? */
bool result_pci_dev_computes(const struct result_pci_dev *d);
/* Is the kernel module NAME loaded (unknown when the probe did not look)? */
enum gc_tri result_pci_module_loaded(const struct result_pci *p, const char *name);
/* The node at PATH, or NULL. */
const struct result_pci_node *result_pci_node_at(const struct result_pci *p, const char *path);

#endif
