/* pci_bus.c: the pci probe's bus side: GPUs and accelerators through libpci (sysfs or a dump) and sysfs. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pci/pci.h>

#include "pci_internal.h"
#include "strutil.h"

/* ---- libpci, fenced ------------------------------------------------------------------------
 * libpci reports errors through pacc->error, which must not return (its default calls exit(1)).
 * Ours records the message and longjmps back to the guarded call that was running, so libpci can
 * never end gpucheckup. Every libpci call below goes through one of the pci_lib_* wrappers. */

#define PCI_MAX_LIB_NOTES 20

static jmp_buf *pci_lib_jmp;
static char pci_lib_msg[512];
static struct pci_state *pci_lib_state;

static void pci_lib_note(const char *kind, const char *msg)
{
    struct pci_state *st = pci_lib_state;
    if (!st)
        return;
    if (st->n_notes == PCI_MAX_LIB_NOTES)
        report_section_add_note(st->sec, "libpci: further messages left out");
    if (st->n_notes++ < PCI_MAX_LIB_NOTES)
        report_section_add_note(st->sec, "libpci %s: %s", kind, msg);
}

static void pci_lib_error(char *msg, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void pci_lib_error(char *msg, ...)
{
    va_list ap;
    va_start(ap, msg);
    vsnprintf(pci_lib_msg, sizeof(pci_lib_msg), msg, ap);
    va_end(ap);
    str_sanitize(pci_lib_msg);
    if (pci_lib_jmp)
        longjmp(*pci_lib_jmp, 1);
    /* Unreachable: every libpci call runs under a guard. Never exit() on libpci's behalf. */
    abort();
}

static void pci_lib_warning(char *msg, ...) __attribute__((format(printf, 1, 2)));
static void pci_lib_warning(char *msg, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, msg);
    vsnprintf(buf, sizeof(buf), msg, ap);
    va_end(ap);
    pci_lib_note("warning", str_sanitize(buf));
}

static void pci_lib_debug(char *msg, ...) __attribute__((format(printf, 1, 2)));
static void pci_lib_debug(char *msg, ...)
{
    (void)msg; /* libpci's debugging output is not wanted in a report */
}

/* Each wrapper: 0 when libpci returned, -1 when it raised an error (message in pci_lib_msg). */
#define PCI_LIB_GUARD_BEGIN                                                                            \
    jmp_buf pci_jb_;                                                                                   \
    jmp_buf *pci_prev_ = pci_lib_jmp;                                                                  \
    pci_lib_jmp = &pci_jb_;                                                                            \
    if (setjmp(pci_jb_) != 0) {                                                                        \
        pci_lib_jmp = pci_prev_;                                                                       \
        return -1;                                                                                     \
    }
#define PCI_LIB_GUARD_END pci_lib_jmp = pci_prev_

static int pci_lib_init(struct pci_access *a)
{
    PCI_LIB_GUARD_BEGIN;
    pci_init(a);
    PCI_LIB_GUARD_END;
    return 0;
}

static int pci_lib_fill(struct pci_dev *d, int flags)
{
    PCI_LIB_GUARD_BEGIN;
    pci_fill_info(d, flags);
    PCI_LIB_GUARD_END;
    return 0;
}

/* Read LEN config bytes at POS: 1 read, 0 not readable, -1 libpci error. */
static int pci_lib_read(struct pci_dev *d, int pos, u8 *buf, int len)
{
    int ok;
    PCI_LIB_GUARD_BEGIN;
    ok = pci_read_block(d, pos, buf, len);
    PCI_LIB_GUARD_END;
    return ok ? 1 : 0;
}

