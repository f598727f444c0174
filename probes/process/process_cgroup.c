/* process_cgroup.c: --pid: the device rules of the process's cgroup (v1 devices.list, v2 an attached device program). */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "process_internal.h"
#include "strutil.h"

/* The mount point of the cgroup hierarchy in /proc/self/mountinfo whose type is FSTYPE ("cgroup", "cgroup2")
 * and, for v1, whose options name CONTROLLER; the hierarchy's root there into *ROOT. Heap, or NULL. */
static char *proc_cg_mount(const struct hostfs *fs, const char *fstype, const char *controller, char **root)
{
    char *text = NULL, *found = NULL;
    if (hostfs_read_file(fs, "/proc/self/mountinfo", 0, &text, NULL) != 0)
        return NULL;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
        char *sep = strstr(l, " - ");
        char mroot[512], mpoint[512], type[32], src[64], opts[512];
        if (!sep || sscanf(l, "%*s %*s %*s %511s %511s", mroot, mpoint) != 2 ||
            sscanf(sep + 3, "%31s %63s %511s", type, src, opts) != 3 || strcmp(type, fstype) != 0)
            continue;
        bool hit = !controller;
        char *s2 = NULL;
        for (char *w = strtok_r(opts, ",", &s2); w && !hit; w = strtok_r(NULL, ",", &s2))
            hit = strcmp(w, controller) == 0;
        if (hit) {
            found = str_dup(mpoint);
            *root = str_dup(mroot);
        }
    }
    free(text);
    return found;
}

/* The directory of cgroup PATH (as /proc/PID/cgroup names it) under the hierarchy mounted at MOUNT whose own
 * root is MROOT ("/" unless a container mounted a sub-tree). Heap. */
static char *proc_cg_dir(const char *mount, const char *mroot, const char *path)
{
    size_t rl = mroot ? strlen(mroot) : 0;
    if (rl > 1 && strncmp(path, mroot, rl) == 0 && (path[rl] == '/' || !path[rl]))
        path += rl;
    return str_printf("%s%s%s", mount, *path == '/' ? "" : "/", strcmp(path, "/") == 0 ? "" : path);
}

