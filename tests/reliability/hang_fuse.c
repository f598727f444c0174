/* hang_fuse.c: a FUSE filesystem whose reads never return, mounted in a private mount namespace around a command (test helper). */
/*
 * hang_fuse DIR NAME[,NAME...] [DIR NAME[,NAME...]]... -- COMMAND [ARG...]
 *
 * As root: enters a mount namespace of its own (private propagation, so nothing shows outside), mounts over
 * each DIR a FUSE filesystem holding regular files NAME... (mode 0444, 4096 bytes, as sysfs attributes
 * look), then runs COMMAND there and exits with its status. Looking the files up, stat and open answer at
 * once; every READ is never answered, as on a hung NFS or FUSE mount: the reader blocks in the kernel,
 * where O_NONBLOCK does nothing. Speaks the kernel's FUSE protocol (linux/fuse.h) on /dev/fuse itself: no
 * libfuse, no fusermount. One server process per mount; each dies with COMMAND (PR_SET_PDEATHSIG).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HF_MAX_NAMES 64
#define HF_ROOT 1

static char *hf_names[HF_MAX_NAMES];
static size_t hf_n;

static void hf_reply(int fd, uint64_t unique, int error, const void *arg, size_t len)
{
    char buf[sizeof(struct fuse_out_header) + 512];
    struct fuse_out_header *h = (struct fuse_out_header *)buf;
    if (len > 512)
        len = 512;
    h->len = (uint32_t)(sizeof(*h) + (error ? 0 : len));
    h->error = -error;
    h->unique = unique;
    if (!error && len)
        memcpy(buf + sizeof(*h), arg, len);
    if (write(fd, buf, h->len) < 0 && errno != ENOENT)
        perror("hang_fuse: write /dev/fuse");
}

static void hf_attr(uint64_t node, struct fuse_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->ino = node;
    a->nlink = 1;
    a->blksize = 4096;
    if (node == HF_ROOT) {
        a->mode = S_IFDIR | 0555;
        a->nlink = 2;
    } else {
        a->mode = S_IFREG | 0444;
        a->size = 4096;
        a->blocks = 8;
    }
}

static void hf_serve(int fd)
{
    static char req[FUSE_MIN_READ_BUFFER + 1024 * 1024];
    for (;;) {
        ssize_t n = read(fd, req, sizeof(req));
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
            continue;
        if (n < (ssize_t)sizeof(struct fuse_in_header))
            _exit(0); /* unmounted */
        struct fuse_in_header *in = (struct fuse_in_header *)req;
        const char *body = req + sizeof(*in);
        switch (in->opcode) {
        case FUSE_INIT: {
            const struct fuse_init_in *ii = (const struct fuse_init_in *)body;
            struct fuse_init_out o;
            memset(&o, 0, sizeof(o));
            o.major = FUSE_KERNEL_VERSION;
            o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
            o.max_readahead = ii->max_readahead;
            o.max_write = 4096;
            o.max_background = 16;
            o.congestion_threshold = 12;
            hf_reply(fd, in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_LOOKUP: {
            int err = ENOENT;
            struct fuse_entry_out e;
            memset(&e, 0, sizeof(e));
            for (size_t i = 0; in->nodeid == HF_ROOT && i < hf_n; i++)
                if (strcmp(body, hf_names[i]) == 0) {
                    e.nodeid = HF_ROOT + 1 + i;
                    e.entry_valid = e.attr_valid = 3600;
                    hf_attr(e.nodeid, &e.attr);
                    err = 0;
                }
            hf_reply(fd, in->unique, err, &e, sizeof(e));
            break;
        }
        case FUSE_GETATTR: {
            struct fuse_attr_out a;
            memset(&a, 0, sizeof(a));
            a.attr_valid = 3600;
            hf_attr(in->nodeid, &a.attr);
            hf_reply(fd, in->unique, 0, &a, sizeof(a));
            break;
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
            struct fuse_open_out o;
            memset(&o, 0, sizeof(o));
            o.open_flags = FOPEN_DIRECT_IO; /* every read reaches here: none is answered from a cache */
            hf_reply(fd, in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_READ:
            break; /* never answered: the reader waits for good */
        case FUSE_READDIR:
            hf_reply(fd, in->unique, 0, NULL, 0); /* an empty listing */
            break;
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
            hf_reply(fd, in->unique, 0, NULL, 0);
            break;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
            break; /* no reply: the interrupted READ stays unanswered too */
        case FUSE_DESTROY:
            _exit(0);
        default:
            hf_reply(fd, in->unique, ENOSYS, NULL, 0);
        }
    }
}

/* Mount a hanging filesystem holding NAMES (comma-separated) over DIR, served by a child of this process. */
static int hf_mount(const char *dir, char *names)
{
    hf_n = 0;
    for (char *save = NULL, *t = strtok_r(names, ",", &save); t && hf_n < HF_MAX_NAMES; t = strtok_r(NULL, ",", &save))
        hf_names[hf_n++] = t;
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        perror("hang_fuse: /dev/fuse");
        return -1;
    }
    char opts[256];
    snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
    if (mount("hang_fuse", dir, "fuse.hang_fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
        fprintf(stderr, "hang_fuse: mount %s: %s\n", dir, strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the command this process becomes ends: so does the server */
        if (getppid() != parent)
            _exit(0);
        hf_serve(fd);
        _exit(0);
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        perror("hang_fuse: a private mount namespace");
        return 125;
    }
    for (; i + 1 < argc && strcmp(argv[i], "--") != 0; i += 2)
        if (hf_mount(argv[i], argv[i + 1]) < 0)
            return 125;
    if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc) {
        fprintf(stderr, "usage: hang_fuse DIR NAME[,NAME...]... -- COMMAND [ARG...]\n");
        return 125;
    }
    execvp(argv[i + 1], argv + i + 1);
    perror("hang_fuse: exec");
    return 126;
}
