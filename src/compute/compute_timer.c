/* compute_timer.c: which clock times a compute check's kernel (profiling events or the host), and the speed ceiling. */
#include "compute_timer.h"

#include <math.h>
#include <string.h>

/* The ceiling is compute units x clock x lanes x 2 (one multiply-add is two operations), with bounds
 * chosen to be generous: it exists to catch figures no hardware can reach, and must never cap a
 * healthy fast device.
 *
 * Lanes: the device's native or preferred float vector width cannot be the bound by itself: it is
 * the width of the OpenCL C vector types the compiler likes, not the hardware's lanes (NVIDIA and
 * llvmpipe answer 1). So the larger of it and a fixed bound per device type is used:
 * - GPUs and accelerators: 512 fp32 lanes per compute unit. The widest real units today: an NVIDIA
 *   SM has 128 fp32 lanes (Ampere/Hopper whitepapers: H100 SXM, 132 SMs x 1980 MHz x 128 x 2 =
 *   67 TFLOPS); AMD's OpenCL counts an RDNA workgroup processor (two CUs of 64 lanes, dual issue:
 *   256) as one compute unit; a CDNA3 CU issues 128 packed lanes. 512 leaves twice the widest.
 * - CPU devices: 64 lanes per core: an x86 core with AVX-512 retires at most two 16-lane fp32 FMAs
 *   per cycle (Intel and AMD optimisation manuals), 32 lanes; 64 leaves twice that.
 * CPU devices also report clocks and counts that are not the hardware's: llvmpipe always reports 8
 * compute units at 300 MHz (Mesa, src/gallium/drivers/llvmpipe/lp_screen.c) and runs one thread per
 * host CPU; PoCL reports a nominal clock that turbo exceeds. For them the clock is at least 6000 MHz
 * (above any shipping CPU's all-core clock) and the compute units at least the host's online CPUs. */
double compute_peak_gflops(const struct compute_peak_props *p)
{
    if (!p || p->compute_units == 0 || p->clock_mhz == 0)
        return NAN;
    double cus = p->compute_units, mhz = p->clock_mhz, lanes;
    if (p->cpu) {
        if (p->host_cpus > p->compute_units)
            cus = p->host_cpus;
        if (mhz < COMPUTE_PEAK_CPU_MHZ)
            mhz = COMPUTE_PEAK_CPU_MHZ;
        lanes = p->float_width > COMPUTE_PEAK_CPU_LANES ? p->float_width : COMPUTE_PEAK_CPU_LANES;
    } else {
        lanes = p->float_width > COMPUTE_PEAK_GPU_LANES ? p->float_width : COMPUTE_PEAK_GPU_LANES;
    }
    return cus * mhz * lanes * 2.0 / 1000.0; /* MHz x FLOP per cycle = MFLOPS; / 1000 = GFLOPS */
}

