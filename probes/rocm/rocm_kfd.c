/* rocm_kfd.c: the rocm probe's kernel side from files: amdgpu, DKMS, the KFD topology, VRAM, /dev/kfd and render nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <sys/utsname.h>

#include "devnode.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "rocm_internal.h"
#include "strutil.h"

/* ---- the properties file ------------------------------------------------------------------------ */

static const struct {
    const char *name;
    size_t offset;
} rocm_kfd_fields[] = {
    {"cpu_cores_count", offsetof(struct rocm_kfd_props, cpu_cores_count)},
    {"simd_count", offsetof(struct rocm_kfd_props, simd_count)},
    {"gfx_target_version", offsetof(struct rocm_kfd_props, gfx_target_version)},
    {"vendor_id", offsetof(struct rocm_kfd_props, vendor_id)},
    {"device_id", offsetof(struct rocm_kfd_props, device_id)},
    {"location_id", offsetof(struct rocm_kfd_props, location_id)},
    {"domain", offsetof(struct rocm_kfd_props, domain)},
    {"drm_render_minor", offsetof(struct rocm_kfd_props, drm_render_minor)},
};

/* One "name value" line (not NUL-terminated, LEN bytes) into OUT; true when a member was set. */
static bool rocm_kfd_line(const char *line, size_t len, struct rocm_kfd_props *out)
{
    const char *sp = memchr(line, ' ', len);
    if (!sp)
        return false;
    size_t klen = (size_t)(sp - line), vlen = len - klen - 1;
    char val[24];
    if (vlen == 0 || vlen >= sizeof(val))
        return false;
    memcpy(val, sp + 1, vlen);
    val[vlen] = '\0';
    for (size_t i = 0; i < vlen; i++)
        if (val[i] < '0' || val[i] > '9') /* node_show prints decimal only */
            return false;
    uint64_t v;
    if (str_to_u64(val, 10, &v) < 0 || v > (uint64_t)INT64_MAX)
        return false;
    for (size_t i = 0; i < sizeof(rocm_kfd_fields) / sizeof(rocm_kfd_fields[0]); i++) {
        if (strlen(rocm_kfd_fields[i].name) == klen && memcmp(rocm_kfd_fields[i].name, line, klen) == 0) {
            *(int64_t *)(void *)((char *)out + rocm_kfd_fields[i].offset) = (int64_t)v;
            return true;
        }
    }
    return false;
}

size_t rocm_kfd_parse(const char *text, size_t len, struct rocm_kfd_props *out)
{
    for (size_t i = 0; i < sizeof(rocm_kfd_fields) / sizeof(rocm_kfd_fields[0]); i++)
        *(int64_t *)(void *)((char *)out + rocm_kfd_fields[i].offset) = -1;
    size_t n = 0;
    for (size_t pos = 0; text && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        n += rocm_kfd_line(text + pos, end - pos, out);
        pos = end + 1;
    }
    return n;
}

const char *rocm_gfx_name(int64_t v, char *buf, size_t len)
{
    /* LLVM's AMDGPU processor names: "gfx", the major version in decimal, the minor as one decimal digit,
     * the stepping as one hex digit (gfx90a is 9.0.10, gfx1151 11.5.1): LLVM AMDGPUUsage, "Processors". */
    if (v <= 0 || v > 999999)
        return NULL;
    int64_t major = v / 10000, minor = (v / 100) % 100, step = v % 100;
    if (major < 1 || minor > 9 || step > 15)
        return NULL;
    snprintf(buf, len, "gfx%d%d%x", (int)major, (int)minor, (unsigned)step);
    return buf;
}

const char *rocm_kfd_pci_address(const struct rocm_kfd_props *p, char *buf, size_t len)
{
    if (p->location_id < 0 || p->location_id > 0xffff || p->domain < 0 || p->domain > 0xffff)
        return NULL;
    unsigned loc = (unsigned)p->location_id;
    snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)p->domain, loc >> 8, (loc >> 3) & 0x1f, loc & 7);
    return buf;
}

/* ---- the module ---------------------------------------------------------------------------------- */

