/* bench_cuda.c: bench's CUDA devices: the cuda probe's children (probes/clonce/bench_parts.h) run one at a time, then findings and lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "bench_parts.h"
#include "bench_report.h"
#include "isolate.h"
#include "jsonnum.h"
#include "probe.h"
#include "strutil.h"

/* The child's limit: its budget, plus --timeout for the setup (the PTX JIT, loading cuBLAS) and each sweep's
 * first call, as for an OpenCL device. */
static void bench_cuda_child(struct probe_ctx *ctx, isolate_fn fn, void *arg, double budget_ms, char *stage,
                             struct isolate_result *res)
{
    memset(stage, 0, BENCH_PARTS_STAGE_MAX);
    double limit = (double)ctx->timeout_ms * 3 + budget_ms;
    isolate_run(fn, arg, limit > 2e9 ? 2000000000 : (int)limit, res);
    stage[BENCH_PARTS_STAGE_MAX - 1] = '\0';
    str_sanitize(stage);
}

/* An object {"status", "detail"} for a child that gave no usable answer. */
static json_object *bench_cuda_failed(const struct isolate_result *res, const char *stage)
{
    json_object *o = json_object_new_object();
    const char *st = res->status == ISOLATE_TIMEOUT ? "timeout" : res->status == ISOLATE_SPAWN_FAILED ? "error" : "crash";
    char *d = str_printf("%s%s%s", res->detail ? res->detail : "ended abnormally", *stage ? " while " : "", stage);
    json_object_object_add(o, "status", json_object_new_string(st));
    json_object_object_add(o, "detail", d ? json_object_new_string(str_sanitize(d)) : NULL);
    free(d);
    return o;
}

json_object *bench_cuda_list(struct probe_ctx *ctx, char *stage)
{
    struct isolate_result res;
    bench_cuda_child(ctx, bench_cuda_list_child, NULL, 0, stage, &res);
    json_object *o = res.status == ISOLATE_OK && jsonget_str(res.value, "status") && json_object_is_type(
                         jsonget(res.value, "devices"), json_type_array)
                         ? json_object_get(res.value)
                         : bench_cuda_failed(&res, stage);
    if (!jsonget(o, "devices"))
        json_object_object_add(o, "devices", json_object_new_array());
    isolate_result_clear(&res);
    return o;
}

size_t bench_cuda_count(json_object *cuda)
{
    json_object *devs = jsonget(cuda, "devices");
    return strcmp(jsonget_str(cuda, "status"), "ok") == 0 && json_object_is_type(devs, json_type_array)
               ? json_object_array_length(devs)
               : 0;
}

/* The copy bandwidths (bench_cuda_transfer_child) into CUDA's "transfers", in one child. Its copies are a fixed
 * set (milliseconds each on PCIe), not a sweep that fills a share: it may take a device's share and a --timeout. */
static void bench_cuda_transfers(struct probe_ctx *ctx, json_object *cuda, double share_ms, char *stage)
{
    struct bench_cuda_xfer_args a = {.budget_ms = share_ms + (double)ctx->timeout_ms, .stage = stage};
    struct isolate_result res;
    bench_cuda_child(ctx, bench_cuda_transfer_child, &a, share_ms, stage, &res);
    json_object *o = res.status == ISOLATE_OK && jsonget_str(res.value, "status") ? json_object_get(res.value)
                                                                                  : bench_cuda_failed(&res, stage);
    if (!jsonget(o, "h2d"))
        json_object_object_add(o, "h2d", json_object_new_array());
    if (!jsonget(o, "p2p"))
        json_object_object_add(o, "p2p", json_object_new_array());
    json_object_object_add(o, "elapsed_ms", jsonnum_ms(res.elapsed_ms));
    json_object_object_add(cuda, "transfers", o);
    isolate_result_clear(&res);
}

void bench_cuda_run(struct probe_ctx *ctx, json_object *cuda, double share_ms, char *stage)
{
    json_object *devs = jsonget(cuda, "devices");
    for (size_t i = 0; i < bench_cuda_count(cuda); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        struct bench_cuda_args a = {.ordinal = json_object_get_int(jsonget(d, "ordinal")), .budget_ms = share_ms,
                                    .stage = stage};
        struct isolate_result res;
        bench_cuda_child(ctx, bench_cuda_device_child, &a, share_ms, stage, &res);
        json_object *o = res.status == ISOLATE_OK && jsonget_str(res.value, "status") ? json_object_get(res.value)
                                                                                      : bench_cuda_failed(&res, stage);
        if (!jsonget(o, "name") && jsonget_str(d, "name"))
            json_object_object_add(o, "name", json_object_new_string(jsonget_str(d, "name")));
        json_object_object_add(o, "ordinal", json_object_new_int(a.ordinal));
        json_object_object_add(o, "elapsed_ms", jsonnum_ms(res.elapsed_ms));
        json_object_array_put_idx(devs, i, o);
        isolate_result_clear(&res);
    }
    if (bench_cuda_count(cuda) > 0)
        bench_cuda_transfers(ctx, cuda, share_ms, stage);
}

