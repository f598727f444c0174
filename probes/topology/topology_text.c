/* topology_text.c: the topology section for people: a matrix as nvidia-smi topo -m prints it, then ACS, IOMMU, RDMA, NCCL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "results/result_cuda.h"
#include "strutil.h"
#include "topology_internal.h"

static const char *topo_s(json_object *o, const char *key, const char *dflt)
{
    const char *s = jsonget_str(o, key);
    return s ? s : dflt;
}

/* The path type between devices DA and DB (labels A and B) in PAIRS ("X" for a device with itself), or
 * "NV#" for two GPUs NVML reports joined by # active NVLinks (the cuda section's, when it ran: BUF). */
static const char *topo_cell(json_object *pairs, json_object *da, json_object *db, const struct result_cuda *cuda,
                             char *buf, size_t len)
{
    const char *a = topo_s(da, "label", "?"), *b = topo_s(db, "label", "?");
    if (strcmp(a, b) == 0)
        return "X";
    int nv = strcmp(topo_s(da, "kind", ""), "gpu") == 0 && strcmp(topo_s(db, "kind", ""), "gpu") == 0
                 ? result_cuda_nvlinks(cuda, jsonget_str(da, "address"), jsonget_str(db, "address"))
                 : -1;
    if (nv > 0) {
        snprintf(buf, len, "NV%d", nv);
        return buf;
    }
    for (size_t i = 0; pairs && i < json_object_array_length(pairs); i++) {
        json_object *p = json_object_array_get_idx(pairs, i);
        const char *pa = topo_s(p, "a", ""), *pb = topo_s(p, "b", "");
        if ((strcmp(pa, a) == 0 && strcmp(pb, b) == 0) || (strcmp(pa, b) == 0 && strcmp(pb, a) == 0))
            return topo_s(p, "path", "?");
    }
    return "-";
}

static void topo_matrix(json_object *devs, json_object *pairs, const struct result_cuda *cuda, struct text_out *t)
{
    char nv[16];
    size_t n = json_object_array_length(devs);
    fprintf(t->f, "  %-6s", "");
    for (size_t j = 0; j < n; j++)
        fprintf(t->f, " %-5s", topo_s(json_object_array_get_idx(devs, j), "label", "?"));
    fprintf(t->f, " %-14s %s\n", "CPU Affinity", "NUMA");
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *a = topo_s(d, "label", "?");
        fprintf(t->f, "  %-6s", a);
        for (size_t j = 0; j < n; j++)
            fprintf(t->f, " %-5s", topo_cell(pairs, d, json_object_array_get_idx(devs, j), cuda, nv, sizeof(nv)));
        json_object *numa = jsonget(d, "numa_node");
        fprintf(t->f, " %-14s %s\n", topo_s(d, "local_cpulist", "?"),
                numa ? json_object_get_string(numa) : "?");
    }
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        if (strcmp(topo_s(d, "kind", ""), "nic") == 0)
            fprintf(t->f, "  %s: %s%s%s%s%s\n", topo_s(d, "label", "?"), topo_s(d, "address", "?"),
                    jsonget_str(d, "rdma_device") ? " " : "", topo_s(d, "rdma_device", ""),
                    jsonget_str(d, "netdevs") ? " " : "", topo_s(d, "netdevs", ""));
    }
    fprintf(t->f, "  Legend: PIX at most one PCIe switch, PXB several, PHB through a host bridge, NODE across host "
                  "bridges of one NUMA node, SYS across NUMA nodes, NV# # active NVLinks (NVML)\n");
}

static void topo_text_acs(json_object *acs, struct text_out *t)
{
    for (size_t i = 0; acs && i < json_object_array_length(acs); i++) {
        json_object *a = json_object_array_get_idx(acs, i), *bits = jsonget(a, "control_bits");
        const char *st = topo_s(a, "status", "?");
        char key[40];
        snprintf(key, sizeof(key), "ACS %s", topo_s(a, "bridge", "?"));
        if (strcmp(st, "enabled") != 0) {
            text_kv(t, key, "%s", strcmp(st, "not-checked") == 0 ? "not checked (needs root)" : st);
            continue;
        }
        char words[128] = "";
        for (size_t k = 0; bits && k < json_object_array_length(bits); k++) {
            size_t l = strlen(words);
            snprintf(words + l, sizeof(words) - l, "%s%s+", l ? " " : "",
                     json_object_get_string(json_object_array_get_idx(bits, k)));
        }
        text_kv(t, key, "ACSCtl %s%s", words[0] ? words : "(none)",
                jsonget_tri(a, "redirect") == GC_TRI_YES ? ": redirects peer traffic" : "");
    }
}

