/* smoke_test_hook.c: linked only into the test build of gpucheckup (never installed): installs smoke
 * kernel and stage overrides chosen by GC_SMOKE_TEST_* variables, so end-to-end tests can make the
 * driver's compiler fail, the device compute wrong, or the child crash or hang at a given stage.
 *
 *   GC_SMOKE_TEST_KERNEL=broken|wrong|wrongname   replace the kernel source
 *   GC_SMOKE_TEST_CRASH_AT=TEXT                   a segfault when a stage containing TEXT begins
 *   GC_SMOKE_TEST_HANG_AT=TEXT                    hang when a stage containing TEXT begins
 *   GC_SMOKE_TEST_ONLY_DEVICE=P:D                 crash or hang only in the child testing P:D
 *   GC_SMOKE_TEST_PROFILING=missing|zero|tenth|tenfold  what the profiling events say: unreadable,
 *                                                 1 ns (as rusticl 22.3), a tenth or ten times the truth
 *   GC_SMOKE_TEST_PEAK=tiny                       the device claims one compute unit at 1 MHz (a GPU)
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smoke_device.h"
#include "smoke_kernel.h"
#include "compute_timer.h"

/* Does not compile: the build log names the error. */
static const char hook_kernel_broken[] =
    "__kernel void smoke_gemm_fp32(const uint n, __global const float *a, __global const float *b,\n"
    "                              __global float *c)\n"
    "{\n"
    "    c[0] = undeclared_identifier_for_the_test;\n"
    "}\n";

/* Right everywhere except element (3, 7), which is one too large, in every precision and pass.
 * Each work item takes its share of the rows and of the columns, whatever the launch size. */
static const char hook_kernel_wrong[] =
    "#define GEMM(NAME, T)                                                               \\\n"
    "__kernel void NAME(const uint n, __global const T *a, __global const T *b, __global T *c) \\\n"
    "{                                                                                    \\\n"
    "    const uint per = (n + (uint)get_global_size(0) - 1u) / (uint)get_global_size(0); \\\n"
    "    const uint rper = (n + (uint)get_global_size(1) - 1u) / (uint)get_global_size(1); \\\n"
    "    const uint col0 = (uint)get_global_id(0) * per, row0 = (uint)get_global_id(1) * rper; \\\n"
    "    for (uint row = row0; row < row0 + rper && row < n; row++)                       \\\n"
    "    for (uint col = col0; col < col0 + per && col < n; col++) {                      \\\n"
    "        T acc = (T)0;                                                                \\\n"
    "        for (uint k = 0; k < n; k++)                                                 \\\n"
    "            acc += a[row * n + k] * b[k * n + col];                                  \\\n"
    "        if (row == 3u && col == 7u)                                                  \\\n"
    "            acc += (T)1;                                                             \\\n"
    "        c[row * n + col] = acc;                                                      \\\n"
    "    }                                                                                \\\n"
    "}\n"
    "GEMM(smoke_gemm_fp32, float)\n"
    "#ifdef SMOKE_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "GEMM(smoke_gemm_fp64, double)\n"
    "#endif\n";

/* Builds, but has no kernel of the expected name: clCreateKernel fails with CL_INVALID_KERNEL_NAME. */
static const char hook_kernel_wrongname[] =
    "__kernel void not_the_smoke_kernel(__global float *c) { c[get_global_id(0)] = 1.0f; }\n";

static const char *hook_crash_at, *hook_hang_at, *hook_only_device;
static _Thread_local char hook_device[32]; /* per device thread: one child tests a platform's devices side by side */

static void hook_stage(const char *stage)
{
    int p, d;
    if (sscanf(stage, "finding device %d:%d", &p, &d) == 2)
        snprintf(hook_device, sizeof(hook_device), "%d:%d", p, d);
    if (hook_only_device && strcmp(hook_only_device, hook_device) != 0)
        return;
    if (hook_crash_at && strstr(stage, hook_crash_at)) {
        /* A real fault, not raise(): LLVM-based drivers (PoCL) install a SIGSEGV handler that returns,
         * which a real fault survives only to fault again, but which swallows a raised signal. */
        volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page != MAP_FAILED)
            *page = 1;
        raise(SIGKILL);
    }
    if (hook_hang_at && strstr(stage, hook_hang_at))
        for (;;)
            pause();
}

static const char *hook_profiling, *hook_peak;

static void hook_timer(double *prof_ms, double *host_ms, struct compute_peak_props *peak)
{
    (void)host_ms;
    if (hook_profiling && strcmp(hook_profiling, "missing") == 0)
        *prof_ms = NAN;
    else if (hook_profiling && strcmp(hook_profiling, "zero") == 0)
        *prof_ms = 1e-6;
    else if (hook_profiling && strcmp(hook_profiling, "tenth") == 0)
        *prof_ms /= 10;
    else if (hook_profiling && strcmp(hook_profiling, "tenfold") == 0)
        *prof_ms *= 10;
    if (hook_peak && strcmp(hook_peak, "tiny") == 0) {
        peak->cpu = false;
        peak->compute_units = 1;
        peak->clock_mhz = 1;
    }
}

__attribute__((constructor)) static void smoke_test_hook_install(void)
{
    const char *k = getenv("GC_SMOKE_TEST_KERNEL");
    if (k && strcmp(k, "broken") == 0)
        smoke_set_kernel_source_for_tests(hook_kernel_broken);
    else if (k && strcmp(k, "wrong") == 0)
        smoke_set_kernel_source_for_tests(hook_kernel_wrong);
    else if (k && strcmp(k, "wrongname") == 0)
        smoke_set_kernel_source_for_tests(hook_kernel_wrongname);
    hook_crash_at = getenv("GC_SMOKE_TEST_CRASH_AT");
    hook_hang_at = getenv("GC_SMOKE_TEST_HANG_AT");
    hook_only_device = getenv("GC_SMOKE_TEST_ONLY_DEVICE");
    if (hook_crash_at || hook_hang_at)
        smoke_set_stage_hook_for_tests(hook_stage);
    hook_profiling = getenv("GC_SMOKE_TEST_PROFILING");
    hook_peak = getenv("GC_SMOKE_TEST_PEAK");
    if (hook_profiling || hook_peak)
        smoke_set_timer_hook_for_tests(hook_timer);
}
