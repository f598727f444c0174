/* health_aer.c: the PCIe AER error counters (sysfs aer_dev_*) of each GPU and of each bridge above it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"

/* The three files (the kernel's Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats): lines
 * "NAME COUNT", the last "TOTAL_ERR_COR N", "TOTAL_ERR_FATAL N" or "TOTAL_ERR_NONFATAL N". */
static const struct {
    const char *file, *key, *total;
} health_aer_files[] = {
    {"aer_dev_correctable", "correctable", "TOTAL_ERR_COR"},
    {"aer_dev_nonfatal", "nonfatal", "TOTAL_ERR_NONFATAL"},
    {"aer_dev_fatal", "fatal", "TOTAL_ERR_FATAL"},
};

enum { HEALTH_AER_COR, HEALTH_AER_NONFATAL, HEALTH_AER_FATAL };

struct health_aer_dev {
    bool have[3];
    uint64_t total[3];
    char named[3][160]; /* the nonzero counters: "SurpriseDown 1, DLP 2" */
};

/* Parse one file's text: 0 with the total and the nonzero names, -1 when it has no TOTAL line. */
static int health_aer_parse(char *text, const char *total_key, uint64_t *total, char *named, size_t named_size)
{
    bool found = false;
    named[0] = '\0';
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[48];
        unsigned long long v;
        if (sscanf(line, "%47s %llu", name, &v) != 2)
            continue;
        if (strcmp(name, total_key) == 0) {
            *total = v;
            found = true;
        } else if (v > 0 && strlen(named) + strlen(name) + 24 < named_size) {
            size_t at = strlen(named);
            snprintf(named + at, named_size - at, "%s%s %llu", at ? ", " : "", name, v);
        }
    }
    return found ? 0 : -1;
}

static void health_aer_read(struct probe_ctx *ctx, const char *addr, struct health_aer_dev *a)
{
    memset(a, 0, sizeof(*a));
    for (int k = 0; k < 3; k++) {
        char *path = str_printf("/sys/bus/pci/devices/%s/%s", addr, health_aer_files[k].file), *text = NULL;
        if (path && hostfs_read_file(ctx->fs, path, 64 * 1024, &text, NULL) == 0)
            a->have[k] = health_aer_parse(text, health_aer_files[k].total, &a->total[k], a->named[k], sizeof(a->named[k])) == 0;
        str_sanitize(a->named[k]);
        free(text);
        free(path);
    }
}

static json_object *health_aer_json(const char *addr, const char *role, const struct health_aer_dev *a)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "device", json_object_new_string(addr));
    json_object_object_add(o, "role", json_object_new_string(role));
    for (int k = 0; k < 3; k++)
        json_object_object_add(o, health_aer_files[k].key, a->have[k] ? json_object_new_int64((int64_t)a->total[k]) : NULL);
    json_object_object_add(o, "fatal_counters", jsonstr_or_null(a->named[HEALTH_AER_FATAL][0] ? a->named[HEALTH_AER_FATAL] : NULL));
    json_object_object_add(o, "nonfatal_counters", jsonstr_or_null(a->named[HEALTH_AER_NONFATAL][0] ? a->named[HEALTH_AER_NONFATAL] : NULL));
    return o;
}

/* The link's state from the pci section's link object: "PCIe 8.0 GT/s x4 of 16.0 GT/s x16" (heap). */
static char *health_link_words(json_object *link)
{
    double cs = 0, ms = 0, cw = 0, mw = 0;
    if (!link || !jsonget_num(link, "current_speed", &cs) || !jsonget_num(link, "max_speed", &ms) ||
        !jsonget_num(link, "current_width", &cw) || !jsonget_num(link, "max_width", &mw))
        return str_dup("link state unknown");
    return str_printf("link at %.1f GT/s x%.0f of %.1f GT/s x%.0f%s", cs, cw, ms, mw,
                      cs < ms || cw < mw ? " (degraded)" : "");
}

/* The ID of ADDR's non-fatal count N: a warning when repeated (three or more, as the kernel log's events) or
 * logged within the hour, or when no log dates it; information when the log shows it old, or it is older
 * than the log's oldest record. The counters are since boot: one error of last week is history. */
static const char *health_aer_nonfatal_id(const struct health_log *log, const char *addr, uint64_t n)
{
    return n >= 3 || health_log_nonfatal_hot(log, addr) != 0 ? "health.pcie-uncorrected" : "health.pcie-uncorrected-past";
}

