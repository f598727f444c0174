/* test_cuda_smoke.c: the CUDA smoke test against a hand-filled driver API that computes on the host, its report, and the real stub. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"
#include "cuda_peak.h"
#include "cuda_internal.h"
#include "isolate.h"
#include "report.h"

/* ---- a driver API that runs the kernel's contract on the host -------------------------------------- */

enum fake_mode {
    FAKE_GOOD = 0,
    FAKE_LAZY,        /* accepts every launch and computes nothing */
    FAKE_ZEROS,       /* writes zeros */
    FAKE_OFF_BY_ONE,  /* one element (row 2, column 3) is 1 too large */
    FAKE_JIT_221,     /* no PTX JIT compiler, with a log */
    FAKE_JIT_218,     /* the PTX is rejected */
    FAKE_ALLOC_FAIL,  /* the second cuMemAlloc runs out of memory */
    FAKE_INIT_34,     /* the stub's cuInit */
    FAKE_LAUNCH_FAULT /* the kernel faults: cuCtxSynchronize answers 700 after the launch */
};

static struct {
    enum fake_mode mode;
    float elapsed_ms;       /* what cuEventElapsedTime answers; < 0: 90 % of the host time between the events */
    double t_record0, t_synced;
    int sms, clock_khz;     /* what the GPU says about itself (its plausible peak) */
    int allocs, frees, retains, releases, loads, unloads, events, event_destroys, launches;
    bool launched_since_sync;
    bool saw_log_options;
} fake;

static CUresult f_init(unsigned flags)
{
    (void)flags;
    return fake.mode == FAKE_INIT_34 ? CUDA_ERROR_STUB_LIBRARY : CUDA_SUCCESS;
}
static CUresult f_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
static CUresult f_count(int *c)
{
    *c = 1;
    return CUDA_SUCCESS;
}
static CUresult f_get(CUdevice *d, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult f_name(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "Fake H100");
    return CUDA_SUCCESS;
}
static CUresult f_attr(int *v, int attr, CUdevice d)
{
    (void)d;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = fake.sms;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *v = fake.clock_khz;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        return CUDA_SUCCESS;
    default:
        return 1;
    }
}
static CUresult f_total(size_t *b, CUdevice d)
{
    (void)d;
    *b = 1u << 30;
    return CUDA_SUCCESS;
}
static CUresult f_busid(char *s, int len, CUdevice d)
{
    (void)d;
    snprintf(s, (size_t)len, "00000000:3B:00.0"); /* upper case and 8 digits: normalised by the child */
    return CUDA_SUCCESS;
}
static CUresult f_retain(CUcontext *c, CUdevice d)
{
    (void)d;
    fake.retains++;
    *c = (CUcontext)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}
static CUresult f_release(CUdevice d)
{
    (void)d;
    fake.releases++;
    return CUDA_SUCCESS;
}
static CUresult f_set_current(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}
static CUresult f_sync(void)
{
    if (fake.mode == FAKE_LAUNCH_FAULT && fake.launched_since_sync)
        return 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
    fake.launched_since_sync = false;
    return CUDA_SUCCESS;
}
static CUresult f_alloc(CUdeviceptr *p, size_t bytes)
{
    if (fake.mode == FAKE_ALLOC_FAIL && fake.allocs == 1)
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    void *m = malloc(bytes);
    if (!m)
        return 2;
    fake.allocs++;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}
