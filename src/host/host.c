/* host.c: identification of the machine being diagnosed (hostname, kernel, OS, user). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "host.h"
#include "strutil.h"

/* The name of user ID (GROUP false) or group ID from the user database, reentrantly: the buffer starts
 * at what sysconf says and grows on ERANGE. A heap string, or NULL. */
static char *host_nss_name(bool group, unsigned id)
{
    long hint = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
    char *name = NULL;
    for (size_t size = hint > 0 && hint < 65536 ? (size_t)hint : 1024; !name && size <= (1u << 20); size *= 4) {
        char *buf = malloc(size);
        if (!buf)
            break;
        struct passwd pw, *pwf = NULL;
        struct group gr, *grf = NULL;
        int rc = group ? getgrgid_r((gid_t)id, &gr, buf, size, &grf) : getpwuid_r((uid_t)id, &pw, buf, size, &pwf);
        if (rc == 0 && (grf || pwf))
            name = str_dup(group ? grf->gr_name : pwf->pw_name);
        free(buf);
        if (rc != ERANGE)
            break;
    }
    return name;
}

char *host_user_name(uid_t uid)
{
    return host_nss_name(false, (unsigned)uid);
}

char *host_group_name(gid_t gid)
{
    return host_nss_name(true, (unsigned)gid);
}

char *host_os_release(const char *text)
{
    char *best = NULL;
    int best_rank = 0;
    const char *line = text;
    while (line && *line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        int rank = 0;
        size_t klen = 0;
        if (len > 12 && strncmp(line, "PRETTY_NAME=", 12) == 0)
            rank = 2, klen = 12;
        else if (len > 5 && strncmp(line, "NAME=", 5) == 0)
            rank = 1, klen = 5;
        if (rank > best_rank) {
            char *v = strndup(line + klen, len - klen);
            if (v) {
                str_trim(v);
                size_t vl = strlen(v);
                if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
                    memmove(v, v + 1, vl - 2);
                    v[vl - 2] = '\0';
                }
                free(best);
                best = str_sanitize(v);
                best_rank = rank;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return best;
}

static void host_add_string(json_object *o, const char *key, const char *v)
{
    json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

void host_collect(const struct hostfs *fs, enum probe_mode mode, json_object *host)
{
    struct utsname u;
    bool have_uts = uname(&u) == 0;
    char *s = NULL;

    if (mode == PROBE_MODE_LIVE) {
        host_add_string(host, "hostname", have_uts ? u.nodename : NULL);
        host_add_string(host, "kernel", have_uts ? u.release : NULL);
        host_add_string(host, "architecture", have_uts ? u.machine : NULL);
    } else {
        /* A captured tree speaks for itself where it can. */
        char *hn = NULL, *kr = NULL;
        if (hostfs_read_attr(fs, "/proc/sys/kernel/hostname", &hn) < 0)
            hostfs_read_attr(fs, "/etc/hostname", &hn);
        hostfs_read_attr(fs, "/proc/sys/kernel/osrelease", &kr);
        host_add_string(host, "hostname", hn && *hn ? hn : NULL);
        host_add_string(host, "kernel", kr && *kr ? kr : NULL);
        host_add_string(host, "architecture", NULL);
        free(hn);
        free(kr);
    }
    char *os = NULL;
    if (hostfs_read_file(fs, "/etc/os-release", 64 * 1024, &s, NULL) == 0 ||
        hostfs_read_file(fs, "/usr/lib/os-release", 64 * 1024, &s, NULL) == 0) {
        os = host_os_release(s);
        free(s);
    }
    host_add_string(host, "os", os);
    free(os);

    json_object *user = json_object_new_object();
    uid_t uid = geteuid();
    char *uname = host_user_name(uid);
    host_add_string(user, "name", uname);
    free(uname);
    json_object_object_add(user, "uid", json_object_new_int64((int64_t)uid));
    json_object_object_add(user, "root", json_object_new_boolean(uid == 0));
    json_object *groups = json_object_new_array();
    int ng = getgroups(0, NULL);
    if (ng >= 0) {
        gid_t *gs = calloc((size_t)ng + 1, sizeof(*gs));
        if (gs && (ng = getgroups(ng, gs)) >= 0) {
            gs[ng++] = getegid();
            for (int i = 0; i < ng; i++) {
                bool dup = false;
                for (int j = 0; j < i; j++)
                    dup |= gs[j] == gs[i];
                if (dup)
                    continue;
                char *g = host_group_name(gs[i]);
                if (g)
                    json_object_array_add(groups, json_object_new_string(g));
                free(g);
            }
        }
        free(gs);
    }
    json_object_object_add(user, "groups", groups);
    json_object_object_add(host, "user", user);
    host_add_string(host, "root", fs->root);
    json_object_object_add(host, "live", json_object_new_boolean(mode == PROBE_MODE_LIVE));
}
