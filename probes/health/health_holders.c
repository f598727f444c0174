/* health_holders.c: which processes hold a GPU's device nodes open (/proc/PID/fd), with DRM fdinfo's memory (issue 40). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "health_internal.h"
#include "jsonget.h"
#include "procinfo.h"
#include "strutil.h"

/* Bounds: a node has thousands of processes and a process thousands of fds; what is past them is counted. */
#define HOLD_MAX_PIDS 8192u
#define HOLD_MAX_FDS 1024u
#define HOLD_MAX_HOLDERS 256u
#define HOLD_MAX_FDS_TOTAL 65536u /* fds over all processes: a readlink each, about a tenth of a second */

/* Holders NVML cannot name: processes of other PID namespaces than NVML's, and AMD's and Intel's GPUs, whose
 * drivers publish each DRM client's memory in /proc/PID/fdinfo/FD (the kernel's
 * Documentation/gpu/drm-usage-stats.rst: drm-pdev, drm-client-id, drm-memory-<region>, drm-total-<region>). */
const struct check health_holders_checks[] = {
    {"health.gpu-held", REPORT_SEV_INFO, "Other processes hold the GPU's device nodes open",
     "Nothing to do if they are yours or another job's (a desktop's compositor holds its GPU); a leftover process of a "
     "killed job holds its GPU memory until it exits: the evidence names it.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"health.gpu-memory-held-most", REPORT_SEV_WARNING,
     "Other processes hold more than half of the GPU's memory (DRM fdinfo)",
     "See which processes hold it (the evidence names them); end a leftover process of a killed job, or run where the "
     "GPU is free.", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE},
};
const size_t health_holders_n_checks = sizeof(health_holders_checks) / sizeof(health_holders_checks[0]);

struct hold {
    long pid;
    char node[32];      /* "/dev/dri/renderD128", "/dev/kfd", "/dev/nvidia0" */
    char addr[16];      /* the GPU's PCI address (fdinfo's drm-pdev, or the render node's sysfs device), or "" */
    unsigned long long bytes; /* DRM fdinfo memory, 0 when none said */
    unsigned long long vram;  /* of it, the "vram" region's (amdgpu's name for the GPU's own memory) */
    long long client;   /* drm-client-id, -1 when none */
};

/* True when a fd link names a GPU's device node. */
static bool hold_gpu_node(const char *t)
{
    if (strcmp(t, "/dev/kfd") == 0)
        return true;
    const char *digits = str_starts_with(t, "/dev/dri/renderD") ? t + 16 : str_starts_with(t, "/dev/nvidia") ? t + 11 : NULL;
    return digits && *digits && strspn(digits, "0123456789") == strlen(digits) && strlen(t) < 32;
}

/* "123 KiB" -> bytes (drm-usage-stats: an optional unit KiB or MiB). */
static unsigned long long hold_size(const char *v)
{
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    while (end && *end == ' ')
        end++;
    if (end && str_starts_with(end, "KiB"))
        n *= 1024ULL;
    else if (end && str_starts_with(end, "MiB"))
        n *= 1024ULL * 1024ULL;
    return n;
}

/* fdinfo of PID's FD: drm-pdev, drm-client-id, and the memory (drm-total-* when given, else drm-memory-*). */
static void hold_fdinfo(struct probe_ctx *ctx, long pid, const char *fd, struct hold *h)
{
    char path[96], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%.40s", pid, fd);
    h->client = -1;
    if (hostfs_read_file(ctx->fs, path, 65536, &text, NULL) != 0)
        return;
    unsigned long long total = 0, memory = 0, vram_total = 0, vram_memory = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(l, ':');
        if (!colon)
            continue;
        const char *v = colon + 1 + strspn(colon + 1, " \t");
        if (str_starts_with(l, "drm-pdev:"))
            snprintf(h->addr, sizeof(h->addr), "%.12s", v);
        else if (str_starts_with(l, "drm-client-id:"))
            h->client = strtoll(v, NULL, 10);
        else if (str_starts_with(l, "drm-total-")) {
            total += hold_size(v);
            if (str_starts_with(l, "drm-total-vram:"))
                vram_total += hold_size(v);
        } else if (str_starts_with(l, "drm-memory-")) {
            memory += hold_size(v);
            if (str_starts_with(l, "drm-memory-vram:"))
                vram_memory += hold_size(v);
        }
    }
    h->bytes = total ? total : memory;
    h->vram = total ? vram_total : vram_memory;
    free(text);
}

