/* cuda_bench.c: the cuda probe's part of `gpucheckup bench`: cuBLAS SGEMM and gpucheckup's PTX GEMM per CUDA device, verified. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parts.h"
#include "compute_check.h"
#include "compute_timer.h"
#include "cuda_api.h"
#include "cuda_internal.h"
#include "cuda_peak.h"
#include "jsonget.h"
#include "jsonnum.h"
#include "strutil.h"

/* The part of cuBLAS called, declared here (no SDK header): cublas_api.h of CUDA 10 to 13 and the cuBLAS Library
 * documentation ("cublasCreate()", "cublasDestroy()", "cublas<t>gemm()"): cublasStatus_t and cublasOperation_t
 * are int-sized enums, CUBLAS_STATUS_SUCCESS = 0, CUBLAS_OP_N = 0; the handle is an opaque pointer; alpha and
 * beta are host pointers in the default pointer mode; matrices are column-major. The _v2 names are the ones
 * the library exports (cublas_v2.h maps cublasCreate to cublasCreate_v2 and so on). */
typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
typedef cublasStatus_t (*cublas_create_fn)(cublasHandle_t *handle);
typedef cublasStatus_t (*cublas_destroy_fn)(cublasHandle_t handle);
typedef cublasStatus_t (*cublas_sgemm_fn)(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                                          const float *alpha, const float *a, int lda, const float *b, int ldb,
                                          const float *beta, float *c, int ldc);

/* The sonames tried, newest first (the toolkit's and the nvidia-cublas-cu* wheels' libraries). */
static const char *const cb_sonames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", NULL};

/* Up to this N every element is compared with the full double reference; above it CB_SAMPLES elements are. */
#define CB_FULL_N CUDA_BENCH_FULL_N
#define CB_SAMPLES CUDA_BENCH_SAMPLES
#define CB_BLOCK 16u
#define CB_MIN_RUNS 3
#define CB_MAX_RUNS 7
#define CB_SHORT_MS 20.0
/* What the output holds before every run: a quiet NaN, so an element nobody wrote is wrong. */
#define CB_POISON 0x7FC0FFEEu

enum cb_impl { CB_OURS = 0, CB_CUBLAS = 1 };

struct cb_dev {
    const struct cuda_api *api;
    char *stage;
    CUdevice dev;
    CUfunction fn;
    CUevent e0, e1;
    cublasHandle_t blas;
    cublas_sgemm_fn sgemm;
    int sms, clock_khz, major, minor;
    double theory, plausible; /* cuda_peak.c's fp32 peak; the smoke test's plausibility ceiling */
    double end_ms;            /* when this device's budget ends (jsonnum_now_ms) */
};

static void cb_stage(char *shared, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cb_stage(char *shared, const char *fmt, ...)
{
    if (!shared)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(shared, BENCH_PARTS_STAGE_MAX, fmt, ap);
    va_end(ap);
}

static json_object *cb_err(json_object *o, const char *status, const char *detail)
{
    json_object_object_add(o, "status", json_object_new_string(status));
    json_object_object_add(o, "detail", cuda_smoke_json_str(detail, 1000));
    return o;
}

static char *cb_call_failed(const char *call, CUresult r)
{
    const char *name = cuda_result_name(r);
    return name ? str_printf("%s failed: %s (%d)", call, name, r) : str_printf("%s failed: CUresult %d", call, r);
}

/* dlopen libcuda.so.1 into API (*HANDLE: its handle or NULL); NULL, or the status saying why not: "missing", "error". */
static const char *cb_load_cuda(struct cuda_api *api, void **handle)
{
    setenv("CUDA_CACHE_DISABLE", "1", 1); /* as the smoke test: the PTX is compiled, nothing written under $HOME */
    *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!*handle)
        return "missing";
    const char *missing = NULL;
    memset(api, 0, sizeof(*api));
    if (cuda_api_load(*handle, api, &missing) < 0)
        return "error";
    return NULL;
}

