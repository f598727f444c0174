/* pci_text.c: the pci probe's details for people, like `lspci -k`: walks the section's JSON only. */
#include <string.h>

#include "jsonget.h"
#include "pci_internal.h"
#include "results/result_pci.h"

static enum report_mark pci_t_mark(enum report_severity s)
{
    return s == REPORT_SEV_ERROR ? REPORT_MARK_ERROR : s == REPORT_SEV_WARNING ? REPORT_MARK_WARN : REPORT_MARK_INFO;
}

/* The findings about SUBJECT, indented under it. */
static void pci_t_findings(const struct report *r, struct text_out *t, const char *subject, const char *indent)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *f = r->findings[i];
        if (f->subject && strcmp(f->subject, subject) == 0)
            fprintf(t->f, "%s%s %s: %s\n", indent, text_mark(t, pci_t_mark(f->severity)), f->id, f->message);
    }
}

static void pci_t_link_part(char *buf, size_t len, json_object *l, const char *sk, const char *wk)
{
    double s, w;
    bool hs = jsonget_num(l, sk, &s), hw = jsonget_num(l, wk, &w);
    if (hs && hw)
        snprintf(buf, len, "%.1f GT/s x%d", s, (int)w);
    else if (hs)
        snprintf(buf, len, "%.1f GT/s, width unknown", s);
    else if (hw)
        snprintf(buf, len, "x%d, speed unknown", (int)w);
    else
        snprintf(buf, len, "unknown");
}

static void pci_t_device(const struct report *r, struct text_out *t, json_object *d)
{
    const char *addr = jsonget_str(d, "address");
    const char *cls = jsonget_str(d, "class"), *cname = jsonget_str(d, "class_name");
    const char *vid = jsonget_str(d, "vendor_id"), *did = jsonget_str(d, "device_id");
    const char *vname = jsonget_str(d, "vendor_name"), *dname = jsonget_str(d, "device_name");
    FILE *f = t->f;
    if (jsonget_tri(d, "responding") == 0 && !vid) {
        fprintf(f, "  %s: not responding (configuration space reads all ones)\n", addr ? addr : "?");
    } else {
        fprintf(f, "  %s %s [%s]: %s %s [%s:%s]\n", addr ? addr : "?", cname ? cname : "Class", cls ? cls : "????",
                vname ? vname : "Unknown vendor", dname ? dname : "unknown device", vid ? vid : "????",
                did ? did : "????");
    }
    const char *svid = jsonget_str(d, "subsystem_vendor_id"), *sdid = jsonget_str(d, "subsystem_device_id");
    if (svid && sdid && strcmp(svid, "0000") != 0) {
        const char *svn = jsonget_str(d, "subsystem_vendor_name"), *sn = jsonget_str(d, "subsystem_name");
        fprintf(f, "        Subsystem: %s %s [%s:%s]\n", svn ? svn : "Unknown vendor", sn ? sn : "device", svid, sdid);
    }
    if (jsonget_tri(d, "driver_known") == 1) {
        const char *drv = jsonget_str(d, "driver");
        fprintf(f, "        Kernel driver in use: %s\n", drv ? drv : "(none)");
    }
    const char *kind = jsonget_str(d, "kind");
    fprintf(f, "        Kind: %s", kind ? kind : "unknown");
    double numa;
    if (jsonget_num(d, "numa_node", &numa))
        fprintf(f, "; NUMA node %d", (int)numa);
    int bv = jsonget_tri(d, "boot_vga");
    if (bv >= 0)
        fprintf(f, "; boot VGA: %s", bv ? "yes" : "no");
    const char *ps = jsonget_str(d, "power_state");
    if (ps)
        fprintf(f, "; power state %s", ps);
    fputc('\n', f);
    json_object *l = NULL;
    if (json_object_object_get_ex(d, "link", &l) && l) {
        char cur[48], max[48];
        pci_t_link_part(cur, sizeof(cur), l, "current_speed", "current_width");
        pci_t_link_part(max, sizeof(max), l, "max_speed", "max_width");
        fprintf(f, "        Link: %s (capable of %s)\n", cur, max);
    }
    json_object *drm = NULL;
    if (json_object_object_get_ex(d, "drm", &drm) && drm && json_object_array_length(drm) > 0) {
        fprintf(f, "        DRM:");
        for (size_t i = 0; i < json_object_array_length(drm); i++)
            fprintf(f, " %s", json_object_get_string(json_object_array_get_idx(drm, i)));
        fputc('\n', f);
    }
    if (addr)
        pci_t_findings(r, t, addr, "        ");
}