/* The render node's GPU from sysfs (/sys/class/drm/renderDN/device -> ../../../0000:03:00.0). */
static void hold_render_addr(struct probe_ctx *ctx, struct hold *h)
{
    if (h->addr[0] || !str_starts_with(h->node, "/dev/dri/"))
        return;
    char *path = str_printf("/sys/class/drm/%s/device", h->node + 9), *link = NULL;
    if (path && hostfs_readlink(ctx->fs, path, &link) == 0) {
        const char *base = strrchr(link, '/');
        base = base ? base + 1 : link;
        if (strlen(base) == 12 && base[4] == ':' && base[7] == ':' && base[10] == '.')
            snprintf(h->addr, sizeof(h->addr), "%s", base);
    }
    free(link);
    free(path);
}

/* PID's open GPU nodes into HOLDS (one per node and DRM client); returns how many were added. */
static size_t hold_scan_pid(struct probe_ctx *ctx, long pid, struct hold *holds, size_t room, bool *fd_capped,
                            size_t *fds_total)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
    DIR *d = hostfs_opendir(ctx->fs, path);
    if (!d)
        return 0;
    size_t n = 0, fds = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < room) {
        if (e->d_name[0] == '.')
            continue;
        if (++fds > HOLD_MAX_FDS || ++*fds_total > HOLD_MAX_FDS_TOTAL) {
            *fd_capped = true;
            break;
        }
        char lp[96], *target = NULL;
        snprintf(lp, sizeof(lp), "/proc/%ld/fd/%.40s", pid, e->d_name);
        if (hostfs_readlink(ctx->fs, lp, &target) != 0)
            continue;
        if (hold_gpu_node(target)) {
            struct hold h;
            memset(&h, 0, sizeof(h));
            h.pid = pid;
            snprintf(h.node, sizeof(h.node), "%s", target);
            hold_fdinfo(ctx, pid, e->d_name, &h);
            hold_render_addr(ctx, &h);
            bool dup = false;
            for (size_t i = 0; i < n && !dup; i++) /* the same client through another fd, or the node again */
                dup = strcmp(holds[i].node, h.node) == 0 && (h.client < 0 || holds[i].client == h.client);
            if (!dup)
                holds[n++] = h;
        }
        free(target);
    }
    closedir(d);
    return n;
}

/* gpucheckup itself or one of its children (live only: a tree's PIDs are another machine's). */
static bool hold_ours(struct probe_ctx *ctx, long pid)
{
    return ctx->fs->live && procinfo_is_ours(ctx->fs, pid);
}

/* "user", "command", "started" of PID into O (null when unknown); PASSWD is /etc/passwd's text or NULL. */
static void hold_describe(struct probe_ctx *ctx, long pid, json_object *o, const char *passwd)
{
    char *comm = procinfo_comm(ctx->fs, pid), *user = procinfo_user(ctx->fs, pid, passwd ? passwd : ""), started[40];
    procinfo_started(ctx->fs, pid, started, sizeof(started));
    json_object_object_add(o, "user", user ? json_object_new_string(user) : NULL);
    json_object_object_add(o, "command", comm ? json_object_new_string(comm) : NULL);
    json_object_object_add(o, "started", started[0] ? json_object_new_string(started) : NULL);
    free(comm);
    free(user);
}

