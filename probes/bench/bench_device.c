/* bench_device.c: `bench`'s isolated device child: properties, bandwidth, launch latency and the GEMM sweeps. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_verify.h"
#include "clquery.h"
#include "jsonnum.h"
#include "strutil.h"

/* A string device property (heap, sanitised), or NULL. */
static char *bench_dev_str(const struct bench_dev *d, cl_device_info what)
{
    return str_sanitize(clquery_device_str(&d->api, d->dev, what, NULL));
}

static unsigned long long bench_dev_num(const struct bench_dev *d, cl_device_info what, size_t size)
{
    return clquery_device_uint_or0(&d->api, d->dev, what, size);
}

/* Find device P:D. Returns true, or false with *ERR set. */
static bool bench_find_device(struct bench_dev *d, json_object **err)
{
    cl_platform_id *plats = NULL;
    cl_device_id *devs = NULL;
    cl_uint np = 0, nd = 0;
    cl_int e = clquery_platform_ids(&d->api, &plats, &np);
    if (e != CL_SUCCESS || (cl_uint)d->args->platform >= np) {
        free(plats);
        *err = bench_error_json("clGetPlatformIDs", e == CL_SUCCESS ? CL_INVALID_PLATFORM : e);
        return false;
    }
    cl_platform_id p = plats[d->args->platform];
    free(plats);
    e = clquery_device_ids(&d->api, p, CL_DEVICE_TYPE_ALL, &devs, &nd);
    if (e != CL_SUCCESS || (cl_uint)d->args->device >= nd) {
        free(devs);
        *err = bench_error_json("clGetDeviceIDs", e == CL_SUCCESS ? CL_DEVICE_NOT_FOUND : e);
        return false;
    }
    d->dev = devs[d->args->device];
    free(devs);
    return true;
}

