"""The timeout budget: whatever the drivers do, a run ends within the sum of its isolated children's
timeouts plus a second. Children of one batch run side by side, so what adds up is the number of
batches a probe runs one after another, each bounded by --timeout:

  cpu     1  libcpuid on a dump or a hybrid CPU (probes/cpu/cpu_lib.c, cpu_lib_child)
  pci     0  no vendor code
  icd     3  loader identification, then every driver alone plus all through the loader, then (only
             when the loader fails and no driver alone explains it) every pair of drivers
             (probes/icd/: icd_identify, icd_probe_all, icd_check_conflict)
  opencl  1  once it lands: platform and device enumeration in one child
  smoke   2  once it lands: enumeration, then every device's run side by side

The smoke half of the issue's test (a hanging smoke child) waits for the smoke probe: the row above
is its expected budget, to be checked when it lands."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import gctest

# cuda: the driver-API + NVML batch, the library version children (cuda-libs), the smoke children.
BATCHES = {"cpu": 1, "pci": 0, "cuda": 3, "icd": 3, "opencl": 1, "smoke": 2}
T = 2.0      # --timeout for every run here
SLACK = 1.0  # the "plus a second": everything that is not an isolated child


class TimeoutBudgetTests(gctest.TestCase):
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

    def timed(self, *args, env):
        start = time.monotonic()
        r = self.run_json("--timeout", str(T), *args, env=env, timeout=120)
        elapsed = time.monotonic() - start
        self.assertIn(r.rc, (0, 1), repr(r))
        return r, elapsed

    def assert_within_budget(self, r, elapsed):
        doc = r.json
        sections = [s for s in BATCHES if s in doc]
        budget = sum(BATCHES[s] for s in sections) * T + SLACK
        self.assertLessEqual(elapsed, budget, "the run took %.2f s; budget %.1f s" % (elapsed, budget))
        for s in sections:
            took = (doc[s]["duration_ms"] or 0) / 1000.0
            self.assertLessEqual(took, BATCHES[s] * T + SLACK / 2,
                                 "%s took %.2f s, more than its %d batch(es) of %.0f s: update BATCHES if it "
                                 "now runs more isolated batches" % (s, took, BATCHES[s], T))
        return budget

    def test_hanging_driver_whole_run(self):
        env = {"OCL_ICD_VENDORS": self.vendors(os.environ["GC_FAKE_ICD_HANG"], os.environ["GC_FAKE_ICD_WORKING"])}
        r, elapsed = self.timed(env=env)
        budget = self.assert_within_budget(r, elapsed)
        # the hang was really waited for (and then killed), and reported
        self.assertGreaterEqual(elapsed, T)
        self.assertIn("icd.hang", r.finding_ids())
        print("check with a hanging driver: %.2f s (budget %.1f s)" % (elapsed, budget))

    def test_worst_case_icd_runs_three_batches(self):
        # Every icd batch hits the timeout: a second libOpenCL.so on LD_LIBRARY_PATH never finishes
        # loading (identification), the loader hangs on two drivers that each work alone (probing),
        # and so does the pair (the conflict search).
        libdir = os.path.join(self.dir, "lib")
        os.makedirs(libdir)
        os.symlink(os.environ["GC_REL_HANG_LOADER"], os.path.join(libdir, "libOpenCL.so"))
        env = {
            "OCL_ICD_VENDORS": self.vendors(os.environ["GC_REL_TOGETHER_A"], os.environ["GC_REL_TOGETHER_B"]),
            "LD_LIBRARY_PATH": libdir + ":" + os.environ.get("LD_LIBRARY_PATH", ""),
        }
        r, elapsed = self.timed("icd", env=env)
        budget = self.assert_within_budget(r, elapsed)
        self.assertGreaterEqual(elapsed, 3 * T, "expected three sequential timeouts")
        icd = r.json["icd"]
        self.assertEqual(icd["combined"]["status"], "hang", json.dumps(icd["combined"])[:2000])
        self.assertEqual(sorted(os.path.basename(x) for x in icd["combined"]["conflict"]),
                         sorted(["00-%s.icd" % os.path.basename(os.environ["GC_REL_TOGETHER_A"]),
                                 "01-%s.icd" % os.path.basename(os.environ["GC_REL_TOGETHER_B"])]))
        for e in icd["icds"]:
            self.assertEqual(e["status"], "ok", e)
        print("icd, worst case: %.2f s (budget %.1f s)" % (elapsed, budget))

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
