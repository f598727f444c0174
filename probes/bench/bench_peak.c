/* bench_peak.c: a device's theoretical GEMM peak: compute units x clock x FLOP per cycle, with its source. */
#include "bench_peak.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* FLOP per cycle per core of x86 CPUs in fp32 (a fused multiply-add counts two), by the widest usable SIMD:
 * - AVX-512: two 16-lane FMA units (Intel Skylake-SP and later server cores, AMD Zen 4 splits 512-bit ops
 *   over two 256-bit units: the same rate) = 64. Cores with one 512-bit FMA unit reach half: an upper bound.
 * - AVX2 with FMA: two 8-lane FMA units (Intel Haswell and later, AMD Zen 2 and later; Intel's and AMD's
 *   optimisation manuals) = 32. Zen 1 has half: an upper bound there.
 * - AVX without FMA: one 8-lane add and one 8-lane multiply per cycle (Sandy Bridge) = 16.
 * - SSE2: one 4-lane add and one 4-lane multiply = 8.
 * fp64 is half of each (half the lanes); fp16 has no native GEMM arithmetic on these CPUs: as fp32. */
static double bench_peak_cpu_fpc(const struct bench_peak_in *in, const char **source)
{
    if (in->avx512f) {
        *source = "CPU device: cores x clock x FLOP/cycle of AVX-512, two FMA units (64 fp32, 32 fp64; the cpu probe's flags)";
        return 64;
    }
    if (in->avx2_fma) {
        *source = "CPU device: cores x clock x FLOP/cycle of AVX2+FMA, two FMA units (32 fp32, 16 fp64; the cpu probe's flags)";
        return 32;
    }
    if (in->avx) {
        *source = "CPU device: cores x clock x FLOP/cycle of AVX add + multiply (16 fp32, 8 fp64; the cpu probe's flags)";
        return 16;
    }
    if (in->sse2) {
        *source = "CPU device: cores x clock x FLOP/cycle of SSE2 add + multiply (8 fp32, 4 fp64; the cpu probe's flags)";
        return 8;
    }
    *source = NULL;
    return NAN;
}

/* fp32 lanes per compute unit of GPUs by vendor, as their OpenCL drivers count compute units:
 * - NVIDIA: one compute unit is an SM; 128 fp32 lanes per SM from Maxwell on (Pascal GP10x, Turing, Ampere
 *   GA10x, Ada, Hopper whitepapers); GP100, V100 and A100 have 64: an upper bound there.
 * - AMD: a GCN/CDNA compute unit has four 16-lane SIMDs = 64 lanes (AMD GCN whitepaper); RDNA drivers
 *   count a workgroup processor (two CUs) as a unit = 128 lanes, taken as the bound for both.
 * - Intel: one compute unit is an EU with 8 fp32 lanes (Gen9 two SIMD4 FPUs; Xe-LP/HPG one SIMD8 FPU). */
static double bench_peak_gpu_lanes(const char *vendor, const char **source)
{
    if (vendor && (strcasestr(vendor, "nvidia"))) {
        *source = "GPU: SMs x clock x 128 fp32 lanes x 2 (NVIDIA SM, Maxwell and later)";
        return 128;
    }
    if (vendor && (strcasestr(vendor, "advanced micro") || strcasestr(vendor, "amd"))) {
        *source = "GPU: compute units x clock x 128 fp32 lanes x 2 (AMD: RDNA workgroup processor; GCN CU has 64)";
        return 128;
    }
    if (vendor && strcasestr(vendor, "intel")) {
        *source = "GPU: EUs x clock x 8 fp32 lanes x 2 (Intel EU)";
        return 8;
    }
    *source = NULL;
    return NAN;
}

void bench_peak_compute(const struct bench_peak_in *in, enum bench_prec p, struct bench_peak *out)
{
    out->gflops = NAN;
    out->flops_per_cycle = NAN;
    snprintf(out->source, sizeof(out->source), "%s", "unknown: the device reports no compute units or no clock");
    if (!in || in->compute_units == 0 || in->clock_mhz == 0)
        return;
    const char *src = NULL;
    double fpc;
    unsigned mhz = in->clock_mhz;
    if (in->cpu) {
        fpc = bench_peak_cpu_fpc(in, &src);
        if (!src) {
            snprintf(out->source, sizeof(out->source), "%s",
                     "unknown: the host CPU's SIMD width is not known (not x86, or no cpu facts)");
            return;
        }
        if (p == BENCH_FP64)
            fpc /= 2;
        /* The cores run at up to the boost clock under load: a peak at the base clock is passed. */
        if (in->boost_mhz > mhz)
            mhz = in->boost_mhz;
    } else {
        fpc = 2.0 * bench_peak_gpu_lanes(in->vendor, &src);
        if (!src) {
            snprintf(out->source, sizeof(out->source), "%s", "unknown: no lane count known for this vendor's compute units");
            return;
        }
        if (p != BENCH_FP32) {
            /* The fp64 and fp16 rates of GPUs differ by model (1/2 to 1/64; 1x to 2x) and OpenCL reports neither. */
            snprintf(out->source, sizeof(out->source), "%s", "unknown: OpenCL does not report a GPU's fp64 or fp16 rate");
            return;
        }
    }
    out->flops_per_cycle = fpc;
    out->gflops = (double)in->compute_units * mhz * fpc / 1000.0;
    if (in->cpu && mhz != in->clock_mhz)
        snprintf(out->source, sizeof(out->source), "%s; at the boost clock, %u MHz (cpufreq cpuinfo_max_freq; the device says %u)",
                 src, mhz, in->clock_mhz);
    else if (in->cpu)
        snprintf(out->source, sizeof(out->source), "%s; at the clock the device reports, %u MHz (no cpufreq boost clock exposed)",
                 src, mhz);
    else
        snprintf(out->source, sizeof(out->source), "%s", src);
}

unsigned bench_peak_boost_mhz(const struct hostfs *fs)
{
    DIR *d = fs ? hostfs_opendir(fs, "/sys/devices/system/cpu") : NULL;
    if (!d)
        return 0;
    uint64_t best = 0;
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL && n < 4096) {
        if (strncmp(de->d_name, "cpu", 3) != 0 || !isdigit((unsigned char)de->d_name[3]) ||
            strspn(de->d_name + 3, "0123456789") != strlen(de->d_name + 3))
            continue;
        n++;
        char path[128];
        uint64_t khz = 0;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/%.16s/cpufreq/cpuinfo_max_freq", de->d_name);
        /* kHz; above 20 GHz is no CPU's clock */
        if (hostfs_read_u64(fs, path, &khz) == 0 && khz > best && khz < 20000000)
            best = khz;
    }
    closedir(d);
    return (unsigned)(best / 1000);
}

static bool bench_peak_flag(const struct result_cpu *cpu, const char *name)
{
    return result_cpu_flag(cpu, name) == GC_TRI_YES;
}

void bench_peak_cpu_flags(struct bench_peak_in *in, const struct result_cpu *cpu)
{
    in->avx512f = in->avx2_fma = in->avx = in->sse2 = false;
    if (!cpu)
        return;
    in->avx512f = bench_peak_flag(cpu, "avx512f");
    in->avx2_fma = bench_peak_flag(cpu, "avx2") && bench_peak_flag(cpu, "fma");
    in->avx = bench_peak_flag(cpu, "avx");
    in->sse2 = bench_peak_flag(cpu, "sse2");
}
