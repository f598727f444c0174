"""End-to-end tests of the CUDA peer check (probes/cuda/cuda_p2p.c) on the fake libcuda's peer behaviours."""
import os
import sys
import time

import gctest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cuda import CudaBase, gpu_addr  # noqa: E402

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
        q = self.requirement(self.run_p2p(2, "no-access", None, "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        q = self.requirement(self.run_p2p(1, None, None, "--require", "p2p", expect_rc=1))
        self.assertFalse(q["met"], repr(q))
        self.assertIn("CUDA sees 1 GPU: peer to peer needs at least two", q["detail"])

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
