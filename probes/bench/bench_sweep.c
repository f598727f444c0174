/* bench_sweep.c: one GEMM sweep on an OpenCL device (gpucheckup's kernel or CLBlast), every size verified. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_internal.h"
#include "bench_verify.h"
#include "clapi.h"
#include "jsonget.h"
#include "probe.h"
#include "jsonnum.h"
#include "strutil.h"

/* The least a CLBlast sweep's first call is waited for, whatever is left of the budget. */
#define BENCH_FIRST_CALL_MS 2000.0

static const struct bench_kernel *bench_kernel_override;

void bench_set_kernel_for_tests(const struct bench_kernel *k)
{
    bench_kernel_override = k;
}

const char *bench_impl_name(enum bench_impl i)
{
    return i == BENCH_IMPL_CLBLAST ? "clblast" : "gpucheckup";
}

/* What one sweep holds. */
struct bench_run {
    struct bench_dev *d;
    enum bench_impl impl;
    enum bench_prec prec;
    cl_kernel kernel;          /* ours */
    struct bench_kernel k;
    cl_mem a, b, c;
    size_t np;
    unsigned n;
    json_object *error;        /* the failed call, or NULL */
    bool unsupported;          /* bench_kernel_pick has no kernel for this precision: not a failure */
    char *detail;
    double build_until_ms;     /* CLBlast: when to stop waiting for its first call (it builds its kernels) */
    bool abandoned;            /* that call was still running then: left to the thread running it */
};

static bool bench_ok(struct bench_run *r, cl_int err, const char *call)
{
    if (err == CL_SUCCESS)
        return true;
    if (!r->error) {
        r->error = bench_error_json(call, err);
        r->detail = str_printf("%s failed: %s (N = %u)", call, clapi_error_name(err), r->n);
    }
    return false;
}

/* Build our kernel for the sweep's precision. Returns true, or false with the error (and build log) set. */
static bool bench_build(struct bench_run *r, json_object *sweep)
{
    struct bench_dev *d = r->d;
    if (bench_kernel_override)
        r->k = *bench_kernel_override;
    else if (bench_kernel_pick(r->prec, &d->hints, &r->k) < 0) {
        r->detail = str_dup("gpucheckup's kernel has no variant for this precision on this device");
        r->unsupported = true;
        return false;
    }
    cl_int err = CL_SUCCESS;
    const char *src = r->k.source;
    cl_program prog = d->api.clCreateProgramWithSource(d->ctx, 1, &src, NULL, &err);
    if (!bench_ok(r, prog ? err : CL_INVALID_PROGRAM, "clCreateProgramWithSource"))
        return false;
    double t0 = jsonnum_now_ms();
    err = d->api.clBuildProgram(prog, 1, &d->dev, r->k.options, NULL, NULL);
    json_object_object_add(sweep, "build_ms", jsonnum_ms(jsonnum_now_ms() - t0));
    if (err != CL_SUCCESS) {
        size_t len = 0;
        char *log = NULL;
        if (d->api.clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) == CL_SUCCESS && len &&
            len < (1u << 20) && (log = calloc(1, len + 1)))
            d->api.clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        for (char *c = log; c && *c; c++) /* the driver's text: keep lines, drop other control bytes */
            if ((unsigned char)*c < 0x20 && *c != '\n')
                *c = ' ';
            else if ((unsigned char)*c >= 0x7f)
                *c = '?';
        json_object_object_add(sweep, "build_log", log ? json_object_new_string(log) : NULL);
        free(log);
        bench_ok(r, err, "clBuildProgram");
        return false;
    }
    r->kernel = d->api.clCreateKernel(prog, r->k.name, &err);
    return bench_ok(r, r->kernel ? err : CL_INVALID_KERNEL, "clCreateKernel");
}

/* One run: our kernel or CLBlast's GEMM on the current buffers. PROF_MS from the profiling events (NAN when
 * unreadable; CLBlast's event covers its last kernel only), HOST_MS around the call and the wait. */