/* Query what the kernel choice, the peak and the memory limits need; add the facts to OUT. */
static void bench_props(struct bench_dev *d, json_object *out)
{
    cl_device_type type = bench_dev_num(d, CL_DEVICE_TYPE, sizeof(cl_device_type));
    char *name = bench_dev_str(d, CL_DEVICE_NAME), *ver = bench_dev_str(d, CL_DRIVER_VERSION);
    char *exts = bench_dev_str(d, CL_DEVICE_EXTENSIONS);
    d->vendor = bench_dev_str(d, CL_DEVICE_VENDOR);
    d->hints = (struct bench_kernel_hints){
        .is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0,
        .max_wg_size = (size_t)bench_dev_num(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t)),
        .local_mem = bench_dev_num(d, CL_DEVICE_LOCAL_MEM_SIZE, 8),
        .compute_units = (unsigned)bench_dev_num(d, CL_DEVICE_MAX_COMPUTE_UNITS, 4),
        .vendor = d->vendor,
    };
    d->peak.cpu = d->hints.is_cpu;
    d->peak.compute_units = d->hints.compute_units;
    d->peak.clock_mhz = (unsigned)bench_dev_num(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, 4);
    unsigned nat = (unsigned)bench_dev_num(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, 4);
    unsigned pref = (unsigned)bench_dev_num(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, 4);
    d->peak.float_width = nat > pref ? nat : pref;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    d->peak.host_cpus = cpus > 0 && cpus < 1000000 ? (unsigned)cpus : 0;
    d->global_mem = bench_dev_num(d, CL_DEVICE_GLOBAL_MEM_SIZE, 8);
    d->max_alloc = bench_dev_num(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8);
    d->supported[BENCH_FP32] = true;
    d->supported[BENCH_FP64] = bench_dev_num(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(cl_device_fp_config)) != 0;
    d->supported[BENCH_FP16] = clquery_has_ext(exts, "cl_khr_fp16");
    json_object_object_add(out, "name", name ? json_object_new_string(name) : NULL);
    json_object_object_add(out, "vendor", d->vendor ? json_object_new_string(d->vendor) : NULL);
    json_object_object_add(out, "type", clquery_type_json(type));
    json_object_object_add(out, "driver_version", ver ? json_object_new_string(ver) : NULL);
    json_object *pr = json_object_new_object();
    json_object_object_add(pr, "compute_units", json_object_new_int64(d->hints.compute_units));
    json_object_object_add(pr, "clock_mhz", json_object_new_int64(d->peak.clock_mhz));
    json_object_object_add(pr, "float_vector_width", json_object_new_int64(d->peak.float_width));
    json_object_object_add(pr, "host_cpus", json_object_new_int64(d->peak.host_cpus));
    json_object_object_add(pr, "global_mem_bytes", json_object_new_int64((int64_t)d->global_mem));
    json_object_object_add(pr, "max_alloc_bytes", json_object_new_int64((int64_t)d->max_alloc));
    json_object_object_add(out, "properties", pr);
    free(name);
    free(ver);
    free(exts);
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One direction of one kind of transfer, BENCH_BW_RUNS times: the median rate in GB/s (NAN on failure). */
static double bench_transfer(struct bench_dev *d, cl_mem dev, void *host, size_t bytes, bool write)
{
    double ms[BENCH_BW_RUNS];
    for (unsigned i = 0; i < BENCH_BW_RUNS; i++) {
        double t0 = jsonnum_now_ms();
        cl_int e = write ? d->api.clEnqueueWriteBuffer(d->q, dev, CL_TRUE, 0, bytes, host, 0, NULL, NULL)
                         : d->api.clEnqueueReadBuffer(d->q, dev, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
        ms[i] = jsonnum_now_ms() - t0;
        if (e != CL_SUCCESS)
            return NAN;
    }
    qsort(ms, BENCH_BW_RUNS, sizeof(double), bench_cmp);
    return ms[BENCH_BW_RUNS / 2] > 0 ? (double)bytes / (ms[BENCH_BW_RUNS / 2] * 1e6) : NAN;
}

/* Host<->device bandwidth: pageable (malloc) and pinned (a CL_MEM_ALLOC_HOST_PTR buffer, mapped: the
 * pinned-memory method of NVIDIA's OpenCL bandwidthTest sample), blocking transfers timed on the host. */
static json_object *bench_bandwidth(struct bench_dev *d)
{
    size_t bytes = BENCH_BW_BYTES;
    while (bytes > (1u << 20) && ((d->max_alloc && bytes > d->max_alloc / 2) || (d->global_mem && bytes > d->global_mem / 8)))
        bytes /= 2;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "bytes", json_object_new_int64((int64_t)bytes));
    json_object_object_add(o, "clock", json_object_new_string("host"));
    cl_int e = CL_SUCCESS;
    cl_mem dev = d->api.clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    void *host = malloc(bytes);
    double pw = NAN, pr = NAN, mw = NAN, mr = NAN;
    if (dev && host) {
        memset(host, 0x5A, bytes);
        pw = bench_transfer(d, dev, host, bytes, true);
        pr = bench_transfer(d, dev, host, bytes, false);
        cl_mem pin = d->api.clEnqueueMapBuffer ? d->api.clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &e) : NULL;
        void *p = pin ? d->api.clEnqueueMapBuffer(d->q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e)
                      : NULL;
        if (p) {
            memset(p, 0xA5, bytes);
            mw = bench_transfer(d, dev, p, bytes, true);
            mr = bench_transfer(d, dev, p, bytes, false);
            d->api.clEnqueueUnmapMemObject(d->q, pin, p, 0, NULL, NULL);
            d->api.clFinish(d->q);
        }
        if (pin)
            d->api.clReleaseMemObject(pin);
    }
    free(host);
    if (dev)
        d->api.clReleaseMemObject(dev);
    json_object_object_add(o, "pageable_write_gbs", jsonnum_sig(pw, 4));
    json_object_object_add(o, "pageable_read_gbs", jsonnum_sig(pr, 4));
    json_object_object_add(o, "pinned_write_gbs", jsonnum_sig(mw, 4));
    json_object_object_add(o, "pinned_read_gbs", jsonnum_sig(mr, 4));
    return o;
}

/* Kernel launch latency: an empty kernel of one work item, enqueued and waited for BENCH_LAUNCHES times,
 * timed on the host (median, min, max in microseconds). */
