/* process_unitcheck.c: --unit (a systemd service's settings judged against the GPU) and --user (a user's access). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "isolate.h"
#include "jsonstr.h"
#include "process_internal.h"
#include "strutil.h"

static json_object *proc_list_json(const struct proc_list *l)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++)
        json_object_array_add(a, json_object_new_string(l->v[i]));
    return a;
}

static json_object *proc_tri_json(int v)
{
    return v < 0 ? NULL : json_object_new_boolean(v);
}

/* The device groups (/proc/devices names) a GPU node belongs to, for DeviceAllow=char-NAME. */
static const char *const *proc_node_groups(const char *path)
{
    static const char *const nv[] = {"nvidia-frontend", "nvidia", NULL}, *const uvm[] = {"nvidia-uvm", NULL},
                             *const drm[] = {"drm", NULL}, *const kfd[] = {"kfd", NULL}, *const none[] = {NULL};
    if (str_starts_with(path, "/dev/nvidia-uvm"))
        return uvm;
    if (str_starts_with(path, "/dev/nvidia"))
        return nv;
    if (str_starts_with(path, "/dev/dri/"))
        return drm;
    return strcmp(path, "/dev/kfd") == 0 ? kfd : none;
}

/* Does a DeviceAllow= entry grant read and write of node PATH? systemd.resource-control(5): a /dev path
 * or char-GROUP (a glob over /proc/devices' names), then the access letters (all of rwm when left out). */
static bool proc_allow_covers(const char *entry, const char *path)
{
    char spec[256], acc[8] = "rwm";
    if (sscanf(entry, "%255s %7s", spec, acc) < 1)
        return false;
    if (!strchr(acc, 'r') || !strchr(acc, 'w'))
        return false;
    if (str_starts_with(spec, "/dev/"))
        return strcmp(spec, path) == 0 || fnmatch(spec, path, FNM_PATHNAME) == 0;
    if (!str_starts_with(spec, "char-"))
        return false;
    for (const char *const *g = proc_node_groups(path); *g; g++)
        if (fnmatch(spec + 5, *g, 0) == 0)
            return true;
    return false;
}

/* The variables whose value in the unit and in this shell decides what a program finds. */
static bool proc_diff_var(const char *name)
{
    static const char *const vars[] = {
        "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
        "HSA_OVERRIDE_GFX_VERSION", "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", "LD_LIBRARY_PATH", "LD_PRELOAD",
        "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "VK_ICD_FILENAMES", "VK_DRIVER_FILES", "CUDA_DEVICE_ORDER", NULL,
    };
    for (size_t i = 0; vars[i]; i++)
        if (strcmp(vars[i], name) == 0)
            return true;
    return false;
}

/* Live: each such variable set differently in the unit than in this shell. */
static void proc_unit_env_diff(struct probe_ctx *ctx, const struct proc_unit *u, const struct proc_list *env)
{
    /* this shell's: gpucheckup's own environment, not a --pid's the run may have taken (isolate_target.c) */
    char *const *own = isolate_target_own_environ();
    struct proc_list names = {0};
    for (size_t i = 0; i < env->n; i++) {
        char *k = str_copy_n(env->v[i], strcspn(env->v[i], "="));
        if (k && proc_diff_var(k))
            proc_list_add(&names, k);
        free(k);
    }
    for (char *const *e = own; e && *e; e++) {
        char *k = str_copy_n(*e, strcspn(*e, "="));
        if (k && proc_diff_var(k) && !proc_list_has(&names, k))
            proc_list_add(&names, k);
        free(k);
    }
    for (size_t i = 0; i < names.n; i++) {
        const char *in_unit = proc_env_get(env, names.v[i]), *in_shell = isolate_target_own_getenv(names.v[i]);
        if (in_unit && in_shell && strcmp(in_unit, in_shell) == 0)
            continue;
        struct report_finding *f = report_add_finding(
            ctx->report, "unit.env-differs", names.v[i],
            "%s differs: %s sets %s%s%s, this shell %s%s%s: started by the unit the program sees %s%s%s, "
            "started by hand from this shell %s%s%s",
            names.v[i], u->name, in_unit ? "\"" : "", in_unit ? in_unit : "nothing", in_unit ? "\"" : "",
            in_shell ? "\"" : "", in_shell ? in_shell : "has none", in_shell ? "\"" : "", in_unit ? "\"" : "",
            in_unit ? in_unit : "it unset", in_unit ? "\"" : "", in_shell ? "\"" : "", in_shell ? in_shell : "it unset",
            in_shell ? "\"" : "");
        if (f) {
            report_finding_add_evidence(f, u->name, "%s", in_unit ? in_unit : "(unset)");
            report_finding_add_evidence(f, "this shell", "%s", in_shell ? in_shell : "(unset)");
        }
    }
    proc_list_clear(&names);
}

