/* process_target.c: --pid (or a running --unit's process), live: the run's target, set before it starts: its environment for the whole run, its credentials for every child. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isolate.h"
#include "jsonstr.h"
#include "process_internal.h"
#include "strutil.h"

/* What prepare did, for the section (set in the main thread before the run's threads start). */
static struct {
    long pid;                 /* the process it was done for, 0: not tried */
    bool env, creds;
    char *why;                /* why not (heap), or NULL */
} proc_target;

/* /proc/PID/status: the effective uid, the effective gid first, then the supplementary groups. */
static bool proc_target_status(const char *text, long *uid, gid_t *gids, size_t *n, size_t max)
{
    long a, b, gid = -1;
    *uid = -1;
    *n = 0;
    char *copy = str_dup(text), *save = NULL;
    for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
        if (sscanf(l, "Uid: %ld %ld", &a, &b) == 2)
            *uid = b;
        else if (sscanf(l, "Gid: %ld %ld", &a, &b) == 2)
            gid = b;
    }
    free(copy);
    if (*uid < 0 || gid < 0)
        return false;
    gids[(*n)++] = (gid_t)gid;
    const char *g = strstr(text, "\nGroups:");
    for (char *p = g ? (char *)g + 8 : NULL; p && *p && *p != '\n' && *n < max;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v != gid)
            gids[(*n)++] = (gid_t)v;
        p = end;
    }
    return true;
}

void proc_target_prepare(struct probe_ctx *ctx)
{
    long pid = process_opts.pid;
    /* --unit of a running service, live, without --pid: the run is its process's (process_unitfind.c) */
    if (pid <= 0 && process_opts.unit && probe_host_files(ctx))
        pid = proc_unit_prepare(ctx);
    if (pid <= 0 || proc_target.pid)
        return;
    proc_target.pid = pid;
    if (!probe_host_files(ctx)) {
        proc_target.why = str_dup("a tree is read: the run is gpucheckup's own");
        return;
    }
    char p[64], *status = NULL, *env = NULL;
    size_t len = 0;
    snprintf(p, sizeof(p), "/proc/%ld/status", pid);
    int rc = hostfs_read_file(ctx->fs, p, 0, &status, NULL);
    snprintf(p, sizeof(p), "/proc/%ld/environ", pid);
    int rc2 = rc == 0 ? hostfs_read_file(ctx->fs, p, 0, &env, &len) : rc;
    long uid;
    gid_t gids[64];
    size_t n;
    if (rc2 != 0 || !proc_target_status(status, &uid, gids, &n, 64)) {
        proc_target.why = str_printf("/proc/%ld/%s could not be read (%s)", pid,
                                     rc != 0 ? "status" : "environ", strerror(rc2 ? -rc2 : EINVAL));
    } else {
        proc_target.env = isolate_target_set_env(env, len) == 0;
        /* as root, every child becomes the process (a root process's children stay root) */
        proc_target.creds = geteuid() == 0 && uid != 0 && isolate_target_set_creds(uid, gids, n) == 0;
        if (geteuid() != 0 && uid != (long)geteuid())
            proc_target.why = str_dup("gpucheckup is not root: its children keep gpucheckup's credentials");
    }
    free(status);
    free(env);
}

void proc_target_describe(long pid, json_object *o)
{
    if (pid != proc_target.pid)
        return;
    json_object *t = json_object_new_object();
    json_object_object_add(t, "environment", json_object_new_boolean(proc_target.env));
    json_object_object_add(t, "credentials", json_object_new_boolean(proc_target.creds));
    json_object_object_add(t, "why", jsonstr_or_null(proc_target.why));
    json_object_object_add(o, "run_as_it", t);
}

bool proc_target_is(long pid)
{
    return pid == proc_target.pid && (proc_target.env || proc_target.creds);
}
