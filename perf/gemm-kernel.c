/* gemm-kernel.c: time gpucheckup's own GEMM kernel against CLBlast on every OpenCL device (issue 15's goal). */
/*
 * Built by meson as build/perf/gemm-kernel (never installed; links libOpenCL and, when found, libclblast).
 * For each device and precision, for each N: fills A and B with small integers (so every product and sum is
 * exact), runs our kernel (bench_kernel_pick/geometry, padded as it asks) and CLBlast's xGEMM, checks both
 * against a CPU reference element by element, and times each REPS times after a warm-up with profiling
 * events (median; the host clock too, since a CLBlast call may enqueue several kernels while its event
 * covers the last one). Prints one line per (device, precision, N) and the ratio ours/CLBlast.
 *
 *   build/perf/gemm-kernel [--sizes 256,512,1024] [--reps 5] [--prec fp32,fp64,fp16] [--device SUBSTR]
 *                           [--gpu-variant]   (pretend the device is no CPU: times the tiled kernel)
 * Exit status: 0, 1 when a result was wrong, 2 on a setup error.
 *
 * Columns: our GFLOPS from the events' median, from the host clock's median, from the best event, and per
 * second of process CPU time (PoCL's threads are ours: the figure other load moves least, for tuning on a
 * shared machine); CLBlast's from the host clock (median, best); "ratio" = CLBlast's median host time over
 * ours (> 1: ours is faster) and the same for the best times. Run it when `uptime` shows little load.
 * Tuning knobs (environment, CPU kernels): GEMM_OPTIONS replaces the build options, GEMM_NAME the kernel,
 * GEMM_BLOCK=RM,RN the block of C per work item, GEMM_LOCAL=LX,LY the work-group.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef GEMM_HAVE_CLBLAST
#include <clblast_c.h>
#endif

#include "bench_half.h"
#include "bench_kernel.h"

#define MAX_SIZES 16
#define MAX_REPS 51

struct opts {
    size_t sizes[MAX_SIZES];
    size_t nsizes;
    int reps;
    bool prec[3];
    const char *device;
    bool gpu_variant;
};

struct dev {
    cl_device_id id;
    cl_context ctx;
    cl_command_queue q;
    struct bench_kernel_hints hints;
    char name[256], vendor[256];
    bool fp64, fp16;
};

/* A timing: median of the event durations and of the host-clock durations, in seconds. */
struct timing {
    double ev, wall, best;
    double cpu; /* process CPU seconds per run (PoCL's threads are ours): a figure other load barely moves */ /* best: the shortest event duration (least disturbed by other load) */
    bool ok;
};

static const char *const prec_names[3] = {"fp32", "fp64", "fp16"};
static const size_t prec_bytes[3] = {4, 8, 2};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS || t1 < t0)
        return -1;
    return (double)(t1 - t0) * 1e-9;
}

/* The inputs: N x N integers in [-2, 2] ([-1, 1] for fp16, whose 11-bit significand must hold every sum),
 * zero-padded to NP x NP; REF = A x B on the unpadded N x N (exact in double). */
static void fill(enum bench_prec p, size_t n, size_t np, void *a, void *b, double *ref, unsigned seed)
{
    const int span = p == BENCH_FP16 ? 3 : 5;
    double *da = malloc(n * n * sizeof *da), *db = malloc(n * n * sizeof *db);
    if (!da || !db) {
        free(da);
        free(db);
        return;
    }
    memset(a, 0, np * np * prec_bytes[p]);
    memset(b, 0, np * np * prec_bytes[p]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            seed = seed * 1103515245u + 12345u;
            da[i * n + j] = (double)((int)((seed >> 16) % (unsigned)span) - span / 2);
            seed = seed * 1103515245u + 12345u;
            db[i * n + j] = (double)((int)((seed >> 16) % (unsigned)span) - span / 2);
            bench_elem_put(a, p, i * np + j, da[i * n + j]);
            bench_elem_put(b, p, i * np + j, db[i * n + j]);
        }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            ref[i * n + j] = 0;
        for (size_t k = 0; k < n; k++) {
            const double x = da[i * n + k];
            for (size_t j = 0; j < n; j++)
                ref[i * n + j] += x * db[k * n + j];
        }
    }
    free(da);
    free(db);
}

/* Count the elements of the N x N corner of C (leading dimension LD) that differ from REF. */
static size_t wrong(const void *c, enum bench_prec p, size_t n, size_t ld, const double *ref)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            bad += bench_elem_get(c, p, i * ld + j) != ref[i * n + j];
    return bad;
}

