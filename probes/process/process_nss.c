/* process_nss.c: --user, live: the user and its groups from the system's databases (NSS: files, LDAP, sssd), asked in a child. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "process_internal.h"
#include "strutil.h"

/* In the child (an NSS module may load libraries, talk to a server or hang): getpwnam_r (getpwuid_r for a
 * number), getgrouplist, and each group's name. {"uid", "gid", "groups": [[gid, name|null], ...]}, or
 * {"error": "..."} ("" when the databases answer that there is no such user). */
static json_object *proc_nss_child(void *arg)
{
    const char *name = arg;
    json_object *o = json_object_new_object();
    static char buf[1 << 16];
    struct passwd pw, *pwp = NULL;
    int rc = getpwnam_r(name, &pw, buf, sizeof(buf), &pwp);
    uint64_t num;
    if (!pwp && str_to_u64(name, 10, &num) == 0)
        rc = getpwuid_r((uid_t)num, &pw, buf, sizeof(buf), &pwp);
    if (!pwp) {
        json_object_object_add(o, "error", json_object_new_string(rc ? strerror(rc) : ""));
        return o;
    }
    int n = 64;
    gid_t *gids = malloc(sizeof(gid_t) * (size_t)n);
    if (gids && getgrouplist(pw.pw_name, pw.pw_gid, gids, &n) < 0) {
        gid_t *more = realloc(gids, sizeof(gid_t) * (size_t)n);
        if (more)
            gids = more;
        if (!more || getgrouplist(pw.pw_name, pw.pw_gid, gids, &n) < 0)
            n = 0;
    }
    json_object_object_add(o, "uid", json_object_new_int64(pw.pw_uid));
    json_object_object_add(o, "gid", json_object_new_int64(pw.pw_gid));
    json_object *g = json_object_new_array();
    for (int i = 0; gids && i < n; i++) {
        static char gbuf[1 << 16];
        struct group gr, *grp = NULL;
        json_object *e = json_object_new_array();
        json_object_array_add(e, json_object_new_int64(gids[i]));
        getgrgid_r(gids[i], &gr, gbuf, sizeof(gbuf), &grp);
        json_object_array_add(e, grp ? json_object_new_string(grp->gr_name) : NULL);
        json_object_array_add(g, e);
    }
    free(gids);
    json_object_object_add(o, "groups", g);
    return o;
}

int proc_nss_user(struct probe_ctx *ctx, const char *name, struct proc_cred *c, long *gid, json_object *names,
                  char **why)
{
    struct isolate_result res;
    memset(&res, 0, sizeof(res));
    probe_isolate_run(ctx, proc_nss_child, (void *)name, &res);
    int rc = 0;
    json_object *v = res.status == ISOLATE_OK ? res.value : NULL;
    const char *err = jsonget_str(v, "error");
    if (!v || err) {
        rc = v && err && !*err ? -ENOENT : -EIO;
        *why = rc == -ENOENT ? NULL : str_sanitize(str_dup(err ? err : res.detail ? res.detail : "the lookup failed"));
        isolate_result_clear(&res);
        return rc;
    }
    c->uid = (long)jsonget_int(v, "uid", -1);
    *gid = (long)jsonget_int(v, "gid", -1);
    proc_cred_add(c, *gid);
    size_t n = 0;
    json_object *g = jsonget_array(v, "groups", &n);
    for (size_t i = 0; g && i < n; i++)
        proc_cred_add(c, (long)json_object_get_int64(json_object_array_get_idx(json_object_array_get_idx(g, i), 0)));
    /* the names, in C's order (primary first) */
    for (size_t k = 0; k < c->n; k++) {
        const char *nm = NULL;
        for (size_t i = 0; g && i < n; i++) {
            json_object *e = json_object_array_get_idx(g, i);
            if ((long)json_object_get_int64(json_object_array_get_idx(e, 0)) == (long)c->gids[k])
                nm = json_object_get_string(json_object_array_get_idx(e, 1));
        }
        char *s = nm ? str_sanitize(str_dup(nm)) : NULL;
        json_object_array_add(names, s ? json_object_new_string(s) : json_object_new_int64(c->gids[k]));
        free(s);
    }
    isolate_result_clear(&res);
    return 0;
}