void compute_timing_decide(double prof_ms, double host_ms, double flops, double peak_gflops, struct compute_timing *out)
{
    bool host_ok = isfinite(host_ms) && host_ms > 0;
    bool peak_ok = isfinite(peak_gflops) && peak_gflops > 0;
    enum compute_timer_why why;
    if (!isfinite(prof_ms) || prof_ms < 0)
        why = COMPUTE_TIMER_PROFILING_MISSING;
    else if (prof_ms < COMPUTE_TIMER_ZERO_MS)
        why = COMPUTE_TIMER_PROFILING_ZERO;
    else if (host_ok && prof_ms > host_ms * (1.0 + COMPUTE_TIMER_LONGER_SHARE) + COMPUTE_TIMER_LONGER_MS)
        why = COMPUTE_TIMER_PROFILING_LONGER;
    else if (host_ok && host_ms - prof_ms > COMPUTE_TIMER_OVERHEAD_MS &&
             host_ms - prof_ms > COMPUTE_TIMER_OVERHEAD_SHARE * host_ms)
        why = COMPUTE_TIMER_PROFILING_SHORTER;
    else if (peak_ok && host_ok && flops / (prof_ms * 1e6) > peak_gflops && flops / (host_ms * 1e6) <= peak_gflops)
        why = COMPUTE_TIMER_PROFILING_ABOVE_PEAK; /* when both clocks exceed it, the peak is what is wrong */
    else
        why = COMPUTE_TIMER_PROFILING_OK;

    out->why = why;
    out->above_peak = false;
    out->blame_profiling = host_ok && (why == COMPUTE_TIMER_PROFILING_MISSING ||
                                       why == COMPUTE_TIMER_PROFILING_LONGER ||
                                       why == COMPUTE_TIMER_PROFILING_SHORTER ||
                                       why == COMPUTE_TIMER_PROFILING_ABOVE_PEAK ||
                                       (why == COMPUTE_TIMER_PROFILING_ZERO &&
                                        (host_ms >= COMPUTE_TIMER_BLAME_ZERO_MS ||
                                         (peak_ok && flops > COMPUTE_TIMER_ZERO_MS * 1e6 * peak_gflops))));
    out->gflops = NAN;
    if (why == COMPUTE_TIMER_PROFILING_OK) {
        out->timer = "profiling";
        out->ms = prof_ms;
    } else if (host_ok) {
        out->timer = "host";
        out->ms = host_ms;
    } else {
        out->timer = NULL;
        out->ms = NAN;
        out->why = COMPUTE_TIMER_NO_TIME;
        return;
    }
    /* A real kernel never takes 0 ms; a time that rounds there gives no speed. */
    if (out->ms > 0 && isfinite(flops) && flops > 0) {
        double g = flops / (out->ms * 1e6);
        if (peak_ok && g > peak_gflops)
            out->above_peak = true;
        else
            out->gflops = g;
    }
}

const char *compute_timer_why_name(enum compute_timer_why why)
{
    switch (why) {
    case COMPUTE_TIMER_PROFILING_MISSING:
        return "profiling-missing";
    case COMPUTE_TIMER_PROFILING_ZERO:
        return "profiling-zero";
    case COMPUTE_TIMER_PROFILING_LONGER:
        return "profiling-longer-than-host";
    case COMPUTE_TIMER_PROFILING_SHORTER:
        return "profiling-shorter-than-host";
    case COMPUTE_TIMER_PROFILING_ABOVE_PEAK:
        return "profiling-above-peak";
    case COMPUTE_TIMER_NO_TIME:
        return "no-time";
    case COMPUTE_TIMER_PROFILING_OK:
    default:
        return NULL;
    }
}

enum compute_timer_why compute_timer_why_parse(const char *name)
{
    for (int w = COMPUTE_TIMER_PROFILING_MISSING; name && w <= COMPUTE_TIMER_NO_TIME; w++)
        if (strcmp(name, compute_timer_why_name((enum compute_timer_why)w)) == 0)
            return (enum compute_timer_why)w;
    return COMPUTE_TIMER_PROFILING_OK;
}

const char *compute_timer_why_text(enum compute_timer_why why)
{
    switch (why) {
    case COMPUTE_TIMER_PROFILING_MISSING:
        return "the driver's profiling events could not be read";
    case COMPUTE_TIMER_PROFILING_ZERO:
        return "the driver's profiling events say the kernel took no time";
    case COMPUTE_TIMER_PROFILING_LONGER:
        return "the driver's profiling events say the kernel took longer than the host waited for it";
    case COMPUTE_TIMER_PROFILING_SHORTER:
        return "the driver's profiling events say the kernel took far less time than the host waited for it";
    case COMPUTE_TIMER_PROFILING_ABOVE_PEAK:
        return "the driver's profiling events give a speed above the device's plausible peak";
    case COMPUTE_TIMER_NO_TIME:
        return "neither the profiling events nor the host clock gave a time";
    case COMPUTE_TIMER_PROFILING_OK:
    default:
        return "the driver's profiling events agree with the host clock";
    }
}