/* One device: a context and a profiling queue, and the hints our kernel picks its variant by. */
static int dev_open(struct dev *d, cl_device_id id, bool gpu_variant)
{
    memset(d, 0, sizeof *d);
    d->id = id;
    cl_device_type type = 0;
    size_t wg = 0;
    cl_ulong lmem = 0;
    cl_uint cu = 0;
    char ext[8192] = "";
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
    clGetDeviceInfo(id, CL_DEVICE_VENDOR, sizeof d->vendor - 1, d->vendor, NULL);
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    d->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
    d->fp16 = strstr(ext, "cl_khr_fp16") != NULL;
    d->hints = (struct bench_kernel_hints){.is_cpu = (type & CL_DEVICE_TYPE_CPU) && !gpu_variant,
                                           .max_wg_size = wg,
                                           .local_mem = lmem,
                                           .compute_units = cu,
                                           .vendor = d->vendor};
    cl_int err;
    d->ctx = clCreateContext(NULL, 1, &id, NULL, NULL, &err);
    if (!d->ctx)
        return -1;
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    d->q = clCreateCommandQueueWithProperties(d->ctx, id, props, &err);
    return d->q ? 0 : -1;
}

static void dev_close(struct dev *d)
{
    if (d->q)
        clReleaseCommandQueue(d->q);
    if (d->ctx)
        clReleaseContext(d->ctx);
}

/* Build our kernel for P; NULL (with the build log on stderr) on failure. */
static cl_kernel build(struct dev *d, const struct bench_kernel *k, cl_program *prog)
{
    cl_int err;
    const char *src = k->source;
    *prog = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &err);
    if (!*prog)
        return NULL;
    err = clBuildProgram(*prog, 1, &d->id, k->options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[16384] = "";
        clGetProgramBuildInfo(*prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "gemm-kernel: %s: build of %s failed (%d):\n%s\n", d->name, k->name, err, log);
        return NULL;
    }
    char log[16384] = "";
    clGetProgramBuildInfo(*prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    if (strstr(log, "warning"))
        fprintf(stderr, "gemm-kernel: %s: %s built with warnings:\n%s\n", d->name, k->name, log);
    return clCreateKernel(*prog, k->name, &err);
}

/* Tuning experiments (CPU kernel only): GEMM_BLOCK=RM,RN and GEMM_LOCAL=LX,LY replace the geometry;
 * pair them with GEMM_OPTIONS="-DGC_CPU -DGC_RM=.. -DGC_NV=.." (NV = RN / 8 for fp32). */
static void experiment_geometry(size_t np, size_t global[2], size_t local[2])
{
    const char *blk = getenv("GEMM_BLOCK"), *loc = getenv("GEMM_LOCAL");
    unsigned bm, bn, lx, ly;
    if (blk && sscanf(blk, "%u,%u", &bm, &bn) == 2 && bm && bn) {
        global[0] = np / bn;
        global[1] = np / bm;
    }
    if (loc && sscanf(loc, "%u,%u", &lx, &ly) == 2) {
        local[0] = lx;
        local[1] = ly;
    }
}

/* Run ours REPS times after one warm-up; T gets the medians. */
static void time_ours(struct dev *d, cl_kernel kern, const struct bench_kernel *k, size_t np, cl_mem bufs[3],
                      int reps, struct timing *t)
{
    size_t global[2], local[2];
    bench_kernel_geometry(k, &d->hints, np, global, local);
    experiment_geometry(np, global, local);
    const cl_int n = (cl_int)np;
    clSetKernelArg(kern, 0, sizeof n, &n);
    for (int i = 0; i < 3; i++)
        clSetKernelArg(kern, (cl_uint)i + 1, sizeof(cl_mem), &bufs[i]);
    double ev[MAX_REPS], wall[MAX_REPS];
    t->ok = false;
    double c0 = 0;
    for (int r = -1; r < reps; r++) {
        if (r == 0)
            c0 = cpu_s();
        cl_event e = NULL;
        const double t0 = now_s();
        cl_int err = clEnqueueNDRangeKernel(d->q, kern, 2, NULL, global, local[0] ? local : NULL, 0, NULL, &e);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "gemm-kernel: %s: enqueue %s: %d\n", d->name, k->name, err);
            return;
        }
        clWaitForEvents(1, &e);
        const double t1 = now_s();
        if (r >= 0) {
            ev[r] = event_seconds(e);
            wall[r] = t1 - t0;
        }
        clReleaseEvent(e);
    }
    t->cpu = (cpu_s() - c0) / reps;
    t->ev = median(ev, reps);
    t->best = ev[0]; /* sorted by median() */
    t->wall = median(wall, reps);
    t->ok = true;
}

