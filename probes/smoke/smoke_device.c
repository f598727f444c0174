/* smoke_device.c: the smoke test's isolated children: device enumeration, and the test of one device. */
#include "jsonnum.h"
#include "jsonstr.h"
#include "smoke_device.h"
#include "smoke_dev.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clapi.h"
#include "clquery.h"
#include "results/result_smoke.h"
#include "smoke_kernel.h"
#include "smoke_prep.h"
#include "compute_timer.h"
#include "compute_check.h"
#include "strutil.h"

/* What the output buffer holds before each kernel run: no exact-pass result can equal it. */
#define SMOKE_SENTINEL 0.1234

static void (*smoke_timer_hook)(double *prof_ms, double *host_ms, struct compute_peak_props *peak);

void smoke_set_timer_hook_for_tests(void (*hook)(double *prof_ms, double *host_ms, struct compute_peak_props *peak))
{
    smoke_timer_hook = hook;
}

/* ---- The test of one device ---------------------------------------------------------------- */

static void smoke_oom(struct smoke_dev *d, const char *what)
{
    if (!d->error) {
        d->error = clapi_error_json("malloc", 0, false);
        smoke_detail(d, "out of host memory for %s (N = %u)", what, d->n);
    }
}

/* A cl_uint device property, or 0 when the query fails. */
static unsigned smoke_device_uint(const struct smoke_dev *d, cl_device_info what)
{
    return (unsigned)clquery_device_uint_or0(&d->api, d->dev, what, sizeof(cl_uint));
}

/* What the device says about its compute units, clock and vector width, for its plausible peak; and
 * the driver's name and version, for a finding about its profiling clock. */
