/* write_prometheus.c: the Prometheus writer (--format=prometheus) for node_exporter's textfile collector. */
#include "writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "jsonget.h"
#include "compute_path.h"

/* The text exposition format (https://prometheus.io/docs/instrumenting/exposition_formats/): one
 * "# HELP" and one "# TYPE" line per metric family, then its samples; a label value escapes
 * backslash, double quote and line feed as \\, \" and \n; a HELP text escapes backslash and line
 * feed. Every metric is a gauge of this run; every family keeps the same label names in every run,
 * so dashboards and alerts can rely on them. node_exporter's textfile collector reads *.prom files
 * and rejects the whole file on a duplicate series, so each series below is unique by its labels. */

#define PROM_PREFIX "gpucheckup_"

static void prom_family(FILE *f, const char *name, const char *help)
{
    fprintf(f, "# HELP " PROM_PREFIX "%s %s\n# TYPE " PROM_PREFIX "%s gauge\n", name, help, name);
}

/* A label value, escaped (NULL as ""). */
static void prom_label_value(FILE *f, const char *v)
{
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '"')
            fputs("\\\"", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
}

/* NAME{k1="v1",k2="v2"...} VALUE: LABELS is NULL-terminated pairs of name and value. */
static void prom_sample(FILE *f, const char *name, const char *const *labels, double value)
{
    fprintf(f, PROM_PREFIX "%s", name);
    if (labels && labels[0]) {
        fputc('{', f);
        for (size_t i = 0; labels[i]; i += 2) {
            fprintf(f, "%s%s=\"", i ? "," : "", labels[i]);
            prom_label_value(f, labels[i + 1]);
            fputc('"', f);
        }
        fputc('}', f);
    }
    if (isfinite(value))
        fprintf(f, " %.10g\n", value);
    else
        fputs(" NaN\n", f);
}

/* Each device a compute test ran on (compute_path.h: any API): its labels and figures. */
struct prom_dev {
    const char *api;
    const char *device; /* the API's own name of it: "P:D" (OpenCL platform:device index), a CUDA ordinal */
    const char *name;
    const char *pci;
    bool pass;       /* its compute test passed */
    json_object *o;  /* its measurements */
};

static size_t prom_devices(const struct compute_paths *ps, struct prom_dev *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->n && n < max; i++) {
        const struct compute_path *p = &ps->v[i];
        if (p->proof == COMPUTE_UNTESTED)
            continue;
        out[n++] = (struct prom_dev){.api = p->api, .device = p->device, .name = p->name, .pci = p->pci_address,
                                     .pass = p->proof == COMPUTE_PASSED, .o = p->measurements};
    }
    return n;
}

/* A per-device family: the devices that have KEY (times SCALE). */
static void prom_smoke_family(FILE *f, const struct prom_dev *devs, size_t n, const char *name, const char *help,
                              const char *key, double scale)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        double v;
        bool have = key ? jsonget_num(devs[i].o, key, &v) : true;
        if (!key)
            v = devs[i].pass ? 1 : 0;
        if (!have)
            continue;
        if (!any)
            prom_family(f, name, help);
        any = true;
        const char *labels[] = {"api", devs[i].api, "device", devs[i].device, "name", devs[i].name,
                                "pci_address", devs[i].pci, NULL};
        prom_sample(f, name, labels, v * scale);
    }
}

/* A probe's own series: the generic "metrics" array of its section's data (docs/formats.md), each item
 * {"name", "help", "labels": {label: string}, "value": number}. Any probe may fill it; this writer names none.
 * Families are printed whole (sorted by name), each item checked: a malformed one is left out. */
#define PROM_MAX_METRICS 1024
struct prom_metric {
    const char *name;
    json_object *o;
    size_t order;
};

