/* topology_rdma.c: the topology probe's multi-node facts: RDMA ports, GPUDirect RDMA, NCCL's variables; --require rdma. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_facts.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "topology_internal.h"

/* "4: ACTIVE" -> "ACTIVE" (the kernel writes the number and the name; a tree may hold either). */
static const char *topo_state_word(const char *s)
{
    const char *c = s ? strchr(s, ':') : NULL;
    if (!c)
        return s;
    c++;
    while (*c == ' ')
        c++;
    return c;
}

static char *topo_port_attr(struct topo_run *t, const char *dev, const char *port, const char *name)
{
    char *p = str_printf("/sys/class/infiniband/%s/ports/%s/%s", dev, port, name), *v = NULL;
    if (p && hostfs_read_attr(t->ctx->fs, p, &v) != 0)
        v = NULL;
    free(p);
    return v;
}

struct topo_port_down {
    char *dev, *port;
    bool infiniband;
};

/* The ports of one RDMA device as JSON; the ones not ACTIVE into DOWN (at most MAX, *N counts). */
static json_object *topo_ports(struct topo_run *t, const char *dev, struct topo_port_down *down, size_t max, size_t *n)
{
    json_object *arr = json_object_new_array();
    char *pd = str_printf("/sys/class/infiniband/%s/ports", dev);
    DIR *dp = pd ? hostfs_opendir(t->ctx->fs, pd) : NULL;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *st = topo_port_attr(t, dev, e->d_name, "state"), *ph = topo_port_attr(t, dev, e->d_name, "phys_state");
        char *rate = topo_port_attr(t, dev, e->d_name, "rate"), *ll = topo_port_attr(t, dev, e->d_name, "link_layer");
        json_object *o = json_object_new_object();
        json_object_object_add(o, "port", jsonstr_sanitized(e->d_name));
        json_object_object_add(o, "state", jsonstr_or_null(topo_state_word(st)));
        json_object_object_add(o, "phys_state", jsonstr_or_null(topo_state_word(ph)));
        json_object_object_add(o, "rate", jsonstr_or_null(rate));
        json_object_object_add(o, "link_layer", jsonstr_or_null(ll));
        json_object_array_add(arr, o);
        const char *w = topo_state_word(st);
        if (w && strcmp(w, "ACTIVE") == 0) {
            t->ib_active = true;
        } else if (w) {
            if (*n < max) {
                down[*n].dev = str_dup(dev);
                down[*n].port = str_dup(e->d_name);
                down[*n].infiniband = ll && strcmp(ll, "InfiniBand") == 0;
            }
            (*n)++;
        }
        free(st);
        free(ph);
        free(rate);
        free(ll);
    }
    if (dp)
        closedir(dp);
    free(pd);
    return arr;
}

