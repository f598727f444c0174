/* probe_ctx.c: what a probe's context answers: the run's mode, its captured inputs, its one budget and the children it starts. */
#include "probe.h"

#include "jsonnum.h"
#include "snapshot.h"

enum probe_mode probe_mode_of(const struct cli_options *o, const struct hostfs *fs)
{
    bool live = o && o->live;
    if (fs->live)
        return PROBE_MODE_LIVE;
    if (o && o->snapshot)
        return live ? PROBE_MODE_SNAPSHOT_LIVE : PROBE_MODE_SNAPSHOT;
    return live ? PROBE_MODE_TREE_LIVE : PROBE_MODE_TREE;
}

json_object *probe_captured(const struct probe_ctx *ctx, const char *name)
{
    if (!probe_snapshot(ctx) || !ctx->snapshot)
        return NULL;
    return snapshot_captured_section(ctx->snapshot, name);
}

const char *probe_cpuid_dump(const struct probe_ctx *ctx)
{
    if (ctx->opts && ctx->opts->cpuid_dump)
        return ctx->opts->cpuid_dump;
    /* --live: this machine's CPUID, not the captured machine's */
    if (ctx->mode == PROBE_MODE_SNAPSHOT && ctx->snapshot)
        return ctx->snapshot->cpuid_dump;
    return NULL;
}

int probe_budget_ms(struct probe_ctx *ctx)
{
    if (ctx->deadline_ms <= 0)
        return ctx->timeout_ms; /* no run around it (a unit test's context): each batch gets it all */
    double left = ctx->deadline_ms - jsonnum_now_ms();
    if (left < 1.0) {
        ctx->budget_spent = true;
        return 0;
    }
    return left > (double)ctx->timeout_ms ? ctx->timeout_ms : (int)left;
}

double probe_deadline_ms(const struct probe_ctx *ctx)
{
    return ctx->deadline_ms > 0 ? ctx->deadline_ms : jsonnum_now_ms() + ctx->timeout_ms;
}

double probe_answer_by_ms(double deadline_ms)
{
    double left = deadline_ms - jsonnum_now_ms();
    double margin = left / 10.0 > 250.0 ? 250.0 : left / 10.0 > 0 ? left / 10.0 : 0;
    return deadline_ms - margin;
}

/* The deadline a batch of children is given: the run's own, absolute, passed through unchanged to the
 * last wait in isolate.c (so waiting for the spawn lock or the fork gate is charged to the run); 0 when
 * nothing is left, which starts nothing and sets CTX->budget_spent. */
static double probe_child_deadline(struct probe_ctx *ctx)
{
    return probe_budget_ms(ctx) > 0 ? probe_deadline_ms(ctx) : 0;
}

enum isolate_status probe_isolate_run(struct probe_ctx *ctx, isolate_fn fn, void *arg, struct isolate_result *res)
{
    return isolate_run_until(fn, arg, probe_child_deadline(ctx), res);
}

int probe_isolate_many(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n)
{
    return isolate_run_many_until(jobs, n, probe_child_deadline(ctx), NULL, NULL);
}

int probe_isolate_many_cb(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n, isolate_done_fn done,
                          void *arg)
{
    return isolate_run_many_until(jobs, n, probe_child_deadline(ctx), done, arg);
}

int probe_isolate_many_part(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n, int part)
{
    int budget = probe_budget_ms(ctx);
    if (budget <= 0 || part <= 1 || budget <= 1)
        return isolate_run_many_until(jobs, n, budget > 0 ? probe_deadline_ms(ctx) : 0, NULL, NULL);
    /* the part's own end, made absolute once here and kept as it is to the last wait */
    return isolate_run_many_until(jobs, n, jsonnum_now_ms() + budget / part, NULL, NULL);
}
