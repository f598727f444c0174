/* health_report.c: the kernel log's GPU events tied to the GPUs of the pci section, judged into findings, JSON and a summary line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"

/* The rule (docs/guide.md, "Health"): an event is CURRENT when its driver has not been loaded again since
 * (a later "loading NVIDIA UNIX", "[drm] Initialized amdgpu|i915|xe"; the DRM drivers print theirs at the
 * end of their initialisation, so what came up to a minute before it belongs to that load), and HOT when current and either
 * recent (its last time within the hour before now, /proc/uptime) or repeated (three times or more).
 * An application's Xid is information whatever it is; the GPU's or the system's (Xid 48, 79, ...;
 * fallen off the bus) are errors when hot, warnings otherwise; the driver's, hangs and resets are warnings
 * when hot, information otherwise. A fatal PCIe error on the GPU itself is an error, an uncorrectable one
 * elsewhere (a fatal one on a bridge above it, a hot non-fatal one) a warning, a non-fatal one neither
 * recent nor repeated information, many correctable ones information. */
#define HEALTH_RECENT_USEC (3600ull * 1000000ull)
#define HEALTH_INIT_USEC (60ull * 1000000ull)
#define HEALTH_REPEATED 3
#define HEALTH_CORRECTED_MANY 100

static bool health_hot(const struct health_log *log, const struct health_event *e)
{
    bool current = e->m.family == HEALTH_F_NONE || log->loaded_usec[e->m.family] <= e->last_usec + HEALTH_INIT_USEC;
    bool recent = log->now_usec >= e->last_usec && log->now_usec - e->last_usec <= HEALTH_RECENT_USEC;
    const struct health_xid *x = e->m.kind == HEALTH_K_XID ? health_xid_find(e->m.xid) : NULL;
    if (x && x->repeat_only)
        recent = false; /* the GPU contained it: only repeats count */
    return current && (recent || e->count >= HEALTH_REPEATED);
}

/* The finding ID of event E on a GPU (ON_GPU: the GPU itself, not a bridge above it), or NULL for none. */
static const char *health_event_id(const struct health_log *log, const struct health_event *e, bool on_gpu)
{
    bool hot = health_hot(log, e);
    const struct health_xid *x = e->m.kind == HEALTH_K_XID ? health_xid_find(e->m.xid) : NULL;
    switch (e->m.kind) {
    case HEALTH_K_XID:
        if (!x)
            return "health.gpu-event-past";
        if (x->blame == HEALTH_B_APP)
            return "health.xid-application";
        if (x->blame == HEALTH_B_DRIVER)
            return hot ? "health.driver-error" : "health.gpu-event-past";
        return hot ? "health.gpu-error" : "health.gpu-error-past";
    case HEALTH_K_OFF_BUS:
        return hot ? "health.gpu-error" : "health.gpu-error-past";
    case HEALTH_K_INIT_FAILED:
    case HEALTH_K_API_MISMATCH:
        return hot ? "health.driver-error" : "health.gpu-event-past";
    case HEALTH_K_HANG:
    case HEALTH_K_RESET:
        return hot ? "health.gpu-hang" : "health.gpu-event-past";
    case HEALTH_K_FIRMWARE:
        return health_hot(log, &(struct health_event){.m = e->m, .count = HEALTH_REPEATED, .last_usec = e->last_usec})
                   ? "health.firmware-load-failed" : "health.gpu-event-past";
    case HEALTH_K_KFD:
        return "health.kfd-unsupported";
    case HEALTH_K_AER_FATAL:
        return on_gpu ? "health.pcie-fatal" : "health.pcie-uncorrected";
    case HEALTH_K_AER_NONFATAL: /* one failed transaction on a link that stays up: old and single, history */
        return hot ? "health.pcie-uncorrected" : "health.pcie-uncorrected-past";
    case HEALTH_K_AER_CORRECTED:
        return e->count >= HEALTH_CORRECTED_MANY ? "health.pcie-corrected" : NULL;
    default:
        return NULL;
    }
}

