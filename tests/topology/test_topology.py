"""End-to-end tests of the topology probe on fake multi-GPU sysfs trees: PCIe switches with ACS, two root
complexes, the IOMMU, InfiniBand ports, NCCL's variables. Configuration spaces are built here from the PCIe
specification's layouts, and lspci (when installed) decodes the ACS bytes the same way."""
import os
import re
import shutil
import struct
import subprocess
import sys

import gctest

NVIDIA_H100 = (0x10de, 0x2330, 0x030200)
MELLANOX_CX7 = (0x15b3, 0x1021, 0x020700)
PORT_ROOT, PORT_UP, PORT_DOWN = 4, 5, 6  # PCIe capability, Device/Port Type


def endpoint_config(vendor, device, cls, size=256):
    """A type-0 header (PCI 3.0, 6.1): IDs, class; SIZE bytes (a non-root read gives 64)."""
    c = bytearray(size)
    struct.pack_into("<HH", c, 0, vendor, device)
    struct.pack_into("<I", c, 0x08, cls << 8)
    return bytes(c)


def bridge_config(port_type, acs=None, size=4096):
    """A type-1 header (PCI-to-PCI bridge, class 0x0604) with a PCIe capability at 0x40 (capability list at
    0x34), and in extended space (0x100) an AER capability whose next pointer leads to ACS at 0x148 when
    ACS=(capability, control) is given. SIZE 64 is what a non-root read returns."""
    c = bytearray(4096)
    struct.pack_into("<HH", c, 0, 0x10b5, 0xc010)
    struct.pack_into("<H", c, 0x06, 0x10)  # status: capability list
    struct.pack_into("<I", c, 0x08, 0x060400 << 8)
    c[0x0e] = 0x01  # header type 1
    c[0x34] = 0x40
    struct.pack_into("<BBH", c, 0x40, 0x10, 0x00, 0x2 | port_type << 4)
    # AER (ID 1, version 1), then ACS (ID 0x000d, version 1) at 0x148, or the end of the list.
    struct.pack_into("<I", c, 0x100, 0x0001 | 1 << 16 | (0x148 if acs else 0) << 20)
    if acs:
        struct.pack_into("<IHH", c, 0x148, 0x000d | 1 << 16, acs[0], acs[1])
    return bytes(c[:size])


def lspci_dump(addr, config):
    """The config space as `lspci -xxxx` prints it (what `lspci -F` reads back)."""
    lines = ["%s PCI bridge: fake" % addr]
    for i in range(0, len(config), 16):
        lines.append("%03x: %s" % (i, " ".join("%02x" % b for b in config[i:i + 16])))
    return "\n".join(lines) + "\n"


