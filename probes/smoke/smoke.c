/* smoke.c: the smoke probe: a matrix multiply on each OpenCL device, checked exactly against the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jsonnum.h"
#include "isolate.h"
#include "probe.h"
#include "smoke_device.h"
#include "smoke_hint.h"
#include "smoke_options.h"
#include "smoke_platform.h"
#include "cldevices.h"
#include "smoke_shared.h"
#include "compute_options.h"
#include "compute_timer.h"
#include "strutil.h"
#include "jsonget.h"
#include "results/result_smoke.h"

static const char *const smoke_deps[] = {"opencl", NULL};

static const struct check smoke_checks[] = {
    {"smoke.wrong-result", REPORT_SEV_ERROR,
     "An OpenCL device computed a wrong matrix product (or lost data in a buffer round trip)",
     "Do not trust this device's results. Update or reinstall its OpenCL driver; if a GPU keeps failing, "
     "check it for overheating, overclocking or bad memory.", CHECK_LAYER_COMPUTE},
    {"smoke.build-failed", REPORT_SEV_ERROR, "The driver could not build the smoke test's plain OpenCL C kernel",
     "The driver's OpenCL compiler is broken or incomplete: reinstall or update the driver package; the build "
     "log is in the evidence (gpucheckup smoke -v) and in the JSON.", CHECK_LAYER_COMPUTE},
    {"smoke.timeout", REPORT_SEV_ERROR, "The smoke test did not finish in time on a device",
     "Check `dmesg` for GPU hangs or resets and that no other job holds the GPU; then run `gpucheckup smoke` "
     "again with a longer --timeout.", CHECK_LAYER_COMPUTE},
    {"smoke.crash", REPORT_SEV_ERROR, "The driver crashed (or ended the process) during the smoke test",
     "Check `dmesg` and update or reinstall the driver; `gpucheckup icd` tests each driver alone.", CHECK_LAYER_COMPUTE},
    {"smoke.run-failed", REPORT_SEV_ERROR,
     "An OpenCL call failed during the smoke test (context, allocation, transfer or kernel launch)",
     "CL_OUT_OF_RESOURCES or CL_MEM_OBJECT_ALLOCATION_FAILURE: the device is busy or short of memory (try a "
     "smaller --smoke-size); other errors point at the driver: update or reinstall it.", CHECK_LAYER_COMPUTE},
    {"smoke.profiling-clock", REPORT_SEV_INFO,
     "An OpenCL driver's profiling events timed the smoke kernel impossibly (missing, zero, or far from the host "
     "clock); the host clock was used instead",
     "Timings from this driver's profiling events (clGetEventProfilingInfo, and tools built on it) cannot be "
     "trusted; time on the host, or update the driver. The device's results are not affected.", CHECK_LAYER_COMPUTE},
    {"smoke.implausible-speed", REPORT_SEV_INFO,
     "The smoke kernel finished faster than the device's reported compute units and clock allow",
     "No speed is reported for it. The driver misreports the device (compute units, clock) or its timing; "
     "the result itself was checked and is right. `gpucheckup opencl -v` shows what the driver reports.", CHECK_LAYER_COMPUTE},
};

/* Longest build log kept in the report. */
#define SMOKE_LOG_MAX (32u * 1024u)

/* ---- JSON helpers ------------------------------------------------------------------------------ */

/* Sanitise S in place line by line (keeps newlines, replaces other control bytes); returns S. */
static char *smoke_sanitize_lines(char *s)
{
    for (char *line = s; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        str_sanitize(line);
        if (!nl)
            break;
        *nl = '\n';
        line = nl + 1;
    }
    return s;
}

/* A copy of V from a child with every string sanitised (multi-line for build logs). */
static json_object *smoke_clean(json_object *v, bool multiline)
{
    if (!v)
        return NULL;
    switch (json_object_get_type(v)) {
    case json_type_string: {
        char *s = str_dup(json_object_get_string(v));
        if (!s)
            return NULL;
        if (multiline) {
            if (strlen(s) > SMOKE_LOG_MAX)
                strcpy(s + SMOKE_LOG_MAX - 16, "\n[... cut]");
            smoke_sanitize_lines(s);
        } else {
            str_sanitize(s);
        }
        json_object *o = json_object_new_string(s);
        free(s);
        return o;
    }
    case json_type_array: {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v); i++)
            json_object_array_add(a, smoke_clean(json_object_array_get_idx(v, i), multiline));
        return a;
    }
    case json_type_object: {
        json_object *o = json_object_new_object();
        json_object_object_foreach(v, key, val)
        {
            char *k = str_sanitize(str_dup(key));
            if (k)
                json_object_object_add(o, k, smoke_clean(val, multiline));
            free(k);
        }
        return o;
    }
    default:
        return json_object_get(v);
    }
}

