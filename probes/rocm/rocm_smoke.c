/* rocm_smoke.c: the HIP smoke test: an SGEMM compiled at run time with hipRTC on each HIP device, checked on the CPU. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compute_check.h"
#include "compute_options.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "rocm_internal.h"
#include "strutil.h"

/* The kernel, compiled by hipRTC for the device's own target. One thread per element of c; the dot
 * product runs k = 0..n-1 with one fused multiply-add per term (round once per term), so the exact pass
 * is exact and the random pass's tolerance (compute_check.c) holds. */
static const char rocm_smoke_src[] =
    "extern \"C\" __global__ void gc_sgemm_f32(const float *a, const float *b, float *c, unsigned n)\n"
    "{\n"
    "    unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    if (row >= n || col >= n)\n"
    "        return;\n"
    "    float s = 0.0f;\n"
    "    for (unsigned k = 0; k < n; k++)\n"
    "        s = fmaf(a[row * n + k], b[k * n + col], s);\n"
    "    c[row * n + col] = s;\n"
    "}\n";

/* Our own declarations (HIP's hip_runtime_api.h and hiprtc.h; the same in ROCm 5, 6 and 7): every call
 * returns an int status, handles are pointers. hipMemcpyHostToDevice is 1, hipMemcpyDeviceToHost 2. */
struct rocm_hip_smoke_api {
    int (*setDevice)(int);
    int (*malloc_)(void **, size_t);
    int (*free_)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*moduleLoadData)(void **, const void *);
    int (*moduleGetFunction)(void **, void *, const char *);
    int (*moduleLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                              void **);
    int (*deviceSynchronize)(void);
    int (*moduleUnload)(void *);
    const char *(*errorName)(int);
    int (*rtcCreate)(void **, const char *, const char *, int, const char **, const char **);
    int (*rtcCompile)(void *, int, const char **);
    int (*rtcLogSize)(void *, size_t *);
    int (*rtcLog)(void *, char *);
    int (*rtcCodeSize)(void *, size_t *);
    int (*rtcCode)(void *, char *);
    int (*rtcDestroy)(void **);
};

/* What one device's test came to. */
struct rocm_smoke_dev {
    const struct rocm_hip_smoke_api *api;
    json_object *o;       /* its result object */
    bool failed;
};

static void rocm_smoke_fail(struct rocm_smoke_dev *d, const char *status, const char *call, int rc)
{
    if (d->failed)
        return;
    d->failed = true;
    const char *name = d->api->errorName && call && !str_starts_with(call, "hiprtc") ? d->api->errorName(rc) : NULL;
    json_object_object_add(d->o, "status", json_object_new_string(status));
    json_object_object_add(d->o, "failed_call", call ? json_object_new_string(call) : NULL);
    json_object_object_add(d->o, "error_code", json_object_new_int(rc));
    json_object_object_add(d->o, "error_name", name ? json_object_new_string(name) : NULL);
}

/* hipRTC: the kernel's code object for GFX (heap, *LEN), or NULL with the failure recorded. */
static char *rocm_smoke_compile(struct rocm_smoke_dev *d, const char *gfx, size_t *len)
{
    const struct rocm_hip_smoke_api *a = d->api;
    void *prog = NULL;
    int rc = a->rtcCreate(&prog, rocm_smoke_src, "gc_sgemm.hip", 0, NULL, NULL);
    if (rc != 0) {
        rocm_smoke_fail(d, "compile-failed", "hiprtcCreateProgram", rc);
        return NULL;
    }
    char opt[64];
    snprintf(opt, sizeof(opt), "--gpu-architecture=%s", gfx ? gfx : "");
    const char *opts[] = {opt};
    rc = a->rtcCompile(prog, gfx ? 1 : 0, opts);
    size_t ls = 0;
    if (rc != 0) {
        rocm_smoke_fail(d, "compile-failed", "hiprtcCompileProgram", rc);
        if (a->rtcLogSize(prog, &ls) == 0 && ls > 0 && ls < 1 << 20) {
            char *log = calloc(1, ls + 1);
            if (log && a->rtcLog(prog, log) == 0)
                json_object_object_add(d->o, "compile_log", jsonstr_sanitized(log));
            free(log);
        }
        a->rtcDestroy(&prog);
        return NULL;
    }
    char *code = NULL;
    if (a->rtcCodeSize(prog, len) == 0 && *len > 0 && *len < (64u << 20) && (code = malloc(*len)) != NULL &&
        a->rtcCode(prog, code) != 0) {
        free(code);
        code = NULL;
    }
    if (!code)
        rocm_smoke_fail(d, "compile-failed", "hiprtcGetCode", -1);
    a->rtcDestroy(&prog);
    return code;
}

