/* smoke_kernel.c: the OpenCL C source of the smoke test's matrix multiply (and a test-only override). */
#include "smoke_kernel.h"

#include <stddef.h>

/* C = A x B for n x n row-major matrices. Each work item computes eight neighbouring elements of one
 * row of C (dimension 0 walks groups of eight columns, dimension 1 the rows), so that neighbouring
 * work items read neighbouring elements of B and every load of A feeds eight multiply-adds (on
 * PoCL, twice as fast as four, four times as fast as one); the last group of a row, when n is not a
 * multiple of eight, takes the columns one at a time. Every element is summed over k in increasing
 * order, like the CPU reference. Deliberately plain otherwise (no local memory): the point is to
 * prove that the driver builds and runs a kernel and that the device computes right, not to reach
 * peak speed. One macro, one kernel per precision; the double and half kernels are only compiled
 * where the device has the extension. */
static const char smoke_kernel_builtin[] =
    "#define SMOKE_GEMM(NAME, T)                                                        \\\n"
    "__kernel void NAME(const uint n, __global const T *a, __global const T *b,        \\\n"
    "                   __global T *c)                                                 \\\n"
    "{                                                                                 \\\n"
    "    const uint col = (uint)get_global_id(0) * 8u, row = (uint)get_global_id(1);   \\\n"
    "    if (row >= n || col >= n)                                                     \\\n"
    "        return;                                                                   \\\n"
    "    __global const T *ar = a + row * n;                                           \\\n"
    "    if (col + 8u <= n) {                                                          \\\n"
    "        T c0 = (T)0, c1 = (T)0, c2 = (T)0, c3 = (T)0;                             \\\n"
    "        T c4 = (T)0, c5 = (T)0, c6 = (T)0, c7 = (T)0;                             \\\n"
    "        for (uint k = 0; k < n; k++) {                                            \\\n"
    "            const T x = ar[k];                                                    \\\n"
    "            __global const T *br = b + k * n + col;                               \\\n"
    "            c0 += x * br[0];                                                      \\\n"
    "            c1 += x * br[1];                                                      \\\n"
    "            c2 += x * br[2];                                                      \\\n"
    "            c3 += x * br[3];                                                      \\\n"
    "            c4 += x * br[4];                                                      \\\n"
    "            c5 += x * br[5];                                                      \\\n"
    "            c6 += x * br[6];                                                      \\\n"
    "            c7 += x * br[7];                                                      \\\n"
    "        }                                                                         \\\n"
    "        __global T *cr = c + row * n + col;                                       \\\n"
    "        cr[0] = c0;                                                               \\\n"
    "        cr[1] = c1;                                                               \\\n"
    "        cr[2] = c2;                                                               \\\n"
    "        cr[3] = c3;                                                               \\\n"
    "        cr[4] = c4;                                                               \\\n"
    "        cr[5] = c5;                                                               \\\n"
    "        cr[6] = c6;                                                               \\\n"
    "        cr[7] = c7;                                                               \\\n"
    "    } else {                                                                      \\\n"
    "        for (uint j = col; j < n; j++) {                                          \\\n"
    "            T acc = (T)0;                                                         \\\n"
    "            for (uint k = 0; k < n; k++)                                          \\\n"
    "                acc += ar[k] * b[k * n + j];                                      \\\n"
    "            c[row * n + j] = acc;                                                 \\\n"
    "        }                                                                         \\\n"
    "    }                                                                             \\\n"
    "}\n"
    "SMOKE_GEMM(smoke_gemm_fp32, float)\n"
    "#ifdef SMOKE_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "SMOKE_GEMM(smoke_gemm_fp64, double)\n"
    "#endif\n"
    "#ifdef SMOKE_FP16\n"
    "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "SMOKE_GEMM(smoke_gemm_fp16, half)\n"
    "#endif\n";

/* Work items per row of C: one per group of eight columns. */
size_t smoke_kernel_columns(unsigned n)
{
    return ((size_t)n + 7) / 8;
}

static const char *smoke_kernel_override;

void smoke_set_kernel_source_for_tests(const char *src)
{
    smoke_kernel_override = src;
}

const char *smoke_kernel_source(void)
{
    return smoke_kernel_override ? smoke_kernel_override : smoke_kernel_builtin;
}

const char *smoke_kernel_options(bool fp64, bool fp16)
{
    return fp64 && fp16 ? "-DSMOKE_FP64 -DSMOKE_FP16" : fp64 ? "-DSMOKE_FP64" : fp16 ? "-DSMOKE_FP16" : "";
}

const char *smoke_kernel_name(enum smoke_prec p)
{
    static const char *const names[SMOKE_N_PREC] = {
        [SMOKE_FP32] = "smoke_gemm_fp32",
        [SMOKE_FP64] = "smoke_gemm_fp64",
        [SMOKE_FP16] = "smoke_gemm_fp16",
    };
    return (unsigned)p < SMOKE_N_PREC ? names[p] : "smoke_gemm_unknown";
}