/* Config offset of the PCI Express capability, 0 when absent, -1 on a libpci error. */
static int pci_lib_find_exp(struct pci_dev *d)
{
    struct pci_cap *c;
    PCI_LIB_GUARD_BEGIN;
    c = pci_find_cap(d, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
    PCI_LIB_GUARD_END;
    return c ? (int)c->addr : 0;
}

/* A name from pci.ids (heap, sanitised), or NULL when unknown. */
static char *pci_lib_name(struct pci_access *a, int flags, int x1, int x2, int x3, int x4)
{
    char buf[256];
    char *r = NULL;
    jmp_buf jb;
    jmp_buf *prev = pci_lib_jmp;
    pci_lib_jmp = &jb;
    if (setjmp(jb) != 0) {
        pci_lib_jmp = prev;
        return NULL;
    }
    r = pci_lookup_name(a, buf, sizeof(buf), flags | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, x1, x2, x3, x4);
    pci_lib_jmp = prev;
    if (!r || !*r)
        return NULL;
    return str_sanitize(str_dup(r));
}

static void pci_lib_cleanup(struct pci_access *a)
{
    jmp_buf jb;
    jmp_buf *prev = pci_lib_jmp;
    pci_lib_jmp = &jb;
    if (setjmp(jb) == 0)
        pci_cleanup(a);
    pci_lib_jmp = prev;
}

/* ---- small parsers -------------------------------------------------------------------------- */

const char *pci_kind_name(enum pci_kind k)
{
    switch (k) {
    case PCI_KIND_COMPUTE:
        return "compute-gpu";
    case PCI_KIND_DISPLAY:
        return "display-only";
    case PCI_KIND_ACCEL:
        return "accelerator";
    case PCI_KIND_PARAVIRT:
        return "paravirtual-gpu";
    default:
        return NULL;
    }
}

/* Display adapters that cannot compute: server BMC VGA and virtual VGA. DEVICE -1 = any. */
static const struct {
    int vendor, device;
    const char *what;
} pci_display_only[] = {
    {0x1a03, -1, "ASPEED BMC VGA"},
    {0x102b, -1, "Matrox (server BMC VGA)"},
    {0x19e5, 0x1711, "Huawei iBMC VGA"},
    {0x18ca, 0x0020, "XGI Z7/Z9 (server VGA)"},
    {0x1013, -1, "Cirrus Logic (virtual VGA)"},
    {0x1b36, 0x0100, "QXL (virtual VGA)"},
    {0x1af4, 0x1050, "virtio-gpu"},
    {0x15ad, 0x0405, "VMware SVGA II"},
    {0x15ad, 0x0710, "VMware SVGA"},
    {0x1234, 0x1111, "QEMU/Bochs standard VGA"},
    {0x80ee, 0xbeef, "VirtualBox VGA"},
    {0x1414, 0x5353, "Hyper-V virtual VGA"},
    {0x1ab8, -1, "Parallels virtual VGA"},
};

enum pci_kind pci_classify(int cls, int vendor, int device)
{
    if (cls < 0)
        return PCI_KIND_NONE;
    if ((cls >> 8) == 0x12 || cls == 0x0b40)
        return PCI_KIND_ACCEL;
    if ((cls >> 8) != 0x03)
        return PCI_KIND_NONE;
    /* WSL2's GPU (drivers/hv/dxgkrnl/dxgmodule.c: PCI_DEVICE_ID_VIRTUAL_RENDER, _COMPUTE_ACCELERATOR) */
    if (vendor == 0x1414 && (device == 0x008e || device == 0x008a))
        return PCI_KIND_PARAVIRT;
    for (size_t i = 0; i < sizeof(pci_display_only) / sizeof(pci_display_only[0]); i++)
        if (pci_display_only[i].vendor == vendor && (pci_display_only[i].device < 0 || pci_display_only[i].device == device))
            return PCI_KIND_DISPLAY;
    return PCI_KIND_COMPUTE;
}

double pci_parse_link_speed(const char *s)
{
    if (!s)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !(v > 0) || v > 1000)
        return -1;
    while (*end == ' ')
        end++;
    if (strncmp(end, "GT/s", 4) != 0)
        return -1;
    return v;
}

double pci_speed_from_code(unsigned code)
{
    static const double speeds[] = {-1, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    return code < sizeof(speeds) / sizeof(speeds[0]) ? speeds[code] : -1;
}

static int pci_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* the kernel writes lowercase; anything else is not canonical */
}

/* Parse exactly N (min..max) lowercase hex digits at *S, advancing it. */
static bool pci_hex_field(const char **s, size_t min, size_t max, unsigned *out)
{
    unsigned v = 0;
    size_t n = 0;
    while (n < max && pci_hexval((*s)[n]) >= 0) {
        v = v * 16 + (unsigned)pci_hexval((*s)[n]);
        n++;
    }
    if (n < min)
        return false;
    *s += n;
    *out = v;
    return true;
}