static bool topo_module_loaded(struct topo_run *t, const char *name)
{
    char *text = NULL;
    if (hostfs_read_file(t->ctx->fs, "/proc/modules", 0, &text, NULL) != 0)
        return false;
    bool found = false;
    size_t l = strlen(name);
    for (const char *line = text; line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        found = strncmp(line, name, l) == 0 && line[l] == ' ';
    free(text);
    return found;
}

/* Can GPUDirect RDMA register GPU memory through dma-buf instead of nvidia_peermem? NVIDIA's GPU Operator
 * documentation ("GPUDirect RDMA"): with the open GPU kernel modules on Linux 5.12 or later; NCCL then uses
 * it by itself. Adds O's "dma_buf" ({open_kernel_module, kernel, possible}: each null when unknown) and
 * returns 1 (possible), 0 (not) or -1 (unknown); WHY says which part fails. */
static int topo_dma_buf(struct topo_run *t, json_object *o, char *why, size_t len)
{
    char *ver = NULL, *rel = NULL;
    int open = -1, kernel = -1;
    if (hostfs_read_file(t->ctx->fs, "/proc/driver/nvidia/version", 65536, &ver, NULL) == 0)
        open = strstr(ver, "Open Kernel Module") != NULL;
    if (hostfs_read_attr(t->ctx->fs, "/proc/sys/kernel/osrelease", &rel) == 0) {
        int major = 0, minor = 0;
        if (sscanf(rel, "%d.%d", &major, &minor) == 2)
            kernel = major > 5 || (major == 5 && minor >= 12);
    } else {
        rel = NULL;
    }
    int possible = open == 0 || kernel == 0 ? 0 : open == 1 && kernel == 1 ? 1 : -1;
    snprintf(why, len, "%s", open == 0      ? "the NVIDIA kernel module is the proprietary one, not the open one"
                             : kernel == 0 ? "the kernel is older than 5.12"
                                           : "the kernel module's flavour or the kernel's version is unknown");
    json_object *d = json_object_new_object();
    json_object_object_add(d, "open_kernel_module", open < 0 ? NULL : json_object_new_boolean(open));
    json_object_object_add(d, "kernel", jsonstr_or_null(rel ? str_trim(rel) : NULL));
    json_object_object_add(d, "possible", possible < 0 ? NULL : json_object_new_boolean(possible));
    json_object_object_add(o, "dma_buf", d);
    free(ver);
    free(rel);
    return possible;
}

#define TOPO_MAX_DOWN 32

void topo_rdma(struct topo_run *t)
{
    json_object *o = json_object_new_object(), *devs = json_object_new_array();
    struct topo_port_down down[TOPO_MAX_DOWN];
    size_t ndown = 0;
    DIR *dp = hostfs_opendir(t->ctx->fs, "/sys/class/infiniband");
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        json_object *d = json_object_new_object();
        json_object_object_add(d, "name", jsonstr_sanitized(e->d_name));
        char *p = str_printf("/sys/class/infiniband/%s/device", e->d_name), *link = NULL, *numa = NULL;
        if (p && hostfs_readlink(t->ctx->fs, p, &link) == 0)
            json_object_object_add(d, "address", jsonstr_sanitized(strrchr(link, '/') ? strrchr(link, '/') + 1 : link));
        else
            json_object_object_add(d, "address", NULL);
        char *q = str_printf("%s/numa_node", p ? p : "");
        json_object_object_add(d, "numa_node", q && hostfs_read_attr(t->ctx->fs, q, &numa) == 0 ? json_object_new_int(atoi(numa)) : NULL);
        free(q);
        q = str_printf("%s/net", p ? p : "");
        DIR *nd = q ? hostfs_opendir(t->ctx->fs, q) : NULL;
        json_object *nets = json_object_new_array();
        struct dirent *ne;
        while (nd && (ne = readdir(nd)))
            if (ne->d_name[0] != '.')
                json_object_array_add(nets, jsonstr_sanitized(ne->d_name));
        if (nd)
            closedir(nd);
        json_object_object_add(d, "netdevs", nets);
        json_object_object_add(d, "ports", topo_ports(t, e->d_name, down, TOPO_MAX_DOWN, &ndown));
        json_object_array_add(devs, d);
        free(q);
        free(numa);
        free(link);
        free(p);
    }
    if (dp)
        closedir(dp);
    json_object_object_add(o, "devices", devs);
    json_object_object_add(o, "active", json_object_new_boolean(t->ib_active));
    /* GPUDirect RDMA: NVIDIA's peer-memory module, asked only where it could matter. */
    bool peer_q = t->nvidia && t->ib_active;
    bool peermem = peer_q && topo_module_loaded(t, "nvidia_peermem");
    json_object_object_add(o, "nvidia_peermem", peer_q ? json_object_new_boolean(peermem) : NULL);
    char why[96] = "";
    int dmabuf = peer_q && !peermem ? topo_dma_buf(t, o, why, sizeof(why)) : -1;
    if (!(peer_q && !peermem))
        json_object_object_add(o, "dma_buf", NULL);
    json_object_object_add(t->d, "rdma", o);
    if (peer_q && !peermem && dmabuf != 1) { /* with dma-buf at hand, nvidia_peermem is not needed */
        struct report_finding *f = report_add_finding(
            t->ctx->report, "topology.no-peermem", NULL,
            "NVIDIA GPUs and an active RDMA port, but nvidia_peermem is not in /proc/modules and dma-buf %s",
            dmabuf == 0 ? "cannot stand in for it" : "may not stand in for it");
        if (f)
            report_finding_add_evidence(f, "dma-buf", "%s", why);
    }
    char *hca = topo_nccl_var(t, "NCCL_IB_HCA");
    for (size_t i = 0; i < ndown && i < TOPO_MAX_DOWN; i++) {
        /* A warning for an InfiniBand port when none is active, or for a port NCCL_IB_HCA names; an
         * Ethernet (RoCE, iWARP) port without a cable, or one beside an active port, is information. */
        bool named = hca && hca[0] != '^' && topo_nccl_match(hca, down[i].dev);
        bool warn = named || (down[i].infiniband && !t->ib_active);
        char *subj = str_printf("%s:%s", down[i].dev, down[i].port);
        report_add_finding(t->ctx->report, warn ? "topology.ib-port-down" : "topology.ib-port-down-unused",
                           subj, "RDMA device %s port %s is not active%s", down[i].dev, down[i].port,
                           named ? " and NCCL_IB_HCA names it" : "");
        free(subj);
        free(down[i].dev);
        free(down[i].port);
    }
    free(hca);
}
