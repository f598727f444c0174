/* bench_peak.h: a device's theoretical GEMM peak from its properties (and the CPU's SIMD facts), with its source. */
#ifndef GPUCHECKUP_BENCH_PEAK_H
#define GPUCHECKUP_BENCH_PEAK_H

#include <stdbool.h>
#include <json-c/json.h>

#include "bench_kernel.h"
#include "hostfs.h"
#include "results/result_cpu.h"

/* What the peak is computed from. */
struct bench_peak_in {
    bool cpu;                 /* a CPU device (PoCL...) */
    const char *vendor;       /* CL_DEVICE_VENDOR, may be NULL */
    unsigned compute_units;   /* CL_DEVICE_MAX_COMPUTE_UNITS */
    unsigned clock_mhz;       /* CL_DEVICE_MAX_CLOCK_FREQUENCY */
    unsigned boost_mhz;       /* CPU devices: the host's highest cpufreq cpuinfo_max_freq (bench_peak_boost_mhz), 0: unknown */
    /* the host CPU's usable SIMD (the cpu probe's flags; all false when unknown) */
    bool avx512f, avx2_fma, avx, sse2;
};

struct bench_peak {
    double gflops;            /* NAN: unknown */
    double flops_per_cycle;   /* per compute unit, in this precision */
    char source[320];         /* what the figure rests on ("CPU: AVX2+FMA..."), or why it is unknown */
};

/* The peak of precision P for IN. Always fills OUT (gflops NAN when it cannot be told). Pure. */
void bench_peak_compute(const struct bench_peak_in *in, enum bench_prec p, struct bench_peak *out);

/* The host's boost clock in MHz: the highest cpuinfo_max_freq (kHz) under /sys/devices/system/cpu/cpuN/cpufreq
 * read through FS, or 0 when none is exposed (VMs, containers without cpufreq). OpenCL CPU devices report
 * the base clock (PoCL: /proc/cpuinfo's current MHz), below what the cores run at under load. */
unsigned bench_peak_boost_mhz(const struct hostfs *fs);

/* Fill the SIMD facts of IN from the cpu facts CPU (NULL, or a flag not known usable, leaves them false). */
void bench_peak_cpu_flags(struct bench_peak_in *in, const struct result_cpu *cpu);

#endif
