/* topology_path.c: pure parsers of the topology probe: sysfs device paths, path types, ACS, NCCL's filters. */
#include <ctype.h>
#include <string.h>

#include "topology_internal.h"

const char *const topo_path_names[] = {"PIX", "PXB", "PHB", "NODE", "SYS", "unknown"};
const char *const topo_acs_bits[7] = {"SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl",
                                      "DirectTrans"};

/* "DDDD:BB:DD.F" (sysfs writes lower-case hex; upper case accepted): a domain of 4 hex digits, or up to 8
 * behind an Intel VMD controller ("10000:e1:00.0"). */
static bool topo_is_bdf(const char *s, size_t len)
{
    static const char tail[] = ":xx:xx.x";
    size_t dl = len >= sizeof(tail) - 1 ? len - (sizeof(tail) - 1) : 0;
    if (dl < 4 || dl > 8)
        return false;
    for (size_t i = 0; i < len; i++) {
        char want = i < dl ? 'x' : tail[i - dl];
        if (want == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != want)
            return false;
    }
    return true;
}

int topo_parse_devpath(struct topo_dev *d, const char *link)
{
    d->depth = 0;
    d->root[0] = '\0';
    const char *p = strstr(link, "devices/pci");
    if (!p)
        return -1;
    p += strlen("devices/");
    size_t rl = strcspn(p, "/");
    if (rl >= TOPO_ADDR_LEN)
        return -1;
    memcpy(d->root, p, rl);
    d->root[rl] = '\0';
    p += rl;
    /* Each later component that is a PCI address is a function on the way down; others (the bus
     * directory of a VMD domain, "pci10000:e0") are passed over. */
    while (*p == '/') {
        p++;
        size_t l = strcspn(p, "/");
        if (topo_is_bdf(p, l)) {
            if (d->depth >= TOPO_MAX_DEPTH || l >= TOPO_ADDR_LEN)
                return -1;
            memcpy(d->chain[d->depth], p, l);
            d->chain[d->depth][l] = '\0';
            d->depth++;
        }
        p += l;
    }
    return d->depth > 0 ? 0 : -1;
}

/* The switch a bridge at index I of a chain belongs to, as the index of the switch's upstream port: a
 * chain goes root port (0), then upstream port and downstream port of each switch in turn (1 2, 3 4...),
 * so a downstream port (even I) and the upstream port above it (I - 1) are one switch. */
static size_t topo_switch_of(size_t i)
{
    return i % 2 ? i : i - 1;
}

static void topo_add_bridge(char (*bridges)[TOPO_ADDR_LEN], size_t max, size_t *n, const char *addr)
{
    if (*n < max)
        memcpy(bridges[*n], addr, TOPO_ADDR_LEN);
    (*n)++;
}

