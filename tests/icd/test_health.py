"""End-to-end tests of --health and OpenCL drivers for absent hardware (issue 37 part 2, the speed policy's rule 2):
without the driver's GPU on the bus --health loads it nowhere (neither alone nor through the loader), the full check
still loads and names it, and with the GPU there (a fake tree's bus) --health loads it as before."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(os.environ["GPUCHECKUP_SOURCE_ROOT"], "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the fake sysfs trees of the pci tests)

SEGV = os.environ["GC_FAKE_ICD_SEGV"]
# A PCI dump (not this machine's bus: no GPU can be called absent from it): a host bridge alone.
PCI_DUMP = ("00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma] (rev 02)\n"
            "00: 86 80 37 12 00 00 00 00 00 00 00 06 00 00 00 00\n" + "".join(
                "%d0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n" % i for i in (1, 2, 3)))
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


    def test_opencl_command_alone_loads_what_the_full_health_loads(self):
        # `gpucheckup opencl --health`, no icd probe in the run: the opencl probe's loader child reads the same
        # vendors directory the full --health gives it, and the opencl section names what it left out.
        d = self.vendors()
        env = self.env(OCL_ICD_VENDORS=d)
        _, doc = self.health("icd", env=env)
        hw = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}["intel.icd"]["driver"]["hardware"]
        self.loads()
        h, doc = self.health("opencl", env=env)
        self.assertNotIn("icd", doc)
        en = doc["opencl"]["enumeration"]
        ids = {f["id"] for f in doc["findings"]}
        if hw != "absent":  # an Intel GPU here (or a bus not listed in full): NEO is loaded, as the check does
            self.assertGreater(self.loads(), 0)
            self.assertEqual(en.get("health_skipped"), [os.path.join(d, "pocl.icd")], en)
            return
        self.assertEqual(self.loads(), 0, "opencl --health loaded the driver for absent hardware")
        self.assertEqual(sorted(en["health_skipped"]), [os.path.join(d, "intel.icd"), os.path.join(d, "pocl.icd")])
        self.assertIn("none loaded (--health)", en["not_loaded"])
        self.assertEqual(doc["opencl"]["platforms"], [])
        self.assertFalse(ids & {"cl.no-platforms", "cl.enumeration-crash", "cl.cpu-only"}, doc["findings"])
        self.assertTrue(h.stdout.startswith("READY"), h)
        notes = " ".join(doc["opencl"]["notes"])
        self.assertIn("not loaded (--health): 2 OpenCL drivers", notes)
        self.assertEqual(doc["opencl"]["environment"]["OCL_ICD_VENDORS"], d)
        # With a --require form PoCL loads (a CPU device may meet it), NEO still not; the note names NEO alone.
        h, doc = self.health("opencl", "--require", "sse2", env=env)
        self.assertEqual(self.loads(), 0)
        en = doc["opencl"]["enumeration"]
        self.assertEqual(en["health_skipped"], [os.path.join(d, "intel.icd")])
        self.assertNotIn("not_loaded", en)
        self.assertEqual([p["name"] for p in doc["opencl"]["platforms"]], ["Portable Computing Language"])
        self.assertIn("not loaded (--health): 1 OpenCL driver,", " ".join(doc["opencl"]["notes"]))
        self.assertFalse({f["id"] for f in doc["findings"]} & {"cl.enumeration-crash", "cl.no-platforms"})
        # The check (the icd probe in the run) says it in the icd section instead: no health_skipped there.
        _, doc = self.health("check", "--require", "sse2", env=env)
        self.assertNotIn("health_skipped", doc["opencl"]["enumeration"])
        # Without --health the opencl command loads every driver: NEO's crash.
        full = os.path.join(self.tmp, "full.json")
        gctest.run("opencl", "--json", "-o", full, env=env)
        with open(full, encoding="utf-8") as f:
            self.assertNotIn("health_skipped", json.load(f)["opencl"]["enumeration"])
        self.assertGreater(self.loads(), 0)

    def test_health_as_another_users_process_its_loader_reads_the_vendors_directory(self):
        # --pid of nobody's process, as root: every child takes nobody's credentials, so the temporary vendors
        # directory (made by root) must be one nobody can list, else its loader finds no driver at all.
        os.chmod(self.tmp, 0o755)
        d = self.vendors()
        env = self.env(OCL_ICD_VENDORS=d)
        _, doc = self.health("icd", env=env)
        hw = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}["intel.icd"]["driver"]["hardware"]
        self.loads()
        prefix = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups") if os.geteuid() == 0 else ()
        p = subprocess.Popen([*prefix, "sleep", "120"], env={k: v for k, v in env.items() if v is not None})
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        h, doc = self.health("check", "--require", "sse2", "--pid", str(p.pid), env=env)
        self.assertEqual(doc["process"]["pid"]["run_as_it"]["credentials"], os.geteuid() == 0)
        self.assertEqual(doc["opencl"]["environment"]["OCL_ICD_VENDORS"], d)
        if hw != "absent":  # an Intel GPU here: NEO is loaded too, and crashes
            return
        self.assertEqual(self.loads(), 0)
        self.assertEqual(doc["opencl"]["enumeration"]["status"], "ok", doc["opencl"]["enumeration"])
        self.assertEqual([p["name"] for p in doc["opencl"]["platforms"]], ["Portable Computing Language"])
        self.assertFalse({f["id"] for f in doc["findings"]} & {"cl.no-platforms", "cl.enumeration-crash"})
        self.assertEqual(sorted(os.listdir(d)), ["intel.icd", "pocl.icd"])

    def test_without_pci_facts_cpu_drivers_are_not_loaded_gpu_drivers_are(self):
        # A PCI dump is not this machine's bus: NEO's hardware is unknown, so it loads (and crashes) as before;
        # PoCL is a CPU driver whatever the bus says, so --health leaves it out (as lavapipe on the Vulkan side).
        dump = os.path.join(self.tmp, "dump.txt")
        with open(dump, "w") as f:
            f.write(PCI_DUMP)
        d = self.vendors()
        env = self.env(OCL_ICD_VENDORS=d)
        h, doc = self.health("icd", "--pci-dump", dump, env=env)
        icds = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}
        self.assertEqual((icds["intel.icd"]["status"], icds["intel.icd"]["driver"]["hardware"]), ("crash", "unknown"))
        self.assertIn("icd.crash", {f["id"] for f in doc["findings"]})
        self.assertGreater(self.loads(), 0)
        pocl = icds["pocl.icd"]
        self.assertEqual((pocl["status"], pocl["driver"]["hardware"]), ("not-probed", "not-needed"), pocl)
        self.assertTrue(pocl["detail"].startswith("CPU driver, not loaded (--health)"), pocl)
        # Only PoCL: nothing is loaded, and that stays information (no 'no platform'), READY, in the check and
        # in the opencl command alone.
        os.unlink(os.path.join(d, "intel.icd"))
        for cmd in ("check", "opencl"):
            h, doc = self.health(cmd, "--pci-dump", dump, env=env)
            self.assertTrue(h.stdout.startswith("READY"), (cmd, h))
            self.assertEqual(doc["opencl"]["platforms"], [])
            self.assertIn("none loaded (--health)", doc["opencl"]["enumeration"]["not_loaded"])
            bad = [f for f in doc["findings"] if f["id"].startswith(("cl.", "icd.")) and f["severity"] != "info"]
            self.assertEqual(bad, [], cmd)
            self.assertNotIn("cl.no-platforms", {f["id"] for f in doc["findings"]})
        self.assertEqual(doc["opencl"]["enumeration"]["health_skipped"], [os.path.join(d, "pocl.icd")])
        # With a --require form PoCL loads as before.
        _, doc = self.health("opencl", "--pci-dump", dump, "--require", "sse2", env=env)
        self.assertEqual([p["name"] for p in doc["opencl"]["platforms"]], ["Portable Computing Language"])
        self.assertNotIn("health_skipped", doc["opencl"]["enumeration"])


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

    def test_without_a_pci_bus_pocl_is_not_loaded_neo_is(self):
        # A tree without /sys/bus/pci (a container): no GPU can be called absent, NEO loads and crashes as before;
        # PoCL, a CPU driver without PCI facts too, is not loaded.
        t = self.make_tree()
        for name, content in self.icds.items():
            t.write("/etc/OpenCL/vendors/" + name, content)
        h, doc = self.health("icd", "--root", t.root, "--live", env=self.env())
        self.assertFalse(doc["pci"]["bus_visible"])
        icds = {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}
        self.assertEqual((icds["intel.icd"]["status"], icds["intel.icd"]["driver"]["hardware"]), ("crash", "unknown"))
        self.assertGreater(self.loads(), 0)
        pocl = icds["pocl.icd"]
        self.assertEqual((pocl["status"], pocl["driver"]["hardware"]), ("not-probed", "not-needed"), pocl)
        self.assertFalse(h.stdout.startswith("READY"), h)

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
