/* smoke_hint.h: the smoke probe's hints that depend on the device's type and the stage a child stopped in. */
#ifndef GPUCHECKUP_SMOKE_HINT_H
#define GPUCHECKUP_SMOKE_HINT_H

#include "report.h"
#include "cldevices.h"

/* True when T is a CPU device (its type lists CPU). */
bool smoke_target_is_cpu(const struct cldev_target *t);

/* Set the hint of F, a smoke.timeout of device T that the run's --timeout stopped in STAGE (may be NULL),
 * where the catalogue's (a GPU hang: dmesg, another job on the GPU) is not the truth: the kernel was still
 * being compiled, or the device is the CPU. Otherwise F keeps the catalogue's hint. */
void smoke_timeout_hint(struct report_finding *f, const struct cldev_target *t, const char *stage);

#endif