enum topo_path topo_pair_path(const struct topo_dev *a, const struct topo_dev *b, char (*bridges)[TOPO_ADDR_LEN],
                              size_t max, size_t *n)
{
    *n = 0;
    if (a->depth == 0 || b->depth == 0)
        return TOPO_PATH_UNKNOWN;
    if (strcmp(a->root, b->root) != 0) {
        /* Through both host bridges: every bridge above each device is crossed. */
        for (size_t i = 0; i + 1 < a->depth; i++)
            topo_add_bridge(bridges, max, n, a->chain[i]);
        for (size_t i = 0; i + 1 < b->depth; i++)
            topo_add_bridge(bridges, max, n, b->chain[i]);
        /* numa_node -1 is the kernel's "no NUMA": one node for all. Unknown (-2) is not a difference. */
        if (a->numa >= 0 && b->numa >= 0 && a->numa != b->numa)
            return TOPO_PATH_SYS;
        return a->numa == -2 || b->numa == -2 ? TOPO_PATH_UNKNOWN : TOPO_PATH_NODE;
    }
    /* The deepest bridge above both (C = common - 1), not counting the devices themselves. */
    size_t common = 0;
    while (common + 1 < a->depth && common + 1 < b->depth && strcmp(a->chain[common], b->chain[common]) == 0)
        common++;
    for (size_t i = a->depth - 1; i-- > common;)
        topo_add_bridge(bridges, max, n, a->chain[i]);
    if (common == 0) {
        for (size_t i = 0; i + 1 < b->depth; i++)
            topo_add_bridge(bridges, max, n, b->chain[i]);
        return TOPO_PATH_PHB; /* no bridge above both: through the root complex */
    }
    topo_add_bridge(bridges, max, n, a->chain[common - 1]);
    for (size_t i = common; i + 1 < b->depth; i++)
        topo_add_bridge(bridges, max, n, b->chain[i]);
    /* Switches crossed: the distinct switches of the bridges from C down to each device. A common
     * root port (index 0) is one bridge of its own. */
    size_t c = common - 1, switches = 0;
    size_t top = c == 0 ? 0 : topo_switch_of(c);
    switches = 1;
    for (size_t i = c + 1; i + 1 < a->depth; i++)
        if (topo_switch_of(i) != top && i % 2)
            switches++;
    for (size_t i = c + 1; i + 1 < b->depth; i++)
        if (topo_switch_of(i) != top && i % 2)
            switches++;
    return switches <= 1 ? TOPO_PATH_PIX : TOPO_PATH_PXB;
}

static uint32_t topo_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* PCIe base specification, 7.6 (extended capabilities): from offset 0x100 a chain of 32-bit headers,
 * the ID in bits 0-15, the version in 16-19, the next header's offset in 20-31 (0 ends it; the low two
 * bits are reserved). ACS (7.7.8): Capability register at +4, Control at +6, 16 bits each. */
enum topo_acs_status topo_acs_find(const uint8_t *cfg, size_t len, uint16_t *cap, uint16_t *ctl, uint16_t *off)
{
    if (!cfg || len < 0x104)
        return TOPO_ACS_NO_EXTENDED;
    size_t at = 0x100;
    /* The chain has at most (4096 - 256) / 4 headers: more is a loop. */
    for (int hops = 0; hops < 960; hops++) {
        if (at + 4 > len || at < 0x100)
            return TOPO_ACS_BROKEN;
        uint32_t h = topo_le32(cfg + at);
        if (h == 0 || h == 0xffffffffu)
            return TOPO_ACS_ABSENT; /* an empty list, or a function that does not answer */
        if ((h & 0xffffu) == TOPO_ACS_CAP_ID) {
            if (at + 8 > len)
                return TOPO_ACS_BROKEN;
            *cap = (uint16_t)(cfg[at + 4] | cfg[at + 5] << 8);
            *ctl = (uint16_t)(cfg[at + 6] | cfg[at + 7] << 8);
            *off = (uint16_t)at;
            return TOPO_ACS_FOUND;
        }
        size_t next = (h >> 20) & 0xffcu;
        if (next == 0)
            return TOPO_ACS_ABSENT;
        at = next;
    }
    return TOPO_ACS_BROKEN;
}

/* NCCL's documentation (user guide, "Environment Variables", NCCL_SOCKET_IFNAME and NCCL_IB_HCA): a
 * list of prefixes separated by ','; a leading '^' excludes what the list matches instead of keeping
 * it; a leading '=' (after any '^') matches whole names; an HCA may carry ":PORT", which names a port
 * of it and is not part of its name. */
bool topo_nccl_match(const char *spec, const char *name)
{
    bool exclude = false, exact = false;
    if (*spec == '^') {
        exclude = true;
        spec++;
    }
    if (*spec == '=') {
        exact = true;
        spec++;
    }
    bool hit = false;
    while (*spec && !hit) {
        size_t l = strcspn(spec, ",");
        size_t nl = strcspn(spec, ",:");
        if (nl > l)
            nl = l;
        if (nl > 0)
            hit = exact ? strlen(name) == nl && strncmp(spec, name, nl) == 0 : strncmp(spec, name, nl) == 0;
        spec += l;
        if (*spec == ',')
            spec++;
    }
    return exclude ? !hit : hit;
}
