/* devnode.c: open a device node as a compute runtime does and say why it fails (errno, group, membership). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devnode.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"

/* The name of group GID in /etc/group (through hostfs) and whether it lists USER; heap name or NULL. */
static char *devnode_group_of(const struct hostfs *fs, gid_t gid, const char *user, int *listed)
{
    char *text = NULL, *name = NULL, *save = NULL;
    *listed = -1;
    if (hostfs_read_file(fs, "/etc/group", 1024 * 1024, &text, NULL) < 0)
        return NULL;
    for (char *line = strtok_r(text, "\n", &save); line && !name; line = strtok_r(NULL, "\n", &save)) {
        char *f[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4 && f[i - 1]; i++) {
            char *c = strchr(f[i - 1], ':');
            if (c) {
                *c = '\0';
                f[i] = c + 1;
            }
        }
        uint64_t g;
        if (!f[3] || str_to_u64(f[2], 10, &g) < 0 || g != (uint64_t)gid)
            continue;
        name = str_dup(f[0]);
        *listed = 0;
        char *s2 = NULL;
        for (char *m = strtok_r(f[3], ",", &s2); m && user; m = strtok_r(NULL, ",", &s2))
            if (strcmp(m, user) == 0)
                *listed = 1;
    }
    free(text);
    return name;
}

/* Does this process hold group GID? */
static bool devnode_have_group(gid_t gid)
{
    if (getegid() == gid)
        return true;
    gid_t g[256];
    int n = getgroups(256, g);
    for (int i = 0; i < n; i++)
        if (g[i] == gid)
            return true;
    return false;
}

json_object *devnode_open_json(const struct hostfs *fs, const char *path, const char *user)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(path));
    /* O_RDWR, as libhsakmt opens /dev/kfd (hsaKmtOpenKFD) and the render node (drmOpenRender-like). */
    int fd = hostfs_openat(fs, path, O_RDWR | O_NOCTTY); /* a device node: the open is the point (no O_NONBLOCK: the NVIDIA driver then defers its GPU set-up) */
    int err = fd < 0 ? -fd : 0;
    if (fd >= 0)
        close(fd);
    json_object_object_add(o, "opened", json_object_new_boolean(fd >= 0));
    json_object_object_add(o, "errno", err ? json_object_new_string(strerrorname_np(err) ? strerrorname_np(err) : "?") : NULL);
    json_object_object_add(o, "error", err ? json_object_new_string(strerror(err)) : NULL);
    struct stat st;
    char *group = NULL;
    int listed = -1;
    bool have = hostfs_stat(fs, path, &st, true) == 0;
    if (have)
        group = devnode_group_of(fs, st.st_gid, user, &listed);
    json_object_object_add(o, "group", jsonstr_or_null(group));
    json_object_object_add(o, "user_in_group", have ? json_object_new_boolean(devnode_have_group(st.st_gid)) : NULL);
    json_object_object_add(o, "listed_in_group", listed >= 0 ? json_object_new_boolean(listed == 1) : NULL);
    free(group);
    return o;
}

char *devnode_why(json_object *o)
{
    const char *en = jsonget_str(o, "errno"), *err = jsonget_str(o, "error"), *group = jsonget_str(o, "group");
    if (!en)
        return NULL;
    if (strcmp(en, "EACCES") == 0 && group)
        return str_printf("%s (%s): its group is %s, and this process is %s it%s", en, err ? err : "", group,
                          jsonget_tri(o, "user_in_group") == GC_TRI_YES ? "in" : "not in",
                          jsonget_tri(o, "listed_in_group") == GC_TRI_YES && jsonget_tri(o, "user_in_group") != GC_TRI_YES
                              ? " (/etc/group lists the user: log in again)" : "");
    return str_printf("%s (%s)", en, err ? err : "");
}