static void smoke_peak_query(struct smoke_dev *d, cl_device_type type)
{
    d->peak.cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    d->peak.compute_units = smoke_device_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    d->peak.clock_mhz = smoke_device_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    unsigned native = smoke_device_uint(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
    unsigned pref = smoke_device_uint(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
    d->peak.float_width = native > pref ? native : pref;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    d->peak.host_cpus = cpus > 0 && cpus < 1000000 ? (unsigned)cpus : 0;
    d->driver_version = clquery_device_str(&d->api, d->dev, CL_DRIVER_VERSION, NULL);
}

/* Write a pattern into the output buffer and read it back: transfers and memory, before any kernel. */
static void smoke_round_trip(struct smoke_dev *d, size_t bytes)
{
    smoke_stage(d, "buffer round trip (%zu bytes)", bytes);
    uint32_t *pat = malloc(bytes), *back = calloc(1, bytes);
    if (!pat || !back) {
        free(pat);
        free(back);
        smoke_oom(d, "the round trip");
        return;
    }
    for (size_t i = 0; i < bytes / 4; i++)
        pat[i] = compute_pattern_word(i);
    bool ok = smoke_ok(d, d->api.clEnqueueWriteBuffer(d->q, d->c, CL_TRUE, 0, bytes, pat, 0, NULL, NULL),
                       "clEnqueueWriteBuffer") &&
              smoke_ok(d, d->api.clEnqueueReadBuffer(d->q, d->c, CL_TRUE, 0, bytes, back, 0, NULL, NULL),
                       "clEnqueueReadBuffer");
    if (ok) {
        size_t bad = compute_pattern_check(back, bytes);
        json_object *rt = json_object_new_object();
        json_object_object_add(rt, "status", json_object_new_string(bad ? "fail" : "pass"));
        json_object_object_add(rt, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(rt, "wrong_words", json_object_new_int64((int64_t)bad));
        d->round_trip = rt;
        if (bad) {
            d->wrong_result = true;
            smoke_detail(d, "buffer round trip: %zu of %zu 32-bit words read back differ from what was written",
                         bad, bytes / 4);
        }
    }
    free(pat);
    free(back);
}

static json_object *smoke_pass_json(enum compute_prec p, enum compute_pass_kind k, const char *status)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "precision", json_object_new_string(compute_prec_name(p)));
    json_object_object_add(o, "kind", json_object_new_string(compute_pass_name(k)));
    json_object_object_add(o, "status", json_object_new_string(status));
    return o;
}

/* Check one pass's result GOT (SENTINEL: what the buffer held before) against PR and record it in D:
 * the pass, the fastest fp32 times (KMS by the profiling events, HMS by the host clock), mismatches. */
static void smoke_pass_record(struct smoke_dev *d, enum compute_prec p, enum compute_pass_kind kind,
                              const struct compute_problem *pr, const void *got, const void *sentinel, double kms,
                              double hms, bool *failed)
{
    const char *pn = compute_prec_name(p), *kn = compute_pass_name(kind);
    smoke_stage(d, "%s %s pass: checking the result", pn, kn);
    struct compute_check chk;
    compute_verify(pr, got, sentinel, &chk);
    json_object *po = smoke_pass_json(p, kind, chk.wrong ? "fail" : "pass");
    compute_check_add_json(po, &chk, kms, hms);
    json_object_array_add(d->passes, po);
    if (p == COMPUTE_FP32) {
        if (isfinite(kms) && (!isfinite(d->kernel_ms) || kms < d->kernel_ms))
            d->kernel_ms = kms;
        if (isfinite(hms) && (!isfinite(d->host_ms) || hms < d->host_ms))
            d->host_ms = hms;
        if (!d->have_max_error || chk.max_error > d->max_error)
            d->max_error = chk.max_error;
        d->have_max_error = true;
    }
    d->wrong += chk.wrong;
    for (size_t i = 0; i < chk.n_first && json_object_array_length(d->mismatches) < COMPUTE_MAX_MISMATCHES; i++) {
        const struct compute_mismatch *m = &chk.first[i];
        json_object *mo = json_object_new_object();
        char text[40];
        snprintf(text, sizeof(text), "%.9g", m->got);
        json_object_object_add(mo, "precision", json_object_new_string(pn));
        json_object_object_add(mo, "pass", json_object_new_string(kn));
        json_object_object_add(mo, "row", json_object_new_int64(m->row));
        json_object_object_add(mo, "col", json_object_new_int64(m->col));
        int digits = p == COMPUTE_FP64 ? 17 : 9; /* enough to tell neighbouring values apart */
        json_object_object_add(mo, "expected", jsonnum_sig(m->expected, digits));
        json_object_object_add(mo, "got", jsonnum_sig(m->got, digits));
        json_object_object_add(mo, "got_text", json_object_new_string(text));
        json_object_array_add(d->mismatches, mo);
    }
    if (chk.wrong) {
        *failed = true;
        d->wrong_result = true;
        char *why = compute_check_describe(&chk);
        smoke_detail(d, "%s %s pass: %s", pn, kn, why ? why : "wrong result");
        free(why);
    }
}

/* One pass of one precision with kernel K. Returns false when a call failed (stop testing). */
static bool smoke_pass(struct smoke_dev *d, cl_kernel k, enum compute_prec p, enum compute_pass_kind kind, bool *failed)
{
    const char *pn = compute_prec_name(p), *kn = compute_pass_name(kind);
    struct compute_problem own;
    const struct compute_problem *pr;
    int g = smoke_prep_get(d->prep, p, kind, d->n, &own, &pr);
    if (g == 1) {
        /* Not meaningful at this size (fp16 random beyond N ~ 1000): said so, not counted. */
        json_object *po = smoke_pass_json(p, kind, "skipped");
        json_object_object_add(po, "reason", json_object_new_string("the error bound of this size reaches the values"));
        json_object_array_add(d->passes, po);
        compute_problem_free(&own);
        return true;
    }
    size_t nn = (size_t)d->n * d->n, bytes = nn * compute_prec_size(p);
    void *got = g == 0 ? calloc(1, bytes) : NULL, *sentinel = g == 0 ? malloc(bytes) : NULL;
    if (g < 0 || !got || !sentinel) {
        free(got);
        free(sentinel);
        compute_problem_free(&own);
        smoke_oom(d, "the matrices");
        return false;
    }
    for (size_t i = 0; i < nn; i++)
        compute_value_set(p, sentinel, i, SMOKE_SENTINEL);

    smoke_stage(d, "%s %s pass: uploading the matrices", pn, kn);
    cl_uint n = d->n;
    cl_event kev = NULL, rev = NULL;
    bool ok = smoke_ok(d, d->api.clEnqueueWriteBuffer(d->q, d->a, CL_FALSE, 0, bytes, pr->a, 0, NULL, NULL),
                       "clEnqueueWriteBuffer") &&
              smoke_ok(d, d->api.clEnqueueWriteBuffer(d->q, d->b, CL_FALSE, 0, bytes, pr->b, 0, NULL, NULL),
                       "clEnqueueWriteBuffer") &&
              smoke_ok(d, d->api.clEnqueueWriteBuffer(d->q, d->c, CL_FALSE, 0, bytes, sentinel, 0, NULL, NULL),
                       "clEnqueueWriteBuffer") &&
              smoke_ok(d, d->api.clSetKernelArg(k, 0, sizeof(n), &n), "clSetKernelArg") &&
              smoke_ok(d, d->api.clSetKernelArg(k, 1, sizeof(cl_mem), &d->a), "clSetKernelArg") &&
              smoke_ok(d, d->api.clSetKernelArg(k, 2, sizeof(cl_mem), &d->b), "clSetKernelArg") &&
              smoke_ok(d, d->api.clSetKernelArg(k, 3, sizeof(cl_mem), &d->c), "clSetKernelArg");
    /* The uploads finish first, so that the host clock times the kernel alone: from just before
     * its launch to the moment clWaitForEvents sees it done. The read-back starts after that, and
     * the reference (when not prepared ahead) is computed while it runs. */
    if (ok) {
        smoke_stage(d, "%s %s pass: waiting for the upload (clFinish)", pn, kn);
        ok = smoke_ok(d, d->api.clFinish(d->q), "clFinish");
    }
    double hms = NAN;
    if (ok) {
        smoke_stage(d, "%s %s pass: running the kernel", pn, kn);
        size_t gws[2] = {smoke_kernel_columns(d->n), smoke_kernel_rows(d->n)};
        double h0 = jsonnum_now_ms();
        ok = smoke_ok(d, d->api.clEnqueueNDRangeKernel(d->q, k, 2, NULL, gws, NULL, 0, NULL, &kev),
                      "clEnqueueNDRangeKernel") &&
             smoke_ok(d, d->api.clWaitForEvents(1, &kev), "clWaitForEvents");
        if (ok)
            hms = jsonnum_now_ms() - h0;
        ok = ok && smoke_ok(d, d->api.clEnqueueReadBuffer(d->q, d->c, CL_FALSE, 0, bytes, got, 0, NULL, &rev),
                            "clEnqueueReadBuffer");
    }
    if (ok && d->api.clFlush)
        d->api.clFlush(d->q); /* start the read-back, then compute the reference meanwhile */
    if (ok && !pr->ref && (pr != &own || compute_problem_reference(&own) < 0)) {
        smoke_oom(d, "the reference");
        ok = false;
    }
    if (ok)
        ok = smoke_ok(d, d->api.clWaitForEvents(1, &rev), "clWaitForEvents");
    if (!ok)
        d->api.clFinish(d->q); /* host buffers must not go while the queue may still use them */
    /* NAN when the events cannot be read or end before they start: the host clock decides then. */
    double kms = NAN;
    if (ok) {
        cl_ulong t0 = 0, t1 = 0;
        if (d->api.clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL) == CL_SUCCESS &&
            d->api.clGetEventProfilingInfo(kev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) == CL_SUCCESS &&
            t1 >= t0)
            kms = (double)(t1 - t0) / 1e6;
    }
    if (kev)
        d->api.clReleaseEvent(kev);
    if (rev)
        d->api.clReleaseEvent(rev);

    if (ok)
        smoke_pass_record(d, p, kind, pr, got, sentinel, kms, hms, failed);
    else
        json_object_array_add(d->passes, smoke_pass_json(p, kind, "error"));
    free(got);
    free(sentinel);
    compute_problem_free(&own);
    return ok;
}

