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
    CHECK_LAYER_KERNEL,     /* PCI binding, kernel modules, device nodes */
    CHECK_LAYER_LOADER,     /* the OpenCL ICD loader */
    CHECK_LAYER_DRIVER,     /* the vendor's user-space driver (an ICD) */
    CHECK_LAYER_RUNTIME,    /* the compute API: OpenCL platforms and devices, the CUDA stack */
    CHECK_LAYER_COMPUTE,    /* running a kernel: the smoke test */
};

/* One row of the catalogue. Probes declare their own rows (struct probe.checks); the core adds its own. */
struct check {
    const char *id;          /* "area.name", lowercase with dashes; once shipped, keeps its meaning */
    enum report_severity severity;
    const char *title;       /* one line: what the finding means */
    const char *hint;        /* default fix hint (may be specialised per finding) */
    enum check_layer layer;  /* where in the stack; last so that every row states it after its hint */
};

/* The row for ID across the core and every registered probe, or NULL. */
const struct check *checks_find(const char *id);

/* The layer of finding ID (CHECK_LAYER_NONE for an ID not in the catalogue). */
enum check_layer checks_layer(const char *id);
/* Who declares finding ID: "core" or the probe's name; NULL for an ID not in the catalogue. */
const char *checks_owner(const char *id);
/* "hardware", "kernel"... for people and tests. */
const char *checks_layer_name(enum check_layer l);

/* Call FN for every catalogue row, core rows first, then each probe's in registry order. */
void checks_foreach(void (*fn)(const struct check *c, const char *owner, void *arg), void *arg);

#endif
