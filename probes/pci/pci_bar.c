/* pci_bar.c: a discrete GPU's VRAM BAR left small with Resizable BAR off (sysfs resource, resourceN_resize, config). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci_internal.h"
#include "strutil.h"
#include "vendor.h"

const struct check pci_bar_checks[] = {
    /* PCIe base spec, Resizable BAR extended capability (ID 0x0015); the kernel resizes a BAR only when the
     * firmware left room above 4 GiB. Intel's compute runtime asks for it on Arc; without it, copies to VRAM go
     * through a 256 MiB window. */
    {"pci.small-bar", REPORT_SEV_WARNING,
     "A discrete GPU's memory BAR is far smaller than its VRAM: Resizable BAR is off in the firmware",
     "Enable \"Above 4G Decoding\" and \"Re-Size BAR Support\" (Resizable BAR; AMD: Smart Access Memory) in the "
     "firmware setup and boot with CSM off; `sudo lspci -vv -s ADDRESS` shows \"Resizable BAR\" with the current "
     "and supported sizes.", CHECK_LAYER_FIRMWARE | CHECK_F_NEVER_CAUSE},
    {"pci.bar-resizable", REPORT_SEV_INFO,
     "A discrete GPU's memory BAR is smaller than the device supports (its VRAM size is not known here)",
     "If it is smaller than the GPU's memory, enable \"Above 4G Decoding\" and \"Re-Size BAR Support\" in the "
     "firmware setup; `sudo lspci -vv -s ADDRESS` shows the BAR sizes.", CHECK_LAYER_FIRMWARE | CHECK_F_NEVER_CAUSE},
};
const size_t pci_bar_n_checks = sizeof(pci_bar_checks) / sizeof(pci_bar_checks[0]);

#define PCI_BAR_MB (UINT64_C(1024) * 1024u)