/* The kernel release the tree runs (its /proc/sys/kernel/osrelease; this machine's uname when live and
 * the file is unreadable), heap, or NULL. */
static char *rocm_kernel_release(struct probe_ctx *ctx)
{
    char *rel = NULL;
    if (hostfs_read_attr(ctx->fs, "/proc/sys/kernel/osrelease", &rel) == 0 && rel[0] && !strchr(rel, '/'))
        return rel;
    free(rel);
    struct utsname u;
    return probe_host_files(ctx) && uname(&u) == 0 ? str_dup(u.release) : NULL;
}

/* The DKMS-built amdgpu.ko* under /lib/modules/REL/updates/dkms (AMD's amdgpu-dkms installs it there), or NULL. */
static char *rocm_dkms_module(struct probe_ctx *ctx, const char *rel)
{
    static const char *const names[] = {"amdgpu.ko", "amdgpu.ko.xz", "amdgpu.ko.zst", "amdgpu.ko.gz"};
    for (size_t i = 0; rel && i < sizeof(names) / sizeof(names[0]); i++) {
        char *p = str_printf("/lib/modules/%s/updates/dkms/%s", rel, names[i]);
        struct stat st;
        if (p && hostfs_stat(ctx->fs, p, &st, true) == 0 && S_ISREG(st.st_mode))
            return p;
        free(p);
    }
    return NULL;
}

json_object *rocm_kernel_read(struct probe_ctx *ctx)
{
    json_object *k = json_object_new_object();
    struct stat st;
    bool present = hostfs_stat(ctx->fs, "/sys/module/amdgpu", &st, true) == 0;
    char *init = NULL, *ver = NULL;
    int ie = present ? hostfs_read_attr(ctx->fs, "/sys/module/amdgpu/initstate", &init) : -ENOENT;
    if (present)
        hostfs_read_attr(ctx->fs, "/sys/module/amdgpu/version", &ver);
    /* A loadable module has initstate ("live" once its init returned); a built-in one has none. */
    json_object_object_add(k, "amdgpu_loaded", json_object_new_boolean(present));
    json_object_object_add(k, "amdgpu_builtin", json_object_new_boolean(present && ie == -ENOENT));
    json_object_object_add(k, "amdgpu_initstate", jsonstr_or_null(init));
    json_object_object_add(k, "amdgpu_version", jsonstr_or_null(ver));
    char *rel = rocm_kernel_release(ctx), *dkms = rocm_dkms_module(ctx, rel);
    json_object_object_add(k, "kernel_release", jsonstr_or_null(rel));
    json_object_object_add(k, "dkms_module", jsonstr_or_null(dkms));
    json_object_object_add(k, "kfd_topology",
                           json_object_new_boolean(hostfs_stat(ctx->fs, "/sys/class/kfd/kfd/topology/nodes", &st, true) == 0));
    free(init);
    free(ver);
    free(rel);
    free(dkms);
    return k;
}

/* ---- the nodes --------------------------------------------------------------------------------- */