json_object *bench_cuda_list_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object(), *devs = json_object_new_array();
    struct cuda_api api;
    void *h = NULL;
    const char *bad = cb_load_cuda(&api, &h);
    json_object_object_add(o, "devices", devs);
    if (bad) {
        const char *e = h ? "libcuda.so.1 lacks a driver API function" : dlerror();
        return cb_err(o, bad, e ? e : "dlopen(\"libcuda.so.1\") failed");
    }
    Dl_info info;
    void *sym = dlsym(h, "cuInit");
    if (sym && dladdr(sym, &info) && info.dli_fname)
        json_object_object_add(o, "libcuda", cuda_smoke_json_str(info.dli_fname, 4096));
    int count = 0;
    const char *call = "cuInit";
    CUresult r = api.cuInit(0);
    if (r == CUDA_SUCCESS)
        call = "cuDeviceGetCount", r = api.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NO_DEVICE) {
        char *d = cb_call_failed(call, r);
        cb_err(o, "error", d);
        free(d);
        return o;
    }
    for (int i = 0; r == CUDA_SUCCESS && i < count && i < 64; i++) {
        CUdevice dev;
        char name[256] = "";
        json_object *d = json_object_new_object();
        json_object_object_add(d, "ordinal", json_object_new_int(i));
        if (api.cuDeviceGet(&dev, i) == CUDA_SUCCESS && api.cuDeviceGetName(name, (int)sizeof(name) - 1, dev) == CUDA_SUCCESS)
            json_object_object_add(d, "name", cuda_smoke_json_str(name, 255));
        json_object_array_add(devs, d);
    }
    json_object_object_add(o, "status", json_object_new_string("ok"));
    return o;
}

/* cuBLAS: dlopen, the three functions, a handle. Fills O["cublas"]; false when not usable. */
static bool cb_open_cublas(struct cb_dev *d, json_object *o)
{
    json_object *c = json_object_new_object();
    json_object_object_add(o, "cublas", c);
    void *h = NULL;
    const char *lib = NULL, *env = getenv("GPUCHECKUP_LIBCUBLAS"); /* the one library to try instead (tests) */
    for (size_t i = 0; !h && (env && *env ? i == 0 : cb_sonames[i] != NULL); i++)
        h = dlopen(lib = env && *env ? env : cb_sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        char *m = env && *env ? str_printf("GPUCHECKUP_LIBCUBLAS=%s: %s", env, dlerror())
                              : str_dup("no libcublas.so.13, .12 or .11 on the loader's path");
        cb_err(c, "missing", m);
        free(m);
        return false;
    }
    json_object_object_add(c, "library", json_object_new_string(lib));
    Dl_info info;
    cublas_create_fn create = (cublas_create_fn)dlsym(h, "cublasCreate_v2");
    d->sgemm = (cublas_sgemm_fn)dlsym(h, "cublasSgemm_v2");
    if (create && dladdr((void *)create, &info) && info.dli_fname)
        json_object_object_add(c, "path", cuda_smoke_json_str(info.dli_fname, 4096));
    if (!create || !d->sgemm || !dlsym(h, "cublasDestroy_v2")) {
        cb_err(c, "failed", "the library lacks cublasCreate_v2, cublasSgemm_v2 or cublasDestroy_v2");
        return false;
    }
    cublasStatus_t st = create(&d->blas);
    if (st != 0) {
        char *m = str_printf("cublasCreate_v2 returned cublasStatus_t %d", st);
        cb_err(c, "failed", m);
        free(m);
        d->blas = NULL;
        return false;
    }
    json_object_object_add(c, "status", json_object_new_string("loaded"));
    return true;
}

