/* run.c: one diagnosis: pick the probes for the command, run them in order, correlate, decide. */
#include "jsonnum.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doctor.h"
#include "probe.h"
#include "snapshot.h"
#include "strutil.h"

static bool run_needs(const struct probe *p, const char *name, int depth)
{
    if (strcmp(p->name, name) == 0)
        return true;
    if (depth > 8 || !p->deps)
        return false;
    for (size_t i = 0; p->deps[i]; i++) {
        const struct probe *d = probe_find(p->deps[i]);
        if (d && run_needs(d, name, depth + 1))
            return true;
    }
    return false;
}

bool run_selects(const char *command, const char *name)
{
    const struct probe *self = probe_find(name);
    if (self && self->explicit_only && strcmp(command, name) != 0)
        return false;
    if (strcmp(command, "check") == 0)
        return true;
    const char *target = strcmp(command, "list") == 0 ? "opencl" : command;
    const struct probe *p = probe_find(target);
    return p && run_needs(p, name, 0);
}

/* host.snapshot: where a replayed snapshot comes from. */
static void run_note_snapshot(const struct snapshot *s, json_object *host)
{
    json_object *o = json_object_new_object();
    static const char *const keys[] = {"created", "gpucheckup_version", "redacted", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_object *v = json_object_object_get(s->manifest, keys[i]);
        json_object_object_add(o, keys[i], v ? json_object_get(v) : NULL);
    }
    json_object_object_add(o, "path", json_object_new_string(s->path ? s->path : s->dir));
    json_object_object_add(host, "snapshot", o);
    /* what the tree cannot say (uname of the captured machine), the captured report does */
    json_object *cap = json_object_object_get(s->report, "host");
    static const char *const ids[] = {"hostname", "kernel", "architecture", NULL};
    for (size_t i = 0; ids[i]; i++) {
        json_object *v = json_object_object_get(cap, ids[i]);
        if (!json_object_object_get(host, ids[i]) && json_object_is_type(v, json_type_string))
            json_object_object_add(host, ids[i], json_object_get(v));
    }
}

int run_diagnosis(const struct cli_options *o, const struct hostfs *fs, struct report **out, char **error)
{
    *out = NULL;
    *error = NULL;
    /* Unknown --require names fail before any probe runs. */
    if (doctor_validate_requires(o->requires, o->n_requires, error) < 0)
        return GC_EXIT_USAGE;
    struct report *r = report_new();
    if (!r) {
        *error = str_dup("out of memory");
        return GC_EXIT_INTERNAL;
    }
    host_collect(fs, r->host);
    if (o->snapshot)
        run_note_snapshot(o->snapshot, r->host);

    struct probe_ctx ctx = {
        .opts = o,
        .fs = fs,
        .report = r,
        .snapshot = o->snapshot,
        .timeout_ms = (int)(o->timeout_s * 1000.0 + 0.5),
    };
    if (ctx.timeout_ms < 1)
        ctx.timeout_ms = 1;

    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        if (!run_selects(o->command, p->name))
            continue;
        struct report_section *sec = report_add_section(r, p->name);
        if (!sec) {
            report_free(r);
            *error = str_dup("out of memory");
            return GC_EXIT_INTERNAL;
        }
        /* a snapshot's icd probe checks the .icd files again and replays the drivers' results */
        bool replay_icd = o->snapshot && !o->live && strcmp(p->name, "icd") == 0;
        if (p->needs_live && !fs->live && !o->live && !replay_icd) {
            if (o->snapshot && snapshot_replay_section(o->snapshot, r, sec))
                continue;
            report_section_set_status(sec, REPORT_STATUS_SKIPPED,
                                      "needs the live machine, and --root points at another tree "
                                      "(add --live to run it against this machine)");
            continue;
        }
        double t0 = jsonnum_now_ms();
        int rc = p->run(&ctx, sec);
        sec->duration_ms = jsonnum_now_ms() - t0;
        if (rc == PROBE_INPUT_ERROR || rc == PROBE_INTERNAL_ERROR) {
            *error = ctx.error ? ctx.error : str_printf("%s: probe failed", p->name);
            report_free(r);
            return rc == PROBE_INPUT_ERROR ? GC_EXIT_USAGE : GC_EXIT_INTERNAL;
        }
        free(ctx.error);
        ctx.error = NULL;
        if (sec->status == REPORT_STATUS_FAILED) {
            struct report_finding *f = report_add_finding(r, "core.probe-failed", p->name,
                                                          "The %s probe failed: %s", p->name,
                                                          sec->reason ? sec->reason : "no reason given");
            (void)f;
        }
    }

    int rc = doctor_run(o, r, error);
    if (rc != 0) {
        report_free(r);
        return rc;
    }
    *out = r;
    return report_is_ready(r) ? GC_EXIT_READY : GC_EXIT_NOT_READY;
}