/* The unit's credentials: 0 with C and WHO set, 1 when it runs as root, -1 when its User= is unknown. */
static int proc_unit_cred(const struct proc_unit *u, const char *passwd, const char *group, const struct proc_cred *nss,
                          struct proc_cred *c, char *who, size_t wlen)
{
    memset(c, 0, sizeof(*c));
    if (u->dynamic_user == 1) {
        c->uid = -1; /* a uid of its own, which owns no device node, and no groups but those named */
        snprintf(who, wlen, "%s's dynamic user", u->name);
    } else if (u->user && nss) {
        *c = *nss; /* the user database's answer: uid, primary group, initgroups' groups */
        if (c->uid == 0)
            return 1;
        snprintf(who, wlen, "User=%s", u->user);
    } else if (u->user) {
        uint64_t num;
        long gid = -1;
        if (proc_passwd_find(passwd, u->user, &c->uid, &gid) != 0) {
            if (str_to_u64(u->user, 10, &num) != 0)
                return -1;
            c->uid = (long)num;
        }
        if (c->uid == 0)
            return 1;
        proc_cred_add(c, gid);
        proc_group_members(group, u->user, c); /* systemd calls initgroups() for User= */
        snprintf(who, wlen, "User=%s", u->user);
    } else {
        return 1;
    }
    if (u->group) {
        struct proc_cred had = *c;
        c->n = 0;
        proc_cred_add(c, proc_group_gid(group, u->group));
        if (u->dynamic_user != 1 && u->user && nss)
            for (size_t i = 1; i < had.n; i++) /* initgroups' groups, without the passwd primary group */
                proc_cred_add(c, (long)had.gids[i]);
        else if (u->dynamic_user != 1 && u->user)
            proc_group_members(group, u->user, c);
    }
    for (size_t i = 0; i < u->supp.n; i++)
        proc_cred_add(c, proc_group_gid(group, u->supp.v[i]));
    return 0;
}

/* Live: User= from the system's user database (NSS), so an LDAP or sssd service user is no unknown user.
 * 0 with *C; -ENOENT when it does not know the user; -EIO when it could not be asked (or not live). */
static int proc_unit_nss(struct probe_ctx *ctx, const struct proc_unit *u, struct proc_cred *c)
{
    if (!probe_host_files(ctx) || !u->user || u->dynamic_user == 1)
        return -EIO;
    long gid;
    char *why = NULL;
    json_object *names = json_object_new_array();
    memset(c, 0, sizeof(*c));
    int rc = proc_nss_user(ctx, u->user, c, &gid, names, &why);
    json_object_put(names);
    free(why);
    return rc;
}

/* The unit's device sandboxing against the GPU's nodes. */
static void proc_unit_devices(struct probe_ctx *ctx, const struct proc_unit *u)
{
    struct proc_node nodes[32];
    size_t n = proc_nodes(ctx, nodes, 32);
    if (n == 0)
        return; /* no GPU node to hide */
    if (u->private_devices == 1) {
        report_add_finding(ctx->report, "unit.private-devices", u->name,
                           "%s has PrivateDevices=yes: its /dev holds no device node, so none of the GPU's "
                           "%zu (%s%s) is there", u->name, n, nodes[0].path, n > 1 ? ", ..." : "");
        return;
    }
    const char *pol = u->device_policy ? u->device_policy : "auto";
    bool limited = strcmp(pol, "strict") == 0 || strcmp(pol, "closed") == 0 ||
                   (strcmp(pol, "auto") == 0 && u->device_allow.n > 0);
    if (!limited)
        return;
    char *miss = NULL;
    for (size_t i = 0; i < n; i++) {
        bool ok = false;
        for (size_t k = 0; k < u->device_allow.n && !ok; k++)
            ok = proc_allow_covers(u->device_allow.v[k], nodes[i].path);
        if (ok)
            continue;
        char *m = str_printf("%s%s%s", miss ? miss : "", miss ? ", " : "", nodes[i].path);
        free(miss);
        miss = m;
    }
    if (miss)
        report_add_finding(ctx->report, "unit.device-policy", u->name,
                           "%s has DevicePolicy=%s and no DeviceAllow= for %s: the service cannot open %s",
                           u->name, pol, miss, strchr(miss, ',') ? "them" : "it");
    free(miss);
}

