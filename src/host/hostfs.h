/* hostfs.h: the one way gpucheckup reads /sys, /proc, /dev and /etc, re-rootable with --root. */
#ifndef GPUCHECKUP_HOSTFS_H
#define GPUCHECKUP_HOSTFS_H

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Default cap on a file read through hostfs_read_file(): host files are small; a 100 MB file is
 * not a sysfs attribute, and reading it whole would be a denial of service. */
#define HOSTFS_MAX_READ (1024 * 1024)

struct hostfs {
    int root_fd;     /* directory fd of the root */
    char *root;      /* the root path as given ("/" when live) */
    bool live;       /* root is this machine's "/" */
    FILE *trace;     /* when set, every path looked up is written here, one per line */
};

/* Open ROOT (NULL or "/" for the live system). Returns 0, or -errno when ROOT cannot be opened as a
 * directory (-ENOENT, -ENOTDIR, -EACCES...). */
int hostfs_open(struct hostfs *fs, const char *root);
void hostfs_close(struct hostfs *fs);

/* All functions below take PATH as an absolute host path ("/sys/bus/pci/devices"), resolved inside the
 * root: ".." and absolute symlinks cannot escape it (openat2 RESOLVE_IN_ROOT where the kernel has it). */

/* Name PATH in the GPUCHECKUP_FS_TRACE list (FS->trace; nothing when unset or PATH is NULL): hostfs's
 * own lookups do this; call it for what is learnt by listing a directory or read by a library itself
 * (libpci), which hostfs does not see. Safe beside forks: never write FS->trace any other way. */
void hostfs_trace(const struct hostfs *fs, const char *path);

/* open(2) inside the root. Returns an fd or -errno. O_CLOEXEC is always added. A path to read as a file
 * is opened with hostfs_open_file instead; this is for directories, O_PATH and device nodes. */
int hostfs_openat(const struct hostfs *fs, const char *path, int flags);
/* Open PATH inside the root to read it as a file: O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC (opening a
 * FIFO never waits for a writer), then fstat. Returns the fd of a regular file (a sysfs attribute is one),
 * -EISDIR for a directory, or -EINVAL for anything else (a FIFO, a socket, a block or character device:
 * reading one could block forever or have side effects), which is also recorded in the calling thread's
 * tracker (hostfs_track_refusals) so the run can name the path and what it is; or -errno. */
int hostfs_open_file(const struct hostfs *fs, const char *path);
/* Whether PATH, if it exists, is a regular file, without opening it for reading (for files a library opens
 * itself: libpci's): 0 when it is one, -EISDIR for a directory, -EINVAL (recorded as hostfs_open_file does)
 * for anything else, or -errno (-ENOENT). */
int hostfs_check_file(const struct hostfs *fs, const char *path);
/* pread(2) of a file hostfs_open_file opened, with the fork gate let go meanwhile (a read of a hung mount
 * never returns) and the thread's tracker saying it is inside a read. Same returns as pread. */
ssize_t hostfs_pread(int fd, void *buf, size_t n, off_t off);
/* Read a whole file (at most MAX bytes; 0 = HOSTFS_MAX_READ) into a NUL-terminated heap buffer.
 * Returns 0 and sets *OUT (caller frees) and *LEN (may be NULL), or -errno; -EFBIG when the file is
 * larger than MAX, -EISDIR for a directory. */
int hostfs_read_file(const struct hostfs *fs, const char *path, size_t max, char **out, size_t *len);
/* Read a record stream such as /dev/kmsg from its start to its current end, never waiting: a character
 * device only when FS is the live root (each read(2) gives one record; EAGAIN ends it, EPIPE, records
 * overwritten while reading, is counted in *LOST and skipped), else a regular file read whole. At most
 * MAX bytes (0 = HOSTFS_MAX_READ): what fits is kept and *CAPPED set. Returns 0 and sets *OUT (heap,
 * NUL-terminated; caller frees) and *LEN, or -errno (-EPERM, -EACCES: not allowed to read the log;
 * -EINVAL: neither a regular file nor, live, a character device). */
int hostfs_read_stream(const struct hostfs *fs, const char *path, size_t max, char **out, size_t *len, bool *capped,
                       size_t *lost);
/* Read a one-line attribute (sysfs style): the file, whitespace-trimmed, sanitised. 0 or -errno. */
int hostfs_read_attr(const struct hostfs *fs, const char *path, char **out);
/* Read an attribute as an unsigned integer (base 0: "0x10de" and "16" both work). 0, -errno, or
 * -EINVAL when the content is not a number. */
int hostfs_read_u64(const struct hostfs *fs, const char *path, uint64_t *out);
/* readlink(2) inside the root: the link text itself (not resolved), in a heap string. 0 or -errno. */
int hostfs_readlink(const struct hostfs *fs, const char *path, char **out);
/* stat(2) (following links when FOLLOW) inside the root. 0 or -errno. */
int hostfs_stat(const struct hostfs *fs, const char *path, struct stat *st, bool follow);
/* access(2) with the effective IDs, inside the root (MODE as for access). 0 or -errno. */
int hostfs_access(const struct hostfs *fs, const char *path, int mode);
/* Open a directory for listing; NULL with errno set on failure. Close with closedir(). */
DIR *hostfs_opendir(const struct hostfs *fs, const char *path);
/* The on-disk path of PATH under the root (for libraries that want a path, e.g. libpci's
 * sysfs.path). Caller frees. */
char *hostfs_real_path(const struct hostfs *fs, const char *path);

/* ---- where each thread is (the run's watchdog) and what it refused ------------------------------------
 * A probe thread blocked in a read that O_NONBLOCK cannot help (NFS, FUSE, a sysfs attribute of a device
 * gone from the bus) is abandoned by the run at its deadline; its tracker says where it was. Each thread
 * names its tracker with hostfs_track_use; hostfs updates it on every lookup (a thread without one is not
 * tracked). The run reads it from another thread, under its lock. */
#define HOSTFS_TRACK_PATH 512
#define HOSTFS_TRACK_REFUSED 8

struct hostfs_refusal {
    char path[HOSTFS_TRACK_PATH];
    const char *kind; /* "a FIFO", "a socket", ... (hostfs_kind_name) */
};

struct hostfs_track {
    pthread_mutex_t mu;
    char where[HOSTFS_TRACK_PATH]; /* the last host path looked up ("" before any) */
    bool in_call;                  /* inside the open or read of WHERE now */
    struct hostfs_refusal refused[HOSTFS_TRACK_REFUSED];
    size_t n_refused;              /* how many were refused; those past HOSTFS_TRACK_REFUSED only counted */
};

/* Set up and tear down T (its lock). */
void hostfs_track_init(struct hostfs_track *t);
void hostfs_track_destroy(struct hostfs_track *t);
/* Make T (NULL: none) the calling thread's tracker; returns the one it had. */
struct hostfs_track *hostfs_track_use(struct hostfs_track *t);
/* Name PATH as where the calling thread is (IN_CALL: in a call that may block on it), for reads hostfs does
 * not do itself (libpci's); hostfs_track_done when the call is over. No-ops without a tracker. */
void hostfs_track_enter(const char *path, bool in_call);
void hostfs_track_done(void);
/* Copy T's place into BUF (SIZE bytes; "" when none); returns whether it was inside a call there. */
bool hostfs_track_where(struct hostfs_track *t, char *buf, size_t size);
/* "a FIFO", "a socket", "a block device", "a character device", "a directory", "a symbolic link",
 * "a regular file", or "an unknown kind of file", for st_mode MODE. */
const char *hostfs_kind_name(mode_t mode);

#endif