static int rocm_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One node's object; NULL when its properties cannot be read. */
static json_object *rocm_node_json(struct probe_ctx *ctx, uint64_t id, const struct result_pci *pci_devs)
{
    char path[96], *text = NULL, gbuf[16], abuf[24];
    size_t len = 0;
    snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%llu/properties", (unsigned long long)id);
    if (hostfs_read_file(ctx->fs, path, 64 * 1024, &text, &len) < 0)
        return NULL;
    struct rocm_kfd_props p;
    rocm_kfd_parse(text, len, &p);
    free(text);
    json_object *o = json_object_new_object();
    bool gpu = p.gfx_target_version > 0;
    json_object_object_add(o, "node", json_object_new_int64((int64_t)id));
    json_object_object_add(o, "gpu", json_object_new_boolean(gpu));
    json_object_object_add(o, "gfx_target_version", p.gfx_target_version >= 0 ? json_object_new_int64(p.gfx_target_version) : NULL);
    const char *gfx = rocm_gfx_name(p.gfx_target_version, gbuf, sizeof(gbuf));
    json_object_object_add(o, "gfx", jsonstr_or_null(gfx));
    json_object_object_add(o, "simd_count", p.simd_count >= 0 ? json_object_new_int64(p.simd_count) : NULL);
    const char *addr = gpu ? rocm_kfd_pci_address(&p, abuf, sizeof(abuf)) : NULL;
    json_object_object_add(o, "pci_address", jsonstr_or_null(addr));
    json_object_object_add(o, "drm_render_minor", gpu && p.drm_render_minor >= 0 ? json_object_new_int64(p.drm_render_minor) : NULL);
    const struct result_pci_dev *pd = result_pci_dev_at(pci_devs, addr);
    json_object_object_add(o, "on_pci_bus", gpu && pci_devs ? json_object_new_boolean(pd != NULL) : NULL);
    const char *dname = pd ? pd->device_name : NULL;
    json_object_object_add(o, "name", jsonstr_or_null(dname));
    uint64_t vram = 0;
    char vpath[96];
    snprintf(vpath, sizeof(vpath), "/sys/bus/pci/devices/%s/mem_info_vram_total", addr ? addr : "none");
    /* amdgpu's attribute on the PCI device (the same file as /sys/class/drm/cardN/device/mem_info_vram_total). */
    bool have_vram = addr && hostfs_read_u64(ctx->fs, vpath, &vram) == 0;
    json_object_object_add(o, "vram_bytes", have_vram && vram <= (uint64_t)INT64_MAX ? json_object_new_int64((int64_t)vram) : NULL);
    const struct rocm_gfx *row = rocm_gfx_find(gfx);
    /* An APU: a GPU node that also counts CPU cores (KFD's CRAT for APUs), or a target only APUs carry. */
    bool igpu = (gpu && p.cpu_cores_count > 0) || (row && row->igpu);
    json_object_object_add(o, "integrated", gpu && (row || p.cpu_cores_count > 0) ? json_object_new_boolean(igpu) : NULL);
    json_object_object_add(o, "support", gpu ? json_object_new_string(rocm_support_name(row ? row->support : ROCM_UNKNOWN)) : NULL);
    json_object_object_add(o, "override_known", jsonstr_or_null(row ? row->override : NULL));
    return o;
}

json_object *rocm_nodes_read(struct probe_ctx *ctx, const struct result_pci *pci_devs, size_t *not_read)
{
    json_object *arr = json_object_new_array();
    *not_read = 0;
    DIR *d = hostfs_opendir(ctx->fs, "/sys/class/kfd/kfd/topology/nodes");
    if (!d)
        return arr;
    uint64_t ids[ROCM_MAX_NODES];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        uint64_t v;
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && str_to_u64(e->d_name, 10, &v) == 0 && v < 100000) {
            if (n < ROCM_MAX_NODES)
                ids[n++] = v;
            else
                (*not_read)++;
        }
    }
    closedir(d);
    qsort(ids, n, sizeof(ids[0]), rocm_cmp_u64);
    for (size_t i = 0; i < n; i++) {
        json_object *o = rocm_node_json(ctx, ids[i], pci_devs);
        if (o)
            json_object_array_add(arr, o);
    }
    return arr;
}

/* ---- opening the nodes (live host files only) -------------------------------------------------- */

json_object *rocm_nodes_open(struct probe_ctx *ctx, json_object *nodes)
{
    if (!probe_host_files(ctx))
        return NULL;
    /* the nodes are opened with gpucheckup's credentials: its own user name, also under --pid */
    const char *user = isolate_target_own_getenv("USER");
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, devnode_open_json(ctx->fs, "/dev/kfd", user));
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        int64_t minor = jsonget_int(json_object_array_get_idx(nodes, i), "drm_render_minor", -1);
        if (minor < 128 || minor > 511)
            continue;
        char path[40];
        snprintf(path, sizeof(path), "/dev/dri/renderD%lld", (long long)minor);
        json_object_array_add(arr, devnode_open_json(ctx->fs, path, user));
    }
    return arr;
}