/* "NCCL 2.28.3: /usr/lib/.../libnccl.so.2.28.3 (ld.so.cache, loaded first)", one line per library file. */
static void topo_text_libs(json_object *libs, struct text_out *t)
{
    for (size_t i = 0; libs && i < json_object_array_length(libs); i++) {
        json_object *l = json_object_array_get_idx(libs, i);
        const char *fam = topo_s(l, "library", "?");
        char key[32];
        snprintf(key, sizeof(key), "%s %s", strcmp(fam, "rccl") == 0 ? "RCCL" : "NCCL", topo_s(l, "version", "?"));
        text_kv(t, key, "%s (%s%s%s%s)", topo_s(l, "real_path", "?"), topo_s(l, "found_via", "?"),
                jsonget_str(l, "dist_info") ? ", " : "", topo_s(l, "dist_info", ""),
                jsonget_tri(l, "loaded_first") == GC_TRI_YES ? ", loaded first" : "");
    }
}

void topo_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    json_object *d = sec->data, *devs = jsonget(d, "devices");
    text_heading(t, "Topology");
    if (devs && json_object_array_length(devs) > 0)
        topo_matrix(devs, jsonget(d, "pairs"), r ? result_cuda_get(r) : NULL, t);
    else
        text_kv(t, "devices", "no GPU or NIC on the PCI bus");
    topo_text_acs(jsonget(d, "acs"), t);
    json_object *io = jsonget(d, "iommu"), *groups = jsonget(io, "groups"), *kp = jsonget(io, "kernel_parameters");
    char *params = NULL;
    for (size_t i = 0; kp && i < json_object_array_length(kp); i++) {
        char *n = str_printf("%s%s%s", params ? params : "", params ? " " : "",
                             json_object_get_string(json_object_array_get_idx(kp, i)));
        free(params);
        params = n;
    }
    enum gc_tri present = jsonget_tri(io, "present");
    text_kv(t, "IOMMU", "%s%s%s", present == GC_TRI_YES ? "present" : present == GC_TRI_NO ? "absent" : "unknown",
            params ? "; kernel: " : "", params ? params : "");
    free(params);
    for (size_t i = 0; groups && i < json_object_array_length(groups); i++) {
        json_object *g = json_object_array_get_idx(groups, i);
        char key[40];
        snprintf(key, sizeof(key), "IOMMU %s", topo_s(g, "gpu", "?"));
        if (jsonget_str(g, "group"))
            text_kv(t, key, "group %s, %s", topo_s(g, "group", "?"), topo_s(g, "type", "type unknown"));
        else
            text_kv(t, key, "no IOMMU group");
    }
    json_object *rd = jsonget(jsonget(d, "rdma"), "devices");
    for (size_t i = 0; rd && i < json_object_array_length(rd); i++) {
        json_object *x = json_object_array_get_idx(rd, i), *ports = jsonget(x, "ports");
        for (size_t k = 0; ports && k < json_object_array_length(ports); k++) {
            json_object *p = json_object_array_get_idx(ports, k);
            char key[64];
            snprintf(key, sizeof(key), "RDMA %s:%s", topo_s(x, "name", "?"), topo_s(p, "port", "?"));
            text_kv(t, key, "%s (%s), %s, %s", topo_s(p, "state", "?"), topo_s(p, "phys_state", "?"),
                    topo_s(p, "link_layer", "?"), topo_s(p, "rate", "rate unknown"));
        }
    }
    json_object *vars = jsonget(jsonget(d, "nccl"), "variables");
    json_object_object_foreach(vars, k, v) {
        if (v)
            text_kv(t, k, "%s", json_object_get_string(v));
    }
    topo_text_libs(jsonget(jsonget(d, "nccl"), "libraries"), t);
}