bool pci_parse_address(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
    const char *p = s;
    if (!pci_hex_field(&p, 4, 8, dom) || *p++ != ':')
        return false;
    if (!pci_hex_field(&p, 2, 2, bus) || *p++ != ':')
        return false;
    if (!pci_hex_field(&p, 2, 2, dev) || *p++ != '.')
        return false;
    if (*p < '0' || *p > '7' || p[1] != '\0')
        return false;
    *fn = (unsigned)(*p - '0');
    if (*dev > 0x1f || *dom > 0x7fffffff)
        return false;
    /* canonical: a domain wider than 4 digits has no leading zero ("DDDD:BB:DD.F" puts the
     * function digit at offset 11, so any offset past it means a wider domain) */
    if (p - s > 11 && s[0] == '0')
        return false;
    return true;
}

void pci_gpu_free(struct pci_gpu *g)
{
    free(g->vendor_name);
    free(g->device_name);
    free(g->class_name);
    free(g->subsystem_vendor_name);
    free(g->subsystem_name);
    free(g->driver);
    free(g->power_state);
    free(g->modalias);
    free(g->id_source);
    for (size_t i = 0; i < g->n_drm; i++)
        free(g->drm[i]);
    free(g->drm);
    memset(g, 0, sizeof(*g));
}

static void pci_gpu_init(struct pci_gpu *g, unsigned dom, unsigned bus, unsigned dev, unsigned fn)
{
    memset(g, 0, sizeof(*g));
    g->domain = dom;
    g->bus = bus;
    g->dev = dev;
    g->func = fn;
    snprintf(g->addr, sizeof(g->addr), "%04x:%02x:%02x.%u", dom, bus, dev, fn);
    g->vendor = g->device = g->cls = g->sub_vendor = g->sub_device = -1;
    g->responding = -1;
    g->cur_speed = g->max_speed = -1;
    g->cur_width = g->max_width = -1;
    g->boot_vga = -1;
}

static int pci_gpu_cmp(const void *a, const void *b)
{
    const struct pci_gpu *x = a, *y = b;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    unsigned kx = x->bus << 8 | x->dev << 3 | x->func, ky = y->bus << 8 | y->dev << 3 | y->func;
    return kx < ky ? -1 : kx > ky;
}

/* ---- per-device reads ----------------------------------------------------------------------- */

/* "/sys/bus/pci/devices/ADDR/ATTR" (heap). */
static char *pci_sys_path(const struct pci_gpu *g, const char *attr)
{
    return str_printf("/sys/bus/pci/devices/%s/%s", g->addr, attr);
}

static char *pci_sys_attr(struct pci_state *st, const struct pci_gpu *g, const char *attr)
{
    char *p = pci_sys_path(g, attr), *v = NULL;
    if (!p)
        return NULL;
    if (hostfs_read_attr(st->ctx->fs, p, &v) < 0)
        v = NULL;
    free(p);
    return v;
}

/* An attribute as an integer (base 0); false when missing or not a number. */
static bool pci_sys_int(struct pci_state *st, const struct pci_gpu *g, const char *attr, int64_t *out)
{
    char *v = pci_sys_attr(st, g, attr);
    bool ok = v && str_to_i64(v, 0, out) == 0;
    free(v);
    return ok;
}

/* libpci could not identify the device (its mandatory sysfs reads failed): read the attributes
 * through hostfs, then the first bytes of the config file. */
static void pci_ident_fallback(struct pci_state *st, struct pci_gpu *g)
{
    int64_t v;
    if (pci_sys_int(st, g, "vendor", &v) && v >= 0 && v <= 0xffff)
        g->vendor = (int)v;
    if (pci_sys_int(st, g, "device", &v) && v >= 0 && v <= 0xffff)
        g->device = (int)v;
    if (pci_sys_int(st, g, "class", &v) && v >= 0 && v <= 0xffffff)
        g->cls = (int)(v >> 8);
    if (g->vendor >= 0 && g->device >= 0 && g->cls >= 0)
        return;
    char *p = pci_sys_path(g, "config"), *buf = NULL;
    size_t len = 0;
    if (p && hostfs_read_file(st->ctx->fs, p, 4096, &buf, &len) == 0 && len >= 12) {
        const unsigned char *c = (const unsigned char *)buf;
        if (g->vendor < 0)
            g->vendor = c[0] | c[1] << 8;
        if (g->device < 0)
            g->device = c[2] | c[3] << 8;
        if (g->cls < 0)
            g->cls = c[10] | c[11] << 8;
    }
    free(buf);
    free(p);
}