#ifdef GEMM_HAVE_CLBLAST
static int clblast_call(struct dev *d, enum bench_prec p, size_t n, cl_mem bufs[3], cl_event *e)
{
    const CLBlastLayout L = CLBlastLayoutRowMajor;
    const CLBlastTranspose N = CLBlastTransposeNo;
    if (p == BENCH_FP32)
        return CLBlastSgemm(L, N, N, n, n, n, 1.0f, bufs[0], 0, n, bufs[1], 0, n, 0.0f, bufs[2], 0, n, &d->q, e);
    if (p == BENCH_FP64)
        return CLBlastDgemm(L, N, N, n, n, n, 1.0, bufs[0], 0, n, bufs[1], 0, n, 0.0, bufs[2], 0, n, &d->q, e);
    return CLBlastHgemm(L, N, N, n, n, n, bench_half_from_float(1.0f), bufs[0], 0, n, bufs[1], 0, n,
                        bench_half_from_float(0.0f), bufs[2], 0, n, &d->q, e);
}

/* CLBlast's xGEMM on the unpadded N x N (it pads internally when it needs to). */
static void time_clblast(struct dev *d, enum bench_prec p, size_t n, cl_mem bufs[3], int reps, struct timing *t)
{
    double ev[MAX_REPS], wall[MAX_REPS];
    t->ok = false;
    for (int r = -1; r < reps; r++) {
        cl_event e = NULL;
        const double t0 = now_s();
        const int st = clblast_call(d, p, n, bufs, &e);
        if (st != CLBlastSuccess) {
            fprintf(stderr, "gemm-kernel: %s: CLBlast %s: status %d\n", d->name, prec_names[p], st);
            return;
        }
        clWaitForEvents(1, &e);
        clFinish(d->q);
        const double t1 = now_s();
        if (r >= 0) {
            ev[r] = event_seconds(e);
            wall[r] = t1 - t0;
        }
        clReleaseEvent(e);
    }
    t->ev = median(ev, reps);
    t->wall = median(wall, reps);
    t->best = wall[0]; /* host clock: the event covers only CLBlast's last kernel */
    t->ok = true;
}
#endif

/* Buffers A, B (read-only) and C of NP x NP elements of P, A and B written from host memory. */
static int make_buffers(struct dev *d, enum bench_prec p, size_t np, const void *a, const void *b, cl_mem bufs[3])
{
    const size_t bytes = np * np * prec_bytes[p];
    cl_int err;
    bufs[0] = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)a, &err);
    bufs[1] = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)b, &err);
    bufs[2] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    return bufs[0] && bufs[1] && bufs[2] ? 0 : -1;
}

