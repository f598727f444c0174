/* cuda_smoke.c: the CUDA smoke test: an exact SGEMM per GPU through the driver API with embedded PTX, checked on the CPU. */
#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonnum.h"
#include "cuda_api.h"
#include "cuda_internal.h"
#include "cuda_peak.h"
#include "compute_timer.h"
#include "compute_check.h"
#include "strutil.h"

/* The kernel, written by hand (no nvcc at build time). PTX ISA 6.0 (CUDA 10.0) for sm_50, so that the
 * driver of every GPU from Maxwell on can JIT it (PTX ISA manual, "PTX ISA Version 6.0"; drivers JIT
 * PTX written for an older target to any newer GPU). One thread per element of c, row = y, column = x;
 * threads outside n x n do nothing. The dot product runs k = 0..n-1 with one fma.rn.f32 per term (round
 * once per term): the exact pass is exact in any order, and the random pass's tolerance (compute_verify.c,
 * gamma_(n+2)) bounds fma and mul+add alike. Checked by the suite with the toolkit's ptxas. */
const char cuda_smoke_ptx[] =
    "//\n"
    "// gpucheckup CUDA smoke test: c = a * b for row-major n x n fp32 matrices.\n"
    "//\n"
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry gc_sgemm_f32(\n"
    "\t.param .u64 gc_sgemm_f32_a,\n"
    "\t.param .u64 gc_sgemm_f32_b,\n"
    "\t.param .u64 gc_sgemm_f32_c,\n"
    "\t.param .u32 gc_sgemm_f32_n\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<4>;\n"
    "\t.reg .b32 \t%r<12>;\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b64 \t%rd<12>;\n"
    "\n"
    "\tld.param.u64 \t%rd1, [gc_sgemm_f32_a];\n"
    "\tld.param.u64 \t%rd2, [gc_sgemm_f32_b];\n"
    "\tld.param.u64 \t%rd3, [gc_sgemm_f32_c];\n"
    "\tld.param.u32 \t%r1, [gc_sgemm_f32_n];\n"
    "\t// column = ctaid.x * ntid.x + tid.x, row = ctaid.y * ntid.y + tid.y\n"
    "\tmov.u32 \t%r2, %ctaid.x;\n"
    "\tmov.u32 \t%r3, %ntid.x;\n"
    "\tmov.u32 \t%r4, %tid.x;\n"
    "\tmad.lo.u32 \t%r5, %r2, %r3, %r4;\n"
    "\tmov.u32 \t%r6, %ctaid.y;\n"
    "\tmov.u32 \t%r7, %ntid.y;\n"
    "\tmov.u32 \t%r8, %tid.y;\n"
    "\tmad.lo.u32 \t%r9, %r6, %r7, %r8;\n"
    "\tsetp.ge.u32 \t%p1, %r5, %r1;\n"
    "\tsetp.ge.u32 \t%p2, %r9, %r1;\n"
    "\tor.pred \t%p3, %p1, %p2;\n"
    "\t@%p3 bra \t$L_done;\n"
    "\tcvta.to.global.u64 \t%rd1, %rd1;\n"
    "\tcvta.to.global.u64 \t%rd2, %rd2;\n"
    "\tcvta.to.global.u64 \t%rd3, %rd3;\n"
    "\t// rd4 = row * n * 4 (a's row, c's row), rd6 = column * 4, rd8 = n * 4 (b's row stride)\n"
    "\tmul.wide.u32 \t%rd4, %r9, %r1;\n"
    "\tshl.b64 \t%rd4, %rd4, 2;\n"
    "\tadd.s64 \t%rd5, %rd1, %rd4;\n"
    "\tmul.wide.u32 \t%rd6, %r5, 4;\n"
    "\tadd.s64 \t%rd7, %rd2, %rd6;\n"
    "\tmul.wide.u32 \t%rd8, %r1, 4;\n"
    "\tmov.f32 \t%f1, 0f00000000;\n"
    "\tmov.u32 \t%r10, 0;\n"
    "$L_loop:\n"
    "\tld.global.f32 \t%f2, [%rd5];\n"
    "\tld.global.f32 \t%f3, [%rd7];\n"
    "\tfma.rn.f32 \t%f1, %f2, %f3, %f1;\n"
    "\tadd.s64 \t%rd5, %rd5, 4;\n"
    "\tadd.s64 \t%rd7, %rd7, %rd8;\n"
    "\tadd.u32 \t%r10, %r10, 1;\n"
    "\tsetp.lt.u32 \t%p1, %r10, %r1;\n"
    "\t@%p1 bra \t$L_loop;\n"
    "\tadd.s64 \t%rd9, %rd3, %rd4;\n"
    "\tadd.s64 \t%rd9, %rd9, %rd6;\n"
    "\tst.global.f32 \t[%rd9], %f1;\n"
    "$L_done:\n"
    "\tret;\n"
    "}\n";

#define CUDA_SMOKE_ENTRY "gc_sgemm_f32"
#define CUDA_SMOKE_BLOCK 16u
/* The OpenCL smoke test's seed (probes/smoke/smoke_device.c): both tests multiply the same matrices. */
#define CUDA_SMOKE_SEED 0x5EED0F5310CEull
/* The output buffer is filled with this quiet NaN before each launch: an element the kernel did not
 * write stays NaN, and an output equal to it is "the kernel left the buffer as it was". */
#define CUDA_SMOKE_POISON 0x7FC0FFEEu
/* JIT log buffers, and the most of each log kept in the JSON. */
#define CUDA_SMOKE_LOG_BUF 8192
/* Largest matrix size (as --smoke-size allows). */
#define CUDA_SMOKE_MAX_N 4096

const struct check cuda_smoke_checks[] = {
    {"cuda.smoke-wrong-result", REPORT_SEV_ERROR, "A GPU computed a wrong matrix product in the CUDA smoke test",
     "Do not trust this GPU's results. Check `dmesg` for Xid errors, and the GPU for overheating, overclocking "
     "or bad memory (nvidia-smi -q -d ECC,TEMPERATURE); reinstall the driver; if it keeps failing, the GPU "
     "needs service.", CHECK_LAYER_RUNTIME},
    {"cuda.smoke-jit-failed", REPORT_SEV_ERROR,
     "The driver could not JIT-compile the CUDA smoke test's PTX (so PTX in any framework fails too)",
     "The driver's PTX compiler (libnvidia-ptxjitcompiler.so.1, part of the driver) is missing or does not "
     "match libcuda: reinstall the driver so both come from the same version; the JIT log is in the JSON.", CHECK_LAYER_RUNTIME},
    {"cuda.smoke-run-failed", REPORT_SEV_ERROR,
     "A CUDA driver call failed during the smoke test (context, allocation, copy or kernel launch)",
     "CUDA_ERROR_OUT_OF_MEMORY: the GPU is full or busy (see nvidia-smi; try a smaller --smoke-size). "
     "Other errors point at the driver or the GPU: check `dmesg` for Xid errors and reinstall the driver.", CHECK_LAYER_RUNTIME},
    {"cuda.smoke-crash", REPORT_SEV_ERROR, "The CUDA driver crashed (or ended the process) during the smoke test",
     "Check `dmesg` for Xid errors and reinstall or update the NVIDIA driver.", CHECK_LAYER_RUNTIME},
    {"cuda.smoke-timeout", REPORT_SEV_ERROR, "The CUDA smoke test did not finish in time on a GPU",
     "Check `dmesg` for Xid errors or GPU resets and `nvidia-smi` for other jobs on the GPU; then run again "
     "with a longer --timeout.", CHECK_LAYER_RUNTIME},
};
const size_t cuda_smoke_n_checks = sizeof(cuda_smoke_checks) / sizeof(cuda_smoke_checks[0]);

/* ---- the child ----------------------------------------------------------------------------------- */

struct cs_run {
    const struct cuda_api *api;
    int ordinal;
    unsigned n;
    CUdevice dev;
    bool have_dev;
    CUcontext ctx;
    bool ctx_retained;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr da, db, dc;
    CUevent ev0, ev1;
    /* outcome */
    const char *status;      /* NULL until something fails or the result is known */
    const char *failed_call; /* static */
    CUresult failed_result;
    char *detail;
    char jit_error_log[CUDA_SMOKE_LOG_BUF];
    char jit_info_log[CUDA_SMOKE_LOG_BUF];
    bool jit_tried;
    double jit_ms, kernel_ms, host_ms; /* kernel_ms by the events, host_ms by the host clock: fastest pass */
    double max_error;
    bool have_max_error;
    size_t wrong;
    bool computes_nothing;
    json_object *passes, *mismatches;
    int sms, clock_khz, cc_major, cc_minor;
};

json_object *cuda_smoke_json_str(const char *s, size_t max)
{
    if (!s || !*s)
        return NULL;
    size_t len = strlen(s);
    char *c = malloc((len > max ? max : len) + 4);
    if (!c)
        return NULL;
    if (len > max) {
        memcpy(c, s, max);
        memcpy(c + max, "...", 4);
    } else {
        memcpy(c, s, len + 1);
    }
    /* Keep line breaks of logs, make every other control byte visible. */
    for (char *p = c; *p; p++)
        if (*p != '\n' && *p != '\t' && ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f))
            *p = '?';
    json_object *o = json_object_new_string(c);
    free(c);
    return o;
}

