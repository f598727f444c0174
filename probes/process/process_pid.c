/* process_pid.c: --pid: a running process's environment, credentials, loaded GPU libraries and open GPU nodes. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "process_internal.h"
#include "strutil.h"
#include "results/result_cuda.h"

/* Libraries worth naming when a process has them mapped: the compute runtimes, their loaders, drivers. */
bool proc_gpu_lib(const char *base)
{
    static const char *const pre[] = {
        "libcuda.so", "libcudart.so", "libcudart-", "libcudnn", "libcublas", "libnvrtc", "libnccl",
        "libnvidia-ml.so", "libnvidia-opencl", "libnvidia-ptxjitcompiler", "libnvidia-glcore", "libGLX_nvidia",
        "libamdhip64", "libhsa-runtime64", "librocblas", "libMIOpen", "librocm_smi64", "libamdocl", "amdvlk",
        "libze_loader", "libze_intel_gpu", "libigdrcl", "libintelocl", "libOpenCL.so", "libpocl", "libvulkan", NULL,
    };
    for (size_t i = 0; pre[i]; i++)
        if (str_starts_with(base, pre[i]))
            return true;
    return false;
}

const char *proc_lib_version(const char *base)
{
    const char *so = strstr(base, ".so.");
    return so && so[4] ? so + 4 : NULL;
}

/* What the kernel denies without ptrace access to another user's process. */
static const char *proc_why(int rc)
{
    return rc == -EACCES || rc == -EPERM ? "not readable: needs root or the same user (ptrace access)" : strerror(-rc);
}

static void proc_not_readable(json_object *arr, const char *what, int rc)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", json_object_new_string(what));
    json_object_object_add(o, "error", json_object_new_string(proc_why(rc)));
    json_object_array_add(arr, o);
}

/* /proc/PID/status: the effective uid and gid, groups, NoNewPrivs, Seccomp, into O and C. */
static void proc_status(const char *text, json_object *o, struct proc_cred *c)
{
    long gid = -1;
    json_object *groups = json_object_new_array();
    char *copy = str_dup(text), *save = NULL;
    for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(l, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *v = str_trim(colon + 1);
        long a, b;
        if (strcmp(l, "Name") == 0)
            json_object_object_add(o, "name", json_object_new_string(str_sanitize(v)));
        else if (strcmp(l, "Uid") == 0 && sscanf(v, "%ld %ld", &a, &b) == 2)
            c->uid = b;
        else if (strcmp(l, "Gid") == 0 && sscanf(v, "%ld %ld", &a, &b) == 2)
            gid = b;
        else if (strcmp(l, "NoNewPrivs") == 0 || strcmp(l, "Seccomp") == 0)
            json_object_object_add(o, strcmp(l, "Seccomp") == 0 ? "seccomp" : "no_new_privs",
                                   json_object_new_int64(strtol(v, NULL, 10)));
        else if (strcmp(l, "Groups") == 0) {
            char *s2 = NULL;
            for (char *w = strtok_r(v, " \t", &s2); w; w = strtok_r(NULL, " \t", &s2))
                proc_cred_add(c, strtol(w, NULL, 10));
        }
    }
    free(copy);
    /* the primary group first, as proc_cred keeps it */
    struct proc_cred all = {.uid = c->uid};
    proc_cred_add(&all, gid);
    for (size_t i = 0; i < c->n; i++)
        proc_cred_add(&all, (long)c->gids[i]);
    *c = all;
    for (size_t i = 0; i < c->n; i++)
        json_object_array_add(groups, json_object_new_int64(c->gids[i]));
    json_object_object_add(o, "uid", json_object_new_int64(c->uid));
    json_object_object_add(o, "gid", gid >= 0 ? json_object_new_int64(gid) : NULL);
    json_object_object_add(o, "groups", groups);
}

/* /proc/PID/environ (NUL-separated): the GPU variables into O's "environment", each judged. */
static void proc_environ(struct probe_ctx *ctx, const char *text, size_t len, json_object *o, const char *who,
                         long pid)
{
    char tag[32];
    snprintf(tag, sizeof(tag), "pid %ld", pid);
    json_object *env = json_object_new_object();
    for (size_t i = 0; i < len;) {
        const char *item = text + i;
        size_t n = strnlen(item, len - i);
        i += n + 1;
        const char *eq = memchr(item, '=', n);
        if (!eq || eq == item)
            continue;
        char *k = str_copy_n(item, (size_t)(eq - item)), *v = str_copy_n(eq + 1, n - (size_t)(eq - item) - 1);
        if (k && v && proc_gpu_var(str_sanitize(k))) {
            json_object_object_add(env, k, json_object_new_string(str_sanitize(v)));
            proc_judge_visibility(ctx, who, tag, k, v);
        }
        free(k);
        free(v);
    }
    json_object_object_add(o, "environment", env);
}