/* The major of driver NAME in /proc/devices' character devices, or -1. */
static long proc_cg_major(const char *devices, const char *name)
{
    for (const char *p = devices; p && *p;) {
        if (str_starts_with(p, "Block devices"))
            break;
        char n[64];
        long m;
        if (sscanf(p, " %ld %63s", &m, n) == 2 && strcmp(n, name) == 0)
            return m;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

/* The character device number of node PATH: its own when it is one (live), else what its name means on
 * Linux (a tree's nodes are plain files): nvidiaN 195:N, nvidiactl 195:255, renderDN and cardN 226:N,
 * /dev/kfd, nvidia-uvm and accelN by /proc/devices. false when not known. */
static bool proc_cg_devno(const struct hostfs *fs, const char *path, const char *devices, long *maj, long *min)
{
    struct stat st;
    if (hostfs_stat(fs, path, &st, true) == 0 && S_ISCHR(st.st_mode)) {
        *maj = (long)major(st.st_rdev), *min = (long)minor(st.st_rdev);
        return true;
    }
    unsigned n;
    char tail;
    *maj = -1;
    if (sscanf(path, "/dev/nvidia%u%c", &n, &tail) == 1)
        *maj = 195, *min = n;
    else if (strcmp(path, "/dev/nvidiactl") == 0)
        *maj = 195, *min = 255;
    else if (sscanf(path, "/dev/dri/renderD%u%c", &n, &tail) == 1 || sscanf(path, "/dev/dri/card%u%c", &n, &tail) == 1)
        *maj = 226, *min = n;
    else if (strcmp(path, "/dev/kfd") == 0)
        *maj = proc_cg_major(devices, "kfd"), *min = 0;
    else if (strcmp(path, "/dev/nvidia-uvm") == 0 || strcmp(path, "/dev/nvidia-uvm-tools") == 0)
        *maj = proc_cg_major(devices, "nvidia-uvm"), *min = strcmp(path, "/dev/nvidia-uvm") == 0 ? 0 : 1;
    else if (sscanf(path, "/dev/accel/accel%u%c", &n, &tail) == 1)
        *maj = proc_cg_major(devices, "accel"), *min = n;
    return *maj >= 0;
}

/* What devices.list RULES allow character device MAJ:MIN: the union of the access letters ("rwm") of every
 * rule that matches it ("a *:* rwm", "c 195:* rwm", "c 226:128 rw"), in OUT. */
static void proc_cg_allowed(const char *rules, long maj, long min, char out[4])
{
    bool r = false, w = false, m = false;
    for (const char *p = rules; p && *p;) {
        char type, ma[16], mi[16], acc[8];
        if (sscanf(p, " %c %15[^:]:%15s %7s", &type, ma, mi, acc) == 4 && (type == 'a' || type == 'c') &&
            (type == 'a' || ((strcmp(ma, "*") == 0 || strtol(ma, NULL, 10) == maj) &&
                             (strcmp(mi, "*") == 0 || strtol(mi, NULL, 10) == min)))) {
            r |= strchr(acc, 'r') != NULL;
            w |= strchr(acc, 'w') != NULL;
            m |= strchr(acc, 'm') != NULL;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    snprintf(out, 4, "%s%s%s", r ? "r" : "", w ? "w" : "", m ? "m" : "");
}

/* Which GPU stack's node P is and whether every GPU of it needs it: 'N' NVIDIA's nvidiactl and nvidia-uvm
 * (shared), 'n' an NVIDIA GPU's nvidiaN; 'K' /dev/kfd (shared, AMD); 'd' a DRM or accel node of one GPU. */
static char proc_cg_role(const char *p)
{
    if (strcmp(p, "/dev/nvidiactl") == 0 || str_starts_with(p, "/dev/nvidia-uvm"))
        return 'N';
    if (str_starts_with(p, "/dev/nvidia"))
        return 'n';
    return strcmp(p, "/dev/kfd") == 0 ? 'K' : 'd';
}

/* Judge the N compute nodes NODES by RULES into ARR; a finding for each denied node the process needs: a
 * shared node of a stack it was given a GPU of (or given none at all), a GPU's own node when it was given
 * no GPU at all. A container given some GPUs (docker --gpus device=0) is denied the others' nodes on
 * purpose, and an NVIDIA container needs no DRM node: those stay facts of the JSON, not findings. */
static void proc_cg_judge(struct probe_ctx *ctx, json_object *arr, const char *who, const char *path,
                          const char *rules, const char *devices, const struct proc_node *nodes, size_t k)
{
    long maj[32], min[32];
    bool known[32], ok[32], nv_gpu = false, drm_gpu = false;
    char acc[32][4];
    for (size_t i = 0; i < k; i++) {
        known[i] = proc_cg_devno(ctx->fs, nodes[i].path, devices, &maj[i], &min[i]);
        if (!known[i])
            continue;
        proc_cg_allowed(rules, maj[i], min[i], acc[i]);
        ok[i] = strchr(acc[i], 'r') && strchr(acc[i], 'w');
        char role = proc_cg_role(nodes[i].path);
        nv_gpu |= ok[i] && role == 'n';
        drm_gpu |= ok[i] && role == 'd';
        json_object *e = json_object_new_object();
        json_object_object_add(e, "path", json_object_new_string(nodes[i].path));
        char dev[48];
        snprintf(dev, sizeof(dev), "c %ld:%ld", maj[i], min[i]);
        json_object_object_add(e, "device", json_object_new_string(dev));
        json_object_object_add(e, "allowed", json_object_new_string(acc[i]));
        json_object_object_add(e, "can_open", json_object_new_boolean(ok[i]));
        json_object_array_add(arr, e);
    }
    bool none = !nv_gpu && !drm_gpu;
    for (size_t i = 0; i < k; i++) {
        char role = proc_cg_role(nodes[i].path);
        bool needed = none || (role == 'N' && nv_gpu) || (role == 'K' && drm_gpu);
        if (!known[i] || ok[i] || !needed)
            continue;
        char verb[40] = "denies";
        if (*acc[i])
            snprintf(verb, sizeof(verb), "allows only '%s' on", acc[i]);
        report_add_finding(ctx->report, "process.cgroup-denied", nodes[i].path,
                           "The devices cgroup of %s (%s) %s %s (c %ld:%ld)%s: opening it fails with EPERM "
                           "whatever its mode (NVML: \"Failed to initialize NVML: Unknown Error\")",
                           who, path, verb, nodes[i].path, maj[i], min[i],
                           none ? ", and allows no GPU's node" : ", which every GPU of its stack needs");
    }
}

/* v1: the devices controller's devices.list for PATH, each compute node judged. */
static void proc_cg_v1(struct probe_ctx *ctx, json_object *o, const char *who, const char *path)
{
    char *mroot = NULL, *mount = probe_host_files(ctx) ? proc_cg_mount(ctx->fs, "cgroup", "devices", &mroot) : NULL;
    char *dir = proc_cg_dir(mount ? mount : "/sys/fs/cgroup/devices", mroot, path);
    char *file = str_printf("%s/devices.list", dir ? dir : "?"), *rules = NULL, *devices = NULL;
    json_object *v1 = json_object_new_object();
    json_object_object_add(o, "v1", v1);
    json_object_object_add(v1, "path", json_object_new_string(path));
    json_object_object_add(v1, "file", jsonstr_or_null(file));
    int rc = file ? hostfs_read_file(ctx->fs, file, 0, &rules, NULL) : -ENOMEM;
    if (rc != 0) {
        json_object_object_add(v1, "error", json_object_new_string(strerror(-rc)));
    } else {
        if (hostfs_read_file(ctx->fs, "/proc/devices", 0, &devices, NULL) != 0)
            devices = NULL;
        json_object *nodes = json_object_new_array();
        json_object_object_add(v1, "nodes", nodes);
        struct proc_node n[32];
        size_t k = proc_nodes(ctx, n, 32);
        proc_cg_judge(ctx, nodes, who, path, rules, devices, n, k);
    }
    free(rules);
    free(devices);
    free(file);
    free(dir);
    free(mount);
    free(mroot);
}

/* How many device programs act on the cgroup directory DIR (those attached above it included): >= 0, or
 * -errno (-EPERM: not root). */
static int proc_cg_programs(const struct hostfs *fs, const char *dir)
{
    int fd = hostfs_openat(fs, dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd;
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.query.target_fd = (__u32)fd;
    a.query.attach_type = BPF_CGROUP_DEVICE;
    a.query.query_flags = BPF_F_QUERY_EFFECTIVE;
    long rc = syscall(SYS_bpf, BPF_PROG_QUERY, &a, sizeof(a));
    int err = errno;
    close(fd);
    return rc == 0 ? (int)a.query.prog_cnt : -err;
}

/* v2: whether a device program is attached; asked live only (the bpf syscall, as root). */
static void proc_cg_v2(struct probe_ctx *ctx, json_object *o, const char *who, const char *path)
{
    json_object *v2 = json_object_new_object();
    json_object_object_add(o, "v2", v2);
    json_object_object_add(v2, "path", json_object_new_string(path));
    const char *why = NULL;
    int n = -1;
    char *mroot = NULL, *mount = NULL, *dir = NULL;
    if (!probe_live(ctx))
        why = "not asked: a tree is read (the bpf syscall asks the running kernel)";
    else if (!(mount = proc_cg_mount(ctx->fs, "cgroup2", NULL, &mroot)))
        why = "no cgroup2 hierarchy is mounted";
    else if (!(dir = proc_cg_dir(mount, mroot, path)))
        why = strerror(ENOMEM);
    else if ((n = proc_cg_programs(ctx->fs, dir)) < 0)
        why = (n == -EPERM || n == -EACCES) && geteuid() != 0
                  ? "needs root (bpf BPF_PROG_QUERY is refused to other users)"
              : n == -EPERM ? "the kernel refused bpf BPF_PROG_QUERY (a container's seccomp profile, or no CAP_NET_ADMIN)"
                            : strerror(-n);
    json_object_object_add(v2, "dir", jsonstr_or_null(dir));
    json_object_object_add(v2, "device_programs", n >= 0 ? json_object_new_int(n) : NULL);
    json_object_object_add(v2, "why", jsonstr_or_null(why));
    if (n > 0)
        report_add_finding(ctx->report, "process.cgroup-device-program", dir,
                           "%d device program%s act%s on the cgroup of %s (%s): %s decide%s which device nodes it "
                           "may open, and gpucheckup cannot read %s rules", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
                           who, path, n == 1 ? "it" : "they", n == 1 ? "s" : "", n == 1 ? "its" : "their");
    else if (n < 0 && probe_live(ctx) && mount)
        report_add_finding(ctx->report, "process.cgroup-unchecked", path,
                           "Whether a device program limits the device nodes of %s (cgroup %s) was not checked: %s",
                           who, path, why);
    free(dir);
    free(mount);
    free(mroot);
}

void proc_cgroup(struct probe_ctx *ctx, long pid, json_object *o, const char *who)
{
    char p[64], *text = NULL;
    snprintf(p, sizeof(p), "/proc/%ld/cgroup", pid);
    if (hostfs_read_file(ctx->fs, p, 0, &text, NULL) != 0)
        return; /* a tree without it, or the process is gone */
    json_object *cg = json_object_new_object();
    json_object_object_add(o, "cgroup", cg);
    char *v1 = NULL, *v2 = NULL, *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        /* HIERARCHY-ID:CONTROLLERS:PATH */
        char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        char *ctl = c1 + 1, *s2 = NULL;
        if (strcmp(l, "0") == 0 && !*ctl && !v2)
            v2 = str_dup(str_sanitize(c2 + 1));
        for (char *w = strtok_r(ctl, ",", &s2); w && !v1; w = strtok_r(NULL, ",", &s2))
            if (strcmp(w, "devices") == 0)
                v1 = str_dup(str_sanitize(c2 + 1));
    }
    free(text);
    if (v1)
        proc_cg_v1(ctx, cg, who, v1);
    if (v2)
        proc_cg_v2(ctx, cg, who, v2);
    free(v1);
    free(v2);
}
