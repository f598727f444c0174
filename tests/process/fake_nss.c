/* fake_nss.c: an NSS module (libnss_gcfake.so.2) that knows one user and group /etc/passwd and /etc/group do not: as LDAP or sssd would. */
#include <errno.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <string.h>
#include <sys/types.h>

/* gcldap (uid 4711, primary group 4711 gcldap), also in gcgpu (4712), a group only this module names. */
#define GC_UID 4711
#define GC_GID 4711
#define GC_GPU 4712

enum nss_status _nss_gcfake_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, int *err);
enum nss_status _nss_gcfake_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len, int *err);
enum nss_status _nss_gcfake_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t len, int *err);
enum nss_status _nss_gcfake_initgroups_dyn(const char *user, gid_t group, long *start, long *size, gid_t **groups,
                                           long limit, int *err);

static enum nss_status fake_user(struct passwd *pw, char *buf, size_t len, int *err)
{
    static const char strs[] = "gcldap\0x\0\0/home/gcldap\0/bin/sh";
    if (len < sizeof(strs)) {
        *err = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    memcpy(buf, strs, sizeof(strs));
    pw->pw_name = buf;
    pw->pw_passwd = buf + 7;
    pw->pw_gecos = buf + 9;
    pw->pw_dir = buf + 10;
    pw->pw_shell = buf + 23;
    pw->pw_uid = GC_UID;
    pw->pw_gid = GC_GID;
    return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_gcfake_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, int *err)
{
    if (strcmp(name, "gcldap") != 0)
        return NSS_STATUS_NOTFOUND;
    return fake_user(pw, buf, len, err);
}

enum nss_status _nss_gcfake_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len, int *err)
{
    if (uid != GC_UID)
        return NSS_STATUS_NOTFOUND;
    return fake_user(pw, buf, len, err);
}

enum nss_status _nss_gcfake_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t len, int *err)
{
    const char *name = gid == GC_GID ? "gcldap" : gid == GC_GPU ? "gcgpu" : NULL;
    if (!name)
        return NSS_STATUS_NOTFOUND;
    size_t n = strlen(name) + 1;
    if (len < n + 2 + 2 * sizeof(char *)) {
        *err = ERANGE;
        return NSS_STATUS_TRYAGAIN;
    }
    char **mem = (char **)(void *)buf; /* buf is suitably aligned by glibc's callers */
    mem[0] = NULL;
    char *s = buf + 2 * sizeof(char *);
    memcpy(s, name, n);
    memcpy(s + n, "x", 2);
    gr->gr_name = s;
    gr->gr_passwd = s + n;
    gr->gr_gid = gid;
    gr->gr_mem = mem;
    return NSS_STATUS_SUCCESS;
}

/* getgrouplist asks this: gcldap is in gcgpu. */
enum nss_status _nss_gcfake_initgroups_dyn(const char *user, gid_t group, long *start, long *size, gid_t **groups,
                                           long limit, int *err)
{
    (void)group;
    (void)limit;
    (void)err;
    if (strcmp(user, "gcldap") != 0)
        return NSS_STATUS_NOTFOUND;
    if (*start >= *size)
        return NSS_STATUS_SUCCESS; /* no room: glibc gives room enough for a test's few groups */
    (*groups)[(*start)++] = GC_GPU;
    return NSS_STATUS_SUCCESS;
}
