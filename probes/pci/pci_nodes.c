/* pci_nodes.c: the pci probe's device nodes (nvidia, DRM, kfd): present, openable, owning group. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci_internal.h"
#include "host.h"
#include "strutil.h"
#include "vendor.h"

bool pci_mode_allows(unsigned mode, uid_t ouid, gid_t ogid, uid_t uid, const gid_t *gids, size_t n,
                     unsigned want)
{
    if (uid == 0)
        return true; /* root reads and writes whatever the mode says */
    unsigned bits;
    bool member = false;
    for (size_t i = 0; i < n; i++)
        member |= gids[i] == ogid;
    if (uid == ouid)
        bits = (mode >> 6) & 7;
    else if (member)
        bits = (mode >> 3) & 7;
    else
        bits = mode & 7;
    return (bits & want) == want;
}

char *pci_group_lookup(const char *text, gid_t gid, const char *user, int *listed)
{
    *listed = -1;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *l = strndup(line, len);
        line = end ? end + 1 : NULL;
        if (!l)
            return NULL;
        /* name:password:gid:member,member */
        char *f[4] = {NULL};
        char *p = l;
        for (int i = 0; i < 4 && p; i++) {
            f[i] = p;
            char *c = i < 3 ? strchr(p, ':') : NULL;
            if (c)
                *c++ = '\0';
            p = c;
        }
        uint64_t g;
        if (f[0] && *f[0] && f[2] && str_to_u64(f[2], 10, &g) == 0 && g == (uint64_t)gid) {
            *listed = 0;
            if (user && f[3]) {
                char *save = NULL;
                for (char *m = strtok_r(f[3], ",", &save); m; m = strtok_r(NULL, ",", &save))
                    if (strcmp(str_trim(m), user) == 0)
                        *listed = 1;
            }
            char *name = str_sanitize(str_dup(f[0]));
            free(l);
            return name;
        }
        free(l);
    }
    return NULL;
}

static struct pci_node *pci_node_get(struct pci_state *st, const char *path)
{
    for (size_t i = 0; i < st->n_nodes; i++)
        if (strcmp(st->nodes[i].path, path) == 0)
            return &st->nodes[i];
    if (st->n_nodes >= 256)
        return NULL;
    struct pci_node *n = realloc(st->nodes, (st->n_nodes + 1) * sizeof(*n));
    if (!n)
        return NULL;
    st->nodes = n;
    struct pci_node *node = &st->nodes[st->n_nodes];
    memset(node, 0, sizeof(*node));
    node->path = str_sanitize(str_dup(path));
    if (!node->path)
        return NULL;
    node->uid = node->gid = -1;
    node->accessible = node->in_group = node->listed_in_group = -1;
    node->compute = !str_starts_with(path, "/dev/dri/card");
    st->n_nodes++;
    return node;
}