/* "25.1 GB/s" or "n/a" into BUF. */
static const char *bench_gbps(json_object *o, const char *key, char *buf, size_t len)
{
    double v = bench_get_num(o, key);
    if (isfinite(v))
        snprintf(buf, len, "%.1f GB/s", v);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

/* A line per host-to-device and per peer measurement; bench.transfer-wrong where a copy read back wrong. */
static void bench_cuda_transfer_report(struct probe_ctx *ctx, struct report_section *sec, json_object *x)
{
    const char *st = jsonget_str(x, "status");
    if (!x || !st)
        return;
    if (strcmp(st, "ok") != 0) {
        report_section_add_line(sec, REPORT_MARK_WARN, "Bench", "CUDA copy bandwidth not measured: %s: %s", st,
                                jsonget_str(x, "detail") ? jsonget_str(x, "detail") : "no detail");
        return;
    }
    double mib = bench_get_num(x, "bytes") / 1048576.0, runs = bench_get_num(x, "runs");
    json_object *h2d = jsonget(x, "h2d"), *p2p = jsonget(x, "p2p");
    for (size_t i = 0; json_object_is_type(h2d, json_type_array) && i < json_object_array_length(h2d); i++) {
        json_object *o = json_object_array_get_idx(h2d, i), *v = jsonget(o, "verified");
        char a[32], b[32], subject[32];
        int ord = (int)bench_get_num(o, "ordinal");
        snprintf(subject, sizeof(subject), "cuda:%d", ord);
        bool wrong = v && !json_object_get_boolean(v);
        if (wrong)
            report_add_finding(ctx->report, "bench.transfer-wrong", subject, "A host-to-device copy to CUDA device %d "
                               "read back wrong", ord);
        report_section_add_line(sec, wrong ? REPORT_MARK_ERROR : jsonget_str(o, "detail") ? REPORT_MARK_WARN
                                                                                          : REPORT_MARK_OK,
                                "Bench", "CUDA %d host-to-device: pinned %s, pageable %s (%.0f MiB, median of %.0f)%s%s%s",
                                ord, bench_gbps(o, "pinned_gbps", a, sizeof(a)), bench_gbps(o, "pageable_gbps", b, sizeof(b)),
                                mib, runs, wrong ? ", READ BACK WRONG" : v ? ", verified" : "",
                                jsonget_str(o, "detail") ? ": " : "", jsonget_str(o, "detail") ? jsonget_str(o, "detail") : "");
    }
    for (size_t i = 0; json_object_is_type(p2p, json_type_array) && i < json_object_array_length(p2p); i++) {
        json_object *o = json_object_array_get_idx(p2p, i), *v = jsonget(o, "verified");
        char a[32], subject[48];
        int from = (int)bench_get_num(o, "from"), to = (int)bench_get_num(o, "to");
        snprintf(subject, sizeof(subject), "cuda:%d->cuda:%d", from, to);
        bool wrong = v && !json_object_get_boolean(v);
        if (wrong)
            report_add_finding(ctx->report, "bench.transfer-wrong", subject, "A copy from CUDA device %d to %d read "
                               "back wrong", from, to);
        enum gc_tri peer = jsonget_tri(o, "peer_access");
        report_section_add_line(sec, wrong ? REPORT_MARK_ERROR : jsonget_str(o, "detail") ? REPORT_MARK_WARN
                                                                                          : REPORT_MARK_OK,
                                "Bench", "CUDA %d -> %d: %s %s%s%s%s", from, to, bench_gbps(o, "gbps", a, sizeof(a)),
                                peer == GC_TRI_YES ? "peer to peer" : peer == GC_TRI_NO ? "through host memory (no peer access)"
                                                                                       : "(peer access unknown)",
                                wrong ? ", READ BACK WRONG" : v ? ", verified" : "", jsonget_str(o, "detail") ? ": " : "",
                                jsonget_str(o, "detail") ? jsonget_str(o, "detail") : "");
    }
}

/* The best point of sweep SW (NULL when none has a speed). */
static json_object *bench_cuda_best(json_object *sw)
{
    json_object *pts = jsonget(sw, "points"), *best = NULL;
    for (size_t k = 0; json_object_is_type(pts, json_type_array) && k < json_object_array_length(pts); k++) {
        json_object *pt = json_object_array_get_idx(pts, k);
        if (isfinite(bench_get_num(pt, "gflops")) && (!best || bench_get_num(pt, "gflops") > bench_get_num(best, "gflops")))
            best = pt;
    }
    return best;
}

/* One line per sweep of device DEV. */
static void bench_cuda_lines(struct report_section *sec, json_object *dev, const char *who)
{
    json_object *sws = jsonget(dev, "sweeps");
    for (size_t i = 0; json_object_is_type(sws, json_type_array) && i < json_object_array_length(sws); i++) {
        json_object *sw = json_object_array_get_idx(sws, i), *best = bench_cuda_best(sw);
        const char *st = jsonget_str(sw, "status") ? jsonget_str(sw, "status") : "failed"; /* never trusted */
        const char *impl = jsonget_str(sw, "implementation") ? jsonget_str(sw, "implementation") : "?";
        char text[120] = "no valid result";
        double frac = bench_get_num(best, "fraction_of_peak");
        if (best)
            snprintf(text, sizeof(text), "best %.1f GFLOPS at N=%.0f%s%.1f%s", bench_get_num(best, "gflops"),
                     bench_get_num(best, "n"), isfinite(frac) ? " (" : "", isfinite(frac) ? frac * 100 : 0.0,
                     isfinite(frac) ? "% of peak)" : "");
        enum report_mark m = strcmp(st, "ok") == 0 ? REPORT_MARK_OK : strcmp(st, "wrong") == 0 ? REPORT_MARK_ERROR
                                                                                              : REPORT_MARK_WARN;
        report_section_add_line(sec, m, "Bench", "%s: %s fp32: %s%s%s", who, impl,
                                strcmp(st, "ok") == 0 ? "" : strcmp(st, "wrong") == 0 ? "WRONG, " : "failed, ",
                                strcmp(st, "ok") == 0 ? text : jsonget_str(sw, "detail") ? "" : text,
                                strcmp(st, "ok") == 0 ? "" : jsonget_str(sw, "detail") ? jsonget_str(sw, "detail") : "");
    }
}

void bench_cuda_report(struct probe_ctx *ctx, struct report_section *sec, json_object *cuda)
{
    json_object *devs = jsonget(cuda, "devices");
    bool blas_missing = false;
    const char *ls = jsonget_str(cuda, "status");
    if (ls && strcmp(ls, "ok") != 0 && strcmp(ls, "missing") != 0) /* a libcuda that cannot list its GPUs */
        report_section_add_line(sec, REPORT_MARK_WARN, "Bench", "CUDA devices not measured: the driver's listing %s: %s",
                                strcmp(ls, "error") == 0 ? "failed" : ls,
                                jsonget_str(cuda, "detail") ? jsonget_str(cuda, "detail") : "no detail");
    for (size_t i = 0; i < bench_cuda_count(cuda); i++) {
        json_object *dev = json_object_array_get_idx(devs, i);
        int ord = json_object_get_int(jsonget(dev, "ordinal"));
        char subject[32], *who = str_printf("CUDA device %d (%s)", ord, jsonget_str(dev, "name") ? jsonget_str(dev, "name") : "unnamed");
        snprintf(subject, sizeof(subject), "cuda:%d", ord);
        const char *st = jsonget_str(dev, "status") ? jsonget_str(dev, "status") : "crash";
        if (strcmp(st, "ok") != 0) {
            report_add_finding(ctx->report, "bench.device-failed", subject, "%s: the benchmark %s: %s", who ? who : "?",
                               strcmp(st, "error") == 0 ? "could not run" : st,
                               jsonget_str(dev, "detail") ? jsonget_str(dev, "detail") : "");
            report_section_add_line(sec, REPORT_MARK_ERROR, "Bench", "%s: %s, %s", who ? who : "?", st,
                                    jsonget_str(dev, "detail") ? jsonget_str(dev, "detail") : "");
        }
        json_object *sws = jsonget(dev, "sweeps");
        for (size_t k = 0; json_object_is_type(sws, json_type_array) && k < json_object_array_length(sws); k++)
            bench_sweep_findings(ctx, subject, who ? who : "?", json_object_array_get_idx(sws, k));
        bench_cuda_lines(sec, dev, who ? who : "?");
        const char *cb = jsonget_str(jsonget(dev, "cublas"), "status");
        if (cb && strcmp(cb, "loaded") != 0) {
            blas_missing |= strcmp(cb, "missing") == 0;
            report_section_add_line(sec, REPORT_MARK_INFO, "Bench", "%s: cuBLAS %s: %s; only gpucheckup's kernel was "
                                    "measured", who ? who : "?", cb, jsonget_str(jsonget(dev, "cublas"), "detail"));
        }
        free(who);
    }
    if (blas_missing)
        report_add_finding(ctx->report, "bench.cublas-missing", "cublas", "cuBLAS is not installed: on the CUDA devices "
                           "only gpucheckup's own kernel was measured");
    bench_cuda_transfer_report(ctx, sec, jsonget(cuda, "transfers"));
}