/* Record the first failure: STATUS, the call and its CUresult, and a sentence. */
static void cs_fail(struct cs_run *r, const char *status, const char *call, CUresult res, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void cs_fail(struct cs_run *r, const char *status, const char *call, CUresult res, const char *fmt, ...)
{
    if (r->status)
        return;
    r->status = status;
    r->failed_call = call;
    r->failed_result = res;
    va_list ap;
    va_start(ap, fmt);
    r->detail = str_vprintf(fmt, ap);
    va_end(ap);
}

/* "CUDA_ERROR_OUT_OF_MEMORY (2)" style text for messages (static buffer: one at a time). */
static const char *cs_result_text(CUresult res)
{
    static char buf[80];
    const char *name = cuda_result_name(res);
    if (name)
        snprintf(buf, sizeof(buf), "%s (%d)", name, res);
    else
        snprintf(buf, sizeof(buf), "CUresult %d", res);
    return buf;
}

/* True when RES is CUDA_SUCCESS; else records the failure of CALL with STATUS. */
static bool cs_ok(struct cs_run *r, CUresult res, const char *call, const char *status)
{
    if (res == CUDA_SUCCESS)
        return true;
    cs_fail(r, status, call, res, "%s failed: %s", call, cs_result_text(res));
    return false;
}

/* The first compute function API lacks, or NULL when it has them all. */
static const char *cs_missing_compute(const struct cuda_api *api)
{
    const struct {
        const char *name;
        bool there;
    } fns[] = {
        {"cuDevicePrimaryCtxRetain", api->cuDevicePrimaryCtxRetain != NULL},
        {"cuDevicePrimaryCtxRelease", api->cuDevicePrimaryCtxRelease != NULL},
        {"cuCtxSetCurrent", api->cuCtxSetCurrent != NULL},
        {"cuCtxSynchronize", api->cuCtxSynchronize != NULL},
        {"cuMemAlloc", api->cuMemAlloc != NULL},
        {"cuMemFree", api->cuMemFree != NULL},
        {"cuMemcpyHtoD", api->cuMemcpyHtoD != NULL},
        {"cuMemcpyDtoH", api->cuMemcpyDtoH != NULL},
        {"cuMemsetD32", api->cuMemsetD32 != NULL},
        {"cuModuleLoadDataEx", api->cuModuleLoadDataEx != NULL},
        {"cuModuleGetFunction", api->cuModuleGetFunction != NULL},
        {"cuModuleUnload", api->cuModuleUnload != NULL},
        {"cuLaunchKernel", api->cuLaunchKernel != NULL},
        {"cuEventCreate", api->cuEventCreate != NULL},
        {"cuEventRecord", api->cuEventRecord != NULL},
        {"cuEventSynchronize", api->cuEventSynchronize != NULL},
        {"cuEventElapsedTime", api->cuEventElapsedTime != NULL},
        {"cuEventDestroy", api->cuEventDestroy != NULL},
    };
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
        if (!fns[i].there)
            return fns[i].name;
    return NULL;
}

/* "0000:3B:00.0" or "00000000:3b:00.0" as the pci section writes addresses: "0000:3b:00.0". */
static void cs_normalise_bus_id(char *s)
{
    for (char *p = s; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char *colon = strchr(s, ':');
    if (colon && colon - s == 8 && strncmp(s, "0000", 4) == 0)
        memmove(s, s + 4, strlen(s + 4) + 1);
}

/* Load the PTX with the JIT logs captured. */
static bool cs_jit(struct cs_run *r)
{
    const struct cuda_api *api = r->api;
    CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    /* The size options are unsigned ints carried in the pointer slots (cuda.h, CUjit_option_enum). */
    void *vals[4] = {r->jit_error_log, (void *)(uintptr_t)(sizeof(r->jit_error_log) - 1), r->jit_info_log,
                     (void *)(uintptr_t)(sizeof(r->jit_info_log) - 1)};
    r->jit_tried = true;
    double t0 = jsonnum_now_ms();
    CUresult res = api->cuModuleLoadDataEx(&r->mod, cuda_smoke_ptx, 4, opts, vals);
    r->jit_ms = jsonnum_now_ms() - t0;
    r->jit_error_log[sizeof(r->jit_error_log) - 1] = '\0';
    r->jit_info_log[sizeof(r->jit_info_log) - 1] = '\0';
    if (res != CUDA_SUCCESS) {
        r->mod = NULL;
        const char *why = res == CUDA_ERROR_JIT_COMPILER_NOT_FOUND
                              ? ": the driver's PTX JIT compiler (libnvidia-ptxjitcompiler) is not there"
                          : res == CUDA_ERROR_INVALID_PTX || res == CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                              ? ": the driver's PTX compiler rejected PTX ISA 6.0 for sm_50"
                              : "";
        cs_fail(r, "jit-failed", "cuModuleLoadDataEx", res, "cuModuleLoadDataEx failed: %s%s", cs_result_text(res),
                why);
        return false;
    }
    res = api->cuModuleGetFunction(&r->fn, r->mod, CUDA_SMOKE_ENTRY);
    if (res != CUDA_SUCCESS) {
        cs_fail(r, "jit-failed", "cuModuleGetFunction", res, "cuModuleGetFunction(\"%s\") failed: %s",
                CUDA_SMOKE_ENTRY, cs_result_text(res));
        return false;
    }
    return true;
}

/* One pass (exact or random): upload, poison the output, launch, time, read back, verify. */
static bool cs_pass(struct cs_run *r, enum compute_pass_kind kind)
{
    const struct cuda_api *api = r->api;
    const char *kn = compute_pass_name(kind);
    struct compute_problem pr;
    int g = compute_problem_generate(&pr, COMPUTE_FP32, kind, r->n, CUDA_SMOKE_SEED);
    if (g == 1) { /* cannot happen for fp32 up to 4096; kept for the contract */
        compute_problem_free(&pr);
        return true;
    }
    size_t nn = (size_t)r->n * r->n, bytes = nn * sizeof(float);
    uint32_t *prior = g == 0 ? malloc(bytes) : NULL;
    float *got = g == 0 ? malloc(bytes) : NULL;
    if (g < 0 || !prior || !got || compute_problem_reference(&pr) < 0) {
        free(prior);
        free(got);
        compute_problem_free(&pr);
        cs_fail(r, "run-failed", "malloc", CUDA_SUCCESS, "out of host memory for the %s pass", kn);
        return false;
    }
    for (size_t i = 0; i < nn; i++)
        prior[i] = CUDA_SMOKE_POISON;
    memcpy(got, prior, bytes); /* what verification sees if the read-back fails to write */

    unsigned int n = r->n;
    void *params[4] = {&r->da, &r->db, &r->dc, &n};
    unsigned grid = (n + CUDA_SMOKE_BLOCK - 1) / CUDA_SMOKE_BLOCK;
    bool ok = cs_ok(r, api->cuMemcpyHtoD(r->da, pr.a, bytes), "cuMemcpyHtoD", "run-failed") &&
              cs_ok(r, api->cuMemcpyHtoD(r->db, pr.b, bytes), "cuMemcpyHtoD", "run-failed") &&
              cs_ok(r, api->cuMemsetD32(r->dc, CUDA_SMOKE_POISON, nn), "cuMemsetD32", "run-failed") &&
              cs_ok(r, api->cuCtxSynchronize(), "cuCtxSynchronize", "run-failed");
    double hms = NAN, kms = NAN;
    if (ok) {
        /* The host clock times the launch to the end event's completion (uploads done before); the
         * events time the kernel on the GPU. */
        double h0 = jsonnum_now_ms();
        ok = cs_ok(r, api->cuEventRecord(r->ev0, NULL), "cuEventRecord", "run-failed") &&
             cs_ok(r, api->cuLaunchKernel(r->fn, grid, grid, 1, CUDA_SMOKE_BLOCK, CUDA_SMOKE_BLOCK, 1, 0, NULL, params,
                                          NULL),
                   "cuLaunchKernel", "run-failed") &&
             cs_ok(r, api->cuEventRecord(r->ev1, NULL), "cuEventRecord", "run-failed") &&
             cs_ok(r, api->cuEventSynchronize(r->ev1), "cuEventSynchronize", "run-failed");
        if (ok)
            hms = jsonnum_now_ms() - h0;
        /* A fault in the kernel (CUDA_ERROR_ILLEGAL_ADDRESS...) shows here at the latest. */
        ok = ok && cs_ok(r, api->cuCtxSynchronize(), "cuCtxSynchronize", "run-failed");
        float ems = -1.0f;
        if (ok && api->cuEventElapsedTime(&ems, r->ev0, r->ev1) == CUDA_SUCCESS && isfinite(ems) && ems >= 0.0f)
            kms = ems;
        ok = ok && cs_ok(r, api->cuMemcpyDtoH(got, r->dc, bytes), "cuMemcpyDtoH", "run-failed");
    }
    if (ok) {
        struct compute_check chk;
        compute_verify(&pr, got, prior, &chk);
        json_object *po = json_object_new_object();
        json_object_object_add(po, "pass", json_object_new_string(kn));
        json_object_object_add(po, "status", json_object_new_string(chk.wrong ? "fail" : "pass"));
        compute_check_add_json(po, &chk, kms, hms);
        json_object_array_add(r->passes, po);
        if (isfinite(kms) && (!isfinite(r->kernel_ms) || kms < r->kernel_ms))
            r->kernel_ms = kms;
        if (isfinite(hms) && (!isfinite(r->host_ms) || hms < r->host_ms))
            r->host_ms = hms;
        if (!r->have_max_error || chk.max_error > r->max_error || isnan(r->max_error))
            r->max_error = chk.max_error;
        r->have_max_error = true;
        r->wrong += chk.wrong;
        for (size_t i = 0; i < chk.n_first && json_object_array_length(r->mismatches) < COMPUTE_MAX_MISMATCHES; i++) {
            const struct compute_mismatch *m = &chk.first[i];
            json_object *mo = json_object_new_object();
            json_object_object_add(mo, "pass", json_object_new_string(kn));
            json_object_object_add(mo, "row", json_object_new_int64(m->row));
            json_object_object_add(mo, "column", json_object_new_int64(m->col));
            json_object_object_add(mo, "expected", jsonnum_sig(m->expected, 9));
            char text[40];
            snprintf(text, sizeof(text), "%.9g", m->got);
            json_object_object_add(mo, "got", json_object_new_string(text));
            json_object_array_add(r->mismatches, mo);
        }
        if (chk.wrong) {
            /* A device that takes the launch and writes nothing, or only zeros, computes nothing. */
            bool nothing = chk.unchanged || chk.all_zero;
            if (nothing)
                r->computes_nothing = true;
            char *what = compute_check_describe(&chk);
            cs_fail(r, "wrong-result", NULL, CUDA_SUCCESS, "%s%s pass: %s", nothing ? "computes nothing: " : "", kn,
                    what ? what : "wrong elements");
            free(what);
        }
    }
    free(prior);
    free(got);
    compute_problem_free(&pr);
    return ok && !r->status; /* a wrong exact pass ends the test: its mismatches say enough */
}

static void cs_release(struct cs_run *r)
{
    const struct cuda_api *api = r->api;
    /* After a sticky error the calls fail; the child ends next and the kernel driver frees the rest. */
    if (r->ev0)
        api->cuEventDestroy(r->ev0);
    if (r->ev1)
        api->cuEventDestroy(r->ev1);
    if (r->dc)
        api->cuMemFree(r->dc);
    if (r->db)
        api->cuMemFree(r->db);
    if (r->da)
        api->cuMemFree(r->da);
    if (r->mod)
        api->cuModuleUnload(r->mod);
    if (r->ctx_retained) {
        api->cuCtxSetCurrent(NULL);
        api->cuDevicePrimaryCtxRelease(r->dev);
    }
    r->ev0 = r->ev1 = NULL;
    r->da = r->db = r->dc = 0;
    r->mod = NULL;
    r->ctx_retained = false;
}

static void cs_work(struct cs_run *r, json_object *out)
{
    const struct cuda_api *api = r->api;
    if (r->n < 1 || r->n > CUDA_SMOKE_MAX_N) {
        cs_fail(r, "run-failed", NULL, CUDA_SUCCESS, "matrix size %u is not from 1 to %d", r->n, CUDA_SMOKE_MAX_N);
        return;
    }
    const char *missing = cs_missing_compute(api);
    if (missing) {
        cs_fail(r, "no-compute-api", missing, CUDA_SUCCESS, "libcuda has no %s: it cannot run kernels", missing);
        return;
    }
    if (!cs_ok(r, api->cuInit(0), "cuInit", "init-failed") ||
        !cs_ok(r, api->cuDeviceGet(&r->dev, r->ordinal), "cuDeviceGet", "init-failed"))
        return;
    r->have_dev = true;
    char name[256] = "";
    if (api->cuDeviceGetName && api->cuDeviceGetName(name, (int)sizeof(name) - 1, r->dev) == CUDA_SUCCESS) {
        name[sizeof(name) - 1] = '\0';
        json_object_object_add(out, "name", cuda_smoke_json_str(name, 255));
    }
    char bus[32] = "";
    if (api->cuDeviceGetPCIBusId && api->cuDeviceGetPCIBusId(bus, (int)sizeof(bus) - 1, r->dev) == CUDA_SUCCESS) {
        bus[sizeof(bus) - 1] = '\0';
        cs_normalise_bus_id(bus);
        json_object_object_add(out, "pci_bus_id", cuda_smoke_json_str(bus, 31));
    }
    if (api->cuDeviceGetAttribute) {
        int v = 0;
        if (api->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, r->dev) == CUDA_SUCCESS)
            r->sms = v;
        if (api->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, r->dev) == CUDA_SUCCESS)
            r->clock_khz = v;
        if (api->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, r->dev) == CUDA_SUCCESS)
            r->cc_major = v;
        if (api->cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, r->dev) == CUDA_SUCCESS)
            r->cc_minor = v;
    }
    if (r->cc_major > 0) {
        char cc[24];
        snprintf(cc, sizeof(cc), "%d.%d", r->cc_major, r->cc_minor);
        json_object_object_add(out, "compute_capability", json_object_new_string(cc));
    }

    /* The primary context, as the runtime (and so every framework) uses: cuCtxCreate's signature
     * changed in CUDA 13 (cuCtxCreate_v4 takes a CUctxCreateParams), the primary context's did not. */
    if (!cs_ok(r, api->cuDevicePrimaryCtxRetain(&r->ctx, r->dev), "cuDevicePrimaryCtxRetain", "run-failed"))
        return;
    r->ctx_retained = true;
    if (!cs_ok(r, api->cuCtxSetCurrent(r->ctx), "cuCtxSetCurrent", "run-failed"))
        return;
    if (!cs_jit(r))
        return;
    size_t bytes = (size_t)r->n * r->n * sizeof(float);
    if (!cs_ok(r, api->cuMemAlloc(&r->da, bytes), "cuMemAlloc", "run-failed") ||
        !cs_ok(r, api->cuMemAlloc(&r->db, bytes), "cuMemAlloc", "run-failed") ||
        !cs_ok(r, api->cuMemAlloc(&r->dc, bytes), "cuMemAlloc", "run-failed") ||
        !cs_ok(r, api->cuEventCreate(&r->ev0, 0), "cuEventCreate", "run-failed") ||
        !cs_ok(r, api->cuEventCreate(&r->ev1, 0), "cuEventCreate", "run-failed"))
        return;
    if (cs_pass(r, COMPUTE_PASS_EXACT))
        cs_pass(r, COMPUTE_PASS_RANDOM);
}