/* Both passes of precision P. Returns false when a call failed. */
static bool smoke_precision(struct smoke_dev *d, enum compute_prec p)
{
    smoke_stage(d, "%s: creating the kernel", compute_prec_name(p));
    cl_int err = CL_SUCCESS;
    cl_kernel k = d->api.clCreateKernel(d->prog, smoke_kernel_name(p), &err);
    if (!smoke_ok(d, err != CL_SUCCESS ? err : (k ? CL_SUCCESS : CL_INVALID_KERNEL), "clCreateKernel")) {
        d->prec_status[p] = RESULT_SMOKE_PREC_ERROR;
        return false;
    }
    bool failed = false, ok = true;
    for (int kind = 0; kind < COMPUTE_N_PASS && ok; kind++)
        ok = smoke_pass(d, k, p, (enum compute_pass_kind)kind, &failed);
    d->api.clReleaseKernel(k);
    d->prec_status[p] = failed ? RESULT_SMOKE_PREC_FAIL : ok ? RESULT_SMOKE_PREC_PASS : RESULT_SMOKE_PREC_ERROR;
    return ok;
}

/* Held around the device threads' clGetPlatformIDs (smoke_dev_find). */
static pthread_mutex_t smoke_loader_mu = PTHREAD_MUTEX_INITIALIZER;

