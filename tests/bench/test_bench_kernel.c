/* test_bench_kernel.c: the bench GEMM kernels pick the right variant and compute exactly right on PoCL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_half.h"
#include "bench_kernel.h"
#include "clapi.h"

/* A GPU-like device, a CPU (PoCL's figures), a small GPU, one with neither big groups nor local memory. */
static const struct bench_kernel_hints gpu = {false, 1024, 65536, 40, "NVIDIA Corporation"};
static const struct bench_kernel_hints pocl = {true, 4096, 524288, 2, "pthread"};
static const struct bench_kernel_hints small_gpu = {false, 64, 16384, 4, NULL};
static const struct bench_kernel_hints bare = {false, 16, 0, 1, NULL};

static void check_geometry(const struct bench_kernel *k, const struct bench_kernel_hints *h, size_t n)
{
    const size_t np = (n + k->pad - 1) / k->pad * k->pad;
    size_t global[2] = {0, 0}, local[2] = {7, 7};
    bench_kernel_geometry(k, h, np, global, local);
    for (int d = 0; d < 2; d++) {
        assert_true(global[d] > 0);
        if (local[0] != 0) {
            assert_true(local[d] > 0);
            assert_int_equal(global[d] % local[d], 0);
        }
    }
    if (local[0] != 0)
        assert_true(local[0] * local[1] <= h->max_wg_size);
}

static void test_pick(void **state)
{
    (void)state;
    struct bench_kernel k;
    for (int p = BENCH_FP32; p <= BENCH_FP16; p++) {
        assert_int_equal(bench_kernel_pick((enum bench_prec)p, &gpu, &k), 0);
        assert_non_null(strstr(k.name, "tiled"));
        assert_int_equal(k.pad, 64);
        for (size_t n = 1; n < 300; n += 37)
            check_geometry(&k, &gpu, n);
        assert_int_equal(bench_kernel_pick((enum bench_prec)p, &small_gpu, &k), 0);
        assert_non_null(strstr(k.name, "tiled"));
        assert_int_equal(k.pad, 32);
        check_geometry(&k, &small_gpu, 100);
        /* A CPU never gets local-memory tiles, whatever its work-group size. */
        assert_int_equal(bench_kernel_pick((enum bench_prec)p, &pocl, &k), 0);
        assert_non_null(strstr(k.name, "gc_gemm_cpul_"));
        assert_int_equal(k.pad, p == BENCH_FP64 ? 8 : 16); /* 4 rows x 2 vectors of 4 doubles or 8 floats */
        for (size_t n = 1; n < 2100; n += 129)
            check_geometry(&k, &pocl, n);
        /* Neither local memory nor groups of 64: the plain register-blocked kernel, still runnable. */
        assert_int_equal(bench_kernel_pick((enum bench_prec)p, &bare, &k), 0);
        assert_non_null(strstr(k.name, "gc_gemm_cpu_"));
        check_geometry(&k, &bare, 200);
    }
    assert_int_equal(bench_kernel_pick((enum bench_prec)3, &gpu, &k), -1);
    assert_int_equal(bench_kernel_pick((enum bench_prec)-1, &gpu, &k), -1);
    assert_int_equal(bench_kernel_pick(BENCH_FP32, NULL, &k), -1);
    assert_int_equal(bench_kernel_pick(BENCH_FP32, &gpu, NULL), -1);
}

/* ---- on a real OpenCL device ---- */

static struct clapi api;
static cl_device_id devices[8];
static unsigned ndevices;

static int setup(void **state)
{
    (void)state;
    /* PoCL alone unless the caller names other drivers (GC_BENCH_KERNEL_VENDORS, e.g. rusticl.icd). */
    const char *v = getenv("GC_BENCH_KERNEL_VENDORS");
    setenv("OCL_ICD_VENDORS", v && *v ? v : "pocl.icd", 1);
    char err[512];
    if (clapi_open(&api, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "test_bench_kernel: %s\n", err);
        return -1;
    }
    cl_platform_id plats[4];
    cl_uint np = 0;
    if (api.clGetPlatformIDs(4, plats, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint i = 0; i < np && i < 4; i++) {
        cl_uint nd = 0;
        if (api.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8 - ndevices, devices + ndevices, &nd) == CL_SUCCESS)
            ndevices += nd;
    }
    return 0;
}

/* The loader stays loaded (and API reachable) until exit: after a dlclose, LeakSanitizer sees the state
 * PoCL keeps for the life of the process with frames in no module, which tests/lsan.supp cannot match. */
static int teardown(void **state)
{
    (void)state;
    return 0;
}

static const size_t elem[3] = {4, 8, 2};

/* Run kernel K on DEV for N x N integer matrices (values -3..3, -1..1 in fp16 so every sum is exact) and
 * compare the N x N corner with the CPU's sums; returns the number of wrong elements. */