static void pci_node_require(struct pci_state *st, const char *path, const char *device, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void pci_node_require(struct pci_state *st, const char *path, const char *device, const char *fmt, ...)
{
    struct pci_node *n = pci_node_get(st, path);
    if (!n || n->required_by)
        return;
    va_list ap;
    va_start(ap, fmt);
    n->required_by = str_vprintf(fmt, ap);
    va_end(ap);
    if (device && !n->device)
        n->device = str_dup(device);
}

/* NAME is PREFIX followed by 1 to 5 digits. */
static bool pci_numbered(const char *name, const char *prefix)
{
    if (!str_starts_with(name, prefix))
        return false;
    const char *d = name + strlen(prefix);
    size_t n = strlen(d);
    if (n == 0 || n > 5)
        return false;
    for (size_t i = 0; i < n; i++)
        if (d[i] < '0' || d[i] > '9')
            return false;
    return true;
}

/* Nodes present in /dev and /dev/dri. */
static void pci_nodes_scan(struct pci_state *st)
{
    static const char *const dirs[] = {"/dev", "/dev/dri", NULL};
    for (size_t k = 0; dirs[k]; k++) {
        DIR *d = hostfs_opendir(st->ctx->fs, dirs[k]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            const char *n = e->d_name;
            bool want = k == 0 ? (strcmp(n, "nvidiactl") == 0 || strcmp(n, "nvidia-uvm") == 0 ||
                                  strcmp(n, "kfd") == 0 || pci_numbered(n, "nvidia"))
                               : (pci_numbered(n, "card") || pci_numbered(n, "renderD"));
            if (!want)
                continue;
            char *path = str_printf("%s/%s", dirs[k], n);
            if (path)
                pci_node_get(st, path);
            free(path);
        }
        closedir(d);
    }
}

/* Nodes the loaded modules and the bound GPUs need. */
static void pci_nodes_expect(struct pci_state *st)
{
    const struct pci_module *nv = &st->modules[pci_module_index("nvidia")];
    const struct pci_module *uvm = &st->modules[pci_module_index("nvidia_uvm")];
    size_t nv_bound = 0;
    const char *first_nv = NULL;
    for (size_t i = 0; i < st->n_gpus; i++) {
        const struct pci_gpu *g = &st->gpus[i];
        if (g->driver && strcmp(g->driver, "nvidia") == 0) {
            if (!first_nv)
                first_nv = g->addr;
            nv_bound++;
        }
    }
    if (nv->loaded == 1)
        pci_node_require(st, "/dev/nvidiactl", NULL, "module nvidia is loaded");
    else if (first_nv)
        pci_node_require(st, "/dev/nvidiactl", first_nv, "%s is bound to nvidia", first_nv);
    if (nv_bound > 0) {
        bool any = false;
        for (size_t i = 0; i < st->n_nodes; i++)
            any |= pci_numbered(st->nodes[i].path + 5, "nvidia");
        /* Which minors a container was given is its business; none at all is the problem. */
        if (!any)
            pci_node_require(st, "/dev/nvidia0", first_nv, "%zu GPU%s bound to nvidia", nv_bound,
                             nv_bound == 1 ? " is" : "s are");
    }
    if (uvm->loaded == 1)
        pci_node_require(st, "/dev/nvidia-uvm", NULL, "module nvidia_uvm is loaded");

    for (size_t i = 0; i < st->n_gpus; i++) {
        const struct pci_gpu *g = &st->gpus[i];
        if (!g->driver || strcmp(g->driver, "nvidia") == 0)
            continue;
        for (size_t j = 0; j < g->n_drm; j++) {
            char *path = str_printf("/dev/dri/%s", g->drm[j]);
            if (!path)
                continue;
            if (str_starts_with(g->drm[j], "renderD") &&
                (g->kind == PCI_KIND_COMPUTE || g->kind == PCI_KIND_ACCEL))
                pci_node_require(st, path, g->addr, "render node of %s (driver %s)", g->addr, g->driver);
            free(path);
        }
        if (g->vendor == VENDOR_PCI_AMD && strcmp(g->driver, "amdgpu") == 0 && g->kind != PCI_KIND_DISPLAY)
            pci_node_require(st, "/dev/kfd", g->addr, "%s is bound to amdgpu (ROCm opens /dev/kfd)", g->addr);
    }
    /* Tie present DRM nodes to their device. */
    for (size_t i = 0; i < st->n_gpus; i++)
        for (size_t j = 0; j < st->gpus[i].n_drm; j++)
            for (size_t k = 0; k < st->n_nodes; k++)
                if (str_starts_with(st->nodes[k].path, "/dev/dri/") &&
                    strcmp(st->nodes[k].path + 9, st->gpus[i].drm[j]) == 0 && !st->nodes[k].device)
                    st->nodes[k].device = str_dup(st->gpus[i].addr);
}

static const char *pci_file_type(mode_t m)
{
    return S_ISCHR(m) ? "char" : S_ISBLK(m) ? "block" : S_ISREG(m) ? "file" : S_ISFIFO(m) ? "fifo"
         : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : "other";
}

/* Sort key: nvidiactl, nvidiaN, nvidia-uvm, cardN, renderDN, kfd; numbers in numeric order. */
static long pci_node_rank(const char *p)
{
    const char *base = strrchr(p, '/') + 1;
    uint64_t num = 0;
    if (strcmp(base, "nvidiactl") == 0)
        return 0;
    if (pci_numbered(base, "nvidia") && str_to_u64(base + 6, 10, &num) == 0)
        return 1 + (long)num;
    if (strcmp(base, "nvidia-uvm") == 0)
        return 200000;
    if (pci_numbered(base, "card") && str_to_u64(base + 4, 10, &num) == 0)
        return 300000 + (long)num;
    if (pci_numbered(base, "renderD") && str_to_u64(base + 7, 10, &num) == 0)
        return 400000 + (long)num;
    return 500000;
}

static int pci_node_cmp(const void *a, const void *b)
{
    long x = pci_node_rank(((const struct pci_node *)a)->path), y = pci_node_rank(((const struct pci_node *)b)->path);
    return x < y ? -1 : x > y;
}

void pci_nodes_collect(struct pci_state *st)
{
    const struct hostfs *fs = st->ctx->fs;
    pci_nodes_scan(st);
    pci_nodes_expect(st);
    if (st->n_nodes > 1)
        qsort(st->nodes, st->n_nodes, sizeof(*st->nodes), pci_node_cmp);

    /* This process's identity: the user whose access matters. */
    uid_t uid = geteuid();
    int ng = getgroups(0, NULL);
    gid_t *gids = calloc((size_t)(ng > 0 ? ng : 0) + 1, sizeof(*gids));
    if (!gids)
        return;
    if (ng > 0)
        ng = getgroups(ng, gids);
    if (ng < 0)
        ng = 0;
    gids[ng++] = getegid();
    char *user = host_user_name(uid);
    char *groups = NULL;
    if (hostfs_read_file(fs, "/etc/group", 0, &groups, NULL) != 0)
        groups = NULL;

    bool noted = false;
    for (size_t i = 0; i < st->n_nodes; i++) {
        struct pci_node *n = &st->nodes[i];
        struct stat sb;
        int rc = hostfs_stat(fs, n->path, &sb, true);
        if (rc != 0) {
            if (rc != -ENOENT)
                report_section_add_note(st->sec, "%s: %s", n->path, strerror(-rc));
            continue;
        }
        n->present = true;
        n->type = pci_file_type(sb.st_mode);
        n->mode = (unsigned)(sb.st_mode & 07777);
        n->uid = (int64_t)sb.st_uid;
        n->gid = (int64_t)sb.st_gid;
        int listed = -1;
        n->group = groups ? pci_group_lookup(groups, sb.st_gid, user, &listed) : NULL;
        n->listed_in_group = listed;
        if (!n->group && probe_host_files(st->ctx)) {
            char *g = host_group_name(sb.st_gid);
            if (g)
                n->group = str_sanitize(g);
        }
        n->in_group = 0;
        for (int k = 0; k < ng; k++)
            if (gids[k] == sb.st_gid)
                n->in_group = 1;
        if (probe_host_files(st->ctx)) {
            rc = hostfs_access(fs, n->path, R_OK | W_OK);
            n->accessible = rc == 0 ? 1 : (rc == -EACCES || rc == -EPERM) ? 0 : -1;
        } else {
            /* A captured tree: judge by its modes, for this user. */
            n->accessible = pci_mode_allows(n->mode, sb.st_uid, sb.st_gid, uid, gids, (size_t)ng, 6) ? 1 : 0;
            if (!noted)
                report_section_add_note(st->sec, "device node access is judged from the tree's modes and owners "
                                                 "for this user (uid %ld)", (long)uid);
            noted = true;
        }
    }
    free(groups);
    free(user);
    free(gids);
}