bool cuda_bench_verify(struct compute_problem *p, const float *out, const uint32_t *prior, struct compute_check *chk,
                      const char **method)
{
    unsigned n = p->n;
    if (n <= CB_FULL_N) {
        *method = "full";
        if (!p->ref && compute_problem_reference(p) < 0)
            return false;
        compute_verify(p, out, prior, chk);
        return true;
    }
    *method = "sampled";
    memset(chk, 0, sizeof(*chk));
    size_t unchanged = 0, zero = 0;
    uint64_t s = 0x9E3779B97F4A7C15ull ^ n;
    for (unsigned k = 0; k < CB_SAMPLES; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = (unsigned)((s >> 33) % n), j = (unsigned)((s >> 13) % n);
        double want = 0;
        for (unsigned t = 0; t < n; t++)
            want += p->ad[(size_t)i * n + t] * p->bd[(size_t)t * n + j];
        double got = out[(size_t)i * n + j], err = fabs(got - want);
        uint32_t bits;
        memcpy(&bits, &out[(size_t)i * n + j], sizeof(bits));
        unchanged += prior && bits == prior[(size_t)i * n + j];
        zero += got == 0.0;
        chk->elements++;
        if (!isfinite(got))
            chk->nonfinite++;
        if (!isfinite(got) || err > compute_problem_tolerance(p, i, j)) {
            if (chk->n_first < COMPUTE_MAX_MISMATCHES)
                chk->first[chk->n_first++] = (struct compute_mismatch){i, j, want, got};
            chk->wrong++;
        }
        if (!(chk->max_error >= err))
            chk->max_error = isfinite(err) ? err : INFINITY;
    }
    chk->unchanged = unchanged == CB_SAMPLES;
    chk->all_zero = zero == CB_SAMPLES;
    return true;
}

/* One multiplication by IMPL into C (row-major n x n). */
static CUresult cb_launch(struct cb_dev *d, enum cb_impl impl, CUdeviceptr *a, CUdeviceptr *b, CUdeviceptr *c,
                          unsigned n)
{
    if (impl == CB_CUBLAS) {
        /* Row-major C = A B is column-major C^T = B^T A^T: hand cuBLAS B first. */
        const float one = 1.0f, zero = 0.0f;
        int in = (int)n;
        cublasStatus_t st = d->sgemm(d->blas, 0, 0, in, in, in, &one, (const float *)(uintptr_t)*b, in,
                                     (const float *)(uintptr_t)*a, in, &zero, (float *)(uintptr_t)*c, in);
        return st == 0 ? CUDA_SUCCESS : 1000 + st;
    }
    void *params[4] = {a, b, c, &n};
    unsigned grid = (n + CB_BLOCK - 1) / CB_BLOCK;
    return d->api->cuLaunchKernel(d->fn, grid, grid, 1, CB_BLOCK, CB_BLOCK, 1, 0, NULL, params, NULL);
}

static int cb_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Timed runs (after the verified one): the medians of the event and the host clocks. */
static CUresult cb_time(struct cb_dev *d, enum cb_impl impl, CUdeviceptr *bufs, unsigned n, double *kms, double *hms)
{
    const struct cuda_api *api = d->api;
    double k[CB_MAX_RUNS], h[CB_MAX_RUNS];
    int runs = 0, nk = 0;
    CUresult r = CUDA_SUCCESS;
    while (runs < CB_MAX_RUNS && (runs < CB_MIN_RUNS || (h[runs - 1] < CB_SHORT_MS && jsonnum_now_ms() < d->end_ms))) {
        double t0 = jsonnum_now_ms();
        if ((r = api->cuEventRecord(d->e0, NULL)) || (r = cb_launch(d, impl, &bufs[0], &bufs[1], &bufs[2], n)) ||
            (r = api->cuEventRecord(d->e1, NULL)) || (r = api->cuEventSynchronize(d->e1)))
            return r;
        h[runs++] = jsonnum_now_ms() - t0;
        float ems = -1.0f;
        if (api->cuEventElapsedTime(&ems, d->e0, d->e1) == CUDA_SUCCESS && isfinite(ems) && ems >= 0.0f)
            k[nk++] = ems;
    }
    qsort(h, (size_t)runs, sizeof(double), cb_cmp);
    qsort(k, (size_t)nk, sizeof(double), cb_cmp);
    *hms = h[runs / 2];
    *kms = nk == runs ? k[nk / 2] : NAN;
    return r;
}