/* /proc/PID/maps: each GPU library mapped, once. Returns the libcuda path, or NULL (borrowed from O). */
static const char *proc_maps(const char *text, json_object *o)
{
    json_object *libs = json_object_new_array();
    const char *libcuda = NULL;
    struct proc_list seen = {0};
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *slash = memchr(p, '/', n);
        char *path = slash ? str_copy_n(slash, n - (size_t)(slash - p)) : NULL;
        p = e ? e + 1 : NULL;
        if (!path)
            continue;
        str_sanitize(path);
        bool deleted = str_ends_with(path, " (deleted)");
        if (deleted)
            path[strlen(path) - 10] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (proc_gpu_lib(base) && !proc_list_has(&seen, path)) {
            proc_list_add(&seen, path);
            json_object *l = json_object_new_object();
            json_object_object_add(l, "path", json_object_new_string(path));
            json_object_object_add(l, "name", json_object_new_string(base));
            json_object_object_add(l, "version", jsonstr_or_null(proc_lib_version(base)));
            json_object_object_add(l, "deleted", json_object_new_boolean(deleted));
            json_object_array_add(libs, l);
            if (str_starts_with(base, "libcuda.so"))
                libcuda = json_object_get_string(json_object_object_get(l, "path"));
        }
        free(path);
    }
    proc_list_clear(&seen);
    json_object_object_add(o, "libraries", libs);
    return libcuda;
}

/* /proc/PID/fd: the GPU device nodes it holds open. 0 or -errno. */
static int proc_fds(const struct hostfs *fs, long pid, json_object *o)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return -errno;
    json_object *open = json_object_new_array();
    struct proc_list seen = {0};
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *p = str_printf("%s/%s", dir, e->d_name), *t = NULL;
        if (p && hostfs_readlink(fs, p, &t) == 0 &&
            (str_starts_with(t, "/dev/nvidia") || str_starts_with(t, "/dev/dri/") || strcmp(t, "/dev/kfd") == 0 ||
             strcmp(t, "/dev/dxg") == 0 || str_starts_with(t, "/dev/accel/")) &&
            !proc_list_has(&seen, str_sanitize(t))) {
            proc_list_add(&seen, t);
            json_object_array_add(open, json_object_new_string(t));
        }
        free(p);
        free(t);
    }
    closedir(d);
    proc_list_clear(&seen);
    json_object_object_add(o, "open_nodes", open);
    return 0;
}

/* The libcuda the cuda probe loaded for gpucheckup (its real path), or NULL. */
static const char *proc_our_libcuda(struct probe_ctx *ctx)
{
    const struct result_cuda *cuda = result_cuda_get(ctx->report);
    return cuda ? cuda->library_path : NULL;
}

/* Its mount namespace against ours (live only): true when it is another. */
static bool proc_mntns(struct probe_ctx *ctx, long pid, json_object *o, json_object *unread, const char *who)
{
    bool other = false;
    char p[64];
    snprintf(p, sizeof(p), "/proc/%ld/ns/mnt", pid);
    char *theirs = NULL, *ours = NULL;
    int rc = hostfs_readlink(ctx->fs, p, &theirs);
    if (rc != 0)
        proc_not_readable(unread, "ns/mnt", rc);
    else if (hostfs_readlink(ctx->fs, "/proc/self/ns/mnt", &ours) == 0) {
        other = strcmp(theirs, ours) != 0;
        json_object_object_add(o, "other_mount_namespace", json_object_new_boolean(other));
        if (other)
            report_add_finding(ctx->report, "process.other-mount-namespace", who,
                               "%s runs in another mount namespace (%s, gpucheckup's %s): its /dev and OpenCL vendors "
                               "directory are judged in its own view; the other sections speak of gpucheckup's",
                               who, theirs, ours);
    }
    free(theirs);
    free(ours);
    return other;
}