/* Load the loader and find the device D tests; its name, type and extensions go into D and OUT.
 * Returns its platform, or NULL with the error recorded. */
static cl_platform_id smoke_dev_find(struct smoke_dev *d, json_object *out)
{
    smoke_stage(d, "loading the OpenCL loader");
    char err[512];
    if (clapi_open(&d->api, NULL, err, sizeof(err)) < 0) {
        d->error = clapi_error_json("dlopen", 0, false);
        smoke_detail(d, "%s", err);
        return NULL;
    }

    smoke_stage(d, "finding device %d:%d", d->args->platform, d->args->device);
    cl_platform_id *pids = NULL;
    cl_device_id *dids = NULL;
    cl_uint np = 0, nd = 0;
    /* The first clGetPlatformIDs of a process loads every driver; ocl-icd 2.3 makes the other threads
     * that call it meanwhile spin on a CPU until it is done (perf: 21% of the CPU samples of
     * `gpucheckup smoke` with 4 PoCL devices on 2 cores). One call at a time: they sleep instead. */
    pthread_mutex_lock(&smoke_loader_mu);
    cl_int pe = clquery_none_is_empty(clquery_platform_ids(&d->api, &pids, &np));
    pthread_mutex_unlock(&smoke_loader_mu);
    if (!smoke_ok(d, pe, "clGetPlatformIDs"))
        return NULL;
    cl_platform_id plat = (cl_uint)d->args->platform < np ? pids[d->args->platform] : NULL;
    free(pids);
    if (plat)
        d->platform_name = clquery_platform_str(&d->api, plat, CL_PLATFORM_NAME, NULL);
    if (!plat) {
        d->error = clapi_error_json("clGetPlatformIDs", 0, false);
        smoke_detail(d, "platform %d is gone (the loader now lists %u)", d->args->platform, np);
        return NULL;
    }
    /* The device list too, one thread at a time: PoCL 3.1 initialises its devices in the first
     * clGetDeviceIDs, and a thread calling it meanwhile sees a part of them ("device 0:1 is gone (the
     * platform now has 1)", 2 runs in 6 of `gpucheckup smoke` with 4 pthread devices on 2 cores). */
    pthread_mutex_lock(&smoke_loader_mu);
    cl_int de = clquery_none_is_empty(clquery_device_ids(&d->api, plat, CL_DEVICE_TYPE_ALL, &dids, &nd));
    pthread_mutex_unlock(&smoke_loader_mu);
    if (!smoke_ok(d, de, "clGetDeviceIDs"))
        return NULL;
    d->dev = (cl_uint)d->args->device < nd ? dids[d->args->device] : NULL;
    free(dids);
    if (!d->dev) {
        d->error = clapi_error_json("clGetDeviceIDs", 0, false);
        smoke_detail(d, "device %d:%d is gone (the platform now has %u)", d->args->platform, d->args->device, nd);
        return NULL;
    }
    char *name = clquery_device_str(&d->api, d->dev, CL_DEVICE_NAME, NULL);
    char *exts = clquery_device_str(&d->api, d->dev, CL_DEVICE_EXTENSIONS, NULL);
    uint64_t type = 0;
    if (clquery_device_uint(&d->api, d->dev, CL_DEVICE_TYPE, sizeof(cl_device_type), &type) == CL_SUCCESS)
        json_object_object_add(out, "type", clquery_type_json(type));
    json_object_object_add(out, "name", jsonstr_or_null(name));
    smoke_peak_query(d, type);
    char *dver = clquery_device_str(&d->api, d->dev, CL_DEVICE_VERSION, NULL);
    if (name && d->driver_version && dver)
        d->model = str_printf("%s\n%s\n%s", name, d->driver_version, dver);
    free(dver);
    free(name);
    d->supported[COMPUTE_FP32] = true;
    d->supported[COMPUTE_FP64] = clquery_has_ext(exts, "cl_khr_fp64");
    d->supported[COMPUTE_FP16] = clquery_has_ext(exts, "cl_khr_fp16");
    free(exts);
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        d->prec_status[p] = d->supported[p] ? RESULT_SMOKE_PREC_NOT_RUN : RESULT_SMOKE_PREC_UNSUPPORTED;

    return plat;
}

