/* cuda_smoke_report.c: the CUDA smoke test in the parent: each child's result checked, copied and turned into findings. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_internal.h"
#include "jsonnum.h"
#include "results/result_cuda.h"
#include "compute_check.h"
#include "strutil.h"

/* The child's value for KEY when it has TYPE (null is always accepted as absent), else NULL. */
static json_object *cs_get(json_object *o, const char *key, json_type type)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !v)
        return NULL;
    if (json_object_get_type(v) == type)
        return v;
    if (type == json_type_double && json_object_get_type(v) == json_type_int)
        return v;
    return NULL;
}

static const char *cs_get_str(json_object *o, const char *key)
{
    json_object *v = cs_get(o, key, json_type_string);
    return v ? json_object_get_string(v) : NULL;
}

/* MAX for a number that may be negative (numbers are otherwise times, speeds and errors: >= 0). */
#define CS_SIGNED 1

/* Copy KEY from SRC to DST when it has TYPE (strings sanitised and capped at MAX), else null. */
static void cs_copy(json_object *dst, json_object *src, const char *key, json_type type, size_t max)
{
    json_object *v = cs_get(src, key, type);
    json_object *c = NULL;
    if (v) {
        switch (type) {
        case json_type_string:
            c = cuda_smoke_json_str(json_object_get_string(v), max);
            break;
        case json_type_double: {
            double d = json_object_get_double(v);
            /* Keep the child's text ("0.500": its rounding); json-c parsed it, so it is a number. */
            c = isfinite(d) && (d >= 0 || max == CS_SIGNED) ? json_object_new_double_s(d, json_object_get_string(v))
                                                             : NULL;
            break;
        }
        case json_type_int:
            c = json_object_new_int64(json_object_get_int64(v));
            break;
        case json_type_boolean:
            c = json_object_new_boolean(json_object_get_boolean(v));
            break;
        default:
            c = NULL;
            break;
        }
    }
    json_object_object_add(dst, key, c);
}

/* A copy of an array of small flat objects, keeping only KEYS of their types. */
static json_object *cs_copy_array(json_object *src, const char *key, const char *const *keys, const json_type *types,
                                  size_t n_keys, size_t max_items)
{
    json_object *arr = json_object_new_array(), *v = cs_get(src, key, json_type_array);
    if (!arr || !v)
        return arr;
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n && i < max_items; i++) {
        json_object *it = json_object_array_get_idx(v, i);
        if (!it || json_object_get_type(it) != json_type_object)
            continue;
        json_object *o = json_object_new_object();
        for (size_t k = 0; k < n_keys; k++)
            cs_copy(o, it, keys[k], types[k], types[k] == json_type_double ? CS_SIGNED : 200);
        json_object_array_add(arr, o);
    }
    return arr;
}

static const char *const cs_statuses[] = {"pass", "wrong-result", "jit-failed", "run-failed", "no-compute-api",
                                          "init-failed"};

/* The data["smoke"] entry of one GPU from what its child returned (checked, sanitised) or how it
 * ended. Never NULL unless out of memory. */
