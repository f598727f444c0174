/* checks.h: the catalogue of every finding ID gpucheckup can emit, with severity and hint template. */
#ifndef GPUCHECKUP_CHECKS_H
#define GPUCHECKUP_CHECKS_H

#include <stddef.h>
#include "report.h"

/* The layer of the GPU compute stack a finding is about, bottom up. The doctor links a finding only to
 * a cause in a lower layer (a missing kernel driver explains a missing OpenCL device, never the reverse). */
enum check_layer {
    CHECK_LAYER_UNSET = 0,  /* a row that does not say (a mistake: unit-doctor lists such rows) */
    CHECK_LAYER_NONE,       /* not about the GPU stack: the CPU, gpucheckup itself, --require */
    CHECK_LAYER_HARDWARE,   /* the device on the bus */
    CHECK_LAYER_FIRMWARE,   /* the platform's firmware policy over the kernel (Secure Boot refusing a module):
                               below the kernel, since it decides which drivers can load at all */
    CHECK_LAYER_KERNEL,     /* PCI binding, kernel modules, device nodes */
    CHECK_LAYER_LOADER,     /* the OpenCL ICD loader */
    CHECK_LAYER_DRIVER,     /* the vendor's user-space driver (an ICD) */
    CHECK_LAYER_RUNTIME,    /* the compute API: OpenCL platforms and devices, the CUDA stack */
    CHECK_LAYER_COMPUTE,    /* running a kernel: the smoke test */
    CHECK_LAYER_FRAMEWORK,  /* a framework above the stacks (PyTorch, TensorFlow, JAX): its findings may have
                               causes below, and explain nothing below them; the gpu target, which says
                               whether a GPU computes, never takes them as reasons */
};

/* What the doctor may conclude from a finding, besides its layer: a row's layer field is its enum
 * check_layer OR'd with these (CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE). Each is a fact the owning
 * probe states about its own check; the doctor keeps no lists of IDs. */
#define CHECK_LAYER_MASK 0xffu
enum {
    CHECK_F_NEVER_CAUSE = 1u << 8,  /* explains no other finding (informational: link speed, an insecure
                                       or duplicate file, no GPU at all) */
    CHECK_F_NEVER_ROOT = 1u << 9,   /* never a verdict's or requirement's root cause (a driver for absent
                                       hardware explains nothing missing) */
    CHECK_F_ALL_VENDORS = 1u << 10,  /* speaks of every vendor at once: any cause in a lower layer explains
                                       it, whichever vendor that cause is about */
    CHECK_F_CAUSES_ALL = 1u << 11,   /* explains the findings of every vendor above it (no ICD loader) */
    CHECK_F_PATH_RELIEF = 1u << 12,  /* says a GPU cannot be used through the owner's compute API: an error
                                       only while some GPU has no other way to compute, a warning when every
                                       GPU on the bus is served by another API's compute path */
    CHECK_F_PATH_RELIEF_VENDOR = 1u << 13, /* the same, judged on the GPUs of the finding's vendor only */
    CHECK_F_NO_DEVICE = 1u << 14,   /* says the owning probe's stack has no device on this machine (a driver
                                       library without its GPU): the probe's other warnings and errors above
                                       the kernel can stop nothing here, and the doctor makes them info
                                       findings caused by this one */
    CHECK_F_RELIEF_INFO = 1u << 15, /* with CHECK_F_PATH_RELIEF(_VENDOR): says an API is absent for a GPU (no
                                       loader, no driver, no device), not that something is broken: where
                                       every such GPU computes through another API, information, not a
                                       warning (a CUDA container has no OpenCL ICD, and needs none) */
    CHECK_F_PLATFORM = 1u << 16,    /* about the whole machine, not one vendor's device, module, library or
                                       nodes (WSL1, WSL2 without /dev/dxg, a container given no GPU at all,
                                       no GPU on the bus): a reason for every compute path's target. A finding
                                       below every API without it is a reason only for the paths that can
                                       drive its vendor's GPUs (its vendor: doctor_finding_vendor) */
    CHECK_F_KIND_FILE = 1u << 17,   /* says a file is missing or unusable as installed (a library the loader
                                       cannot find, one of another architecture, a package's part left out, a
                                       container not given the driver's files): a packaging fact. Such a
                                       finding is caused only by another of this kind, never by a device node,
                                       a kernel module or a GPU's state */
    CHECK_F_PEER_PAIR = 1u << 20,   /* about ordered pairs of GPUs by PCI address: its subject "A->B", or its
                                       evidence entries whose source is "pair" (a peer check's finding) */
    CHECK_F_PEER_PATH = 1u << 21,   /* stands on the path between GPUs: its evidence "peer GPUs" lists, by PCI
                                       address, the GPUs whose peer traffic crosses it. It explains a
                                       CHECK_F_PEER_PAIR finding every pair of which joins two of those GPUs,
                                       when it is at least as severe (an error stays a reason of its own):
                                       doctor_peers.c, whatever the two rows' layers */
};

/* One row of the catalogue. Probes declare their own rows (struct probe.checks); the core adds its own. */
struct check {
    const char *id;          /* "area.name", lowercase with dashes; once shipped, keeps its meaning */
    enum report_severity severity;
    const char *title;       /* one line: what the finding means */
    const char *hint;        /* default fix hint (may be specialised per finding) */
    unsigned layer;          /* where in the stack (enum check_layer) | the CHECK_F_* flags that apply; last
                                so that every row states it after its hint (read it with checks_layer and
                                checks_flags) */
};

/* One owner's rows: a probe's (or one part of it). */
struct check_part {
    const char *owner;       /* the probe's name */
    const struct check *rows;
    size_t n;
};

/* The catalogue a report works with: every probe's rows, handed in by whoever makes the report
 * (registry.c's probe_catalogue() for the registered probes). The core's own rows come first. */
struct checks_catalogue {
    const struct check_part *parts;
    size_t n;
};

/* The row for ID among the core's and CAT's, or NULL (CAT may be NULL: the core's only). */
const struct check *checks_find(const struct checks_catalogue *cat, const char *id);

/* The layer of finding ID (CHECK_LAYER_NONE for an ID not in the catalogue). */
enum check_layer checks_layer(const struct checks_catalogue *cat, const char *id);
/* The CHECK_F_* flags of finding ID (0 for an ID not in the catalogue). */
unsigned checks_flags(const struct checks_catalogue *cat, const char *id);
/* Who declares finding ID: "core" or the probe's name; NULL for an ID not in the catalogue. */
const char *checks_owner(const struct checks_catalogue *cat, const char *id);
/* "hardware", "kernel"... for people and tests. */
const char *checks_layer_name(enum check_layer l);

/* Call FN for every catalogue row, core rows first, then CAT's in its order. */
void checks_foreach(const struct checks_catalogue *cat, void (*fn)(const struct check *c, const char *owner, void *arg),
                    void *arg);

#endif
