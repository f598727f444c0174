/* hostfs.c: the one way gpucheckup reads /sys, /proc, /dev and /etc, re-rootable with --root. */
#include "hostfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HOSTFS_HAVE_OPENAT2 1
#endif
#endif

#include "isolate.h"
#include "strutil.h"

int hostfs_open(struct hostfs *fs, const char *root)
{
    memset(fs, 0, sizeof(*fs));
    fs->root_fd = -1;
    if (!root || !*root)
        root = "/";
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat a, b;
    bool live = false;
    if (fstat(fd, &a) == 0 && stat("/", &b) == 0)
        live = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    fs->root_fd = fd;
    fs->root = strdup(root);
    fs->live = live;
    if (!fs->root) {
        close(fd);
        fs->root_fd = -1;
        return -ENOMEM;
    }
    return 0;
}

void hostfs_close(struct hostfs *fs)
{
    if (fs->root_fd >= 0)
        close(fs->root_fd);
    free(fs->root);
    fs->root_fd = -1;
    fs->root = NULL;
}

/* PATH relative to the root: strip leading slashes; "" becomes ".". */
static const char *hostfs_rel(const char *path)
{
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

/* ---- the calling thread's tracker --------------------------------------------------------------- */

static _Thread_local struct hostfs_track *hostfs_cur_track;

void hostfs_track_init(struct hostfs_track *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
}

void hostfs_track_destroy(struct hostfs_track *t)
{
    pthread_mutex_destroy(&t->mu);
}

struct hostfs_track *hostfs_track_use(struct hostfs_track *t)
{
    struct hostfs_track *old = hostfs_cur_track;
    hostfs_cur_track = t;
    return old;
}

void hostfs_track_enter(const char *path, bool in_call)
{
    struct hostfs_track *t = hostfs_cur_track;
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    if (path)
        snprintf(t->where, sizeof(t->where), "%s", path);
    t->in_call = in_call;
    pthread_mutex_unlock(&t->mu);
}

void hostfs_track_done(void)
{
    hostfs_track_enter(NULL, false);
}

bool hostfs_track_where(struct hostfs_track *t, char *buf, size_t size)
{
    pthread_mutex_lock(&t->mu);
    snprintf(buf, size, "%s", t->where);
    bool in = t->in_call;
    pthread_mutex_unlock(&t->mu);
    return in;
}

const char *hostfs_kind_name(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "an unknown kind of file";
}

/* PATH was not read: it is KIND. Recorded once per path in the calling thread's tracker. */
static void hostfs_track_refused(const char *path, const char *kind)
{
    struct hostfs_track *t = hostfs_cur_track;
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    bool seen = false;
    for (size_t i = 0; i < t->n_refused && i < HOSTFS_TRACK_REFUSED; i++)
        seen = seen || strncmp(t->refused[i].path, path, sizeof(t->refused[i].path) - 1) == 0;
    if (!seen) {
        if (t->n_refused < HOSTFS_TRACK_REFUSED) {
            snprintf(t->refused[t->n_refused].path, sizeof(t->refused[t->n_refused].path), "%s", path);
            t->refused[t->n_refused].kind = kind;
        }
        t->n_refused++;
    }
    pthread_mutex_unlock(&t->mu);
}

void hostfs_trace(const struct hostfs *fs, const char *path)
{
    isolate_gate_yield(); /* every read of the host passes here: a child waiting to be forked goes first */
    /* Probe threads write here while others fork: they hold the fork gate meanwhile, and a fork flushes
     * every stream first, so no child keeps a line in its copy of the buffer to write a second time. */
    if (fs->trace && path)
        fprintf(fs->trace, "%s\n", path);
}

/* The lookup itself (no allocation, no lock: the fork gate is let go around it). */
static int hostfs_openat_sys(const struct hostfs *fs, const char *rel, int flags)
{
    int fd;
    if (fs->live) {
        fd = openat(fs->root_fd, rel, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
    }
#ifdef HOSTFS_HAVE_OPENAT2
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    /* openat2(2): with RESOLVE_IN_ROOT, a path whose walk meets ".." (a captured sysfs is full of
     * "../../devices" links) fails with EAGAIN whenever any rename or mount on the system races the walk,
     * and "the caller may choose to retry". On a busy machine (CI running tests side by side) that made a
     * tree's attribute read fail now and then: retried, boundedly. */
    for (int tries = 0;; tries++) {
        fd = (int)syscall(SYS_openat2, fs->root_fd, rel, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN || tries >= 64)
            break;
    }
    if (fd >= 0)
        return fd;
    if (errno != ENOSYS && errno != EPERM)
        return -errno;
#endif
    /* Old kernel: plain openat. Absolute symlinks in a captured tree could then point at the host;
     * refuse any path with ".." at least. */
    if (strstr(rel, "..") && (strcmp(rel, "..") == 0 || strstr(rel, "../") || str_ends_with(rel, "/..")))
        return -EACCES;
    fd = openat(fs->root_fd, rel, flags | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int hostfs_openat(const struct hostfs *fs, const char *path, int flags)
{
    hostfs_trace(fs, path);
    const char *rel = hostfs_rel(path);
    /* An open can block for good (a hung NFS or FUSE mount, a device's open): the thread is tracked as
     * being there, and lets go of the fork gate meanwhile, so that other probes' children still start
     * and the run's watchdog can leave it behind (HACKING.md, "The run's watchdog"). */
    hostfs_track_enter(path, true);
    int held = isolate_gate_release();
    int fd = hostfs_openat_sys(fs, rel, flags);
    isolate_gate_restore(held);
    hostfs_track_done();
    return fd;
}

int hostfs_open_file(const struct hostfs *fs, const char *path)
{
    int fd = hostfs_openat(fs, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd == -ENXIO) /* a socket cannot be opened at all (nor a FIFO without a writer for writing): say what */
        return hostfs_check_file(fs, path) == -EINVAL ? -EINVAL : fd;
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (S_ISREG(st.st_mode))
        return fd;
    close(fd);
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    /* A FIFO, socket or device node where a file belongs: reading it could block forever or have side
     * effects. Never read; the run names it (core.not-a-regular-file). */
    hostfs_track_refused(path, hostfs_kind_name(st.st_mode));
    return -EINVAL;
}

int hostfs_check_file(const struct hostfs *fs, const char *path)
{
    int fd = hostfs_openat(fs, path, O_PATH); /* never waits for a FIFO's writer, never reads */
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
    close(fd);
    if (rc == -EINVAL)
        hostfs_track_refused(path, hostfs_kind_name(st.st_mode));
    return rc;
}

ssize_t hostfs_pread(int fd, void *buf, size_t n, off_t off)
{
    hostfs_track_enter(NULL, true);
    int held = isolate_gate_release();
    ssize_t r = pread(fd, buf, n, off);
    int e = errno;
    isolate_gate_restore(held);
    hostfs_track_done();
    errno = e;
    return r;
}

/* read(2) of what hostfs opened, the fork gate let go meanwhile (a read of a hung mount blocks for good). */
static ssize_t hostfs_read_sys(int fd, void *buf, size_t n)
{
    int held = isolate_gate_release();
    ssize_t r = read(fd, buf, n);
    int e = errno;
    isolate_gate_restore(held);
    errno = e;
    return r;
}

int hostfs_read_file(const struct hostfs *fs, const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    if (len)
        *len = 0;
    if (max == 0)
        max = HOSTFS_MAX_READ;
    int fd = hostfs_open_file(fs, path);
    if (fd < 0)
        return fd;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                return -EFBIG;
            }
            size_t ncap = cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                close(fd);
                return -ENOMEM;
            }
            buf = nb;
            cap = ncap;
        }
        hostfs_track_enter(path, true);
        ssize_t r = hostfs_read_sys(fd, buf + n, cap - n);
        hostfs_track_done();
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            free(buf);
            close(fd);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            free(buf);
            close(fd);
            return -EFBIG;
        }
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int hostfs_read_stream(const struct hostfs *fs, const char *path, size_t max, char **out, size_t *len, bool *capped,
                       size_t *lost)
{
    enum { CHUNK = 16 * 1024 }; /* room for one whole record: a smaller buffer makes /dev/kmsg's read fail (EINVAL) */
    *out = NULL;
    *len = 0;
    *capped = false;
    *lost = 0;
    max = max ? max : HOSTFS_MAX_READ;
    int fd = hostfs_openat(fs, path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && fs->live))) {
        /* a FIFO or socket: never read, and named (core.not-a-regular-file); a tree's device node is no log */
        bool named = fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
        close(fd);
        if (named)
            hostfs_track_refused(path, hostfs_kind_name(st.st_mode));
        return -EINVAL;
    }
    size_t cap = CHUNK, n = 0;
    char *buf = malloc(cap + 1);
    int rc = buf ? 0 : -ENOMEM;
    while (rc == 0 && n < max) {
        if (cap - n < CHUNK) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        hostfs_track_enter(path, true); /* a tree's log on a hung mount blocks here: the watchdog names it */
        ssize_t r = hostfs_read_sys(fd, buf + n, CHUNK);
        int e = errno;
        hostfs_track_done();
        errno = e;
        if (r > 0)
            n += (size_t)r;
        else if (r == 0 || errno == EAGAIN)
            break;
        else if (errno == EPIPE)
            (*lost)++;
        else if (errno != EINTR)
            rc = -errno;
        if (*lost > 1000000) /* a writer faster than this reader: stop rather than chase it */
            break;
    }
    if (rc == 0 && n >= max) {
        *capped = true;
        n = max;
        while (n > 0 && buf[n - 1] != '\n') /* keep whole records only */
            n--;
    }
    close(fd);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int hostfs_read_attr(const struct hostfs *fs, const char *path, char **out)
{
    size_t len;
    int rc = hostfs_read_file(fs, path, 64 * 1024, out, &len);
    if (rc < 0)
        return rc;
    if (strlen(*out) != len) { /* embedded NUL: keep what precedes it */
        (*out)[strlen(*out)] = '\0';
    }
    str_sanitize(str_trim(*out));
    return 0;
}

