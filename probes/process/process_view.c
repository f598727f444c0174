/* process_view.c: --pid: files as the process sees them, through /proc/PID/root (its mount namespace). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "process_internal.h"
#include "strutil.h"

/* The .icd files of DIR in FS, sorted, into L. 0 or -errno. */
static int proc_icds(const struct hostfs *fs, const char *dir, struct proc_list *l)
{
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return -errno;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (str_ends_with(e->d_name, ".icd") && l->n < 256)
            proc_list_add(l, e->d_name);
    closedir(d);
    for (size_t i = 1; i < l->n; i++)
        for (size_t j = i; j > 0 && strcmp(l->v[j - 1], l->v[j]) > 0; j--) {
            char *t = l->v[j];
            l->v[j] = l->v[j - 1];
            l->v[j - 1] = t;
        }
    return 0;
}

static char *proc_join(const struct proc_list *l)
{
    char *out = str_dup("");
    for (size_t i = 0; out && i < l->n; i++) {
        char *n = str_printf("%s%s%s", out, i ? ", " : "", l->v[i]);
        free(out);
        out = n;
    }
    return out;
}

static json_object *proc_list_to_json(const struct proc_list *l)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++)
        json_object_array_add(a, json_object_new_string(l->v[i]));
    return a;
}

/* The GPU's compute nodes missing from its /dev. */
static void proc_view_nodes(struct probe_ctx *ctx, const struct hostfs *pfs, json_object *v, const char *who)
{
    struct proc_node nodes[32];
    size_t n = proc_nodes(ctx, nodes, 32);
    struct proc_list missing = {0};
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (hostfs_stat(pfs, nodes[i].path, &st, true) != 0)
            proc_list_add(&missing, nodes[i].path);
    }
    json_object_object_add(v, "missing_nodes", proc_list_to_json(&missing));
    for (size_t i = 0; i < missing.n; i++)
        report_add_finding(ctx->report, "process.node-missing", missing.v[i],
                           "%s's own /dev has no %s (it has %zu of the GPU's %zu compute nodes)", who, missing.v[i],
                           n - missing.n, n);
    proc_list_clear(&missing);
}

/* The OpenCL vendors directory (its OCL_ICD_VENDORS when that names one, else /etc/OpenCL/vendors) in its
 * view and in the run's. */
static void proc_view_icds(struct probe_ctx *ctx, const struct hostfs *pfs, json_object *v, const char *who,
                           const char *vendors_env)
{
    const char *dir = vendors_env && *vendors_env == '/' && !str_ends_with(vendors_env, ".icd") ? vendors_env
                                                                                               : "/etc/OpenCL/vendors";
    struct proc_list theirs = {0}, ours = {0};
    int rt = proc_icds(pfs, dir, &theirs), ro = proc_icds(ctx->fs, dir, &ours);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "dir", json_object_new_string(dir));
    json_object_object_add(o, "icds", rt == 0 ? proc_list_to_json(&theirs) : NULL);
    json_object_object_add(o, "ours", ro == 0 ? proc_list_to_json(&ours) : NULL);
    json_object_object_add(v, "opencl_vendors", o);
    bool same = theirs.n == ours.n;
    for (size_t i = 0; same && i < theirs.n; i++)
        same = strcmp(theirs.v[i], ours.v[i]) == 0;
    if (!same) {
        char *a = proc_join(&theirs), *b = proc_join(&ours);
        report_add_finding(ctx->report, "process.other-icds", dir,
                           "%s sees %zu OpenCL ICD file%s in %s%s%s%s, gpucheckup sees %zu%s%s%s there", who, theirs.n,
                           theirs.n == 1 ? "" : "s", dir, theirs.n ? " (" : "", theirs.n && a ? a : "",
                           theirs.n ? ")" : "", ours.n, ours.n ? " (" : "", ours.n && b ? b : "", ours.n ? ")" : "");
        free(a);
        free(b);
    }
    proc_list_clear(&theirs);
    proc_list_clear(&ours);
}

void proc_view(struct probe_ctx *ctx, long pid, json_object *o, const char *who, int *err)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%ld/root", pid);
    *err = 0;
    char *real = hostfs_real_path(ctx->fs, p);
    struct hostfs pfs;
    int rc = real ? hostfs_open(&pfs, real) : -ENOMEM;
    free(real);
    if (rc != 0) {
        *err = rc;
        return;
    }
    json_object *v = json_object_new_object();
    json_object_object_add(o, "own_view", v);
    proc_view_nodes(ctx, &pfs, v, who);
    proc_view_icds(ctx, &pfs, v, who, jsonget_str(jsonget(o, "environment"), "OCL_ICD_VENDORS"));
    hostfs_close(&pfs);
}