json_object *cuda_smoke_device(const struct cuda_api *api, int ordinal, int n)
{
    struct cs_run *r = calloc(1, sizeof(*r));
    json_object *out = json_object_new_object();
    if (!r || !out) {
        free(r);
        json_object_put(out);
        return NULL;
    }
    r->api = api;
    r->ordinal = ordinal;
    r->n = n > 0 ? (unsigned)n : 0;
    r->jit_ms = r->kernel_ms = r->host_ms = r->max_error = NAN;
    r->passes = json_object_new_array();
    r->mismatches = json_object_new_array();
    json_object_object_add(out, "ordinal", json_object_new_int(ordinal));
    json_object_object_add(out, "n", json_object_new_int(n));

    cs_work(r, out);
    cs_release(r);

    const char *status = r->status ? r->status : "pass";
    json_object_object_add(out, "status", json_object_new_string(status));
    json_object_object_add(out, "failed_call", r->failed_call ? json_object_new_string(r->failed_call) : NULL);
    bool have_res = r->failed_call && r->failed_result != CUDA_SUCCESS;
    json_object_object_add(out, "result", have_res ? json_object_new_int(r->failed_result) : NULL);
    const char *rname = have_res ? cuda_result_name(r->failed_result) : NULL;
    json_object_object_add(out, "result_name", rname ? json_object_new_string(rname) : NULL);
    json_object_object_add(out, "computes_nothing", json_object_new_boolean(r->computes_nothing));
    json_object_object_add(out, "jit_ms", r->jit_tried ? jsonnum_ms(r->jit_ms) : NULL);
    json_object_object_add(out, "kernel_ms", jsonnum_ms(r->kernel_ms));
    json_object_object_add(out, "host_ms", jsonnum_ms(r->host_ms));

    /* Which clock to believe, and whether the speed is one the GPU could reach at all: the OpenCL
     * smoke test's rules (probes/smoke/smoke_timer.c), with the CUDA events as its "profiling" clock and
     * the SMs as compute units (its GPU ceiling: 512 fp32 lanes per unit, four times an H100 SM). */
    struct compute_peak_props pk = {.cpu = false,
                                  .compute_units = r->sms > 0 ? (unsigned)r->sms : 0,
                                  .clock_mhz = r->clock_khz > 0 ? (unsigned)(r->clock_khz / 1000) : 0};
    double peak = compute_peak_gflops(&pk);
    struct compute_timing tm;
    compute_timing_decide(r->kernel_ms, r->host_ms, 2.0 * r->n * r->n * r->n, peak, &tm);
    const char *timer = tm.timer, *timer_reason = timer ? compute_timer_why_name(tm.why) : NULL;
    json_object_object_add(out, "timer", timer ? json_object_new_string(timer) : NULL);
    json_object_object_add(out, "timer_reason", timer_reason ? json_object_new_string(timer_reason) : NULL);
    double gflops = NAN;
    char *gwhy = NULL;
    if (timer && r->wrong) {
        gwhy = str_dup("the result was wrong");
    } else if (timer && r->have_max_error && tm.above_peak) {
        gwhy = str_printf("%.4g GFLOPS by the %s clock would exceed the GPU's plausible peak of %.4g GFLOPS "
                          "(%d SMs at %d MHz): not a speed",
                          2.0 * r->n * r->n * r->n / (tm.ms * 1e6), timer, peak, r->sms, r->clock_khz / 1000);
    } else if (timer && r->have_max_error && !isfinite(tm.gflops)) {
        gwhy = str_dup("the kernel took less than the clock can tell");
    } else if (timer && r->have_max_error) {
        gflops = tm.gflops;
    }
    json_object_object_add(out, "gflops", jsonnum_sig(gflops, 4));
    json_object_object_add(out, "gflops_reason", cuda_smoke_json_str(gwhy, 400));
    json_object_object_add(out, "peak_gflops", jsonnum_sig(peak, 4));
    /* the theoretical fp32 peak of its compute capability (cuda_peak.c), and the smoke kernel's share of it */
    double theory = cuda_peak_fp32_gflops(r->cc_major, r->cc_minor, r->sms, r->clock_khz);
    json_object_object_add(out, "theoretical_peak_gflops", jsonnum_sig(theory, 4));
    json_object_object_add(out, "fraction_of_peak", isfinite(theory) && isfinite(gflops) && gflops <= theory
                                                        ? jsonnum_sig(gflops / theory, 3)
                                                        : NULL);
    free(gwhy);
    json_object_object_add(out, "max_error", r->have_max_error ? jsonnum_sig(r->max_error, 6) : NULL);
    json_object_object_add(out, "wrong_elements", r->have_max_error ? json_object_new_int64((int64_t)r->wrong) : NULL);
    json_object_object_add(out, "first_mismatches", r->mismatches);
    json_object_object_add(out, "passes", r->passes);
    json_object_object_add(out, "jit_error_log", cuda_smoke_json_str(r->jit_error_log, CUDA_SMOKE_LOG_KEEP));
    json_object_object_add(out, "jit_info_log", cuda_smoke_json_str(r->jit_info_log, CUDA_SMOKE_LOG_KEEP));
    if (!r->detail && !r->status)
        r->detail = str_printf("the exact and the random pass of a %ux%u fp32 matrix product were right", r->n, r->n);
    json_object_object_add(out, "detail", cuda_smoke_json_str(r->detail, 1000));
    free(r->detail);
    free(r);
    return out;
}

