/* bench.c: the bench probe (`gpucheckup bench`): GEMM speed per OpenCL and CUDA device against the CPU BLAS, verified. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_internal.h"
#include "bench_options.h"
#include "bench_report.h"
#include "isolate.h"
#include "jsonnum.h"
#include "probe.h"
#include "cldevices.h"
#include "strutil.h"

static const char *const bench_deps[] = {"cpu", "opencl", NULL};

static const struct check bench_checks[] = {
    {"bench.wrong-result", REPORT_SEV_ERROR,
     "A GEMM in the benchmark computed a wrong result (its speed is not counted)",
     "Do not trust this device (or library) with real work: update or reinstall its driver; the evidence names "
     "the implementation, precision and size; `gpucheckup smoke` checks the device on its own.", CHECK_LAYER_COMPUTE},

    {"bench.device-failed", REPORT_SEV_ERROR,
     "The benchmark could not run on a device: its driver crashed, hung past the time limit, or the device could "
     "not be opened",
     "Check `dmesg` for GPU hangs or resets; run `gpucheckup smoke` on the device, then `gpucheckup bench` again "
     "with a longer --timeout.", CHECK_LAYER_COMPUTE},

    {"bench.run-failed", REPORT_SEV_WARNING,
     "One implementation or precision of the benchmark failed on a device (build, OpenCL call or CLBlast error); "
     "the other results stand",
     "The evidence names the failed call; CL_OUT_OF_RESOURCES or allocation failures mean the device is busy or "
     "short of memory, a build failure a broken driver compiler (`gpucheckup smoke -v`).", CHECK_LAYER_COMPUTE},

    {"bench.slower-than-cpu", REPORT_SEV_INFO,
     "A GPU never beat the CPU BLAS in fp32 at any size the benchmark compared",
     "Small GPUs and integrated ones can lose to a good CPU BLAS; for a discrete GPU check that it is not in a "
     "power-saving state and give the benchmark more time (--bench-time) to reach larger sizes.", CHECK_LAYER_COMPUTE},

    {"bench.clblast-missing", REPORT_SEV_INFO, "CLBlast is not installed: the benchmark compares no tuned OpenCL BLAS",
     "Install the Debian package libclblast1 to see CLBlast's GEMM beside gpucheckup's own kernel.", CHECK_LAYER_RUNTIME},

    {"bench.cublas-missing", REPORT_SEV_INFO,
     "cuBLAS is not installed where the loader finds it: on the CUDA devices the benchmark measured only "
     "gpucheckup's own kernel", "Install the CUDA toolkit's cuBLAS (or the nvidia-cublas wheel) and put its "
     "lib directory on the loader's path (ldconfig or LD_LIBRARY_PATH).", CHECK_LAYER_RUNTIME},

    {"bench.cpu-blas-missing", REPORT_SEV_INFO,
     "No CPU BLAS (OpenBLAS or a CBLAS) was found: the benchmark has no CPU baseline and no crossover",
     "Install the Debian package libopenblas0 (or any libblas3 alternative with CBLAS).", CHECK_LAYER_RUNTIME},

    {"bench.no-devices", REPORT_SEV_WARNING, "There is no OpenCL device to benchmark",
     "`gpucheckup opencl` and `gpucheckup icd` say why no device is there.", CHECK_LAYER_RUNTIME},

    {"bench.transfer-wrong", REPORT_SEV_ERROR,
     "A host-to-device or device-to-device copy of the benchmark read back different from what was sent",
     "Do not trust this GPU or pair with real work: check `dmesg` for Xid and PCIe AER errors, reseat the card or "
     "bridge, and run `gpucheckup check` (the CUDA peer check) again.", CHECK_LAYER_COMPUTE},
};

/* Progress on a terminal (stderr), one line rewritten. */
static void bench_progress(bool on, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bench_progress(bool on, const char *fmt, ...)
{
    if (!on)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

/* The device object for target T from its child's RES. */
static json_object *bench_device_object(const struct cldev_target *t, struct isolate_result *res, const char *stage)
{
    json_object *o = NULL;
    const char *st = res ? jsonget_str(res->value, "status") : NULL;
    if (res && res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object) && st &&
        (strcmp(st, "ok") == 0 || strcmp(st, "error") == 0)) {
        o = json_object_get(res->value);
    } else {
        o = json_object_new_object();
        const char *status = !res                                  ? "skipped"
                             : res->status == ISOLATE_TIMEOUT      ? "timeout"
                             : res->status == ISOLATE_SPAWN_FAILED ? "error"
                                                                   : "crash";
        json_object_object_add(o, "status", json_object_new_string(status));
        char *detail = !res ? str_dup(t->skip_reason ? t->skip_reason : "not selected")
                            : str_printf("%s%s%s", res->detail ? res->detail : "ended abnormally",
                                         stage && *stage ? " while " : "", stage && *stage ? stage : "");
        json_object_object_add(o, "detail", detail ? json_object_new_string(str_sanitize(detail)) : NULL);
        free(detail);
    }
    if (!jsonget(o, "name"))
        json_object_object_add(o, "name", t->name ? json_object_new_string(t->name) : NULL);
    if (!jsonget(o, "type"))
        json_object_object_add(o, "type", t->type ? json_object_get(t->type) : NULL);
    json_object_object_add(o, "platform_index", json_object_new_int(t->platform));
    json_object_object_add(o, "device_index", json_object_new_int(t->device));
    json_object_object_add(o, "pci_address", t->pci_address ? json_object_new_string(t->pci_address) : NULL);
    json_object_object_add(o, "elapsed_ms", res ? jsonnum_ms(res->elapsed_ms) : NULL);
    json_object *err = jsonget(o, "error");
    if (strcmp(jsonget_str(o, "status"), "error") == 0 && !jsonget_str(o, "detail") && err) {
        char *d = str_printf("%s failed: %s", jsonget_str(err, "call") ? jsonget_str(err, "call") : "?",
                             jsonget_str(err, "name") ? jsonget_str(err, "name") : "?");
        json_object_object_add(o, "detail", d ? json_object_new_string(d) : NULL);
        free(d);
    }
    return o;
}

/* The largest N any device sweep measured (0: none). */
static unsigned bench_max_n(json_object *devs)
{
    double m = 0;
    for (size_t i = 0; i < json_object_array_length(devs); i++) {
        json_object *sw = jsonget(json_object_array_get_idx(devs, i), "sweeps");
        for (size_t j = 0; json_object_is_type(sw, json_type_array) && j < json_object_array_length(sw); j++) {
            json_object *pts = jsonget(json_object_array_get_idx(sw, j), "points");
            size_t k = json_object_is_type(pts, json_type_array) ? json_object_array_length(pts) : 0;
            double n = k ? bench_get_num(json_object_array_get_idx(pts, k - 1), "n") : 0;
            if (n > m)
                m = n;
        }
    }
    return (unsigned)m;
}

/* Findings about device DEV (an enriched device object). */
static void bench_device_findings(struct probe_ctx *ctx, const struct cldev_target *t, json_object *dev)
{
    char *subject = cldev_target_subject(t);
    char *who = str_printf("Device %d:%d (%s)", t->platform, t->device, t->name ? t->name : "unnamed device");
    const char *status = jsonget_str(dev, "status");
    if (strcmp(status, "ok") != 0 && strcmp(status, "skipped") != 0) {
        struct report_finding *f = report_add_finding(ctx->report, "bench.device-failed", subject, "%s: the benchmark %s: %s",
                                                      who ? who : "?", strcmp(status, "error") == 0 ? "could not run" : status,
                                                      jsonget_str(dev, "detail") ? jsonget_str(dev, "detail") : "");
        if (f)
            report_finding_add_evidence(f, "time limit", "the device's share of --bench-time, plus --timeout (%.1f s) "
                                        "for its setup and for each sweep's first call", ctx->timeout_ms / 1000.0);
    }
    json_object *sws = jsonget(dev, "sweeps");
    bool compared = false, won = false;
    for (size_t i = 0; json_object_is_type(sws, json_type_array) && i < json_object_array_length(sws); i++) {
        json_object *sw = json_object_array_get_idx(sws, i);
        bench_sweep_findings(ctx, subject, who ? who : "?", sw);
        json_object *x = jsonget(sw, "crossover");
        if (strcmp(jsonget_str(sw, "precision"), "fp32") == 0 && bench_get_num(x, "compared_up_to") >= 512) {
            compared = true;
            won |= isfinite(bench_get_num(x, "n"));
        }
    }
    if (t->is_gpu && compared && !won)
        report_add_finding(ctx->report, "bench.slower-than-cpu", subject,
                           "%s never beat the CPU BLAS in fp32 at the sizes compared", who ? who : "?");
    free(who);
    free(subject);
}

static void bench_summary(struct report_section *sec, json_object *dev)
{
    const char *name = jsonget_str(dev, "name"), *status = jsonget_str(dev, "status");
    int p = json_object_get_int(jsonget(dev, "platform_index")), d = json_object_get_int(jsonget(dev, "device_index"));
    if (strcmp(status, "ok") != 0) {
        report_section_add_line(sec, strcmp(status, "skipped") == 0 ? REPORT_MARK_SKIP : REPORT_MARK_ERROR, "Bench",
                                "%d:%d %s: %s, %s", p, d, name ? name : "?", status,
                                jsonget_str(dev, "detail") ? jsonget_str(dev, "detail") : "");
        return;
    }
    json_object *sws = jsonget(dev, "sweeps");
    if (!json_object_is_type(sws, json_type_array) || json_object_array_length(sws) == 0)
        report_section_add_line(sec, REPORT_MARK_INFO, "Bench", "%d:%d %s: no GEMM sweep: the device has none of the "
                                "precisions asked for (--bench-precision)", p, d, name ? name : "?");
    for (size_t i = 0; json_object_is_type(sws, json_type_array) && i < json_object_array_length(sws); i++) {
        json_object *sw = json_object_array_get_idx(sws, i), *pts = jsonget(sw, "points"), *best = NULL;
        for (size_t k = 0; json_object_is_type(pts, json_type_array) && k < json_object_array_length(pts); k++) {
            json_object *pt = json_object_array_get_idx(pts, k);
            if (isfinite(bench_get_num(pt, "gflops")) && (!best || bench_get_num(pt, "gflops") > bench_get_num(best, "gflops")))
                best = pt;
        }
        const char *st = jsonget_str(sw, "status");
        bool bad = strcmp(st, "ok") != 0;
        char best_text[64];
        if (best)
            snprintf(best_text, sizeof(best_text), "best %.1f GFLOPS at N=%.0f", bench_get_num(best, "gflops"),
                     bench_get_num(best, "n"));
        else
            snprintf(best_text, sizeof(best_text), "no valid result");
        enum report_mark m = strcmp(st, "wrong") == 0         ? REPORT_MARK_ERROR
                             : strcmp(st, "unsupported") == 0 || strcmp(st, "not-built") == 0 ? REPORT_MARK_INFO
                             : bad                            ? REPORT_MARK_WARN
                                                              : REPORT_MARK_OK;
        report_section_add_line(sec, m,
                                "Bench", "%d:%d %s: %s %s: %s%s%s; %s", p, d, name ? name : "?",
                                jsonget_str(sw, "implementation"), jsonget_str(sw, "precision"), bad ? st : "",
                                bad ? ", " : "", best_text, jsonget_str(jsonget(sw, "crossover"), "text"));
    }
}

/* Run one child with its budget plus --timeout for each step that builds kernels (SWEEPS: the setup, and
 * the first call of each sweep, where CLBlast compiles its GEMM: 16 s for fp64 on PoCL 3.1 here, cold). */
static void bench_child(struct probe_ctx *ctx, isolate_fn fn, void *arg, double budget_ms, unsigned sweeps,
                        char *stage, struct isolate_result *res)
{
    memset(stage, 0, BENCH_STAGE_MAX);
    double limit = (double)ctx->timeout_ms * (1 + sweeps) + budget_ms;
    isolate_run(fn, arg, limit > 2e9 ? 2000000000 : (int)limit, res);
    stage[BENCH_STAGE_MAX - 1] = '\0';
    str_sanitize(stage);
}

/* The CPU BLAS child, its object, and its findings. */
static json_object *bench_cpu(struct probe_ctx *ctx, double budget_ms, unsigned max_n, char *stage, bool progress)
{
    struct bench_cpu_args ca = {.budget_ms = budget_ms, .precs = bench_options()->precs & 3u, .max_n = max_n, .stage = stage};
    struct isolate_result res;
    bench_progress(progress, "bench: CPU BLAS (%.1f s) ...", budget_ms / 1000.0);
    bench_child(ctx, bench_cpu_child, &ca, budget_ms, 0, stage, &res);
    json_object *cpu;
    if (res.status == ISOLATE_OK && jsonget_str(res.value, "status")) {
        cpu = json_object_get(res.value);
    } else {
        cpu = json_object_new_object();
        json_object_object_add(cpu, "status", json_object_new_string("failed"));
        char *d = str_printf("%s%s%s", res.detail ? res.detail : "ended abnormally", *stage ? " while " : "", stage);
        json_object_object_add(cpu, "detail", d ? json_object_new_string(str_sanitize(d)) : NULL);
        free(d);
    }
    json_object_object_add(cpu, "elapsed_ms", jsonnum_ms(res.elapsed_ms));
    isolate_result_clear(&res);
    const char *st = jsonget_str(cpu, "status");
    if (strcmp(st, "missing") == 0) {
        struct report_finding *f = report_add_finding(ctx->report, "bench.cpu-blas-missing", "cpu-blas",
                                                      "No CPU BLAS found (Debian package %s): no CPU baseline",
                                                      BENCH_CBLAS_PACKAGE);
        if (f)
            report_finding_add_evidence(f, "tried", "%s", jsonget_str(cpu, "detail"));
    } else if (strcmp(st, "failed") == 0) {
        report_add_finding(ctx->report, "bench.device-failed", "cpu-blas", "The CPU BLAS benchmark failed: %s",
                           jsonget_str(cpu, "detail"));
    }
    json_object *sws = jsonget(cpu, "sweeps");
    for (size_t i = 0; json_object_is_type(sws, json_type_array) && i < json_object_array_length(sws); i++)
        bench_sweep_findings(ctx, "cpu-blas", "The CPU BLAS", json_object_array_get_idx(sws, i));
    return cpu;
}

/* --plot: draw the series into the file. Returns PROBE_DONE or PROBE_INTERNAL_ERROR (ctx->error). */
static int bench_plot(struct probe_ctx *ctx, json_object *devs, json_object *cpu)
{
    struct bench_plot_series *s = NULL;
    size_t n = bench_series(devs, cpu, &s);
    char err[512] = "";
    int rc = bench_plot_write(bench_options()->plot, "gpucheckup bench: GEMM GFLOPS against N", s, n, err, sizeof(err));
    bench_series_free(s, n);
    if (rc == 0)
        return PROBE_DONE;
    ctx->error = str_printf("--plot: %s", err);
    return PROBE_INTERNAL_ERROR;
}

/* Run every selected device's child in turn (one at a time: they would compete for the same cores or GPU). */
static json_object *bench_devices(struct probe_ctx *ctx, struct cldev_inventory *inv, double dev_ms, char *stage,
                                  bool progress, size_t ndev)
{
    json_object *devs = json_object_new_array();
    size_t k = 0;
    for (size_t i = 0; i < inv->n_targets; i++) {
        struct cldev_target *t = &inv->targets[i];
        struct isolate_result res = {.status = ISOLATE_OK};
        if (t->run) {
            struct bench_device_args a = {.platform = t->platform, .device = t->device, .budget_ms = dev_ms,
                                          .precs = bench_options()->precs, .stage = stage};
            bench_progress(progress, "bench: device %zu/%zu %d:%d %s (%.1f s) ...", ++k, ndev, t->platform, t->device,
                           t->name ? t->name : "", dev_ms / 1000.0);
            bench_child(ctx, bench_device_child, &a, dev_ms, 2u * (unsigned)__builtin_popcount(a.precs), stage, &res);
        }
        json_object_array_add(devs, bench_device_object(t, t->run ? &res : NULL, stage));
        if (t->run)
            isolate_result_clear(&res);
    }
    return devs;
}

static int bench_run(struct probe_ctx *ctx, struct report_section *sec)
{
    const struct cli_options *o = ctx->opts;
    const struct bench_options *bo = bench_options();
    if (bo->plot && !bench_plot_available()) {
        ctx->error = str_dup("--plot: gpucheckup was built without cairo: --plot is not available");
        return PROBE_INPUT_ERROR;
    }
    char perr[1100];
    if (bo->plot && bench_plot_load(perr, sizeof perr) < 0) { /* before the benchmark, not after it */
        ctx->error = str_printf("--plot: %s", perr);
        return PROBE_INTERNAL_ERROR;
    }
    struct cldev_inventory inv;
    const char *source = NULL;
    int picked = cldev_pick_devices(ctx, sec, &inv, &source, false);
    if (picked < 0)
        return PROBE_INPUT_ERROR;
    size_t ndev = 0;
    for (size_t i = 0; picked > 0 && i < inv.n_targets; i++)
        ndev += inv.targets[i].run;
    char *stage = mmap(NULL, BENCH_STAGE_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (stage == MAP_FAILED) {
        if (picked > 0)
            cldev_inventory_free(&inv);
        ctx->error = str_dup("bench: out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    json_object *cuda = bench_cuda_list(ctx, stage);
    size_t ncuda = bench_cuda_count(cuda);
    if (picked == 0 && ncuda == 0) { /* no OpenCL device list (the section's status says why) and no CUDA device */
        json_object_put(cuda);
        munmap(stage, BENCH_STAGE_MAX);
        return PROBE_DONE;
    }
    if (picked == 0) { /* the CUDA devices are benchmarked all the same, the OpenCL reason kept as a line */
        report_section_add_line(sec, REPORT_MARK_WARN, "Bench", "no OpenCL device list (%s): only the CUDA devices "
                                "are measured", sec->reason ? sec->reason : "?");
        memset(&inv, 0, sizeof(inv));
        source = "none";
    }
    double total_ms = bo->time_s * 1000.0, share = total_ms / (double)(ndev + ncuda + 1);
    bool progress = !o->quiet && isatty(STDERR_FILENO);
    json_object *devs = bench_devices(ctx, &inv, share, stage, progress, ndev);
    bench_progress(progress && ncuda, "bench: %zu CUDA device(s) (%.1f s each) ...", ncuda, share / 1000.0);
    bench_cuda_run(ctx, cuda, share, stage);
    json_object *cpu = bench_cpu(ctx, share, bench_max_n(devs), stage, progress);
    bench_progress(progress, "%s", "");
    munmap(stage, BENCH_STAGE_MAX);

    struct bench_peak_in in = {0};
    bench_peak_cpu_flags(&in, result_cpu_get(ctx->report));
    in.boost_mhz = bench_peak_boost_mhz(ctx->fs);
    bool clblast_missing = false;
    for (size_t i = 0; i < inv.n_targets; i++) {
        json_object *dev = json_object_array_get_idx(devs, i);
        bench_enrich_device(dev, &in, cpu);
        bench_device_findings(ctx, &inv.targets[i], dev);
        bench_summary(sec, dev);
        clblast_missing |= jsonget_str(jsonget(dev, "clblast"), "status") &&
                           strcmp(jsonget_str(jsonget(dev, "clblast"), "status"), "missing") == 0;
    }
    bench_cuda_report(ctx, sec, cuda);
    if (clblast_missing) {
        struct report_finding *f = report_add_finding(ctx->report, "bench.clblast-missing", "clblast",
                                                      "CLBlast is not installed (Debian package %s): only gpucheckup's "
                                                      "own kernel was measured", BENCH_CLBLAST_PACKAGE);
        json_object *c = jsonget(json_object_array_get_idx(devs, 0), "clblast");
        if (f && jsonget_str(c, "detail"))
            report_finding_add_evidence(f, "tried", "%s", jsonget_str(c, "detail"));
    }
    if (ndev == 0 && picked > 0) {
        report_add_finding(ctx->report, "bench.no-devices", NULL, "There is no OpenCL device to benchmark%s",
                           inv.n_targets ? " (none selected)" : "");
        report_section_add_line(sec, REPORT_MARK_WARN, "Bench", "no OpenCL device to benchmark");
    }
    json_object *precs = json_object_new_array();
    for (int p = 0; p < 3; p++)
        if (bo->precs & (1u << p))
            json_object_array_add(precs, json_object_new_string(p == 0 ? "fp32" : p == 1 ? "fp64" : "fp16"));
    json_object_object_add(sec->data, "source", json_object_new_string(source));
    json_object_object_add(sec->data, "budget_s", jsonnum_sig(bo->time_s, 6));
    json_object_object_add(sec->data, "precisions", precs);
    json_object_object_add(sec->data, "cpu_blas", cpu);
    json_object_object_add(sec->data, "devices", devs);
    json_object_object_add(sec->data, "cuda", cuda);
    json_object_object_add(sec->data, "plot", bo->plot ? json_object_new_string(bo->plot) : NULL);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    cldev_inventory_free(&inv);
    return bo->plot ? bench_plot(ctx, devs, cpu) : PROBE_DONE;
}

void bench_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

const struct probe probe_bench = {
    .name = "bench",
    .stack = PROBE_STACK_BENCH,
    .title = "GEMM speed per OpenCL device (gpucheckup's kernel, CLBlast) and CUDA\n"
             "device (gpucheckup's PTX kernel, cuBLAS) against the CPU BLAS, every\n"
             "result verified; bandwidth, launch latency, peak\n"
             "(only when asked for: `check` never runs it)",
    .needs_live = true,
    .explicit_only = true,
    .deps = bench_deps,
    .checks = bench_checks,
    .n_checks = sizeof(bench_checks) / sizeof(bench_checks[0]),
    .options = bench_option_rows,
    .options_title = "Benchmark (bench)",
    .options_reset = bench_options_reset,
    .run = bench_run,
    .print_text = bench_print_text,
};