/* ---- Progress on a terminal --------------------------------------------------------------------- */

struct smoke_progress {
    bool on;
    size_t done, total;
    struct cldev_target **targets; /* by job index */
};

static void smoke_progress_done(size_t index, const struct isolate_result *res, void *arg)
{
    struct smoke_progress *pg = arg;
    pg->done++;
    if (!pg->on)
        return;
    const struct cldev_target *t = pg->targets[index];
    const char *st = res->status == ISOLATE_OK             ? jsonget_str(res->value, "status")
                     : res->status == ISOLATE_TIMEOUT      ? "timeout"
                     : res->status == ISOLATE_SPAWN_FAILED ? "error"
                                                           : "crash";
    fprintf(stderr, "\r\033[Ksmoke: %zu/%zu devices done; %d:%d %s: %s", pg->done, pg->total, t->platform, t->device,
            t->name ? t->name : "", st ? st : "?");
    fflush(stderr);
}

/* ---- One device's result ------------------------------------------------------------------------- */

/* The child's measurements kept as JSON in the device's rest (result_smoke.c prints them in place);
 * "precisions" and "detail" among them are typed. */
static const char *const smoke_child_keys[] = {
    "n",          "build_ms",  "build_from", "kernel_ms",      "host_ms",          "timer",      "timer_reason",
    "gflops",     "gflops_reason", "peak_gflops", "max_error",   "wrong_elements", "first_mismatches",
    "precisions", "passes",    "round_trip",     "build_log",        "error",      "detail",
};

/* DEV's type from the child's answer CTYPE (an array) or the target's; GPU from it. */
static void smoke_device_type(struct result_smoke_dev *dev, const struct cldev_target *t, json_object *ctype)
{
    json_object *type = json_object_is_type(ctype, json_type_array) ? smoke_clean(ctype, false)
                        : t->type                                   ? json_object_get(t->type)
                                                                    : NULL;
    if (result_smoke_dev_set_type(dev, type) < 0) { /* another shape: kept as it is */
        dev->have &= ~(unsigned)RESULT_SMOKE_HAVE_TYPE;
        dev->gpu = gc_tri_from_bool(t->is_gpu);
        json_object_object_add(dev->rest, "type", json_object_get(type));
    }
    json_object_put(type);
}

/* The child's member K (a precisions object or the detail string) into DEV's typed member, or into
 * its rest when it has another shape. */
static void smoke_device_typed_child(struct result_smoke_dev *dev, const char *k, json_object *v)
{
    if (strcmp(k, "precisions") == 0 && result_smoke_dev_set_precisions(dev, v) == 0) {
        json_object_put(v);
        return;
    }
    if (strcmp(k, "detail") == 0 && (!v || json_object_is_type(v, json_type_string))) {
        dev->detail = v ? str_dup(json_object_get_string(v)) : NULL;
        json_object_put(v);
        return;
    }
    dev->have &= ~(unsigned)(strcmp(k, "detail") == 0 ? RESULT_SMOKE_HAVE_DETAIL : RESULT_SMOKE_HAVE_PRECISIONS);
    json_object_object_add(dev->rest, k, v);
}

