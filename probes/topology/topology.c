/* topology.c: the topology probe: how GPUs and NICs connect (PCIe paths, ACS, IOMMU), RDMA ports, NCCL's variables. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "topology_internal.h"
#include "results/result_pci.h"

/* Findings about many GPUs or many nodes: a single GPU computes whatever they say. Their layer is the one
 * above the compute stacks, as NCCL sits above CUDA (CHECK_LAYER_FRAMEWORK: the gpu target and the APIs'
 * paths never take them as reasons), and none explains another finding or is a verdict's root cause. */
#define TOPO_LAYER (CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT)
/* ACS redirection on a bridge explains a peer check's finding about two GPUs behind it (doctor_peers.c);
 * nothing else: no finding sits above this layer for the doctor's other rules. */
#define TOPO_ACS_LAYER (CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_ROOT | CHECK_F_PEER_PATH)
static const struct check topo_checks[] = {
    {"topology.acs-redirect", REPORT_SEV_WARNING,
     "PCIe ACS redirection is on at a bridge between two GPUs: their peer-to-peer traffic goes up through the root "
     "complex and the IOMMU (NCCL hangs or slow P2P)",
     "Turn ACS redirection off on each bridge named, as NCCL's troubleshooting guide says: as root, "
     "setpci -s BRIDGE ECAP_ACS+0x6.w=0000 (lost at reboot), or disable ACS in the firmware setup.",
     TOPO_ACS_LAYER},
    {"topology.acs-redirect-vm", REPORT_SEV_INFO,
     "PCIe ACS redirection is on at a bridge between two GPUs inside a virtual machine, where the hypervisor needs it "
     "for passthrough: peer-to-peer traffic goes through the IOMMU",
     "Nothing to fix inside the VM; for fast P2P give the VM GPUs the host can pass through as one group, or use "
     "NVLink.", TOPO_ACS_LAYER},
    {"topology.acs-unchecked", REPORT_SEV_INFO,
     "The ACS settings of the bridges between the GPUs were not checked: reading PCIe extended configuration space "
     "needs root",
     "Run gpucheckup topology as root (sudo) to check ACS redirection on the bridges between the GPUs.",
     TOPO_LAYER},
    {"topology.iommu-translated", REPORT_SEV_INFO,
     "The IOMMU translates the GPUs' DMA: peer-to-peer traffic that ACS sends up to the root complex is translated "
     "there too",
     "For P2P-heavy work (NCCL) on bare metal, iommu=pt (Intel: intel_iommu=on iommu=pt) on the kernel command line "
     "puts the devices in identity (pass-through) mode.", TOPO_LAYER},
    {"topology.ib-port-down", REPORT_SEV_WARNING,
     "An InfiniBand/RDMA port is not active: NCCL cannot use it between nodes",
     "Check the cable and the switch (ibstat, ibv_devinfo); a port in Polling has no link, an INIT port waits for "
     "the subnet manager (opensm).", TOPO_LAYER},
    {"topology.ib-port-down-unused", REPORT_SEV_INFO,
     "An InfiniBand/RDMA port is not active, while another port is",
     "Nothing to do unless this port is meant to carry traffic (cable, switch, subnet manager).",
     TOPO_LAYER},
    {"topology.no-peermem", REPORT_SEV_INFO,
     "NVIDIA GPUs and an active RDMA port, but the nvidia_peermem module is not loaded: NCCL's GPUDirect RDMA "
     "then needs dma-buf (Linux 5.12+, open kernel modules), else data goes through host memory",
     "modprobe nvidia_peermem (part of the NVIDIA driver), or check that NCCL uses dma-buf (NCCL_DEBUG=INFO).",
     TOPO_LAYER},
    {"topology.nccl-socket-ifname", REPORT_SEV_WARNING,
     "NCCL_SOCKET_IFNAME leaves NCCL no network interface on this machine",
     "Set NCCL_SOCKET_IFNAME to a prefix of an interface that exists (ip link), or unset it.",
     TOPO_LAYER},
    {"topology.nccl-ib-hca", REPORT_SEV_WARNING,
     "NCCL_IB_HCA leaves NCCL no RDMA device on this machine",
     "Set NCCL_IB_HCA to RDMA devices that exist (ls /sys/class/infiniband), or unset it.",
     TOPO_LAYER},
    {"topology.nccl-ib-disabled", REPORT_SEV_INFO,
     "NCCL_IB_DISABLE=1 on a machine with an active InfiniBand/RDMA port: NCCL uses sockets between nodes",
     "Unset NCCL_IB_DISABLE unless the sockets are wanted.", TOPO_LAYER},
    {"topology.nccl-p2p-setting", REPORT_SEV_INFO,
     "An NCCL variable that limits peer-to-peer or shared-memory transport is set",
     "These are workarounds: unset them once the cause (ACS, IOMMU, a driver bug) is fixed.",
     TOPO_LAYER},
    {"topology.nccl-wheels-mixed", REPORT_SEV_WARNING,
     "Two NCCL pip wheels (nvidia-nccl-cu12 and -cu13, or two versions) are installed in one Python environment: "
     "a framework may load the other one's libnccl (undefined symbol nccl... at import)",
     "Keep the one NCCL wheel your framework requires (pip show torch lists it) and pip uninstall the other.",
     TOPO_LAYER | CHECK_F_KIND_FILE},
};