static double rocm_smoke_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One pass of KIND on the loaded function FN: copy in, launch, copy out, compare. */
static void rocm_smoke_pass(struct rocm_smoke_dev *d, void *fn, enum compute_pass_kind kind, unsigned n, json_object *passes)
{
    const struct rocm_hip_smoke_api *a = d->api;
    struct compute_problem p;
    memset(&p, 0, sizeof(p));
    if (compute_problem_generate(&p, COMPUTE_FP32, kind, n, 0x9e3779b97f4a7c15ull + kind) != 0 || compute_problem_reference(&p) != 0) {
        compute_problem_free(&p);
        rocm_smoke_fail(d, "run-failed", "host memory", -1);
        return;
    }
    size_t bytes = (size_t)n * n * sizeof(float);
    float *prior = malloc(bytes), *got = malloc(bytes);
    void *da = NULL, *db = NULL, *dc = NULL;
    int rc = 0;
    for (size_t i = 0; prior && i < (size_t)n * n; i++)
        prior[i] = NAN; /* what the output holds before the kernel: "unchanged" when it still does */
    if (!prior || !got)
        rocm_smoke_fail(d, "run-failed", "host memory", -1);
    else if ((rc = a->malloc_(&da, bytes)) != 0 || (rc = a->malloc_(&db, bytes)) != 0 || (rc = a->malloc_(&dc, bytes)) != 0)
        rocm_smoke_fail(d, "run-failed", "hipMalloc", rc);
    else if ((rc = a->memcpy_(da, p.a, bytes, 1)) != 0 || (rc = a->memcpy_(db, p.b, bytes, 1)) != 0 ||
             (rc = a->memcpy_(dc, prior, bytes, 1)) != 0)
        rocm_smoke_fail(d, "run-failed", "hipMemcpy", rc);
    if (!d->failed) {
        void *args[] = {&da, &db, &dc, &n};
        unsigned g = (n + 15) / 16;
        double t0 = rocm_smoke_now_ms();
        if ((rc = a->moduleLaunchKernel(fn, g, g, 1, 16, 16, 1, 0, NULL, args, NULL)) != 0)
            rocm_smoke_fail(d, "run-failed", "hipModuleLaunchKernel", rc);
        else if ((rc = a->deviceSynchronize()) != 0)
            rocm_smoke_fail(d, "run-failed", "hipDeviceSynchronize", rc);
        else if ((rc = a->memcpy_(got, dc, bytes, 2)) != 0)
            rocm_smoke_fail(d, "run-failed", "hipMemcpy", rc);
        if (!d->failed) {
            struct compute_check chk;
            compute_verify(&p, got, prior, &chk);
            json_object *po = json_object_new_object();
            json_object_object_add(po, "pass", json_object_new_string(compute_pass_name(kind)));
            compute_check_add_json(po, &chk, NAN, rocm_smoke_now_ms() - t0);
            if (chk.wrong > 0) {
                char *why = compute_check_describe(&chk);
                json_object_object_add(po, "detail", jsonstr_or_null(why));
                free(why);
                d->failed = true;
                json_object_object_add(d->o, "status", json_object_new_string("wrong-result"));
            }
            json_object_array_add(passes, po);
        }
    }
    void *bufs[] = {da, db, dc};
    for (size_t i = 0; i < 3; i++)
        if (bufs[i])
            a->free_(bufs[i]);
    free(prior);
    free(got);
    compute_problem_free(&p);
}

/* Resolve the API from libamdhip64 (hipRTC is inside it in ROCm 5, in libhiprtc.so.6 or .7 after).
 * Returns NULL when all is there, else the first missing name. */