static size_t run_gemm(cl_device_id dev, cl_context ctx, cl_command_queue q, const struct bench_kernel *k,
                       const struct bench_kernel_hints *h, enum bench_prec p, size_t n)
{
    const size_t np = (n + k->pad - 1) / k->pad * k->pad, bytes = np * np * elem[p];
    const int span = p == BENCH_FP16 ? 3 : 7;
    int *ia = malloc(n * n * sizeof *ia), *ib = malloc(n * n * sizeof *ib);
    void *a = calloc(1, bytes), *b = calloc(1, bytes), *c = calloc(1, bytes);
    assert_true(ia && ib && a && b && c);
    unsigned seed = (unsigned)(n * 31 + p);
    for (size_t i = 0; i < n * n; i++) {
        seed = seed * 1103515245u + 12345u;
        ia[i] = (int)((seed >> 16) % (unsigned)span) - span / 2;
        seed = seed * 1103515245u + 12345u;
        ib[i] = (int)((seed >> 16) % (unsigned)span) - span / 2;
        bench_elem_put(a, p, i / n * np + i % n, ia[i]);
        bench_elem_put(b, p, i / n * np + i % n, ib[i]);
    }
    cl_int err;
    const char *src = k->source;
    cl_program prog = api.clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    assert_non_null(prog);
    err = api.clBuildProgram(prog, 1, &dev, k->options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192] = "";
        api.clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "%s %s: %s\n", k->name, k->options, log);
    }
    assert_int_equal(err, CL_SUCCESS);
    cl_kernel kern = api.clCreateKernel(prog, k->name, &err);
    assert_non_null(kern);
    cl_mem ba = api.clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    cl_mem bb = api.clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
    cl_mem bc = api.clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_true(ba && bb && bc);
    const cl_int ni = (cl_int)np;
    assert_int_equal(api.clSetKernelArg(kern, 0, sizeof ni, &ni), CL_SUCCESS);
    assert_int_equal(api.clSetKernelArg(kern, 1, sizeof ba, &ba), CL_SUCCESS);
    assert_int_equal(api.clSetKernelArg(kern, 2, sizeof bb, &bb), CL_SUCCESS);
    assert_int_equal(api.clSetKernelArg(kern, 3, sizeof bc, &bc), CL_SUCCESS);
    size_t global[2], local[2];
    bench_kernel_geometry(k, h, np, global, local);
    assert_int_equal(api.clEnqueueNDRangeKernel(q, kern, 2, NULL, global, local[0] ? local : NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(api.clEnqueueReadBuffer(q, bc, CL_TRUE, 0, bytes, c, 0, NULL, NULL), CL_SUCCESS);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            long ref = 0;
            for (size_t x = 0; x < n; x++)
                ref += (long)ia[i * n + x] * ib[x * n + j];
            bad += bench_elem_get(c, p, i * np + j) != (double)ref;
        }
    api.clReleaseMemObject(ba);
    api.clReleaseMemObject(bb);
    api.clReleaseMemObject(bc);
    api.clReleaseKernel(kern);
    api.clReleaseProgram(prog);
    free(ia);
    free(ib);
    free(a);
    free(b);
    free(c);
    return bad;
}

/* Every variant the table can hand out, every precision, odd sizes (padding) and a multiple of every pad. */
static void test_exact_on_device(void **state)
{
    (void)state;
    assert_true(ndevices > 0); /* PoCL is a test dependency (.ci/packages): no device is a failure */
    static const size_t sizes[] = {1, 7, 65, 200, 128};
    for (unsigned d = 0; d < ndevices; d++) {
        cl_int err;
        cl_context ctx = api.clCreateContext(NULL, 1, &devices[d], NULL, NULL, &err);
        assert_non_null(ctx);
        cl_command_queue q = api.clCreateCommandQueueWithProperties(ctx, devices[d], NULL, &err);
        assert_non_null(q);
        char ext[8192] = "", name[256] = "";
        size_t wg = 0;
        cl_ulong lmem = 0;
        api.clGetDeviceInfo(devices[d], CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
        api.clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name - 1, name, NULL);
        api.clGetDeviceInfo(devices[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
        api.clGetDeviceInfo(devices[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
        /* As a CPU (register blocks, local B panel), as a GPU (local tiles), and with no local memory. */
        const struct bench_kernel_hints hints[3] = {{true, wg, lmem, 1, NULL}, {false, wg, lmem, 1, NULL},
                                                    {true, wg, 0, 1, NULL}};
        int variants = 0;
        for (int p = BENCH_FP32; p <= BENCH_FP16; p++) {
            /* fp16 is stored as half and computed in float with vload_half/vstore_half (core OpenCL C):
             * it runs on devices without cl_khr_fp16 too, so it is tested everywhere. */
            if (p == BENCH_FP64 && !strstr(ext, "cl_khr_fp64"))
                continue;
            for (int v = 0; v < 3; v++) {
                struct bench_kernel k;
                assert_int_equal(bench_kernel_pick((enum bench_prec)p, &hints[v], &k), 0);
                for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                    size_t bad = run_gemm(devices[d], ctx, q, &k, &hints[v], (enum bench_prec)p, sizes[s]);
                    if (bad)
                        fprintf(stderr, "%s: %s (%s) N=%zu: %zu wrong\n", name, k.name, k.options, sizes[s], bad);
                    assert_int_equal(bad, 0);
                }
                variants++;
            }
        }
        assert_true(variants >= 6);
        api.clReleaseCommandQueue(q);
        api.clReleaseContext(ctx);
    }
}

/* The host's half conversion, which the fp16 checks rest on. */
static void test_half(void **state)
{
    (void)state;
    assert_int_equal(bench_half_from_float(1.0f), 0x3c00);
    assert_int_equal(bench_half_from_float(-2.0f), 0xc000);
    assert_int_equal(bench_half_from_float(65504.0f), 0x7bff);
    assert_int_equal(bench_half_from_float(70000.0f), 0x7c00);
    assert_int_equal(bench_half_from_float(5.9604645e-8f), 0x0001);
    assert_int_equal(bench_half_from_float(2049.0f), 0x6800); /* a tie: to even (2048) */
    assert_int_equal(bench_half_from_float(2051.0f), 0x6802); /* a tie: to even (2052) */
    for (int i = -2048; i <= 2048; i++)
        assert_true(bench_half_to_float(bench_half_from_float((float)i)) == (float)i);
    assert_true(bench_half_to_float(0x0001) == 5.9604645e-8f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_half),
        cmocka_unit_test(test_exact_on_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