/* The point's speed from the two clocks, as the smoke test decides (compute_timer.c). */
static void cb_speed(struct cb_dev *d, json_object *pt, unsigned n, double kms, double hms)
{
    struct compute_timing tm;
    double flops = 2.0 * n * (double)n * n;
    compute_timing_decide(kms, hms, flops, d->plausible, &tm);
    double g = tm.above_peak ? NAN : tm.gflops;
    json_object_object_add(pt, "ms", jsonnum_ms(tm.ms));
    json_object_object_add(pt, "timer", tm.timer ? json_object_new_string(tm.timer) : NULL);
    json_object_object_add(pt, "gflops", jsonnum_sig(g, 4));
    json_object_object_add(pt, "fraction_of_peak",
                           isfinite(g) && isfinite(d->theory) && g <= d->theory ? jsonnum_sig(g / d->theory, 3) : NULL);
    if (tm.above_peak) {
        char *why = str_printf("%.4g GFLOPS by the %s clock would exceed the GPU's plausible peak of %.4g GFLOPS: "
                               "not a speed", flops / (tm.ms * 1e6), tm.timer ? tm.timer : "?", d->plausible);
        json_object_object_add(pt, "detail", cuda_smoke_json_str(why, 400));
        free(why);
    }
}

/* Verify OUT against P into PT; true when right. */
static bool cb_check(json_object *pt, struct compute_problem *p, const float *out, const uint32_t *prior, bool *nomem)
{
    struct compute_check chk;
    const char *method = NULL;
    if (!cuda_bench_verify(p, out, prior, &chk, &method)) {
        *nomem = true;
        return false;
    }
    json_object_object_add(pt, "check", json_object_new_string(method));
    json_object_object_add(pt, "max_error", jsonnum_sig(chk.max_error, 6));
    json_object_object_add(pt, "wrong_elements", json_object_new_int64((int64_t)chk.wrong));
    if (!chk.wrong)
        return true;
    char *what = compute_check_describe(&chk);
    bool nothing = chk.unchanged || chk.all_zero;
    char *d = str_printf("%s%s", nothing ? "computes nothing: " : "", what ? what : "wrong elements");
    json_object_object_add(pt, "detail", cuda_smoke_json_str(d, 1000));
    free(d);
    free(what);
    return false;
}

/* One size: allocate, upload, poison, run once and verify, then time. Returns the point ({"n", "status": ok |
 * wrong | failed, ...}); *FAIL set to the failure (heap) when a call failed. */
static json_object *cb_point(struct cb_dev *d, enum cb_impl impl, unsigned n, char **fail)
{
    const struct cuda_api *api = d->api;
    json_object *pt = json_object_new_object();
    json_object_object_add(pt, "n", json_object_new_int((int)n));
    struct compute_problem p;
    size_t nn = (size_t)n * n, bytes = nn * sizeof(float);
    int g = compute_problem_generate(&p, COMPUTE_FP32, COMPUTE_PASS_RANDOM, n, BENCH_PARTS_SEED + n);
    float *out = g == 0 ? malloc(bytes) : NULL;
    uint32_t *prior = g == 0 ? malloc(bytes) : NULL;
    CUdeviceptr bufs[3] = {0, 0, 0};
    CUresult r = CUDA_SUCCESS;
    const char *call = "malloc";
    bool nomem = !out || !prior, right = false;
    for (size_t i = 0; !nomem && i < nn; i++)
        prior[i] = CB_POISON;
    if (!nomem) {
        memcpy(out, prior, bytes);
        for (int i = 0; i < 3 && !r; i++)
            r = api->cuMemAlloc(&bufs[i], bytes), call = "cuMemAlloc";
        if (!r && !(r = api->cuMemcpyHtoD(bufs[0], p.a, bytes)) && !(r = api->cuMemcpyHtoD(bufs[1], p.b, bytes)))
            call = "cuMemsetD32", r = api->cuMemsetD32(bufs[2], CB_POISON, nn);
        if (!r)
            call = impl == CB_CUBLAS ? "cublasSgemm_v2" : "cuLaunchKernel",
            r = cb_launch(d, impl, &bufs[0], &bufs[1], &bufs[2], n);
        if (!r && !(call = "cuCtxSynchronize", r = api->cuCtxSynchronize()))
            call = "cuMemcpyDtoH", r = api->cuMemcpyDtoH(out, bufs[2], bytes);
        if (!r)
            right = cb_check(pt, &p, out, prior, &nomem);
    }
    double kms = NAN, hms = NAN;
    if (!r && right && !nomem && (call = "timed runs", r = cb_time(d, impl, bufs, n, &kms, &hms)) == CUDA_SUCCESS)
        cb_speed(d, pt, n, kms, hms);
    for (int i = 0; i < 3; i++)
        if (bufs[i])
            api->cuMemFree(bufs[i]);
    if (r || nomem) {
        *fail = r >= 1000 ? str_printf("%s returned cublasStatus_t %d", call, r - 1000)
                : nomem   ? str_dup("out of host memory")
                          : cb_call_failed(call, r);
    }
    const char *st = *fail ? "failed" : right ? "ok" : "wrong";
    json_object_object_add(pt, "status", json_object_new_string(st));
    if (*fail)
        json_object_object_add(pt, "detail", cuda_smoke_json_str(*fail, 1000));
    if (!right)
        json_object_object_add(pt, "gflops", NULL);
    free(out);
    free(prior);
    compute_problem_free(&p);
    return pt;
}

