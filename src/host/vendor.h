/* vendor.h: the vendor table: per GPU vendor and per OpenCL driver, which hardware, modules, nodes and libraries. */
#ifndef GPUCHECKUP_VENDOR_H
#define GPUCHECKUP_VENDOR_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* PCI vendor IDs of the GPU vendors (the PCI ID repository, pci.ids). */
#define VENDOR_PCI_NVIDIA 0x10de
#define VENDOR_PCI_AMD 0x1002
#define VENDOR_PCI_AMD_ALT 0x1022 /* AMD's CPU and chipset ID, seen on some of its accelerators */
#define VENDOR_PCI_INTEL 0x8086

/* One GPU vendor: its hardware and what compute on it needs. Lists are NULL-terminated. */
struct vendor {
    const char *name;                     /* "nvidia", "amd", "intel": also the icd probe's "vendor" */
    const char *display;                  /* "NVIDIA" */
    int pci_id;                           /* PCI vendor ID */
    int pci_id_alt;                       /* another ID its devices carry, or -1 */
    const char *const *modules;           /* kernel modules that drive it for compute */
    const char *const *blocking_modules;  /* modules that take the GPU but give no compute */
    const char *const *nodes;             /* device nodes compute opens ("N" stands for a number, "*" any) */
    const char *const *opencl_libs;       /* its OpenCL ICD libraries (sonames) */
    const char *const *compute_libs;      /* userspace compute libraries other than OpenCL (sonames) */
    const char *const *versioned_libs;    /* file name prefixes whose rest is the driver version, or NULL */
    const char *no_module;                /* what a GPU of this vendor without one of MODULES means */
};

/* What an OpenCL driver needs to list a device. */
enum vendor_needs {
    VENDOR_NEEDS_NOTHING = 0, /* a CPU driver: any machine */
    VENDOR_NEEDS_OWN_GPU,     /* a GPU of its vendor (struct vendor_cl.vendor) */
    VENDOR_NEEDS_ANY_GPU,     /* a GPU of one of several vendors (Mesa: a render node its Gallium drivers serve) */
};

/* One OpenCL driver (ICD) gpucheckup recognises. */
struct vendor_cl {
    const char *name;                 /* "intel-neo", "nvidia", "amd", "intel-cpu", "pocl", "rusticl", "clover" */
    const char *display;              /* "Intel Graphics Compute Runtime (NEO)" */
    const char *vendor;               /* the icd probe's "vendor": "nvidia", "amd", "intel", "pocl", "mesa" */
    const char *const *libs;          /* case-insensitive parts of its library file names */
    const char *const *platforms;     /* case-insensitive parts of its CL_PLATFORM_NAME or _VENDOR */
    enum vendor_needs needs;
    const int *gpu_vendors;           /* PCI vendor IDs whose GPUs it drives, 0-terminated (NULL for CPU drivers) */
    const char *cpu_env;              /* an environment variable that can make it a CPU driver, or NULL */
    const char *cpu_env_word;         /* the word in it that does ("llvmpipe") */
    const char *needs_text;           /* for people: "an Intel GPU bound to i915 or xe" */
};

/* The GPU vendor with PCI vendor ID ID (its main or alternative ID), or NULL. */
const struct vendor *vendor_by_pci_id(int id);
/* The GPU vendor called NAME ("nvidia", case-insensitive), or NULL. */
const struct vendor *vendor_by_name(const char *name);
/* The GPU vendor whose modules or blocking modules include MODULE ("nouveau" -> nvidia), or NULL. */
const struct vendor *vendor_by_module(const char *module);
/* The vendor of a PCI vendor ID written as in the pci section ("10de" or "0x10de"), or NULL. */
const struct vendor *vendor_by_pci_text(const char *hex);
/* The vendor ("nvidia", "amd", "intel") a piece of text names (a finding's subject or message: "nouveau",
 * "/dev/kfd", "ROCm", "i915"...), the first word found, case-insensitive; NULL when it names none. */
const char *vendor_in_text(const char *s);
/* True when LIST (NULL-terminated, may be NULL) holds S (exact). */
bool vendor_list_has(const char *const *list, const char *s);

/* The OpenCL driver whose library names contain a part of S (a file name or path: only the last
 * component is compared), or NULL. */
const struct vendor_cl *vendor_cl_by_library(const char *s);
/* The OpenCL driver whose platform name or vendor parts appear in S, or NULL. */
const struct vendor_cl *vendor_cl_by_platform(const char *s);
/* The OpenCL driver called NAME, or NULL. */
const struct vendor_cl *vendor_cl_by_name(const char *name);
/* Every OpenCL driver row, in match order; *N set to their count. */
const struct vendor_cl *vendor_cl_all(size_t *n);

/* What gpucheckup can tell about the hardware a driver needs. */
enum vendor_hw {
    VENDOR_HW_NOT_NEEDED = 0, /* a CPU driver (or one made a CPU driver by its environment) */
    VENDOR_HW_PRESENT,        /* the PCI facts list a GPU it can drive */
    VENDOR_HW_ABSENT,         /* the PCI facts list every GPU and none is one it can drive */
    VENDOR_HW_UNKNOWN,        /* no usable PCI facts (the pci probe did not run, a dump, a hidden bus) */
};
/* "not-needed", "present", "absent", "unknown". */
const char *vendor_hw_name(enum vendor_hw h);

struct result_pci;
/* Does this machine have the hardware driver D needs? PCI is the pci section's facts (NULL when the
 * probe did not run or failed); ENV_VALUE is the value of D->cpu_env (NULL when unset). Writes
 * what was seen to WHY (LEN bytes), e.g. "no PCI GPU of vendor 8086 (Intel) among 0 GPUs". */
enum vendor_hw vendor_cl_hardware(const struct vendor_cl *d, const struct result_pci *pci, const char *env_value, char *why,
                                  size_t len);

struct hostfs;
/* The speed policy's rule 1 (docs/performance.md, "drivers of absent hardware"): is the hardware driver D
 * needs ABSENT (vendor_cl_hardware on PCI) while none of NODES (NULL-terminated device paths: "/dev/kfd")
 * exists, nor WSL2's /dev/dxg (its GPU, whatever the PCI facts say)? Then a runtime that drives only that
 * hardware need not be loaded. WHY (LEN bytes) says what was seen. */
bool vendor_runtime_absent(const struct hostfs *fs, const struct vendor_cl *d, const struct result_pci *pci,
                           const char *const *nodes, char *why, size_t len);

/* A driver version token (LEN bytes of S): digits and dots, at least one dot, no empty part. */
bool vendor_is_version(const char *s, size_t len);
/* The version in /proc/driver/nvidia/version content TEXT, heap, or NULL; *OPEN = 1 for the open
 * kernel module, 0 proprietary, -1 unknown. The pci and cuda probes both read that file. */
char *vendor_nvidia_parse_version(const char *text, int *open);

#endif
