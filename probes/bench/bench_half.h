/* bench_half.h: IEEE 754 binary16 <-> float conversion on the host, for fp16 GEMM inputs and checks. */
#ifndef GPUCHECKUP_BENCH_HALF_H
#define GPUCHECKUP_BENCH_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench_kernel.h"

/* The half nearest to F (ties to even), as OpenCL's vstore_half does by default; overflow gives
 * infinity, NaN stays NaN. */
static inline uint16_t bench_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below 2^-14: a subnormal half (or zero) */
        float a;
        memcpy(&a, &absx, sizeof a);
        /* a / 2^-24 rounded to nearest even by the FPU's default mode. */
        return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
    }
    const uint32_t mant = absx & 0x7fffffu;
    uint32_t h = ((absx >> 23) - 112u) << 10 | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is still right */
    return (uint16_t)(sign | h);
}

static inline float bench_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float f;
    if (e == 0) {
        f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    uint32_t x = sign | (e == 31 ? 0x7f800000u | m << 13 : (e + 112u) << 23 | m << 13);
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Element I of a host matrix of precision P (fp16 stored as binary16), as a double: set and get. */
static inline void bench_elem_put(void *m, enum bench_prec p, size_t i, double v)
{
    if (p == BENCH_FP32)
        ((float *)m)[i] = (float)v;
    else if (p == BENCH_FP64)
        ((double *)m)[i] = v;
    else
        ((uint16_t *)m)[i] = bench_half_from_float((float)v);
}

static inline double bench_elem_get(const void *m, enum bench_prec p, size_t i)
{
    if (p == BENCH_FP32)
        return ((const float *)m)[i];
    if (p == BENCH_FP64)
        return ((const double *)m)[i];
    return bench_half_to_float(((const uint16_t *)m)[i]);
}

#endif
