"""End-to-end tests of the smoke probe on PoCL, through the built binary (and its test build)."""
import os
import pty
import shutil
import subprocess
import tempfile
import time

import gctest

TEST_BINARY = os.environ["GC_SMOKE_TEST_BINARY"]
FOUR = "pthread pthread pthread pthread"


class SmokeTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        # One PoCL kernel cache for the class: the first build is cold, the others warm.
        cls.cache = tempfile.mkdtemp(prefix="gc-smoke-cache-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache, ignore_errors=True)

    def env(self, devices="pthread", **extra):
        e = {"POCL_CACHE_DIR": self.cache, "POCL_DEVICES": devices}
        e.update(extra)
        return e

    def smoke(self, *args, devices="pthread", expect_rc=None, binary=None, **extra):
        env = self.env(devices, **extra)
        if binary is None:
            r = self.run_json("smoke", *args, env=env, expect_rc=expect_rc)
        else:
            old = gctest.GPUCHECKUP
            gctest.GPUCHECKUP = binary
            try:
                r = self.run_json("smoke", *args, env=env, expect_rc=expect_rc)
            finally:
                gctest.GPUCHECKUP = old
        return r

    def assert_passed(self, d, n=64):
        # PoCL's devices are CPU devices: 64 (COMPUTE_CPU_SIZE) without --smoke-size, as on lavapipe
        self.assertEqual(d["status"], "pass", d)
        self.assertEqual(d["n"], n)
        self.assertEqual(d["precisions"], {"fp32": "pass", "fp64": "pass", "fp16": "unsupported"})
        self.assertEqual(d["wrong_elements"], 0)
        self.assertEqual(d["first_mismatches"], [])
        self.assertIsNone(d["error"])
        self.assertIsNone(d["build_log"])
        self.assertEqual(d["round_trip"]["status"], "pass")
        self.assertEqual(d["round_trip"]["wrong_words"], 0)
        self.assertEqual(d["round_trip"]["bytes"], n * n * 8)  # sized for fp64
        self.assertGreater(d["build_ms"], 0)
        if n >= 64:
            self.assertGreater(d["kernel_ms"], 0)
            self.assertGreater(d["gflops"], 0)
        else:
            # a 1x1 product can finish within the profiling clock's resolution: kernel_ms may round
            # to 0 and GFLOPS be unknown (null), never negative
            self.assertGreaterEqual(d["kernel_ms"], 0)
            if d["gflops"] is not None:
                self.assertGreaterEqual(d["gflops"], 0)
        self.assertIn("CPU", d["type"])
        self.assertEqual(d["stage"], "done")
        passes = {(p["precision"], p["kind"]): p for p in d["passes"]}
        self.assertEqual(sorted(passes), [("fp32", "exact"), ("fp32", "random"), ("fp64", "exact"),
                                          ("fp64", "random")])
        for p in passes.values():
            self.assertEqual(p["status"], "pass", p)
            self.assertEqual(p["wrong_elements"], 0)
        self.assertEqual(passes[("fp32", "exact")]["max_error"], 0)
        self.assertEqual(passes[("fp64", "exact")]["max_error"], 0)
        self.assertEqual(passes[("fp32", "exact")]["tolerance"], 0)
        self.assertGreater(passes[("fp32", "random")]["tolerance"], 0)
        self.assertLessEqual(passes[("fp32", "random")]["max_error"], passes[("fp32", "random")]["tolerance"])
        # fp64 is far more accurate than fp32, and its bound says so
        self.assertLess(passes[("fp64", "random")]["tolerance"], passes[("fp32", "random")]["tolerance"] * 1e-6)

    def test_pass_fp32_fp64_on_pocl(self):
        r = self.smoke(expect_rc=0)
        s = r.json["smoke"]
        self.assertEqual(s["status"], "ok")
        self.assertEqual(s["n"], 256)  # the size asked for; a CPU device is tested at 64
        self.assertEqual(s["selection"], "all")
        self.assertEqual(len(s["devices"]), 1)
        d = s["devices"][0]
        self.assertEqual((d["platform_index"], d["device_index"]), (0, 0))
        self.assertIsNone(d["pci_address"])
        self.assert_passed(d)
        self.assertEqual([f for f in r.finding_ids() if f.startswith("smoke.")], [])
        self.assertEqual(len(s["summary"]), 1)
        self.assertEqual(s["summary"][0]["label"], "OpenCL smoke")
        self.assertEqual(s["summary"][0]["mark"], "ok")
        self.assertIn("fp64 pass", s["summary"][0]["text"])
        # `smoke` runs what it builds on: the opencl section is in the document too
        self.assertIn("opencl", r.json)

    def test_four_devices_all_tested(self):
        r = self.smoke(devices=FOUR, expect_rc=0)
        devs = r.json["smoke"]["devices"]
        self.assertEqual([(d["platform_index"], d["device_index"]) for d in devs], [(0, 0), (0, 1), (0, 2), (0, 3)])
        for d in devs:
            self.assert_passed(d)
        self.assertEqual(len(r.json["smoke"]["summary"]), 4)
        # four devices of one model in one child: one compiles the source, the others build its binary
        # (a device that waited over 3 s for that build, on a very busy machine, compiles it too)
        froms = [d["build_from"] for d in devs]
        self.assertGreaterEqual(froms.count("source"), 1, froms)
        self.assertGreaterEqual(froms.count("binary"), 1, froms)
        self.assertEqual(froms.count("source") + froms.count("binary"), 4, froms)

    def test_cpu_device_size(self):
        # --smoke-size is every device's size, CPU ones too: 256 (the default), or one above 64
        for n in (256, 100):
            r = self.smoke("--smoke-size", str(n), expect_rc=0)
            self.assert_passed(r.json["smoke"]["devices"][0], n)
            self.assertIn("N=%d," % n, r.json["smoke"]["summary"][0]["text"])
        r = self.smoke(expect_rc=0)
        self.assertIn("N=64,", r.json["smoke"]["summary"][0]["text"])
        # (the full check's shared child tests it at 64 too: run_counting_loads's assert_passed)

    def test_other_sizes(self):
        # each remainder of N by the kernel's block (8 columns by 4 rows) that takes the one-at-a-time
        # path: a partial row block (3, 15), a partial column block (12), both (1, 2, 5, 33), neither (16)
        for n in (1, 2, 3, 5, 12, 15, 16, 33):
            r = self.smoke("--smoke-size", str(n), expect_rc=0)
            d = r.json["smoke"]["devices"][0]
            self.assert_passed(d, n)

    def test_turned_off(self):
        for args in (["--no-smoke"], ["--smoke=none"], ["--smoke", "none"]):
            r = self.smoke(*args, expect_rc=0)
            self.assertEqual(r.json["smoke"]["status"], "skipped")
            self.assertIn("--smoke=none", r.json["smoke"]["reason"])
            self.assertNotIn("devices", r.json["smoke"])

    def test_gpu_only_skips_cpu_devices(self):
        r = self.smoke("--smoke=gpu", devices="pthread pthread", expect_rc=0)
        s = r.json["smoke"]
        self.assertEqual(s["selection"], "gpu")
        self.assertEqual(len(s["devices"]), 2)
        for d in s["devices"]:
            self.assertEqual(d["status"], "skipped")
            self.assertIn("not a GPU", d["detail"])
            self.assertIsNone(d["kernel_ms"])
            self.assertIsNone(d["wrong_elements"])
            self.assertIsNone(d["elapsed_ms"])
        self.assertEqual([m["mark"] for m in s["summary"]], ["skipped", "skipped"])

    def test_device_filter(self):
        r = self.smoke("--device", "0:1", devices="pthread pthread", expect_rc=0)
        devs = r.json["smoke"]["devices"]
        self.assertEqual([(d["platform_index"], d["device_index"]) for d in devs], [(0, 1)])
        self.assertEqual(devs[0]["status"], "pass")
        r = self.smoke("--device", "0", devices="pthread pthread", expect_rc=0)
        self.assertEqual(len(r.json["smoke"]["devices"]), 2)

    def test_device_filter_naming_nothing_is_a_usage_error(self):
        r = self.smoke("--device", "3", expect_rc=2)
        self.assertIn("--device 3", r.json["error"]["message"])
        self.assertIn("no OpenCL platform 3", r.json["error"]["message"])
        r = self.smoke("--device", "0:5", devices="pthread pthread", expect_rc=2)
        self.assertIn("no device 5", r.json["error"]["message"])
        r2 = gctest.run("smoke", "--device", "0:5", env=self.env())
        self.assertEqual(r2.rc, 2)
        self.assertIn("--device 0:5", r2.stderr)

    def test_no_platform_and_no_device(self):
        # The opencl probe (run first) reports the missing platform; the smoke test has nothing to add.
        r = self.smoke(OCL_ICD_VENDORS="/nonexistent")
        gctest.absent_api_expectation(r, "cl.no-platforms")
        s = r.json["smoke"]
        self.assertEqual(s["status"], "ok")
        self.assertEqual(s["devices"], [])
        self.assertIn("no OpenCL device", s["summary"][0]["text"])
        self.assertEqual(s["summary"][0]["mark"], "info")  # the opencl probe's findings say why
        r = self.smoke(devices="foo", expect_rc=0)
        self.assertEqual(r.json["smoke"]["devices"], [])
        self.assertEqual([f["id"] for f in r.json["findings"] if f["id"].startswith("smoke.")], [])

    def test_no_loader(self):
        r = self.smoke(GPUCHECKUP_LIBOPENCL="/nonexistent/libOpenCL.so.1")
        gctest.absent_api_expectation(r, "cl.no-platforms")
        self.assertFalse([i for i in r.finding_ids() if i.startswith("smoke.")])
        # the device list comes from the opencl section, which found none: nothing to test
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "no-loader")
        self.assertEqual(r.json["smoke"]["devices"], [])

    def test_text_output(self):
        r = gctest.run("smoke", env=self.env())
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("Smoke test", r.stdout)
        self.assertIn("fp32 pass, fp64 pass, fp16 unsupported", r.stdout)
        self.assertIn("buffer round trip", r.stdout)
        self.assertEqual(r.stderr, "")  # not a terminal: no progress
        r = gctest.run("smoke", "-v", env=self.env())
        self.assertIn("fp64 random pass", r.stdout)

    def run_on_tty(self, *args):
        """Run gpucheckup with stderr on a pseudo-terminal; returns (rc, stdout, what the terminal got)."""
        master, slave = pty.openpty()
        e = dict(os.environ)
        e.update(self.env())
        proc = subprocess.Popen([gctest.GPUCHECKUP, *args], stdout=subprocess.PIPE, stderr=slave,
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
        rc = proc.wait(timeout=120)
        os.close(master)
        return rc, out.decode(), b"".join(chunks).decode(errors="replace")

    def test_progress_on_a_terminal_only(self):
        rc, out, tty = self.run_on_tty("smoke", "--json")
        self.assertEqual(rc, 0)
        self.assertIn("smoke: testing 0:0", tty)
        self.assertIn("1/1 devices done", tty)
        self.assertIn("pass", tty)
        self.assertTrue(tty.endswith("\r\x1b[K"), repr(tty[-40:]))  # the line is cleared at the end
        self.assertIn('"smoke"', out)
        rc, out, tty = self.run_on_tty("smoke", "--quiet")
        self.assertEqual(rc, 0)
        self.assertEqual(tty, "")

    # ---- Through the test build, with the kernel or the child sabotaged ----

    def test_build_failure_gives_build_log(self):
        r = self.smoke(binary=TEST_BINARY, expect_rc=1, GC_SMOKE_TEST_KERNEL="broken")
        d = r.json["smoke"]["devices"][0]
        self.assertEqual(d["status"], "error")
        self.assertEqual(d["error"]["call"], "clBuildProgram")
        self.assertEqual(d["error"]["name"], "CL_BUILD_PROGRAM_FAILURE")
        self.assertEqual(d["error"]["code"], -11)
        self.assertIn("undeclared_identifier_for_the_test", d["build_log"])
        self.assertEqual(d["precisions"]["fp32"], "build-failed")
        self.assertIsNone(d["kernel_ms"])
        self.assertIsNone(d["wrong_elements"])
        f = r.findings("smoke.build-failed")
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["severity"], "error")
        self.assertEqual(f[0]["subject"], "0:0 " + d["name"])
        self.assertIn("CL_BUILD_PROGRAM_FAILURE", f[0]["message"])
        self.assertTrue(any("undeclared_identifier_for_the_test" in e["value"] for e in f[0]["evidence"]))
        self.assertIn("--device 0:0", f[0]["hint"])
        self.assertNotIn("smoke.run-failed", r.finding_ids())
        # the text report shows the log
        r2 = subprocess.run([TEST_BINARY, "smoke"], capture_output=True, text=True,
                            env={**os.environ, **self.env(GC_SMOKE_TEST_KERNEL="broken")})
        self.assertIn("build log:", r2.stdout)
        self.assertIn("undeclared_identifier_for_the_test", r2.stdout)

    def test_build_failure_on_each_of_two_devices(self):
        # The first build fails: nothing to share; the other device compiles the source itself and
        # gets its own build log.
        r = self.smoke(devices="pthread pthread", binary=TEST_BINARY, expect_rc=1, GC_SMOKE_TEST_KERNEL="broken")
        devs = r.json["smoke"]["devices"]
        for d in devs:
            self.assertEqual(d["status"], "error")
            self.assertEqual(d["error"]["name"], "CL_BUILD_PROGRAM_FAILURE")
            self.assertIn("undeclared_identifier_for_the_test", d["build_log"])
            self.assertIsNone(d["build_from"])
        self.assertEqual(len(r.findings("smoke.build-failed")), 2)

    def test_crash_while_building_from_the_binary_reruns_each_alone(self):
        # Every device that builds the first one's binary crashes there: the child dies, and each
        # device runs again alone, compiling the source.
        r = self.smoke("--timeout", "60", devices="pthread pthread pthread", binary=TEST_BINARY, expect_rc=0,
                       GC_SMOKE_TEST_CRASH_AT="'s binary")  # time for the reruns: see the four-device case
        devs = r.json["smoke"]["devices"]
        for d in devs:
            self.assert_passed(d)
            self.assertEqual(d["build_from"], "source")

    def test_hung_first_build_does_not_hold_the_others(self):
        # The device that compiles the source for the others hangs there: the other one waits for it
        # a while, then compiles the source itself and passes; the hung one is named with its stage.
        t0 = time.monotonic()
        r = self.smoke("--timeout", "7", devices="pthread pthread", binary=TEST_BINARY, expect_rc=1,
                       GC_SMOKE_TEST_HANG_AT="shared with the devices like it")
        elapsed = time.monotonic() - t0
        self.assertLessEqual(elapsed, 7 + 1.0)
        devs = r.json["smoke"]["devices"]
        self.assertEqual(sorted(d["status"] for d in devs), ["pass", "timeout"])
        hung = [d for d in devs if d["status"] == "timeout"][0]
        ok = [d for d in devs if d["status"] == "pass"][0]
        self.assertEqual(hung["stage"], "building the kernel from source (shared with the devices like it)")
        self.assert_passed(ok)
        self.assertEqual(ok["build_from"], "source")

    def test_shipped_binary_ignores_the_test_hooks(self):
        r = self.smoke(expect_rc=0, GC_SMOKE_TEST_KERNEL="broken", GC_SMOKE_TEST_CRASH_AT="building")
        self.assertEqual(r.json["smoke"]["devices"][0]["status"], "pass")

    def test_wrong_result(self):
        r = self.smoke("--smoke-size", "16", binary=TEST_BINARY, expect_rc=1, GC_SMOKE_TEST_KERNEL="wrong")
        d = r.json["smoke"]["devices"][0]
        self.assertEqual(d["status"], "fail")
        self.assertEqual(d["precisions"], {"fp32": "fail", "fp64": "fail", "fp16": "unsupported"})
        self.assertEqual(d["wrong_elements"], 4)  # (3, 7) in each of the four passes
        m = d["first_mismatches"][0]
        self.assertEqual((m["precision"], m["pass"], m["row"], m["col"]), ("fp32", "exact", 3, 7))
        self.assertEqual(m["got"], m["expected"] + 1)
        self.assertEqual(len(d["first_mismatches"]), 4)
        self.assertAlmostEqual(d["max_error"], 1, places=3)
        self.assertIn("1 of 256 elements wrong", d["detail"])
        self.assertIn("row 3, column 7", d["detail"])
        f = r.findings("smoke.wrong-result")
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["severity"], "error")
        self.assertTrue(any(e["source"] == "mismatch" and "row 3, column 7" in e["value"] for e in f[0]["evidence"]))
        self.assertFalse(r.json["verdict"]["ready"])

    def test_wrong_result_on_each_of_four_devices(self):
        # One child tests the four devices with one set of inputs and references, read by all: each
        # device's wrong element is found, in every pass, and nothing one device did leaks into another.
        r = self.smoke("--smoke-size", "40", devices=FOUR, binary=TEST_BINARY, expect_rc=1,
                       GC_SMOKE_TEST_KERNEL="wrong")
        devs = r.json["smoke"]["devices"]
        self.assertEqual(len(devs), 4)
        for d in devs:
            self.assertEqual(d["status"], "fail", d)
            self.assertEqual(d["precisions"], {"fp32": "fail", "fp64": "fail", "fp16": "unsupported"})
            self.assertEqual(d["wrong_elements"], 4)
            self.assertEqual([(m["precision"], m["pass"], m["row"], m["col"]) for m in d["first_mismatches"]],
                             [(p, k, 3, 7) for p in ("fp32", "fp64") for k in ("exact", "random")])
            for m in d["first_mismatches"]:
                self.assertAlmostEqual(m["got"], m["expected"] + 1, places=4)
            self.assertIn("1 of 1600 elements wrong", d["detail"])
        self.assertEqual(len(r.findings("smoke.wrong-result")), 4)

    def test_missing_kernel_is_run_failed(self):
        r = self.smoke(binary=TEST_BINARY, expect_rc=1, GC_SMOKE_TEST_KERNEL="wrongname")
        d = r.json["smoke"]["devices"][0]
        self.assertEqual(d["status"], "error")
        self.assertEqual(d["error"], {"call": "clCreateKernel", "code": -46, "name": "CL_INVALID_KERNEL_NAME"})
        self.assertEqual(d["precisions"]["fp32"], "error")
        self.assertEqual(d["precisions"]["fp64"], "not-run")
        f = r.findings("smoke.run-failed")
        self.assertEqual(len(f), 1)
        self.assertIn("CL_INVALID_KERNEL_NAME", f[0]["message"])
        self.assertIn({"source": "clCreateKernel", "value": "CL_INVALID_KERNEL_NAME (-46)"}, f[0]["evidence"])

    def test_crash_is_contained_and_named(self):
        r = self.smoke(devices="pthread pthread", binary=TEST_BINARY, expect_rc=1,
                       GC_SMOKE_TEST_CRASH_AT="running the kernel", GC_SMOKE_TEST_ONLY_DEVICE="0:1")
        d0, d1 = r.json["smoke"]["devices"]
        self.assertEqual(d0["status"], "pass")  # the other device is not affected
        self.assertEqual(d1["status"], "crash")
        self.assertIn("SIGSEGV", d1["detail"])
        self.assertEqual(d1["stage"], "fp32 exact pass: running the kernel")
        self.assertEqual(d1["precisions"]["fp32"], "not-run")
        self.assertIsNone(d1["wrong_elements"])
        f = r.findings("smoke.crash")
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["subject"], "0:1 " + d1["name"])
        self.assertIn("SIGSEGV", f[0]["message"])
        self.assertIn("running the kernel", f[0]["message"])

    def test_timeout(self):
        t0 = time.monotonic()
        r = self.smoke("--timeout", "1.5", binary=TEST_BINARY, expect_rc=1, GC_SMOKE_TEST_HANG_AT="building")
        elapsed = time.monotonic() - t0
        # --timeout bounds the whole run (issue 17): the enumeration before took part of it
        self.assertLessEqual(elapsed, 1.5 + 1.0)
        d = r.json["smoke"]["devices"][0]
        self.assertEqual(d["status"], "timeout")
        self.assertEqual(d["stage"], "building the kernel")
        self.assertRegex(d["detail"], r"^timed out after [01]\.[0-9] s while building the kernel$")
        f = r.findings("smoke.timeout")
        self.assertEqual(len(f), 1)
        self.assertIn({"source": "--timeout", "value": "1.5 s"}, f[0]["evidence"])
        # issue 24 item 8: the run's deadline stopped it, and PoCL's device is the CPU, still compiling:
        # slowness to say so, not a GPU hang to look for in dmesg
        self.assertIn("before the run's --timeout (1.5 s) ended it", f[0]["message"])
        self.assertIn("CPU", d["type"])
        self.assertIn("slow, not hung", f[0]["hint"])
        self.assertIn("compiling the smoke kernel", f[0]["hint"])
        self.assertNotIn("dmesg", f[0]["hint"])
        self.assertNotIn("holds the GPU", f[0]["hint"])

    def assert_second_of_two_hung(self, r, t0):
        # Run R (started at T0, --timeout 6) of two devices, 0:1 hung while running the fp32 kernel:
        # within the bound, 0:0 passed, 0:1 a timeout named with its stage. Returns 0:1's result.
        self.assertLessEqual(time.monotonic() - t0, 6 + 1.0)
        d0, d1 = r.json["smoke"]["devices"]
        self.assert_passed(d0)
        self.assertEqual(d1["status"], "timeout")
        self.assertEqual(d1["stage"], "fp32 exact pass: running the kernel")
        f = r.findings("smoke.timeout")
        self.assertEqual([x["subject"] for x in f], ["0:1 " + d1["name"]])
        self.assertIn({"source": "stage", "value": "fp32 exact pass: running the kernel"}, f[0]["evidence"])
        # a CPU device (PoCL's) stopped running its kernel by the run's --timeout: a CPU-side hint
        self.assertIn("CPU", d1["type"])
        self.assertIn("before the run's --timeout (6.0 s) ended it", f[0]["message"])
        self.assertIn("This device is the CPU", f[0]["hint"])
        self.assertIn("still fp32 exact pass: running the kernel when the run's --timeout ended", f[0]["hint"])
        self.assertNotIn("dmesg", f[0]["hint"])
        return d1

    def test_hang_on_one_device_keeps_the_others(self):
        # One child tests the platform's two devices side by side; one hangs: the child answers at
        # its deadline with the other device's result, and names the stage the hung one was in.
        t0 = time.monotonic()
        r = self.smoke("--timeout", "6", devices="pthread pthread", binary=TEST_BINARY, expect_rc=1,
                       GC_SMOKE_TEST_HANG_AT="fp32 exact pass: running the kernel", GC_SMOKE_TEST_ONLY_DEVICE="0:1")
        self.assert_second_of_two_hung(r, t0)

    def test_crash_on_one_of_four_reruns_each_alone(self):
        # The platform's child dies with the crashing device; each device runs again alone: the three
        # healthy ones pass, the culprit is named with its stage.
        # --timeout 60: what is tested is who reruns, not how fast. Under ASan the crashing child's
        # report (symbolised, with LLVM mapped) once took most of the default 15 s on a loaded CI
        # machine, and the reruns then ran out of time (all four "timeout").
        r = self.smoke("--timeout", "60", devices=FOUR, binary=TEST_BINARY, expect_rc=1,
                       GC_SMOKE_TEST_CRASH_AT="building the kernel", GC_SMOKE_TEST_ONLY_DEVICE="0:2")
        devs = r.json["smoke"]["devices"]
        self.assertEqual([d["status"] for d in devs], ["pass", "pass", "crash", "pass"])
        self.assertEqual(devs[2]["stage"], "building the kernel")
        self.assertEqual([x["subject"] for x in r.findings("smoke.crash")], ["0:2 " + devs[2]["name"]])

    def test_check_includes_smoke(self):
        r = self.run_json(env=self.env(), timeout=300)
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertEqual(r.json["smoke"]["status"], "ok")
        self.assertEqual(r.json["smoke"]["devices"][0]["status"], "pass")
        r = self.run_json("--no-smoke", env=self.env())
        self.assertEqual(r.json["smoke"]["status"], "skipped")

    # ---- The smoke test inside the child the icd and opencl probes share (issue 17, probes/clonce/clonce.c) ----

    def vendors(self, *fakes):
        """A vendors directory holding PoCL's .icd (platform 0 alone) and the fake drivers FAKES."""
        d = tempfile.mkdtemp(prefix="gc-smoke-vendors-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", d)
        for name in fakes:
            with open(os.path.join(d, name + ".icd"), "w") as f:
                f.write(os.environ["GC_FAKE_ICD_" + name.upper()] + "\n")
        return d

    def check_with(self, *args, binary=None, devices="pthread", expect_rc=None, **extra):
        old = gctest.GPUCHECKUP
        gctest.GPUCHECKUP = binary or old
        try:
            return self.run_json("check", *args, env=self.env(devices, **extra), expect_rc=expect_rc, timeout=300)
        finally:
            gctest.GPUCHECKUP = old

    @staticmethod
    def untimed(o):
        """O without what varies from run to run: every *_ms key, GFLOPS, and the summary text that shows
        them; which clock timed the kernel (the profiling one is checked against the host's, which a
        loaded machine stretches), and which of the devices of one model built the kernel from source
        (the first thread there)."""
        if isinstance(o, dict):
            return {k: SmokeTests.untimed(v) for k, v in o.items()
                    if not k.endswith("_ms") and k not in ("gflops", "gflops_reason", "timer", "timer_reason",
                                                           "summary", "build_from")}
        if isinstance(o, list):
            return [SmokeTests.untimed(v) for v in o]
        return o

    def run_counting_loads(self, run, name):
        """PoCL beside the fake driver "working", which records every process that loads it: RUN(env,
        pocl) with PoCL's platform index, then (its result, the number of processes that loaded the
        fake, the environment)."""
        log = os.path.join(self.cache, "loads-%s-%d.log" % (name, os.getpid()))
        self.addCleanup(lambda: os.path.exists(log) and os.unlink(log))
        env = {"OCL_ICD_VENDORS": self.vendors("working"), "GC_FAKE_ICD_LOG": log}
        cl = self.run_json("opencl", env=self.env(**env), expect_rc=0)
        pocl = [p["index"] for p in cl.json["opencl"]["platforms"] if p["name"] == "Portable Computing Language"][0]
        os.unlink(log)
        r = run(env, pocl)
        with open(log) as f:
            pids = {line.split()[0] for line in f if line.strip()}
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "ok")
        d = r.json["smoke"]["devices"]
        self.assertEqual([(x["platform_index"], x["device_index"]) for x in d], [(pocl, 0)])
        self.assert_passed(d[0])
        return r, len(pids), env, pocl

    def test_check_tests_the_devices_in_the_shared_child(self):
        # A full check loads the fake once, in the one child through libOpenCL (the icd probe's
        # loader part and its answer for each driver, opencl, and the smoke test of PoCL's device);
        # the icd probe used to fork a child of its own for each driver, and the smoke test one more
        # that loaded every driver again.
        r, loads, env, pocl = self.run_counting_loads(
            lambda env, pocl: self.check_with("--device", "%d:0" % pocl, **env), "check")
        self.assertEqual(loads, 1, repr(r))
        # the same answer as the smoke command gives, timings aside
        alone = self.smoke("--device", "%d:0" % pocl, expect_rc=0, **env)
        self.assertEqual(self.untimed(r.json["smoke"]), self.untimed(alone.json["smoke"]))

    def test_smoke_command_loads_the_drivers_once(self):
        # The smoke command runs the opencl probe too (its devices come from there): the child that
        # enumerates goes on to test them, as in a full check. It used to enumerate in one child,
        # then test in one child per platform that loaded every driver again.
        r, loads, env, pocl = self.run_counting_loads(
            lambda env, pocl: self.smoke("--device", "%d:0" % pocl, expect_rc=0, **env), "smoke")
        self.assertEqual(loads, 1, repr(r))
        self.assertNotIn("icd", r.json)
        # the opencl section is the one the opencl command gives (--device filters it too), timings aside
        cl = self.run_json("opencl", "--device", "%d:0" % pocl, env=self.env(**env), expect_rc=0)
        self.assertEqual(self.untimed(r.json["opencl"]), self.untimed(cl.json["opencl"]))

    def test_check_four_devices_as_the_smoke_command(self):
        # Four devices of one platform in the shared child: built once and loaded from the binary by
        # the others, exactly as the per-platform child does it.
        env = {"OCL_ICD_VENDORS": self.vendors()}
        alone = self.smoke(devices=FOUR, expect_rc=0, **env)  # first: the check's build is then warm
        r = self.check_with(devices=FOUR, **env)
        self.assertEqual([x["status"] for x in r.json["smoke"]["devices"]], ["pass"] * 4)
        self.assertEqual(self.untimed(r.json["smoke"]), self.untimed(alone.json["smoke"]))
        # one compiles the source, the others build its binary (a cold build may outlast the others'
        # wait, SMOKE_SHARE_WAIT_MS, on a loaded machine: then they compile it too)
        self.assertEqual(sorted(x["build_from"] for x in r.json["smoke"]["devices"]), ["binary"] * 3 + ["source"])
        froms = [x["build_from"] for x in alone.json["smoke"]["devices"]]
        self.assertEqual(froms.count("source") + froms.count("binary"), 4, froms)
        r = self.check_with("--smoke=gpu", devices=FOUR, **env)
        self.assertEqual([x["status"] for x in r.json["smoke"]["devices"]], ["skipped"] * 4)

    def test_crash_in_the_shared_child_is_named_and_opencl_complete(self):
        # Device 0:1's driver crashes while running the kernel, in the shared child first: the icd and
        # opencl sections keep what the child had learnt before the smoke test; the devices are tested
        # again the per-platform way (which crashes too), then each alone, which names the culprit.
        env = {"OCL_ICD_VENDORS": self.vendors(), "GC_SMOKE_TEST_CRASH_AT": "running the kernel",
               "GC_SMOKE_TEST_ONLY_DEVICE": "0:1"}
        r = self.check_with(binary=TEST_BINARY, devices="pthread pthread", expect_rc=1, **env)
        d0, d1 = r.json["smoke"]["devices"]
        self.assert_passed(d0)
        self.assertEqual(d1["status"], "crash")
        self.assertEqual(d1["stage"], "fp32 exact pass: running the kernel")
        self.assertEqual([x["subject"] for x in r.findings("smoke.crash")], ["0:1 " + d1["name"]])
        self.assertEqual(r.json["icd"]["combined"]["status"], "ok")
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "ok")
        self.assertEqual(r.json["opencl"]["counts"]["devices"], 2)
        self.assertFalse([f for f in r.json["findings"] if f["id"].startswith(("cl.", "icd.", "core."))], repr(r))
        alone = self.run_json("opencl", env=self.env("pthread pthread", **env), expect_rc=0)
        self.assertEqual(self.untimed(r.json["opencl"]), self.untimed(alone.json["opencl"]))
        # the opencl probe did not wait for the smoke part (nor its crash, nor the reruns that name it)
        self.assertLess(r.json["opencl"]["duration_ms"], r.json["smoke"]["duration_ms"])

    def test_hang_in_the_shared_child_keeps_the_others_and_the_bound(self):
        # Device 0:1 hangs in the kernel run inside the shared child: it answers at the run's deadline
        # with device 0:0's result, and the hung one is named with its stage, within --timeout.
        env = {"OCL_ICD_VENDORS": self.vendors(), "GC_SMOKE_TEST_HANG_AT": "fp32 exact pass: running the kernel",
               "GC_SMOKE_TEST_ONLY_DEVICE": "0:1"}
        t0 = time.monotonic()
        r = self.check_with("--timeout", "6", binary=TEST_BINARY, devices="pthread pthread", expect_rc=1, **env)
        d1 = self.assert_second_of_two_hung(r, t0)
        self.assertRegex(d1["detail"], r"^timed out after [0-9.]+ s while fp32 exact pass: running the kernel$")
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "ok")
        self.assertEqual(r.json["icd"]["combined"]["status"], "ok")
        self.assertEqual(r.findings("core.timeout-spent"), [])
        # the icd and opencl probes took the child's answers once it had kept them, before its smoke
        # part: neither waited for the hang (the smoke probe did), the two devices listed
        self.assertEqual(r.json["opencl"]["counts"]["devices"], 2)
        for name in ("icd", "opencl"):
            self.assertLess(r.json[name]["duration_ms"], 3000, name)
        self.assertGreater(r.json["smoke"]["duration_ms"], 3000)

    def test_root_needs_live(self):
        t = self.make_tree()
        r = self.smoke("--root", t.root, expect_rc=0)
        self.assertEqual(r.json["smoke"]["status"], "skipped")
        r = self.smoke("--root", t.root, "--live", "--smoke-size", "4", expect_rc=0)
        self.assertEqual(r.json["smoke"]["devices"][0]["status"], "pass")


if __name__ == "__main__":
    gctest.main()