/* One finding per GPU (its PCI address, else the node) over the holders PROCS (the JSON objects). */
static void hold_findings(struct probe_ctx *ctx, json_object *procs)
{
    size_t n = json_object_array_length(procs);
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(procs, i);
        const char *key = jsonget_str(p, "pci_address") ? jsonget_str(p, "pci_address") : jsonget_str(p, "node");
        bool first = true;
        for (size_t k = 0; k < i && first; k++) {
            json_object *q = json_object_array_get_idx(procs, k);
            const char *qk = jsonget_str(q, "pci_address") ? jsonget_str(q, "pci_address") : jsonget_str(q, "node");
            first = !(key && qk && strcmp(key, qk) == 0);
        }
        if (!key || !first)
            continue;
        size_t count = 0;
        long long bytes = 0, vram_bytes = 0;
        for (size_t k = i; k < n; k++) {
            json_object *q = json_object_array_get_idx(procs, k);
            const char *qk = jsonget_str(q, "pci_address") ? jsonget_str(q, "pci_address") : jsonget_str(q, "node");
            if (qk && strcmp(key, qk) == 0) {
                count++;
                bytes += jsonget_int(q, "memory_bytes", 0);
                vram_bytes += jsonget_int(q, "vram_bytes", 0);
            }
        }
        uint64_t vram = 0;
        char *vp = jsonget_str(p, "pci_address") ? str_printf("/sys/bus/pci/devices/%s/mem_info_vram_total", key) : NULL;
        bool most = vp && hostfs_read_u64(ctx->fs, vp, &vram) == 0 && vram > 0 && (uint64_t)vram_bytes * 2 > vram;
        free(vp);
        struct report_finding *f = report_add_finding(
            ctx->report, most ? "health.gpu-memory-held-most" : "health.gpu-held", key,
            "%zu process%s hold%s %s open%s%.1f%s, e.g. pid %lld (%s)", count, count == 1 ? "" : "es",
            count == 1 ? "s" : "", key, bytes > 0 ? " with " : "", bytes > 0 ? (double)bytes / (1024.0 * 1024 * 1024) : 0.0,
            bytes > 0 ? " GiB of GPU memory" : "", (long long)jsonget_int(p, "pid", 0),
            jsonget_str(p, "command") ? jsonget_str(p, "command") : "?");
        for (size_t k = i, shown = 0; f && k < n && shown < 8; k++) {
            json_object *q = json_object_array_get_idx(procs, k);
            const char *qk = jsonget_str(q, "pci_address") ? jsonget_str(q, "pci_address") : jsonget_str(q, "node");
            if (!qk || strcmp(key, qk) != 0)
                continue;
            shown++;
            char what[32];
            snprintf(what, sizeof(what), "pid %lld", (long long)jsonget_int(q, "pid", 0));
            report_finding_add_evidence(f, what, "%s, user %s, command %s%s%s, %.0f MiB", jsonget_str(q, "node"),
                                        jsonget_str(q, "user") ? jsonget_str(q, "user") : "?",
                                        jsonget_str(q, "command") ? jsonget_str(q, "command") : "?",
                                        jsonget_str(q, "started") ? ", started " : "",
                                        jsonget_str(q, "started") ? jsonget_str(q, "started") : "",
                                        (double)jsonget_int(q, "memory_bytes", 0) / (1024.0 * 1024));
        }
    }
}