class TopoTree:
    """A fake tree: PCI functions nested as the kernel nests them under /sys/devices/pciDDDD:BB/."""

    def __init__(self, tree, vm=False):
        self.t = tree
        self.root = tree.root
        tree.mkdir("/sys/bus/pci/devices")
        tree.write("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 avx%s\n\n" % (" hypervisor" if vm else ""))

    def function(self, chain, cls, vendor=0x8086, device=0x1234, config=None, numa=0, cpus="0-15", group=None,
                 group_type=None):
        """Add the last address of CHAIN (root bus first: ["pci0000:00", "0000:00:01.0", ...])."""
        rel = "/".join(chain)
        dev = "/sys/devices/" + rel
        for k, v in {"vendor": "0x%04x" % vendor, "device": "0x%04x" % device, "class": "0x%06x" % cls,
                     "numa_node": "%d" % numa, "local_cpulist": cpus}.items():
            self.t.write(dev + "/" + k, v + "\n")
        self.t.write(dev + "/config", config if config is not None else endpoint_config(vendor, device, cls))
        self.t.symlink("../../../devices/" + rel, "/sys/bus/pci/devices/" + chain[-1])
        if group is not None:
            self.t.mkdir("/sys/kernel/iommu_groups/%d/devices" % group)
            self.t.symlink("../" * (rel.count("/") + 2) + "kernel/iommu_groups/%d" % group, dev + "/iommu_group")
            if group_type:
                self.t.write("/sys/kernel/iommu_groups/%d/type" % group, group_type + "\n")
        return dev

    def bridge(self, chain, port_type, acs=None, size=4096, numa=0):
        return self.function(chain, 0x060400, 0x10b5, 0xc010, bridge_config(port_type, acs, size), numa)

    def gpu(self, chain, numa=0, **kw):
        v, d, c = NVIDIA_H100
        return self.function(chain, c, v, d, numa=numa, **kw)

    def switch_with_gpus(self, acs=(0x005f, 0x001d), size=4096):
        """Root port 00:01.0, a switch (upstream 01:00.0, downstream 02:00.0 and 02:01.0), a GPU behind each
        downstream port; ACS with redirection on the downstream ports."""
        r = ["pci0000:00", "0000:00:01.0"]
        self.bridge(r, PORT_ROOT, (0x005f, 0x0001), size)
        self.bridge(r + ["0000:01:00.0"], PORT_UP, None, size)
        for i, dp in enumerate(("0000:02:00.0", "0000:02:01.0")):
            self.bridge(r + ["0000:01:00.0", dp], PORT_DOWN, acs, size)
            self.gpu(r + ["0000:01:00.0", dp, "0000:0%d:00.0" % (3 + i)])

    def ib_port(self, dev, port, state, phys, link_layer="InfiniBand", addr=None):
        base = "/sys/class/infiniband/%s" % dev
        for k, v in {"state": state, "phys_state": phys, "rate": "400 Gb/sec (4X NDR)", "link_layer": link_layer}.items():
            self.t.write("%s/ports/%d/%s" % (base, port, k), v + "\n")
        if addr and not os.path.lexists(self.t.path(base + "/device")):
            self.t.symlink("../../../bus/pci/devices/" + addr, base + "/device")

    def netdev(self, name):
        self.t.mkdir("/sys/class/net/" + name)