static CUresult f_free(CUdeviceptr p)
{
    fake.frees++;
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
static CUresult f_htod(CUdeviceptr dst, const void *src, size_t bytes)
{
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}
static CUresult f_dtoh(void *dst, CUdeviceptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}
static CUresult f_memset32(CUdeviceptr dst, unsigned value, size_t count)
{
    uint32_t *w = (uint32_t *)(uintptr_t)dst;
    for (size_t i = 0; i < count; i++)
        w[i] = value;
    return CUDA_SUCCESS;
}
static CUresult f_load(CUmodule *mod, const void *image, unsigned n_opts, CUjit_option *opts, void **vals)
{
    /* The embedded PTX as it is documented, and both logs asked for with their sizes. */
    assert_ptr_equal(image, cuda_smoke_ptx);
    assert_non_null(strstr(image, ".version 6.0\n.target sm_50\n.address_size 64\n"));
    char *err = NULL;
    unsigned err_size = 0;
    bool info = false;
    for (unsigned i = 0; i < n_opts; i++) {
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER)
            err = vals[i];
        else if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            err_size = (unsigned)(uintptr_t)vals[i];
        else if (opts[i] == CU_JIT_INFO_LOG_BUFFER)
            info = vals[i] != NULL;
    }
    fake.saw_log_options = err && err_size >= 1024 && info;
    if (fake.mode == FAKE_JIT_221 || fake.mode == FAKE_JIT_218) {
        if (err)
            snprintf(err, err_size, "%s",
                     fake.mode == FAKE_JIT_221 ? "error: libnvidia-ptxjitcompiler.so.1 not found\x07"
                                               : "ptxas application ptx input, line 9; fatal   : Parsing error");
        return fake.mode == FAKE_JIT_221 ? CUDA_ERROR_JIT_COMPILER_NOT_FOUND : CUDA_ERROR_INVALID_PTX;
    }
    fake.loads++;
    *mod = (CUmodule)(uintptr_t)0x2000;
    return CUDA_SUCCESS;
}
static CUresult f_getfn(CUfunction *fn, CUmodule mod, const char *name)
{
    (void)mod;
    if (strcmp(name, "gc_sgemm_f32") != 0)
        return 500; /* CUDA_ERROR_NOT_FOUND */
    *fn = (CUfunction)(uintptr_t)0x3000;
    return CUDA_SUCCESS;
}
static CUresult f_unload(CUmodule mod)
{
    (void)mod;
    fake.unloads++;
    return CUDA_SUCCESS;
}
/* The kernel's contract (cuda_internal.h): (a, b, c, n), row-major, c = a * b, 16 x 16 blocks covering
 * n x n. Computed here in fp32 with one fmaf per term, k ascending, as the PTX does. */
static CUresult f_launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, CUstream stream, void **params, void **extra)
{
    (void)fn;
    (void)stream;
    assert_null(extra);
    assert_int_equal(shared, 0);
    assert_int_equal(bx, 16);
    assert_int_equal(by, 16);
    assert_int_equal(bz, 1);
    assert_int_equal(gz, 1);
    const float *a = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
    const float *b = (const float *)(uintptr_t) * (CUdeviceptr *)params[1];
    float *c = (float *)(uintptr_t) * (CUdeviceptr *)params[2];
    unsigned n = *(unsigned *)params[3];
    assert_true(gx * bx >= n && gy * by >= n);
    assert_true(gx * bx < n + 16 && gy * by < n + 16);
    fake.launches++;
    fake.launched_since_sync = true;
    if (fake.mode == FAKE_LAZY)
        return CUDA_SUCCESS;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            float acc = 0.0f;
            for (unsigned k = 0; k < n; k++)
                acc = fmaf(a[i * n + k], b[k * n + j], acc);
            c[i * n + j] = fake.mode == FAKE_ZEROS ? 0.0f : acc;
        }
    if (fake.mode == FAKE_OFF_BY_ONE && n > 3)
        c[2 * n + 3] += 1.0f;
    return CUDA_SUCCESS;
}
static CUresult f_ev_create(CUevent *e, unsigned flags)
{
    (void)flags;
    fake.events++;
    *e = (CUevent)(uintptr_t)(0x4000 + fake.events);
    return CUDA_SUCCESS;
}
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static CUresult f_ev_record(CUevent e, CUstream s)
{
    (void)s;
    if ((uintptr_t)e == 0x4001)
        fake.t_record0 = now_ms();
    return CUDA_SUCCESS;
}
static CUresult f_ev_sync(CUevent e)
{
    (void)e;
    /* The host waits at least 1 ms for a "kernel" the events say took 0.5 ms: the events are believed
     * whatever the speed of the machine running the suite. */
    usleep(1000);
    fake.t_synced = now_ms();
    return CUDA_SUCCESS;
}
static CUresult f_ev_elapsed(float *ms, CUevent a, CUevent b)
{
    assert_ptr_not_equal(a, b);
    /* Like a real GPU: a little less than the host waited (slow hosts, valgrind and sanitizers included). */
    *ms = fake.elapsed_ms >= 0 ? fake.elapsed_ms : (float)(0.9 * (fake.t_synced - fake.t_record0));
    return CUDA_SUCCESS;
}
static CUresult f_ev_destroy(CUevent e)
{
    (void)e;
    fake.event_destroys++;
    return CUDA_SUCCESS;
}