/* Sweep IMPL over the sizes until BUDGET_MS is spent, a size is wrong, or a call fails. */
static json_object *cb_sweep(struct cb_dev *d, enum cb_impl impl, double budget_ms)
{
    static const unsigned sizes[] = BENCH_PARTS_SIZES;
    json_object *sw = json_object_new_object(), *pts = json_object_new_array();
    const char *name = impl == CB_CUBLAS ? "cublas" : "gpucheckup";
    json_object_object_add(sw, "implementation", json_object_new_string(name));
    json_object_object_add(sw, "precision", json_object_new_string("fp32"));
    json_object_object_add(sw, "budget_ms", jsonnum_ms(budget_ms));
    double t0 = jsonnum_now_ms(), last = 0;
    const char *status = "ok", *stopped = "max-size";
    char *fail = NULL;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        double now = jsonnum_now_ms();
        /* Stop before a size that would not fit: the next one costs about (n'/n)^3 times the last. */
        if (i > 0 && (now - t0) + last * pow((double)sizes[i] / sizes[i - 1], 3) > budget_ms) {
            stopped = "budget";
            break;
        }
        cb_stage(d->stage, "%s fp32 GEMM at N=%u", name, sizes[i]);
        json_object *pt = cb_point(d, impl, sizes[i], &fail);
        last = jsonnum_now_ms() - now;
        json_object_array_add(pts, pt);
        const char *ps = json_object_get_string(json_object_object_get(pt, "status"));
        if (strcmp(ps, "ok") != 0) {
            status = ps;
            if (!fail && jsonget_str(pt, "detail"))
                fail = str_printf("N=%u: %s", sizes[i], jsonget_str(pt, "detail"));
            stopped = strcmp(ps, "wrong") == 0 ? "wrong" : "error";
            break;
        }
    }
    json_object_object_add(sw, "status", json_object_new_string(status));
    json_object_object_add(sw, "stopped", json_object_new_string(stopped));
    json_object_object_add(sw, "detail", cuda_smoke_json_str(fail, 1000));
    json_object_object_add(sw, "elapsed_ms", jsonnum_ms(jsonnum_now_ms() - t0));
    json_object_object_add(sw, "points", pts);
    free(fail);
    return sw;
}

