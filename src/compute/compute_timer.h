/* compute_timer.h: which clock times a compute check's kernel (profiling events or the host), and the speed ceiling. */
#ifndef GPUCHECKUP_COMPUTE_TIMER_H
#define GPUCHECKUP_COMPUTE_TIMER_H

#include <stdbool.h>

/* What a device says about itself, for its plausible peak. 0 means "not reported". */
struct compute_peak_props {
    bool cpu;                /* CL_DEVICE_TYPE has the CPU bit */
    unsigned compute_units;  /* CL_DEVICE_MAX_COMPUTE_UNITS */
    unsigned clock_mhz;      /* CL_DEVICE_MAX_CLOCK_FREQUENCY */
    unsigned float_width;    /* the larger of CL_DEVICE_NATIVE_ and PREFERRED_VECTOR_WIDTH_FLOAT */
    unsigned host_cpus;      /* online CPUs of this host (used for CPU devices only) */
};

/* The fixed per-device-type bounds the ceiling uses (see smoke_timer.c for why). */
#define COMPUTE_PEAK_GPU_LANES 512u  /* fp32 lanes per compute unit, GPUs and accelerators */
#define COMPUTE_PEAK_CPU_LANES 64u   /* fp32 lanes per core, CPU devices */
#define COMPUTE_PEAK_CPU_MHZ 6000u   /* the clock assumed for a CPU device that reports less */

/* The device's plausible fp32 peak in GFLOPS: compute units x clock x lanes x 2 (a multiply-add),
 * a generous ceiling that catches impossible figures, never a real speed. NAN when the device
 * reports no compute units or no clock (nothing to judge by). */
double compute_peak_gflops(const struct compute_peak_props *p);

/* Why the host clock was used instead of the profiling events. */
enum compute_timer_why {
    COMPUTE_TIMER_PROFILING_OK = 0, /* profiling used */
    COMPUTE_TIMER_PROFILING_MISSING,  /* clGetEventProfilingInfo failed, or end before start */
    COMPUTE_TIMER_PROFILING_ZERO,     /* the kernel took (next to) no time at all */
    COMPUTE_TIMER_PROFILING_LONGER,   /* longer than the host saw from before the launch to its end */
    COMPUTE_TIMER_PROFILING_SHORTER,  /* shorter than the host time by more than a launch's overhead */
    COMPUTE_TIMER_PROFILING_ABOVE_PEAK, /* a speed above the device's plausible peak, the host's below it */
    COMPUTE_TIMER_NO_TIME,            /* neither clock gave a time */
};

/* Below this a profiled kernel time is "zero": ten cycles of a 1 GHz clock, in which no device
 * launches, runs and retires a kernel. rusticl 22.3 (Mesa) answers 0, 1, 2, 3 ns for queued, submit,
 * start and end (measured with llvmpipe): a 1 ns kernel. */
#define COMPUTE_TIMER_ZERO_MS 1e-5
/* The most a warm launch plausibly adds to the host's view of a kernel (enqueue, start, completion
 * seen by clWaitForEvents), even on a busy host; and the share of the host time it may take. The
 * profiled time disagrees when it is shorter than the host time by more than both. Measured: PoCL
 * adds 0.05 ms on an idle 2-core VM, and 4.8 ms when the test suite keeps both cores busy. */
#define COMPUTE_TIMER_OVERHEAD_MS 20.0
#define COMPUTE_TIMER_OVERHEAD_SHARE 0.5
/* The profiled time may exceed the host time by this much (two clocks, their rounding) and no more. */
#define COMPUTE_TIMER_LONGER_SHARE 0.25
#define COMPUTE_TIMER_LONGER_MS 0.1
/* A "zero" profiled time blames the driver only when the host waited at least this long (a kernel
 * the host saw take a millisecond was no 10 ns kernel, while a 1x1 product might be close to one),
 * or when even the device's plausible peak could not do the work in 10 ns. */
#define COMPUTE_TIMER_BLAME_ZERO_MS 1.0

struct compute_timing {
    const char *timer;          /* "profiling", "host", or NULL when there is no time */
    enum compute_timer_why why;
    double ms;                  /* the time reported (of the chosen clock), NAN when none */
    double gflops;              /* flops / ms, NAN when not reported */
    bool above_peak;            /* the chosen time gives a speed above the peak: no GFLOPS reported */
    bool blame_profiling;       /* the evidence against the profiling events is strong enough to say so
                                   (a finding naming the driver), not only to prefer the host clock */
};

/* Decide which time to report for a kernel of FLOPS operations: PROF_MS from the profiling events
 * (NAN when they could not be read), HOST_MS from the host's monotonic clock around the launch and
 * the wait (NAN when unknown), PEAK_GFLOPS the ceiling (NAN when unknown). Fills OUT. Pure. */
void compute_timing_decide(double prof_ms, double host_ms, double flops, double peak_gflops,
                           struct compute_timing *out);

/* "profiling-missing", "profiling-zero", ... for JSON; NULL for COMPUTE_TIMER_PROFILING_OK. Static. */
const char *compute_timer_why_name(enum compute_timer_why why);
/* The reason named NAME (as compute_timer_why_name gives it); COMPUTE_TIMER_PROFILING_OK for NULL or an
 * unknown name. */
enum compute_timer_why compute_timer_why_parse(const char *name);
/* One phrase for people: "the profiling events could not be read". Static. */
const char *compute_timer_why_text(enum compute_timer_why why);

#endif
