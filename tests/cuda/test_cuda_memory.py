"""End-to-end tests of GPU memory held by other processes (NVML), --expect-idle and --require free-memory>=NGiB."""
import getpass
import os
import subprocess
import sys

import gctest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cuda import CudaBase  # noqa: E402


class MemoryTests(CudaBase):
    """The fake NVML's processes (GC_FAKE_NVML_PROCS) on a fake H100 (81559 MiB)."""

    def other_process(self):
        """A live process of ours that is not gpucheckup's: NVML names its pid, /proc tells who it is."""
        p = subprocess.Popen(["sleep", "300"])
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        return p.pid

    def run_mem(self, procs, *extra, expect_rc=None):
        t = self.tree()
        env = {"GC_FAKE_NVML_PROCS": procs} if procs is not None else {"GC_FAKE_NVML_PROCS": None}
        return self.cuda(t, self.libdir(), "--no-smoke", *extra, env=env, expect_rc=expect_rc)

    def mem_findings(self, r):
        return [f for f in r.json["findings"] if f["id"].startswith(("cuda.nvml-memory", "cuda.nvml-not-idle"))]

    def test_memory_and_no_process(self):
        r = self.run_mem(None, expect_rc=0)
        self.assertEqual(self.mem_findings(r), [], repr(r))
        dev = r.json["cuda"]["nvml"]["devices"][0]
        self.assertEqual(dev["memory"]["total"], 81559 * 1024 * 1024)
        self.assertEqual(dev["memory"]["used"], 512 * 1024 * 1024)
        self.assertEqual(dev["memory"]["free"], (81559 - 512) * 1024 * 1024)
        self.assertEqual(dev["processes"], [])
        self.assertEqual(dev["held_by_others_bytes"], 0)
        self.assertEqual([(m["name"], m["labels"], m["value"]) for m in r.json["cuda"]["metrics"]],
                         [("gpu_memory_held_bytes", {"gpu": "0000:01:00.0"}, 0)])

    def test_most_memory_held_is_a_warning_naming_the_process(self):
        pid = self.other_process()
        r = self.run_mem("%d:60000" % pid)
        fs = self.mem_findings(r)
        self.assertEqual([(f["id"], f["severity"], f["subject"]) for f in fs],
                         [("cuda.nvml-memory-held-most", "warning", "0000:01:00.0")], repr(r))
        self.assertIn("1 other process holds 58.6 GiB of 79.6 GiB", fs[0]["message"])
        self.assertIn("pid %d (sleep)" % pid, fs[0]["message"])
        ev = {e["source"]: e["value"] for e in fs[0]["evidence"]}
        self.assertRegex(ev["pid %d" % pid], r"^60000 MiB, user %s, command sleep, started \d{4}-\d\d-\d\d \d\d:\d\d UTC$"
                         % getpass.getuser())
        p = r.json["cuda"]["nvml"]["devices"][0]["processes"][0]
        self.assertEqual((p["pid"], p["kind"], p["ours"], p["command"]), (pid, "compute", False, "sleep"))

    def test_prometheus_has_the_held_memory(self):
        pid = self.other_process()
        t = self.tree()
        env = {"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_NVML_PROCS": "%d:2048,parent:4096" % pid,
               "GC_FAKE_NVML_GPUS": "1", "GC_FAKE_NVML_BUSIDS": t.gc_gpus[0], "GC_FAKE_CUDA_MODE": None,
               "GC_FAKE_CUDA_INIT": None}
        out = gctest.run("cuda", "--root", t.root, "--live", "--no-smoke", "--format=prometheus", env=env).stdout
        self.assertIn("# TYPE gpucheckup_gpu_memory_held_bytes gauge\n", out)
        self.assertIn('gpucheckup_gpu_memory_held_bytes{gpu="0000:01:00.0"} %d\n' % (2048 * 1024 * 1024), out)

    def test_some_memory_held_is_information(self):
        pid = self.other_process()
        r = self.run_mem("%d:1000:g,999999:na" % pid, expect_rc=0)
        fs = self.mem_findings(r)
        self.assertEqual([(f["id"], f["severity"]) for f in fs], [("cuda.nvml-memory-held", "info")], repr(r))
        self.assertIn("2 other processes hold 1.0 GiB", fs[0]["message"])
        ev = {e["source"]: e["value"] for e in fs[0]["evidence"]}
        self.assertIn("not visible here", ev["pid 999999"])
        self.assertIn("memory not reported", ev["pid 999999"])

    def test_gpucheckup_itself_never_counts(self):
        r = self.run_mem("parent:70000", "--expect-idle", expect_rc=0)
        self.assertEqual(self.mem_findings(r), [], repr(r))
        self.assertIs(r.json["cuda"]["nvml"]["devices"][0]["processes"][0]["ours"], True)

    def test_expect_idle(self):
        r = self.run_mem(None, "--expect-idle", expect_rc=0)
        self.assertEqual(self.mem_findings(r), [], repr(r))
        pid = self.other_process()
        r = self.run_mem("%d:100" % pid, "--expect-idle", expect_rc=1)
        fs = self.mem_findings(r)
        self.assertEqual([(f["id"], f["severity"]) for f in fs], [("cuda.nvml-not-idle", "error")], repr(r))
        # the health contract's line names it (an epilog's drain reason)
        t = self.tree()
        env = {"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_NVML_PROCS": "%d:100" % pid, "GC_FAKE_NVML_GPUS": "1",
               "GC_FAKE_NVML_BUSIDS": t.gc_gpus[0], "GC_FAKE_CUDA_MODE": None, "GC_FAKE_CUDA_INIT": None}
        h = gctest.run("cuda", "--root", t.root, "--live", "--no-smoke", "--expect-idle", "--health", env=env)
        self.assertEqual(h.stdout.split()[:3], ["NOT-READY", "cuda.nvml-not-idle", "0000:01:00.0"], repr(h))

    def test_free_memory_requirement(self):
        pid = self.other_process()
        r = self.run_mem("%d:60000" % pid, "--require", "free-memory>=16GiB,free-memory>=24GiB", expect_rc=1)
        q = {x["name"]: x for x in r.json["verdict"]["requirements"]}
        self.assertTrue(q["free-memory>=16GiB"]["met"], repr(q))
        self.assertFalse(q["free-memory>=24GiB"]["met"], repr(q))
        self.assertIn("least free memory of the 1 GPU NVML reports is 20.6 GiB (0000:01:00.0), 24 GiB needed",
                      q["free-memory>=24GiB"]["detail"])
        r = self.run_mem(None, "--require", "free-memory>=4GiB", expect_rc=0)
        self.assertTrue(r.json["verdict"]["requirements"][0]["met"])

    def test_throttling_history_and_temperature(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), "--no-smoke", expect_rc=0)
        dev = r.json["cuda"]["nvml"]["devices"][0]
        self.assertEqual((dev["temperature"], dev["temperature_slowdown"]), (34, 87))
        self.assertEqual(dev["violation_seconds"], {"power": 0, "thermal": 0})
        self.assertEqual(r.findings("cuda.nvml-throttled-past"), [], repr(r))
        r = self.cuda(t, self.libdir(), "--no-smoke", env={"GC_FAKE_NVML_VIOLATION_S": "7500,41"}, expect_rc=0)
        f = r.findings("cuda.nvml-throttled-past")
        self.assertEqual([x["severity"] for x in f], ["info"], repr(r))
        self.assertIn("2 h 5 min for power and 41 s for heat", f[0]["message"])
        # a slowdown now is the warning it was, with the temperature against the slowdown threshold
        r = self.cuda(t, self.libdir(), "--no-smoke", env={"GC_FAKE_NVML_MODE": "thermal", "GC_FAKE_NVML_TEMP": "89"},
                      expect_rc=0)
        f = r.findings("cuda.nvml-clocks-slowdown")
        self.assertEqual([x["severity"] for x in f], ["warning"], repr(r))
        self.assertIn({"source": "nvmlDeviceGetTemperature", "value": "89 C (slowdown at 87 C)"}, f[0]["evidence"])

    def test_cuinit_999_after_resume_names_nvidia_uvm(self):
        env = {"GC_FAKE_CUDA_INIT": "999", "GC_FAKE_NVML_MODE": "init-unknown"}
        for success, resumed in (("2\n", True), ("0\n", False), (None, False)):
            with self.subTest(success=success):
                t = self.tree()
                if success is not None:
                    p = os.path.join(t.root, "sys/power/suspend_stats")
                    os.makedirs(p, exist_ok=True)
                    with open(os.path.join(p, "success"), "w") as fh:
                        fh.write(success)
                t.t.write("/proc/driver/nvidia/params", "ResmanDebugLevel: 4294967295\nPreserveVideoMemoryAllocations: 0\n")
                r = self.cuda(t, self.libdir(), "--no-smoke", env=env, expect_rc=1)
                lost = r.findings("cuda.uvm-lost-after-resume")
                init = r.findings("cuda.init-failed")
                nvml = r.findings("cuda.nvml-init-failed")
                self.assertEqual(len(init), 1, repr(r))
                self.assertEqual(len(nvml), 1, repr(r))
                if not resumed:
                    self.assertEqual(lost, [], repr(r))
                    self.assertIsNone(init[0]["caused_by"])
                    continue
                self.assertEqual([(f["severity"], f["subject"]) for f in lost], [("error", "nvidia_uvm")], repr(r))
                self.assertIn("resumed from suspend 2 times since boot", lost[0]["message"])
                self.assertIn("sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm", lost[0]["hint"])
                self.assertIn("NVreg_PreserveVideoMemoryAllocations=1", lost[0]["hint"])
                self.assertIn({"source": "/proc/driver/nvidia/params", "value": "PreserveVideoMemoryAllocations: 0 (not set)"},
                              lost[0]["evidence"])
                self.assertEqual(init[0]["caused_by"], {"id": "cuda.uvm-lost-after-resume", "subject": "nvidia_uvm"})
                self.assertEqual(nvml[0]["caused_by"], {"id": "cuda.uvm-lost-after-resume", "subject": "nvidia_uvm"})

    def test_help_and_completion_offer_them(self):
        h = gctest.run("--help").stdout
        self.assertIn("free-memory>=NGiB", h)
        self.assertIn("--expect-idle", h)
        c = gctest.run("--completion=bash").stdout
        self.assertIn("--expect-idle", c)


if __name__ == "__main__":
    gctest.main()
