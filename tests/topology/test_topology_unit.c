/* test_topology_unit.c: unit tests of the topology probe's parsers: device paths, path types, the ACS walk, NCCL's filters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "topology_internal.h"

static struct topo_dev dev(const char *link, int numa)
{
    struct topo_dev d;
    memset(&d, 0, sizeof(d));
    d.numa = numa;
    assert_int_equal(topo_parse_devpath(&d, link), 0);
    return d;
}

static enum topo_path path(const char *a, int na, const char *b, int nb, size_t *n)
{
    struct topo_dev x = dev(a, na), y = dev(b, nb);
    char br[2 * TOPO_MAX_DEPTH][TOPO_ADDR_LEN];
    return topo_pair_path(&x, &y, br, 2 * TOPO_MAX_DEPTH, n);
}

static void test_device_paths(void **state)
{
    (void)state;
    struct topo_dev d = dev("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0);
    assert_string_equal(d.root, "pci0000:00");
    assert_int_equal(d.depth, 2);
    assert_string_equal(d.chain[1], "0000:01:00.0");
    /* behind an Intel VMD controller: its domain's bus directory is passed over, its 5-digit domains kept */
    d = dev("../../../devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0", 0);
    assert_int_equal(d.depth, 3);
    assert_string_equal(d.chain[0], "0000:00:0e.0");
    assert_string_equal(d.chain[2], "10000:e1:00.0");
    assert_string_equal(d.root, "pci0000:00");
    struct topo_dev bad;
    memset(&bad, 0, sizeof(bad));
    assert_int_equal(topo_parse_devpath(&bad, "../../../devices/platform/foo"), -1);
    assert_int_equal(topo_parse_devpath(&bad, "../../../devices/pci0000:00"), -1);
    char deep[1024] = "/sys/devices/pci0000:00";
    for (int i = 0; i < TOPO_MAX_DEPTH + 1; i++)
        strcat(deep, "/0000:00:01.0");
    assert_int_equal(topo_parse_devpath(&bad, deep), -1); /* deeper than the chain holds: unknown, not cut */
}

