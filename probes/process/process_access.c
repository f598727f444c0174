/* process_access.c: who may open the GPU's device nodes (modes, groups, POSIX ACLs) and what hides the GPUs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "process_internal.h"
#include "strutil.h"
#include "vendor.h"
#include "results/result_pci.h"

/* Read N's system.posix_acl_access: the node is opened O_PATH inside the root (hostfs), which opens no
 * device, and the attribute read through /proc/self/fd (fgetxattr refuses O_PATH descriptors). */
static void proc_node_acl(const struct hostfs *fs, struct proc_node *n)
{
    int fd = hostfs_openat(fs, n->path, O_PATH);
    if (fd < 0)
        return;
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    ssize_t r = getxattr(p, "system.posix_acl_access", n->acl, sizeof(n->acl));
    close(fd);
    if (r >= 0)
        n->acl_len = (size_t)r;
    n->acl_read = r >= 0 || errno == ENODATA;
}

size_t proc_nodes(struct probe_ctx *ctx, struct proc_node *out, size_t max)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    size_t n = 0;
    for (size_t i = 0; pci && i < pci->n_nodes && n < max; i++) {
        const struct result_pci_node *o = &pci->nodes[i];
        if (o->present != GC_TRI_YES || o->compute != GC_TRI_YES || !o->have_mode || !o->path)
            continue;
        struct proc_node *d = &out[n++];
        memset(d, 0, sizeof(*d));
        d->path = o->path;
        d->mode = o->mode;
        d->uid = o->uid;
        d->gid = o->gid;
        d->group = o->group;
        proc_node_acl(ctx->fs, d);
    }
    return n;
}

static bool proc_in_groups(const struct proc_cred *c, long gid)
{
    for (size_t i = 0; i < c->n; i++)
        if ((long)c->gids[i] == gid)
            return true;
    return false;
}

/* POSIX.1e access check over the raw xattr (version 2, then entries of tag u16, perm u16, id u32; tags
 * USER_OBJ 1, USER 2, GROUP_OBJ 4, GROUP 8, MASK 0x10, OTHER 0x20): 1 allowed, 0 denied, -1 no ACL. */
static int proc_acl_allows(const struct proc_node *n, const struct proc_cred *c, char *why, size_t len)
{
    if (n->acl_len < 4 + 8)
        return -1;
    const unsigned char *a = n->acl;
    size_t cnt = (n->acl_len - 4) / 8;
    unsigned mask = 7, want = 6;
    bool has_mask = false, group_match = false, group_ok = false;
    for (size_t i = 0; i < cnt; i++) {
        const unsigned char *e = a + 4 + 8 * i;
        unsigned tag = e[0] | e[1] << 8;
        if (tag == 0x10)
            mask = e[2] & 7u, has_mask = true;
    }
    (void)has_mask;
    for (size_t i = 0; i < cnt; i++) {
        const unsigned char *e = a + 4 + 8 * i;
        unsigned tag = e[0] | e[1] << 8, perm = e[2] & 7u;
        long id = (long)((unsigned long)e[4] | (unsigned long)e[5] << 8 | (unsigned long)e[6] << 16 |
                         (unsigned long)e[7] << 24);
        if (tag == 1 && c->uid == n->uid) {
            snprintf(why, len, "its owner");
            return (perm & want) == want;
        }
        if (tag == 2 && id == c->uid) {
            snprintf(why, len, "an ACL entry for its uid %ld", id);
            return (perm & mask & want) == want;
        }
        if ((tag == 4 && proc_in_groups(c, n->gid)) || (tag == 8 && proc_in_groups(c, id))) {
            group_match = true;
            if ((perm & mask & want) == want) {
                group_ok = true;
                snprintf(why, len, tag == 4 ? "its group" : "an ACL entry for its group %ld", tag == 4 ? n->gid : id);
            }
        }
    }
    if (group_match) {
        if (!group_ok)
            snprintf(why, len, "its groups' ACL entries allow no read-write");
        return group_ok;
    }
    for (size_t i = 0; i < cnt; i++) {
        const unsigned char *e = a + 4 + 8 * i;
        if ((e[0] | e[1] << 8) == 0x20) {
            snprintf(why, len, "the ACL's other entry");
            return (e[2] & want) == want;
        }
    }
    return 0;
}

bool proc_node_allows(const struct proc_node *n, const struct proc_cred *c, char *why, size_t len)
{
    if (c->uid == 0) {
        snprintf(why, len, "root");
        return true;
    }
    int acl = proc_acl_allows(n, c, why, len);
    if (acl >= 0)
        return acl == 1;
    unsigned bits;
    if (c->uid >= 0 && c->uid == n->uid)
        bits = (n->mode >> 6) & 7, snprintf(why, len, "its owner");
    else if (proc_in_groups(c, n->gid))
        bits = (n->mode >> 3) & 7, snprintf(why, len, "its group");
    else
        bits = n->mode & 7, snprintf(why, len, "others");
    return (bits & 6) == 6;
}

