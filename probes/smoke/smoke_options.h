/* smoke_options.h: the compute tests' options (--smoke, --no-smoke, --smoke-size), documented here, parsed by cli.c. */
#ifndef GPUCHECKUP_SMOKE_OPTIONS_H
#define GPUCHECKUP_SMOKE_OPTIONS_H

#include "cldevices.h"
#include "probe.h"

/* The values are the core's (src/compute/compute_options.h: the CUDA smoke test reads them too); the rows
 * that set them are the smoke probe's, under its --help heading.
 * probe_smoke's option rows and their reset (for struct probe). */
extern const struct probe_option smoke_option_rows[];
void smoke_options_reset(void);

/* The matrix size for target T: the options' size, or on a CPU device (smoke_target_is_cpu) without
 * --smoke-size the smaller of it and COMPUTE_CPU_SIZE, as the Vulkan smoke test does (the speed policy's
 * rule 3: a CPU device is not the GPU the question is about; one that computes nothing or wrong still
 * fails at 64). */
unsigned smoke_size_for(const struct cldev_target *t);

#endif
