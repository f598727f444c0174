"""End-to-end tests of the HIP peer check (probes/rocm/rocm_p2p.c) on the fake HIP runtime's peer behaviours,
with two AMD GPUs behind one PCIe switch (the topology probe's tree layout)."""
import os
import sys
import time

import gctest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "topology"))
import test_rocm  # noqa: E402 (the module: its tests are not collected again here)
from test_pci import PciTree  # noqa: E402
from test_topology import PORT_DOWN, PORT_ROOT, PORT_UP, bridge_config  # noqa: E402

A, B = "0000:03:00.0", "0000:04:00.0"
AB, BA = A + "->" + B, B + "->" + A
GPUS = "gfx1100@0300,gfx1100@0400"


class RocmP2PTests(gctest.TestCase):
    """GC_FAKE_HIP_P2P=ok|no-access|corrupt|hang|enable-error (GC_FAKE_HIP_P2P_PAIR=A,B: that ordered pair only)."""

    def switch_tree(self, acs_ctl=0x0011, gpus=2):
        """GPUS RX 7900 XTX behind one PCIe switch (root port 00:01.0, upstream 01:00.0, downstream 02:0N.0) whose
        downstream ports have ACS Control ACS_CTL (0x001d redirects peer requests, 0x0011 does not), with amdgpu
        bound, a KFD node each, /dev/kfd and render nodes."""
        t = PciTree(self.make_tree())
        t.device("0000:00:01.0", 0x1022, 0x1483, 0x060400, config=bridge_config(PORT_ROOT, (0x005f, 0x0001)))
        t.device("0000:01:00.0", 0x1002, 0x1478, 0x060400, bridge="0000:00:01.0", config=bridge_config(PORT_UP))
        up = "0000:00:01.0/0000:01:00.0"
        t.t.write("/sys/class/kfd/kfd/topology/nodes/0/properties", test_rocm.CPU_PROPS)
        for i in range(gpus):
            dp, addr = "0000:02:0%d.0" % i, "0000:0%d:00.0" % (3 + i)
            t.device(dp, 0x1002, 0x1479, 0x060400, bridge=up, config=bridge_config(PORT_DOWN, (0x005f, acs_ctl)))
            dev = t.device(addr, 0x1002, 0x744c, 0x030000, driver="amdgpu", bridge=up + "/" + dp,
                           drm=("card%d" % i, "renderD%d" % (128 + i)), link=("16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
            t.t.write(dev + "/mem_info_vram_total", "25753026560\n")
            props = test_rocm.RX7900_PROPS.replace("location_id 768", "location_id %d" % ((3 + i) << 8))
            props = props.replace("drm_render_minor 128", "drm_render_minor %d" % (128 + i))
            t.t.write("/sys/class/kfd/kfd/topology/nodes/%d/properties" % (i + 1), props)
            t.node("/dev/dri/card%d" % i, 0o660)
            t.node("/dev/dri/renderD%d" % (128 + i), 0o666)
        t.module("amdgpu", gpus)
        t.t.write("/sys/module/amdgpu/initstate", "live\n")
        t.node("/dev/kfd", 0o666)
        return t

    # the rocm tests' runner and library directory (test_rocm.py)
    libdir, rocm, ids = test_rocm.RocmTests.libdir, test_rocm.RocmTests.rocm, test_rocm.RocmTests.ids

    def p2p(self, mode=None, pair=None, *extra, t=None, gpus=2, command="rocm", expect_rc=None):
        env = {"GC_FAKE_HSA_GPUS": ",".join(GPUS.split(",")[:gpus]), "GC_FAKE_HIP_P2P": mode,
               "GC_FAKE_HIP_P2P_PAIR": pair, "GC_FAKE_HIP_SMOKE": None}
        return self.rocm(t or self.switch_tree(gpus=gpus), *extra, live=True, env=env, command=command,
                         expect_rc=expect_rc)

    def p2p_ids(self, r):
        return sorted((f["id"], f["subject"], f["severity"]) for f in r.json["findings"]
                      if f["id"].startswith("rocm.p2p-"))

    def test_two_gpus_verified_both_ways_with_bandwidth(self):
        r = self.p2p(expect_rc=0)
        self.assertEqual(self.ids(r), [], repr(r))
        p2p = r.json["rocm"]["p2p"]
        self.assertEqual(p2p["devices"], [{"ordinal": 0, "pci_bus_id": A}, {"ordinal": 1, "pci_bus_id": B}])
        self.assertEqual([(p["from"], p["to"], p["status"]) for p in p2p["pairs"]], [(0, 1, "pass"), (1, 0, "pass")])
        for p in p2p["pairs"]:
            self.assertIs(p["can_access_peer"], True)
            self.assertEqual((p["bytes"], p["wrong_words"]), (8 << 20, 0))
            self.assertGreater(p["bandwidth_gbps"], 0)
        line = [s for s in r.json["rocm"]["summary"] if s["label"] == "ROCm P2P"]
        self.assertEqual(len(line), 1, repr(r))
        self.assertIn("2 of 2 GPU pairs copied 8 MiB peer to peer, verified", line[0]["text"])

    def test_corrupt_names_the_pair(self):
        r = self.p2p("corrupt", "0,1", expect_rc=1)
        self.assertEqual(self.p2p_ids(r), [("rocm.p2p-corrupt", AB, "error")], repr(r))
        st = {(p["from"], p["to"]): p for p in r.json["rocm"]["p2p"]["pairs"]}
        self.assertEqual((st[(0, 1)]["status"], st[(0, 1)]["wrong_words"], st[(0, 1)]["first_wrong_offset"]),
                         ("corrupt", 1, 4096))
        self.assertEqual(st[(1, 0)]["status"], "pass")
        self.assertIn("ROCm P2P " + AB, [s["label"] for s in r.json["rocm"]["summary"]])

    def test_hang_is_bounded_and_names_the_pair(self):
        t0 = time.monotonic()
        r = self.p2p("hang", "1,0", "--timeout", "5", expect_rc=1)
        self.assertLess(time.monotonic() - t0, 6.5, repr(r))
        self.assertEqual(self.p2p_ids(r), [("rocm.p2p-hang", BA, "error")], repr(r))
        # the shared page keeps the finished pair (0 -> 1), each device's address, and names the one in flight
        p2p = r.json["rocm"]["p2p"]
        self.assertEqual([(p["from"], p["to"], p["status"]) for p in p2p["pairs"]], [(0, 1, "pass"), (1, 0, "hang")])
        self.assertGreater(p2p["pairs"][0]["bandwidth_gbps"], 0)
        self.assertEqual([d["pci_bus_id"] for d in p2p["devices"]], [A, B])

    def test_enable_error_names_the_call(self):
        r = self.p2p("enable-error", "1,0", expect_rc=1)
        self.assertEqual(self.p2p_ids(r), [("rocm.p2p-failed", BA, "error")], repr(r))
        f = r.findings("rocm.p2p-failed")[0]
        self.assertIn("hipDeviceEnablePeerAccess returned hipErrorUnknown (217)", f["message"])

    def test_no_access_is_info(self):
        r = self.p2p("no-access", expect_rc=0)
        f = r.findings("rocm.p2p-unsupported")
        self.assertEqual([(x["subject"], x["severity"]) for x in f], [(None, "info")], repr(r))
        self.assertIn("2 of 2 GPU pairs cannot access each other's memory (hipDeviceCanAccessPeer: 0): %s, %s"
                      % (AB, BA), f[0]["message"])
        self.assertTrue(all(p["status"] == "unsupported" and p["can_access_peer"] is False
                            for p in r.json["rocm"]["p2p"]["pairs"]))
        one = self.p2p("no-access", "1,0", expect_rc=0)
        self.assertEqual(self.p2p_ids(one), [("rocm.p2p-unsupported", BA, "info")], repr(one))

    def test_one_gpu_and_no_smoke_do_not_run_it(self):
        r = self.p2p(gpus=1, expect_rc=0)
        self.assertEqual(r.json["rocm"]["p2p"], {"pairs": [], "not_run": "fewer than two GPUs passed the HIP smoke test"})
        r = self.p2p(None, None, "--no-smoke")
        self.assertEqual(r.json["rocm"]["p2p"]["not_run"], "the HIP smoke test did not run: --no-smoke")
        self.assertEqual(self.p2p_ids(r), [])

    def test_acs_redirection_is_named_as_the_cause_of_no_peer_access(self):
        t = self.switch_tree(0x001d)
        r = self.p2p("no-access", t=t, command="check")
        acs = sorted(f["subject"] for f in r.findings("topology.acs-redirect"))
        self.assertEqual(acs, ["0000:02:00.0", "0000:02:01.0"], repr(r))
        f = r.findings("rocm.p2p-unsupported")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(sorted(e["value"] for e in f[0]["evidence"] if e["source"] == "pair"), [AB, BA])
        self.assertEqual(f[0]["caused_by"], {"id": "topology.acs-redirect", "subject": "0000:02:00.0"}, repr(r))
        r = self.p2p("no-access", "1,0", t=t, command="check")
        f = r.findings("rocm.p2p-unsupported")
        self.assertEqual((f[0]["subject"], f[0]["caused_by"]["id"]), (BA, "topology.acs-redirect"), repr(r))
        # the same switch without redirection: no ACS finding, no cause
        r = self.p2p("no-access", t=self.switch_tree(0x0011), command="check")
        self.assertEqual(r.findings("topology.acs-redirect"), [], repr(r))
        self.assertIsNone(r.findings("rocm.p2p-unsupported")[0].get("caused_by"), repr(r))

        # the text: the cause under the finding
        env = {"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_HSA_GPUS": GPUS, "GC_FAKE_HIP_P2P": "no-access",
               "GC_FAKE_HIP_P2P_PAIR": None, "GC_FAKE_HSA_INIT": None, "GC_FAKE_HIP_COUNT": None}
        text = gctest.run("check", "-v", "--root", t.root, "--live", "--color=never", env=env).stdout
        self.assertRegex(text, r"rocm\.p2p-unsupported[^\n]*\n(?:[^\n]*\n){0,3}[^\n]*topology\.acs-redirect", text)

    def requirement(self, r):
        return {x["name"]: x for x in r.json["verdict"]["requirements"]}["p2p"]

    def test_require_p2p_counts_the_hip_pairs(self):
        """--require p2p is the doctor's, from every API's peer check: AMD pairs alone meet or fail it."""
        q = self.requirement(self.p2p(None, None, "--require", "p2p", expect_rc=0))
        self.assertTrue(q["met"], repr(q))
        self.assertIn("every ordered pair of 2 GPUs (2) copied peer to peer and verified (the HIP (ROCm) peer check)",
                      q["detail"])
        q = self.requirement(self.p2p("corrupt", "0,1", "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("1 of the 2 ordered pairs of 2 GPUs passed the HIP (ROCm) peer check (not passed: 0->1)",
                      q["detail"])
        q = self.requirement(self.p2p("no-access", None, "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("0 of the 2 ordered pairs", q["detail"])
        self.assertIn("(not passed: 0->1, 1->0)", q["detail"])
        q = self.requirement(self.p2p(None, None, "--require", "p2p", gpus=1, expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("HIP (ROCm) sees 1 GPU: peer to peer needs at least two", q["detail"])
        q = self.requirement(self.p2p(None, None, "--no-smoke", "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("the HIP (ROCm) peer check did not run: the HIP smoke test did not run: --no-smoke", q["detail"])

    def test_nfd_label_and_prometheus_series(self):
        """The HIP pairs have the CUDA pairs' NFD label (rocm.p2p) and Prometheus series (from/to by PCI address)."""
        t = self.switch_tree()
        env = {"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_HSA_GPUS": GPUS, "GC_FAKE_HIP_P2P": None,
               "GC_FAKE_HIP_P2P_PAIR": None, "GC_FAKE_HSA_INIT": None, "GC_FAKE_HIP_COUNT": None,
               "GC_FAKE_HIP_SMOKE": None}
        nfd = gctest.run("--format=nfd", "rocm", "--root", t.root, "--live", env=env).stdout
        self.assertIn("rocm.p2p=true", nfd)
        self.assertNotIn("cuda.p2p", nfd)
        prom = gctest.run("--format=prometheus", "rocm", "--root", t.root, "--live", env=env).stdout
        for a, b in ((A, B), (B, A)):
            self.assertRegex(prom, r'gpucheckup_p2p_bandwidth_gbps\{from="%s",to="%s"\} [0-9.e+]+' % (a, b), prom)
        self.assertEqual(prom.count("# HELP gpucheckup_p2p_bandwidth_gbps "), 1, prom)
        env["GC_FAKE_HIP_P2P"], env["GC_FAKE_HIP_P2P_PAIR"] = "corrupt", "0,1"
        nfd = gctest.run("--format=nfd", "rocm", "--root", t.root, "--live", env=env).stdout
        self.assertIn("rocm.p2p=false", nfd)
        prom = gctest.run("--format=prometheus", "rocm", "--root", t.root, "--live", env=env).stdout
        self.assertNotIn('from="%s",to="%s"' % (A, B), prom)  # the corrupt pair has no bandwidth series
        self.assertIn('from="%s",to="%s"' % (B, A), prom)

    def test_snapshot_replays_the_pairs(self):
        """A snapshot keeps the peer check's pairs: its replay (not live) names the same pair from them."""
        t = self.switch_tree()
        path = os.path.join(self.make_tree().root, "p2p.tar.gz")
        env = {"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_HSA_GPUS": GPUS, "GC_FAKE_HIP_P2P": "corrupt",
               "GC_FAKE_HIP_P2P_PAIR": "0,1", "GC_FAKE_HSA_INIT": None, "GC_FAKE_HIP_COUNT": None}
        live = gctest.run("snapshot", "-o", path, "--root", t.root, "--live", "--json", env=env, timeout=300)
        self.assertEqual(live.rc, 1, repr(live))
        r = self.run_json("rocm", "--root", path, env={"LD_LIBRARY_PATH": None}, expect_rc=1)
        self.assertEqual(self.p2p_ids(r), [("rocm.p2p-corrupt", AB, "error")], repr(r))
        self.assertEqual([(p["from"], p["to"], p["status"]) for p in r.json["rocm"]["p2p"]["pairs"]],
                         [(0, 1, "corrupt"), (1, 0, "pass")])
        # --require p2p answered from the replayed pairs
        r = self.run_json("rocm", "--root", path, "--require", "p2p", env={"LD_LIBRARY_PATH": None}, expect_rc=1)
        q = self.requirement(r)
        self.assertFalse(q["met"], repr(q))
        self.assertIn("1 of the 2 ordered pairs of 2 GPUs passed the HIP (ROCm) peer check (not passed: 0->1)",
                      q["detail"])


if __name__ == "__main__":
    gctest.main()