size_t pci_bar_parse_resource(const char *text, uint64_t *size, uint64_t *flags, size_t max)
{
    size_t n = 0;
    for (const char *line = text; line && *line && n < max;) {
        char *end = NULL;
        unsigned long long start = strtoull(line, &end, 16), last = 0, fl = 0;
        bool ok = end && end != line;
        if (ok) {
            const char *p = end;
            last = strtoull(p, &end, 16);
            ok = end != p;
            p = end;
            fl = ok ? strtoull(p, &end, 16) : 0;
            ok = ok && end != p;
        }
        size[n] = ok && last > start ? (uint64_t)(last - start) + 1 : 0;
        flags[n] = ok ? (uint64_t)fl : 0;
        n++;
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

/* Little-endian dword at OFF of CFG[0..LEN), or 0 past its end. */
static uint32_t pci_bar_dword(const unsigned char *cfg, size_t len, size_t off)
{
    if (off + 4 > len)
        return 0;
    return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
           (uint32_t)cfg[off + 3] << 24;
}

size_t pci_bar_rebar_config(const unsigned char *cfg, size_t len, uint64_t *mask, size_t max)
{
    size_t found = 0;
    size_t off = 0x100;
    for (int hops = 0; hops < 64 && off >= 0x100 && off + 4 <= len; hops++) {
        uint32_t h = pci_bar_dword(cfg, len, off);
        if (h == 0 || h == 0xffffffffu)
            break;
        if ((h & 0xffffu) == 0x0015u) {
            unsigned nbars = (pci_bar_dword(cfg, len, off + 8) >> 5) & 7u;
            for (unsigned i = 0; i < nbars && i < 6; i++) {
                uint32_t cap = pci_bar_dword(cfg, len, off + 4 + 8 * i);
                unsigned idx = pci_bar_dword(cfg, len, off + 8 + 8 * i) & 7u;
                /* capability bits 4..31: 1 MiB << (bit - 4) supported, as resourceN_resize's bit n = 2^n MiB */
                if (idx < max && cap >> 4) {
                    mask[idx] = cap >> 4;
                    found++;
                }
            }
            break;
        }
        off = h >> 20;
    }
    return found;
}

/* Is the device a Root Complex Integrated Endpoint (PCIe capability, device/port type 9)? 1, 0, -1 unknown. */
static int pci_bar_rciep(const unsigned char *cfg, size_t len)
{
    if (len < 0x40 || !(cfg[0x06] & 0x10))
        return -1;
    size_t p = cfg[0x34] & 0xfcu;
    for (int hops = 0; hops < 48 && p >= 0x40 && p + 4 <= len && p < 0x100; hops++) {
        if (cfg[p] == 0x10)
            return ((cfg[p + 2] >> 4) & 0xf) == 9;
        p = cfg[p + 1] & 0xfcu;
    }
    return -1;
}

static void pci_bar_size_text(uint64_t b, char *out, size_t n)
{
    if (b >= 1024 * PCI_BAR_MB && b % (1024 * PCI_BAR_MB) == 0)
        snprintf(out, n, "%" PRIu64 " GiB", b / (1024 * PCI_BAR_MB));
    else if (b >= 1024 * PCI_BAR_MB)
        snprintf(out, n, "%.1f GiB", (double)b / (double)(1024 * PCI_BAR_MB));
    else
        snprintf(out, n, "%" PRIu64 " MiB", b / PCI_BAR_MB);
}

/* VRAM as the GPU's driver states it in sysfs: amdgpu's mem_info_vram_total, xe's tile0/physical_vram_size_bytes.
 * 0 when unknown; *SRC the file. */
static uint64_t pci_bar_vram(struct pci_state *st, const struct pci_gpu *g, char *src, size_t n)
{
    static const char *const files[] = {"mem_info_vram_total", "tile0/physical_vram_size_bytes", NULL};
    for (size_t i = 0; files[i]; i++) {
        uint64_t v = 0;
        snprintf(src, n, "/sys/bus/pci/devices/%s/%s", g->addr, files[i]);
        if (hostfs_read_u64(st->ctx->fs, src, &v) == 0 && v > 0)
            return v;
    }
    src[0] = '\0';
    return 0;
}

void pci_bar_findings(struct pci_state *st, const struct pci_gpu *g, const char *name)
{
    const struct hostfs *fs = st->ctx->fs;
    if (st->dump || g->kind != PCI_KIND_COMPUTE || g->responding == 0 || g->bus == 0)
        return; /* iGPUs sit on bus 0 */
    char path[512], *text = NULL;
    uint64_t size[6] = {0}, flags[6] = {0}, mask[6] = {0};
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", g->addr);
    if (hostfs_read_file(fs, path, 4096, &text, NULL) != 0)
        return;
    pci_bar_parse_resource(text, size, flags, 6);
    free(text);
    text = NULL;
    const char *how = NULL;
    for (int i = 0; i < 6; i++) {
        uint64_t v = 0;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d_resize", g->addr, i);
        if (hostfs_read_attr(fs, path, &text) == 0) {
            char *end = NULL;
            v = strtoull(str_trim(text), &end, 16);
            mask[i] = end && *end == '\0' ? v : 0;
            how = "resize";
        }
        free(text);
        text = NULL;
    }
    char *raw = NULL;
    size_t clen = 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", g->addr);
    if (hostfs_read_file(fs, path, 4096, &raw, &clen) == 0) {
        const unsigned char *cfg = (const unsigned char *)raw;
        if (pci_bar_rciep(cfg, clen) == 1) {
            free(raw);
            return;
        }
        if (!how && pci_bar_rebar_config(cfg, clen, mask, 6) > 0)
            how = "config";
    }
    free(raw);
    if (!how)
        return;
    /* the resizable BAR whose largest supported size is the largest: the VRAM aperture */
    int best = -1;
    uint64_t best_max = 0;
    for (int i = 0; i < 6; i++) {
        if (!mask[i] || !(flags[i] & 0x2000u) || size[i] == 0) /* IORESOURCE_PREFETCH */
            continue;
        int top = 63;
        while (top > 0 && !(mask[i] >> top & 1u))
            top--;
        uint64_t max = top + 20 < 64 ? (PCI_BAR_MB << top) : 0;
        if (max > best_max) {
            best_max = max;
            best = i;
        }
    }
    if (best < 0 || size[best] >= best_max)
        return;
    char vsrc[512], cur[32], sup[32], vr[32];
    uint64_t vram = pci_bar_vram(st, g, vsrc, sizeof(vsrc));
    pci_bar_size_text(size[best], cur, sizeof(cur));
    pci_bar_size_text(best_max, sup, sizeof(sup));
    pci_bar_size_text(vram, vr, sizeof(vr));
    struct report_finding *f;
    if (vram > 0 && size[best] * 4 <= vram)
        f = report_add_finding(st->ctx->report, "pci.small-bar", g->addr,
                               "%s %s maps %s of its %s VRAM through BAR %d (it supports up to %s): Resizable BAR "
                               "is off",
                               g->addr, name, cur, vr, best, sup);
    else if (vram == 0 && size[best] <= 1024 * PCI_BAR_MB && best_max >= 4 * size[best])
        /* Resizable BAR off leaves the BAR at 256 MiB (sometimes 128 or 512); a BAR of some GiB below a larger
         * advertised size is a card whose VRAM is smaller than that size, mapped whole */
        f = report_add_finding(st->ctx->report, "pci.bar-resizable", g->addr,
                               "%s %s: BAR %d is %s, the device supports up to %s (Resizable BAR may be off)", g->addr,
                               name, best, cur, sup);
    else
        return;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", g->addr);
    report_finding_add_evidence(f, path, "BAR %d: %s, prefetchable", best, cur);
    if (strcmp(how, "resize") == 0) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d_resize", g->addr, best);
        report_finding_add_evidence(f, path, "%" PRIx64 " (largest: %s)", mask[best], sup);
    } else {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", g->addr);
        report_finding_add_evidence(f, path, "Resizable BAR capability: up to %s", sup);
    }
    if (vram > 0)
        report_finding_add_evidence(f, vsrc, "%s", vr);
    report_finding_set_hint(f, "Enable \"Above 4G Decoding\" and \"Re-Size BAR Support\" (Resizable BAR; AMD: Smart "
                               "Access Memory) in the firmware setup, with CSM off; `sudo lspci -vv -s %s` then shows "
                               "BAR %d at %s.%s",
                            g->addr, best, sup,
                            g->vendor == VENDOR_PCI_INTEL ? " Intel's compute runtime (Level Zero, OpenCL) is slow "
                                                            "or refuses to start on Arc without it."
                                                          : "");
}