static json_object *cs_entry(const struct cuda_smoke_args *a, const struct isolate_result *res)
{
    json_object *e = json_object_new_object();
    if (!e)
        return NULL;
    json_object *v = res->status == ISOLATE_OK ? res->value : NULL;
    const char *st = cs_get_str(v, "status");
    bool known = false;
    for (size_t i = 0; st && i < sizeof(cs_statuses) / sizeof(cs_statuses[0]); i++)
        known = known || strcmp(st, cs_statuses[i]) == 0;
    json_object_object_add(e, "ordinal", json_object_new_int(a->ordinal));
    json_object_object_add(e, "n", json_object_new_int(a->n));
    if (!known) {
        const char *status = res->status == ISOLATE_TIMEOUT ? "timeout"
                             : res->status == ISOLATE_SIGNAL ? "crash"
                             : res->status == ISOLATE_SPAWN_FAILED ? "run-failed"
                                                                    : "crash";
        json_object_object_add(e, "status", json_object_new_string(status));
        json_object_object_add(e, "name", NULL);
        json_object_object_add(e, "pci_bus_id", a->pci_bus_id ? cuda_smoke_json_str(a->pci_bus_id, 31) : NULL);
        char *d = res->status == ISOLATE_OK ? str_dup("the test process returned no usable result")
                  : res->status == ISOLATE_SPAWN_FAILED
                      ? str_printf("the test process could not be started: %s", res->detail ? res->detail : "unknown")
                      : str_dup(res->detail ? res->detail : "the test process ended abnormally");
        json_object_object_add(e, "detail", cuda_smoke_json_str(d, 1000));
        free(d);
        json_object_object_add(e, "child_output", cuda_smoke_json_str(res->stderr_tail, 2000));
        return e;
    }
    json_object_object_add(e, "status", json_object_new_string(st));
    cs_copy(e, v, "name", json_type_string, 255);
    if (a->pci_bus_id && *a->pci_bus_id)
        json_object_object_add(e, "pci_bus_id", cuda_smoke_json_str(a->pci_bus_id, 31));
    else
        cs_copy(e, v, "pci_bus_id", json_type_string, 31);
    cs_copy(e, v, "compute_capability", json_type_string, 15);
    cs_copy(e, v, "libcuda", json_type_string, 4096);
    cs_copy(e, v, "failed_call", json_type_string, 64);
    cs_copy(e, v, "result", json_type_int, 0);
    cs_copy(e, v, "result_name", json_type_string, 64);
    cs_copy(e, v, "detail", json_type_string, 1000);
    cs_copy(e, v, "computes_nothing", json_type_boolean, 0);
    cs_copy(e, v, "jit_ms", json_type_double, 0);
    cs_copy(e, v, "kernel_ms", json_type_double, 0);
    cs_copy(e, v, "host_ms", json_type_double, 0);
    cs_copy(e, v, "timer", json_type_string, 16);
    cs_copy(e, v, "timer_reason", json_type_string, 64);
    cs_copy(e, v, "gflops", json_type_double, 0);
    cs_copy(e, v, "gflops_reason", json_type_string, 400);
    cs_copy(e, v, "peak_gflops", json_type_double, 0);
    cs_copy(e, v, "theoretical_peak_gflops", json_type_double, 0);
    cs_copy(e, v, "fraction_of_peak", json_type_double, 0);
    cs_copy(e, v, "max_error", json_type_double, 0);
    cs_copy(e, v, "wrong_elements", json_type_int, 0);
    static const char *const mm_keys[] = {"pass", "row", "column", "expected", "got"};
    static const json_type mm_types[] = {json_type_string, json_type_int, json_type_int, json_type_double,
                                         json_type_string};
    json_object_object_add(e, "first_mismatches", cs_copy_array(v, "first_mismatches", mm_keys, mm_types, 5,
                                                                COMPUTE_MAX_MISMATCHES));
    static const char *const pass_keys[] = {"pass",     "status",    "kernel_ms",     "host_ms",
                                            "max_error", "tolerance", "wrong_elements"};
    static const json_type pass_types[] = {json_type_string, json_type_string, json_type_double, json_type_double,
                                           json_type_double, json_type_double, json_type_int};
    json_object_object_add(e, "passes", cs_copy_array(v, "passes", pass_keys, pass_types, 7, COMPUTE_N_PASS));
    cs_copy(e, v, "jit_error_log", json_type_string, CUDA_SMOKE_LOG_KEEP);
    cs_copy(e, v, "jit_info_log", json_type_string, CUDA_SMOKE_LOG_KEEP);
    return e;
}