int health_log_nonfatal_hot(const struct health_log *log, const char *addr)
{
    if (strcmp(log->source, "none") == 0 || log->capped || log->lost || log->events_dropped)
        return -1;
    for (size_t i = 0; i < log->n_events; i++) {
        const struct health_event *e = &log->events[i];
        if (e->m.kind == HEALTH_K_AER_NONFATAL && strcmp(e->m.addr, addr) == 0 && health_hot(log, e))
            return 1;
    }
    return 0;
}

/* "Xid 79 (GPU has fallen off the bus ...)", "PCIe fatal error" ...: what E is, for people (heap). */
static char *health_event_words(const struct health_event *e)
{
    static const char *const words[] = {
        [HEALTH_K_OFF_BUS] = "GPU has fallen off the bus", [HEALTH_K_INIT_FAILED] = "the NVIDIA driver could not initialise the GPU (RmInitAdapter failed)",
        [HEALTH_K_API_MISMATCH] = "NVIDIA driver API mismatch (library and kernel module versions differ)",
        [HEALTH_K_HANG] = "GPU hang", [HEALTH_K_RESET] = "GPU reset", [HEALTH_K_FIRMWARE] = "GPU firmware failed to load",
        [HEALTH_K_KFD] = "the GPU is not supported by amdkfd (no ROCm compute)",
        [HEALTH_K_AER_FATAL] = "PCIe uncorrectable (fatal) error", [HEALTH_K_AER_NONFATAL] = "PCIe uncorrectable (non-fatal) error",
        [HEALTH_K_AER_CORRECTED] = "PCIe corrected errors"};
    if (e->m.kind == HEALTH_K_XID) {
        const struct health_xid *x = health_xid_find(e->m.xid);
        static const char *const whose[] = {"unknown", "the program's", "the driver's", "the GPU's",
                                            "the system's: its bus, power or cooling"};
        return x ? str_printf("Xid %d (%s; usually %s)", e->m.xid, x->meaning, whose[x->blame])
                 : str_printf("Xid %d (not in gpucheckup's table: see NVIDIA's Xid catalogue)", e->m.xid);
    }
    return str_dup(e->m.kind < sizeof(words) / sizeof(words[0]) && words[e->m.kind] ? words[e->m.kind] : "event");
}

/* "3 times, last 5 min ago (3,400 s after boot)" (heap). */
static char *health_event_when(const struct health_log *log, const struct health_event *e)
{
    char ago[64] = "";
    if (log->have_now && log->now_usec >= e->last_usec) {
        uint64_t s = (log->now_usec - e->last_usec) / 1000000;
        if (s < 120)
            snprintf(ago, sizeof(ago), "%llu s ago, ", (unsigned long long)s);
        else if (s < 7200)
            snprintf(ago, sizeof(ago), "%llu min ago, ", (unsigned long long)(s / 60));
        else
            snprintf(ago, sizeof(ago), "%llu h ago, ", (unsigned long long)(s / 3600));
    }
    return str_printf("%zu time%s, last %s%.1f s after boot", e->count, e->count == 1 ? "" : "s", ago,
                      (double)e->last_usec / 1e6);
}

static json_object *health_event_json(const struct health_log *log, const struct health_event *e, const char *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(health_kind_name(e->m.kind)));
    const struct health_xid *x = e->m.kind == HEALTH_K_XID ? health_xid_find(e->m.xid) : NULL;
    json_object_object_add(o, "xid", e->m.kind == HEALTH_K_XID ? json_object_new_int(e->m.xid) : NULL);
    json_object_object_add(o, "blame", e->m.kind == HEALTH_K_XID ? json_object_new_string(health_blame_name(x ? x->blame : HEALTH_B_UNKNOWN)) : NULL);
    json_object_object_add(o, "driver", jsonstr_or_null(health_family_name(e->m.family)));
    json_object_object_add(o, "device", jsonstr_or_null(e->m.addr[0] ? e->m.addr : NULL));
    json_object_object_add(o, "count", json_object_new_int64((int64_t)e->count));
    json_object_object_add(o, "first_s", json_object_new_double((double)e->first_usec / 1e6));
    json_object_object_add(o, "last_s", json_object_new_double((double)e->last_usec / 1e6));
    json_object_object_add(o, "hot", json_object_new_boolean(health_hot(log, e)));
    json_object_object_add(o, "finding", jsonstr_or_null(id));
    json_object_object_add(o, "message", jsonstr_sanitized(e->sample));
    return o;
}