static void pci_read_link_sysfs(struct pci_state *st, struct pci_gpu *g)
{
    char *s;
    int64_t v;
    s = pci_sys_attr(st, g, "current_link_speed");
    g->cur_speed = pci_parse_link_speed(s);
    free(s);
    s = pci_sys_attr(st, g, "max_link_speed");
    g->max_speed = pci_parse_link_speed(s);
    free(s);
    /* width 0 means the link is down (or the device asleep): unknown, not "x0" */
    if (pci_sys_int(st, g, "current_link_width", &v) && v > 0 && v <= 32)
        g->cur_width = (int)v;
    if (pci_sys_int(st, g, "max_link_width", &v) && v > 0 && v <= 32)
        g->max_width = (int)v;
    if (g->cur_speed > 0 || g->max_speed > 0 || g->cur_width > 0 || g->max_width > 0)
        g->link_source = "sysfs";
}

/* The link from the PCI Express capability in config space (dumps; sysfs without link files). */
static void pci_read_link_config(struct pci_dev *d, struct pci_gpu *g)
{
    int pos = pci_lib_find_exp(d);
    if (pos <= 0)
        return;
    u8 cap[4], sta[2];
    if (pci_lib_read(d, pos + PCI_EXP_LNKCAP, cap, 4) != 1 || pci_lib_read(d, pos + PCI_EXP_LNKSTA, sta, 2) != 1)
        return;
    unsigned lnkcap = (unsigned)cap[0] | (unsigned)cap[1] << 8 | (unsigned)cap[2] << 16 | (unsigned)cap[3] << 24;
    unsigned lnksta = (unsigned)sta[0] | (unsigned)sta[1] << 8;
    if (lnkcap == 0xffffffffu)
        return;
    g->max_speed = pci_speed_from_code(lnkcap & PCI_EXP_LNKCAP_SPEED);
    g->max_width = (int)((lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4);
    g->cur_speed = pci_speed_from_code(lnksta & PCI_EXP_LNKSTA_SPEED);
    g->cur_width = (int)((lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4);
    if (g->max_width <= 0 || g->max_width > 32)
        g->max_width = -1;
    if (g->cur_width <= 0 || g->cur_width > 32)
        g->cur_width = -1;
    g->link_source = "config";
}

static int pci_strcmp_p(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DRM minors (card*, renderD*) of the device, from sysfs drm/. */
static void pci_read_drm(struct pci_state *st, struct pci_gpu *g)
{
    char *p = pci_sys_path(g, "drm");
    DIR *d = p ? hostfs_opendir(st->ctx->fs, p) : NULL;
    free(p);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && g->n_drm < 16) {
        const char *n = e->d_name;
        const char *digits = str_starts_with(n, "card") ? n + 4 : str_starts_with(n, "renderD") ? n + 7 : NULL;
        uint64_t num;
        if (!digits || str_to_u64(digits, 10, &num) != 0 || num > 65535)
            continue;
        char **nd = realloc(g->drm, (g->n_drm + 1) * sizeof(*nd));
        if (!nd)
            break;
        g->drm = nd;
        if ((g->drm[g->n_drm] = str_dup(n))) {
            char *tp = pci_sys_path(g, "drm/");
            char *full = tp ? str_printf("%s%s", tp, n) : NULL;
            hostfs_trace(st->ctx->fs, full);
            free(full);
            free(tp);
            g->n_drm++;
        }
    }
    closedir(d);
    if (g->n_drm > 1)
        qsort(g->drm, g->n_drm, sizeof(*g->drm), pci_strcmp_p);
}

/* The sysfs facts of one GPU: driver, link, NUMA node, boot_vga, power state, modalias, DRM minors. */
static void pci_read_sysfs_facts(struct pci_state *st, struct pci_gpu *g)
{
    g->driver_known = true;
    char *p = pci_sys_path(g, "driver"), *target = NULL;
    int rc = p ? hostfs_readlink(st->ctx->fs, p, &target) : -ENOMEM;
    if (rc == 0) {
        /* Captured trees keep the link but not its target: the link text is enough. */
        char *slash = strrchr(target, '/');
        const char *base = slash ? slash + 1 : target;
        if (*base)
            g->driver = str_sanitize(str_dup(base));
    } else if (rc != -ENOENT) {
        report_section_add_note(st->sec, "%s: %s (driver unknown)", p, strerror(-rc));
        g->driver_known = false;
    }
    free(target);
    free(p);

    pci_read_link_sysfs(st, g);
    int64_t v;
    if (pci_sys_int(st, g, "numa_node", &v) && v >= 0 && v < 65536) {
        g->has_numa = true;
        g->numa_node = v;
    }
    if (pci_sys_int(st, g, "boot_vga", &v) && (v == 0 || v == 1))
        g->boot_vga = (int)v;
    g->power_state = pci_sys_attr(st, g, "power_state");
    g->modalias = pci_sys_attr(st, g, "modalias");
    if (g->power_state && !*g->power_state) {
        free(g->power_state);
        g->power_state = NULL;
    }
    pci_read_drm(st, g);
}

/* The sysfs files libpci opens itself, not through hostfs, for what is asked of it here. */
static const char *const pci_lib_files[] = {"vendor", "device", "class", "subsystem_vendor", "subsystem_device",
                                            "config", NULL};

/* List them in the trace too, so a capture made from the trace has what libpci needs. */
static void pci_trace_lib_reads(struct pci_state *st, const struct pci_gpu *g)
{
    const char *const *files = pci_lib_files;
    if (!st->ctx->fs->trace || st->dump)
        return;
    for (size_t i = 0; files[i]; i++) {
        char *p = pci_sys_path(g, files[i]);
        hostfs_trace(st->ctx->fs, p);
        free(p);
    }
}

/* Whether libpci may read G's sysfs files: it opens them itself, without O_NONBLOCK, and an open of a
 * FIFO waits for a writer for good. Each that is there must be a regular file (core.not-a-regular-file
 * names any other). A dump is the user's file: always. */
static bool pci_lib_may_read(struct pci_state *st, const struct pci_gpu *g)
{
    const char *const *files = pci_lib_files;
    bool ok = true;
    for (size_t i = 0; files[i] && !st->dump; i++) {
        char *p = pci_sys_path(g, files[i]);
        int rc = p ? hostfs_check_file(st->ctx->fs, p) : -ENOMEM;
        ok = ok && rc != -EINVAL && rc != -EISDIR;
        free(p);
    }
    if (!ok)
        report_section_add_note(st->sec, "%s: libpci not used: a file of its sysfs directory is not a regular "
                                "file; read what is through hostfs instead", g->addr);
    return ok;
}

/* Identify D with libpci; fill G. Returns true when G is a device to report. */
static bool pci_identify(struct pci_state *st, struct pci_access *a, struct pci_dev *d, struct pci_gpu *g)
{
    bool lib = pci_lib_may_read(st, g);
    char *where = lib && !st->dump ? pci_sys_path(g, "") : NULL;
    if (lib)
        pci_trace_lib_reads(st, g);
    if (where)
        hostfs_track_enter(where, true); /* the run's watchdog names it if libpci's reads hang */
    if (lib && pci_lib_fill(d, PCI_FILL_IDENT | PCI_FILL_CLASS) == 0) {
        g->vendor = d->vendor_id;
        g->device = d->device_id;
        g->cls = d->device_class;
        g->id_source = str_dup("libpci");
    } else {
        if (lib)
            report_section_add_note(st->sec, "%s: libpci could not identify it (%s); read its sysfs files instead",
                                    g->addr, pci_lib_msg);
        if (st->dump) {
            hostfs_track_done();
            return false;
        }
        pci_ident_fallback(st, g);
        g->id_source = str_dup("sysfs");
    }

    u8 hdr[4];
    int rd = lib ? pci_lib_read(d, 0, hdr, 4) : 0;
    if (rd == 1)
        g->responding = (hdr[0] & hdr[1] & hdr[2] & hdr[3]) == 0xff ? 0 : 1;

    if (st->dump && g->responding == 0) {
        /* The dump holds only ones here: the IDs are not IDs. */
        g->vendor = g->device = g->cls = -1;
    }
    g->kind = pci_classify(g->cls, g->vendor, g->device);
    if (g->kind == PCI_KIND_NONE && !(st->dump && g->responding == 0)) {
        hostfs_track_done();
        free(where);
        return false;
    }

    if (lib && g->responding != 0 && pci_lib_fill(d, PCI_FILL_SUBSYS) == 0 && (d->known_fields & PCI_FILL_SUBSYS)) {
        g->sub_vendor = d->subsys_vendor_id;
        g->sub_device = d->subsys_id;
    }
    if (g->vendor >= 0) {
        g->vendor_name = pci_lib_name(a, PCI_LOOKUP_VENDOR, g->vendor, 0, 0, 0);
        if (g->device >= 0)
            g->device_name = pci_lib_name(a, PCI_LOOKUP_DEVICE, g->vendor, g->device, 0, 0);
        if (g->sub_vendor >= 0 && g->sub_device >= 0 && g->sub_vendor != 0) {
            g->subsystem_vendor_name = pci_lib_name(a, PCI_LOOKUP_SUBSYSTEM | PCI_LOOKUP_VENDOR, g->sub_vendor, 0, 0, 0);
            g->subsystem_name = pci_lib_name(a, PCI_LOOKUP_SUBSYSTEM | PCI_LOOKUP_DEVICE, g->vendor, g->device,
                                             g->sub_vendor, g->sub_device);
        }
    }
    if (g->cls >= 0)
        g->class_name = pci_lib_name(a, PCI_LOOKUP_CLASS, g->cls, 0, 0, 0);

    hostfs_track_done();
    if (!st->dump)
        pci_read_sysfs_facts(st, g);
    if (where)
        hostfs_track_enter(where, true);
    if (!g->link_source && g->responding == 1 && lib)
        pci_read_link_config(d, g);
    hostfs_track_done();
    free(where);
    return true;
}

static int pci_add_gpu(struct pci_state *st, const struct pci_gpu *g)
{
    if (st->n_gpus >= PCI_MAX_GPUS) {
        st->n_dropped++;
        return -1;
    }
    struct pci_gpu *n = realloc(st->gpus, (st->n_gpus + 1) * sizeof(*n));
    if (!n)
        return -1;
    st->gpus = n;
    st->gpus[st->n_gpus++] = *g;
    return 0;
}

/* ---- enumeration ---------------------------------------------------------------------------- */

struct pci_addr {
    unsigned dom, bus, dev, fn;
};

static int pci_addr_cmp(const void *a, const void *b)
{
    const struct pci_addr *x = a, *y = b;
    if (x->dom != y->dom)
        return x->dom < y->dom ? -1 : 1;
    unsigned kx = x->bus << 8 | x->dev << 3 | x->fn, ky = y->bus << 8 | y->dev << 3 | y->fn;
    return kx < ky ? -1 : kx > ky;
}

/* The canonical device names under /sys/bus/pci/devices (listed through hostfs, so --root holds). */
static struct pci_addr *pci_list_sysfs(struct pci_state *st, size_t *n)
{
    *n = 0;
    DIR *d = hostfs_opendir(st->ctx->fs, "/sys/bus/pci/devices");
    if (!d) {
        if (errno == ENOENT)
            report_section_add_note(st->sec, "/sys/bus/pci/devices does not exist: no PCI bus is visible%s",
                                    probe_host_files(st->ctx) ? "" : " in this tree");
        else
            report_section_add_note(st->sec, "/sys/bus/pci/devices: %s", strerror(errno));
        return NULL;
    }
    st->bus_visible = true;
    struct pci_addr *list = NULL;
    size_t cap = 0, bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        struct pci_addr a;
        if (!pci_parse_address(e->d_name, &a.dom, &a.bus, &a.dev, &a.fn)) {
            if (bad++ < 5) {
                char *name = str_sanitize(str_dup(e->d_name));
                report_section_add_note(st->sec, "/sys/bus/pci/devices/%s: not a PCI address, skipped",
                                        name ? name : "?");
                free(name);
            }
            continue;
        }
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            if (nc > 65536)
                break;
            struct pci_addr *nl = realloc(list, nc * sizeof(*nl));
            if (!nl)
                break;
            list = nl;
            cap = nc;
        }
        list[(*n)++] = a;
    }
    closedir(d);
    if (*n > 1)
        qsort(list, *n, sizeof(*list), pci_addr_cmp);
    return list;
}

