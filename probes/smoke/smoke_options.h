/* smoke_options.h: the compute tests' options (--smoke, --no-smoke, --smoke-size), documented here, parsed by cli.c. */
#ifndef GPUCHECKUP_SMOKE_OPTIONS_H
#define GPUCHECKUP_SMOKE_OPTIONS_H

#include "probe.h"

/* The values are the core's (src/compute/compute_options.h: the CUDA smoke test reads them too); the rows
 * that set them are the smoke probe's, under its --help heading.
 * probe_smoke's option rows and their reset (for struct probe). */
extern const struct probe_option smoke_option_rows[];
void smoke_options_reset(void);

#endif