static void test_path_types(void **state)
{
    (void)state;
    size_t n;
    const char *sw = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/";
    char a[128], b[128];
    snprintf(a, sizeof(a), "%s0000:02:00.0/0000:03:00.0", sw);
    snprintf(b, sizeof(b), "%s0000:02:01.0/0000:04:00.0", sw);
    assert_int_equal(path(a, 0, b, 0, &n), TOPO_PATH_PIX);
    assert_int_equal(n, 3);
    /* two functions of one device below a root port */
    assert_int_equal(path("/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0, "/devices/pci0000:00/0000:00:01.0/0000:01:00.1", 0, &n),
                     TOPO_PATH_PIX);
    assert_int_equal(n, 1);
    /* a second switch level below one side */
    snprintf(b, sizeof(b), "%s0000:02:01.0/0000:04:00.0/0000:05:00.0/0000:06:00.0", sw);
    assert_int_equal(path(a, 0, b, 0, &n), TOPO_PATH_PXB);
    /* two root ports, one root complex */
    assert_int_equal(path("/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0, "/devices/pci0000:00/0000:00:02.0/0000:02:00.0", 0, &n),
                     TOPO_PATH_PHB);
    assert_int_equal(n, 2);
    /* on the root bus itself (a VM's flat bus) */
    assert_int_equal(path("/devices/pci0000:00/0000:00:05.0", -1, "/devices/pci0000:00/0000:00:06.0", -1, &n), TOPO_PATH_PHB);
    assert_int_equal(n, 0);
    /* two host bridges: one node, two nodes, no NUMA (-1), unknown (-2) */
    const char *h0 = "/devices/pci0000:00/0000:00:01.0/0000:01:00.0", *h1 = "/devices/pci0000:80/0000:80:01.0/0000:81:00.0";
    assert_int_equal(path(h0, 0, h1, 0, &n), TOPO_PATH_NODE);
    assert_int_equal(path(h0, 0, h1, 1, &n), TOPO_PATH_SYS);
    assert_int_equal(path(h0, -1, h1, -1, &n), TOPO_PATH_NODE);
    assert_int_equal(path(h0, -2, h1, 1, &n), TOPO_PATH_UNKNOWN);
}

/* A config space with the extended chain AER (0x100) -> ACS at AT, or a chain given as raw headers. */
static void put32(uint8_t *c, size_t at, uint32_t v)
{
    c[at] = v & 0xff;
    c[at + 1] = (v >> 8) & 0xff;
    c[at + 2] = (v >> 16) & 0xff;
    c[at + 3] = v >> 24;
}

static void test_acs_walk(void **state)
{
    (void)state;
    static uint8_t c[4096];
    uint16_t cap, ctl, off;
    memset(c, 0, sizeof(c));
    put32(c, 0x100, 0x0001u | 1u << 16 | 0x148u << 20);
    put32(c, 0x148, 0x000du | 1u << 16);
    put32(c, 0x14c, 0x005fu | 0x001du << 16);
    assert_int_equal(topo_acs_find(c, sizeof(c), &cap, &ctl, &off), TOPO_ACS_FOUND);
    assert_int_equal(off, 0x148);
    assert_int_equal(cap, 0x005f);
    assert_int_equal(ctl, 0x001d);
    assert_int_equal(topo_acs_find(c, 64, &cap, &ctl, &off), TOPO_ACS_NO_EXTENDED);  /* a non-root read */
    assert_int_equal(topo_acs_find(c, 256, &cap, &ctl, &off), TOPO_ACS_NO_EXTENDED); /* conventional PCI */
    assert_int_equal(topo_acs_find(c, 0x14a, &cap, &ctl, &off), TOPO_ACS_BROKEN);    /* ACS cut short */
    put32(c, 0x100, 0x0001u | 1u << 16 | 0x100u << 20);                              /* points at itself */
    assert_int_equal(topo_acs_find(c, sizeof(c), &cap, &ctl, &off), TOPO_ACS_BROKEN);
    put32(c, 0x100, 0x0001u | 1u << 16 | 0x040u << 20);                              /* back into the header */
    assert_int_equal(topo_acs_find(c, sizeof(c), &cap, &ctl, &off), TOPO_ACS_BROKEN);
    put32(c, 0x100, 0x0001u | 1u << 16);                                              /* AER alone */
    assert_int_equal(topo_acs_find(c, sizeof(c), &cap, &ctl, &off), TOPO_ACS_ABSENT);
    put32(c, 0x100, 0xffffffffu);                                                     /* a dead function */
    assert_int_equal(topo_acs_find(c, sizeof(c), &cap, &ctl, &off), TOPO_ACS_ABSENT);
}

static void test_nccl_filters(void **state)
{
    (void)state;
    /* NCCL's documented examples (user guide, NCCL_SOCKET_IFNAME) */
    assert_true(topo_nccl_match("eth", "eth1"));
    assert_false(topo_nccl_match("eth", "ib0"));
    assert_true(topo_nccl_match("=eth0", "eth0"));
    assert_false(topo_nccl_match("=eth0", "eth01"));
    assert_true(topo_nccl_match("=eth0,eth1", "eth1"));
    assert_false(topo_nccl_match("=eth0,eth1", "eth10"));
    assert_false(topo_nccl_match("^docker", "docker0"));
    assert_true(topo_nccl_match("^docker", "eth0"));
    assert_false(topo_nccl_match("^=docker0", "docker0"));
    assert_true(topo_nccl_match("^=docker0", "docker01"));
    /* NCCL_IB_HCA: ":PORT" is not part of the name */
    assert_true(topo_nccl_match("mlx5_0:1,mlx5_1:1", "mlx5_1"));
    assert_true(topo_nccl_match("=mlx5_0:1", "mlx5_0"));
    assert_false(topo_nccl_match("=mlx5_0:1", "mlx5_01"));
    assert_false(topo_nccl_match("", "eth0"));
    assert_false(topo_nccl_match(",,", "eth0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_paths), cmocka_unit_test(test_path_types), cmocka_unit_test(test_acs_walk),
        cmocka_unit_test(test_nccl_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
