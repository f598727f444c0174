/* bench_peak.h: a device's theoretical GEMM peak from its properties (and the CPU's SIMD facts), with its source. */
#ifndef GPUCHECKUP_BENCH_PEAK_H
#define GPUCHECKUP_BENCH_PEAK_H

#include <stdbool.h>
#include <json-c/json.h>

#include "bench_kernel.h"

/* What the peak is computed from. */
struct bench_peak_in {
    bool cpu;                 /* a CPU device (PoCL...) */
    const char *vendor;       /* CL_DEVICE_VENDOR, may be NULL */
    unsigned compute_units;   /* CL_DEVICE_MAX_COMPUTE_UNITS */
    unsigned clock_mhz;       /* CL_DEVICE_MAX_CLOCK_FREQUENCY */
    /* the host CPU's usable SIMD (the cpu probe's flags; all false when unknown) */
    bool avx512f, avx2_fma, avx, sse2;
};

struct bench_peak {
    double gflops;            /* NAN: unknown */
    double flops_per_cycle;   /* per compute unit, in this precision */
    const char *source;       /* static: what the figure rests on ("CPU: AVX2+FMA..."), or why it is unknown */
};

/* The peak of precision P for IN. Always fills OUT (gflops NAN when it cannot be told). Pure. */
void bench_peak_compute(const struct bench_peak_in *in, enum bench_prec p, struct bench_peak *out);

/* Fill the SIMD facts of IN from the cpu section's data (NULL or odd shapes leave them false). */
void bench_peak_cpu_flags(struct bench_peak_in *in, json_object *cpu_section_data);

#endif