/* Is this a virtual machine? The CPU's hypervisor flag, else DMI's system vendor or product. */
static void topo_vm(struct topo_run *t)
{
    char *ci = NULL;
    if (hostfs_read_file(t->ctx->fs, "/proc/cpuinfo", 32u * 1024 * 1024, &ci, NULL) == 0) {
        const char *fl = strstr(ci, "\nflags");
        if (fl) {
            size_t l = strcspn(fl + 1, "\n");
            char *line = strndup(fl + 1, l);
            t->vm = line && (strstr(line, " hypervisor ") || str_ends_with(line, " hypervisor"));
            free(line);
        }
        free(ci);
    }
    if (t->vm) {
        t->vm_why = "the CPU's hypervisor flag";
        return;
    }
    static const char *const vendors[] = {"QEMU", "VMware", "innotek", "Xen", "Parallels", "Red Hat", NULL};
    char *v = NULL, *prod = NULL;
    hostfs_read_attr(t->ctx->fs, "/sys/class/dmi/id/sys_vendor", &v);
    hostfs_read_attr(t->ctx->fs, "/sys/class/dmi/id/product_name", &prod);
    for (size_t i = 0; v && vendors[i]; i++)
        t->vm = t->vm || str_starts_with(v, vendors[i]);
    t->vm = t->vm || (prod && (strcmp(prod, "Virtual Machine") == 0 || strcmp(prod, "KVM") == 0));
    if (t->vm)
        t->vm_why = "DMI's system vendor or product";
    free(v);
    free(prod);
}

/* Where ADDR sits: its device path, NUMA node and local CPUs. */
static struct topo_dev *topo_add(struct topo_run *t, enum topo_kind kind, const char *addr)
{
    if (t->n >= TOPO_MAX_DEV || strlen(addr) >= TOPO_ADDR_LEN)
        return NULL;
    struct topo_dev *d = &t->devs[t->n];
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    snprintf(d->addr, sizeof(d->addr), "%s", addr);
    char *p = str_printf("/sys/bus/pci/devices/%s", addr), *link = NULL;
    if (p && hostfs_readlink(t->ctx->fs, p, &link) == 0 && topo_parse_devpath(d, link) != 0)
        report_section_add_note(t->sec, "%s: the sysfs link names no PCI path", addr);
    free(link);
    char *q = str_printf("%s/numa_node", p ? p : "");
    char *numa = NULL;
    d->numa = -2;
    if (q && hostfs_read_attr(t->ctx->fs, q, &numa) == 0) {
        char *end;
        long v = strtol(numa, &end, 10);
        if (end != numa && *end == '\0' && v >= -1 && v < 4096)
            d->numa = (int)v;
    }
    free(numa);
    free(q);
    q = str_printf("%s/local_cpulist", p ? p : "");
    if (q && hostfs_read_attr(t->ctx->fs, q, &d->cpulist) != 0)
        d->cpulist = NULL;
    free(q);
    free(p);
    t->n++;
    return d;
}

/* The names in DIR (a comma list, heap), or NULL when none. */
static char *topo_list_dir(const struct hostfs *fs, const char *dir)
{
    DIR *dp = hostfs_opendir(fs, dir);
    if (!dp)
        return NULL;
    char *out = NULL;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *n = out ? str_printf("%s,%s", out, e->d_name) : str_dup(e->d_name);
        free(out);
        out = n;
    }
    closedir(dp);
    return out ? str_sanitize(out) : NULL;
}

/* The GPUs the pci section lists (compute GPUs and accelerators), then every network function. */
static void topo_collect(struct topo_run *t)
{
    const struct result_pci *pci = result_pci_get(t->ctx->report);
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *g = &pci->devs[i];
        const char *addr = g->address;
        if (!addr || !result_pci_dev_computes(g))
            continue;
        struct topo_dev *d = topo_add(t, TOPO_GPU, addr);
        const char *vid = g->vendor_id;
        t->nvidia = t->nvidia || (d && vid && strcasecmp(vid, "10de") == 0);
        if (d)
            snprintf(d->label, sizeof(d->label), "GPU%zu", t->n_gpus++);
    }
    DIR *dp = hostfs_opendir(t->ctx->fs, "/sys/bus/pci/devices");
    struct dirent *e;
    size_t nics = 0, left = 0;
    while (dp && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = str_printf("/sys/bus/pci/devices/%s/class", e->d_name);
        uint64_t cls = 0;
        /* network controllers (0x02: Ethernet 0x0200, InfiniBand 0x0207...), and InfiniBand HCAs of the
         * older serial-bus class 0x0c06 */
        bool net = p && hostfs_read_u64(t->ctx->fs, p, &cls) == 0 && ((cls >> 16) == 0x02 || (cls >> 8) == 0x0c06);
        free(p);
        /* A virtual function (physfn) shares its parent's place: one row per port is enough. */
        p = str_printf("/sys/bus/pci/devices/%s/physfn", e->d_name);
        struct stat st;
        if (net && p && hostfs_stat(t->ctx->fs, p, &st, false) == 0)
            net = false;
        free(p);
        if (!net)
            continue;
        struct topo_dev *d = topo_add(t, TOPO_NIC, e->d_name);
        if (!d) {
            left++;
            continue;
        }
        d->cls = (uint32_t)cls;
        snprintf(d->label, sizeof(d->label), "NIC%zu", nics++);
        p = str_printf("/sys/bus/pci/devices/%s/net", e->d_name);
        d->netdevs = p ? topo_list_dir(t->ctx->fs, p) : NULL;
        free(p);
        p = str_printf("/sys/bus/pci/devices/%s/infiniband", e->d_name);
        d->ibdev = p ? topo_list_dir(t->ctx->fs, p) : NULL;
        free(p);
    }
    if (dp)
        closedir(dp);
    if (left)
        report_section_add_note(t->sec, "%zu more GPUs and NICs than the %d the matrix holds are left out", left,
                                TOPO_MAX_DEV);
}

