/* run.c: one diagnosis: pick the probes for the command, run them in order, correlate, decide. */
#include "jsonnum.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doctor.h"
#include "probe.h"
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
    if (strcmp(command, "check") == 0)
        return true;
    const char *target = strcmp(command, "list") == 0 ? "opencl" : command;
    const struct probe *p = probe_find(target);
    return p && run_needs(p, name, 0);
}

int probe_budget_ms(struct probe_ctx *ctx)
{
    double left = ctx->deadline_ms - jsonnum_now_ms();
    if (left < 1.0) {
        ctx->budget_spent = true;
        return 0;
    }
    return left > (double)ctx->timeout_ms ? ctx->timeout_ms : (int)left;
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

    struct probe_ctx ctx = {
        .opts = o,
        .fs = fs,
        .report = r,
        .timeout_ms = (int)(o->timeout_s * 1000.0 + 0.5),
    };
    if (ctx.timeout_ms < 1)
        ctx.timeout_ms = 1;
    /* One deadline for the whole run (issue 17): --timeout bounds it end to end, whatever hangs. */
    ctx.deadline_ms = jsonnum_now_ms() + ctx.timeout_ms;

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
        if (p->needs_live && !fs->live && !o->live) {
            report_section_set_status(sec, REPORT_STATUS_SKIPPED,
                                      "needs the live machine, and --root points at another tree "
                                      "(add --live to run it against this machine)");
            continue;
        }
        if (p->needs_live && probe_budget_ms(&ctx) <= 0) {
            /* A driver hung earlier and took the whole budget: this probe's children have no time. */
            report_section_set_status(sec, REPORT_STATUS_SKIPPED,
                                      "not started: the run's --timeout of %.1f s was already spent",
                                      ctx.timeout_ms / 1000.0);
        }
        double t0 = jsonnum_now_ms();
        int rc = sec->status == REPORT_STATUS_SKIPPED ? PROBE_DONE : p->run(&ctx, sec);
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
        if (ctx.budget_spent) {
            report_add_finding(r, "core.timeout-spent", p->name,
                               "The run's --timeout of %.1f s was spent before the %s probe could start all "
                               "of its isolated children: what they check is unknown",
                               ctx.timeout_ms / 1000.0, p->name);
            ctx.budget_spent = false;
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