/* The whole test; results in D. */
static void smoke_dev_test(struct smoke_dev *d, json_object *out)
{
    cl_platform_id plat = smoke_dev_find(d, out);
    if (!plat)
        return;
    smoke_stage(d, "creating a context and a queue");
    cl_int e = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    d->ctx = d->api.clCreateContext(props, 1, &d->dev, NULL, NULL, &e);
    if (!smoke_ok(d, e != CL_SUCCESS ? e : (d->ctx ? CL_SUCCESS : CL_INVALID_CONTEXT), "clCreateContext"))
        return;
    if (d->api.clCreateCommandQueue) {
        d->q = d->api.clCreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
        if (!smoke_ok(d, e != CL_SUCCESS ? e : (d->q ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE), "clCreateCommandQueue"))
            return;
    } else {
        cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        d->q = d->api.clCreateCommandQueueWithProperties(d->ctx, d->dev, qp, &e);
        if (!smoke_ok(d, e != CL_SUCCESS ? e : (d->q ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE),
                      "clCreateCommandQueueWithProperties"))
            return;
    }

    /* One program holds every precision the device has: one build. When the optional kernels do not
     * build, fp32 is tried alone, so that a broken fp64 compiler does not hide a working fp32. */
    smoke_stage(d, "building the kernel");
    const char *opts = smoke_kernel_options(d->supported[COMPUTE_FP64], d->supported[COMPUTE_FP16]);
    char *log = NULL;
    e = smoke_build_shared(d, opts, &log);
    if (e == CL_SUCCESS) {
        for (int p = 0; p < COMPUTE_N_PREC; p++)
            d->built[p] = d->supported[p];
    } else if (e != CL_SUCCESS && !d->error) {
        d->build_log = log;
        log = NULL;
        d->error = clapi_error_json("clBuildProgram", e, true);
        if (*opts) {
            smoke_stage(d, "building the kernel (fp32 only)");
            double first_ms = d->build_ms;
            cl_int e2 = smoke_build(d, "", &log);
            free(log);
            log = NULL;
            d->build_ms += first_ms;
            if (e2 == CL_SUCCESS) {
                d->built[COMPUTE_FP32] = true;
                for (int p = COMPUTE_FP64; p < COMPUTE_N_PREC; p++)
                    if (d->supported[p])
                        d->prec_status[p] = RESULT_SMOKE_PREC_BUILD_FAILED;
                smoke_detail(d, "clBuildProgram failed (%s) with %s; fp32 alone builds", clapi_error_name(e), opts);
            }
        }
        if (!d->built[COMPUTE_FP32]) {
            d->prec_status[COMPUTE_FP32] = RESULT_SMOKE_PREC_BUILD_FAILED;
            smoke_detail(d, "clBuildProgram failed: %s", clapi_error_name(e));
            return;
        }
    }
    free(log);

    size_t es = compute_prec_size(COMPUTE_FP32);
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        if (d->built[p] && compute_prec_size((enum compute_prec)p) > es)
            es = compute_prec_size((enum compute_prec)p);
    size_t bytes = (size_t)d->n * d->n * es;
    smoke_stage(d, "allocating 3 buffers of %zu bytes", bytes);
    d->a = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, bytes, NULL, &e);
    if (!smoke_ok(d, e, "clCreateBuffer"))
        return;
    d->b = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, bytes, NULL, &e);
    if (!smoke_ok(d, e, "clCreateBuffer"))
        return;
    d->c = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (!smoke_ok(d, e, "clCreateBuffer"))
        return;

    smoke_round_trip(d, bytes);
    if (d->error && !d->round_trip)
        return;
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        if (d->built[p] && !smoke_precision(d, (enum compute_prec)p))
            break;
}