static void proc_unit_json(json_object *o, const struct proc_unit *u, const struct proc_list *env)
{
    json_object_object_add(o, "dropins", proc_list_json(&u->dropins));
    json_object *e = json_object_new_object();
    for (size_t i = 0; i < env->n; i++) {
        char *k = str_copy_n(env->v[i], strcspn(env->v[i], "="));
        if (k)
            json_object_object_add(e, k, json_object_new_string(env->v[i] + strlen(k) + 1));
        free(k);
    }
    json_object_object_add(o, "environment", e);
    json_object_object_add(o, "user", jsonstr_or_null(u->user));
    json_object_object_add(o, "group", jsonstr_or_null(u->group));
    json_object_object_add(o, "supplementary_groups", proc_list_json(&u->supp));
    json_object_object_add(o, "dynamic_user", proc_tri_json(u->dynamic_user));
    json_object_object_add(o, "private_devices", proc_tri_json(u->private_devices));
    json_object_object_add(o, "device_policy", jsonstr_or_null(u->device_policy));
    json_object_object_add(o, "device_allow", proc_list_json(&u->device_allow));
    json_object_object_add(o, "exec_start", jsonstr_or_null(u->exec_start));
}

/* EnvironmentFile=: each read into ENV after Environment= (systemd.exec(5): the files' settings win). */
static json_object *proc_unit_env_files(struct probe_ctx *ctx, const struct proc_unit *u, struct proc_list *env)
{
    json_object *files = json_object_new_array();
    for (size_t i = 0; i < u->env_files.n; i++) {
        const char *v = u->env_files.v[i];
        bool optional = *v == '-';
        const char *path = v + optional;
        int rc = proc_env_file(ctx->fs, path, env);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(path));
        json_object_object_add(o, "optional", json_object_new_boolean(optional));
        json_object_object_add(o, "read", json_object_new_boolean(rc == 0));
        json_object_array_add(files, o);
        if (rc != 0 && !optional)
            report_add_finding(ctx->report, "unit.env-file-missing", path,
                               "%s names EnvironmentFile=%s, which cannot be read (%s): systemd refuses to start it",
                               u->name, path, strerror(-rc));
    }
    return files;
}

long proc_unit_run(struct probe_ctx *ctx, struct report_section *sec)
{
    /* the manager's merged view wins over our parse of the files where it answers (process_unitfind.c) */
    struct proc_unit_found found;
    proc_unit_find(ctx, &found);
    struct proc_unit u = found.u;
    int rc = found.rc;
    bool manager = found.manager;
    long main_pid = found.main_pid;
    json_object *o = json_object_new_object();
    json_object_object_add(sec->data, "unit", o);
    json_object_object_add(o, "source", json_object_new_string(manager ? "manager" : "files"));
    json_object_object_add(o, "manager_reason", jsonstr_or_null(found.pm.why));
    json_object_object_add(o, "active_state", jsonstr_or_null(found.pm.active_state));
    json_object_object_add(o, "name", jsonstr_or_null(u.name));
    json_object_object_add(o, "file", jsonstr_or_null(u.fragment));
    json_object_object_add(o, "masked", json_object_new_boolean(u.masked));
    if (rc != 0 || u.masked) {
        if (rc == -ENOENT)
            report_add_finding(ctx->report, "unit.not-found", u.name,
                               "No unit file %s in /etc/systemd/system, /run/systemd/system, "
                               "/usr/local/lib/systemd/system, /usr/lib/systemd/system or /lib/systemd/system",
                               u.name);
        else if (u.masked)
            report_add_finding(ctx->report, "unit.masked", u.name, "%s is masked (a link to /dev/null): it never starts",
                               u.name);
        proc_unit_found_free(&found);
        return 0;
    }
    struct proc_list env = {0};
    for (size_t i = 0; i < u.env.n; i++)
        proc_list_add(&env, u.env.v[i]);
    json_object *files = proc_unit_env_files(ctx, &u, &env);
    proc_unit_json(o, &u, &env);
    json_object_object_add(o, "environment_files", files);

    proc_unit_devices(ctx, &u);
    char *passwd = NULL, *group = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/passwd", 0, &passwd, NULL) != 0)
        passwd = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/group", 0, &group, NULL) != 0)
        group = NULL;
    struct proc_cred c;
    char who[160];
    struct proc_cred nc;
    int nss = proc_unit_nss(ctx, &u, &nc);
    int cr = proc_unit_cred(&u, passwd, group, nss == 0 ? &nc : NULL, &c, who, sizeof(who));
    if (cr < 0 && nss == -ENOENT)
        report_add_finding(ctx->report, "unit.unknown-user", u.user, "%s runs as User=%s, which the user database "
                           "(getent passwd: files, LDAP, sssd) does not know: systemd cannot start it", u.name, u.user);
    else if (cr < 0)
        report_add_finding(ctx->report, "unit.unknown-user", u.user, "%s runs as User=%s, which /etc/passwd does not "
                           "name: systemd cannot start it (unless NSS knows the user)", u.name, u.user);
    if (cr == 0) { /* judged also under PrivateDevices=yes: both are in the way */
        json_object *acc = json_object_new_object();
        proc_judge_nodes(ctx, acc, &c, who, "unit.user-denied", group);
        json_object_object_add(o, "access", acc);
    }
    for (size_t i = 0; i < env.n; i++) {
        char *k = str_copy_n(env.v[i], strcspn(env.v[i], "="));
        char *whom = str_printf("unit %s", u.name);
        if (k && whom)
            proc_judge_visibility(ctx, whom, u.name, k, env.v[i] + strlen(k) + 1);
        free(k);
        free(whom);
    }
    if (probe_live(ctx)) /* this shell's environment is the one to compare with (no --root, or --live) */
        proc_unit_env_diff(ctx, &u, &env);
    report_section_add_line(sec, REPORT_MARK_INFO, "unit", "%s (%s%s%zu drop-in%s; %s)", u.name,
                            u.fragment ? u.fragment : "no file", ", ", u.dropins.n, u.dropins.n == 1 ? "" : "s",
                            manager ? "as systemd's manager applies it" : "from its files");
    json_object_object_add(o, "main_pid", main_pid > 0 ? json_object_new_int64(main_pid) : NULL);
    if (main_pid > 0 && process_opts.pid <= 0)
        report_section_add_note(sec, "%s runs: its process %ld (%s) is judged as --pid %ld would%s", u.name,
                                main_pid, found.pid_source, main_pid,
                                proc_target_is(main_pid) ? ", and the run is its (pid.run_as_it)" : "");
    else if (main_pid <= 0)
        report_section_add_line(sec, REPORT_MARK_INFO, "unit", "%s is not running (%s): the environment and user "
                                "its program would get are predicted from its settings (Environment=, "
                                "EnvironmentFile=, User=)%s", u.name,
                                manager ? "the manager gives no MainPID" : "no process in its system.slice cgroup",
                                process_opts.pid > 0 ? "" : "; the run is gpucheckup's own");
    free(passwd);
    free(group);
    proc_list_clear(&env);
    proc_unit_found_free(&found);
    return main_pid;
}