/* The GPU event E is about: its index in GPUS, or -1. *ON_GPU: the GPU itself (not a bridge above it). */
static int health_event_gpu(const struct health_event *e, const struct health_gpu *gpus, size_t n, bool *on_gpu)
{
    static const char *const vendor_of[HEALTH_F_N] = {NULL, "10de", "1002", "8086", "8086"};
    *on_gpu = true;
    for (size_t i = 0; e->m.addr[0] && i < n; i++)
        if (e->m.addr_no_func ? strncmp(gpus[i].addr, e->m.addr, 10) == 0 : strcmp(gpus[i].addr, e->m.addr) == 0)
            return (int)i;
    for (size_t i = 0; e->m.addr[0] && i < n; i++)
        for (size_t b = 0; b < gpus[i].n_bridges; b++)
            if (strcmp(gpus[i].bridges[b], e->m.addr) == 0) {
                *on_gpu = false;
                return (int)i;
            }
    /* No address (amdkfd's, the API mismatch): the one GPU of its driver's vendor, when there is one. */
    int only = -1;
    for (size_t i = 0; !e->m.addr[0] && e->m.family && i < n; i++)
        if (strcmp(gpus[i].vendor, vendor_of[e->m.family]) == 0)
            only = only == -1 ? (int)i : -2;
    return only >= 0 ? only : -1;
}

/* One finding per (ID, subject): a second event of the same finding on the same GPU adds its evidence. */
static void health_event_finding(struct probe_ctx *ctx, const struct health_log *log, const struct health_event *e,
                                 const char *id, const char *subject, const struct health_gpu *g, bool on_gpu)
{
    char *what = health_event_words(e), *when = health_event_when(log, e);
    struct report_finding *f = NULL;
    for (size_t i = 0; i < ctx->report->n_findings && !f; i++) {
        struct report_finding *o = ctx->report->findings[i];
        if (strcmp(o->id, id) == 0 && (subject ? o->subject && strcmp(o->subject, subject) == 0 : !o->subject))
            f = o;
    }
    if (!f) {
        char *where = !g ? str_dup(e->m.addr[0] ? e->m.addr : "this machine")
                    : on_gpu ? str_printf("GPU %s%s%s", g->addr, g->name[0] ? " " : "", g->name)
                             : str_printf("bridge %s above GPU %s", e->m.addr, g->addr);
        f = report_add_finding(ctx->report, id, subject, "Kernel log: %s on %s, %s", what, where, when);
        free(where);
        const struct health_xid *x = e->m.kind == HEALTH_K_XID ? health_xid_find(e->m.xid) : NULL;
        if (f && x)
            report_finding_set_hint(f, "Xid %d: %s (NVIDIA's Xid catalogue, docs.nvidia.com/deploy/xid-errors).", x->xid,
                                    x->action);
    }
    if (f)
        report_finding_add_evidence(f, "kernel log", "%s: %s; first at %.1f s: %s", what, when, (double)e->first_usec / 1e6,
                                    e->sample);
    free(what);
    free(when);
}

/* The summary's list of what was found, "Xid 79 x2 on 0000:65:00.0" ... (heap, "" when nothing). */
static void health_summary_add(char *buf, size_t max, const struct health_event *e, const char *subject)
{
    size_t at = strlen(buf);
    if (at + 40 >= max)
        return;
    char name[32];
    if (e->m.kind == HEALTH_K_XID)
        snprintf(name, sizeof(name), "Xid %d", e->m.xid);
    else
        snprintf(name, sizeof(name), "%s", health_kind_name(e->m.kind));
    snprintf(buf + at, max - at, "%s%s x%zu%s%s", at ? ", " : "", name, e->count, subject ? " on " : "", subject ? subject : "");
}