json_object *cuda_smoke_child(void *arg)
{
    const struct cuda_smoke_args *a = arg;
    /* The JIT cache off (CUDA C Programming Guide, "CUDA Environment Variables": CUDA_CACHE_DISABLE=1):
     * the PTX is really compiled every time, and nothing is written under $HOME/.nv. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        json_object *out = json_object_new_object();
        json_object_object_add(out, "ordinal", json_object_new_int(a->ordinal));
        json_object_object_add(out, "n", json_object_new_int(a->n));
        json_object_object_add(out, "status", json_object_new_string("init-failed"));
        json_object_object_add(out, "failed_call", json_object_new_string("dlopen"));
        json_object_object_add(out, "detail", cuda_smoke_json_str(err ? err : "dlopen(\"libcuda.so.1\") failed", 1000));
        return out;
    }
    struct cuda_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = NULL;
    json_object *out;
    if (cuda_api_load(h, &api, &missing) < 0) {
        out = json_object_new_object();
        json_object_object_add(out, "ordinal", json_object_new_int(a->ordinal));
        json_object_object_add(out, "n", json_object_new_int(a->n));
        json_object_object_add(out, "status", json_object_new_string("init-failed"));
        json_object_object_add(out, "failed_call", json_object_new_string("dlsym"));
        char *d = str_printf("libcuda.so.1 has no %s", missing ? missing : "required function");
        json_object_object_add(out, "detail", cuda_smoke_json_str(d, 1000));
        free(d);
    } else {
        out = cuda_smoke_device(&api, a->ordinal, a->n);
    }
    Dl_info info;
    void *sym = dlsym(h, "cuInit");
    if (out && sym && dladdr(sym, &info) && info.dli_fname)
        json_object_object_add(out, "libcuda", cuda_smoke_json_str(info.dli_fname, 4096));
    const char *cache = getenv("CUDA_CACHE_DISABLE");
    json_object_object_add(out, "cache_disabled", json_object_new_boolean(cache && strcmp(cache, "1") == 0));
    /* No dlclose: the child ends now, and some drivers misbehave when unloaded. */
    return out;
}