static int pci_scan_sysfs(struct pci_state *st, struct pci_access *a)
{
    size_t n = 0;
    struct pci_addr *list = pci_list_sysfs(st, &n);
    for (size_t i = 0; i < n; i++) {
        st->scanned++;
        struct pci_dev *d = pci_get_dev(a, (int)list[i].dom, (int)list[i].bus, (int)list[i].dev, (int)list[i].fn);
        if (!d)
            continue;
        struct pci_gpu g;
        pci_gpu_init(&g, list[i].dom, list[i].bus, list[i].dev, list[i].fn);
        bool keep = pci_identify(st, a, d, &g);
        /* pci_free_dev runs the backend's cleanup (closes its cached config fd). */
        pci_free_dev(d);
        if (!keep || pci_add_gpu(st, &g) != 0)
            pci_gpu_free(&g);
    }
    free(list);
    return PROBE_DONE;
}

static int pci_scan_dump(struct pci_state *st, struct pci_access *a)
{
    st->bus_visible = true;
    for (struct pci_dev *d = a->devices; d; d = d->next) {
        st->scanned++;
        if (d->domain < 0)
            continue;
        struct pci_gpu g;
        pci_gpu_init(&g, (unsigned)d->domain, d->bus, d->dev, d->func);
        if (!pci_identify(st, a, d, &g) || pci_add_gpu(st, &g) != 0)
            pci_gpu_free(&g);
    }
    if (st->n_gpus > 1)
        qsort(st->gpus, st->n_gpus, sizeof(*st->gpus), pci_gpu_cmp);
    return PROBE_DONE;
}

