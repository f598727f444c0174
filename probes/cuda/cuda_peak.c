/* cuda_peak.c: fp32 lanes per SM by compute capability, for an NVIDIA GPU's theoretical peak. */
#include "cuda_peak.h"

#include <math.h>

/* Results per clock cycle per multiprocessor of 32-bit floating-point add, multiply and multiply-add: the
 * throughput table of the CUDA C++ Programming Guide ("Arithmetic Instructions"; CUDA 12.x), and the
 * architecture whitepapers where the guide stops: Kepler (3.x) 192; Maxwell (5.x) 128; Pascal GP100 (6.0)
 * 64, GP10x (6.1, 6.2) 128; Volta (7.0, 7.2) and Turing (7.5) 64; Ampere GA100 (8.0) 64, GA10x (8.6, 8.7)
 * 128; Ada (8.9) 128; Hopper (9.0) 128; Blackwell B200 (10.0), Thor (10.1/11.0), GB300 (10.3), RTX 50
 * (12.0) and GB10 (12.1) 128 (NVIDIA Blackwell architecture technical brief). Checked against NVIDIA's
 * published fp32 figures: V100 SXM2 15.7 TFLOPS, A100 19.5, RTX 4090 82.6, H100 SXM5 67 (test_cuda_peak). */
int cuda_peak_fp32_lanes(int major, int minor)
{
    switch (major) {
    case 3:
        return 192;
    case 5:
        return 128;
    case 6:
        return minor == 0 ? 64 : 128;
    case 7:
        return 64;
    case 8:
        return minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 11:
    case 12:
        return 128;
    default:
        return 0;
    }
}

double cuda_peak_fp32_gflops(int major, int minor, int sms, int clock_khz)
{
    int lanes = cuda_peak_fp32_lanes(major, minor);
    if (lanes <= 0 || sms <= 0 || clock_khz <= 0)
        return NAN;
    return (double)sms * ((double)clock_khz / 1e6) * lanes * 2.0;
}