static struct cuda_api fake_api(enum fake_mode mode)
{
    memset(&fake, 0, sizeof(fake));
    fake.mode = mode;
    fake.elapsed_ms = -1.0f;
    fake.sms = 4;
    fake.clock_khz = 1000000; /* 1 GHz: plausible peak 4 x 1000 MHz x 512 lanes x 2 = 4096 GFLOPS */
    struct cuda_api api = {
        .cuInit = f_init,
        .cuDriverGetVersion = f_version,
        .cuDeviceGetCount = f_count,
        .cuDeviceGet = f_get,
        .cuDeviceGetName = f_name,
        .cuDeviceGetAttribute = f_attr,
        .cuDeviceTotalMem = f_total,
        .cuDeviceGetPCIBusId = f_busid,
        .cuDevicePrimaryCtxRetain = f_retain,
        .cuDevicePrimaryCtxRelease = f_release,
        .cuCtxSetCurrent = f_set_current,
        .cuCtxSynchronize = f_sync,
        .cuMemAlloc = f_alloc,
        .cuMemFree = f_free,
        .cuMemcpyHtoD = f_htod,
        .cuMemcpyDtoH = f_dtoh,
        .cuMemsetD32 = f_memset32,
        .cuModuleLoadDataEx = f_load,
        .cuModuleGetFunction = f_getfn,
        .cuModuleUnload = f_unload,
        .cuLaunchKernel = f_launch,
        .cuEventCreate = f_ev_create,
        .cuEventRecord = f_ev_record,
        .cuEventSynchronize = f_ev_sync,
        .cuEventElapsedTime = f_ev_elapsed,
        .cuEventDestroy = f_ev_destroy,
    };
    assert_true(cuda_api_has_compute(&api));
    return api;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    assert_true(json_object_object_get_ex(o, key, &v));
    return v;
}
static const char *get_str(json_object *o, const char *key)
{
    json_object *v = get(o, key);
    assert_non_null(v);
    return json_object_get_string(v);
}

/* Everything the test took is given back: memory, events, module, context. */
static void assert_released(void)
{
    assert_int_equal(fake.allocs, fake.frees);
    assert_int_equal(fake.events, fake.event_destroys);
    assert_int_equal(fake.loads, fake.unloads);
    assert_int_equal(fake.retains, fake.releases);
}

/* ---- cuda_smoke_device --------------------------------------------------------------------------- */

static void test_good(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_GOOD);
    json_object *o = cuda_smoke_device(&api, 0, 70); /* not a multiple of 16: the bounds check matters */
    assert_non_null(o);
    assert_string_equal(get_str(o, "status"), "pass");
    assert_null(get(o, "failed_call"));
    assert_null(get(o, "result"));
    assert_string_equal(get_str(o, "name"), "Fake H100");
    assert_string_equal(get_str(o, "pci_bus_id"), "0000:3b:00.0");
    assert_string_equal(get_str(o, "compute_capability"), "9.0");
    assert_int_equal(json_object_get_int(get(o, "wrong_elements")), 0);
    assert_false(json_object_get_boolean(get(o, "computes_nothing")));
    json_object *passes = get(o, "passes");
    assert_int_equal(json_object_array_length(passes), 2);
    assert_string_equal(get_str(json_object_array_get_idx(passes, 0), "pass"), "exact");
    assert_string_equal(get_str(json_object_array_get_idx(passes, 0), "status"), "pass");
    assert_string_equal(get_str(json_object_array_get_idx(passes, 1), "pass"), "random");
    assert_string_equal(get_str(json_object_array_get_idx(passes, 1), "status"), "pass");
    /* The exact pass is exact: the random pass's error is small but within its tolerance. */
    assert_true(json_object_get_double(get(json_object_array_get_idx(passes, 0), "max_error")) == 0.0);
    assert_true(json_object_get_double(get(json_object_array_get_idx(passes, 1), "tolerance")) > 0.0);
    assert_int_equal(fake.launches, 2);
    assert_true(fake.saw_log_options);
    /* Timing: the events are believed ("profiling", as the OpenCL smoke test calls its events), both
     * clocks reported, the speed is plausible. */
    assert_string_equal(get_str(o, "timer"), "profiling");
    assert_null(get(o, "timer_reason"));
    double kms = json_object_get_double(get(o, "kernel_ms")), hms = json_object_get_double(get(o, "host_ms"));
    assert_true(kms >= 0.9 && kms <= hms);
    assert_non_null(get(o, "jit_ms"));
    double gf = json_object_get_double(get(o, "gflops"));
    assert_true(fabs(gf - 2.0 * 70 * 70 * 70 / (kms * 1e6)) < 0.01 * gf);
    assert_true(fabs(json_object_get_double(get(o, "peak_gflops")) - 4096.0) < 1e-6); /* 4 x 1000 x 512 x 2 */
    /* compute capability 9.0: 128 fp32 lanes per SM, 4 x 1 GHz x 128 x 2 = 1024 GFLOPS, and the share of it */
    assert_true(fabs(json_object_get_double(get(o, "theoretical_peak_gflops")) - 1024.0) < 1e-6);
    assert_true(fabs(json_object_get_double(get(o, "fraction_of_peak")) - gf / 1024.0) < 0.01);
    assert_null(get(o, "jit_error_log"));
    assert_released();
    json_object_put(o);
}