int hostfs_read_u64(const struct hostfs *fs, const char *path, uint64_t *out)
{
    char *s = NULL;
    int rc = hostfs_read_attr(fs, path, &s);
    if (rc < 0)
        return rc;
    rc = str_to_u64(s, 0, out) == 0 ? 0 : -EINVAL;
    free(s);
    return rc;
}

/* Open the parent directory of PATH (inside the root) and return the base name in *BASE. */
static int hostfs_open_parent(const struct hostfs *fs, const char *path, const char **base)
{
    const char *rel = hostfs_rel(path);
    const char *slash = strrchr(rel, '/');
    if (!slash) {
        *base = rel;
        int fd = dup(fs->root_fd);
        return fd < 0 ? -errno : fd;
    }
    char *dir = strndup(rel, (size_t)(slash - rel));
    if (!dir)
        return -ENOMEM;
    char *abs = str_printf("/%s", dir);
    free(dir);
    if (!abs)
        return -ENOMEM;
    int fd = hostfs_openat(fs, abs, O_RDONLY | O_DIRECTORY | O_PATH);
    free(abs);
    *base = slash + 1;
    return fd;
}

int hostfs_readlink(const struct hostfs *fs, const char *path, char **out)
{
    *out = NULL;
    hostfs_trace(fs, path);
    const char *base;
    int dfd = hostfs_open_parent(fs, path, &base);
    if (dfd < 0)
        return dfd;
    char buf[4096];
    hostfs_track_enter(path, true);
    int held = isolate_gate_release(); /* a lookup on a hung mount can block for good */
    ssize_t n = readlinkat(dfd, base, buf, sizeof(buf) - 1);
    int e = errno;
    isolate_gate_restore(held);
    hostfs_track_done();
    close(dfd);
    if (n < 0)
        return -e;
    buf[n] = '\0';
    *out = strdup(buf);
    return *out ? 0 : -ENOMEM;
}