static const char *rocm_smoke_load(struct rocm_hip_smoke_api *a)
{
    static const char *const hips[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    static const char *const rtcs[] = {"libhiprtc.so.7", "libhiprtc.so.6"};
    void *h = NULL, *r = NULL;
    for (size_t i = 0; !h && i < sizeof(hips) / sizeof(hips[0]); i++)
        h = dlopen(hips[i], RTLD_NOW | RTLD_LOCAL);
    for (size_t i = 0; h && !r && i < sizeof(rtcs) / sizeof(rtcs[0]); i++)
        r = dlopen(rtcs[i], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return "libamdhip64";
    if (!r)
        r = h;
    const struct {
        void *lib;
        const char *name;
        void **slot;
    } t[] = {
        {h, "hipSetDevice", (void **)&a->setDevice}, {h, "hipMalloc", (void **)&a->malloc_}, {h, "hipFree", (void **)&a->free_},
        {h, "hipMemcpy", (void **)&a->memcpy_}, {h, "hipModuleLoadData", (void **)&a->moduleLoadData},
        {h, "hipModuleGetFunction", (void **)&a->moduleGetFunction}, {h, "hipModuleLaunchKernel", (void **)&a->moduleLaunchKernel},
        {h, "hipDeviceSynchronize", (void **)&a->deviceSynchronize}, {h, "hipModuleUnload", (void **)&a->moduleUnload},
        {r, "hiprtcCreateProgram", (void **)&a->rtcCreate}, {r, "hiprtcCompileProgram", (void **)&a->rtcCompile},
        {r, "hiprtcGetProgramLogSize", (void **)&a->rtcLogSize}, {r, "hiprtcGetProgramLog", (void **)&a->rtcLog},
        {r, "hiprtcGetCodeSize", (void **)&a->rtcCodeSize}, {r, "hiprtcGetCode", (void **)&a->rtcCode},
        {r, "hiprtcDestroyProgram", (void **)&a->rtcDestroy},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!(*t[i].slot = dlsym(t[i].lib, t[i].name)))
            return t[i].name;
    a->errorName = (const char *(*)(int))dlsym(h, "hipGetErrorName");
    return NULL;
}

/* The child's arguments: the HIP devices to test and each one's gfx target (from the HSA agents). */
struct rocm_smoke_args {
    unsigned n;
    size_t ndev;
    char gfx[ROCM_SMOKE_MAX_DEVICES][16];
};

/* One device: compile, load, two passes. */
static json_object *rocm_smoke_device(const struct rocm_hip_smoke_api *api, int ordinal, const char *gfx, unsigned n)
{
    struct rocm_smoke_dev d = {.api = api, .o = json_object_new_object()};
    json_object_object_add(d.o, "ordinal", json_object_new_int(ordinal));
    json_object_object_add(d.o, "gfx", jsonstr_or_null(gfx && gfx[0] ? gfx : NULL));
    json_object_object_add(d.o, "n", json_object_new_int((int)n));
    printf("smoke %d\n", ordinal); /* where a hang or crash happened */
    fflush(stdout);
    int rc = api->setDevice(ordinal);
    if (rc != 0) {
        rocm_smoke_fail(&d, "run-failed", "hipSetDevice", rc);
        return d.o;
    }
    size_t len = 0;
    char *code = rocm_smoke_compile(&d, gfx && gfx[0] ? gfx : NULL, &len);
    void *mod = NULL, *fn = NULL;
    if (code && (rc = api->moduleLoadData(&mod, code)) != 0)
        rocm_smoke_fail(&d, "run-failed", "hipModuleLoadData", rc);
    else if (code && (rc = api->moduleGetFunction(&fn, mod, "gc_sgemm_f32")) != 0)
        rocm_smoke_fail(&d, "run-failed", "hipModuleGetFunction", rc);
    free(code);
    json_object *passes = json_object_new_array();
    for (int k = 0; !d.failed && k < COMPUTE_N_PASS; k++)
        rocm_smoke_pass(&d, fn, (enum compute_pass_kind)k, n, passes);
    json_object_object_add(d.o, "passes", passes);
    if (mod)
        api->moduleUnload(mod);
    if (!d.failed)
        json_object_object_add(d.o, "status", json_object_new_string("pass"));
    return d.o;
}

static json_object *rocm_smoke_child(void *arg)
{
    const struct rocm_smoke_args *sa = arg;
    struct rocm_hip_smoke_api api;
    memset(&api, 0, sizeof(api));
    json_object *o = json_object_new_object(), *devs = json_object_new_array();
    const char *missing = rocm_smoke_load(&api);
    json_object_object_add(o, "missing", missing ? json_object_new_string(missing) : NULL);
    for (size_t i = 0; !missing && i < sa->ndev; i++)
        json_object_array_add(devs, rocm_smoke_device(&api, (int)i, sa->gfx[i], sa->n));
    json_object_object_add(o, "devices", devs);
    return o;
}

/* ---- the parent ---------------------------------------------------------------------------------- */

static const struct jsonstr_limits rocm_smoke_limits = {.depth = 6, .string = 4096, .items = 256, .key = SIZE_MAX};

json_object *rocm_smoke_run(struct probe_ctx *ctx, json_object *data, const char *skip)
{
    json_object *rt = jsonget(data, "runtime"), *hip = jsonget(rt, "hip"), *agents = jsonget(jsonget(rt, "hsa"), "agents");
    int64_t ndev = jsonget_int(hip, "device_count", 0);
    const struct compute_options *co = compute_options();
    const char *why = !probe_live(ctx) ? "not the live machine" : co->which == COMPUTE_WHICH_NONE ? "--no-smoke"
                    : skip ? skip : ndev <= 0 ? "no HIP device" : NULL;
    json_object *o = json_object_new_object();
    if (why) {
        json_object_object_add(o, "not_run", json_object_new_string(why));
        return o;
    }
    struct rocm_smoke_args *sa = calloc(1, sizeof(*sa));
    if (!sa)
        return o;
    sa->n = co->size;
    sa->ndev = ndev > ROCM_SMOKE_MAX_DEVICES ? ROCM_SMOKE_MAX_DEVICES : (size_t)ndev;
    /* HIP numbers the GPU agents ROCr shows in their order: ordinal I is the I-th GPU agent. */
    size_t g = 0;
    for (size_t i = 0; agents && i < json_object_array_length(agents) && g < sa->ndev; i++) {
        json_object *ag = json_object_array_get_idx(agents, i);
        const char *t = jsonget_str(ag, "device_type"), *nm = jsonget_str(ag, "name");
        if (t && strcmp(t, "gpu") == 0)
            snprintf(sa->gfx[g++], sizeof(sa->gfx[0]), "%s", nm && str_starts_with(nm, "gfx") && strlen(nm) < 16 ? nm : "");
    }
    struct isolate_result res;
    memset(&res, 0, sizeof(res));
    probe_isolate_run(ctx, rocm_smoke_child, sa, &res);
    json_object *v = res.status == ISOLATE_OK ? jsonstr_clean_copy(res.value, &rocm_smoke_limits) : NULL;
    if (v) {
        json_object_put(o);
        o = v;
    } else {
        const char *tail = res.stderr_tail ? strstr(res.stderr_tail, "smoke ") : NULL;
        json_object_object_add(o, "status", json_object_new_string(res.status == ISOLATE_TIMEOUT ? "timeout" : "crash"));
        json_object_object_add(o, "detail", jsonstr_sanitized(res.detail));
        json_object_object_add(o, "ordinal", tail ? json_object_new_int(atoi(tail + 6)) : NULL);
    }
    isolate_result_clear(&res);
    free(sa);
    return o;
}

/* The smoke test's findings, from DATA's "smoke" object. */
void rocm_smoke_findings(struct probe_ctx *ctx, json_object *data)
{
    json_object *sm = jsonget(data, "smoke"), *devs = jsonget(sm, "devices");
    json_object *agents = jsonget(jsonget(jsonget(data, "runtime"), "hsa"), "agents");
    const char *st = jsonget_str(sm, "status"), *missing = jsonget_str(sm, "missing");
    if (st) { /* the child died */
        report_add_finding(ctx->report, "rocm.smoke-failed", NULL, "the HIP smoke test %s on HIP device %lld: %s",
                           strcmp(st, "timeout") == 0 ? "hung" : "crashed", (long long)jsonget_int(sm, "ordinal", -1),
                           jsonget_str(sm, "detail") ? jsonget_str(sm, "detail") : st);
        return;
    }
    if (missing) {
        report_add_finding(ctx->report, "rocm.smoke-failed", NULL, "the HIP smoke test cannot run: %s is missing", missing);
        return;
    }
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *s = jsonget_str(d, "status"), *gfx = jsonget_str(d, "gfx");
        int64_t ord = jsonget_int(d, "ordinal", -1);
        /* The GPU's PCI address: the ORD-th GPU agent's. */
        const char *addr = NULL;
        for (size_t j = 0, g = 0; agents && j < json_object_array_length(agents) && !addr; j++) {
            json_object *ag = json_object_array_get_idx(agents, j);
            const char *t = jsonget_str(ag, "device_type");
            if (t && strcmp(t, "gpu") == 0 && (int64_t)g++ == ord)
                addr = jsonget_str(ag, "pci_address");
        }
        char label[64];
        snprintf(label, sizeof(label), "%s%s%s", addr ? addr : "HIP device", addr ? " " : " ", gfx ? gfx : "");
        if (!s || strcmp(s, "pass") == 0)
            continue;
        if (strcmp(s, "wrong-result") == 0) {
            json_object *passes = jsonget(d, "passes"), *last = passes ? json_object_array_get_idx(passes, json_object_array_length(passes) - 1) : NULL;
            report_add_finding(ctx->report, "rocm.smoke-wrong-result", addr, "%s computed a wrong matrix product in the HIP smoke test: %s",
                               label, jsonget_str(last, "detail") ? jsonget_str(last, "detail") : "wrong elements");
        } else {
            const char *call = jsonget_str(d, "failed_call"), *name = jsonget_str(d, "error_name"), *log = jsonget_str(d, "compile_log");
            report_add_finding(ctx->report, "rocm.smoke-failed", addr, "the HIP smoke test failed on %s: %s returned %s (%lld)%s%.300s",
                               label, call ? call : "?", name ? name : "an error", (long long)jsonget_int(d, "error_code", -1),
                               log ? "; hipRTC's log: " : "", log ? log : "");
        }
    }
}