static json_object *bench_latency(struct bench_dev *d)
{
    static const char *src = "__kernel void bench_empty(void) { }\n";
    cl_int e = CL_SUCCESS;
    cl_program prog = d->api.clCreateProgramWithSource(d->ctx, 1, &src, NULL, &e);
    cl_kernel k = NULL;
    if (prog && d->api.clBuildProgram(prog, 1, &d->dev, "", NULL, NULL) == CL_SUCCESS)
        k = d->api.clCreateKernel(prog, "bench_empty", &e);
    double us[BENCH_LAUNCHES];
    unsigned n = 0;
    size_t one = 1;
    for (unsigned i = 0; k && i < BENCH_LAUNCHES + 5; i++) {
        double t0 = jsonnum_now_ms();
        if (d->api.clEnqueueNDRangeKernel(d->q, k, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS ||
            d->api.clFinish(d->q) != CL_SUCCESS)
            break;
        if (i >= 5) /* the first launches warm the driver up */
            us[n++] = (jsonnum_now_ms() - t0) * 1000.0;
    }
    if (k)
        d->api.clReleaseKernel(k);
    if (prog)
        d->api.clReleaseProgram(prog);
    if (n == 0)
        return NULL;
    qsort(us, n, sizeof(double), bench_cmp);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "launches", json_object_new_int((int)n));
    json_object_object_add(o, "clock", json_object_new_string("host"));
    json_object_object_add(o, "median_us", jsonnum_sig(us[n / 2], 4));
    json_object_object_add(o, "min_us", jsonnum_sig(us[0], 4));
    json_object_object_add(o, "max_us", jsonnum_sig(us[n - 1], 4));
    return o;
}

/* Set up the context and queue. Returns true, or false with *ERR. */
static bool bench_open_queue(struct bench_dev *d, json_object **err)
{
    cl_int e = CL_SUCCESS;
    d->ctx = d->api.clCreateContext(NULL, 1, &d->dev, NULL, NULL, &e);
    if (!d->ctx || e != CL_SUCCESS) {
        *err = bench_error_json("clCreateContext", e != CL_SUCCESS ? e : CL_INVALID_CONTEXT);
        return false;
    }
    if (d->api.clCreateCommandQueueWithProperties) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        d->q = d->api.clCreateCommandQueueWithProperties(d->ctx, d->dev, props, &e);
    }
    if (!d->q && d->api.clCreateCommandQueue)
        d->q = d->api.clCreateCommandQueue(d->ctx, d->dev, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!d->q) {
        *err = bench_error_json("clCreateCommandQueue", e != CL_SUCCESS ? e : CL_INVALID_COMMAND_QUEUE);
        return false;
    }
    return true;
}

/* A CLBlast sweep not run: an earlier one's first call is still building CLBlast's kernels. */
static json_object *bench_sweep_blocked(enum bench_prec p, double budget_ms)
{
    json_object *sw = json_object_new_object();
    json_object_object_add(sw, "implementation", json_object_new_string(bench_impl_name(BENCH_IMPL_CLBLAST)));
    json_object_object_add(sw, "precision", json_object_new_string(bench_prec_name(p)));
    json_object_object_add(sw, "budget_ms", jsonnum_ms(budget_ms));
    json_object_object_add(sw, "status", json_object_new_string("not-built"));
    json_object_object_add(sw, "stopped", json_object_new_string("build-time"));
    json_object_object_add(sw, "error", NULL);
    json_object_object_add(sw, "detail", json_object_new_string("not measured: CLBlast was still building the kernels "
                                                                "of an earlier precision within this run's budget"));
    json_object_object_add(sw, "elapsed_ms", jsonnum_ms(0));
    json_object_object_add(sw, "points", json_object_new_array());
    return sw;
}

/* The sweeps: every precision asked for and supported, ours first, then CLBlast's (whose first calls build
 * its kernels: a build left running must not slow our sweeps down), the time left (BUDGET_MS from now,
 * kernel builds included) shared by weight as each starts (fp32 counts twice: it is the figure people
 * compare). */
