/* bench_test_hook.c: linked only into the test build of gpucheckup (never installed): GC_BENCH_TEST_KERNEL=lazy
 * replaces gpucheckup's bench kernel by a "lazy" one that returns fast with a wrong result (it copies
 * input A into C), so the suite can check that a fast wrong answer is reported as wrong, never as fast. */
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

static const char hook_lazy_source[] =
    "#ifdef BENCH_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#endif\n"
    "__kernel void bench_gemm(int n, __global const T *a, __global const T *b, __global T *c)\n"
    "{\n"
    "    const int row = get_global_id(1), col = get_global_id(0);\n"
    "    if (row < n && col < n)\n"
    "        c[row * n + col] = a[row * n + col];\n"
    "}\n";

static const struct bench_kernel hook_lazy_fp32 = {hook_lazy_source, "bench_gemm", "-DT=float", 1};

__attribute__((constructor)) static void bench_test_hook_install(void)
{
    const char *k = getenv("GC_BENCH_TEST_KERNEL");
    if (k && strcmp(k, "lazy") == 0)
        bench_set_kernel_for_tests(&hook_lazy_fp32);
}