void proc_user_run(struct probe_ctx *ctx, struct report_section *sec)
{
    char *passwd = NULL, *group = NULL, *why = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/passwd", 0, &passwd, NULL) != 0)
        passwd = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/group", 0, &group, NULL) != 0)
        group = NULL;
    json_object *o = json_object_new_object(), *g = json_object_new_array();
    json_object_object_add(sec->data, "user", o);
    json_object_object_add(o, "name", json_object_new_string(process_opts.user));
    struct proc_cred c = {0};
    long gid = -1;
    /* live, the system's databases (NSS) answer, LDAP and sssd users included; a tree, its files */
    bool nss = probe_host_files(ctx);
    int rc = nss ? proc_nss_user(ctx, process_opts.user, &c, &gid, g, &why) : -1;
    if (rc == -EIO) {
        report_section_add_note(sec, "the user database (NSS) could not be asked (%s): /etc/passwd and /etc/group "
                                     "are read instead", why);
        nss = false;
    }
    if (!nss && proc_passwd_find(passwd, process_opts.user, &c.uid, &gid) == 0) {
        rc = 0;
        proc_cred_add(&c, gid);
        proc_group_members(group, process_opts.user, &c);
        for (size_t i = 0; i < c.n; i++) {
            char *name = proc_group_name(group, (long)c.gids[i]);
            json_object_array_add(g, name ? json_object_new_string(name) : json_object_new_int64(c.gids[i]));
            free(name);
        }
    }
    json_object_object_add(o, "source", json_object_new_string(nss ? "nss" : "files"));
    if (rc != 0) {
        json_object_put(g);
        json_object_object_add(o, "uid", NULL);
        report_add_finding(ctx->report, "user.unknown", process_opts.user, "%s has no user %s",
                           nss ? "The user database (getent passwd: files, LDAP, sssd)" : "/etc/passwd",
                           process_opts.user);
    } else {
        json_object_object_add(o, "uid", json_object_new_int64(c.uid));
        json_object_object_add(o, "gid", json_object_new_int64(gid));
        json_object_object_add(o, "groups", g);
        size_t denied = proc_judge_nodes(ctx, o, &c, process_opts.user, "user.denied", group);
        size_t n = json_object_array_length(json_object_object_get(o, "nodes"));
        report_section_add_line(sec, denied ? REPORT_MARK_ERROR : REPORT_MARK_OK, "user", "%s (uid %ld): %s",
                                process_opts.user, c.uid,
                                n == 0 ? "no GPU device node to judge" : denied ? "cannot open some GPU device nodes"
                                                                                : "can open every GPU device node");
    }
    free(why);
    free(passwd);
    free(group);
}