/* Fill DEV for target T from its child's RES (NULL: not run) and the STAGE it reached. */
static void smoke_device_fill(struct result_smoke_dev *dev, const struct cldev_target *t,
                              const struct isolate_result *res, const char *stage, unsigned n)
{
    json_object *child = res && res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object)
                             ? res->value
                             : NULL;
    int cstatus = child ? gc_name_parse(&result_smoke_status_names, jsonget_str(child, "status")) : -1;
    if (cstatus != RESULT_SMOKE_PASS && cstatus != RESULT_SMOKE_FAIL && cstatus != RESULT_SMOKE_ERROR)
        child = NULL;

    dev->have = RESULT_SMOKE_HAVE_ALL;
    dev->platform_index = t->platform;
    dev->device_index = t->device;
    const char *cname = child ? jsonget_str(child, "name") : NULL;
    dev->name = cname ? str_sanitize(str_dup(cname)) : str_dup(t->name);
    smoke_device_type(dev, t, child ? jsonget(child, "type") : NULL);
    dev->pci_address = str_dup(t->pci_address);

    char *detail = NULL;
    json_object *error = NULL;
    if (!res) {
        dev->status = RESULT_SMOKE_SKIPPED;
        detail = str_dup(t->skip_reason ? t->skip_reason : "not selected");
    } else if (res->budget_spent) {
        dev->status = RESULT_SMOKE_SKIPPED; /* core.timeout-spent says why */
        detail = str_dup(res->detail ? res->detail : "not started: the run's --timeout was already spent");
    } else if (child) {
        dev->status = (enum result_smoke_status)cstatus;
    } else if (res->status == ISOLATE_TIMEOUT) {
        dev->status = RESULT_SMOKE_TIMEOUT;
    } else if (res->status == ISOLATE_SPAWN_FAILED) {
        dev->status = RESULT_SMOKE_ERROR;
        error = json_object_new_object();
        json_object_object_add(error, "call", json_object_new_string("fork"));
        json_object_object_add(error, "code", NULL);
        json_object_object_add(error, "name", NULL);
        detail = str_printf("the test process could not be started: %s", res->detail ? res->detail : "unknown");
    } else if (res->status == ISOLATE_OK) {
        dev->status = RESULT_SMOKE_ERROR;
        detail = str_dup("the test process returned an unexpected result");
    } else {
        dev->status = RESULT_SMOKE_CRASH; /* a signal, or the driver ended the process (exit, garbage on the pipe) */
    }
    if (!detail && !child && res) {
        detail = str_printf("%s%s%s", res->detail ? res->detail : "ended abnormally", stage && *stage ? " while " : "",
                            stage && *stage ? stage : "");
    }
    for (size_t i = 0; i < sizeof(smoke_child_keys) / sizeof(smoke_child_keys[0]); i++) {
        const char *k = smoke_child_keys[i];
        bool typed = strcmp(k, "precisions") == 0 || strcmp(k, "detail") == 0;
        if (child && typed)
            smoke_device_typed_child(dev, k, smoke_clean(jsonget(child, k), false));
        else if (child)
            json_object_object_add(dev->rest, k, smoke_clean(jsonget(child, k), strcmp(k, "build_log") == 0));
        else if (strcmp(k, "n") == 0)
            json_object_object_add(dev->rest, k, json_object_new_int64(n));
        else if (strcmp(k, "precisions") == 0)
            for (int p = 0; p < COMPUTE_N_PREC; p++)
                dev->prec[p] = RESULT_SMOKE_PREC_NOT_RUN;
        else if (strcmp(k, "error") == 0)
            json_object_object_add(dev->rest, k, error), error = NULL;
        else if (strcmp(k, "detail") == 0)
            dev->detail = detail ? str_sanitize(str_dup(detail)) : NULL;
        else
            json_object_object_add(dev->rest, k, NULL);
    }
    json_object_put(error);
    free(detail);
    dev->stage = res && stage && *stage ? str_dup(stage) : NULL;
    json_object_object_add(dev->rest, "elapsed_ms", res ? jsonnum_ms(res->elapsed_ms) : NULL);
}

/* ---- Findings and summary ---------------------------------------------------------------------- */

/* "rusticl (driver 22.3.6)" from the child's raw answer (sanitised), or NULL. Free it. */
static char *smoke_driver_text(json_object *child)
{
    const char *plat = jsonget_str(child, "platform_name"), *ver = jsonget_str(child, "driver_version");
    if (!plat && !ver)
        return NULL;
    return str_sanitize(str_printf("%s%s%s%s", plat ? plat : "", plat && ver ? " (driver " : ver ? "driver " : "",
                                   ver ? ver : "", plat && ver ? ")" : ""));
}

/* The findings about the smoke kernel's timing: a driver whose profiling clock cannot be right, and
 * a speed above the device's plausible peak. */