static bool bench_run_once(struct bench_run *r, double *prof_ms, double *host_ms)
{
    struct bench_dev *d = r->d;
    cl_event ev = NULL;
    cl_int err;
    double t0 = jsonnum_now_ms();
    if (r->impl == BENCH_IMPL_OURS) {
        size_t global[2], local[2];
        bench_kernel_geometry(&r->k, &d->hints, r->np, global, local);
        err = d->api.clEnqueueNDRangeKernel(d->q, r->kernel, 2, NULL, global, local[0] ? local : NULL, 0, NULL, &ev);
        if (!bench_ok(r, err, "clEnqueueNDRangeKernel"))
            return false;
    } else {
        size_t n = r->n;
        if (r->prec == BENCH_FP32)
            err = d->clblast.sgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 1.0f, r->a,
                                   0, n, r->b, 0, n, 0.0f, r->c, 0, n, &d->q, &ev);
        else if (r->prec == BENCH_FP64)
            err = d->clblast.dgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 1.0, r->a, 0,
                                   n, r->b, 0, n, 0.0, r->c, 0, n, &d->q, &ev);
        else /* alpha = 1.0 and beta = 0.0 as IEEE halves */
            err = d->clblast.hgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 0x3C00,
                                   r->a, 0, n, r->b, 0, n, 0x0000, r->c, 0, n, &d->q, &ev);
        if (err != CL_SUCCESS) {
            if (!r->error) {
                r->error = bench_error_json("CLBlast GEMM", err);
                r->detail = str_printf("CLBlast's GEMM returned status %d (N = %u)", err, r->n);
            }
            return false;
        }
    }
    err = ev ? d->api.clWaitForEvents(1, &ev) : d->api.clFinish(d->q);
    *host_ms = jsonnum_now_ms() - t0;
    if (!bench_ok(r, err, "clWaitForEvents")) {
        if (ev)
            d->api.clReleaseEvent(ev);
        return false;
    }
    cl_ulong s = 0, e = 0;
    *prof_ms = NAN;
    if (ev && d->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, NULL) == CL_SUCCESS &&
        d->api.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(e), &e, NULL) == CL_SUCCESS && e >= s)
        *prof_ms = (double)(e - s) / 1e6;
    if (ev)
        d->api.clReleaseEvent(ev);
    return true;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i]))
            return NAN;
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* A first CLBlast call run in a thread the sweep stops waiting for at its deadline: CLBlast builds its
 * kernels then (PoCL: 13 s for SGEMM on a 2-core VM with an empty cache), which cannot be interrupted.
 * The thread works on copies of the run and the device, so that nothing it touches goes away if it is
 * left running; the child then ends (_exit) without waiting for it, and the driver's cache stays cold. */
struct bench_bounded {
    struct bench_run run;
    struct bench_dev dev;
    double prof_ms, host_ms;
    int ok, done; /* written by the thread, done last (release) */
};

static void *bench_bounded_main(void *arg)
{
    struct bench_bounded *b = arg;
    int ok = bench_run_once(&b->run, &b->prof_ms, &b->host_ms);
    __atomic_store_n(&b->ok, ok, __ATOMIC_RELAXED);
    __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* bench_run_once, waiting until R->build_until_ms at most. Returns its result; when the call is still
 * running then, false with R->abandoned set (R's buffers now belong to the call). */
static bool bench_run_bounded(struct bench_run *r, double *prof_ms, double *host_ms)
{
    struct bench_bounded *b = calloc(1, sizeof(*b));
    pthread_t th;
    if (!b)
        return bench_run_once(r, prof_ms, host_ms);
    b->run = *r;
    b->dev = *r->d;
    b->run.d = &b->dev;
    if (pthread_create(&th, NULL, bench_bounded_main, b) != 0) {
        free(b);
        return bench_run_once(r, prof_ms, host_ms);
    }
    while (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) && jsonnum_now_ms() < r->build_until_ms) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)) {
        pthread_detach(th);
        r->abandoned = true; /* B stays the thread's */
        return false;
    }
    pthread_join(th, NULL);
    *prof_ms = b->prof_ms;
    *host_ms = b->host_ms;
    r->error = b->run.error;
    r->detail = b->run.detail;
    bool ok = b->ok;
    free(b);
    return ok;
}

