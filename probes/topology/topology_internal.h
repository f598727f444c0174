/* topology_internal.h: the topology probe's parts: PCIe paths between GPUs and NICs, ACS, IOMMU, RDMA, NCCL. */
#ifndef GPUCHECKUP_TOPOLOGY_INTERNAL_H
#define GPUCHECKUP_TOPOLOGY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe.h"

#define TOPO_MAX_DEV 64    /* GPUs and NICs in the matrix: more are counted and left out (a note) */
#define TOPO_MAX_DEPTH 16  /* PCI functions from the root bus down to a device */
#define TOPO_ADDR_LEN 16   /* "0000:01:00.0" and its NUL */

enum topo_kind { TOPO_GPU, TOPO_NIC };

/* A GPU or a NIC: where it sits in the PCI hierarchy (from its sysfs device path). */
struct topo_dev {
    enum topo_kind kind;
    char label[12];                           /* "GPU0", "NIC1": the matrix's row and column */
    char addr[TOPO_ADDR_LEN];
    char root[TOPO_ADDR_LEN];                 /* its host bridge's bus: "pci0000:00" ("" when unknown) */
    char chain[TOPO_MAX_DEPTH][TOPO_ADDR_LEN]; /* the functions from the root bus down to itself (last) */
    size_t depth;                             /* entries of chain (0: its path is unknown) */
    int numa;                                 /* numa_node; -1 as the kernel says it (no NUMA), -2 unknown */
    char *cpulist;                            /* local_cpulist, or NULL */
    uint32_t cls;                             /* the PCI class (24 bits) */
    char *netdevs;                            /* a NIC's network interfaces, comma-separated, or NULL */
    char *ibdev;                              /* a NIC's RDMA device ("mlx5_0"), or NULL */
};

/* nvidia-smi topo's words for the path between two devices, nearest first. */
enum topo_path { TOPO_PATH_PIX, TOPO_PATH_PXB, TOPO_PATH_PHB, TOPO_PATH_NODE, TOPO_PATH_SYS, TOPO_PATH_UNKNOWN };
extern const char *const topo_path_names[];

/* The path between A and B; the bridges it crosses into BRIDGES (at most MAX), their count in *N. */
enum topo_path topo_pair_path(const struct topo_dev *a, const struct topo_dev *b, char (*bridges)[TOPO_ADDR_LEN],
                              size_t max, size_t *n);
/* Fill D's root, chain and depth from the link text of /sys/bus/pci/devices/ADDR
 * ("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"). 0, or -1 when it names no PCI path. */
int topo_parse_devpath(struct topo_dev *d, const char *link);

/* The ACS extended capability of a configuration space (bytes CFG, LEN of them). */
#define TOPO_ACS_CAP_ID 0x000du
enum topo_acs_status {
    TOPO_ACS_FOUND,       /* *CAP, *CTL and *OFF are set */
    TOPO_ACS_ABSENT,      /* the extended capability list has no ACS */
    TOPO_ACS_NO_EXTENDED, /* fewer than 0x104 bytes: no extended space (or a non-root read's 64 bytes) */
    TOPO_ACS_BROKEN,      /* a chain that loops or points outside the space */
};
enum topo_acs_status topo_acs_find(const uint8_t *cfg, size_t len, uint16_t *cap, uint16_t *ctl, uint16_t *off);
/* ACS Control's bits, low to high, as lspci names them. */
extern const char *const topo_acs_bits[7];
#define TOPO_ACS_REQ_REDIR (1u << 2)
#define TOPO_ACS_CMPLT_REDIR (1u << 3)

/* Does NAME pass NCCL's interface filter SPEC (NCCL_SOCKET_IFNAME, NCCL_IB_HCA): a comma list of
 * prefixes, "^" first to exclude, "=" first for exact names, ":PORT" after an HCA's name ignored? */
bool topo_nccl_match(const char *spec, const char *name);

/* One run's state. */
struct topo_run {
    struct probe_ctx *ctx;
    struct report_section *sec;
    json_object *d;          /* the section's data */
    struct topo_dev devs[TOPO_MAX_DEV];
    size_t n, n_gpus;
    bool vm;                 /* a virtual machine (the cpuinfo hypervisor flag, DMI's vendor) */
    const char *vm_why;
    bool iommu_translated;   /* some GPU's IOMMU group translates (DMA, DMA-FQ) */
    bool ib_active;          /* some RDMA port is ACTIVE */
    bool nvidia;             /* some GPU is NVIDIA's */
    json_object *nccl_conf;  /* /etc/nccl.conf's variables (an object, owned), or NULL */
};

/* The IOMMU: units, kernel parameters, each GPU's group and type ("iommu" in the data). */
void topo_iommu(struct topo_run *t);
/* Every pair's path and the ACS of the bridges between ("pairs", "acs"); the ACS finding. */
void topo_pairs(struct topo_run *t);
/* RDMA devices and ports ("rdma"), GPUDirect RDMA, NCCL's variables ("nccl"). */
void topo_rdma(struct topo_run *t);
void topo_nccl(struct topo_run *t);
/* The NCCL and RCCL library files found and their versions, from files only, into O ("libraries"; null on a
 * machine of fewer than two GPUs and no RDMA device, where it is not looked for). After topo_rdma. */
void topo_nccl_libraries(struct topo_run *t, json_object *o);
/* The variables of an nccl.conf text (KEY=VALUE lines, '#' comments) as a JSON object. */
json_object *topo_nccl_conf_parse(const char *text);
/* The value of NCCL variable NAME for this run (heap), or NULL: see topo_nccl. */
char *topo_nccl_var(struct topo_run *t, const char *name);

void topo_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);
void topo_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);
extern const struct probe_require topo_requires[];

#endif