static json_object *bench_sweeps(struct bench_dev *d, json_object *precs, double budget_ms)
{
    json_object *sweeps = json_object_new_array();
    double weight = 0, until = jsonnum_now_ms() + budget_ms;
    int nimpl = d->have_clblast ? 2 : 1;
    for (int p = 0; p < 3; p++) {
        bool asked = d->args->precs & (1u << p);
        json_object_object_add(precs, bench_prec_name((enum bench_prec)p),
                               json_object_new_string(!asked ? "not-requested" : d->supported[p] ? "supported" : "unsupported"));
        if (asked && d->supported[p])
            weight += (p == BENCH_FP32 ? 2.0 : 1.0) * (p == BENCH_FP16 && !d->clblast.hgemm ? 1 : nimpl);
    }
    for (int i = 0; i < nimpl; i++) {
        for (int p = 0; p < 3; p++) {
            if (!(d->args->precs & (1u << p)) || !d->supported[p])
                continue;
            if (i == BENCH_IMPL_CLBLAST && p == BENCH_FP16 && !d->clblast.hgemm)
                continue;
            double w = p == BENCH_FP32 ? 2.0 : 1.0, left = until - jsonnum_now_ms();
            double share = weight > 0 && left > 0 ? left * w / weight : 0;
            weight -= w;
            json_object_array_add(sweeps, i == BENCH_IMPL_CLBLAST && d->clblast_busy
                                              ? bench_sweep_blocked((enum bench_prec)p, share)
                                              : bench_sweep(d, (enum bench_impl)i, (enum bench_prec)p, share));
        }
    }
    return sweeps;
}

json_object *bench_device_child(void *arg)
{
    struct bench_dev d = {.args = arg, .t0 = jsonnum_now_ms()};
    json_object *out = json_object_new_object(), *err = NULL;
    char msg[512] = "";
    bench_stage(d.args->stage, "loading the OpenCL loader");
    if (clapi_open(&d.api, NULL, msg, sizeof(msg)) < 0) {
        json_object_object_add(out, "status", json_object_new_string("error"));
        json_object_object_add(out, "detail", json_object_new_string(str_sanitize(msg)));
        return out;
    }
    bench_stage(d.args->stage, "finding device %d:%d", d.args->platform, d.args->device);
    bool ok = bench_find_device(&d, &err);
    if (ok)
        bench_props(&d, out);
    bench_stage(d.args->stage, "creating a context");
    ok = ok && bench_open_queue(&d, &err);
    if (ok) {
        json_object *clb = json_object_new_object();
        bench_stage(d.args->stage, "loading CLBlast");
        d.have_clblast = bench_clblast_open(&d.clblast, msg, sizeof(msg)) == 0;
        json_object_object_add(clb, "status", json_object_new_string(d.have_clblast ? "loaded" : "missing"));
        json_object_object_add(clb, "path", d.have_clblast ? json_object_new_string(str_sanitize(d.clblast.path)) : NULL);
        json_object_object_add(clb, "detail", d.have_clblast ? NULL : json_object_new_string(str_sanitize(msg)));
        json_object_object_add(out, "clblast", clb);
        d.have_cblas = bench_cblas_open(&d.cblas, msg, sizeof(msg)) == 0;
        json_object_object_add(out, "reference", json_object_new_string(d.have_cblas ? "cpu-blas" : "sampled"));
    }
    json_object *precs = json_object_new_object();
    if (ok) {
        bench_stage(d.args->stage, "measuring bandwidth");
        json_object_object_add(out, "bandwidth", bench_bandwidth(&d));
        bench_stage(d.args->stage, "measuring launch latency");
        json_object_object_add(out, "launch_latency", bench_latency(&d));
        double left = d.args->budget_ms - (jsonnum_now_ms() - d.t0);
        json_object_object_add(out, "sweeps", bench_sweeps(&d, precs, left > 0 ? left : 0));
    }
    json_object_object_add(out, "precisions", precs);
    json_object_object_add(out, "status", json_object_new_string(ok ? "ok" : "error"));
    json_object_object_add(out, "error", err);
    bench_stage(d.args->stage, "done");
    bench_clblast_close(&d.clblast);
    bench_cblas_close(&d.cblas);
    free(d.vendor);
    return out;
}