void pci_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    json_object *data = sec->data, *devs = NULL, *mods = NULL, *nv = NULL, *nodes = NULL, *notes = NULL;
    FILE *f = t->f;
    /* the typed result holds devices, nodes and source (the data keeps their places) */
    const struct result_pci *res = sec->result_ops == &result_pci_ops ? sec->result : NULL;
    const char *src = res && (res->have & RESULT_PCI_HAVE_SOURCE) ? res->source : jsonget_str(data, "source");
    char title[128];
    snprintf(title, sizeof(title), "PCI GPUs and accelerators (%s)",
             src && strcmp(src, "dump") == 0 ? "from a dump" : "from sysfs");
    text_heading(t, title);
    if (res && res->devices_json)
        devs = res->devices_json;
    else
        json_object_object_get_ex(data, "devices", &devs);
    size_t nd = devs ? json_object_array_length(devs) : 0;
    for (size_t i = 0; i < nd; i++)
        pci_t_device(r, t, json_object_array_get_idx(devs, i));
    if (nd == 0)
        fprintf(f, "  (none)\n");

    if (json_object_object_get_ex(data, "modules", &mods) && mods) {
        text_heading(t, "Kernel modules");
        json_object_object_foreach(mods, name, m)
        {
            int loaded = jsonget_tri(m, "loaded");
            const char *ver = jsonget_str(m, "version");
            fprintf(f, "  %-12s %s%s%s%s\n", name,
                    loaded < 0 ? "unknown" : loaded ? (jsonget_tri(m, "builtin") == 1 ? "built in" : "loaded")
                                                    : "not loaded",
                    ver ? " (version " : "", ver ? ver : "", ver ? ")" : "");
        }
        pci_t_findings(r, t, "nouveau", "  ");
    }

    if (json_object_object_get_ex(data, "nvidia", &nv) && nv) {
        const char *kv = jsonget_str(nv, "kernel_module_version");
        json_object *libs = NULL;
        json_object_object_get_ex(nv, "libraries", &libs);
        size_t nl = libs ? json_object_array_length(libs) : 0;
        if (kv || nl > 0) {
            text_heading(t, "NVIDIA driver");
            int open = jsonget_tri(nv, "kernel_module_open");
            text_kv(t, "kernel module", "%s%s", kv ? kv : "not loaded",
                    open == 1 ? " (open)" : open == 0 ? " (proprietary)" : "");
            for (size_t i = 0; i < nl; i++) {
                json_object *lib = json_object_array_get_idx(libs, i);
                text_kv(t, "library", "%s", jsonget_str(lib, "path"));
            }
            pci_t_findings(r, t, "nvidia", "  ");
        }
    }

    if (res && res->nodes_json)
        nodes = res->nodes_json;
    else
        json_object_object_get_ex(data, "nodes", &nodes);
    if (nodes) {
        text_heading(t, "Device nodes");
        size_t nn = json_object_array_length(nodes);
        if (nn == 0)
            fprintf(f, "  (none)\n");
        for (size_t i = 0; i < nn; i++) {
            json_object *n = json_object_array_get_idx(nodes, i);
            const char *path = jsonget_str(n, "path");
            if (jsonget_tri(n, "present") != 1) {
                const char *why = jsonget_str(n, "required_by");
                fprintf(f, "  %-22s missing%s%s%s\n", path, why ? " (needed: " : "", why ? why : "", why ? ")" : "");
            } else {
                const char *grp = jsonget_str(n, "group");
                double gid = -1;
                jsonget_num(n, "gid", &gid);
                int acc = jsonget_tri(n, "accessible"), ing = jsonget_tri(n, "user_in_group");
                char gbuf[64];
                if (grp)
                    snprintf(gbuf, sizeof(gbuf), "%s", grp);
                else
                    snprintf(gbuf, sizeof(gbuf), "gid %d", (int)gid);
                fprintf(f, "  %-22s %s %s group %s%s, %s\n", path, jsonget_str(n, "type"), jsonget_str(n, "mode"), gbuf,
                        ing == 1 ? " (you are in it)" : "",
                        acc == 1 ? "read-write ok" : acc == 0 ? "NO read-write access" : "access unknown");
            }
            if (path)
                pci_t_findings(r, t, path, "        ");
        }
    }

    if (json_object_object_get_ex(data, "notes", &notes) && notes && json_object_array_length(notes) > 0) {
        text_heading(t, "Notes");
        for (size_t i = 0; i < json_object_array_length(notes); i++)
            fprintf(f, "  - %s\n", json_object_get_string(json_object_array_get_idx(notes, i)));
    }
}
