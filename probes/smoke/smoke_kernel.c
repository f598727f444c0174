/* smoke_kernel.c: the OpenCL C source of the smoke test's matrix multiply (and a test-only override). */
#include "smoke_kernel.h"

#include <stddef.h>

/* C = A x B for n x n row-major matrices. Each work item computes a block of four rows by eight
 * columns of C (dimension 0 walks groups of eight columns, dimension 1 groups of four rows): each
 * row of B it loads (eight elements, one vector) feeds four rows, and neighbouring work items read
 * neighbouring elements of B. On PoCL (2-core VM, N = 256) this took the fp32 kernel from 1.6-3 ms
 * (a row by eight columns) to 0.65 ms; a kernel that could not fill a block (N not a multiple of
 * eight or four) takes its elements one at a time. Every element is summed over k in increasing
 * order, like the CPU reference. Deliberately plain otherwise (no local memory): the point is to
 * prove that the driver builds and runs a kernel and that the device computes right, not to reach
 * peak speed. One macro, one kernel per precision; the double and half kernels are only compiled
 * where the device has the extension. */
static const char smoke_kernel_builtin[] =
    "#define SMOKE_GEMM(NAME, T, T8)                                                    \\\n"
    "__kernel void NAME(const uint n, __global const T *a, __global const T *b,        \\\n"
    "                   __global T *c)                                                 \\\n"
    "{                                                                                 \\\n"
    "    const uint col = (uint)get_global_id(0) * 8u, row = (uint)get_global_id(1) * 4u; \\\n"
    "    if (row >= n || col >= n)                                                     \\\n"
    "        return;                                                                   \\\n"
    "    __global const T *a0 = a + row * n;                                           \\\n"
    "    if (col + 8u <= n && row + 4u <= n) {                                         \\\n"
    "        T8 c0 = (T8)0, c1 = (T8)0, c2 = (T8)0, c3 = (T8)0;                        \\\n"
    "        for (uint k = 0; k < n; k++) {                                            \\\n"
    "            const T8 bk = vload8(0, b + k * n + col);                             \\\n"
    "            c0 += a0[k] * bk;                                                     \\\n"
    "            c1 += a0[n + k] * bk;                                                 \\\n"
    "            c2 += a0[2u * n + k] * bk;                                            \\\n"
    "            c3 += a0[3u * n + k] * bk;                                            \\\n"
    "        }                                                                         \\\n"
    "        __global T *cr = c + row * n + col;                                       \\\n"
    "        vstore8(c0, 0, cr);                                                       \\\n"
    "        vstore8(c1, 0, cr + n);                                                   \\\n"
    "        vstore8(c2, 0, cr + 2u * n);                                              \\\n"
    "        vstore8(c3, 0, cr + 3u * n);                                              \\\n"
    "    } else {                                                                      \\\n"
    "        for (uint i = row; i < row + 4u && i < n; i++)                            \\\n"
    "            for (uint j = col; j < col + 8u && j < n; j++) {                      \\\n"
    "                T acc = (T)0;                                                     \\\n"
    "                for (uint k = 0; k < n; k++)                                      \\\n"
    "                    acc += a[i * n + k] * b[k * n + j];                           \\\n"
    "                c[i * n + j] = acc;                                               \\\n"
    "            }                                                                     \\\n"
    "    }                                                                             \\\n"
    "}\n"
    "SMOKE_GEMM(smoke_gemm_fp32, float, float8)\n"
    "#ifdef SMOKE_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "SMOKE_GEMM(smoke_gemm_fp64, double, double8)\n"
    "#endif\n"
    "#ifdef SMOKE_FP16\n"
    "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "SMOKE_GEMM(smoke_gemm_fp16, half, half8)\n"
    "#endif\n";

/* Work items per row of C: one per group of eight columns. */
size_t smoke_kernel_columns(unsigned n)
{
    return ((size_t)n + 7) / 8;
}

/* Work items per column of C: one per group of four rows. */
size_t smoke_kernel_rows(unsigned n)
{
    return ((size_t)n + 3) / 4;
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

const char *smoke_kernel_name(enum compute_prec p)
{
    static const char *const names[COMPUTE_N_PREC] = {
        [COMPUTE_FP32] = "smoke_gemm_fp32",
        [COMPUTE_FP64] = "smoke_gemm_fp64",
        [COMPUTE_FP16] = "smoke_gemm_fp16",
    };
    return (unsigned)p < COMPUTE_N_PREC ? names[p] : "smoke_gemm_unknown";
}