/* The scan itself: CTX reads (untraced), OUT gets the findings (its fs reads sysfs, traced). */
static void health_holders_scan(struct probe_ctx *ctx, struct probe_ctx *out, struct report_section *sec)
{
    DIR *d = hostfs_opendir(ctx->fs, "/proc");
    if (!d)
        return;
    struct hold *holds = calloc(HOLD_MAX_HOLDERS, sizeof(*holds));
    char *passwd = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/passwd", 0, &passwd, NULL) != 0)
        passwd = NULL;
    size_t n = 0, pids = 0, fds_total = 0;
    bool pid_capped = false, fd_capped = false;
    struct dirent *e;
    while (holds && (e = readdir(d))) {
        if (!e->d_name[0] || strspn(e->d_name, "0123456789") != strlen(e->d_name))
            continue;
        if (++pids > HOLD_MAX_PIDS || fds_total > HOLD_MAX_FDS_TOTAL) {
            pid_capped = true;
            break;
        }
        long pid = strtol(e->d_name, NULL, 10);
        if (n < HOLD_MAX_HOLDERS && !hold_ours(ctx, pid))
            n += hold_scan_pid(ctx, pid, holds + n, HOLD_MAX_HOLDERS - n, &fd_capped, &fds_total);
    }
    closedir(d);
    json_object *h = json_object_new_object(), *procs = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "pid", json_object_new_int64(holds[i].pid));
        json_object_object_add(o, "node", json_object_new_string(holds[i].node));
        json_object_object_add(o, "pci_address", holds[i].addr[0] ? json_object_new_string(str_sanitize(holds[i].addr)) : NULL);
        json_object_object_add(o, "memory_bytes", holds[i].bytes ? json_object_new_int64((int64_t)holds[i].bytes) : NULL);
        json_object_object_add(o, "vram_bytes", holds[i].vram ? json_object_new_int64((int64_t)holds[i].vram) : NULL);
        hold_describe(ctx, holds[i].pid, o, passwd);
        json_object_array_add(procs, o);
    }
    json_object_object_add(h, "pids_examined", json_object_new_int64((int64_t)(pids > HOLD_MAX_PIDS ? HOLD_MAX_PIDS : pids)));
    json_object_object_add(h, "capped", json_object_new_boolean(pid_capped || fd_capped || n >= HOLD_MAX_HOLDERS));
    json_object_object_add(h, "processes", procs);
    json_object_object_add(sec->data, "holders", h);
    if (pid_capped || fd_capped || n >= HOLD_MAX_HOLDERS)
        report_section_add_note(sec, "GPU device holders: only the first %u processes, %u fds each (%u in all) and %u "
                                     "holders were examined", HOLD_MAX_PIDS, HOLD_MAX_FDS, HOLD_MAX_FDS_TOTAL,
                                HOLD_MAX_HOLDERS);
    hold_findings(out, procs);
    free(passwd);
    free(holds);
}

/* Does a GPU device node a process could hold exist (/dev/kfd, /dev/nvidiaN, /dev/dri/renderDN: hold_gpu_node)? */
static bool hold_nodes_exist(struct probe_ctx *ctx)
{
    struct stat st;
    if (hostfs_stat(ctx->fs, "/dev/kfd", &st, true) != -ENOENT)
        return true;
    static const char *const dirs[] = {"/dev/dri", "/dev"};
    bool found = false;
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !found; i++) {
        DIR *d = hostfs_opendir(ctx->fs, dirs[i]);
        if (!d) {
            found = i == 1; /* no /dev to list: nothing known, look */
            continue;
        }
        char path[300];
        struct dirent *e;
        while (!found && (e = readdir(d))) {
            snprintf(path, sizeof(path), "%s/%s", dirs[i], e->d_name);
            found = hold_gpu_node(path);
        }
        closedir(d);
    }
    return found;
}

void health_holders_report(struct probe_ctx *ctx, struct report_section *sec, size_t n_gpus)
{
    /* No GPU on the bus and no GPU device node: nothing can be held, and the scan of every process's fds (the
     * probe's largest cost on a busy host) is skipped, said in the section. */
    if (n_gpus == 0 && !hold_nodes_exist(ctx)) {
        json_object *h = json_object_new_object();
        json_object_object_add(h, "pids_examined", json_object_new_int64(0));
        json_object_object_add(h, "capped", json_object_new_boolean(false));
        json_object_object_add(h, "processes", json_object_new_array());
        json_object_object_add(h, "skipped", json_object_new_string("no GPU on the PCI bus and no GPU device node "
                                                                    "(/dev/nvidiaN, /dev/kfd, /dev/dri/renderDN)"));
        json_object_object_add(sec->data, "holders", h);
        report_section_add_note(sec, "GPU device holders: not looked for (no GPU on the PCI bus and no GPU device node)");
        return;
    }
    /* The per-process paths stay out of GPUCHECKUP_FS_TRACE: they differ from run to run (other PIDs) and are
     * no fixture material (another user's processes); the same root, untraced, reads them. */
    struct hostfs quiet = *ctx->fs;
    quiet.trace = NULL;
    struct probe_ctx qctx = *ctx;
    qctx.fs = &quiet;
    health_holders_scan(&qctx, ctx, sec);
}