/* Events that give a speed above the GPU's plausible peak while the host clock does not: the host
 * clock's speed is reported. Events that say no time at all: the same. */
static void test_implausible_events(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_GOOD);
    fake.sms = 1;
    fake.clock_khz = 1000;    /* peak 1 x 1 MHz x 512 x 2 = 1.024 GFLOPS */
    fake.elapsed_ms = 1e-3f; /* 2 x 16^3 flops in 1 us: 8.2 GFLOPS; the host waits over 1 ms: < 0.01 */
    json_object *o = cuda_smoke_device(&api, 0, 16);
    assert_string_equal(get_str(o, "status"), "pass");
    assert_string_equal(get_str(o, "timer"), "host");
    assert_string_equal(get_str(o, "timer_reason"), "profiling-above-peak");
    double gf = json_object_get_double(get(o, "gflops"));
    assert_true(gf > 0 && gf < 1.024);
    assert_true(fabs(gf - 2.0 * 16 * 16 * 16 / (json_object_get_double(get(o, "host_ms")) * 1e6)) < 0.01 * gf);
    assert_null(get(o, "gflops_reason"));
    json_object_put(o);

    api = fake_api(FAKE_GOOD);
    fake.elapsed_ms = 0.0f;
    o = cuda_smoke_device(&api, 0, 16);
    assert_string_equal(get_str(o, "timer"), "host");
    assert_string_equal(get_str(o, "timer_reason"), "profiling-zero");
    json_object_put(o);
}

/* Events that say the kernel took longer than the host waited: the host clock is used. */
static void test_events_longer_than_host(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_GOOD);
    fake.elapsed_ms = 60000.0f;
    json_object *o = cuda_smoke_device(&api, 0, 32);
    assert_string_equal(get_str(o, "timer"), "host");
    assert_string_equal(get_str(o, "timer_reason"), "profiling-longer-than-host");
    json_object_put(o);
}

static void test_lazy(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_LAZY);
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "wrong-result");
    assert_true(json_object_get_boolean(get(o, "computes_nothing")));
    assert_non_null(strstr(get_str(o, "detail"), "computes nothing"));
    assert_non_null(strstr(get_str(o, "detail"), "left the output buffer as it was"));
    assert_int_equal(json_object_get_int(get(o, "wrong_elements")), 64 * 64);
    assert_null(get(o, "gflops"));
    /* The first pass failing stops the test: no second launch. */
    assert_int_equal(fake.launches, 1);
    assert_released();
    json_object_put(o);
}

static void test_zeros(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_ZEROS);
    json_object *o = cuda_smoke_device(&api, 0, 16);
    assert_string_equal(get_str(o, "status"), "wrong-result");
    assert_true(json_object_get_boolean(get(o, "computes_nothing")));
    assert_non_null(strstr(get_str(o, "detail"), "all zeros"));
    json_object_put(o);
}

static void test_off_by_one(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_OFF_BY_ONE);
    json_object *o = cuda_smoke_device(&api, 0, 48);
    assert_string_equal(get_str(o, "status"), "wrong-result");
    assert_false(json_object_get_boolean(get(o, "computes_nothing")));
    assert_int_equal(json_object_get_int(get(o, "wrong_elements")), 1);
    json_object *mm = get(o, "first_mismatches");
    assert_int_equal(json_object_array_length(mm), 1);
    json_object *m = json_object_array_get_idx(mm, 0);
    assert_int_equal(json_object_get_int(get(m, "row")), 2);
    assert_int_equal(json_object_get_int(get(m, "column")), 3);
    assert_string_equal(get_str(m, "pass"), "exact");
    assert_non_null(strstr(get_str(o, "detail"), "1 of 2304 elements wrong"));
    assert_released();
    json_object_put(o);
}

static void test_jit_221(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_JIT_221);
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "jit-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuModuleLoadDataEx");
    assert_int_equal(json_object_get_int(get(o, "result")), 221);
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_JIT_COMPILER_NOT_FOUND");
    /* The log, with its control byte made visible. */
    assert_string_equal(get_str(o, "jit_error_log"), "error: libnvidia-ptxjitcompiler.so.1 not found?");
    assert_non_null(strstr(get_str(o, "detail"), "libnvidia-ptxjitcompiler"));
    assert_int_equal(fake.launches, 0);
    assert_int_equal(fake.allocs, 0);
    assert_released();
    json_object_put(o);
}