static void free_buffers(cl_mem bufs[3])
{
    for (int i = 0; i < 3; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
}

/* Time and check one implementation (OURS or CLBlast) at N (padded NP); returns the wrong-element count,
 * or -1 when it could not run. */
static long run_one(struct dev *d, enum bench_prec p, size_t n, size_t np, bool ours, cl_kernel kern,
                    const struct bench_kernel *k, int reps, struct timing *t)
{
    const size_t ld = ours ? np : n;
    void *a = calloc(ld * ld, prec_bytes[p]), *b = calloc(ld * ld, prec_bytes[p]);
    void *c = calloc(ld * ld, prec_bytes[p]);
    double *ref = malloc(n * n * sizeof *ref);
    cl_mem bufs[3] = {0};
    long bad = -1;
    t->ok = false;
    if (!a || !b || !c || !ref)
        goto out;
    fill(p, n, ld, a, b, ref, (unsigned)n * 7919u + (unsigned)p);
    if (make_buffers(d, p, ld, a, b, bufs) != 0)
        goto out;
    if (ours)
        time_ours(d, kern, k, np, bufs, reps, t);
#ifdef GEMM_HAVE_CLBLAST
    else
        time_clblast(d, p, n, bufs, reps, t);
#endif
    if (!t->ok)
        goto out;
    if (clEnqueueReadBuffer(d->q, bufs[2], CL_TRUE, 0, ld * ld * prec_bytes[p], c, 0, NULL, NULL) != CL_SUCCESS)
        goto out;
    bad = (long)wrong(c, p, n, ld, ref);
out:
    free_buffers(bufs);
    free(a);
    free(b);
    free(c);
    free(ref);
    return bad;
}

static double gflops(size_t n, double s)
{
    return s > 0 ? 2.0 * (double)n * (double)n * (double)n / s * 1e-9 : 0;
}

/* One device, one precision: every size, ours then CLBlast. Returns the number of wrong results. */
static int bench_prec_on(struct dev *d, enum bench_prec p, const struct opts *o)
{
    struct bench_kernel k;
    const bool picked = bench_kernel_pick(p, &d->hints, &k) == 0;
    if (picked && getenv("GEMM_OPTIONS"))
        k.options = getenv("GEMM_OPTIONS");
    if (picked && getenv("GEMM_NAME"))
        k.name = getenv("GEMM_NAME");
    if (!picked) {
        printf("%-28.28s %s  no kernel\n", d->name, prec_names[p]);
        return 0;
    }
    cl_program prog = NULL;
    cl_kernel kern = build(d, &k, &prog);
    int failures = 0;
    for (size_t i = 0; kern && i < o->nsizes; i++) {
        const size_t n = o->sizes[i], np = (n + k.pad - 1) / k.pad * k.pad;
        struct timing ours = {0}, blas = {0};
        long bad = run_one(d, p, n, np, true, kern, &k, o->reps, &ours);
        long bbad = -1;
#ifdef GEMM_HAVE_CLBLAST
        if (p != BENCH_FP16 || d->fp16)
            bbad = run_one(d, p, n, n, false, NULL, &k, o->reps, &blas);
#endif
        failures += bad != 0 || bbad > 0;
        printf("%-28.28s %s N=%-5zu %-18s %7.2f GFLOPS (host %7.2f, best %7.2f, per cpu-s %6.2f)%s", d->name,
               prec_names[p], n, k.name, gflops(n, ours.ev), gflops(n, ours.wall), gflops(n, ours.best),
               gflops(n, ours.cpu), bad == 0 ? "" : bad < 0 ? " FAILED" : " WRONG");
        if (blas.ok)
            printf(" | CLBlast host %7.2f (best %7.2f)%s | ratio %.2f (best %.2f)", gflops(n, blas.wall),
                   gflops(n, blas.best), bbad == 0 ? "" : " WRONG", blas.wall / ours.wall, blas.best / ours.best);
        printf("\n");
        fflush(stdout);
    }
    if (kern)
        clReleaseKernel(kern);
    else
        failures++;
    if (prog)
        clReleaseProgram(prog);
    return failures;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.sizes = {256, 512, 1024}, .nsizes = 3, .reps = 5, .prec = {true, true, true}};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--gpu-variant") == 0) {
            o->gpu_variant = true;
        } else if (strcmp(argv[i], "--sizes") == 0 && v) {
            o->nsizes = 0;
            for (char *s = argv[++i]; *s && o->nsizes < MAX_SIZES;) {
                char *end;
                unsigned long x = strtoul(s, &end, 10);
                if (end == s || x == 0 || x > 16384)
                    return -1;
                o->sizes[o->nsizes++] = x;
                s = *end == ',' ? end + 1 : end;
            }
        } else if (strcmp(argv[i], "--reps") == 0 && v) {
            o->reps = atoi(argv[++i]);
            if (o->reps < 1 || o->reps > MAX_REPS)
                return -1;
        } else if (strcmp(argv[i], "--prec") == 0 && v) {
            i++;
            for (int p = 0; p < 3; p++)
                o->prec[p] = strstr(v, prec_names[p]) != NULL;
        } else if (strcmp(argv[i], "--device") == 0 && v) {
            o->device = argv[++i];
        } else {
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse_opts(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: gemm-kernel [--sizes N,N...] [--reps 1-%d] [--prec fp32,fp64,fp16] "
                        "[--device SUBSTR] [--gpu-variant]\n", MAX_REPS);
        return 2;
    }
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "gemm-kernel: no OpenCL platform\n");
        return 2;
    }
#ifndef GEMM_HAVE_CLBLAST
    printf("(built without CLBlast: our kernel only)\n");
#endif
    int failures = 0, devices = 0;
    for (cl_uint pi = 0; pi < np && pi < 16; pi++) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, 16, ids, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint di = 0; di < nd && di < 16; di++) {
            struct dev d;
            if (dev_open(&d, ids[di], o.gpu_variant) != 0 || (o.device && !strstr(d.name, o.device))) {
                dev_close(&d);
                continue;
            }
            devices++;
            for (int p = 0; p < 3; p++)
                if (o.prec[p] && (p != BENCH_FP64 || d.fp64))
                    failures += bench_prec_on(&d, (enum bench_prec)p, &o);
            dev_close(&d);
        }
    }
    if (!devices)
        fprintf(stderr, "gemm-kernel: no device matched\n");
    return failures ? 1 : devices ? 0 : 2;
}