int hostfs_stat(const struct hostfs *fs, const char *path, struct stat *st, bool follow)
{
    if (follow) {
        int fd = hostfs_openat(fs, path, O_PATH);
        if (fd < 0)
            return fd;
        int rc = fstat(fd, st) == 0 ? 0 : -errno;
        close(fd);
        return rc;
    }
    hostfs_trace(fs, path);
    const char *base;
    int dfd = hostfs_open_parent(fs, path, &base);
    if (dfd < 0)
        return dfd;
    hostfs_track_enter(path, true);
    int held = isolate_gate_release();
    int rc = fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
    isolate_gate_restore(held);
    hostfs_track_done();
    close(dfd);
    return rc;
}

int hostfs_access(const struct hostfs *fs, const char *path, int mode)
{
    hostfs_trace(fs, path);
    const char *base;
    int dfd = hostfs_open_parent(fs, path, &base);
    if (dfd < 0)
        return dfd;
    hostfs_track_enter(path, true);
    int held = isolate_gate_release();
    int rc = faccessat(dfd, base, mode, AT_EACCESS) == 0 ? 0 : -errno;
    isolate_gate_restore(held);
    hostfs_track_done();
    close(dfd);
    return rc;
}

DIR *hostfs_opendir(const struct hostfs *fs, const char *path)
{
    int fd = hostfs_openat(fs, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return d;
}

char *hostfs_real_path(const struct hostfs *fs, const char *path)
{
    const char *rel = hostfs_rel(path);
    if (fs->live)
        return str_printf("/%s", strcmp(rel, ".") == 0 ? "" : rel);
    size_t rl = strlen(fs->root);
    const char *sep = (rl > 0 && fs->root[rl - 1] == '/') ? "" : "/";
    return str_printf("%s%s%s", fs->root, sep, strcmp(rel, ".") == 0 ? "" : rel);
}