static void smoke_timer_findings(struct probe_ctx *ctx, const struct cldev_target *t, json_object *dev,
                                 const struct isolate_result *res, const char *subject)
{
    json_object *child = res && res->status == ISOLATE_OK ? res->value : NULL;
    const char *timer = jsonget_str(dev, "timer");
    if (!child || !timer)
        return;
    const char *name = t->name ? t->name : "unnamed device";
    json_object *kms = jsonget(dev, "kernel_ms"), *hms = jsonget(dev, "host_ms"), *peak = jsonget(dev, "peak_gflops");
    enum compute_timer_why why = compute_timer_why_parse(jsonget_str(dev, "timer_reason"));
    json_object *blame = jsonget(child, "blame_profiling");
    char *driver = smoke_driver_text(child);
    struct report_finding *f;
    if (why != COMPUTE_TIMER_PROFILING_OK && json_object_is_type(blame, json_type_boolean) && json_object_get_boolean(blame)) {
        f = report_add_finding(ctx->report, "smoke.profiling-clock", subject,
                               "The profiling clock of the OpenCL driver %s cannot be right on device %d:%d (%s): %s; "
                               "the smoke test used the host clock", driver ? driver : "(unnamed)", t->platform, t->device,
                               name, compute_timer_why_text(why));
        if (f) {
            if (kms)
                report_finding_add_evidence(f, "profiling events", "%s ms", json_object_get_string(kms));
            else
                report_finding_add_evidence(f, "profiling events", "unreadable");
            report_finding_add_evidence(f, "host clock", "%s ms", hms ? json_object_get_string(hms) : "?");
            if (peak)
                report_finding_add_evidence(f, "plausible peak", "%s GFLOPS", json_object_get_string(peak));
            if (driver)
                report_finding_add_evidence(f, "driver", "%s", driver);
        }
    }
    const char *gwhy = jsonget_str(dev, "gflops_reason");
    json_object *above = jsonget(child, "above_peak");
    if (gwhy && json_object_is_type(above, json_type_boolean) && json_object_get_boolean(above)) {
        f = report_add_finding(ctx->report, "smoke.implausible-speed", subject,
                               "Device %d:%d (%s) finished the smoke kernel faster than it can: %s", t->platform,
                               t->device, name, gwhy);
        if (f) {
            report_finding_add_evidence(f, "timer", "%s", timer);
            report_finding_add_evidence(f, "host clock", "%s ms", hms ? json_object_get_string(hms) : "?");
            if (driver)
                report_finding_add_evidence(f, "driver", "%s", driver);
        }
    }
    free(driver);
}

static void smoke_findings(struct probe_ctx *ctx, const struct cldev_target *t, const struct result_smoke_dev *d,
                           const struct isolate_result *res)
{
    json_object *dev = d->rest; /* the measurements */
    const char *detail = d->detail;
    const char *stage = d->stage;
    char *subject = cldev_target_subject(t);
    const char *name = t->name ? t->name : "unnamed device";
    json_object *err = jsonget(dev, "error");
    const char *call = jsonget_str(err, "call");
    const char *ename = jsonget_str(err, "name");
    struct report_finding *f;

    if (d->status == RESULT_SMOKE_TIMEOUT) {
        /* A smoke child has no time limit of its own: what stops it is the run's deadline (probe_budget_ms). */
        f = report_add_finding(ctx->report, "smoke.timeout", subject,
                               "Device %d:%d (%s) did not finish the smoke test before the run's --timeout (%.1f s) "
                               "ended it: %s",
                               t->platform, t->device, name, ctx->timeout_ms / 1000.0, detail ? detail : "timed out");
        if (f) {
            report_finding_add_evidence(f, "--timeout", "%.1f s", ctx->timeout_ms / 1000.0);
            if (stage)
                report_finding_add_evidence(f, "stage", "%s", stage);
            smoke_timeout_hint(f, t, stage);
        }
    } else if (d->status == RESULT_SMOKE_CRASH) {
        f = report_add_finding(ctx->report, "smoke.crash", subject, "The driver of device %d:%d (%s) crashed: %s",
                               t->platform, t->device, name, detail ? detail : "crashed");
        if (f) {
            if (stage)
                report_finding_add_evidence(f, "stage", "%s", stage);
            if (res && res->stderr_tail) {
                const char *tail = res->stderr_tail;
                size_t len = strlen(tail);
                report_finding_add_evidence(f, "driver output (end)", "%s", len > 400 ? tail + len - 400 : tail);
            }
        }
    }
    if (call && strcmp(call, "clBuildProgram") == 0) {
        f = report_add_finding(ctx->report, "smoke.build-failed", subject,
                               "The driver could not build the smoke test kernel on device %d:%d (%s): %s",
                               t->platform, t->device, name, ename ? ename : "build failed");
        const char *log = jsonget_str(dev, "build_log");
        if (f && log) {
            /* The first lines of the log, one evidence entry each (evidence is one line). */
            const char *p = log;
            for (int i = 0; i < 8 && p && *p; i++) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                if (len > 0)
                    report_finding_add_evidence(f, "build log", "%.*s", (int)(len > 300 ? 300 : len), p);
                p = nl ? nl + 1 : NULL;
            }
        }
        if (f)
            report_finding_set_hint(f,
                                    "The driver's OpenCL compiler rejected a plain kernel: reinstall or update the "
                                    "driver package; `gpucheckup smoke --device %d:%d -v` shows the build log.",
                                    t->platform, t->device);
    } else if (call && strcmp(call, "fork") == 0) {
        f = report_add_finding(ctx->report, "core.isolated-child-failed", subject, "The smoke test of device %d:%d "
                               "(%s) could not start: %s", t->platform, t->device, name, detail ? detail : "");
    } else if (call) {
        f = report_add_finding(ctx->report, "smoke.run-failed", subject, "Smoke test on device %d:%d (%s): %s",
                               t->platform, t->device, name, detail ? detail : call);
        if (f) {
            json_object *code = jsonget(err, "code");
            report_finding_add_evidence(f, call, "%s%s%s%s", ename ? ename : "failed",
                                        code ? " (" : "", code ? json_object_get_string(code) : "", code ? ")" : "");
            if (stage)
                report_finding_add_evidence(f, "stage", "%s", stage);
        }
    }
    smoke_timer_findings(ctx, t, dev, res, subject);
    if (d->status == RESULT_SMOKE_FAIL) {
        json_object *wrong = jsonget(dev, "wrong_elements");
        f = report_add_finding(ctx->report, "smoke.wrong-result", subject,
                               "Device %d:%d (%s) computed wrong results: %s", t->platform, t->device, name,
                               detail ? detail : "wrong result");
        if (f) {
            if (wrong)
                report_finding_add_evidence(f, "wrong elements", "%s", json_object_get_string(wrong));
            json_object *mm = jsonget(dev, "first_mismatches");
            for (size_t i = 0; json_object_is_type(mm, json_type_array) && i < json_object_array_length(mm) && i < 3;
                 i++) {
                json_object *m = json_object_array_get_idx(mm, i);
                json_object *exp = jsonget(m, "expected");
                report_finding_add_evidence(f, "mismatch", "%s %s pass, row %s, column %s: expected %s, got %s",
                                            jsonget_str(m, "precision"), jsonget_str(m, "pass"),
                                            json_object_get_string(jsonget(m, "row")),
                                            json_object_get_string(jsonget(m, "col")),
                                            exp ? json_object_get_string(exp) : "?", jsonget_str(m, "got_text"));
            }
            json_object *rt = jsonget(dev, "round_trip");
            if (rt && strcmp(jsonget_str(rt, "status") ? jsonget_str(rt, "status") : "", "fail") == 0)
                report_finding_add_evidence(f, "buffer round trip", "%s of %s bytes differ (in 32-bit words)",
                                            json_object_get_string(jsonget(rt, "wrong_words")),
                                            json_object_get_string(jsonget(rt, "bytes")));
            report_finding_set_hint(f,
                                    "Do not trust this device's results. Update or reinstall its OpenCL driver; if a "
                                    "GPU keeps failing (`gpucheckup smoke --device %d:%d`), check it for "
                                    "overheating, overclocking or bad memory.",
                                    t->platform, t->device);
        }
    }
    free(subject);
}