static void test_jit_218(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_JIT_218);
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "jit-failed");
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_INVALID_PTX");
    assert_non_null(strstr(get_str(o, "jit_error_log"), "Parsing error"));
    json_object_put(o);
}

static void test_alloc_fail(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_ALLOC_FAIL);
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "run-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuMemAlloc");
    assert_int_equal(json_object_get_int(get(o, "result")), 2);
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_OUT_OF_MEMORY");
    assert_int_equal(fake.launches, 0);
    assert_int_equal(fake.allocs, 1);
    assert_released();
    json_object_put(o);
}

static void test_launch_fault(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_LAUNCH_FAULT);
    json_object *o = cuda_smoke_device(&api, 0, 16);
    assert_string_equal(get_str(o, "status"), "run-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuCtxSynchronize");
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_ILLEGAL_ADDRESS");
    assert_released();
    json_object_put(o);
}

static void test_init_failed(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_INIT_34);
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "init-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuInit");
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_STUB_LIBRARY");
    assert_int_equal(fake.retains, 0);
    json_object_put(o);

    api = fake_api(FAKE_GOOD);
    o = cuda_smoke_device(&api, 5, 64); /* an ordinal that is not there */
    assert_string_equal(get_str(o, "status"), "init-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuDeviceGet");
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_INVALID_DEVICE");
    json_object_put(o);
}

static void test_no_compute_api(void **state)
{
    (void)state;
    struct cuda_api api = fake_api(FAKE_GOOD);
    api.cuLaunchKernel = NULL;
    json_object *o = cuda_smoke_device(&api, 0, 64);
    assert_string_equal(get_str(o, "status"), "no-compute-api");
    assert_string_equal(get_str(o, "failed_call"), "cuLaunchKernel");
    assert_null(get(o, "result"));
    assert_int_equal(fake.retains, 0);
    json_object_put(o);
}

/* ---- cuda_smoke_report ----------------------------------------------------------------------------- */

static const struct report_finding *only_finding(const struct report *r, const char *id)
{
    const struct report_finding *found = NULL;
    for (size_t i = 0; i < r->n_findings; i++)
        if (strcmp(r->findings[i]->id, id) == 0) {
            assert_null(found);
            found = r->findings[i];
        }
    assert_non_null(found);
    return found;
}

static bool has_evidence(const struct report_finding *f, const char *source, const char *needle)
{
    for (size_t i = 0; i < f->n_evidence; i++)
        if (strcmp(f->evidence[i].source, source) == 0 && strstr(f->evidence[i].value, needle))
            return true;
    return false;
}