json_object *smoke_device_child(void *arg)
{
    struct smoke_dev d;
    memset(&d, 0, sizeof(d));
    d.args = arg;
    d.n = d.args->n;
    d.kernel_ms = NAN;
    d.host_ms = NAN;
    d.max_error = NAN;
    d.mismatches = json_object_new_array();
    d.passes = json_object_new_array();
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        d.prec_status[p] = RESULT_SMOKE_PREC_NOT_RUN;
    json_object *out = json_object_new_object();
    if (!out || !d.mismatches || !d.passes)
        return NULL;

    struct smoke_prep prep;
    if (d.args->prep) {
        d.prep = d.args->prep; /* the platform child's, for all its devices: it frees it */
    } else {
        smoke_prep_start(&prep, d.n);
        d.prep = &prep;
    }
    smoke_dev_test(&d, out);
    /* The OpenCL objects are not released: the child ends now and the kernel frees everything, while
     * a driver can spend a long time in its release calls (PoCL: ~0.1 s after a cold build). */
    if (d.prep == &prep)
        smoke_prep_finish(&prep);
    smoke_stage(&d, "done");

    int status = d.wrong_result ? RESULT_SMOKE_FAIL : d.error ? RESULT_SMOKE_ERROR : RESULT_SMOKE_PASS;
    if (!json_object_object_get_ex(out, "name", NULL))
        json_object_object_add(out, "name", NULL);
    if (!json_object_object_get_ex(out, "type", NULL))
        json_object_object_add(out, "type", NULL);
    json_object_object_add(out, "status", gc_name_json(&result_smoke_status_names, status));
    json_object_object_add(out, "n", json_object_new_int64(d.n));
    json_object_object_add(out, "build_ms", d.built[COMPUTE_FP32] || d.build_log ? jsonnum_ms(d.build_ms) : NULL);
    json_object_object_add(out, "build_from", d.built[COMPUTE_FP32] ? json_object_new_string(d.from_binary ? "binary" : "source")
                                                                   : NULL);
    if (smoke_timer_hook && d.have_max_error)
        smoke_timer_hook(&d.kernel_ms, &d.host_ms, &d.peak);
    json_object_object_add(out, "kernel_ms", jsonnum_ms(d.kernel_ms));
    json_object_object_add(out, "host_ms", jsonnum_ms(d.host_ms));
    /* Which clock to believe, and whether the speed is one the device could reach at all. */
    double peak = compute_peak_gflops(&d.peak);
    struct compute_timing tm;
    compute_timing_decide(d.kernel_ms, d.host_ms, 2.0 * d.n * d.n * d.n, peak, &tm);
    bool timed = tm.timer != NULL;
    json_object_object_add(out, "timer", jsonstr_or_null(tm.timer));
    const char *why = timed ? compute_timer_why_name(tm.why) : NULL;
    json_object_object_add(out, "timer_reason", jsonstr_or_null(why));
    json_object_object_add(out, "peak_gflops", jsonnum_sig(peak, 4));
    json_object_object_add(out, "gflops", jsonnum_sig(tm.gflops, 4));
    char *gwhy = NULL;
    if (tm.above_peak)
        gwhy = str_printf("%.4g GFLOPS by the %s clock would exceed the device's plausible peak of %.4g GFLOPS "
                          "(it reports %u compute unit%s at %u MHz): not a speed", 2.0 * d.n * d.n * d.n / (tm.ms * 1e6),
                          tm.timer, peak, d.peak.compute_units, d.peak.compute_units == 1 ? "" : "s", d.peak.clock_mhz);
    else if (timed && !isfinite(tm.gflops))
        gwhy = str_printf("the kernel took less than the clock can tell");
    json_object_object_add(out, "gflops_reason", jsonstr_or_null(gwhy));
    free(gwhy);
    /* For the parent's findings only (not copied into the report): whether to blame the driver's
     * profiling clock, and the driver's name and version for the message. */
    json_object_object_add(out, "blame_profiling", json_object_new_boolean(tm.blame_profiling));
    json_object_object_add(out, "above_peak", json_object_new_boolean(tm.above_peak));
    json_object_object_add(out, "platform_name", jsonstr_or_null(d.platform_name));
    json_object_object_add(out, "driver_version", jsonstr_or_null(d.driver_version));
    free(d.platform_name);
    free(d.driver_version);
    free(d.model);
    json_object_object_add(out, "max_error", d.have_max_error ? jsonnum_sig(d.max_error, 6) : NULL);
    json_object_object_add(out, "wrong_elements", d.have_max_error ? json_object_new_int64((int64_t)d.wrong) : NULL);
    json_object_object_add(out, "first_mismatches", d.mismatches);
    json_object *prec = json_object_new_object();
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        json_object_object_add(prec, compute_prec_name(p), gc_name_json(&result_smoke_prec_status_names, d.prec_status[p]));
    json_object_object_add(out, "precisions", prec);
    json_object_object_add(out, "passes", d.passes);
    json_object_object_add(out, "round_trip", d.round_trip);
    json_object_object_add(out, "build_log", jsonstr_or_null(d.build_log));
    json_object_object_add(out, "error", d.error);
    if (!d.detail && !d.error && !d.wrong_result) {
        size_t np = 0, nu = 0;
        for (int p = 0; p < COMPUTE_N_PREC; p++)
            np += d.prec_status[p] == RESULT_SMOKE_PREC_PASS, nu += d.prec_status[p] == RESULT_SMOKE_PREC_UNSUPPORTED;
        d.detail = str_printf("every result exact or within tolerance (%zu precision%s%s)", np, np == 1 ? "" : "s",
                              nu ? "; others unsupported" : "");
    }
    json_object_object_add(out, "detail", jsonstr_or_null(d.detail));
    free(d.build_log);
    free(d.detail);
    return out;
}
