/* doctor_unknown.c: what a probe left behind at the --timeout leaves unknown: the targets and --require forms it serves. */
#include "doctor.h"

#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "strutil.h"

#define DOCTOR_UNKNOWN_ID "core.probe-timed-out"

/* Is probe P, or a probe P depends on (transitively), the probe NAME? */
static bool doctor_unknown_through(const struct probe *p, const char *name, int depth)
{
    if (strcmp(p->name, name) == 0)
        return true;
    for (size_t i = 0; depth < 8 && p->deps && p->deps[i]; i++) {
        const struct probe *d = probe_find(p->deps[i]);
        if (d && doctor_unknown_through(d, name, depth + 1))
            return true;
    }
    return false;
}

const char *doctor_unknown_cause(const struct report *r, const struct probe *p)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *f = r->findings[i];
        if (strcmp(f->id, DOCTOR_UNKNOWN_ID) == 0 && f->subject && doctor_unknown_through(p, f->subject, 0))
            return f->subject;
    }
    return NULL;
}

/* Does P answer something a verdict reads: a compute API's path, the GPUs on the bus, a --require form,
 * a verdict target? (The registry's facts: a probe that only reports, the host section, answers none.) */
static bool doctor_unknown_serves(const struct probe *p)
{
    return p->compute_api || p->bus_gpus || p->requires || p->verdict;
}

/* A probe of this run (it has a section) that serves a verdict and is left unknown by the probe NAME
 * (NAME itself, or one that depends on it); its compute API's only when API. NULL when none. */
static const struct probe *doctor_unknown_served(const struct report *r, const char *name, bool api)
{
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        if (!report_find_section(r, pr->name) || !doctor_unknown_serves(pr) || (api && !pr->compute_api))
            continue;
        if (doctor_unknown_through(pr, name, 0))
            return pr;
    }
    return NULL;
}

char *doctor_unknown_detail(const char *who)
{
    return str_printf("unknown: the %s probe was still running at the run's --timeout and was left behind "
                      "(%s)", who, DOCTOR_UNKNOWN_ID);
}

void doctor_unknown_escalate(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = r->findings[i];
        if (strcmp(f->id, DOCTOR_UNKNOWN_ID) == 0 && f->subject && doctor_unknown_served(r, f->subject, false))
            f->severity = REPORT_SEV_ERROR;
    }
}

void doctor_unknown_require(const struct report *r, const struct probe *owner, bool *met, char **detail,
                            const char **cause)
{
    *cause = NULL;
    if (*met && !owner)
        return; /* a GPU proven through some API is proven, whatever else timed out */
    const char *who = NULL;
    if (owner) {
        who = doctor_unknown_cause(r, owner);
    } else {
        for (size_t i = 0; i < r->n_findings && !who; i++) {
            const struct report_finding *f = r->findings[i];
            if (strcmp(f->id, DOCTOR_UNKNOWN_ID) == 0 && f->subject && doctor_unknown_served(r, f->subject, true))
                who = f->subject;
        }
    }
    if (!who)
        return;
    free(*detail);
    *detail = doctor_unknown_detail(who);
    *met = false;
    *cause = who;
}

void doctor_unknown_targets(struct report *r, const struct probe *p, size_t first)
{
    const char *who = doctor_unknown_cause(r, p);
    if (!who || !r->targets)
        return;
    static const char *const reasons[] = {DOCTOR_UNKNOWN_ID, NULL};
    char *detail = doctor_unknown_detail(who);
    size_t k = 0, n = 0;
    const char *names[32];
    json_object_object_foreach(r->targets, name, t)
    {
        (void)t;
        if (k++ >= first && n < 32)
            names[n++] = name;
    }
    for (size_t i = 0; i < n; i++) {
        char *name = str_dup(names[i]); /* report_set_target replaces the key's value */
        if (name)
            report_set_target(r, name, false, detail, reasons);
        free(name);
    }
    free(detail);
}

void doctor_unknown_gpu_target(struct report *r)
{
    json_object *t = r->targets ? json_object_object_get(r->targets, "gpu") : NULL;
    if (t && json_object_get_boolean(json_object_object_get(t, "ready")))
        return; /* proven through some API */
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *f = r->findings[i];
        if (strcmp(f->id, DOCTOR_UNKNOWN_ID) != 0 || !f->subject || !doctor_unknown_served(r, f->subject, true))
            continue;
        static const char *const reasons[] = {DOCTOR_UNKNOWN_ID, NULL};
        char *detail = doctor_unknown_detail(f->subject);
        report_set_target(r, "gpu", false, detail, reasons);
        free(detail);
        return;
    }
}
