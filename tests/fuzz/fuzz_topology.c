/* fuzz_topology.c: libFuzzer target for the topology probe's parsers: a bridge's configuration space (the extended
 * capability walk to ACS), sysfs device paths and the path type between two, NCCL's interface filters
 * (probes/topology/topology_path.c). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology_internal.h"

/* The input as configuration space: an ACS found is inside it, at a header whose ID is 0x000D. */
static void fuzz_acs(const uint8_t *data, size_t size)
{
    uint16_t cap = 0, ctl = 0, off = 0;
    enum topo_acs_status st = topo_acs_find(data, size, &cap, &ctl, &off);
    assert(st >= TOPO_ACS_FOUND && st <= TOPO_ACS_BROKEN);
    if (st == TOPO_ACS_NO_EXTENDED)
        assert(size < 0x104);
    if (st == TOPO_ACS_FOUND) {
        assert(off >= 0x100 && off % 4 == 0 && (size_t)off + 8 <= size);
        assert((data[off] | data[off + 1] << 8) == TOPO_ACS_CAP_ID);
        assert(cap == (data[off + 4] | data[off + 5] << 8) && ctl == (data[off + 6] | data[off + 7] << 8));
    }
}

/* The input as two lines of sysfs link text, then as an NCCL filter and a name. */
static void fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return;
    memcpy(s, data, size);
    s[size] = '\0';
    char *second = strchr(s, '\n');
    if (second)
        *second++ = '\0';
    struct topo_dev a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.numa = b.numa = -1;
    int ra = topo_parse_devpath(&a, s), rb = topo_parse_devpath(&b, second ? second : "");
    assert(a.depth <= TOPO_MAX_DEPTH && b.depth <= TOPO_MAX_DEPTH);
    for (size_t i = 0; i < a.depth; i++)
        assert(strlen(a.chain[i]) >= 12 && strlen(a.chain[i]) < TOPO_ADDR_LEN && strstr(s, a.chain[i]));
    assert(strlen(a.root) < TOPO_ADDR_LEN);
    if (ra == 0 && rb == 0) {
        char br[2 * TOPO_MAX_DEPTH][TOPO_ADDR_LEN];
        size_t n = 0;
        enum topo_path p = topo_pair_path(&a, &b, br, 2 * TOPO_MAX_DEPTH, &n);
        assert(p >= TOPO_PATH_PIX && p <= TOPO_PATH_UNKNOWN);
        assert(n <= a.depth + b.depth); /* never more bridges than the two chains hold */
        assert(p != TOPO_PATH_UNKNOWN); /* both paths known, both NUMA nodes "none" */
    }
    /* "^" inverts a filter that does not start with one. */
    const char *name = second ? second : "eth0";
    if (s[0] != '^' && strlen(s) < 4096) {
        char inv[4100];
        inv[0] = '^';
        strcpy(inv + 1, s);
        assert(topo_nccl_match(inv, name) == !topo_nccl_match(s, name));
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_acs(data, size);
    fuzz_text(data, size);
    return 0;
}