int pci_bus_scan(struct pci_state *st)
{
    const char *dump = st->ctx->opts->pci_dump;
    if (dump) {
        /* The dump is the user's file, not a host path: read it as given. */
        int fd = open(dump, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            st->ctx->error = str_printf("--pci-dump %s: %s", dump, strerror(errno));
            return PROBE_INPUT_ERROR;
        }
        struct stat sb;
        bool have_st = fstat(fd, &sb) == 0;
        close(fd);
        if (have_st && S_ISDIR(sb.st_mode)) {
            st->ctx->error = str_printf("--pci-dump %s: is a directory, not an lspci -x dump", dump);
            return PROBE_INPUT_ERROR;
        }
        /* libpci keeps every device of a dump in memory: a huge file is not a dump of one machine. */
        if (have_st && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > PCI_DUMP_MAX_BYTES) {
            st->ctx->error = str_printf("--pci-dump %s: is %jd bytes: too large for an lspci dump (at most %u)", dump,
                                        (intmax_t)sb.st_size, PCI_DUMP_MAX_BYTES);
            return PROBE_INPUT_ERROR;
        }
    }

    struct pci_access *a = pci_alloc();
    if (!a) {
        st->ctx->error = str_dup("out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    a->error = pci_lib_error;
    a->warning = pci_lib_warning;
    a->debug = pci_lib_debug;
    a->debugging = 0;
    a->id_lookup_mode = 0; /* no DNS, no ~/.pciids-cache: pci.ids only */
    pci_lib_state = st;
    pci_set_param(a, "hwdb.disable", "1");
    if (dump) {
        st->dump = true;
        a->method = PCI_ACCESS_DUMP;
        st->access_path = str_dup(dump);
        pci_set_param(a, "dump.name", (char *)dump);
    } else {
        a->method = PCI_ACCESS_SYS_BUS_PCI;
        st->access_path = hostfs_real_path(st->ctx->fs, "/sys/bus/pci");
        if (st->access_path)
            pci_set_param(a, "sysfs.path", st->access_path);
    }

    int rc = PROBE_DONE;
    if (pci_lib_init(a) != 0) {
        if (dump) {
            st->ctx->error = str_printf("--pci-dump %s: not a usable lspci -x dump: %s", dump, pci_lib_msg);
            rc = PROBE_INPUT_ERROR;
        } else {
            report_section_set_status(st->sec, REPORT_STATUS_FAILED, "libpci could not start: %s", pci_lib_msg);
        }
    } else if (dump) {
        rc = pci_scan_dump(st, a);
        if (rc == PROBE_DONE && st->scanned == 0) {
            st->ctx->error = str_printf("--pci-dump %s: no device found in it (not an lspci -x dump?)", dump);
            rc = PROBE_INPUT_ERROR;
        }
    } else {
        rc = pci_scan_sysfs(st, a);
    }
    if (st->n_dropped)
        report_section_add_note(st->sec, "%zu more GPUs or accelerators beyond the first %u are not reported",
                                st->n_dropped, PCI_MAX_GPUS);
    pci_lib_cleanup(a);
    pci_lib_state = NULL;
    return rc;
}