/* "fp32 pass, fp64 pass, fp16 unsupported" from D's precisions (typed, or as captured when they
 * had another shape). */
static void smoke_precisions_text(const struct result_smoke_dev *d, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t off = 0;
    if (d->have & RESULT_SMOKE_HAVE_PRECISIONS) {
        for (int p = 0; p < COMPUTE_N_PREC; p++) {
            if (d->prec[p] < 0)
                continue;
            int w = snprintf(buf + off, len - off, "%s%s %s", off ? ", " : "", gc_name(&compute_prec_names, p),
                             gc_name(&result_smoke_prec_status_names, d->prec[p]));
            if (w < 0 || (size_t)w >= len - off)
                break;
            off += (size_t)w;
        }
        return;
    }
    json_object_object_foreach(jsonget(d->rest, "precisions"), key, val)
    {
        int w = snprintf(buf + off, len - off, "%s%s %s", off ? ", " : "", key,
                         json_object_is_type(val, json_type_string) ? json_object_get_string(val) : "?");
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
}

/* ", 3.04 ms, 11.0 GFLOPS" (profiling), ", 21.4 ms (host clock), 0.8 GFLOPS", or the time with
 * "implausibly fast" when the speed is above the device's peak; "" when there is no time. */
static void smoke_speed_text(json_object *dev, char *buf, size_t len)
{
    const char *timer = jsonget_str(dev, "timer");
    buf[0] = '\0';
    if (!timer)
        return;
    bool host = strcmp(timer, "host") == 0;
    json_object *ms = jsonget(dev, host ? "host_ms" : "kernel_ms"), *gf = jsonget(dev, "gflops");
    if (!ms)
        return;
    char gtext[40];
    if (gf)
        snprintf(gtext, sizeof(gtext), "%.1f GFLOPS", json_object_get_double(gf));
    else
        snprintf(gtext, sizeof(gtext), "%s", jsonget_str(dev, "gflops_reason") ? "implausibly fast, no GFLOPS" : "no GFLOPS");
    snprintf(buf, len, ", %.2f ms%s, %s", json_object_get_double(ms), host ? " (host clock)" : "", gtext);
}

static void smoke_summary_line(struct report_section *sec, const struct result_smoke_dev *dev)
{
    const char *name = dev->name;
    int p = dev->platform_index, d = dev->device_index;
    const char *detail = dev->detail;
    if (dev->status == RESULT_SMOKE_PASS) {
        char prec[160];
        smoke_precisions_text(dev, prec, sizeof(prec));
        char speed[120] = "";
        smoke_speed_text(dev->rest, speed, sizeof(speed));
        report_section_add_line(sec, REPORT_MARK_OK, "OpenCL smoke", "%d:%d %s: pass, N=%s, %s%s", p, d, name ? name : "?",
                                json_object_get_string(jsonget(dev->rest, "n")), prec, speed);
    } else if (dev->status == RESULT_SMOKE_SKIPPED) {
        report_section_add_line(sec, REPORT_MARK_SKIP, "OpenCL smoke", "%d:%d %s: skipped, %s", p, d, name ? name : "?",
                                detail ? detail : "");
    } else {
        report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL smoke", "%d:%d %s: %s, %s", p, d, name ? name : "?",
                                gc_name(&result_smoke_status_names, (int)dev->status), detail ? detail : "");
    }
}

