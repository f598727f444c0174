/* smoke_options.h: the smoke test's options (--smoke, --no-smoke, --smoke-size), owned here, parsed by cli.c. */
#ifndef GPUCHECKUP_SMOKE_OPTIONS_H
#define GPUCHECKUP_SMOKE_OPTIONS_H

#include "probe.h"

enum smoke_which { SMOKE_WHICH_ALL = 0, SMOKE_WHICH_GPU, SMOKE_WHICH_NONE };

#define SMOKE_DEFAULT_SIZE 256u
#define SMOKE_MAX_SIZE 4096u

struct smoke_options {
    enum smoke_which which; /* --smoke=all|gpu|none, --no-smoke (none also skips the CUDA smoke test) */
    unsigned size;          /* --smoke-size N: the matrix size (the CUDA smoke test's too) */
};

/* The values parsed (the defaults before cli_parse): written only while parsing, read by probes. */
const struct smoke_options *smoke_options(void);

/* probe_smoke's option rows and their reset (for struct probe). */
extern const struct probe_option smoke_option_rows[];
void smoke_options_reset(void);

#endif
