"""End-to-end tests of `gpucheckup bench` on CUDA devices: the suite's fake libcuda and fake cuBLAS (issue 30)."""
import os
import shutil
import tempfile

import gctest

FAKE_CUDA = os.environ["GC_FAKE_LIBCUDA"]
FAKE_CUBLAS = os.environ["GC_FAKE_LIBCUBLAS"]
NO_CUBLAS = "libgc-no-such-cublas.so.13"
NO_CLBLAST = "libgc-no-such-clblast.so.1"


class BenchCudaTests(gctest.TestCase):
    def driver_dir(self, cublas=True):
        """A directory with the fake as libcuda.so.1 and (CUBLAS) the fake cuBLAS as libcublas.so.13: found
        before any cuBLAS of the host (this machine's CUDA toolkit has a real one in ld.so.cache)."""
        d = tempfile.mkdtemp(prefix="gc-bench-cuda-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(FAKE_CUDA, os.path.join(d, "libcuda.so.1"))
        if cublas:
            shutil.copy(FAKE_CUBLAS, os.path.join(d, "libcublas.so.13"))
        return d

    def bench(self, libdir, expect_rc, **extra):
        # PoCL's device is measured as always (gpucheckup's kernel only: no CLBlast builds in these tests).
        env = {"LD_LIBRARY_PATH": libdir, "POCL_DEVICES": "pthread", "GPUCHECKUP_LIBCLBLAST": NO_CLBLAST,
               "GC_FAKE_CUDA_COMPUTE": None, "GC_FAKE_CUBLAS": None, "GPUCHECKUP_LIBCUBLAS": None,
               "CUDA_VISIBLE_DEVICES": None}
        env.update(extra)
        return self.run_json("bench", "--timeout", "120", "--bench-time", "3", "--bench-precision", "fp32",
                             env=env, expect_rc=expect_rc, timeout=280)

    @staticmethod
    def sweeps(dev):
        return {s["implementation"]: s for s in dev["sweeps"]}

    def cuda_device(self, r):
        cuda = r.json["bench"]["cuda"]
        self.assertEqual(cuda["status"], "ok", cuda)
        self.assertEqual(len(cuda["devices"]), 1, cuda)
        dev = cuda["devices"][0]
        self.assertEqual(dev["status"], "ok", dev)
        self.assertEqual(dev["name"], "NVIDIA H100 80GB HBM3")
        self.assertEqual(dev["compute_capability"], "9.0")
        # the fake's attributes: SMs x clock x 128 fp32 lanes (compute capability 9.0) x 2
        want = dev["multiprocessors"] * dev["clock_mhz"] * 128 * 2 / 1000.0
        self.assertAlmostEqual(dev["peak_gflops"] / want, 1.0, places=3)
        return dev

    def assert_measured(self, sw, dev):
        self.assertEqual(sw["status"], "ok", sw)
        self.assertGreater(len(sw["points"]), 0)
        self.assertEqual(sw["points"][0]["n"], 64)
        speeds = 0
        for p in sw["points"]:
            self.assertEqual(p["status"], "ok", p)
            self.assertEqual(p["wrong_elements"], 0)
            self.assertEqual(p["check"], "full" if p["n"] <= 512 else "sampled")
            if p["gflops"] is not None:
                speeds += 1
                self.assertGreater(p["gflops"], 0)
                frac = p["gflops"] / dev["peak_gflops"]  # the JSON keeps 3 significant digits
                self.assertAlmostEqual(p["fraction_of_peak"], frac, delta=5e-3 * frac + 1e-6)
        self.assertGreater(speeds, 0, sw)

    def assert_wrong(self, sw):
        self.assertEqual(sw["status"], "wrong", sw)
        self.assertEqual(sw["stopped"], "wrong")
        self.assertGreater(len(sw["points"]), 0)
        for p in sw["points"]:
            self.assertEqual(p["status"], "wrong", p)
            self.assertIsNone(p["gflops"])
            self.assertIsNone(p.get("fraction_of_peak"))
            self.assertEqual(p["wrong_elements"], p["n"] * p["n"])
            self.assertIn("computes nothing", p["detail"])

    def test_fake_device_and_fake_cublas_both_measured_and_verified(self):
        r = self.bench(self.driver_dir(), 0)
        dev = self.cuda_device(r)
        self.assertEqual(dev["cublas"]["status"], "loaded", dev["cublas"])
        self.assertEqual(dev["cublas"]["library"], "libcublas.so.13")
        sw = self.sweeps(dev)
        self.assertEqual(sorted(sw), ["cublas", "gpucheckup"])
        self.assert_measured(sw["cublas"], dev)
        self.assert_measured(sw["gpucheckup"], dev)
        self.assertEqual(r.findings("bench.wrong-result"), [])
        self.assertEqual(r.findings("bench.cublas-missing"), [])
        # the OpenCL devices are still there beside it
        self.assertGreater(len(r.json["bench"]["devices"]), 0)

    def test_lazy_device_and_lazy_cublas_are_wrong_never_a_speed(self):
        d = self.driver_dir()
        r = self.bench(d, 1, GC_FAKE_CUDA_COMPUTE="lazy", GC_FAKE_CUBLAS="lazy")
        sw = self.sweeps(self.cuda_device(r))
        self.assert_wrong(sw["cublas"])
        self.assert_wrong(sw["gpucheckup"])
        f = sorted(r.findings("bench.wrong-result"), key=lambda x: x["message"])
        self.assertEqual(len(f), 2, f)
        self.assertEqual([x["subject"] for x in f], ["cuda:0", "cuda:0"])
        self.assertIn("with cublas at N = 64", f[0]["message"])
        self.assertIn("with gpucheckup at N = 64", f[1]["message"])
        # the text says WRONG on both CUDA lines, and gives them no speed
        t = gctest.run("bench", "--timeout", "120", "--bench-time", "3", "--bench-precision", "fp32",
                       env={"LD_LIBRARY_PATH": d, "POCL_DEVICES": "pthread", "GPUCHECKUP_LIBCLBLAST": NO_CLBLAST,
                            "GC_FAKE_CUDA_COMPUTE": "lazy", "GC_FAKE_CUBLAS": "lazy"}, timeout=280)
        lines = [x for x in t.stdout.splitlines() if "CUDA device 0" in x and "fp32:" in x]
        self.assertEqual(len(lines), 2, t.stdout)
        for x in lines:
            self.assertIn("WRONG", x)
            self.assertNotIn("GFLOPS", x)

    def test_only_the_lazy_implementation_is_wrong(self):
        r = self.bench(self.driver_dir(), 1, GC_FAKE_CUDA_COMPUTE="lazy")
        dev = self.cuda_device(r)
        sw = self.sweeps(dev)
        self.assert_measured(sw["cublas"], dev)
        self.assert_wrong(sw["gpucheckup"])
        r = self.bench(self.driver_dir(), 1, GC_FAKE_CUBLAS="lazy")
        dev = self.cuda_device(r)
        sw = self.sweeps(dev)
        self.assert_wrong(sw["cublas"])
        self.assert_measured(sw["gpucheckup"], dev)

    def test_without_cublas_our_kernel_still_runs(self):
        for env in ({"GPUCHECKUP_LIBCUBLAS": NO_CUBLAS}, {}):
            with self.subTest(env=env):
                # the second: no cuBLAS file in the driver directory either (the host's cuBLAS, where it
                # has one, is then found: that case asserts only what holds either way)
                r = self.bench(self.driver_dir(cublas=False), None, **env)
                dev = self.cuda_device(r)
                sw = self.sweeps(dev)
                self.assert_measured(sw["gpucheckup"], dev)
                if env:
                    self.assertEqual(r.rc, 0, r)
                    self.assertEqual(dev["cublas"]["status"], "missing")
                    self.assertIn(NO_CUBLAS, dev["cublas"]["detail"])
                    self.assertEqual(sorted(sw), ["gpucheckup"])
                    f = r.findings("bench.cublas-missing")
                    self.assertEqual(len(f), 1)
                    self.assertEqual(f[0]["severity"], "info")
                else:
                    self.assertIn(dev["cublas"]["status"], ("missing", "failed", "loaded"))

    def test_cuda_devices_measured_without_any_opencl(self):
        # a GPU machine whose container has no OpenCL loader: the CUDA devices are measured all the same
        r = self.bench(self.driver_dir(), None, GPUCHECKUP_LIBOPENCL="/nonexistent/libOpenCL.so.1")
        self.assertEqual(r.json["bench"]["devices"], [])
        dev = self.cuda_device(r)
        sw = self.sweeps(dev)
        self.assert_measured(sw["cublas"], dev)
        self.assert_measured(sw["gpucheckup"], dev)
        self.assertEqual(r.findings("bench.wrong-result"), [])

    def test_driver_that_cannot_list_its_gpus_is_said(self):
        d = self.driver_dir()
        r = self.bench(d, None, GC_FAKE_CUDA_INIT="999")
        cuda = r.json["bench"]["cuda"]
        self.assertEqual(cuda["status"], "error", cuda)
        self.assertEqual(cuda["devices"], [])
        self.assertIn("CUDA_ERROR_UNKNOWN", cuda["detail"])
        t = gctest.run("bench", "--timeout", "120", "--bench-time", "1", "--bench-precision", "fp32",
                       env={"LD_LIBRARY_PATH": d, "POCL_DEVICES": "pthread", "GPUCHECKUP_LIBCLBLAST": NO_CLBLAST,
                            "GC_FAKE_CUDA_INIT": "999"}, timeout=280)
        self.assertIn("CUDA devices not measured: the driver's listing failed: cuInit failed: CUDA_ERROR_UNKNOWN",
                      t.stdout)

    # ---- copy bandwidth: host to device, peer to peer (issue 41) -----------------------------------

    def transfers(self, expect_rc=0, **extra):
        log = os.path.join(tempfile.mkdtemp(prefix="gc-bench-copies-"), "copies")
        self.addCleanup(shutil.rmtree, os.path.dirname(log), True)
        # 2000 us per MiB: no copy can beat 1 MiB / 2 ms (0.524 GB/s), however fast the host's memcpy
        env = {"GC_FAKE_CUDA_GPUS": "2", "GC_FAKE_CUDA_COPY_LOG": log, "GC_FAKE_CUDA_COPY_US_PER_MIB": "2000",
               "GC_FAKE_CUDA_P2P": None, "GC_FAKE_CUDA_P2P_PAIR": None}
        env.update(extra)
        r = self.bench(self.driver_dir(cublas=False), expect_rc, **env)
        with open(log) as f:
            copies = [tuple(line.split()) for line in f]
        return r, r.json["bench"]["cuda"]["transfers"], copies

    BOUND = 1048576 / 2e-3 / 1e9  # GB/s the fake's sleep allows

    def test_host_to_device_and_peer_bandwidth_measured_and_verified(self):
        r, x, copies = self.transfers()
        self.assertEqual((x["status"], x["bytes"], x["runs"], x["pinned"]), ("ok", 32 << 20, 5, True), x)
        self.assertEqual([h["ordinal"] for h in x["h2d"]], [0, 1])
        for h in x["h2d"]:
            self.assertTrue(h["verified"], h)
            for k in ("pageable_gbps", "pinned_gbps"):
                self.assertGreater(h[k], 0, h)
                self.assertLessEqual(h[k], self.BOUND * 1.001, h)  # computed from the real copy time
        self.assertEqual([(p["from"], p["to"], p["peer_access"]) for p in x["p2p"]], [(0, 1, True), (1, 0, True)])
        for p in x["p2p"]:
            self.assertTrue(p["verified"], p)
            self.assertGreater(p["gbps"], 0)
            self.assertLessEqual(p["gbps"], self.BOUND * 1.001, p)
        # what the fake really copied: per device 1 untimed + 5 timed copies, pageable and pinned, and a refill of
        # each pair's source; per ordered pair 1 + 5 peer copies (the GEMMs' copies are other sizes)
        big = [k for k, n in copies if int(n) == 32 << 20]
        self.assertEqual((big.count("htod"), big.count("peer")), (2 * 2 * 6 + 2, 2 * 6), copies[:40])
        lines = [s["text"] for s in r.json["bench"]["summary"] if "host-to-device" in s["text"] or "->" in s["text"]]
        self.assertEqual(len(lines), 4, lines)
        self.assertRegex(lines[0], r"^CUDA 0 host-to-device: pinned [0-9.]+ GB/s, pageable [0-9.]+ GB/s "
                                   r"\(32 MiB, median of 5\), verified$")
        self.assertRegex(lines[2], r"^CUDA 0 -> 1: [0-9.]+ GB/s peer to peer, verified$")
        self.assertEqual(r.findings("bench.transfer-wrong"), [])

    def test_a_peer_copy_read_back_wrong_and_one_without_peer_access(self):
        r, x, _ = self.transfers(1, GC_FAKE_CUDA_P2P="corrupt", GC_FAKE_CUDA_P2P_PAIR="1,0")
        st = {(p["from"], p["to"]): p for p in x["p2p"]}
        self.assertTrue(st[(0, 1)]["verified"])
        self.assertFalse(st[(1, 0)]["verified"])
        f = r.findings("bench.transfer-wrong")
        self.assertEqual([(x["subject"], x["severity"]) for x in f], [("cuda:1->cuda:0", "error")], f)
        r, x, _ = self.transfers(0, GC_FAKE_CUDA_P2P="no-access")
        self.assertEqual([p["peer_access"] for p in x["p2p"]], [False, False])
        self.assertTrue(all(p["verified"] and p["gbps"] > 0 for p in x["p2p"]), x)
        self.assertTrue(any("through host memory (no peer access)" in s["text"] for s in r.json["bench"]["summary"]))

    def test_no_libcuda_no_cuda_devices(self):
        empty = tempfile.mkdtemp(prefix="gc-bench-nocuda-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.bench(empty, None)
        cuda = r.json["bench"]["cuda"]
        if cuda["status"] == "missing":  # no libcuda.so.1 on this host (the ordinary case without NVIDIA's driver)
            self.assertEqual(cuda["devices"], [])
            self.assertIn("libcuda.so.1", cuda["detail"])
        self.assertEqual(r.findings("bench.cublas-missing"), [])
        self.assertGreater(len(r.json["bench"]["devices"]), 0)


if __name__ == "__main__":
    gctest.main()