/* The colon-separated field I (0-based) of LINE as a heap string, or NULL. */
static char *proc_field(const char *line, size_t llen, int i)
{
    const char *p = line, *end = line + llen;
    for (int k = 0; k < i; k++) {
        const char *c = memchr(p, ':', (size_t)(end - p));
        if (!c)
            return NULL;
        p = c + 1;
    }
    const char *c = memchr(p, ':', (size_t)(end - p));
    return str_copy_n(p, (size_t)((c ? c : end) - p));
}

/* Call FN(line, len, arg) for each line of TEXT until it returns true. */
static bool proc_lines(const char *text, bool (*fn)(const char *l, size_t n, void *arg), void *arg)
{
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && *p != '#' && fn(p, n, arg))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

struct proc_find {
    const char *name;
    long a, b;
    char *s;
};

static bool proc_passwd_line(const char *l, size_t n, void *arg)
{
    struct proc_find *f = arg;
    char *name = proc_field(l, n, 0), *uid = proc_field(l, n, 2), *gid = proc_field(l, n, 3);
    uint64_t u, g;
    bool hit = name && uid && gid && str_to_u64(uid, 10, &u) == 0 && str_to_u64(gid, 10, &g) == 0 &&
               strcmp(name, f->name) == 0;
    if (hit)
        f->a = (long)u, f->b = (long)g;
    free(name);
    free(uid);
    free(gid);
    return hit;
}

int proc_passwd_find(const char *text, const char *name, long *uid, long *gid)
{
    struct proc_find f = {name, -1, -1, NULL};
    if (!text || !proc_lines(text, proc_passwd_line, &f))
        return -1;
    *uid = f.a;
    *gid = f.b;
    return 0;
}

static bool proc_group_line(const char *l, size_t n, void *arg)
{
    struct proc_find *f = arg;
    char *name = proc_field(l, n, 0), *gid = proc_field(l, n, 2);
    uint64_t g;
    bool ok = name && gid && str_to_u64(gid, 10, &g) == 0;
    bool hit = ok && (f->name ? strcmp(name, f->name) == 0 : (long)g == f->a);
    if (hit) {
        f->b = (long)g;
        f->s = str_sanitize(name), name = NULL;
    }
    free(name);
    free(gid);
    return hit;
}

long proc_group_gid(const char *text, const char *name)
{
    uint64_t g;
    if (str_to_u64(name, 10, &g) == 0)
        return (long)g;
    struct proc_find f = {name, -1, -1, NULL};
    if (text)
        proc_lines(text, proc_group_line, &f);
    free(f.s);
    return f.b;
}

char *proc_group_name(const char *text, long gid)
{
    struct proc_find f = {NULL, gid, -1, NULL};
    if (text)
        proc_lines(text, proc_group_line, &f);
    return f.s;
}

void proc_cred_add(struct proc_cred *c, long gid)
{
    if (gid >= 0 && !proc_in_groups(c, gid) && c->n < sizeof(c->gids) / sizeof(c->gids[0]))
        c->gids[c->n++] = (gid_t)gid;
}

struct proc_members {
    const char *user;
    struct proc_cred *c;
};

static bool proc_member_line(const char *l, size_t n, void *arg)
{
    struct proc_members *m = arg;
    char *gid = proc_field(l, n, 2), *mem = proc_field(l, n, 3);
    uint64_t g;
    if (gid && mem && str_to_u64(gid, 10, &g) == 0) {
        char *save = NULL;
        for (char *w = strtok_r(mem, ",", &save); w; w = strtok_r(NULL, ",", &save))
            if (strcmp(str_trim(w), m->user) == 0)
                proc_cred_add(m->c, (long)g);
    }
    free(gid);
    free(mem);
    return false;
}

void proc_group_members(const char *text, const char *user, struct proc_cred *c)
{
    struct proc_members m = {user, c};
    if (text)
        proc_lines(text, proc_member_line, &m);
}

char *proc_cred_names(const char *group_text, const struct proc_cred *c)
{
    char *out = str_dup("");
    for (size_t i = 0; out && i < c->n; i++) {
        char *g = proc_group_name(group_text, (long)c->gids[i]);
        char *n = g ? str_printf("%s%s%s", out, *out ? ", " : "", g)
                    : str_printf("%s%s%ld", out, *out ? ", " : "", (long)c->gids[i]);
        free(g);
        free(out);
        out = n;
    }
    return out;
}