static int prom_metric_cmp(const void *a, const void *b)
{
    const struct prom_metric *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* [a-z_][a-z0-9_]* (the exposition format's names, lower case, no colon), under 64 bytes. */
static bool prom_metric_name_ok(const char *n)
{
    return n && *n && strlen(n) < 64 && !(*n >= '0' && *n <= '9') &&
           strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(n);
}

static void prom_section_metrics(FILE *f, const struct report *r)
{
    struct prom_metric *ms = calloc(PROM_MAX_METRICS, sizeof(*ms));
    size_t n = 0;
    for (size_t i = 0; ms && i < r->n_sections; i++) {
        size_t k = 0;
        json_object *a = r->sections[i].status == REPORT_STATUS_OK ? jsonget_array(r->sections[i].data, "metrics", &k)
                                                                  : NULL;
        for (size_t j = 0; a && j < k && n < PROM_MAX_METRICS; j++) {
            json_object *m = json_object_array_get_idx(a, j);
            const char *name = jsonget_str(m, "name");
            double v;
            if (prom_metric_name_ok(name) && jsonget_str(m, "help") && jsonget_num(m, "value", &v))
            {
                ms[n] = (struct prom_metric){.name = name, .o = m, .order = n};
                n++;
            }
        }
    }
    if (ms)
        qsort(ms, n, sizeof(*ms), prom_metric_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(ms[i].name, ms[i - 1].name) != 0)
            prom_family(f, ms[i].name, jsonget_str(ms[i].o, "help"));
        const char *labels[2 * 8 + 1] = {NULL};
        size_t nl = 0;
        json_object *lo = jsonget(ms[i].o, "labels");
        if (lo && json_object_is_type(lo, json_type_object)) {
            json_object_object_foreach(lo, key, val) {
                if (nl < 2 * 8 && prom_metric_name_ok(key) && json_object_is_type(val, json_type_string)) {
                    labels[nl++] = key;
                    labels[nl++] = json_object_get_string(val);
                }
            }
        }
        labels[nl] = NULL;
        double v = 0;
        jsonget_num(ms[i].o, "value", &v);
        prom_sample(f, ms[i].name, labels, v);
    }
    free(ms);
}

int write_prometheus(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run)
{
    const char *info[] = {"version", GPUCHECKUP_VERSION, "command", o->command, NULL};
    prom_family(f, "info", "gpucheckup's version and the command that wrote this file (always 1).");
    prom_sample(f, "info", info, 1);

    prom_family(f, "ready", "1 when the machine is ready (no error finding, every --require met), else 0.");
    prom_sample(f, "ready", NULL, report_is_ready(r) ? 1 : 0);
    prom_family(f, "exit_code", "gpucheckup's exit status: 0 ready, 1 not ready.");
    prom_sample(f, "exit_code", NULL, run->exit_code);

    prom_family(f, "findings", "Number of findings by severity.");
    for (int sev = REPORT_SEV_ERROR; sev >= REPORT_SEV_INFO; sev--) {
        const char *labels[] = {"severity", report_severity_name((enum report_severity)sev), NULL};
        prom_sample(f, "findings", labels, (double)report_count_severity(r, (enum report_severity)sev));
    }

    /* one series per finding ID and subject; its value counts the findings with both */
    if (r->n_findings)
        prom_family(f, "check",
                    "Findings of this run, one series per finding ID and subject (see gpucheckup(1)); "
                    "the value counts them.");
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *fi = r->findings[i];
        const char *subj = fi->subject ? fi->subject : "";
        bool seen = false;
        size_t count = 0;
        for (size_t j = 0; j < r->n_findings; j++) {
            const char *sj = r->findings[j]->subject ? r->findings[j]->subject : "";
            if (strcmp(r->findings[j]->id, fi->id) == 0 && strcmp(sj, subj) == 0) {
                if (j < i)
                    seen = true;
                count++;
            }
        }
        if (seen)
            continue;
        const char *labels[] = {"id", fi->id, "subject", subj, "severity", report_severity_name(fi->severity), NULL};
        prom_sample(f, "check", labels, (double)count);
    }

    if (r->targets && json_object_object_length(r->targets) > 0) {
        prom_family(f, "target_ready",
                    "1 when the verdict target named by the target label is ready (the probes that ran set "
                    "them: gpu, each compute API, each framework, cpu_avx; gpucheckup(1) lists them).");
        json_object_object_foreach(r->targets, name, t)
        {
            json_object *ready = jsonget(t, "ready");
            const char *labels[] = {"target", name, NULL};
            prom_sample(f, "target_ready", labels, ready && json_object_get_boolean(ready) ? 1 : 0);
        }
    }
    if (r->n_requirements)
        prom_family(f, "requirement_met", "1 when the --require item is met.");
    for (size_t i = 0; i < r->n_requirements; i++) {
        bool seen = false; /* --require gpu,gpu: one series */
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(r->requirements[j].name, r->requirements[i].name) == 0;
        if (seen)
            continue;
        const char *labels[] = {"requirement", r->requirements[i].name, NULL};
        prom_sample(f, "requirement_met", labels, r->requirements[i].met ? 1 : 0);
    }

    if (r->n_sections) {
        prom_family(f, "probe_ok", "1 when the probe ran to completion; 0 when skipped, not applicable or failed.");
        for (size_t i = 0; i < r->n_sections; i++) {
            const char *labels[] = {"probe", r->sections[i].name, NULL};
            prom_sample(f, "probe_ok", labels, r->sections[i].status == REPORT_STATUS_OK ? 1 : 0);
        }
        prom_family(f, "probe_duration_seconds", "How long each probe took.");
        for (size_t i = 0; i < r->n_sections; i++) {
            const char *labels[] = {"probe", r->sections[i].name, NULL};
            prom_sample(f, "probe_duration_seconds", labels, r->sections[i].duration_ms / 1000.0);
        }
    }

    prom_section_metrics(f, r);

    struct prom_dev devs[256];
    struct compute_paths ps = compute_paths_of(r);
    size_t n = prom_devices(&ps, devs, sizeof(devs) / sizeof(devs[0]));
    prom_smoke_family(f, devs, n, "smoke_pass",
                      "1 when the device's smoke test (a matrix product checked exactly) passed, else 0.", NULL, 1);
    prom_smoke_family(f, devs, n, "smoke_gflops", "GFLOPS of the device's smoke-test matrix product.", "gflops", 1);
    prom_smoke_family(f, devs, n, "smoke_kernel_seconds", "Time of the smoke-test kernel on the device.",
                      "kernel_ms", 1e-3);
    compute_paths_free(&ps);

    prom_family(f, "run_duration_seconds", "How long the run took.");
    prom_sample(f, "run_duration_seconds", NULL, run->duration_s);
    prom_family(f, "run_timestamp_seconds", "When the run began, seconds since the Unix epoch.");
    fprintf(f, PROM_PREFIX "run_timestamp_seconds %.3f\n", run->started_s);
    return ferror(f) ? -1 : 0;
}