int proc_pid_run(struct probe_ctx *ctx, struct report_section *sec, long pid)
{
    char p[64], who[96];
    snprintf(p, sizeof(p), "/proc/%ld/status", pid);
    char *status = NULL;
    int rc = hostfs_read_file(ctx->fs, p, 0, &status, NULL);
    if (rc == -ENOENT || rc == -ESRCH) {
        ctx->error = str_printf("--pid %ld: no such process", pid);
        return PROBE_INPUT_ERROR;
    }
    json_object *o = json_object_new_object(), *unread = json_object_new_array();
    json_object_object_add(sec->data, "pid", o);
    json_object_object_add(o, "pid", json_object_new_int64(pid));
    struct proc_cred c = {.uid = -2};
    if (rc == 0)
        proc_status(status, o, &c);
    else
        proc_not_readable(unread, "status", rc);
    free(status);
    const char *name = jsonget_str(o, "name");
    snprintf(who, sizeof(who), "process %ld%s%s%s", pid, name ? " (" : "", name ? name : "", name ? ")" : "");

    char *text = NULL, *envtext = NULL, *its_libcuda = NULL;
    size_t envlen = 0;
    snprintf(p, sizeof(p), "/proc/%ld/environ", pid);
    rc = hostfs_read_file(ctx->fs, p, 0, &envtext, &envlen);
    if (rc == 0) {
        proc_environ(ctx, envtext, envlen, o, who, pid);
        its_libcuda = proc_predicted(ctx, o, who, jsonget_str(jsonget(o, "environment"), "LD_LIBRARY_PATH"));
    } else {
        proc_not_readable(unread, "environ", rc);
    }

    snprintf(p, sizeof(p), "/proc/%ld/maps", pid);
    const char *libcuda = NULL;
    rc = hostfs_read_file(ctx->fs, p, 16u << 20, &text, NULL);
    if (rc == 0) {
        libcuda = proc_maps(text, o);
        free(text);
    } else {
        proc_not_readable(unread, "maps", rc);
    }
    const char *ours = proc_our_libcuda(ctx);
    if (libcuda && ours && strcmp(libcuda, ours) != 0)
        report_add_finding(ctx->report, "process.other-libcuda", libcuda,
                           "%s has loaded %s, gpucheckup's own run loads %s", who, libcuda, ours);

    rc = proc_fds(ctx->fs, pid, o);
    if (rc != 0)
        proc_not_readable(unread, "fd", rc);
    /* its own view of the files: live, where its namespace is another; under --root, where the tree holds
     * a /proc/PID/root */
    struct stat st;
    snprintf(p, sizeof(p), "/proc/%ld/root", pid);
    bool view = probe_host_files(ctx) ? proc_mntns(ctx, pid, o, unread, who) : hostfs_stat(ctx->fs, p, &st, true) == 0;
    if (view) {
        proc_view(ctx, pid, o, who, &rc);
        if (rc != 0)
            proc_not_readable(unread, "root", rc);
    }
    proc_cgroup(ctx, pid, o, who);
    proc_target_describe(pid, o);
    if (c.uid != -2) {
        char *group = NULL;
        if (hostfs_read_file(ctx->fs, "/etc/group", 0, &group, NULL) != 0)
            group = NULL;
        json_object *acc = json_object_new_object();
        proc_judge_nodes(ctx, acc, &c, who, "process.denied", group);
        json_object_object_add(o, "access", acc);
        free(group);
        if (its_libcuda && probe_live(ctx)) /* vendor code on this machine: live modes only */
            proc_cuda_as_it(ctx, o, who, its_libcuda, envtext, envlen, &c);
    }
    free(envtext);
    free(its_libcuda);
    json_object_object_add(o, "not_readable", unread);
    size_t nu = json_object_array_length(unread);
    if (nu > 0) {
        char *list = str_dup("");
        for (size_t i = 0; list && i < nu; i++) {
            char *n = str_printf("%s%s/proc/%ld/%s", list, *list ? ", " : "", pid,
                                 jsonget_str(json_object_array_get_idx(unread, i), "file"));
            free(list);
            list = n;
        }
        report_add_finding(ctx->report, "process.not-readable", who, "%s: %s %s", list ? list : "?",
                           jsonget_str(json_object_array_get_idx(unread, 0), "error"),
                           "(gpucheckup could not judge what it hides)");
        free(list);
    }
    report_section_add_line(sec, nu ? REPORT_MARK_WARN : REPORT_MARK_INFO, "process", "%s, uid %ld", who, c.uid);
    return PROBE_DONE;
}
