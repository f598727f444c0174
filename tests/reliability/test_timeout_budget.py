"""The time budget (issue 17): --timeout bounds the whole run, end to end. Whatever hangs and wherever
(the loader, a driver's enumeration, drivers loaded together, the smoke test's kernel build, kernel run
or clFinish), the run ends within --timeout plus a second, the child that was running at the deadline
is named in a finding with where it was, what had no time left to run is reported by
core.timeout-spent, and the report is complete and schema-valid (run_json validates every document).

The hangs in cuInit and cuModuleLoad are tested with the fake libcuda in tests/cuda/test_cuda.py,
which builds the fake NVIDIA tree they need."""
import os
import shutil
import subprocess
import tempfile
import time

import gctest

T = 2.0      # --timeout for the driver cases
T_SMOKE = 8.0  # the smoke cases: the hang must come after a (warm) PoCL build, on a loaded machine under ASan
# The "plus a second" of the issue: everything outside the isolated children (starting the process,
# the probes' own work after the deadline, writing the report). A correctness bound, not a speed one:
# a run that waited for a second batch of children would take another --timeout.
SLACK = 1.0


if gctest.SANITIZED:
    SLACK = 1.5  # still less than the --timeout (T) a second sequential batch would add
TEST_BINARY = os.environ["GC_SMOKE_TEST_BINARY"]


class TimeoutBudgetTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cache = tempfile.mkdtemp(prefix="gc-budget-pocl-")
        # Warm PoCL's kernel cache, so the smoke cases reach the stage they hang in well in time.
        subprocess.run([TEST_BINARY, "smoke", "--json"], env={**os.environ, **cls.pocl_env()},
                       capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache, ignore_errors=True)

    @classmethod
    def pocl_env(cls, **extra):
        return {"POCL_CACHE_DIR": cls.cache, "POCL_DEVICES": "pthread", **extra}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gc-budget-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def vendors(self, *libs):
        d = os.path.join(self.dir, "vendors")
        os.makedirs(d, exist_ok=True)
        for i, lib in enumerate(libs):
            with open(os.path.join(d, "%02d-%s.icd" % (i, os.path.basename(lib))), "w") as f:
                f.write(lib + "\n")
        return d

    def timed(self, *args, env, t=T, binary=None):
        old = gctest.GPUCHECKUP
        if binary:
            gctest.GPUCHECKUP = binary
        try:
            start = time.monotonic()
            r = self.run_json("--timeout", str(t), *args, env=env, timeout=120)
            elapsed = time.monotonic() - start
        finally:
            gctest.GPUCHECKUP = old
        self.assertIn(r.rc, (0, 1), repr(r))
        # the hang was really waited for, and the run stopped at the one deadline
        self.assertGreaterEqual(elapsed, t * 0.9, repr(r))
        self.assertLessEqual(elapsed, t + SLACK, "the run took %.2f s with --timeout %.1f" % (elapsed, t))
        for name, sec in r.json.items():
            if isinstance(sec, dict) and "duration_ms" in sec:
                self.assertLessEqual((sec["duration_ms"] or 0) / 1000.0, t + SLACK, name)
        return r, elapsed

    def assert_spent(self, r, *probes):
        """PROBES had no time left: skipped, saying why, each named by core.timeout-spent."""
        spent = sorted(f["subject"] for f in r.findings("core.timeout-spent"))
        for p in probes:
            self.assertIn(p, spent, repr(r))
            if r.json[p]["status"] == "skipped":
                self.assertIn("--timeout", r.json[p]["reason"])

    def test_hang_in_a_drivers_enumeration(self):
        # clIcdGetPlatformIDsKHR never returns: the icd probe's children hang until the deadline.
        env = {"OCL_ICD_VENDORS": self.vendors(os.environ["GC_FAKE_ICD_HANG"], os.environ["GC_FAKE_ICD_WORKING"])}
        r, elapsed = self.timed(env=env)
        f = r.findings("icd.hang")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("libgcfakeicd-hang.so", f[0]["message"])
        self.assertIn("clIcdGetPlatformIDsKHR", f[0]["message"])  # the call it was in
        # opencl ran beside icd (both depend on pci only): its enumeration hung on the same driver,
        # and was named; smoke, which needs opencl's device list, had no time left
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "timeout", repr(r))
        self.assertEqual(len(r.findings("cl.enumeration-hang")), 1, repr(r))
        self.assert_spent(r, "smoke")
        print("check, a driver hanging in its enumeration: %.2f s (--timeout %.1f)" % (elapsed, T))

    def test_hang_in_the_loader(self):
        # A second libOpenCL.so on LD_LIBRARY_PATH never finishes loading (the loader probe).
        libdir = os.path.join(self.dir, "lib")
        os.makedirs(libdir)
        os.symlink(os.environ["GC_REL_HANG_LOADER"], os.path.join(libdir, "libOpenCL.so"))
        env = {"OCL_ICD_VENDORS": self.vendors(os.environ["GC_FAKE_ICD_WORKING"]),
               "LD_LIBRARY_PATH": libdir + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
        r, elapsed = self.timed(env=env)
        f = r.findings("icd.loader-hang")
        # named by the file the link resolves to
        self.assertEqual([x["subject"] for x in f], [os.path.realpath(os.environ["GC_REL_HANG_LOADER"])], repr(r))
        self.assertIn("(in dlopen)", f[0]["message"])
        # icd's later batches had no time left; opencl and smoke, beside it, use the default loader
        # (not the stray copy) and finished
        self.assert_spent(r, "icd")
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "ok", repr(r))
        print("check, a loader that never loads: %.2f s (--timeout %.1f)" % (elapsed, T))

    def test_hang_when_two_drivers_meet_in_the_opencl_enumeration(self):
        # Two drivers that each work alone hang when loaded together: the opencl probe's enumeration
        # (through the loader) hangs.
        env = {"OCL_ICD_VENDORS": self.vendors(os.environ["GC_REL_TOGETHER_A"], os.environ["GC_REL_TOGETHER_B"])}
        r, elapsed = self.timed("opencl", env=env)
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "timeout", repr(r))
        self.assertEqual(len(r.findings("cl.enumeration-hang")), 1, repr(r))
        # the whole check: the icd probe finds the pair within the same single budget
        r, elapsed = self.timed(env=env)
        self.assertTrue(r.findings("icd.conflict") or r.findings("core.timeout-spent"), repr(r))
        print("check, two drivers that hang together: %.2f s (--timeout %.1f)" % (elapsed, T))

    def smoke_hang(self, stage, expect_stage, command="smoke"):
        r, elapsed = self.timed(command, env=self.pocl_env(GC_SMOKE_TEST_HANG_AT=stage), t=T_SMOKE, binary=TEST_BINARY)
        self.assertEqual(r.json["smoke"]["status"], "ok", repr(r))
        d = r.json["smoke"]["devices"][0]
        self.assertEqual(d["status"], "timeout", repr(r))
        self.assertEqual(d["stage"], expect_stage)
        f = r.findings("smoke.timeout")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn({"source": "stage", "value": expect_stage}, f[0]["evidence"])
        self.assertIn({"source": "--timeout", "value": "%.1f s" % T_SMOKE}, f[0]["evidence"])
        # the probe before smoke ran in full: the budget was spent in the smoke test alone
        self.assertEqual(r.json["opencl"]["status"], "ok")
        self.assertEqual(r.json["opencl"]["enumeration"]["status"], "ok")
        if command == "check":
            # the device was tested inside the child the icd and opencl probes share (probes/clonce/clonce.c):
            # its hang costs them nothing, and the smoke probe had no child of its own to start
            self.assertEqual(r.json["icd"]["combined"]["status"], "ok")
            self.assertEqual(r.findings("core.timeout-spent"), [], repr(r))
            # ... nor their time: they took its answers before its smoke part, which only smoke waited for
            for name in ("icd", "opencl"):
                self.assertLess(r.json[name]["duration_ms"], T_SMOKE * 1000 / 2, name)
            self.assertGreater(r.json["smoke"]["duration_ms"], T_SMOKE * 1000 / 2)
        print("%s, hanging at %s: %.2f s (--timeout %.1f)" % (command, expect_stage, elapsed, T_SMOKE))

    def test_hang_in_the_program_build(self):
        self.smoke_hang("building the kernel", "building the kernel")

    def test_hang_in_the_kernel_run(self):
        self.smoke_hang("fp32 exact pass: running the kernel", "fp32 exact pass: running the kernel")

    def test_hang_in_clfinish(self):
        self.smoke_hang("fp32 exact pass: waiting for the upload", "fp32 exact pass: waiting for the upload (clFinish)")

    def test_check_hang_in_the_program_build(self):
        self.smoke_hang("building the kernel", "building the kernel", command="check")

    def test_check_hang_in_the_kernel_run(self):
        self.smoke_hang("fp32 exact pass: running the kernel", "fp32 exact pass: running the kernel", command="check")

    def test_check_hang_in_clfinish(self):
        self.smoke_hang("fp32 exact pass: waiting for the upload", "fp32 exact pass: waiting for the upload (clFinish)",
                        command="check")

    def test_no_process_outlives_the_run(self):
        # The timed-out children are killed with their process groups, not left behind.
        env = {"OCL_ICD_VENDORS": self.vendors(os.environ["GC_FAKE_ICD_HANG"])}
        marker = os.path.join(self.dir, "marker-%d.json" % os.getpid())
        proc = subprocess.run([gctest.GPUCHECKUP, "--json", "--timeout", str(T), "-o", marker, "icd"],
                              env={**os.environ, **env}, capture_output=True, timeout=120)
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        time.sleep(0.2)
        self.assertEqual(processes_mentioning(marker), [])


def processes_mentioning(text):
    """PIDs of live processes whose command line contains TEXT (forked children keep their parent's)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % p) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmd and state != "Z":
            pids.append(int(p))
    return pids


if __name__ == "__main__":
    gctest.main()