/* ---- The probe ----------------------------------------------------------------------------------- */

static int smoke_run(struct probe_ctx *ctx, struct report_section *sec)
{
    const struct cli_options *o = ctx->opts;
    const struct compute_options *so = compute_options();
    if (so->which == COMPUTE_WHICH_NONE) {
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "turned off (--smoke=none or --no-smoke)");
        return PROBE_DONE;
    }
    struct cldev_inventory inv;
    const char *source = NULL;
    int picked = cldev_pick_devices(ctx, sec, &inv, &source, so->which == COMPUTE_WHICH_GPU);
    if (picked <= 0)
        return picked < 0 ? PROBE_INPUT_ERROR : PROBE_DONE;

    size_t njobs = 0;
    for (size_t i = 0; i < inv.n_targets; i++)
        njobs += inv.targets[i].run;
    struct isolate_result *results = calloc(njobs ? njobs : 1, sizeof(*results));
    struct smoke_device_args *args = calloc(njobs ? njobs : 1, sizeof(*args));
    struct cldev_target **job_target = calloc(njobs ? njobs : 1, sizeof(*job_target));
    size_t *target_job = calloc(inv.n_targets ? inv.n_targets : 1, sizeof(*target_job));
    /* The stage each child reached, in memory it shares with us: survives its crash. */
    size_t shm_len = (njobs ? njobs : 1) * SMOKE_STAGE_MAX;
    char *stages = mmap(NULL, shm_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!results || !args || !job_target || !target_job || stages == MAP_FAILED) {
        free(results);
        free(args);
        free(job_target);
        free(target_job);
        if (stages != MAP_FAILED)
            munmap(stages, shm_len);
        cldev_inventory_free(&inv);
        ctx->error = str_dup("smoke: out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    memset(stages, 0, shm_len);
    size_t j = 0;
    for (size_t i = 0; i < inv.n_targets; i++) {
        if (!inv.targets[i].run)
            continue;
        args[j] = (struct smoke_device_args){.platform = inv.targets[i].platform,
                                             .device = inv.targets[i].device,
                                             .n = smoke_size_for(&inv.targets[i]),
                                             .stage = stages + j * SMOKE_STAGE_MAX};
        job_target[j] = &inv.targets[i];
        target_job[i] = j;
        j++;
    }

    struct smoke_progress pg = {.on = njobs > 0 && !o->quiet && isatty(STDERR_FILENO),
                                .total = njobs,
                                .targets = job_target};
    if (pg.on) {
        if (njobs == 1)
            fprintf(stderr, "smoke: testing %d:%d %s ...", job_target[0]->platform, job_target[0]->device,
                    job_target[0]->name ? job_target[0]->name : "");
        else
            fprintf(stderr, "smoke: testing %zu devices in parallel ...", njobs);
        fflush(stderr);
    }
    /* In a full check, the answers of the child the icd and opencl probes share, which tested the
     * devices with every driver already loaded (probes/clonce/clonce.c); for the others, one child per
     * platform, its devices side by side; a crash reruns them one child each. */
    smoke_shared_run(ctx, args, njobs, results, smoke_progress_done, &pg);
    if (pg.on) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }

    struct result_smoke *result = result_smoke_new();
    for (size_t i = 0; result && i < inv.n_targets; i++) {
        struct cldev_target *t = &inv.targets[i];
        const struct isolate_result *res = t->run ? &results[target_job[i]] : NULL;
        char stage[SMOKE_STAGE_MAX] = "";
        if (t->run) {
            memcpy(stage, stages + target_job[i] * SMOKE_STAGE_MAX, SMOKE_STAGE_MAX);
            stage[SMOKE_STAGE_MAX - 1] = '\0';
            str_sanitize(stage);
        }
        struct result_smoke_dev *dev = result_smoke_add_dev(result);
        if (!dev) {
            result_smoke_ops.free(result);
            result = NULL;
            break;
        }
        smoke_device_fill(dev, t, res, stage, smoke_size_for(t));
        smoke_findings(ctx, t, dev, res);
        smoke_summary_line(sec, dev);
    }
    if (inv.n_targets == 0) /* why is the opencl and icd findings' to say, at their severity */
        report_section_add_line(sec, REPORT_MARK_INFO, "OpenCL smoke", "no OpenCL device to test");

    int rc = PROBE_DONE;
    if (result) {
        result->have = RESULT_SMOKE_HAVE_SOURCE | RESULT_SMOKE_HAVE_N | RESULT_SMOKE_HAVE_SELECTION |
                       RESULT_SMOKE_HAVE_DEVICES;
        result->source = str_dup(source);
        result->n = so->size;
        result->selection = so->which == COMPUTE_WHICH_GPU ? RESULT_SMOKE_SEL_GPU : RESULT_SMOKE_SEL_ALL;
        report_section_set_result(sec, &result_smoke_ops, result);
        report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    } else {
        ctx->error = str_dup("smoke: out of memory");
        rc = PROBE_INTERNAL_ERROR;
    }

    for (size_t i = 0; i < njobs; i++)
        isolate_result_clear(&results[i]);
    munmap(stages, shm_len);
    free(results);
    free(args);
    free(job_target);
    free(target_job);
    cldev_inventory_free(&inv);
    return rc;
}