static void test_report(void **state)
{
    (void)state;
    struct isolate_result res[8];
    memset(res, 0, sizeof(res));
    struct cuda_smoke_args args[8];
    memset(args, 0, sizeof(args));
    static const enum fake_mode modes[] = {FAKE_GOOD, FAKE_LAZY, FAKE_JIT_221, FAKE_ALLOC_FAIL};
    for (int i = 0; i < 4; i++) {
        struct cuda_api api = fake_api(modes[i]);
        args[i] = (struct cuda_smoke_args){.ordinal = 0, .n = 32};
        res[i].status = ISOLATE_OK;
        res[i].value = cuda_smoke_device(&api, 0, 32);
    }
    args[0].pci_bus_id = "0000:00:06.0"; /* the pci section's address wins over the child's */
    args[4] = (struct cuda_smoke_args){.ordinal = 4, .n = 32, .pci_bus_id = "0000:c1:00.0"};
    res[4].status = ISOLATE_SIGNAL;
    res[4].signal = 11;
    res[4].detail = strdup("killed by SIGSEGV");
    res[4].stderr_tail = strdup("Segmentation fault in libcuda\x01");
    args[5] = (struct cuda_smoke_args){.ordinal = 5, .n = 32};
    res[5].status = ISOLATE_TIMEOUT;
    res[5].detail = strdup("timed out after 20.0 s");
    args[6] = (struct cuda_smoke_args){.ordinal = 6, .n = 32};
    res[6].status = ISOLATE_OK; /* a child that says something else: not trusted */
    res[6].value = json_object_new_object();
    json_object_object_add(res[6].value, "status", json_object_new_string("pass-ish"));
    args[7] = (struct cuda_smoke_args){.ordinal = 7, .n = 32};
    res[7].status = ISOLATE_OK;
    res[7].value = json_object_new_object();
    json_object_object_add(res[7].value, "status", json_object_new_string("init-failed"));
    json_object_object_add(res[7].value, "failed_call", json_object_new_string("cuInit"));
    json_object_object_add(res[7].value, "result", json_object_new_int(999));
    json_object_object_add(res[7].value, "result_name", json_object_new_string("CUDA_ERROR_UNKNOWN"));
    json_object_object_add(res[7].value, "detail", json_object_new_string("cuInit failed\x1b[31m"));
    json_object_object_add(res[7].value, "kernel_ms", json_object_new_string("fast")); /* wrong type: dropped */

    struct report *r = report_new();
    struct report_section *sec = report_add_section(r, "cuda");
    struct probe_ctx ctx = {.report = r, .timeout_ms = 20000};
    cuda_smoke_report(&ctx, sec, args, res, 8);

    json_object *smoke = get(sec->data, "smoke");
    assert_int_equal(json_object_array_length(smoke), 8);
    static const char *const want[] = {"pass",  "wrong-result", "jit-failed", "run-failed",
                                       "crash", "timeout",      "crash",      "init-failed"};
    for (size_t i = 0; i < 8; i++) {
        json_object *e = json_object_array_get_idx(smoke, i);
        assert_string_equal(get_str(e, "status"), want[i]);
        assert_int_equal(json_object_get_int(get(e, "ordinal")), args[i].ordinal);
    }
    assert_string_equal(get_str(json_object_array_get_idx(smoke, 0), "pci_bus_id"), "0000:00:06.0");
    /* Numbers keep the child's rounding; a negative expected value of a mismatch survives the copy. */
    assert_string_equal(json_object_to_json_string(get(json_object_array_get_idx(smoke, 0), "kernel_ms")),
                        json_object_to_json_string(get(res[0].value, "kernel_ms")));
    assert_non_null(strchr(json_object_to_json_string(get(res[0].value, "kernel_ms")), '.'));
    json_object *mms = get(json_object_array_get_idx(smoke, 1), "first_mismatches");
    assert_int_equal(json_object_array_length(mms), 8);
    int negative = 0;
    for (size_t i = 0; i < 8; i++) {
        json_object *ex = get(json_object_array_get_idx(mms, i), "expected");
        assert_non_null(ex);
        negative += json_object_get_double(ex) < 0;
    }
    assert_true(negative > 0); /* the seed gives some: the copy must keep them */
    assert_string_equal(get_str(json_object_array_get_idx(smoke, 1), "pci_bus_id"), "0000:3b:00.0");
    assert_null(get(json_object_array_get_idx(smoke, 7), "kernel_ms"));
    assert_string_equal(get_str(json_object_array_get_idx(smoke, 7), "detail"), "cuInit failed?[31m");

    /* No finding for the GPU that passed; one per failure, with the GPU as subject. */
    assert_null(report_find_finding(r, "cuda.smoke-wrong-result", "0000:00:06.0"));
    assert_int_equal(r->n_findings, 7);
    const struct report_finding *f = only_finding(r, "cuda.smoke-wrong-result");
    assert_string_equal(f->subject, "0000:3b:00.0");
    assert_int_equal(f->severity, REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "computes nothing"));
    assert_non_null(strstr(f->message, "Fake H100"));

    f = only_finding(r, "cuda.smoke-jit-failed");
    assert_int_equal(f->severity, REPORT_SEV_ERROR);
    assert_non_null(strstr(f->hint, "libnvidia-ptxjitcompiler"));
    assert_non_null(strstr(f->hint, "NVIDIA_DRIVER_CAPABILITIES=compute"));
    assert_true(has_evidence(f, "cuModuleLoadDataEx", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"));
    assert_true(has_evidence(f, "JIT error log", "libnvidia-ptxjitcompiler.so.1 not found"));

    f = report_find_finding(r, "cuda.smoke-run-failed", "0000:3b:00.0");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "CUDA_ERROR_OUT_OF_MEMORY"));
    assert_true(has_evidence(f, "cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY"));
    f = report_find_finding(r, "cuda.smoke-run-failed", "cuda:7");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "could not initialise CUDA"));
    assert_non_null(strstr(f->hint, "driver findings name the cause"));

    f = report_find_finding(r, "cuda.smoke-crash", "0000:c1:00.0");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "SIGSEGV"));
    assert_true(has_evidence(f, "child output", "Segmentation fault in libcuda?"));
    assert_non_null(report_find_finding(r, "cuda.smoke-crash", "cuda:6"));
    f = only_finding(r, "cuda.smoke-timeout");
    assert_string_equal(f->subject, "cuda:5");
    assert_non_null(strstr(f->message, "timed out"));

    /* One summary line per GPU; the passing one is marked ok. */
    assert_int_equal(sec->n_lines, 8);
    assert_int_equal(sec->lines[0].mark, REPORT_MARK_OK);
    assert_int_equal(sec->lines[1].mark, REPORT_MARK_ERROR);

    for (size_t i = 0; i < 8; i++)
        isolate_result_clear(&res[i]);
    report_free(r);
}

