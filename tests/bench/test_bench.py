"""End-to-end tests of `gpucheckup bench` on PoCL, through the built binary (and its test build)."""
import os
import pty
import re
import shutil
import subprocess
import tempfile

import gctest

TEST_BINARY = os.environ["GC_BENCH_TEST_BINARY"]
# A PoCL kernel cache kept in the build tree: CLBlast's first call compiles its GEMM (seconds on PoCL),
# which later runs of the suite then find built.
CACHE = os.path.join(gctest.BUILD_ROOT, "tests", "bench", "pocl-cache")
NO_CLBLAST = "libgc-no-such-clblast.so.1"
NO_CBLAS = "libgc-no-such-cblas.so.3"


def warm_clblast():
    """Fill CACHE with CLBlast's GEMM programs (tests/bench/clblast_warm.c): the budget covers kernel builds, which
    on PoCL take longer than the one-second budgets below."""
    warm = os.environ.get("GC_CLBLAST_WARM")
    if not warm:
        raise AssertionError("GC_CLBLAST_WARM is not set: the build found no libclblast-dev (.ci/packages has it)")
    os.makedirs(CACHE, exist_ok=True)
    env = dict(os.environ, POCL_CACHE_DIR=CACHE, POCL_DEVICES="pthread")
    # in a sanitizer build, what PoCL and CLBlast keep until exit is theirs, not a leak of ours
    env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"), "detect_leaks=0") if x)
    p = subprocess.run([warm], capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise AssertionError("clblast-warm failed: " + p.stderr[-2000:])


class BenchTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        warm_clblast()

    def env(self, **extra):
        os.makedirs(CACHE, exist_ok=True)
        e = {"POCL_CACHE_DIR": CACHE, "POCL_DEVICES": "pthread", "GPUCHECKUP_LIBCBLAS": None,
             "GPUCHECKUP_LIBCLBLAST": None}
        e.update(extra)
        return e

    def bench(self, *args, expect_rc=None, binary=None, **extra):
        old = gctest.GPUCHECKUP
        if binary:
            gctest.GPUCHECKUP = binary
        try:
            return self.run_json("bench", "--timeout", "120", *args, env=self.env(**extra), expect_rc=expect_rc,
                                 timeout=280)
        finally:
            gctest.GPUCHECKUP = old

    @staticmethod
    def sweeps(dev):
        return {(s["implementation"], s["precision"]): s for s in dev["sweeps"]}

    def assert_good_points(self, sw, big="blas-reference"):
        self.assertGreater(len(sw["points"]), 0, sw)
        for p in sw["points"]:
            self.assertEqual(p["status"], "ok", p)
            self.assertEqual(p["check"], "full" if p["n"] <= 512 else big)
            self.assertEqual(p["wrong_elements"], 0)
            self.assertGreaterEqual(p["runs"], 3)
            self.assertGreater(p["gflops"], 0)
            self.assertLessEqual(p["gflops_min"], p["gflops"])
            self.assertGreaterEqual(p["gflops_max"], p["gflops"])
            self.assertLessEqual(p["ms_min"], p["ms"])
            self.assertGreaterEqual(p["ms_max"], p["ms"])
            self.assertIn(p["timer"], ("profiling", "host"))
            self.assertGreater(p["host_ms"], 0)
        ns = [p["n"] for p in sw["points"]]
        self.assertEqual(ns, sorted(ns))
        self.assertEqual(ns[0], 64)

    def test_pocl_tiny_budget(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp32", expect_rc=0)
        b = r.json["bench"]
        self.assertEqual(b["status"], "ok")
        self.assertEqual(b["budget_s"], 1)
        self.assertEqual(b["precisions"], ["fp32"])
        self.assertEqual(len(b["devices"]), 1)
        dev = b["devices"][0]
        self.assertEqual(dev["status"], "ok", dev)
        self.assertIn("CPU", dev["type"])
        self.assertEqual(dev["precisions"], {"fp32": "supported", "fp64": "not-requested", "fp16": "not-requested"})
        self.assertEqual(dev["clblast"]["status"], "loaded")
        sws = self.sweeps(dev)
        self.assertEqual(sorted(sws), [("clblast", "fp32"), ("gpucheckup", "fp32")])
        for sw in sws.values():
            self.assertEqual(sw["status"], "ok", sw)
            self.assert_good_points(sw)
            self.assertIn("compared_up_to", sw["crossover"])
        # the CPU BLAS baseline, verified too, up to the largest size a device reached
        cpu = b["cpu_blas"]
        self.assertEqual(cpu["status"], "loaded")
        self.assertEqual([s["precision"] for s in cpu["sweeps"]], ["fp32"])
        self.assert_good_points(cpu["sweeps"][0], big="sampled")
        self.assertEqual(dev["reference"], "cpu-blas")
        largest = max(p["n"] for s in sws.values() for p in s["points"])
        self.assertLessEqual(max(p["n"] for p in cpu["sweeps"][0]["points"]), largest)
        # vs_cpu where both measured, and a crossover consistent with it
        for sw in sws.values():
            beaten = [p["n"] for p in sw["points"] if p["vs_cpu"] is not None and p["vs_cpu"] > 1]
            self.assertEqual(sw["crossover"]["n"], beaten[0] if beaten else None)
        # bandwidth, latency, peak
        bw = dev["bandwidth"]
        for k in ("pageable_write_gbs", "pageable_read_gbs", "pinned_write_gbs", "pinned_read_gbs"):
            self.assertGreater(bw[k], 0, k)
        self.assertGreater(dev["launch_latency"]["median_us"], 0)
        self.assertLessEqual(dev["launch_latency"]["min_us"], dev["launch_latency"]["median_us"])
        peak = dev["peak"]["fp32"]
        if peak["gflops"] is not None:  # x86 hosts: from the cpu probe's flags
            self.assertIn("cpu probe", peak["source"])
            for sw in sws.values():
                for p in sw["points"]:
                    self.assertGreater(p["fraction_of_peak"], 0)
        self.assertNotIn("bench.wrong-result", r.finding_ids())
        self.assertNotIn("bench.device-failed", r.finding_ids())

    def test_cold_kernel_cache_stays_within_the_budget(self):
        """Issue 30: with PoCL's kernel cache empty, kernel builds count in --bench-time, and a CLBlast sweep whose
        build outlasted the device's share says what a first run costs, in the JSON and the text.

        Asserted on the budget logic's own figures, not the wall clock (docs/performance.md: speed is measured
        in perf/, never asserted; this test took 7.5 s for its 4 s budget while six jobs ran): the shares the bench
        hands out sum within --bench-time (the CPU BLAS baseline and each device one share each, a device's
        sweeps within its own), our kernel's build is timed inside its sweep (so inside its share), and a CLBlast
        build still running when the device's share ran out is reported `not-built`, with what a first run costs."""
        budget = 4
        for fmt in ("json", "text"):
            cold = tempfile.mkdtemp(prefix="gc-bench-cold-")
            self.addCleanup(shutil.rmtree, cold, True)
            args = ["bench", "--bench-time", str(budget), "--bench-precision", "fp32"]
            r = self.run_json(*args, env=self.env(POCL_CACHE_DIR=cold), timeout=280) if fmt == "json" else \
                gctest.run(*args, env=self.env(POCL_CACHE_DIR=cold), timeout=280)
            if fmt == "text":
                self.assertIn("Benchmark", r.stdout)
                if "not measured: CLBlast's first fp32 call" not in r.stdout:
                    self.assertIn("CLBlast built its kernels", r.stdout)  # it fitted: its cost is said
                continue
            b = r.json["bench"]
            self.assertEqual(b["budget_s"], budget)
            devs = b["devices"]
            self.assertEqual(len(devs), 1, devs)
            share = budget * 1000.0 / (len(devs) + 1)  # one share each: the device, the CPU BLAS baseline
            dev = devs[0]
            given = sum(sw["budget_ms"] for sw in dev["sweeps"])
            self.assertLessEqual(given, share + 1, [(sw["implementation"], sw["budget_ms"]) for sw in dev["sweeps"]])
            cpu_given = sum(sw["budget_ms"] for sw in b["cpu_blas"]["sweeps"])
            self.assertLessEqual(cpu_given, share + 1, b["cpu_blas"]["sweeps"])
            self.assertLessEqual(given + cpu_given, budget * 1000 + 1)
            ours, clb = self.sweeps(dev)[("gpucheckup", "fp32")], self.sweeps(dev)[("clblast", "fp32")]
            self.assertEqual(ours["status"], "ok", ours)
            self.assert_good_points(ours)
            # the cold build of our kernel is part of its sweep's time, so of its share
            self.assertGreater(ours["build_ms"], 0, ours)
            self.assertLessEqual(ours["build_ms"], ours["elapsed_ms"], ours)
            if clb["status"] == "not-built":  # this VM: CLBlast's SGEMM takes PoCL about 13 s to build
                self.assertEqual((clb["stopped"], clb["points"], clb["first_call_ms"]), ("build-time", [], None), clb)
                self.assertIn("builds its kernels", clb["detail"])
                self.assertIn("--bench-time", clb["detail"])
                self.assertNotIn("bench.run-failed", r.finding_ids())
            else:  # a machine that builds it within the budget: the build is its first call, timed
                self.assertEqual(clb["status"], "ok", clb)
                self.assertGreater(clb["first_call_ms"], 0, clb)
                self.assertLessEqual(clb["first_call_ms"], clb["elapsed_ms"], clb)

    def test_fp64_without_clblast(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp64", expect_rc=0, GPUCHECKUP_LIBCLBLAST=NO_CLBLAST)
        dev = r.json["bench"]["devices"][0]
        self.assertEqual(dev["precisions"], {"fp32": "not-requested", "fp64": "supported", "fp16": "not-requested"})
        sws = self.sweeps(dev)
        self.assertEqual(list(sws), [("gpucheckup", "fp64")])
        self.assert_good_points(sws[("gpucheckup", "fp64")])
        self.assertEqual([s["precision"] for s in r.json["bench"]["cpu_blas"]["sweeps"]], ["fp64"])

    def test_precision_the_device_lacks(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp16", expect_rc=0)
        dev = r.json["bench"]["devices"][0]
        self.assertEqual(dev["precisions"]["fp16"], "unsupported")  # PoCL's CPU device has no cl_khr_fp16
        self.assertEqual(dev["sweeps"], [])
        self.assertEqual(r.json["bench"]["cpu_blas"]["sweeps"], [])  # CBLAS has no fp16 GEMM
        lines = [l["text"] for l in r.json["bench"]["summary"]]
        self.assertTrue(any("none of the precisions asked for" in l for l in lines), lines)

    def test_lazy_device_is_wrong_not_fast(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp32", binary=TEST_BINARY, expect_rc=1,
                       GC_BENCH_TEST_KERNEL="lazy", GPUCHECKUP_LIBCLBLAST=NO_CLBLAST)
        dev = r.json["bench"]["devices"][0]
        sw = self.sweeps(dev)[("gpucheckup", "fp32")]
        self.assertEqual(sw["status"], "wrong")
        self.assertGreater(len(sw["points"]), 0)
        for p in sw["points"]:
            self.assertEqual(p["status"], "wrong", p)
            self.assertIsNone(p["gflops"])
            self.assertIsNone(p["fraction_of_peak"])
            self.assertIsNone(p["vs_cpu"])
            self.assertGreater(p["wrong_elements"], 0)
            self.assertIn("copy of input A", p["detail"])
        self.assertIsNone(sw["crossover"]["n"])
        f = r.findings("bench.wrong-result")
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["severity"], "error")
        self.assertIn("gpucheckup", f[0]["message"])
        self.assertIn("fp32", f[0]["message"])
        self.assertIn("N = 64", f[0]["message"])
        # the text says wrong, never a speed, for it
        self.assertIn("bench.wrong-result", self.text_lazy())

    def text_lazy(self):
        import subprocess
        e = dict(os.environ)
        e.update({k: v for k, v in self.env(GC_BENCH_TEST_KERNEL="lazy", GPUCHECKUP_LIBCLBLAST=NO_CLBLAST).items()
                  if v is not None})
        e.pop("GPUCHECKUP_LIBCBLAS", None)
        p = subprocess.run([TEST_BINARY, "bench", "--timeout", "120", "--bench-time", "1", "--bench-precision", "fp32"],
                           capture_output=True, text=True, env=e, timeout=280)
        self.assertEqual(p.returncode, 1, p.stderr)
        table = p.stdout.split("GFLOPS (median", 1)[1].split("GFLOPS (log)", 1)[0]
        self.assertRegex(table, r"\n\s+64\s+wrong\s+[0-9.]+\n")
        return p.stdout

    def test_shipped_binary_ignores_the_test_hook(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp32", expect_rc=0, GC_BENCH_TEST_KERNEL="lazy",
                       GPUCHECKUP_LIBCLBLAST=NO_CLBLAST)
        self.assertEqual(self.sweeps(r.json["bench"]["devices"][0])[("gpucheckup", "fp32")]["status"], "ok")

    def test_missing_libraries_are_info_notes(self):
        r = self.bench("--bench-time", "1", "--bench-precision", "fp32", expect_rc=0,
                       GPUCHECKUP_LIBCLBLAST=NO_CLBLAST, GPUCHECKUP_LIBCBLAS=NO_CBLAS)
        b = r.json["bench"]
        self.assertEqual(b["cpu_blas"]["status"], "missing")
        self.assertIn(NO_CBLAS, b["cpu_blas"]["detail"])
        dev = b["devices"][0]
        self.assertEqual(dev["clblast"]["status"], "missing")
        self.assertEqual(list(self.sweeps(dev)), [("gpucheckup", "fp32")])
        sw = self.sweeps(dev)[("gpucheckup", "fp32")]
        self.assert_good_points(sw, big="sampled")
        self.assertEqual(dev["reference"], "sampled")
        self.assertIsNone(sw["crossover"]["n"])
        self.assertIn("no CPU BLAS baseline", sw["crossover"]["text"])
        for fid, package in (("bench.clblast-missing", "libclblast1"), ("bench.cpu-blas-missing", "libopenblas0")):
            f = r.findings(fid)
            self.assertEqual(len(f), 1, fid)
            self.assertEqual(f[0]["severity"], "info")
            self.assertIn(package, f[0]["message"])
        self.assertTrue(r.json["verdict"]["ready"])

    def test_bad_option_values_exit_2(self):
        cases = [("--bench-time", "0"), ("--bench-time", "-3"), ("--bench-time", "ten"), ("--bench-time", "4000"),
                 ("--bench-precision", "fp8"), ("--bench-precision", ""), ("--bench-precision", "fp32,,fp64"),
                 ("--plot", "chart.pdf"), ("--plot", "")]
        for opt, val in cases:
            with self.subTest(opt=opt, val=val):
                r = gctest.run("bench", opt + "=" + val)
                self.assertEqual(r.rc, 2, repr(r))
                self.assertIn(opt, r.stderr)
                r = self.run_json("bench", opt + "=" + val, expect_rc=2)
                self.assertEqual(r.json["error"]["exit_code"], 2)
                self.assertIn(opt, r.json["error"]["message"])

    def test_plot(self):
        out = os.path.join(tempfile.mkdtemp(prefix="gc-bench-plot-"), "bench.svg")
        r = gctest.run("bench", "--bench-time", "1", "--bench-precision", "fp32", "--timeout", "120", "--plot", out,
                       env=self.env(GPUCHECKUP_LIBCLBLAST=NO_CLBLAST), timeout=280)
        if r.rc == 2:  # built without cairo: refused before anything runs, with a message saying so
            self.assertIn("--plot", r.stderr)
            self.assertIn("built without cairo", r.stderr)
            self.assertFalse(os.path.exists(out))
            self.assertNotIn("Benchmark", r.stdout)
        else:
            self.assertEqual(r.rc, 0, repr(r))
            with open(out, encoding="utf-8") as f:
                self.assertIn("<svg", f.read())

    def test_text_output(self):
        r = gctest.run("bench", "--bench-time", "1", "--bench-precision", "fp32", "--timeout", "120",
                       env=self.env(), timeout=280)
        self.assertEqual(r.rc, 0, repr(r))
        out = r.stdout
        self.assertIn("Benchmark (GEMM", out)
        self.assertRegex(out, r"GFLOPS \(median.*\n\s+N\s+gpucheckup fp32\s+clblast fp32\s+CPU BLAS fp32\n")
        self.assertRegex(out, r"\n\s+64\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\n")
        self.assertIn("GFLOPS (log) against N", out)
        self.assertRegex(out, r"o gpucheckup fp32 x clblast fp32 \* CPU BLAS fp32")
        self.assertRegex(out, r"host<->device\s+pageable write [0-9.]+")
        self.assertRegex(out, r"launch latency\s+[0-9.]+ us median")
        # no progress line when stderr is not a terminal
        self.assertNotIn("\033[K", r.stderr)

    def test_progress_on_a_terminal_only(self):
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.update({k: v for k, v in self.env(GPUCHECKUP_LIBCLBLAST=NO_CLBLAST).items() if v is not None})
        e.pop("GPUCHECKUP_LIBCBLAS", None)
        proc = subprocess.Popen([gctest.GPUCHECKUP, "bench", "--json", "--bench-time", "1", "--bench-precision",
                                 "fp32", "--timeout", "120"], stdout=subprocess.PIPE, stderr=slave,
                                stdin=subprocess.DEVNULL, env=e)
        os.close(slave)
        chunks = []
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:  # EIO: the other side is closed
                break
            if not b:
                break
            chunks.append(b)
        out = proc.stdout.read()
        proc.stdout.close()
        self.assertEqual(proc.wait(timeout=280), 0)
        os.close(master)
        tty = b"".join(chunks).decode(errors="replace")
        self.assertIn("bench: device 1/1 0:0", tty)
        self.assertIn("bench: CPU BLAS", tty)
        self.assertTrue(tty.endswith("\r\x1b[K"), repr(tty[-40:]))  # the line is cleared at the end
        self.assertIn(b'"bench"', out)

    def test_check_never_runs_bench(self):
        r = self.run_json("check", "--no-smoke", env=self.env())
        self.assertEqual(r.json["command"], "check")
        self.assertNotIn("bench", r.json)
        ids = {c["id"] for c in self.run_json("--list-checks", expect_rc=0).json["checks"]}
        self.assertIn("bench.wrong-result", ids)
        self.assertIn("bench.clblast-missing", ids)

    def test_devices_that_cannot_be_opened(self):
        # the fake loader's GPUs enumerate but have no context to give: each is a device-failed error
        r = self.bench("--bench-time", "1", expect_rc=1, GPUCHECKUP_LIBOPENCL=os.environ["GC_OCL_FAKE_LIB"],
                       GC_OCL_FAKE_MODE="gpus")
        devs = r.json["bench"]["devices"]
        self.assertEqual(len(devs), 3)
        for d in devs:
            self.assertEqual(d["status"], "error", d)
            self.assertIn("clCreateContext", d["detail"])
        f = r.findings("bench.device-failed")
        self.assertEqual(len(f), 3)
        # one per device, each naming its device (the report orders findings, not the bench)
        msgs = sorted(x["message"] for x in f)
        for name in ("Fake GeForce RTX 3090", "Fake Radeon RX 6800", "NVIDIA GA102 (rusticl)"):
            self.assertEqual(sum(name in m for m in msgs), 1, msgs)

    def test_crashing_driver_is_contained(self):
        r = self.bench("--bench-time", "1", GPUCHECKUP_LIBOPENCL=os.environ["GC_OCL_FAKE_LIB"],
                       GC_OCL_FAKE_MODE="crash")
        # the opencl probe contains the crash and says so; bench then has no device, and says that
        self.assertEqual(r.rc, 1, repr(r))
        self.assertIn("cl.enumeration-crash", r.finding_ids())
        self.assertEqual(r.json["bench"]["devices"], [])
        self.assertEqual(r.findings("bench.no-devices")[0]["severity"], "warning")

    def test_device_filter_naming_nothing_is_a_usage_error(self):
        r = self.bench("--device", "7", expect_rc=2)
        self.assertIn("--device", r.json["error"]["message"])

    def test_help_documents_bench(self):
        h = gctest.run("--help").stdout
        for word in ("bench ", "--bench-time", "--bench-precision", "--plot"):
            self.assertIn(word, h)
        self.assertTrue(re.search(r"check`? never runs it", h))


if __name__ == "__main__":
    gctest.main()