/* The device's attributes and peaks into D and O. */
static void cb_props(struct cb_dev *d, json_object *o)
{
    const struct cuda_api *api = d->api;
    char name[256] = "";
    if (api->cuDeviceGetName(name, (int)sizeof(name) - 1, d->dev) == CUDA_SUCCESS)
        json_object_object_add(o, "name", cuda_smoke_json_str(name, 255));
    api->cuDeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev);
    api->cuDeviceGetAttribute(&d->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d->dev);
    api->cuDeviceGetAttribute(&d->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    api->cuDeviceGetAttribute(&d->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
    char cc[24];
    snprintf(cc, sizeof(cc), "%d.%d", d->major, d->minor);
    json_object_object_add(o, "compute_capability", d->major > 0 ? json_object_new_string(cc) : NULL);
    json_object_object_add(o, "multiprocessors", d->sms > 0 ? json_object_new_int(d->sms) : NULL);
    json_object_object_add(o, "clock_mhz", d->clock_khz > 0 ? json_object_new_int(d->clock_khz / 1000) : NULL);
    d->theory = cuda_peak_fp32_gflops(d->major, d->minor, d->sms, d->clock_khz);
    struct compute_peak_props pk = {.compute_units = d->sms > 0 ? (unsigned)d->sms : 0,
                                    .clock_mhz = d->clock_khz > 0 ? (unsigned)(d->clock_khz / 1000) : 0};
    d->plausible = compute_peak_gflops(&pk);
    json_object_object_add(o, "peak_gflops", jsonnum_sig(d->theory, 4));
}

/* Context, the PTX, events; NULL or the failure (heap). */
static char *cb_setup(struct cb_dev *d, int ordinal)
{
    const struct cuda_api *api = d->api;
    CUcontext ctx;
    CUmodule mod;
    CUresult r;
    if ((r = api->cuInit(0)))
        return cb_call_failed("cuInit", r);
    if ((r = api->cuDeviceGet(&d->dev, ordinal)))
        return cb_call_failed("cuDeviceGet", r);
    if ((r = api->cuDevicePrimaryCtxRetain(&ctx, d->dev)))
        return cb_call_failed("cuDevicePrimaryCtxRetain", r);
    if ((r = api->cuCtxSetCurrent(ctx)))
        return cb_call_failed("cuCtxSetCurrent", r);
    cb_stage(d->stage, "compiling gpucheckup's PTX GEMM");
    if ((r = api->cuModuleLoadDataEx(&mod, cuda_smoke_ptx, 0, NULL, NULL)))
        return cb_call_failed("cuModuleLoadDataEx", r);
    if ((r = api->cuModuleGetFunction(&d->fn, mod, "gc_sgemm_f32")))
        return cb_call_failed("cuModuleGetFunction", r);
    if ((r = api->cuEventCreate(&d->e0, 0)) || (r = api->cuEventCreate(&d->e1, 0)))
        return cb_call_failed("cuEventCreate", r);
    return NULL;
}

json_object *bench_cuda_device_child(void *arg)
{
    const struct bench_cuda_args *a = arg;
    struct cb_dev d = {.stage = a->stage, .end_ms = jsonnum_now_ms() + a->budget_ms, .theory = NAN, .plausible = NAN};
    json_object *o = json_object_new_object();
    json_object_object_add(o, "ordinal", json_object_new_int(a->ordinal));
    struct cuda_api api;
    void *h = NULL;
    cb_stage(d.stage, "loading libcuda.so.1");
    if (cb_load_cuda(&api, &h) || !cuda_api_has_compute(&api))
        return cb_err(o, "error", h ? "libcuda.so.1 lacks a compute function" : "dlopen(\"libcuda.so.1\") failed");
    d.api = &api;
    char *fail = cb_setup(&d, a->ordinal);
    if (fail) {
        cb_err(o, "error", fail);
        free(fail);
        return o;
    }
    cb_props(&d, o);
    cb_stage(d.stage, "loading cuBLAS");
    bool blas = cb_open_cublas(&d, o);
    json_object *sws = json_object_new_array();
    double left = d.end_ms - jsonnum_now_ms();
    /* cuBLAS first (half the time when there), then our kernel with what is left. */
    if (blas)
        json_object_array_add(sws, cb_sweep(&d, CB_CUBLAS, left / 2));
    json_object_array_add(sws, cb_sweep(&d, CB_OURS, d.end_ms - jsonnum_now_ms()));
    json_object_object_add(o, "sweeps", sws);
    json_object_object_add(o, "status", json_object_new_string("ok"));
    /* No cublasDestroy or dlclose: the child ends now, and the driver frees what it holds. */
    return o;
}
