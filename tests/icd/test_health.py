"""End-to-end tests of --health and OpenCL drivers for absent hardware (issue 37 part 2, the speed policy's rule 2):
without the driver's GPU on the bus --health loads it nowhere (neither alone nor through the loader), the full check
still loads and names it, and with the GPU there (a fake tree's bus) --health loads it as before."""
import json
import os
import shutil
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(os.environ["GPUCHECKUP_SOURCE_ROOT"], "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the fake sysfs trees of the pci tests)

SEGV = os.environ["GC_FAKE_ICD_SEGV"]
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"
CLEAN = {"OCL_ICD_VENDORS": None, "OPENCL_VENDOR_PATH": None, "OCL_ICD_FILENAMES": None,
         "GPUCHECKUP_LIBOPENCL": None, "LD_LIBRARY_PATH": None, "OPENCL_LAYERS": None, "POCL_DEVICES": "pthread",
         "RUSTICL_ENABLE": None, "OCL_ICD_ASSUME_ICD_EXTENSION": None}


class HealthIcdCase(gctest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gc-health-icd-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.log = os.path.join(self.tmp, "loads.log")
        # The fake driver that crashes when asked for its platforms, under NEO's library name.
        self.neo = os.path.join(self.tmp, "libigdrcl.so")
        os.symlink(SEGV, self.neo)
        with open(POCL_ICD, "rb") as f:
            self.icds = {"intel.icd": (self.neo + "\n").encode(), "pocl.icd": f.read()}

    def env(self, **kw):
        e = dict(CLEAN, GC_FAKE_ICD_LOG=self.log, POCL_CACHE_DIR=os.path.join(self.tmp, "pocl-cache"))
        e.update(kw)
        return e

    def loads(self):
        """How many processes loaded the fake driver since the last call (GC_FAKE_ICD_LOG)."""
        try:
            with open(self.log) as f:
                n = len({line.split()[0] for line in f if line.strip()})
        except FileNotFoundError:
            return 0
        os.unlink(self.log)
        return n

    def health(self, *args, env):
        """`ARGS --health --no-smoke`: the health line and the JSON report (validated)."""
        out = os.path.join(self.tmp, "health.json")
        h = gctest.run(*args, "--health", "--no-smoke", "--json", "-o", out, env=env)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        gctest.validate(doc)
        return h, doc

    def assert_not_loaded(self, h, doc, cpu_loaded=False):
        """NEO not loaded; PoCL, a CPU driver, loaded only with CPU_LOADED (a --require form given)."""
        icds = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}
        neo = icds["intel.icd"]
        self.assertEqual(neo["status"], "not-probed", neo)
        self.assertTrue(neo["detail"].startswith("not loaded (--health): a driver for absent hardware"), neo)
        self.assertEqual((neo["driver"]["name"], neo["driver"]["hardware"]), ("intel-neo", "absent"))
        self.assertTrue(neo["driver"]["absent_hardware"])
        pocl = icds["pocl.icd"]
        if cpu_loaded:
            self.assertEqual(pocl["status"], "ok", pocl)
        else:  # the lead's decision: --health answers for the GPUs, a CPU driver is not loaded
            self.assertEqual((pocl["status"], pocl["driver"]["hardware"]), ("not-probed", "not-needed"), pocl)
            self.assertTrue(pocl["detail"].startswith("CPU driver, not loaded (--health)"), pocl)
        (f,) = [f for f in doc["findings"] if f["id"] == "icd.absent-hardware"]
        self.assertIn("not loaded (--health)", f["message"])
        self.assertEqual(f["severity"], "info")
        ids = {f["id"] for f in doc["findings"]}
        self.assertFalse(ids & {"icd.crash", "icd.conflict", "cl.enumeration-crash", "cl.no-platforms"}, doc["findings"])
        self.assertEqual(self.loads(), 0, "the driver for absent hardware was loaded")
        if not cpu_loaded:  # nothing was left to load: said so, no 'no platform' alarm, still READY
            c = doc["icd"]["combined"]
            self.assertEqual((c["status"], c["platforms"]), ("not-run", []), c)
            self.assertIn("only CPU drivers and drivers for absent hardware", c["detail"])
            self.assertTrue(h.stdout.startswith("READY"), h)
            return
        # the loader read the others: PoCL's platform, and no false alarm for the one not loaded
        self.assertEqual(doc["icd"]["combined"]["status"], "ok")
        self.assertEqual([p["name"] for p in doc["icd"]["combined"]["platforms"]], ["Portable Computing Language"])


class LiveTests(HealthIcdCase):
    """This machine's bus, a vendors directory of its own (OCL_ICD_VENDORS)."""

    def vendors(self):
        d = os.path.join(self.tmp, "vendors")
        os.makedirs(d)
        for name, content in self.icds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(content)
        return d

    def test_health_loads_no_driver_for_absent_hardware(self):
        d = self.vendors()
        env = self.env(OCL_ICD_VENDORS=d)
        h, doc = self.health("icd", env=env)
        hw = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}["intel.icd"]["driver"]["hardware"]
        if hw != "absent":  # an Intel GPU here (or a bus not listed in full): loaded as before, and it crashes
            self.assertIn("icd.crash", {f["id"] for f in doc["findings"]}, doc["findings"])
            self.assertGreater(self.loads(), 0)
            return
        self.assert_not_loaded(h, doc)
        # A --require form loads CPU drivers as before (a CPU device may meet it): PoCL, not NEO.
        h, doc = self.health("icd", "--require", "sse2", env=env)
        self.assert_not_loaded(h, doc, cpu_loaded=True)
        # The check, where the icd and opencl probes share the child through the loader: the same, and the
        # enumeration records the run's own OCL_ICD_VENDORS (not the directory the child's loader read).
        h, doc = self.health("check", "--require", "sse2", env=env)
        self.assert_not_loaded(h, doc, cpu_loaded=True)
        self.assertTrue(h.stdout.startswith("READY"), h)
        self.assertEqual(doc["opencl"]["enumeration"]["status"], "ok")
        self.assertEqual([p["name"] for p in doc["opencl"]["platforms"]], ["Portable Computing Language"])
        self.assertEqual(doc["opencl"]["environment"]["OCL_ICD_VENDORS"], d)
        self.assertEqual(sorted(os.listdir(d)), ["intel.icd", "pocl.icd"])
        # Without one, the check's loader loads nothing: the enumeration says why, no cl.no-platforms, READY.
        h, doc = self.health("check", env=env)
        self.assert_not_loaded(h, doc)
        self.assertEqual(doc["opencl"]["platforms"], [])
        self.assertIn("none loaded (--health)", doc["opencl"]["enumeration"]["not_loaded"])
        self.assertEqual(doc["opencl"]["environment"]["OCL_ICD_VENDORS"], d)
        # The text: one folded line, and the loader's line says what it left out.
        out = os.path.join(self.tmp, "health.txt")
        gctest.run("check", "--health", "--no-smoke", "-v", "-o", out, env=env)
        with open(out, encoding="utf-8") as f:
            txt = f.read()
        self.assertIn("no driver loaded: 1 CPU driver and 1 driver for absent hardware not loaded (--health)", txt)
        self.assertIn("intel.icd: not loaded (--health): a driver for absent hardware", txt)
        self.assertIn("pocl.icd: CPU driver, not loaded (--health)", txt)
        self.assertIn("OpenCL: not checked: only CPU drivers and drivers for absent hardware", txt)
        gctest.run("icd", "--health", "--no-smoke", "--require", "sse2", "-v", "-o", out, env=env)
        with open(out, encoding="utf-8") as f:
            self.assertIn("1 platform; 1 driver for absent hardware not loaded (--health)", f.read())
        self.loads()
        # The full check loads every driver, as every OpenCL program's loader does: the crash is named.
        full = self.run_json("icd", env=env)
        (crash,) = full.findings("icd.crash")
        self.assertEqual(os.path.basename(crash["subject"]), "intel.icd")
        self.assertGreater(self.loads(), 0)

    def test_environment_the_plan_cannot_stand_for_loads_every_driver(self):
        # OCL_ICD_FILENAMES adds libraries to the directory (Khronos's loader): --health then loads all, as before.
        d = self.vendors()
        h, doc = self.health("icd", env=self.env(OCL_ICD_VENDORS=d, OCL_ICD_FILENAMES=self.neo))
        self.assertIn("icd.crash", {f["id"] for f in doc["findings"]}, doc["findings"])
        self.assertGreater(self.loads(), 0)
        self.assertFalse(h.stdout.startswith("READY"), h)

    def test_nothing_left_to_load_loads_nothing(self):
        # Only a driver for absent hardware: --health loads none (the lead's decision replaced h37c's 'load them
        # all'), and the empty loader is no 'no platform' alarm; the full check loads it and names its crash.
        del self.icds["pocl.icd"]
        env = self.env(OCL_ICD_VENDORS=self.vendors())
        h, doc = self.health("icd", env=env)
        (e,) = doc["icd"]["icds"]
        self.assertEqual(e["status"], "not-probed", e)
        self.assertEqual(doc["icd"]["combined"]["status"], "not-run")
        self.assertEqual(self.loads(), 0)
        self.assertTrue(h.stdout.startswith("READY"), h)
        full = self.run_json("icd", env=env)
        self.assertEqual(len(full.findings("icd.crash")), 1, full)
        self.assertGreater(self.loads(), 0)