size_t proc_judge_nodes(struct probe_ctx *ctx, json_object *data, const struct proc_cred *c, const char *who,
                        const char *id, const char *group_text)
{
    struct proc_node nodes[32];
    size_t n = proc_nodes(ctx, nodes, 32), denied = 0;
    json_object *arr = json_object_new_array();
    bool acl_all = true;
    for (size_t i = 0; i < n; i++) {
        char why[96] = "";
        bool ok = proc_node_allows(&nodes[i], c, why, sizeof(why));
        acl_all &= nodes[i].acl_read;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(nodes[i].path));
        json_object_object_add(o, "can_open", json_object_new_boolean(ok));
        json_object_object_add(o, "by", json_object_new_string(why));
        json_object_object_add(o, "acl", json_object_new_boolean(nodes[i].acl_len > 0));
        json_object_array_add(arr, o);
        if (ok)
            continue;
        denied++;
        char *gname = nodes[i].group ? str_dup(nodes[i].group) : proc_group_name(group_text, nodes[i].gid);
        char *own = nodes[i].uid == 0 ? str_dup("root") : str_printf("%ld", nodes[i].uid);
        char *groups = proc_cred_names(group_text, c);
        bool member = proc_in_groups(c, nodes[i].gid);
        struct report_finding *f =
            report_add_finding(ctx->report, id, nodes[i].path, "%s cannot open %s (%s:%s %04o%s; %s is %sin %s%s%s%s)",
                               who, nodes[i].path, own ? own : "?", gname ? gname : "?", nodes[i].mode,
                               nodes[i].acl_len ? ", with an ACL" : "", who, member ? "" : "not ",
                               gname ? gname : "its group", member ? ", which may not read and write it" : "",
                               groups && *groups ? "; its groups: " : "", groups ? groups : "");
        if (f && gname)
            report_finding_set_hint(f, "Add the user to the %s group (usermod -aG %s USER, then log in again; a "
                                    "service: SupplementaryGroups=%s), or let udev give the node a group it has.",
                                    gname, gname, gname);
        free(gname);
        free(own);
        free(groups);
    }
    json_object_object_add(data, "nodes", arr);
    json_object_object_add(data, "acls_checked", json_object_new_boolean(acl_all));
    return denied;
}

/* ---- what hides the GPUs ------------------------------------------------------------------------ */

bool proc_gpu_var(const char *name)
{
    static const char *const vars[] = {
        "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
        "HSA_OVERRIDE_GFX_VERSION", "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", "LD_LIBRARY_PATH", "LD_PRELOAD",
        "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH",
        "CUDA_DEVICE_ORDER", "VIRTUAL_ENV", "CONDA_PREFIX", NULL,
    };
    for (size_t i = 0; vars[i]; i++)
        if (strcmp(vars[i], name) == 0)
            return true;
    return str_starts_with(name, "VK_") || str_starts_with(name, "NVIDIA_");
}

/* The compute GPUs of VENDOR (vendor.h's name) on the bus, or -1 when the pci section did not run. */
static int proc_gpus_of(struct probe_ctx *ctx, const char *vendor)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    if (!pci || !pci->have_devices)
        return -1;
    int n = 0;
    for (size_t i = 0; i < pci->n_devs; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        const struct vendor *v = vendor_by_pci_text(d->vendor_id);
        if (v && strcmp(v->name, vendor) == 0 && d->kind == RESULT_PCI_KIND_COMPUTE)
            n++;
    }
    return n;
}

void proc_judge_visibility(struct probe_ctx *ctx, const char *who, const char *tag, const char *name,
                           const char *value)
{
    static const struct {
        const char *var, *vendor, *label;
    } fam[] = {
        {"CUDA_VISIBLE_DEVICES", "nvidia", "NVIDIA"}, {"HIP_VISIBLE_DEVICES", "amd", "AMD"},
        {"ROCR_VISIBLE_DEVICES", "amd", "AMD"},       {"GPU_DEVICE_ORDINAL", "amd", "AMD"},
        {"ZE_AFFINITY_MASK", "intel", "Intel"},
    };
    for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
        if (strcmp(fam[i].var, name) != 0)
            continue;
        int n = proc_gpus_of(ctx, fam[i].vendor);
        if (n <= 0)
            return; /* nothing of that vendor to hide */
        /* The runtimes read the list up to its first entry that names no device: an empty list, -1, or a
         * first index past the last GPU leaves none. A UUID or MIG name is not judged here. */
        const char *v = value;
        while (*v == ' ')
            v++;
        uint64_t first = 0;
        char buf[32];
        size_t k = strcspn(v, ",.");
        snprintf(buf, sizeof(buf), "%.*s", (int)(k < 31 ? k : 31), v);
        bool none = !*buf || strcmp(buf, "-1") == 0 || strcasecmp(buf, "NoDevFiles") == 0 ||
                    (str_to_u64(buf, 10, &first) == 0 && first >= (uint64_t)n);
        if (!none)
            return;
        char subject[128];
        snprintf(subject, sizeof(subject), "%s: %s", tag, name);
        struct report_finding *f = report_add_finding(
            ctx->report, "process.hides-all-gpus", subject,
            "%s=%s hides every %s GPU from %s (%d on the bus, numbered from 0 to %d)", name, value,
            fam[i].label, who, n, n - 1);
        if (f)
            report_finding_add_evidence(f, who, "%s=%s", name, value);
        return;
    }
}