class TopologyTests(gctest.TestCase):
    def tree(self, vm=False):
        return TopoTree(self.make_tree(), vm)

    def topo(self, t, *extra, env=None, expect_rc=None):
        r = self.run_json("topology", "--root", t.root, *extra, env=env, expect_rc=expect_rc)
        self.assertEqual(r.json["topology"]["status"], "ok", repr(r))
        self.assertIn(r.rc, (0, 1), repr(r))  # the fake GPUs have no driver: pci's errors, never a usage error
        return r

    def pair(self, r, a, b):
        for p in r.json["topology"]["pairs"]:
            if (p["a"], p["b"]) in ((a, b), (b, a)):
                return p
        self.fail("no pair %s %s" % (a, b))

    def ids(self, r):
        return sorted(f["id"] for f in r.json["findings"] if f["id"].startswith("topology."))

    # ---- a PCIe switch with ACS redirection -------------------------------------------------

    def test_switch_with_acs_redirection_is_named_with_the_fix(self):
        t = self.tree()
        t.switch_with_gpus()
        r = self.topo(t)
        d = r.json["topology"]
        self.assertEqual([x["label"] for x in d["devices"]], ["GPU0", "GPU1"])
        self.assertEqual(d["devices"][0]["bridges"], ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"])
        p = self.pair(r, "GPU0", "GPU1")
        self.assertEqual(p["path"], "PIX")
        self.assertEqual(p["bridges"], ["0000:02:00.0", "0000:01:00.0", "0000:02:01.0"])
        acs = {a["bridge"]: a for a in d["acs"]}
        self.assertEqual(acs["0000:01:00.0"]["status"], "absent")
        down = acs["0000:02:00.0"]
        self.assertEqual((down["status"], down["offset"], down["capability"], down["control"]),
                         ("enabled", "0x0148", "0x005f", "0x001d"))
        self.assertEqual(down["control_bits"], ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"])
        self.assertIs(down["redirect"], True)
        self.assertIs(down["in_switch"], True)
        self.assertNotIn("0000:00:01.0", acs)  # the root port is above both: not between them
        self.assertEqual(self.ids(r), ["topology.acs-redirect", "topology.acs-redirect"])
        f = {x["subject"]: x for x in r.findings("topology.acs-redirect")}
        self.assertEqual(sorted(f), ["0000:02:00.0", "0000:02:01.0"])
        self.assertEqual(f["0000:02:00.0"]["severity"], "warning")
        self.assertIsNone(f["0000:02:00.0"]["caused_by"])  # pci's no-driver errors on the GPUs explain nothing here
        self.assertIn("root complex", f["0000:02:00.0"]["message"])
        self.assertIn("GPU0 and GPU1", f["0000:02:00.0"]["message"])
        self.assertIn("setpci -s 0000:02:01.0 ECAP_ACS+0x6.w=0000", f["0000:02:01.0"]["hint"])
        text = gctest.run("topology", "--root", t.root).stdout
        self.assertRegex(text, r"GPU0 +X +PIX +0-15 +0\n")
        self.assertRegex(text, r"ACS 0000:02:00.0 +ACSCtl SrcValid\+ ReqRedir\+ CmpltRedir\+ UpstreamFwd\+: redirects")
        self.assertIn("setpci -s 0000:02:00.0 ECAP_ACS+0x6.w=0000", text)

    def test_lspci_decodes_the_acs_bytes_the_same_way(self):
        lspci = shutil.which("lspci")
        if not lspci:
            self.skipTest("lspci is not installed")  # the decoding itself is asserted in the test above
        t = self.tree()
        for ctl in (0x001d, 0x0000, 0x007f, 0x0011):
            cfg = bridge_config(PORT_DOWN, (0x005f, ctl))
            dump = t.t.path("/dump-%04x.txt" % ctl)
            with open(dump, "w") as f:
                f.write(lspci_dump("0000:02:00.0", cfg))
            out = subprocess.run([lspci, "-F", dump, "-vvv"], capture_output=True, text=True, check=True).stdout
            m = re.search(r"ACSCtl:\s+(.*)", out)
            self.assertIsNotNone(m, out)
            on = [w[:-1] for w in m.group(1).split() if w.endswith("+")]
            tt = self.tree()
            tt.switch_with_gpus(acs=(0x005f, ctl))
            r = self.topo(tt)
            ours = {a["bridge"]: a for a in r.json["topology"]["acs"]}["0000:02:00.0"]["control_bits"]
            self.assertEqual(ours, on, "ACSCtl 0x%04x" % ctl)
            self.assertIn("[148 v1] Access Control Services", out)

    def test_switch_without_redirection_is_quiet(self):
        t = self.tree()
        t.switch_with_gpus(acs=(0x005f, 0x0001))
        r = self.topo(t)
        self.assertEqual(self.ids(r), [])
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "PIX")

    def test_redirection_in_a_vm_is_information(self):
        t = self.tree(vm=True)
        t.switch_with_gpus()
        r = self.topo(t)
        self.assertIs(r.json["topology"]["virtual_machine"], True)
        self.assertEqual(self.ids(r), ["topology.acs-redirect-vm", "topology.acs-redirect-vm"])
        self.assertEqual({f["severity"] for f in r.findings("topology.acs-redirect-vm")}, {"info"})

    def test_non_root_copy_says_not_checked(self):
        t = self.tree()
        t.switch_with_gpus(size=64)
        r = self.topo(t)
        self.assertEqual(self.ids(r), ["topology.acs-unchecked"])
        self.assertEqual({a["status"] for a in r.json["topology"]["acs"]}, {"not-checked"})
        self.assertIn("64 bytes", r.findings("topology.acs-unchecked")[0]["message"])

    def test_redirection_at_root_ports_of_a_phb_pair_is_no_finding(self):
        # Linux turns redirection on at root ports when an IOMMU is on; GPUs on two root ports talk through
        # the root complex whatever ACS says, so that is shown, not judged.
        t = self.tree()
        for i in range(2):
            rp = ["pci0000:00", "0000:00:0%d.0" % (1 + i)]
            t.bridge(rp, PORT_ROOT, (0x001f, 0x001d))
            t.gpu(rp + ["0000:0%d:00.0" % (1 + i)])
        r = self.topo(t)
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "PHB")
        acs = r.json["topology"]["acs"]
        self.assertEqual([(a["bridge"], a["redirect"], a["in_switch"]) for a in acs],
                         [("0000:00:01.0", True, False), ("0000:00:02.0", True, False)])
        self.assertEqual(self.ids(r), [])

    def test_two_switches_deep_is_pxb(self):
        t = self.tree()
        r0 = ["pci0000:00", "0000:00:01.0"]
        t.bridge(r0, PORT_ROOT)
        t.bridge(r0 + ["0000:01:00.0"], PORT_UP)
        for i, dp in enumerate(("0000:02:00.0", "0000:02:08.0")):
            up, down = "0000:%02x:00.0" % (3 + 2 * i), "0000:%02x:00.0" % (4 + 2 * i)
            c = r0 + ["0000:01:00.0", dp]
            t.bridge(c, PORT_DOWN)
            t.bridge(c + [up], PORT_UP)
            t.bridge(c + [up, down], PORT_DOWN)
            t.gpu(c + [up, down, "0000:%02x:00.0" % (0x10 + i)])
        r = self.topo(t)
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "PXB")

    # ---- two root complexes, two NUMA nodes --------------------------------------------------

    def two_sockets(self, numa1):
        t = self.tree()
        t.bridge(["pci0000:00", "0000:00:01.0"], PORT_ROOT)
        t.gpu(["pci0000:00", "0000:00:01.0", "0000:01:00.0"], numa=0, cpus="0-31")
        t.bridge(["pci0000:80", "0000:80:01.0"], PORT_ROOT, numa=numa1)
        t.gpu(["pci0000:80", "0000:80:01.0", "0000:81:00.0"], numa=numa1, cpus="32-63" if numa1 else "0-31")
        t.bridge(["pci0000:00", "0000:00:02.0"], PORT_ROOT)
        v, d, c = MELLANOX_CX7
        nic = t.function(["pci0000:00", "0000:00:02.0", "0000:02:00.0"], c, v, d, cpus="0-31")
        t.t.mkdir(nic + "/net/ibp2s0")
        t.t.mkdir(nic + "/infiniband/mlx5_0")
        return t

    def test_gpus_on_two_numa_nodes_are_sys(self):
        r = self.topo(self.two_sockets(1))
        d = r.json["topology"]
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "SYS")
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["bridges"], ["0000:00:01.0", "0000:80:01.0"])
        self.assertEqual(self.pair(r, "GPU0", "NIC0")["path"], "PHB")
        self.assertEqual(self.pair(r, "GPU1", "NIC0")["path"], "SYS")
        nic = [x for x in d["devices"] if x["kind"] == "nic"][0]
        self.assertEqual((nic["address"], nic["netdevs"], nic["rdma_device"], nic["numa_node"]),
                         ("0000:02:00.0", "ibp2s0", "mlx5_0", 0))
        self.assertEqual([x["host_bridge"] for x in d["devices"]], ["pci0000:00", "pci0000:80", "pci0000:00"])
        text = gctest.run("topology", "--root", self.two_sockets(1).root).stdout
        self.assertRegex(text, r"GPU1 +SYS +X +SYS +32-63 +1\n")

    def test_two_host_bridges_on_one_node_are_node(self):
        r = self.topo(self.two_sockets(0))
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "NODE")

    # ---- IOMMU --------------------------------------------------------------------------------

    def test_translated_iommu_groups_are_information(self):
        t = self.tree()
        t.t.mkdir("/sys/class/iommu/dmar0")
        t.t.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on quiet\n")
        r0 = ["pci0000:00"]
        for i in range(2):
            rp = "0000:00:0%d.0" % (1 + i)
            t.bridge(r0 + [rp], PORT_ROOT)
            t.gpu(r0 + [rp, "0000:0%d:00.0" % (1 + i)], group=10 + i, group_type="DMA-FQ")
        r = self.topo(t)
        io = r.json["topology"]["iommu"]
        self.assertIs(io["present"], True)
        self.assertEqual(io["units"], ["dmar0"])
        self.assertEqual(io["kernel_parameters"], ["intel_iommu=on"])
        self.assertEqual([(g["gpu"], g["group"], g["type"]) for g in io["groups"]],
                         [("GPU0", "10", "DMA-FQ"), ("GPU1", "11", "DMA-FQ")])
        self.assertEqual(self.pair(r, "GPU0", "GPU1")["path"], "PHB")
        self.assertEqual(self.ids(r), ["topology.iommu-translated"])
        self.assertEqual(r.findings("topology.iommu-translated")[0]["severity"], "info")

    # ---- RDMA -----------------------------------------------------------------------------------

    def test_ib_port_down_is_named(self):
        t = self.two_sockets(1)
        t.ib_port("mlx5_0", 1, "1: DOWN", "2: Polling", addr="0000:02:00.0")
        r = self.topo(t, "--require", "rdma")
        rd = r.json["topology"]["rdma"]
        self.assertIs(rd["active"], False)
        dev = rd["devices"][0]
        self.assertEqual((dev["name"], dev["address"], dev["numa_node"]), ("mlx5_0", "0000:02:00.0", 0))
        self.assertEqual(dev["ports"][0]["state"], "DOWN")
        self.assertEqual(dev["ports"][0]["phys_state"], "Polling")
        f = r.findings("topology.ib-port-down")
        self.assertEqual([(x["subject"], x["severity"]) for x in f], [("mlx5_0:1", "warning")])
        req = [q for q in r.json["verdict"]["requirements"] if q["name"] == "rdma"][0]
        self.assertIs(req["met"], False)

    def test_down_port_beside_an_active_one_is_information(self):
        t = self.two_sockets(1)
        t.ib_port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", addr="0000:02:00.0")
        t.ib_port("mlx5_1", 1, "1: DOWN", "3: Disabled")
        t.t.write("/proc/modules", "nvidia 1234 3 - Live 0x0\n")
        r = self.topo(t, "--require", "rdma")
        self.assertIs(r.json["topology"]["rdma"]["active"], True)
        self.assertEqual(self.ids(r), ["topology.ib-port-down-unused", "topology.no-peermem"])
        self.assertIs(r.json["topology"]["rdma"]["nvidia_peermem"], False)
        self.assertIsNone(r.json["topology"]["rdma"]["dma_buf"]["possible"])  # no driver version, no kernel
        # dma-buf stands in for nvidia_peermem with the open kernel module on Linux 5.12 or later
        t.t.write("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
        t.t.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n")
        r = self.topo(t)
        self.assertEqual(self.ids(r), ["topology.ib-port-down-unused"])
        self.assertEqual(r.json["topology"]["rdma"]["dma_buf"],
                         {"open_kernel_module": True, "kernel": "6.8.0-45-generic", "possible": True})
        for osrel, flavour in (("5.4.0-150-generic", "Open Kernel Module"), ("6.8.0", "Kernel Module")):
            t.t.write("/proc/sys/kernel/osrelease", osrel + "\n")
            t.t.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 %s  580.95.05\n" % flavour)
            r = self.topo(t)
            self.assertEqual(self.ids(r), ["topology.ib-port-down-unused", "topology.no-peermem"], osrel)
            self.assertIs(r.json["topology"]["rdma"]["dma_buf"]["possible"], False)
            ev = r.findings("topology.no-peermem")[0]["evidence"]
            self.assertIn("older than 5.12" if osrel.startswith("5.4") else "proprietary", ev[0]["value"])
        t.t.write("/proc/modules", "nvidia 1234 3 - Live 0x0\nnvidia_peermem 16384 0 - Live 0x0\n")
        r = self.topo(t)
        self.assertEqual(self.ids(r), ["topology.ib-port-down-unused"])
        self.assertIsNone(r.json["topology"]["rdma"]["dma_buf"])
        nfd = gctest.run("topology", "--root", t.root, "--format=nfd")
        self.assertIn("topology.rdma=true", nfd.stdout)

    # ---- NCCL's variables ---------------------------------------------------------------------

    def nccl_env(self, **kw):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("NCCL_"):
                del env[k]
        env.update(kw)
        return env

    def test_socket_ifname_naming_no_interface(self):
        t = self.tree()
        t.netdev("eth0")
        t.netdev("lo")
        for spec, bad in (("ib9", True), ("eth", False), ("=eth0", False), ("=eth", True), ("^eth,lo", True),
                          ("^=eth1", False), ("ib,lo", False), ("=eth1,eth0", False),
                          # "=" applies to the whole list (NCCL's "=eth0,eth1" example): "=lo" here is a prefix
                          ("ib,=lo", True)):
            r = self.topo(t, "--live", env=self.nccl_env(NCCL_SOCKET_IFNAME=spec))
            self.assertEqual(self.ids(r), ["topology.nccl-socket-ifname"] if bad else [], spec)
            self.assertEqual(r.json["topology"]["nccl"]["variables"]["NCCL_SOCKET_IFNAME"], spec)
        r = self.topo(t, "--live", env=self.nccl_env(NCCL_SOCKET_IFNAME="ib9"))
        f = r.findings("topology.nccl-socket-ifname")[0]
        self.assertEqual((f["subject"], f["severity"]), ("NCCL_SOCKET_IFNAME", "warning"))
        self.assertIn("eth0", f["message"])
        # without --live the environment is not this tree's: not read, as every probe treats it under --root
        r = self.topo(t, env=self.nccl_env(NCCL_SOCKET_IFNAME="ib9"))
        self.assertEqual(self.ids(r), [])
        self.assertEqual(r.json["topology"]["nccl"]["environment"], "not-read")
        # /etc/nccl.conf is a host file: read under --root too; the environment wins over it
        t.t.write("/etc/nccl.conf", "# site settings\nNCCL_SOCKET_IFNAME=bond0\nNCCL_DEBUG=WARN\n")
        r = self.topo(t, env=self.nccl_env())
        self.assertEqual(self.ids(r), ["topology.nccl-socket-ifname"])
        self.assertEqual(r.json["topology"]["nccl"]["nccl_conf"], {"NCCL_SOCKET_IFNAME": "bond0"})
        r = self.topo(t, "--live", env=self.nccl_env(NCCL_SOCKET_IFNAME="eth0"))
        self.assertEqual(self.ids(r), [])

    def test_snapshot_replays_the_captured_variables_and_config_spaces(self):
        t = self.tree()
        t.switch_with_gpus()
        t.netdev("eth0")
        snap = t.t.path("/../%s-snap.tar.gz" % os.path.basename(t.root))
        self.addCleanup(lambda: os.path.exists(snap) and os.unlink(snap))
        made = gctest.run("snapshot", "-o", snap, "--root", t.root, "--live", "--no-smoke", "--timeout", "60",
                          env=self.nccl_env(NCCL_SOCKET_IFNAME="ib9"), timeout=120)
        self.assertTrue(os.path.isfile(snap), repr(made))
        # replayed elsewhere, without the variable: the node's value is what is judged
        r = self.run_json("topology", "--root", snap, env=self.nccl_env())
        nccl = r.json["topology"]["nccl"]
        self.assertEqual((nccl["environment"], nccl["variables"]["NCCL_SOCKET_IFNAME"]), ("captured", "ib9"))
        self.assertEqual(self.ids(r), ["topology.acs-redirect", "topology.acs-redirect",
                                       "topology.nccl-socket-ifname"])

    def test_ib_hca_and_p2p_variables(self):
        t = self.two_sockets(1)
        t.ib_port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", addr="0000:02:00.0")
        t.t.write("/proc/modules", "nvidia_peermem 16384 0 - Live 0x0\n")
        r = self.topo(t, "--live", env=self.nccl_env(NCCL_IB_HCA="mlx5_0:1"))
        self.assertEqual(self.ids(r), [])
        r = self.topo(t, "--live", env=self.nccl_env(NCCL_IB_HCA="=mlx5_1", NCCL_IB_DISABLE="1",
                                                     NCCL_P2P_DISABLE="1", NCCL_P2P_LEVEL="PIX",
                                                     NCCL_SHM_DISABLE="0"))
        self.assertEqual(self.ids(r), ["topology.nccl-ib-disabled", "topology.nccl-ib-hca",
                                       "topology.nccl-p2p-setting", "topology.nccl-p2p-setting"])
        self.assertEqual(sorted(f["subject"] for f in r.findings("topology.nccl-p2p-setting")),
                         ["NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL"])
        # a down port that NCCL_IB_HCA names is a warning even beside an active one
        t.ib_port("mlx5_1", 1, "1: DOWN", "2: Polling", link_layer="Ethernet")
        r = self.topo(t, "--live", env=self.nccl_env(NCCL_IB_HCA="mlx5_1"))
        self.assertEqual(self.ids(r), ["topology.ib-port-down"])

    # ---- the NCCL and RCCL libraries, from their files -------------------------------------------

    def elf_lib(self, t, path):
        """A file the linker would take as a library of this machine: the first 64 bytes of this Python's
        own ELF header (its class, byte order and machine), which is all the search reads."""
        with open(os.path.realpath(sys.executable), "rb") as fh:
            t.t.write(path, fh.read(64))

    def libs(self, r):
        return {(x["library"], x["real_path"]): x for x in r.json["topology"]["nccl"]["libraries"]}

    def test_nccl_and_rccl_versions_come_from_file_names_and_dist_info(self):
        t = self.tree()
        t.switch_with_gpus()
        self.elf_lib(t, "/usr/lib/libnccl.so.2.21.5")
        t.t.symlink("libnccl.so.2.21.5", "/usr/lib/libnccl.so.2")
        site = "/opt/venv/lib/python3.12/site-packages"
        self.elf_lib(t, site + "/nvidia/nccl/lib/libnccl.so.2")
        t.t.write(site + "/nvidia_nccl_cu12-2.28.9.dist-info/METADATA", "Name: nvidia-nccl-cu12\n")
        self.elf_lib(t, "/opt/rocm-6.2.0/lib/librccl.so.1.0.60200")
        t.t.symlink("librccl.so.1.0.60200", "/opt/rocm-6.2.0/lib/librccl.so.1")
        t.t.write("/usr/lib/libnccl.so.2.99.0", "not ELF")  # not a library the linker takes: not listed
        r = self.topo(t, env={"VIRTUAL_ENV": "/opt/venv", "LD_LIBRARY_PATH": None})
        libs = self.libs(r)
        self.assertEqual(len(libs), 3, libs)
        sysl = libs[("nccl", "/usr/lib/libnccl.so.2.21.5")]
        self.assertEqual((sysl["version"], sysl["version_from"], sysl["found_via"], sysl["loaded_first"]),
                         ("2.21.5", "file name", "default", True))
        wheel = libs[("nccl", site + "/nvidia/nccl/lib/libnccl.so.2")]
        self.assertEqual((wheel["version"], wheel["version_from"], wheel["dist_info"], wheel["found_via"],
                          wheel["loaded_first"]),
                         ("2.28.9", "dist-info", "nvidia_nccl_cu12-2.28.9.dist-info", "pip", False))
        rccl = libs[("rccl", "/opt/rocm-6.2.0/lib/librccl.so.1.0.60200")]
        self.assertEqual((rccl["version"], rccl["found_via"]), ("1.0.60200", "ROCm"))
        self.assertEqual(self.ids(r), ["topology.acs-redirect", "topology.acs-redirect"])  # versions alone: no finding
        text = gctest.run("topology", "--root", t.root, env={"VIRTUAL_ENV": "/opt/venv"}).stdout
        self.assertRegex(text, r"NCCL 2\.21\.5 +/usr/lib/libnccl\.so\.2\.21\.5 \(default, loaded first\)")
        self.assertRegex(text, r"NCCL 2\.28\.9 +%s/nvidia/nccl/lib/libnccl\.so\.2 \(pip, nvidia_nccl_cu12" % site)
        self.assertRegex(text, r"RCCL 1\.0\.60200 ")
        # two NCCL wheels in one environment (pytorch/pytorch#186591): the version is not known, a warning
        t.t.write(site + "/nvidia_nccl_cu13-2.29.7.dist-info/METADATA", "Name: nvidia-nccl-cu13\n")
        r = self.topo(t, env={"VIRTUAL_ENV": "/opt/venv", "LD_LIBRARY_PATH": None})
        wheel = self.libs(r)[("nccl", site + "/nvidia/nccl/lib/libnccl.so.2")]
        self.assertEqual((wheel["version"], wheel["dist_info"]), (None, None))
        f = r.findings("topology.nccl-wheels-mixed")
        self.assertEqual(len(f), 1, r.json["findings"])
        self.assertEqual((f[0]["severity"], f[0]["subject"]), ("warning", site))
        self.assertIn("nvidia_nccl_cu13-2.29.7.dist-info", f[0]["message"])
        # two GPUs without NCCL: an empty list, nothing said
        t = self.tree()
        t.switch_with_gpus()
        r = self.topo(t, env={"VIRTUAL_ENV": None, "LD_LIBRARY_PATH": None})
        self.assertEqual(r.json["topology"]["nccl"]["libraries"], [])
        # one GPU and no RDMA device: NCCL connects nothing here, and is not looked for (null)
        t = self.tree()
        t.bridge(["pci0000:00", "0000:00:01.0"], PORT_ROOT)
        t.gpu(["pci0000:00", "0000:00:01.0", "0000:01:00.0"])
        self.elf_lib(t, "/usr/lib/libnccl.so.2.21.5")
        r = self.topo(t, env={"VIRTUAL_ENV": None, "LD_LIBRARY_PATH": None})
        self.assertIsNone(r.json["topology"]["nccl"]["libraries"])

    # ---- one GPU, no GPU ------------------------------------------------------------------------

    def test_one_gpu_and_an_empty_tree_say_nothing(self):
        t = self.tree()
        t.bridge(["pci0000:00", "0000:00:01.0"], PORT_ROOT)
        t.gpu(["pci0000:00", "0000:00:01.0", "0000:01:00.0"])
        r = self.topo(t)
        self.assertEqual(self.ids(r), [])
        self.assertEqual(r.json["topology"]["pairs"], [])
        r = self.run_json("topology", "--root", self.make_tree().root)
        self.assertEqual(r.json["topology"]["devices"], [])
        self.assertEqual(self.ids(r), [])


if __name__ == "__main__":
    gctest.main()