class TreeTests(HealthIcdCase):
    """A fake root (--root --live): its vendors directory, and a bus with no GPU or an Intel one."""

    def tree(self, intel_gpu):
        t = PciTree(self.make_tree())
        for name, content in self.icds.items():
            t.t.write("/etc/OpenCL/vendors/" + name, content)
        if intel_gpu:
            t.device("0000:00:02.0", 0x8086, 0x46a6, 0x030000, driver="i915", boot_vga=1, drm=("card0", "renderD128"))
            t.module("i915")
        return t

    def test_without_an_intel_gpu_it_is_not_loaded(self):
        t = self.tree(intel_gpu=False)
        h, doc = self.health("icd", "--root", t.root, "--live", env=self.env())
        self.assert_not_loaded(h, doc)

    def test_with_an_intel_gpu_it_is_loaded_under_health_too(self):
        t = self.tree(intel_gpu=True)
        h, doc = self.health("icd", "--root", t.root, "--live", env=self.env())
        neo = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}["intel.icd"]
        self.assertEqual((neo["status"], neo["driver"]["hardware"]), ("crash", "present"), neo)
        self.assertIn("icd.crash", {f["id"] for f in doc["findings"]})
        self.assertNotIn("icd.absent-hardware", {f["id"] for f in doc["findings"]})
        self.assertGreater(self.loads(), 0)
        self.assertFalse(h.stdout.startswith("READY"), h)

    def test_nvidia_gpu_with_only_pocl_is_not_worse_than_the_full_check(self):
        # An NVIDIA GPU without its driver's userspace, PoCL the only .icd: --health loads no driver (PoCL is a
        # CPU driver) and adds no finding the full check lacks ('no platform' above all), nor a worse severity.
        del self.icds["intel.icd"]
        t = self.tree(intel_gpu=False)
        t.device("0000:3b:00.0", 0x10de, 0x2330, 0x030200, driver="nvidia")
        t.module("nvidia")
        args = ("check", "--root", t.root, "--live")
        h, doc = self.health(*args, env=self.env())
        (pocl,) = doc["icd"]["icds"]
        self.assertTrue(pocl["detail"].startswith("CPU driver, not loaded (--health)"), pocl)
        full = self.run_json(*args, "--no-smoke", env=self.env(), expect_rc=1)
        worst = {}
        rank = {"info": 0, "warning": 1, "error": 2}
        for f in full.json["findings"]:
            worst[f["id"]] = max(worst.get(f["id"], 0), rank[f["severity"]])
        for f in doc["findings"]:
            self.assertIn(f["id"], worst, f)
            self.assertLessEqual(rank[f["severity"]], worst[f["id"]], f)
        self.assertTrue(h.stdout.startswith("NOT-READY"), h)  # the GPU's own faults stay named


if __name__ == "__main__":
    gctest.main()
