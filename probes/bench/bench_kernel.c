/* bench_kernel.c: gpucheckup's own GEMM kernel for `bench`: a plain local-memory tiled multiply (first version). */
#include "bench_kernel.h"

#include <string.h>

/* One work item per element of C; the work group loads TS x TS tiles of A and B into local memory
 * (the classic tiled multiply). T is the element type, ACC the accumulator (float for half). */
static const char bench_kernel_source[] =
    "#ifdef BENCH_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#endif\n"
    "#ifdef BENCH_FP16\n"
    "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))\n"
    "void bench_gemm(int n, __global const T *a, __global const T *b, __global T *c)\n"
    "{\n"
    "    __local T as[TS][TS];\n"
    "    __local T bs[TS][TS];\n"
    "    const int lr = get_local_id(1), lc = get_local_id(0);\n"
    "    const int row = get_group_id(1) * TS + lr, col = get_group_id(0) * TS + lc;\n"
    "    ACC acc = (ACC)0;\n"
    "    for (int t = 0; t < n; t += TS) {\n"
    "        as[lr][lc] = a[row * n + t + lc];\n"
    "        bs[lr][lc] = b[(t + lr) * n + col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TS; k++)\n"
    "            acc += (ACC)as[lr][k] * (ACC)bs[k][lc];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    c[row * n + col] = (T)acc;\n"
    "}\n";

/* Build options by precision (rows) and tile (16, then 8 for devices with small work groups). */
static const char *const bench_kernel_options[3][2] = {
    {"-DT=float -DACC=float -DTS=16", "-DT=float -DACC=float -DTS=8"},
    {"-DBENCH_FP64 -DT=double -DACC=double -DTS=16", "-DBENCH_FP64 -DT=double -DACC=double -DTS=8"},
    {"-DBENCH_FP16 -DT=half -DACC=float -DTS=16", "-DBENCH_FP16 -DT=half -DACC=float -DTS=8"},
};

int bench_kernel_pick(enum bench_prec p, const struct bench_kernel_hints *h, struct bench_kernel *out)
{
    if ((int)p < 0 || (int)p > 2)
        return -1;
    bool small = h && h->max_wg_size > 0 && h->max_wg_size < 256;
    out->source = bench_kernel_source;
    out->name = "bench_gemm";
    out->options = bench_kernel_options[p][small ? 1 : 0];
    out->pad = small ? 8 : 16;
    return 0;
}

void bench_kernel_geometry(const struct bench_kernel *k, const struct bench_kernel_hints *h, size_t np,
                           size_t global[2], size_t local[2])
{
    (void)h;
    global[0] = global[1] = np;
    local[0] = local[1] = k->pad;
}