/* The catalogue rows: cuda.smoke-* IDs, all errors, each with a title and a hint. */
static void test_checks(void **state)
{
    (void)state;
    assert_int_equal(cuda_smoke_n_checks, 5);
    for (size_t i = 0; i < cuda_smoke_n_checks; i++) {
        assert_memory_equal(cuda_smoke_checks[i].id, "cuda.smoke-", 11);
        assert_int_equal(cuda_smoke_checks[i].severity, REPORT_SEV_ERROR);
        assert_non_null(cuda_smoke_checks[i].title);
        assert_non_null(cuda_smoke_checks[i].hint);
    }
}

/* ---- the child against the real stub --------------------------------------------------------------- */

/* Run under LD_LIBRARY_PATH naming a directory whose libcuda.so.1 is the toolkit's stub: the child
 * loads it, sets CUDA_CACHE_DISABLE, and reports the stub's cuInit answer. */
static void test_stub_child(void **state)
{
    (void)state;
    struct cuda_smoke_args a = {.ordinal = 0, .n = 64};
    struct isolate_result res;
    assert_int_equal(isolate_run(cuda_smoke_child, &a, 20000, &res), ISOLATE_OK);
    json_object *o = res.value;
    assert_string_equal(get_str(o, "status"), "init-failed");
    assert_string_equal(get_str(o, "failed_call"), "cuInit");
    assert_int_equal(json_object_get_int(get(o, "result")), CUDA_ERROR_STUB_LIBRARY);
    assert_string_equal(get_str(o, "result_name"), "CUDA_ERROR_STUB_LIBRARY");
    /* The path the dynamic linker found it under: our directory's libcuda.so.1 (the link to the stub). */
    assert_non_null(strstr(get_str(o, "libcuda"), "/gc-cuda-smoke-"));
    assert_non_null(strstr(get_str(o, "libcuda"), "/libcuda.so.1"));
    assert_true(json_object_get_boolean(get(o, "cache_disabled")));

    struct report *r = report_new();
    struct report_section *sec = report_add_section(r, "cuda");
    struct probe_ctx ctx = {.report = r, .timeout_ms = 20000};
    cuda_smoke_report(&ctx, sec, &a, &res, 1);
    const struct report_finding *f = only_finding(r, "cuda.smoke-run-failed");
    assert_string_equal(f->subject, "cuda:0");
    assert_non_null(strstr(f->message, "CUDA_ERROR_STUB_LIBRARY"));
    report_free(r);
    isolate_result_clear(&res);
}

/* "stub": set up a directory with libcuda.so.1 -> $GC_CUDA_STUB, put it first on LD_LIBRARY_PATH and
 * run again as "stub-run" (the dynamic linker reads LD_LIBRARY_PATH once, at start). */