/* The findings of one device's counters. */
static void health_aer_findings(struct probe_ctx *ctx, const struct health_log *log, const struct health_gpu *g,
                                const char *addr, bool on_gpu, const struct health_aer_dev *a)
{
    const char *where = on_gpu ? "GPU" : "bridge";
    char *above = on_gpu ? str_dup("") : str_printf(" above GPU %s", g->addr);
    struct report_finding *f = NULL;
    if (a->total[HEALTH_AER_FATAL] > 0) {
        f = report_add_finding(ctx->report, on_gpu ? "health.pcie-fatal" : "health.pcie-uncorrected", g->addr,
                               "PCIe: %s %s%s counted %llu fatal uncorrectable error%s since boot (TOTAL_ERR_FATAL%s%s)", where,
                               addr, above, (unsigned long long)a->total[HEALTH_AER_FATAL], a->total[HEALTH_AER_FATAL] == 1 ? "" : "s",
                               a->named[HEALTH_AER_FATAL][0] ? ": " : "", a->named[HEALTH_AER_FATAL]);
        if (f)
            report_finding_add_evidence(f, "aer_dev_fatal", "%s: TOTAL_ERR_FATAL %llu", addr, (unsigned long long)a->total[HEALTH_AER_FATAL]);
    }
    if (a->total[HEALTH_AER_NONFATAL] > 0) {
        f = report_add_finding(ctx->report, health_aer_nonfatal_id(log, addr, a->total[HEALTH_AER_NONFATAL]), g->addr,
                               "PCIe: %s %s%s counted %llu non-fatal uncorrectable error%s since boot (TOTAL_ERR_NONFATAL%s%s)", where,
                               addr, above, (unsigned long long)a->total[HEALTH_AER_NONFATAL], a->total[HEALTH_AER_NONFATAL] == 1 ? "" : "s",
                               a->named[HEALTH_AER_NONFATAL][0] ? ": " : "", a->named[HEALTH_AER_NONFATAL]);
        if (f)
            report_finding_add_evidence(f, "aer_dev_nonfatal", "%s: TOTAL_ERR_NONFATAL %llu", addr, (unsigned long long)a->total[HEALTH_AER_NONFATAL]);
    }
    if (a->total[HEALTH_AER_COR] >= 100) {
        char *lw = health_link_words(on_gpu ? g->link : NULL);
        f = report_add_finding(ctx->report, "health.pcie-corrected", g->addr, "PCIe: %s %s%s corrected %llu errors since boot%s%s",
                               where, addr, above, (unsigned long long)a->total[HEALTH_AER_COR], on_gpu ? "; " : "", on_gpu ? lw : "");
        if (f)
            report_finding_add_evidence(f, "aer_dev_correctable", "%s: TOTAL_ERR_COR %llu", addr, (unsigned long long)a->total[HEALTH_AER_COR]);
        free(lw);
    }
    free(above);
}

void health_aer_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_log *log,
                       const struct health_gpu *gpus, size_t n_gpus, json_object *gpus_json)
{
    size_t devs = 0, bridges = 0, with_errors = 0;
    char list[200] = "";
    for (size_t i = 0; i < n_gpus; i++) {
        json_object *arr = health_array_member(json_object_array_get_idx(gpus_json, i), "aer");
        for (size_t b = 0; b <= gpus[i].n_bridges; b++) {
            const char *addr = b == 0 ? gpus[i].addr : gpus[i].bridges[b - 1];
            struct health_aer_dev a;
            health_aer_read(ctx, addr, &a);
            json_object_array_add(arr, health_aer_json(addr, b == 0 ? "gpu" : "bridge", &a));
            if (!a.have[0] && !a.have[1] && !a.have[2])
                continue;
            devs++;
            bridges += b > 0;
            health_aer_findings(ctx, log, &gpus[i], addr, b == 0, &a);
            if (a.total[HEALTH_AER_FATAL] + a.total[HEALTH_AER_NONFATAL] > 0 && strlen(list) + 64 < sizeof(list)) {
                size_t at = strlen(list);
                snprintf(list + at, sizeof(list) - at, "%s%s fatal %llu, non-fatal %llu", with_errors ? "; " : "", addr,
                         (unsigned long long)a.total[HEALTH_AER_FATAL], (unsigned long long)a.total[HEALTH_AER_NONFATAL]);
                with_errors++;
            }
        }
    }
    if (n_gpus == 0)
        return;
    if (devs == 0)
        report_section_add_line(sec, REPORT_MARK_INFO, "PCIe errors", "no AER counters for the GPU%s (AER off, or not PCIe)",
                                n_gpus == 1 ? "" : "s");
    else if (with_errors == 0)
        report_section_add_line(sec, REPORT_MARK_OK, "PCIe errors", "none uncorrectable on %zu GPU%s and %zu bridge%s above",
                                devs - bridges, devs - bridges == 1 ? "" : "s", bridges, bridges == 1 ? "" : "s");
    else
        report_section_add_line(sec, report_find_finding(ctx->report, "health.pcie-fatal", NULL)          ? REPORT_MARK_ERROR
                                     : report_find_finding(ctx->report, "health.pcie-uncorrected", NULL) ? REPORT_MARK_WARN
                                                                                                         : REPORT_MARK_INFO,
                                "PCIe errors", "%s", list);
}
