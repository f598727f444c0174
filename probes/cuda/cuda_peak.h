/* cuda_peak.h: an NVIDIA GPU's theoretical fp32 peak from its attributes: SMs x clock x fp32 lanes per SM of its compute capability. */
#ifndef GPUCHECKUP_CUDA_PEAK_H
#define GPUCHECKUP_CUDA_PEAK_H

/* fp32 lanes (results of a multiply-add per clock) per SM of compute capability MAJOR.MINOR, or 0 when not
 * in the table (cuda_peak.c gives the sources). */
int cuda_peak_fp32_lanes(int major, int minor);

/* SMS x CLOCK_KHZ x lanes x 2 (a multiply-add is two operations) in GFLOPS; NAN when the compute capability is
 * not in the table or an attribute is missing (<= 0). */
double cuda_peak_fp32_gflops(int major, int minor, int sms, int clock_khz);

#endif