static void health_log_json(json_object *d, const struct health_log *log)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "source", json_object_new_string(log->source));
    json_object_object_add(o, "path", json_object_new_string("/dev/kmsg"));
    json_object_object_add(o, "reason", jsonstr_or_null(log->reason));
    bool read = strcmp(log->source, "none") != 0;
    json_object_object_add(o, "records", read ? json_object_new_int64((int64_t)log->records) : NULL);
    json_object_object_add(o, "bytes", read ? json_object_new_int64((int64_t)log->bytes) : NULL);
    json_object_object_add(o, "lines_skipped", read ? json_object_new_int64((int64_t)log->skipped) : NULL);
    json_object_object_add(o, "overwritten_while_reading", read ? json_object_new_int64((int64_t)log->lost) : NULL);
    json_object_object_add(o, "capped", json_object_new_boolean(log->capped));
    json_object_object_add(o, "uptime_s", log->have_now ? json_object_new_double((double)log->now_usec / 1e6) : NULL);
    json_object *ld = json_object_new_object();
    for (int f = HEALTH_F_NVIDIA; f < HEALTH_F_N; f++)
        json_object_object_add(ld, health_family_name((enum health_family)f),
                               log->loaded_usec[f] ? json_object_new_double((double)log->loaded_usec[f] / 1e6) : NULL);
    json_object_object_add(o, "driver_loaded_s", ld);
    json_object_object_add(o, "events_dropped", json_object_new_int64((int64_t)log->events_dropped));
    json_object_object_add(d, "kernel_log", o);
}

void health_log_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_log *log,
                       const struct health_gpu *gpus, size_t n_gpus, json_object *gpus_json)
{
    json_object *d = sec->data, *other = json_object_new_array();
    health_log_json(d, log);
    char list[200] = "";
    size_t shown = 0, elsewhere = 0;
    enum report_mark mark = REPORT_MARK_OK;
    for (size_t i = 0; i < log->n_events; i++) {
        const struct health_event *e = &log->events[i];
        bool on_gpu = true;
        int gi = health_event_gpu(e, gpus, n_gpus, &on_gpu);
        bool aer = e->m.kind == HEALTH_K_AER_FATAL || e->m.kind == HEALTH_K_AER_NONFATAL || e->m.kind == HEALTH_K_AER_CORRECTED;
        if (gi < 0 && aer) {
            elsewhere++; /* another device's PCIe errors: not the GPU's business */
            continue;
        }
        const struct health_gpu *g = gi >= 0 ? &gpus[gi] : NULL;
        const char *id = health_event_id(log, e, on_gpu);
        const char *subject = g ? g->addr : e->m.addr[0] ? e->m.addr : NULL;
        json_object *ev = health_event_json(log, e, id);
        json_object_array_add(g ? health_array_member(json_object_array_get_idx(gpus_json, (size_t)gi), "events") : other, ev);
        if (!id)
            continue;
        health_event_finding(ctx, log, e, id, subject, g, on_gpu);
        const struct check *c = checks_find(ctx->report->catalogue, id);
        enum report_mark m = !c || c->severity == REPORT_SEV_INFO ? REPORT_MARK_INFO
                           : c->severity == REPORT_SEV_WARNING ? REPORT_MARK_WARN : REPORT_MARK_ERROR;
        mark = m > mark ? m : mark;
        if (shown++ < 3)
            health_summary_add(list, sizeof(list), e, subject);
    }
    json_object_object_add(d, "other_events", other);
    json_object_object_add(jsonget(d, "kernel_log"), "pcie_events_elsewhere", json_object_new_int64((int64_t)elsewhere));
    if (strcmp(log->source, "none") == 0) {
        report_section_add_line(sec, REPORT_MARK_INFO, "Kernel log", "not read: %s", log->reason ? log->reason : "unknown");
        return;
    }
    char recs[32];
    health_thousands(recs, sizeof(recs), log->records);
    /* "..., no GPU errors", "..., no GPU errors (information: Xid 13 x3 on ...)", "...: Xid 79 x1 on ..." */
    bool quiet = mark <= REPORT_MARK_INFO;
    report_section_add_line(sec, mark, "Kernel log", "%s record%s since boot (%s)%s%s%s%s%s%s", recs, log->records == 1 ? "" : "s",
                            strcmp(log->source, "kmsg") == 0      ? "/dev/kmsg"
                            : strcmp(log->source, "journal") == 0 ? "the journal: /dev/kmsg is not readable"
                                                                  : "the tree's dev/kmsg",
                            quiet ? ", no GPU errors" : ": ", quiet && shown ? " (information: " : "", list,
                            shown > 3 ? ", ..." : "", quiet && shown ? ")" : "",
                            log->capped ? " (capped: only the first part read)" : "");
}