static int stub_reexec(const char *self)
{
    const char *stub = getenv("GC_CUDA_STUB");
    if (!stub) {
        fprintf(stderr, "GC_CUDA_STUB is not set\n");
        return 1;
    }
    char dir[] = "/tmp/gc-cuda-smoke-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char link[sizeof(dir) + 16];
    snprintf(link, sizeof(link), "%s/libcuda.so.1", dir);
    if (symlink(stub, link) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_LIBRARY_PATH", dir, 1);
        execl(self, self, "stub-run", (char *)NULL);
        _exit(127);
    }
    int st = 1;
    if (pid > 0)
        waitpid(pid, &st, 0);
    unlink(link);
    rmdir(dir);
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* "dump": data["smoke"] of a report over every outcome, on stdout, for the schema test
 * (test_cuda_smoke_schema.py). */
static int dump_smoke(void)
{
    static const enum fake_mode modes[] = {FAKE_GOOD,       FAKE_LAZY,       FAKE_ZEROS,    FAKE_OFF_BY_ONE,
                                           FAKE_JIT_221,    FAKE_JIT_218,    FAKE_ALLOC_FAIL, FAKE_INIT_34,
                                           FAKE_LAUNCH_FAULT};
    enum { N_MODES = sizeof(modes) / sizeof(modes[0]), N = N_MODES + 3 };
    struct isolate_result res[N];
    struct cuda_smoke_args args[N];
    memset(res, 0, sizeof(res));
    memset(args, 0, sizeof(args));
    for (size_t i = 0; i < N_MODES; i++) {
        struct cuda_api api = fake_api(modes[i]);
        args[i] = (struct cuda_smoke_args){.ordinal = 0, .n = 24};
        res[i].status = ISOLATE_OK;
        res[i].value = cuda_smoke_device(&api, 0, 24);
    }
    struct cuda_api api = fake_api(FAKE_GOOD);
    api.cuEventSynchronize = NULL;
    args[N_MODES] = (struct cuda_smoke_args){.ordinal = 1, .n = 24};
    res[N_MODES].status = ISOLATE_OK;
    res[N_MODES].value = cuda_smoke_device(&api, 0, 24); /* no-compute-api */
    args[N_MODES + 1] = (struct cuda_smoke_args){.ordinal = 2, .n = 24, .pci_bus_id = "0000:01:00.0"};
    res[N_MODES + 1].status = ISOLATE_SIGNAL;
    res[N_MODES + 1].detail = strdup("killed by SIGSEGV");
    args[N_MODES + 2] = (struct cuda_smoke_args){.ordinal = 3, .n = 24};
    res[N_MODES + 2].status = ISOLATE_TIMEOUT;
    res[N_MODES + 2].detail = strdup("timed out after 1.0 s");
    struct report *r = report_new();
    struct report_section *sec = report_add_section(r, "cuda");
    struct probe_ctx ctx = {.report = r, .timeout_ms = 1000};
    cuda_smoke_report(&ctx, sec, args, res, N);
    json_object *smoke = NULL;
    int rc = json_object_object_get_ex(sec->data, "smoke", &smoke) ? 0 : 1;
    puts(json_object_to_json_string_ext(smoke, JSON_C_TO_STRING_PRETTY));
    for (size_t i = 0; i < N; i++)
        isolate_result_clear(&res[i]);
    report_free(r);
    return rc;
}

/* The fp32 lanes per SM table against NVIDIA's published fp32 peaks (boost clocks): V100 SXM2 80 SMs at
 * 1530 MHz 15.7 TFLOPS, A100 108 at 1410 19.5, RTX 4090 128 at 2520 82.6, H100 SXM5 132 at 1980 67. */
static void test_theoretical_peak(void **state)
{
    (void)state;
    assert_true(fabs(cuda_peak_fp32_gflops(7, 0, 80, 1530000) - 15667.2) < 1);
    assert_true(fabs(cuda_peak_fp32_gflops(8, 0, 108, 1410000) - 19491.8) < 1);
    assert_true(fabs(cuda_peak_fp32_gflops(8, 9, 128, 2520000) - 82575.4) < 1);
    assert_true(fabs(cuda_peak_fp32_gflops(9, 0, 132, 1980000) - 66908.2) < 1);
    assert_int_equal(cuda_peak_fp32_lanes(6, 0), 64);
    assert_int_equal(cuda_peak_fp32_lanes(6, 1), 128);
    assert_int_equal(cuda_peak_fp32_lanes(8, 6), 128);
    assert_int_equal(cuda_peak_fp32_lanes(3, 5), 192);
    assert_int_equal(cuda_peak_fp32_lanes(2, 0), 0); /* Fermi and unknown ones: not in the table */
    assert_int_equal(cuda_peak_fp32_lanes(42, 0), 0);
    assert_true(isnan(cuda_peak_fp32_gflops(42, 0, 10, 1000)));
    assert_true(isnan(cuda_peak_fp32_gflops(9, 0, 0, 1000)));
    assert_true(isnan(cuda_peak_fp32_gflops(9, 0, 10, -1)));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),         cmocka_unit_test(test_implausible_events),
        cmocka_unit_test(test_events_longer_than_host),
        cmocka_unit_test(test_lazy),         cmocka_unit_test(test_zeros),
        cmocka_unit_test(test_off_by_one),   cmocka_unit_test(test_jit_221),
        cmocka_unit_test(test_jit_218),      cmocka_unit_test(test_alloc_fail),
        cmocka_unit_test(test_launch_fault), cmocka_unit_test(test_init_failed),
        cmocka_unit_test(test_no_compute_api), cmocka_unit_test(test_report),
        cmocka_unit_test(test_checks),       cmocka_unit_test(test_theoretical_peak),
    };
    const struct CMUnitTest stub_tests[] = {
        cmocka_unit_test(test_stub_child),
    };
    if (argc > 1 && strcmp(argv[1], "stub") == 0)
        return stub_reexec(argv[0]);
    if (argc > 1 && strcmp(argv[1], "dump") == 0)
        return dump_smoke();
    if (argc > 1 && strcmp(argv[1], "stub-run") == 0)
        return cmocka_run_group_tests(stub_tests, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