/* ---- Text details ---------------------------------------------------------------------------------- */

static void smoke_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    const struct result_smoke *res = sec->result_ops == &result_smoke_ops ? sec->result : NULL;
    text_heading(t, "Smoke test");
    char nbuf[32] = "?";
    if (res && (res->have & RESULT_SMOKE_HAVE_N))
        snprintf(nbuf, sizeof(nbuf), "%lld", (long long)res->n);
    text_kv(t, "matrix size", "N = %s", nbuf);
    text_kv(t, "devices from", "%s", res && res->source ? res->source : "?");
    size_t n = res ? res->n_devs : 0;
    if (n == 0)
        fprintf(t->f, "  no OpenCL device to test\n");
    for (size_t i = 0; i < n; i++) {
        const struct result_smoke_dev *dv = &res->devs[i];
        json_object *d = dv->rest; /* the measurements */
        bool known = dv->have & RESULT_SMOKE_HAVE_STATUS;
        const char *status = known ? gc_name(&result_smoke_status_names, (int)dv->status) : "?";
        enum report_mark m = known && dv->status == RESULT_SMOKE_PASS      ? REPORT_MARK_OK
                             : known && dv->status == RESULT_SMOKE_SKIPPED ? REPORT_MARK_SKIP
                                                                           : REPORT_MARK_ERROR;
        const char *pci = dv->pci_address;
        fprintf(t->f, "\n  %s %d:%d %s%s%s%s\n", text_mark(t, m), dv->platform_index, dv->device_index,
                dv->name ? dv->name : "(no name)", pci ? " [" : "", pci ? pci : "", pci ? "]" : "");
        text_kv(t, "status", "%s", status);
        if (dv->detail)
            text_kv(t, "detail", "%s", dv->detail);
        if (known && dv->status == RESULT_SMOKE_SKIPPED)
            continue;
        char prec[160];
        smoke_precisions_text(dv, prec, sizeof(prec));
        text_kv(t, "precisions", "%s", prec);
        json_object *v;
        if ((v = jsonget(d, "build_ms")))
            text_kv(t, "kernel build", "%.1f ms", json_object_get_double(v));
        const char *timer = jsonget_str(d, "timer");
        if (timer) {
            bool host = strcmp(timer, "host") == 0;
            json_object *km = jsonget(d, "kernel_ms"), *hm = jsonget(d, "host_ms"), *gf = jsonget(d, "gflops");
            v = host ? hm : km;
            text_kv(t, "fp32 kernel", "%.3f ms by the %s clock (%s GFLOPS)", v ? json_object_get_double(v) : 0.0,
                    host ? "host" : "profiling", gf ? json_object_get_string(gf) : "no");
            if (host)
                text_kv(t, "profiling clock", "%s ms: %s", km ? json_object_get_string(km) : "unreadable",
                        compute_timer_why_text(compute_timer_why_parse(jsonget_str(d, "timer_reason"))));
            else if (t->verbose > 0 && hm)
                text_kv(t, "host clock", "%.3f ms (launch and wait included)", json_object_get_double(hm));
            if (jsonget_str(d, "gflops_reason"))
                text_kv(t, "speed", "%s", jsonget_str(d, "gflops_reason"));
            if ((v = jsonget(d, "peak_gflops")) && t->verbose > 0)
                text_kv(t, "plausible peak", "%s GFLOPS", json_object_get_string(v));
        }
        if ((v = jsonget(d, "max_error")))
            text_kv(t, "fp32 max error", "%s", json_object_get_string(v));
        if ((v = jsonget(d, "wrong_elements")))
            text_kv(t, "wrong elements", "%s", json_object_get_string(v));
        json_object *rt = jsonget(d, "round_trip");
        if (rt)
            text_kv(t, "buffer round trip", "%s (%s bytes, %s words differ)", jsonget_str(rt, "status"),
                    json_object_get_string(jsonget(rt, "bytes")), json_object_get_string(jsonget(rt, "wrong_words")));
        json_object *passes = jsonget(d, "passes");
        for (size_t k = 0; t->verbose > 0 && json_object_is_type(passes, json_type_array) &&
                           k < json_object_array_length(passes);
             k++) {
            json_object *p = json_object_array_get_idx(passes, k);
            char key[40];
            const char *prec = jsonget_str(p, "precision"), *kind = jsonget_str(p, "kind");
            const char *pst = jsonget_str(p, "status");
            snprintf(key, sizeof(key), "%s %s pass", prec ? prec : "?", kind ? kind : "?");
            json_object *km = jsonget(p, "kernel_ms"), *me = jsonget(p, "max_error"), *tol = jsonget(p, "tolerance");
            json_object *hm = jsonget(p, "host_ms");
            text_kv(t, key, "%s, kernel %s ms (host %s ms), max error %s (tolerance %s)", pst ? pst : "?",
                    km ? json_object_get_string(km) : "?", hm ? json_object_get_string(hm) : "?",
                    me ? json_object_get_string(me) : "?",
                    tol ? json_object_get_string(tol) : "?");
        }
        json_object *mm = jsonget(d, "first_mismatches");
        for (size_t k = 0; json_object_is_type(mm, json_type_array) && k < json_object_array_length(mm); k++) {
            json_object *m = json_object_array_get_idx(mm, k);
            json_object *exp = jsonget(m, "expected");
            text_kv(t, k == 0 ? "mismatches" : "", "%s %s, row %s, col %s: expected %s, got %s",
                    jsonget_str(m, "precision"), jsonget_str(m, "pass"), json_object_get_string(jsonget(m, "row")),
                    json_object_get_string(jsonget(m, "col")), exp ? json_object_get_string(exp) : "?",
                    jsonget_str(m, "got_text"));
        }
        const char *log = jsonget_str(d, "build_log");
        if (log && *log) {
            fprintf(t->f, "  build log:\n");
            const char *p = log;
            for (int line = 0; p && *p && (line < 20 || t->verbose > 0); line++) {
                const char *nl = strchr(p, '\n');
                fprintf(t->f, "    %.*s\n", (int)(nl ? (size_t)(nl - p) : strlen(p)), p);
                p = nl ? nl + 1 : NULL;
            }
        }
    }
}

/* smoke_verdict.c */
struct doctor_lines;
void smoke_verdict(struct report *r, struct doctor_lines *out);

/* Today's summary label for one an older gpucheckup wrote (struct probe.label_today). */
static char *smoke_label_today(const char *label)
{
    static const struct report_label_rename renamed[] = {{"Smoke", "OpenCL smoke"}};
    return report_label_renamed(renamed, sizeof(renamed) / sizeof(renamed[0]), label);
}

const struct probe probe_smoke = {
    .name = "smoke",
    .clonce_part = &smoke_clonce_part,
    .stack = PROBE_STACK_OPENCL,
    .label_today = smoke_label_today,
    .compute_api = "opencl",
    .compute_api_label = "OpenCL",
    .title = "a small matrix multiply on each OpenCL device, checked exactly",
    .needs_live = true,
    .deps = smoke_deps,
    .checks = smoke_checks,
    .n_checks = sizeof(smoke_checks) / sizeof(smoke_checks[0]),
    .options = smoke_option_rows,
    .options_title = "Smoke test",
    .options_reset = smoke_options_reset,
    .result = &result_smoke_ops,
    .run = smoke_run,
    .verdict = smoke_verdict,
    .print_text = smoke_print_text,
};
