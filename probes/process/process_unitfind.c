/* process_unitfind.c: --unit, found once a run: its settings (the manager's where it answers, else its files) and its running process. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "process_internal.h"
#include "strutil.h"

/* What the target's prepare found, kept for the probe's run (set in the main thread before the run's threads
 * start; taken once by the run). The manager is asked before the run takes the process's environment, and
 * once: the run judges the settings and the process the run was made for. */
static struct {
    bool kept;
    struct proc_unit_found f;
} proc_unit_kept;

/* The unit's first process, from its cgroup (without D-Bus: systemd puts a service of the default slice in
 * system.slice/NAME), or 0 when it does not run (or lives in another slice). */
static long proc_unit_cgroup_pid(struct probe_ctx *ctx, const char *unit)
{
    static const char *const roots[] = {"/sys/fs/cgroup/system.slice", "/sys/fs/cgroup/systemd/system.slice", NULL};
    for (size_t i = 0; roots[i]; i++) {
        char *p = str_printf("%s/%s/cgroup.procs", roots[i], unit), *text = NULL;
        int rc = p ? hostfs_read_file(ctx->fs, p, 0, &text, NULL) : -ENOMEM;
        free(p);
        uint64_t pid = 0;
        if (rc == 0) {
            text[strcspn(text, "\n")] = '\0';
            if (str_to_u64(str_trim(text), 10, &pid) != 0 || pid > 4194304)
                pid = 0;
        }
        free(text);
        if (rc == 0)
            return (long)pid;
    }
    return 0;
}

/* Find it now: the files, the manager's merged view over them where it answers, and the process. */
static void proc_unit_find_now(struct probe_ctx *ctx, struct proc_unit_found *f)
{
    memset(f, 0, sizeof(*f));
    f->pm.main_pid = -1;
    f->rc = proc_unit_load(ctx->fs, process_opts.unit, &f->u);
    struct proc_unit mu;
    f->manager = proc_manager_wanted(ctx) && f->u.name && proc_manager_load(ctx, f->u.name, &mu, &f->pm) == 0;
    if (f->manager) {
        proc_unit_free(&f->u);
        f->u = mu;
        f->rc = 0;
    }
    if (f->rc != 0 || f->u.masked)
        return;
    f->main_pid = f->manager && f->pm.main_pid >= 0 ? f->pm.main_pid : proc_unit_cgroup_pid(ctx, f->u.name);
    f->pid_source = f->manager && f->pm.main_pid >= 0 ? "the manager's MainPID" : "the first of its cgroup's";
}

long proc_unit_prepare(struct probe_ctx *ctx)
{
    if (!process_opts.unit)
        return 0;
    if (!proc_unit_kept.kept) {
        proc_unit_find_now(ctx, &proc_unit_kept.f);
        proc_unit_kept.kept = true;
    }
    return proc_unit_kept.f.main_pid;
}

void proc_unit_find(struct probe_ctx *ctx, struct proc_unit_found *f)
{
    if (proc_unit_kept.kept) {
        *f = proc_unit_kept.f; /* taken: the run frees it */
        proc_unit_kept.kept = false;
        memset(&proc_unit_kept.f, 0, sizeof(proc_unit_kept.f));
        return;
    }
    proc_unit_find_now(ctx, f);
}

void proc_unit_found_free(struct proc_unit_found *f)
{
    proc_unit_free(&f->u);
    free(f->pm.why);
    free(f->pm.active_state);
    memset(f, 0, sizeof(*f));
}
