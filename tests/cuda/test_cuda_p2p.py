"""End-to-end tests of the CUDA peer check (probes/cuda/cuda_p2p.c) on the fake libcuda's peer behaviours."""
import os
import sys
import time

import gctest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cuda import KVER, CudaBase, gpu_addr  # noqa: E402

PAIR01 = "%s->%s" % (gpu_addr(0), gpu_addr(1))
PAIR10 = "%s->%s" % (gpu_addr(1), gpu_addr(0))


class P2PTests(CudaBase):
    """GC_FAKE_CUDA_P2P=ok|no-access|corrupt|hang (GC_FAKE_CUDA_P2P_PAIR=A,B: that ordered pair only)."""

    def run_p2p(self, gpus, mode=None, pair=None, *extra, expect_rc=None):
        env = {"GC_FAKE_CUDA_GPUS": str(gpus), "GC_FAKE_CUDA_P2P": mode, "GC_FAKE_CUDA_P2P_PAIR": pair}
        return self.cuda(self.tree(gpus=gpus), self.libdir(), *extra, env=env, expect_rc=expect_rc)

    def p2p_ids(self, r):
        return sorted((f["id"], f["subject"], f["severity"]) for f in r.json["findings"]
                      if f["id"].startswith("cuda.p2p-"))

    def test_two_gpus_ok_verified_with_bandwidth(self):
        r = self.run_p2p(2, expect_rc=0)
        self.assertEqual(self.p2p_ids(r), [], repr(r))
        pairs = r.json["cuda"]["p2p"]["pairs"]
        self.assertEqual([(p["from"], p["to"], p["status"]) for p in pairs], [(0, 1, "pass"), (1, 0, "pass")])
        for p in pairs:
            self.assertIs(p["can_access_peer"], True)
            self.assertEqual(p["bytes"], 8 << 20)
            self.assertEqual(p["wrong_words"], 0)
            self.assertGreater(p["bandwidth_gbps"], 0)
        series = {(m["labels"]["from"], m["labels"]["to"]): m["value"] for m in r.json["cuda"]["metrics"]
                  if m["name"] == "p2p_bandwidth_gbps"}
        self.assertEqual(sorted(series), [(gpu_addr(0), gpu_addr(1)), (gpu_addr(1), gpu_addr(0))])
        line = [s for s in r.json["cuda"]["summary"] if s["label"] == "CUDA P2P"]
        self.assertEqual(len(line), 1, repr(r))
        self.assertIn("2 of 2 GPU pairs", line[0]["text"])

    def test_corrupt_names_the_pair(self):
        r = self.run_p2p(2, "corrupt", "0,1", expect_rc=1)
        self.assertEqual(self.p2p_ids(r), [("cuda.p2p-corrupt", PAIR01, "error")], repr(r))
        st = {(p["from"], p["to"]): p for p in r.json["cuda"]["p2p"]["pairs"]}
        self.assertEqual(st[(0, 1)]["status"], "corrupt")
        self.assertEqual(st[(0, 1)]["wrong_words"], 1)
        self.assertEqual(st[(0, 1)]["first_wrong_offset"], 4096)
        self.assertEqual(st[(1, 0)]["status"], "pass")

    def test_hang_is_bounded_and_names_the_pair(self):
        t0 = time.monotonic()
        r = self.run_p2p(2, "hang", "1,0", "--timeout", "5", expect_rc=1)
        self.assertLess(time.monotonic() - t0, 6.0, repr(r))
        self.assertEqual(self.p2p_ids(r), [("cuda.p2p-hang", PAIR10, "error")], repr(r))
        # The shared page keeps the finished pair (0 -> 1) and names the one in flight.
        pairs = r.json["cuda"]["p2p"]["pairs"]
        self.assertEqual([(p["from"], p["to"], p["status"]) for p in pairs], [(0, 1, "pass"), (1, 0, "hang")])
        self.assertGreater(pairs[0]["bandwidth_gbps"], 0)

    def test_no_access_is_info(self):
        # one finding for every pair without access, the pair its subject when there is one
        r = self.run_p2p(2, "no-access", expect_rc=0)
        f = [x for x in r.json["findings"] if x["id"] == "cuda.p2p-unsupported"]
        self.assertEqual([(x["subject"], x["severity"]) for x in f], [(None, "info")], repr(r))
        self.assertIn("2 of 2 GPU pairs cannot access each other's memory (cuDeviceCanAccessPeer: 0): %s, %s"
                      % (PAIR01, PAIR10), f[0]["message"])
        one = self.run_p2p(2, "no-access", "1,0", expect_rc=0)
        self.assertEqual(self.p2p_ids(one), [("cuda.p2p-unsupported", PAIR10, "info")], repr(one))
        self.assertTrue(all(p["status"] == "unsupported" and p["can_access_peer"] is False
                            for p in r.json["cuda"]["p2p"]["pairs"]))

    def test_one_gpu_no_pairs(self):
        r = self.run_p2p(1, expect_rc=0)
        self.assertEqual(self.p2p_ids(r), [], repr(r))
        self.assertEqual(r.json["cuda"]["p2p"]["pairs"], [])
        self.assertEqual(r.json["cuda"]["p2p"]["not_run"], "fewer than two GPUs passed the CUDA smoke test")

    def requirement(self, r):
        return {x["name"]: x for x in r.json["verdict"]["requirements"]}["p2p"]

    def test_require_p2p(self):
        q = self.requirement(self.run_p2p(2, None, None, "--require", "p2p", expect_rc=0))
        self.assertTrue(q["met"], repr(q))
        self.assertIn("every ordered pair of 2 GPUs (2)", q["detail"])
        q = self.requirement(self.run_p2p(2, "corrupt", "1,0", "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("1 of the 2 ordered pairs", q["detail"])
        self.assertIn("(not passed: 1->0)", q["detail"])
        q = self.requirement(self.run_p2p(2, "no-access", None, "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        q = self.requirement(self.run_p2p(1, None, None, "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("CUDA sees 1 GPU: peer to peer needs at least two", q["detail"])

    # ---- ACS on the path named as the cause (the doctor's CHECK_F_PEER_PATH rule) ------------------

    def switch_tree(self, acs_ctl):
        """Two H100s behind one PCIe switch (root port 00:01.0, upstream 01:00.0, downstream 02:00.0 and 02:01.0)
        whose downstream ports have ACS Control ACS_CTL (0x001d: SrcValid ReqRedir CmpltRedir UpstreamFwd),
        as the topology probe's tests lay them out, with the driver bound, its module and its nodes."""
        sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "topology"))
        from test_topology import PORT_DOWN, PORT_ROOT, PORT_UP, bridge_config  # noqa: E402
        t = self.tree(gpus=0)
        t.device("0000:00:01.0", 0x10b5, 0xc010, 0x060400, config=bridge_config(PORT_ROOT, (0x005f, 0x0001)))
        t.device("0000:01:00.0", 0x10b5, 0xc010, 0x060400, bridge="0000:00:01.0", config=bridge_config(PORT_UP))
        t.gc_gpus = []
        for i, dp in enumerate(("0000:02:00.0", "0000:02:01.0")):
            up = "0000:00:01.0/0000:01:00.0"
            t.device(dp, 0x10b5, 0xc010, 0x060400, bridge=up, config=bridge_config(PORT_DOWN, (0x005f, acs_ctl)))
            addr = "0000:0%d:00.0" % (3 + i)
            t.device(addr, 0x10de, 0x2330, 0x030200, driver="nvidia", bridge=up + "/" + dp,
                     link=("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16))
            t.node("/dev/nvidia%d" % i)
            t.gc_gpus.append(addr)
        t.module("nvidia", 2)
        t.nvidia_version(KVER, open_module=True)
        t.module("nvidia_uvm")
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia-uvm")
        return t

    def check_p2p(self, t, mode, pair=None, text=False, nvlink=None):
        """`check` on T with the fake libcuda's two GPUs at T's addresses (CUDA's own 8-digit domain form)."""
        env = {"GC_FAKE_CUDA_GPUS": "2", "GC_FAKE_CUDA_P2P": mode, "GC_FAKE_CUDA_P2P_PAIR": pair,
               "GC_FAKE_CUDA_BUSIDS": "00000000:03:00.0,00000000:04:00.0", "GC_FAKE_NVML_NVLINK": nvlink,
               "GC_FAKE_NVML_NVLINK_DOWN": None, "GC_FAKE_NVML_NVLINK_GROW": None}
        if not text:
            return self.cuda(t, self.libdir(), env=env, command="check")
        env.update({"LD_LIBRARY_PATH": self.libdir(), "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_NVML_GPUS": "2",
                    "GC_FAKE_NVML_BUSIDS": ",".join(t.gc_gpus), "GC_FAKE_NVML_DRIVER": KVER})
        return gctest.run("check", "-v", "--root", t.root, "--live", "--color=never", env=env).stdout

    def test_acs_redirection_is_named_as_the_cause_of_no_peer_access(self):
        t = self.switch_tree(0x001d)
        r = self.check_p2p(t, "no-access")
        acs = sorted(f["subject"] for f in r.findings("topology.acs-redirect"))
        self.assertEqual(acs, ["0000:02:00.0", "0000:02:01.0"], repr(r))
        for f in r.findings("topology.acs-redirect"):
            self.assertIn({"source": "peer GPUs", "value": "0000:03:00.0 0000:04:00.0"}, f["evidence"])
        f = r.findings("cuda.p2p-unsupported")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIsNone(f[0]["subject"])  # both ordered pairs: matched by the "pair" evidence
        self.assertEqual(sorted(e["value"] for e in f[0]["evidence"] if e["source"] == "pair"),
                         ["0000:03:00.0->0000:04:00.0", "0000:04:00.0->0000:03:00.0"])
        self.assertEqual(f[0]["caused_by"], {"id": "topology.acs-redirect", "subject": "0000:02:00.0"}, repr(r))
        # one ordered pair: its subject is the pair
        r = self.check_p2p(t, "no-access", "1,0")
        f = r.findings("cuda.p2p-unsupported")
        self.assertEqual((f[0]["subject"], f[0]["caused_by"]["id"]),
                         ("0000:04:00.0->0000:03:00.0", "topology.acs-redirect"), repr(r))
        text = self.check_p2p(t, "no-access", text=True)
        self.assertRegex(text, r"cuda\.p2p-unsupported[^\n]*\n(?:[^\n]*\n){0,3}[^\n]*topology\.acs-redirect", text)

    def test_a_peer_error_stays_its_own_reason_and_no_acs_no_cause(self):
        t = self.switch_tree(0x001d)
        r = self.check_p2p(t, "corrupt", "0,1")
        f = r.findings("cuda.p2p-corrupt")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIsNone(f[0].get("caused_by"), repr(r))  # a warning does not explain an error away
        # the same switch without redirection (SrcValid UpstreamFwd): no ACS finding, no cause
        t = self.switch_tree(0x0011)
        r = self.check_p2p(t, "no-access")
        self.assertEqual(r.findings("topology.acs-redirect"), [], repr(r))
        f = r.findings("cuda.p2p-unsupported")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIsNone(f[0].get("caused_by"), repr(r))

    # ---- NVLink from NVML (the fake NVML's GC_FAKE_NVML_NVLINK) ------------------------------------

    def nvlink(self, gpus=2, **env):
        e = {"GC_FAKE_CUDA_GPUS": str(gpus), "GC_FAKE_NVML_NVLINK": None, "GC_FAKE_NVML_NVLINK_DOWN": None,
             "GC_FAKE_NVML_NVLINK_GROW": None}
        e.update(env)
        r = self.cuda(self.tree(gpus=gpus), self.libdir(), env=e)
        return r, {d["pci_bus_id"]: d["nvlink"] for d in r.json["cuda"]["nvml"]["devices"]}

    def nvlink_ids(self, r):
        return sorted((f["id"], f["subject"]) for f in r.json["findings"] if f["id"].startswith("cuda.nvlink-"))

    def test_nvlink_links_their_far_ends_and_counters(self):
        r, links = self.nvlink(GC_FAKE_NVML_NVLINK="4")
        self.assertEqual(self.nvlink_ids(r), [], repr(r))
        a, b = gpu_addr(0), gpu_addr(1)
        self.assertEqual([(x["link"], x["active"], x["remote_pci_bus_id"]) for x in links[a]],
                         [(i, True, b) for i in range(4)])
        self.assertEqual({x["remote_pci_bus_id"] for x in links[b]}, {a})
        for x in links[a]:
            # errors since the driver loaded, not growing: facts, no finding
            self.assertEqual((x["replay_errors"], x["crc_flit_errors"], x["grown"]["crc_flit_errors"]), (5, 5, 0))
        # no NVLink: null, nothing said
        r, links = self.nvlink()
        self.assertEqual(links, {gpu_addr(0): None, gpu_addr(1): None})
        self.assertEqual(self.nvlink_ids(r), [])

    def test_nvlink_down_beside_a_same_model_gpu_and_growing_errors(self):
        r, links = self.nvlink(GC_FAKE_NVML_NVLINK="4", GC_FAKE_NVML_NVLINK_DOWN="1:2", GC_FAKE_NVML_NVLINK_GROW="0:3")
        self.assertEqual(self.nvlink_ids(r), [("cuda.nvlink-errors", gpu_addr(0)), ("cuda.nvlink-inactive", gpu_addr(1))],
                         repr(r))
        down = r.findings("cuda.nvlink-inactive")[0]
        self.assertEqual(down["severity"], "warning")
        self.assertIn("has 3 active NVLinks where %s of the same model has 4: inactive link 2" % gpu_addr(0),
                      down["message"])
        self.assertEqual([x["active"] for x in links[gpu_addr(1)]], [True, True, False, True])
        self.assertIsNone(links[gpu_addr(1)][2]["remote_pci_bus_id"])
        grew = r.findings("cuda.nvlink-errors")[0]
        # the fake adds 3 per read: the child's second read is the growth measured, not a made-up figure
        self.assertIn("link 3 crc_flit_errors +3 (now 11)", grew["message"])
        self.assertEqual(links[gpu_addr(0)][3]["grown"], {"replay_errors": 0, "recovery_errors": 0,
                                                           "crc_flit_errors": 3, "crc_data_errors": 0})
        # one GPU alone is compared with nothing: a down link there is a fact only
        r, links = self.nvlink(gpus=1, GC_FAKE_NVML_NVLINK="4", GC_FAKE_NVML_NVLINK_DOWN="0:1")
        self.assertEqual(self.nvlink_ids(r), [], repr(r))
        self.assertEqual([x["active"] for x in links[gpu_addr(0)]], [True, False, True, True])

    def test_topology_matrix_says_nv_for_gpus_joined_by_nvlink(self):
        t = self.switch_tree(0x0011)
        text = self.check_p2p(t, None, text=True, nvlink="4")
        self.assertRegex(text, r"\n  GPU0 +X +NV4 ", text)
        self.assertRegex(text, r"\n  GPU1 +NV4 +X ", text)
        self.assertIn("NVLink: 4 of 4 links active", text)
        # without NVLink the PCIe path stays
        text = self.check_p2p(t, None, text=True)
        self.assertRegex(text, r"\n  GPU0 +X +PIX ", text)

    def test_nfd_label_and_prometheus_series(self):
        t, d = self.tree(gpus=2), self.libdir()
        env = {"LD_LIBRARY_PATH": d, "GC_FAKE_CUDA_GPUS": "2", "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_P2P": None,
               "GC_FAKE_CUDA_P2P_PAIR": None, "GC_FAKE_NVML_GPUS": "2", "GC_FAKE_NVML_BUSIDS": ",".join(t.gc_gpus)}
        nfd = gctest.run("--format=nfd", "cuda", "--root", t.root, "--live", env=env).stdout
        self.assertIn("cuda.p2p=true", nfd)
        prom = gctest.run("--format=prometheus", "cuda", "--root", t.root, "--live", env=env).stdout
        self.assertRegex(prom, r'gpucheckup_p2p_bandwidth_gbps\{from="%s",to="%s"\} [0-9.e+]+'
                         % (gpu_addr(0), gpu_addr(1)))
        env["GC_FAKE_CUDA_P2P"] = "corrupt"
        nfd = gctest.run("--format=nfd", "cuda", "--root", t.root, "--live", env=env).stdout
        self.assertIn("cuda.p2p=false", nfd)


if __name__ == "__main__":
    gctest.main()