static void bench_release_buffers(struct bench_run *r)
{
    cl_mem *m[3] = {&r->a, &r->b, &r->c};
    for (int i = 0; i < 3; i++)
        if (*m[i]) {
            r->d->api.clReleaseMemObject(*m[i]);
            *m[i] = NULL;
        }
}

/* Create the buffers of problem P and set our kernel's arguments. */
static bool bench_buffers(struct bench_run *r, struct bench_problem *p)
{
    struct bench_dev *d = r->d;
    size_t bytes = r->np * r->np * bench_prec_size(r->prec);
    cl_int err = CL_SUCCESS;
    r->a = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, p->a, &err);
    if (!bench_ok(r, r->a ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer"))
        return false;
    r->b = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, p->b, &err);
    if (!bench_ok(r, r->b ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer"))
        return false;
    r->c = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, p->sentinel, &err);
    if (!bench_ok(r, r->c ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer"))
        return false;
    if (r->impl != BENCH_IMPL_OURS)
        return true;
    cl_int n = (cl_int)r->np;
    err = d->api.clSetKernelArg(r->kernel, 0, sizeof(n), &n);
    if (err == CL_SUCCESS)
        err = d->api.clSetKernelArg(r->kernel, 1, sizeof(cl_mem), &r->a);
    if (err == CL_SUCCESS)
        err = d->api.clSetKernelArg(r->kernel, 2, sizeof(cl_mem), &r->b);
    if (err == CL_SUCCESS)
        err = d->api.clSetKernelArg(r->kernel, 3, sizeof(cl_mem), &r->c);
    return bench_ok(r, err, "clSetKernelArg");
}

/* Times of one size's runs, and the clock chosen. */
struct bench_times {
    double prof[BENCH_MAX_RUNS], host[BENCH_MAX_RUNS];
    unsigned runs;
};

/* Add the timing keys of one size to PT: the clock chosen (compute_timing_decide), median, spread, GFLOPS. */
static void bench_point_timing(struct bench_run *r, json_object *pt, struct bench_times *t, bool right)
{
    double flops = 2.0 * (double)r->n * r->n * r->n;
    double prof[BENCH_MAX_RUNS], host[BENCH_MAX_RUNS];
    memcpy(prof, t->prof, sizeof(prof));
    memcpy(host, t->host, sizeof(host));
    double pm = bench_median(prof, t->runs), hm = bench_median(host, t->runs);
    struct compute_timing tm;
    compute_timing_decide(pm, hm, flops, compute_peak_gflops(&r->d->peak), &tm);
    bool use_host = tm.timer && strcmp(tm.timer, "host") == 0;
    double *v = use_host ? host : prof; /* sorted by bench_median */
    json_object_object_add(pt, "runs", json_object_new_int((int)t->runs));
    json_object_object_add(pt, "timer", tm.timer ? json_object_new_string(tm.timer) : NULL);
    json_object_object_add(pt, "timer_reason", json_object_new_string(tm.why == COMPUTE_TIMER_PROFILING_OK
                                                                          ? "profiling-ok"
                                                                          : compute_timer_why_name(tm.why)));
    json_object_object_add(pt, "profiling_ms", jsonnum_ms(pm));
    json_object_object_add(pt, "host_ms", jsonnum_ms(hm));
    bool timed = tm.timer != NULL;
    json_object_object_add(pt, "ms", timed ? jsonnum_ms(tm.ms) : NULL);
    json_object_object_add(pt, "ms_min", timed ? jsonnum_ms(v[0]) : NULL);
    json_object_object_add(pt, "ms_max", timed ? jsonnum_ms(v[t->runs - 1]) : NULL);
    bool count = right && timed && !tm.above_peak && tm.ms > 0;
    json_object_object_add(pt, "gflops", count ? jsonnum_sig(flops / (tm.ms * 1e6), 4) : NULL);
    json_object_object_add(pt, "gflops_min", count && v[t->runs - 1] > 0 ? jsonnum_sig(flops / (v[t->runs - 1] * 1e6), 4) : NULL);
    json_object_object_add(pt, "gflops_max", count && v[0] > 0 ? jsonnum_sig(flops / (v[0] * 1e6), 4) : NULL);
    json_object_object_add(pt, "above_peak", json_object_new_boolean(tm.above_peak));
}

/* Run, time and verify size N. Returns the point object (NULL: a call failed, r->error set), and the
 * median host time of a run in *RUN_MS. */
static json_object *bench_point(struct bench_run *r, unsigned n, bool warm_up, double *run_ms, double *warm_ms)
{
    struct bench_dev *d = r->d;
    size_t pad = r->impl == BENCH_IMPL_OURS && r->k.pad > 1 ? r->k.pad : 1;
    r->n = n;
    r->np = (n + pad - 1) / pad * pad;
    bench_stage(d->args->stage, "%s %s N=%u: preparing", bench_impl_name(r->impl), bench_prec_name(r->prec), n);
    struct bench_problem p;
    if (bench_problem_make(&p, r->prec, n, r->np, BENCH_SEED + n) < 0 || !bench_buffers(r, &p)) {
        if (!r->error) {
            r->error = bench_error_json("malloc", 0);
            r->detail = str_printf("out of host memory for N = %u", n);
        }
        bench_problem_free(&p);
        bench_release_buffers(r);
        return NULL;
    }
    bench_stage(d->args->stage, "%s %s N=%u: running", bench_impl_name(r->impl), bench_prec_name(r->prec), n);
    struct bench_times t = {.runs = 0};
    double pm, hm = 0;
    bool ok = !warm_up || (r->build_until_ms > 0 ? bench_run_bounded(r, &pm, &hm) : bench_run_once(r, &pm, &hm));
    r->build_until_ms = 0; /* the first call only */
    *warm_ms = warm_up ? hm : 0;
    if (r->abandoned) { /* the buffers are the running call's: never released */
        bench_problem_free(&p);
        return NULL;
    }
    while (ok && t.runs < BENCH_MAX_RUNS) {
        ok = bench_run_once(r, &t.prof[t.runs], &t.host[t.runs]);
        t.runs += ok;
        if (t.runs >= BENCH_MIN_RUNS && t.host[t.runs - 1] >= BENCH_SHORT_RUN_MS)
            break;
    }
    size_t bytes = r->np * r->np * bench_prec_size(r->prec);
    void *got = ok ? malloc(bytes) : NULL;
    if (ok && got)
        ok = bench_ok(r, d->api.clEnqueueReadBuffer(d->q, r->c, CL_TRUE, 0, bytes, got, 0, NULL, NULL),
                      "clEnqueueReadBuffer");
    json_object *pt = NULL;
    struct bench_check chk;
    bench_stage(d->args->stage, "%s %s N=%u: verifying", bench_impl_name(r->impl), bench_prec_name(r->prec), n);
    if (ok && got && bench_problem_check(&p, got, d->have_cblas ? d->cblas.dgemm : NULL, &chk) == 0) {
        bool right = bench_check_ok(&chk);
        pt = json_object_new_object();
        json_object_object_add(pt, "n", json_object_new_int((int)n));
        json_object_object_add(pt, "padded_n", json_object_new_int((int)r->np));
        bench_check_to_json(pt, &chk);
        bench_point_timing(r, pt, &t, right);
        double h[BENCH_MAX_RUNS];
        memcpy(h, t.host, sizeof(h));
        *run_ms = bench_median(h, t.runs);
    } else if (ok && !r->error) {
        r->error = bench_error_json("malloc", 0);
        r->detail = str_printf("out of host memory verifying N = %u", n);
    }
    free(got);
    bench_problem_free(&p);
    bench_release_buffers(r);
    return pt;
}

/* Why the sweep cannot go to size N: too large for the device's memory. */
static bool bench_fits(const struct bench_run *r, unsigned n)
{
    unsigned long long bytes = (unsigned long long)n * n * bench_prec_size(r->prec);
    return (!r->d->max_alloc || bytes <= r->d->max_alloc) && (!r->d->global_mem || 3 * bytes <= r->d->global_mem / 2);
}

/* The text for a CLBlast sweep whose first call was still running after WAITED_MS. */
static char *bench_not_built_detail(enum bench_prec prec, double waited_ms)
{
    return str_printf("not measured: CLBlast's first %s call, which builds its kernels, was still running after %.1f s, "
                      "all that was left of this device's share of --bench-time (a first run: the driver compiles them, "
                      "then caches them; one run with a longer --bench-time, such as 120, builds them for the runs "
                      "after it)",
                      bench_prec_name(prec), waited_ms / 1000.0);
}

json_object *bench_sweep(struct bench_dev *d, enum bench_impl impl, enum bench_prec prec, double budget_ms)
{
    json_object *sw = json_object_new_object();
    json_object_object_add(sw, "implementation", json_object_new_string(bench_impl_name(impl)));
    json_object_object_add(sw, "precision", json_object_new_string(bench_prec_name(prec)));
    json_object_object_add(sw, "budget_ms", jsonnum_ms(budget_ms));
    double t0 = jsonnum_now_ms();
    /* CLBlast's first call builds its kernels, a one-time cost (the driver caches them): it may take all that is
     * left of the device's budget (CLBlast's sweeps come last), and at least BENCH_FIRST_CALL_MS, as the first
     * size of every sweep is measured whatever its share (cached, the call takes PoCL about 70 ms, over 0.5 s
     * in a sanitizer build); the sweep measures in what is left of its own share after it */
    double until = d->t0 + d->args->budget_ms;
    struct bench_run r = {.d = d, .impl = impl, .prec = prec,
                          .build_until_ms = impl != BENCH_IMPL_CLBLAST       ? 0
                                            : until > t0 + BENCH_FIRST_CALL_MS ? until
                                                                               : t0 + BENCH_FIRST_CALL_MS};
    json_object *points = json_object_new_array();
    const char *stopped = "max-size";
    bool built = impl != BENCH_IMPL_OURS || bench_build(&r, sw);
    static const unsigned sizes[] = BENCH_SIZES;
    double last_ms = NAN;
    unsigned last_n = 0;
    for (size_t i = 0; built && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned n = sizes[i];
        double spent = jsonnum_now_ms() - t0;
        if (last_n) {
            /* the next size's runs, by N^3 from the last one's median, plus a warm-up when it is short */
            double next = last_ms * pow((double)n / last_n, 3.0);
            double est = next * (BENCH_MIN_RUNS + (next < 50.0 ? 1 : 0));
            if (spent + est > budget_ms) {
                stopped = "budget";
                break;
            }
        }
        if (!bench_fits(&r, n)) {
            stopped = "memory";
            break;
        }
        double run_ms = NAN, warm_ms = 0;
        json_object *pt = bench_point(&r, n, i == 0 || (last_n && last_ms * pow((double)n / last_n, 3.0) < 50.0),
                                      &run_ms, &warm_ms);
        if (i == 0) /* the first call compiles (CLBlast builds its kernels then): part of the budget */
            json_object_object_add(sw, "first_call_ms", r.abandoned ? NULL : jsonnum_ms(warm_ms));
        if (!pt) {
            stopped = r.abandoned ? "build-time" : "error";
            break;
        }
        json_object_array_add(points, pt);
        last_ms = run_ms;
        last_n = n;
    }
    bool wrong = false;
    for (size_t i = 0; i < json_object_array_length(points); i++) {
        json_object *st = NULL;
        json_object_object_get_ex(json_object_array_get_idx(points, i), "status", &st);
        wrong |= st && strcmp(json_object_get_string(st), "wrong") == 0;
    }
    if (r.abandoned) {
        d->clblast_busy = true; /* its thread still runs CLBlast: no other call may start */
        r.detail = bench_not_built_detail(prec, jsonnum_now_ms() - t0);
    }
    const char *status = r.abandoned ? "not-built"
                         : r.unsupported ? "unsupported"
                         : !built  ? "failed"
                         : r.error ? (json_object_array_length(points) ? "partial" : "failed")
                         : wrong   ? "wrong"
                                   : "ok";
    json_object_object_add(sw, "status", json_object_new_string(status));
    json_object_object_add(sw, "stopped", built ? json_object_new_string(stopped) : NULL);
    json_object_object_add(sw, "error", r.error);
    json_object_object_add(sw, "detail", r.detail ? json_object_new_string(str_sanitize(r.detail)) : NULL);
    json_object_object_add(sw, "elapsed_ms", jsonnum_ms(jsonnum_now_ms() - t0));
    json_object_object_add(sw, "points", points);
    free(r.detail);
    if (r.kernel)
        d->api.clReleaseKernel(r.kernel);
    return sw;
}

/* Findings about one sweep SW of device DEV (or of the CPU BLAS when DEV is NULL). */
void bench_sweep_findings(struct probe_ctx *ctx, const char *subject, const char *who, json_object *sw)
{
    const char *impl = jsonget_str(sw, "implementation"), *prec = jsonget_str(sw, "precision");
    const char *status = jsonget_str(sw, "status");
    json_object *pts = jsonget(sw, "points");
    char sizes[200] = "";
    const char *first = NULL;
    size_t used = 0;
    for (size_t i = 0; json_object_is_type(pts, json_type_array) && i < json_object_array_length(pts); i++) {
        json_object *p = json_object_array_get_idx(pts, i);
        if (strcmp(jsonget_str(p, "status"), "wrong") != 0 || used >= sizeof(sizes) - 16)
            continue;
        used += (size_t)snprintf(sizes + used, sizeof(sizes) - used, "%s%d", used ? ", " : "",
                                 json_object_get_int(jsonget(p, "n")));
        if (!first)
            first = jsonget_str(p, "detail");
    }
    struct report_finding *f;
    if (used) {
        f = report_add_finding(ctx->report, "bench.wrong-result", subject, "%s computed wrong %s GEMM results with %s at N = %s",
                               who, prec ? prec : "?", impl ? impl : "the CPU BLAS", sizes);
        if (f && first)
            report_finding_add_evidence(f, "first wrong size", "%s", first);
    }
    if (status && (strcmp(status, "failed") == 0 || strcmp(status, "partial") == 0)) {
        const char *detail = jsonget_str(sw, "detail");
        f = report_add_finding(ctx->report, "bench.run-failed", subject, "%s: %s %s failed: %s", who,
                               impl ? impl : "?", prec ? prec : "?", detail ? detail : "no detail");
        const char *log = jsonget_str(sw, "build_log");
        if (f && log)
            report_finding_add_evidence(f, "build log", "%.300s", log);
    }
}

void bench_stage(char *shared, const char *fmt, ...)
{
    if (!shared)
        return;
    char buf[BENCH_STAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    memcpy(shared, buf, sizeof(buf));
    __sync_synchronize();
}

json_object *bench_error_json(const char *call, cl_int code)
{
    json_object *e = json_object_new_object();
    bool cl = strncmp(call, "cl", 2) == 0;
    json_object_object_add(e, "call", json_object_new_string(call));
    json_object_object_add(e, "code", cl || code ? json_object_new_int(code) : NULL);
    json_object_object_add(e, "name", cl ? json_object_new_string(clapi_error_name(code)) : NULL);
    return e;
}
