/* process_asit.c: --pid: the libraries its environment makes the dynamic linker pick, and libcuda run in a child as it. */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "process_internal.h"
#include "strutil.h"

/* The file the dynamic linker finds for SONAME with LD_LIBRARY_PATH=LDPATH (its real path), or NULL. The
 * executable's own RUNPATH and the libraries it was linked with are not known here. */
static char *proc_predict(const struct hostfs *fs, const char *ldpath, const char *soname)
{
    struct ldsearch s;
    if (ldsearch_init(&s, fs, ldpath) != 0)
        return NULL;
    const char *via = NULL;
    char *p = ldsearch_find(&s, soname, &via);
    ldsearch_free(&s);
    char *r = p ? ldsearch_realpath(fs, p) : NULL;
    if (r) {
        free(p);
        return r;
    }
    return p;
}

char *proc_predicted(struct probe_ctx *ctx, json_object *o, const char *who, const char *its_ldpath)
{
    static const char *const sonames[] = {"libcuda.so.1", "libOpenCL.so.1", "libhsa-runtime64.so.1", "libze_loader.so.1",
                                          "libvulkan.so.1", NULL};
    /* gpucheckup's own, not the target's the run may have taken (isolate_target.c) */
    const char *ours_ldpath = probe_live(ctx) ? isolate_target_own_getenv("LD_LIBRARY_PATH") : NULL;
    json_object *pred = json_object_new_object();
    char *libcuda = NULL;
    for (size_t i = 0; sonames[i]; i++) {
        char *its = proc_predict(ctx->fs, its_ldpath, sonames[i]), *ours = proc_predict(ctx->fs, ours_ldpath, sonames[i]);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "its", jsonstr_or_null(its));
        json_object_object_add(e, "ours", jsonstr_or_null(ours));
        json_object_object_add(pred, sonames[i], e);
        if ((its || ours) && (!its || !ours || strcmp(its, ours) != 0))
            report_add_finding(ctx->report, "process.other-library", sonames[i],
                               "With the LD_LIBRARY_PATH of %s the dynamic linker finds %s at %s; with gpucheckup's, %s",
                               who, sonames[i], its ? its : "nowhere", ours ? ours : "nowhere");
        if (i == 0)
            libcuda = its, its = NULL;
        free(its);
        free(ours);
    }
    json_object_object_add(o, "predicted", pred);
    return libcuda;
}

/* What the child is given: the library, the process's environment, and the credentials to take. */
struct proc_asit {
    const char *lib;
    const char *env;     /* NUL-separated, as /proc/PID/environ */
    size_t env_len;
    const struct proc_cred *cred;
    bool drop;           /* take CRED (gpucheckup is root, the process is not) */
};

typedef int (*proc_cu_init_fn)(unsigned);
typedef int (*proc_cu_int_fn)(int *);
typedef int (*proc_cu_name_fn)(int, const char **);

/* In the child: become the process as far as may be, then load libcuda and ask it. */
static json_object *proc_asit_child(void *arg)
{
    const struct proc_asit *a = arg;
    json_object *o = json_object_new_object();
    if (a->drop) {
        gid_t groups[64];
        size_t n = a->cred->n;
        for (size_t i = 0; i < n; i++)
            groups[i] = a->cred->gids[i];
        if (setgroups(n, groups) != 0 || (n && setgid(groups[0]) != 0) || setuid((uid_t)a->cred->uid) != 0) {
            json_object_object_add(o, "credentials_error", json_object_new_string(strerror(errno)));
            return o;
        }
    }
    clearenv();
    for (size_t i = 0; i < a->env_len;) {
        const char *item = a->env + i;
        size_t n = strnlen(item, a->env_len - i);
        i += n + 1;
        char *copy = memchr(item, '=', n) ? str_copy_n(item, n) : NULL;
        if (copy)
            putenv(copy); /* the child's environment keeps it (its seccomp filter and NoNewPrivs are not taken) */
    }
    void *h = dlopen(a->lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        json_object_object_add(o, "dlopen_error", json_object_new_string(e ? e : "dlopen failed"));
        return o;
    }
    proc_cu_init_fn init = (proc_cu_init_fn)(uintptr_t)dlsym(h, "cuInit");
    proc_cu_int_fn count = (proc_cu_int_fn)(uintptr_t)dlsym(h, "cuDeviceGetCount");
    proc_cu_int_fn version = (proc_cu_int_fn)(uintptr_t)dlsym(h, "cuDriverGetVersion");
    proc_cu_name_fn name = (proc_cu_name_fn)(uintptr_t)dlsym(h, "cuGetErrorName");
    if (!init || !count) {
        json_object_object_add(o, "dlopen_error", json_object_new_string("cuInit or cuDeviceGetCount is missing"));
        return o;
    }
    int v = 0;
    if (version && version(&v) == 0)
        json_object_object_add(o, "driver_version", json_object_new_int(v));
    int rc = init(0);
    json_object_object_add(o, "cuinit", json_object_new_int(rc));
    const char *en = NULL;
    if (rc != 0 && name && name(rc, &en) == 0 && en)
        json_object_object_add(o, "error_name", json_object_new_string(en));
    int c = 0;
    if (rc == 0 && count(&c) == 0)
        json_object_object_add(o, "devices", json_object_new_int(c));
    return o;
}