/* The finding for one GPU's entry E (nothing for a pass). */
static void cs_finding(struct probe_ctx *ctx, json_object *e, const char *subject)
{
    const char *st = cs_get_str(e, "status"), *name = cs_get_str(e, "name"), *detail = cs_get_str(e, "detail");
    const char *call = cs_get_str(e, "failed_call"), *rname = cs_get_str(e, "result_name");
    json_object *rv = cs_get(e, "result", json_type_int);
    int result = rv ? json_object_get_int(rv) : 0;
    char gpu[320];
    snprintf(gpu, sizeof(gpu), "%s%s%s", subject, name ? " " : "", name ? name : "");
    if (!detail)
        detail = "no detail";
    struct report_finding *f = NULL;
    int sv = gc_name_parse(&result_cuda_smoke_status_names, st); /* the entry's status, as an enum */
    if (sv == RESULT_CUDA_SMOKE_WRONG_RESULT) {
        f = report_add_finding(ctx->report, "cuda.smoke-wrong-result", subject,
                               "The CUDA smoke test on GPU %s got a wrong result: %s", gpu, detail);
    } else if (sv == RESULT_CUDA_SMOKE_JIT_FAILED) {
        f = report_add_finding(ctx->report, "cuda.smoke-jit-failed", subject,
                               "The CUDA driver could not compile the smoke test's PTX for GPU %s: %s", gpu, detail);
        /* 221: cuda.h documents CUDA_ERROR_JIT_COMPILER_NOT_FOUND as "the PTX JIT compiler library was
         * not found"; the NVIDIA Container Toolkit mounts libnvidia-ptxjitcompiler only with the
         * "compute" driver capability (its docs, "Driver Capabilities"). */
        if (f && result == CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
            report_finding_set_hint(
                f, "libnvidia-ptxjitcompiler.so.1 (part of the NVIDIA driver, same version as libcuda) is not "
                   "there: reinstall the driver package that provides it (e.g. libnvidia-compute-<version> on "
                   "Debian/Ubuntu). In a container, the NVIDIA Container Toolkit mounts it only with the compute "
                   "capability: run with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all), or --gpus all with "
                   "that variable set.");
        else if (f && (result == CUDA_ERROR_INVALID_PTX || result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION))
            report_finding_set_hint(
                f, "The driver's PTX compiler rejected plain PTX ISA 6.0: libnvidia-ptxjitcompiler and libcuda "
                   "probably come from different driver versions. Reinstall the driver so that every NVIDIA "
                   "library has the kernel module's version; the JIT log is in the evidence.");
    } else if (sv == RESULT_CUDA_SMOKE_TIMEOUT) {
        f = report_add_finding(ctx->report, "cuda.smoke-timeout", subject,
                               "The CUDA smoke test on GPU %s did not finish in time: %s", gpu, detail);
    } else if (sv == RESULT_CUDA_SMOKE_CRASH) {
        f = report_add_finding(ctx->report, "cuda.smoke-crash", subject,
                               "The CUDA smoke test on GPU %s ended abnormally: %s", gpu, detail);
    } else if (sv != RESULT_CUDA_SMOKE_PASS) {
        const char *what = sv == RESULT_CUDA_SMOKE_INIT_FAILED      ? "could not initialise CUDA"
                           : sv == RESULT_CUDA_SMOKE_NO_COMPUTE_API ? "found a libcuda that cannot run kernels"
                                                                    : "failed";
        f = report_add_finding(ctx->report, "cuda.smoke-run-failed", subject, "The CUDA smoke test on GPU %s %s: %s",
                               gpu, what, detail);
        if (f && sv != RESULT_CUDA_SMOKE_RUN_FAILED)
            report_finding_set_hint(f, "The smoke test's own process could not use the CUDA driver (library %s). "
                                       "The cuda section's driver findings name the cause; `gpucheckup cuda -v` shows "
                                       "which libcuda was loaded.",
                                    sv == RESULT_CUDA_SMOKE_INIT_FAILED ? "or cuInit" : "functions");
    }
    if (!f)
        return;
    if (call)
        report_finding_add_evidence(f, call, "%s", rname ? rname : rv ? "failed" : detail);
    if (rv)
        report_finding_add_evidence(f, "CUresult", "%d", result);
    const char *log = cs_get_str(e, "jit_error_log");
    if (log)
        report_finding_add_evidence(f, "JIT error log", "%s", log);
    const char *lib = cs_get_str(e, "libcuda");
    if (lib)
        report_finding_add_evidence(f, "libcuda", "%s", lib);
    const char *out = cs_get_str(e, "child_output");
    if (out)
        report_finding_add_evidence(f, "child output", "%s", out);
}

void cuda_smoke_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_smoke_args *args,
                       const struct isolate_result *results, size_t n_results)
{
    json_object *arr = json_object_new_array();
    if (!arr)
        return;
    for (size_t i = 0; i < n_results; i++) {
        json_object *e = cs_entry(&args[i], &results[i]);
        if (!e)
            continue;
        json_object_array_add(arr, e);
        const char *bus = cs_get_str(e, "pci_bus_id");
        char subject[40];
        if (bus)
            snprintf(subject, sizeof(subject), "%s", bus);
        else
            snprintf(subject, sizeof(subject), "cuda:%d", args[i].ordinal);
        cs_finding(ctx, e, subject);

        const char *st = cs_get_str(e, "status");
        if (result_cuda_of(sec))
            result_cuda_add_smoke(result_cuda_of(sec), args[i].ordinal, st, e);
        bool pass = gc_name_parse(&result_cuda_smoke_status_names, st) == RESULT_CUDA_SMOKE_PASS;
        char label[64];
        snprintf(label, sizeof(label), "CUDA smoke %s", subject);
        if (pass) {
            json_object *gf = cs_get(e, "gflops", json_type_double);
            char speed[64] = "";
            if (gf)
                snprintf(speed, sizeof(speed), ", %.1f GFLOPS", json_object_get_double(gf));
            report_section_add_line(sec, REPORT_MARK_OK, label, "exact %dx%d SGEMM right%s", args[i].n, args[i].n,
                                    speed);
        } else {
            const char *d = cs_get_str(e, "detail");
            report_section_add_line(sec, REPORT_MARK_ERROR, label, "%s: %s", st, d ? d : "no detail");
        }
    }
    json_object_object_add(sec->data, "smoke", arr);
}
