/* bench_options.h: bench's options (--bench-time, --bench-precision, --plot), owned here, parsed by cli.c. */
#ifndef GPUCHECKUP_BENCH_OPTIONS_H
#define GPUCHECKUP_BENCH_OPTIONS_H

#include "probe.h"

#define BENCH_DEFAULT_TIME_S 10.0
#define BENCH_MAX_TIME_S 3600.0
#define BENCH_PREC_ALL 7u /* bit 0 fp32, bit 1 fp64, bit 2 fp16 (enum bench_prec) */

struct bench_options {
    double time_s;      /* --bench-time SECONDS: the whole bench's budget */
    unsigned precs;     /* --bench-precision LIST: bit (1 << enum bench_prec) per precision */
    const char *plot;   /* --plot FILE (.svg or .png; points into argv), or NULL */
};

/* The values parsed (the defaults before cli_parse): written only while parsing, read by the probe. */
const struct bench_options *bench_options(void);

/* probe_bench's option rows and their reset (for struct probe). */
extern const struct probe_option bench_option_rows[];
void bench_options_reset(void);

#endif