static json_object *topo_dev_json(const struct topo_dev *d)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "label", json_object_new_string(d->label));
    json_object_object_add(o, "kind", json_object_new_string(d->kind == TOPO_GPU ? "gpu" : "nic"));
    json_object_object_add(o, "address", json_object_new_string(d->addr));
    json_object_object_add(o, "host_bridge", d->root[0] ? json_object_new_string(d->root) : NULL);
    json_object *chain = NULL;
    if (d->depth) {
        chain = json_object_new_array();
        for (size_t i = 0; i + 1 < d->depth; i++)
            json_object_array_add(chain, json_object_new_string(d->chain[i]));
    }
    json_object_object_add(o, "bridges", chain);
    json_object_object_add(o, "numa_node", d->numa >= -1 ? json_object_new_int(d->numa) : NULL);
    json_object_object_add(o, "local_cpulist", jsonstr_or_null(d->cpulist));
    if (d->kind == TOPO_NIC) {
        json_object_object_add(o, "netdevs", jsonstr_or_null(d->netdevs));
        json_object_object_add(o, "rdma_device", jsonstr_or_null(d->ibdev));
    }
    return o;
}

static int topo_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct topo_run *t = calloc(1, sizeof(*t));
    if (!t) {
        ctx->error = str_dup("out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    t->ctx = ctx;
    t->sec = sec;
    if (!sec->data)
        sec->data = json_object_new_object();
    t->d = sec->data;
    topo_vm(t);
    char *conf = NULL;
    if (hostfs_read_file(ctx->fs, "/etc/nccl.conf", 65536, &conf, NULL) == 0)
        t->nccl_conf = topo_nccl_conf_parse(conf);
    free(conf);
    topo_collect(t);
    json_object_object_add(t->d, "virtual_machine", json_object_new_boolean(t->vm));
    json_object *devs = json_object_new_array();
    for (size_t i = 0; i < t->n; i++)
        json_object_array_add(devs, topo_dev_json(&t->devs[i]));
    json_object_object_add(t->d, "devices", devs);
    topo_iommu(t);
    topo_pairs(t);
    topo_rdma(t);
    topo_nccl(t);
    size_t nics = t->n - t->n_gpus;
    size_t rdma = json_object_array_length(jsonget(jsonget(t->d, "rdma"), "devices"));
    /* Nothing connects on a machine of one GPU and no RDMA device: no Summary line there (the no-GPU and
     * one-GPU screens stay short); findings and the data still say what was seen. */
    if (t->n_gpus >= 2 || rdma > 0)
        report_section_add_line(sec, REPORT_MARK_INFO, "Topology", "%zu GPU%s, %zu NIC%s, %zu RDMA device%s%s",
                                t->n_gpus, t->n_gpus == 1 ? "" : "s", nics, nics == 1 ? "" : "s", rdma,
                                rdma == 1 ? "" : "s", t->vm ? " (in a virtual machine)" : "");
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    for (size_t i = 0; i < t->n; i++) {
        free(t->devs[i].cpulist);
        free(t->devs[i].netdevs);
        free(t->devs[i].ibdev);
    }
    json_object_put(t->nccl_conf);
    free(t);
    return PROBE_DONE;
}

static const char *const topo_deps[] = {"pci", NULL};

const struct probe probe_topology = {
    .name = "topology",
    .stack = PROBE_STACK_TOPOLOGY,
    .title = "how the GPUs and NICs connect: PCIe paths, ACS, IOMMU, RDMA ports,\n"
             "NCCL's variables and libraries",
    .deps = topo_deps,
    .checks = topo_checks,
    .n_checks = sizeof(topo_checks) / sizeof(topo_checks[0]),
    .requires = topo_requires,
    .run = topo_run,
    .print_text = topo_print_text,
    .node_labels = topo_node_labels,
};