void proc_cuda_as_it(struct probe_ctx *ctx, json_object *o, const char *who, const char *lib, const char *env,
                     size_t env_len, const struct proc_cred *c)
{
    /* where the run's children already take its credentials (--pid as root), the child is it already */
    bool taken = isolate_target_creds_active();
    struct proc_asit a = {lib, env, env_len, c, !taken && geteuid() == 0 && c->uid != 0 && c->uid >= 0};
    struct isolate_result res;
    memset(&res, 0, sizeof(res));
    probe_isolate_run(ctx, proc_asit_child, &a, &res);
    json_object *r = json_object_new_object();
    json_object_object_add(o, "cuda_as_it", r);
    json_object_object_add(r, "library", json_object_new_string(lib));
    json_object_object_add(r, "credentials", json_object_new_string(a.drop || taken || c->uid == (long)geteuid()
                                                                         ? "its" : "gpucheckup's"));
    const char *st = res.status == ISOLATE_OK ? "ok" : res.status == ISOLATE_SIGNAL ? "crash"
                   : res.status == ISOLATE_TIMEOUT ? "timeout" : "failed";
    json_object_object_add(r, "status", json_object_new_string(st));
    json_object *v = res.status == ISOLATE_OK ? res.value : NULL;
    static const char *const keys[] = {"credentials_error", "dlopen_error", "driver_version", "cuinit", "error_name",
                                       "devices", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_object *x = jsonget(v, keys[i]);
        char *s = x && json_object_is_type(x, json_type_string) ? str_sanitize(str_dup(json_object_get_string(x))) : NULL;
        if (s)
            json_object_object_add(r, keys[i], json_object_new_string(s));
        else if (x && json_object_is_type(x, json_type_int))
            json_object_object_add(r, keys[i], json_object_new_int64(json_object_get_int64(x)));
        free(s);
    }
    const char *why = res.status != ISOLATE_OK ? (res.detail ? res.detail : st)
                    : jsonget_str(r, "credentials_error") ? jsonget_str(r, "credentials_error")
                    : jsonget_str(r, "dlopen_error") ? jsonget_str(r, "dlopen_error") : NULL;
    int64_t rc = jsonget_int(r, "cuinit", 0);
    if (why)
        report_add_finding(ctx->report, "process.cuda-fails", lib, "As %s (its environment%s), %s: %s", who,
                           a.drop || taken ? " and credentials" : "", lib, why);
    else if (rc != 0)
        report_add_finding(ctx->report, "process.cuda-fails", lib,
                           "As %s (its environment%s), %s: cuInit(0) returns %lld%s%s%s", who,
                           a.drop || taken ? " and credentials" : "", lib, (long long)rc, jsonget_str(r, "error_name") ? " (" : "",
                           jsonget_str(r, "error_name") ? jsonget_str(r, "error_name") : "",
                           jsonget_str(r, "error_name") ? ")" : "");
    isolate_result_clear(&res);
}
