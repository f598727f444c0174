"""End-to-end tests of issue 12 part 1: Debian's real GPU drivers (intel-opencl-icd, mesa-opencl-icd) installed on a
machine without their GPU are info "driver for absent hardware", never a warning; with a (fake) Intel GPU bound to
i915 the same NEO failure is an error with a vendor hint."""
import os
import re
import json
import shutil
import subprocess
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(os.environ["GPUCHECKUP_SOURCE_ROOT"], "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the fake sysfs trees of the pci tests)

SYSTEM_VENDORS = "/etc/OpenCL/vendors"
# The real .icd files of the three packages (test dependencies in .ci/packages: their absence is a failure).
REAL_ICDS = {"intel.icd": "intel-opencl-icd", "mesa.icd": "mesa-opencl-icd", "rusticl.icd": "mesa-opencl-icd",
             "pocl.icd": "pocl-opencl-icd"}
CLEAN = {"OCL_ICD_VENDORS": None, "OPENCL_VENDOR_PATH": None, "OCL_ICD_FILENAMES": None,
         "GPUCHECKUP_LIBOPENCL": None, "LD_LIBRARY_PATH": None, "OPENCL_LAYERS": None, "POCL_DEVICES": None,
         "RUSTICL_ENABLE": None, "OCL_ICD_ASSUME_ICD_EXTENSION": None}


def real_icds():
    out = {}
    for name, package in REAL_ICDS.items():
        path = os.path.join(SYSTEM_VENDORS, name)
        if not os.path.exists(path):
            raise AssertionError("%s is missing: install %s (listed in .ci/packages)" % (path, package))
        with open(path, "rb") as f:
            out[name] = f.read()
    return out


class AbsentHardwareCase(gctest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp(prefix="gc-absent-cache-")
        self.addCleanup(shutil.rmtree, self.cache, True)

    def env(self, **kw):
        e = dict(CLEAN, POCL_CACHE_DIR=self.cache)
        e.update(kw)
        return e

    def vendors_dir(self):
        d = tempfile.mkdtemp(prefix="gc-absent-vendors-")
        self.addCleanup(shutil.rmtree, d, True)
        for name, content in real_icds().items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(content)
        return d

    def tree(self, intel_gpu=False, driver="i915"):
        """A fake root: the real .icd files in its vendors directory, and a bus with no GPU or an Intel one."""
        t = PciTree(self.make_tree())
        for name, content in real_icds().items():
            t.t.write("/etc/OpenCL/vendors/" + name, content)
        if intel_gpu:
            t.device("0000:00:02.0", 0x8086, 0x46a6, 0x030000, driver=driver, boot_vga=1,
                     drm=("card0", "renderD128"))
            if driver:
                t.module(driver)
            t.t.write("/etc/group", "root:x:0:\nvideo:x:44:\nrender:x:105:\n")
            t.node("/dev/dri/card0", 0o660, gid=44)
            t.node("/dev/dri/renderD128", 0o660, gid=105)
        return t

    def icds_by_file(self, doc):
        return {os.path.basename(e["file"]): e for e in doc["icd"]["icds"]}

    def assert_no_gpu_verdict(self, r, cpu_rusticl):
        doc = r.json
        self.assertEqual(r.rc, 0, repr(r))
        self.assertTrue(doc["verdict"]["ready"])
        self.assertEqual(doc["verdict"]["counts"]["error"], 0, repr(r))
        self.assertEqual(doc["verdict"]["counts"]["warning"], 0, repr(r))
        self.assertEqual([f["id"] for f in doc["findings"] if f["severity"] != "info"], [])
        absent = r.findings("icd.absent-hardware")
        by_subject = {os.path.basename(f["subject"]): f for f in absent}
        # the two non-CPU vendors (Intel's NEO; Mesa's Clover, and rusticl unless llvmpipe makes it a CPU driver)
        self.assertEqual(sorted(by_subject), ["intel.icd", "mesa.icd"] + ([] if cpu_rusticl else ["rusticl.icd"]))
        for f in absent:
            self.assertEqual(f["severity"], "info")
            self.assertEqual(f["caused_by"]["id"], "pci.no-gpu")
            self.assertIn("/sys/bus/pci/devices", [e["source"] for e in f["evidence"]])
        self.assertIn("CL_OUT_OF_HOST_MEMORY", by_subject["intel.icd"]["message"])
        self.assertIn("Intel GPU (PCI vendor 8086)", by_subject["intel.icd"]["message"])
        icds = self.icds_by_file(doc)
        self.assertEqual(icds["intel.icd"]["driver"]["name"], "intel-neo")
        self.assertEqual(icds["intel.icd"]["driver"]["hardware"], "absent")
        self.assertTrue(icds["intel.icd"]["driver"]["absent_hardware"])
        self.assertEqual(icds["intel.icd"]["vendor"], "intel")
        self.assertEqual(icds["mesa.icd"]["driver"]["name"], "clover")
        self.assertEqual(icds["pocl.icd"]["driver"]["hardware"], "not-needed")
        self.assertFalse(icds["pocl.icd"]["driver"]["absent_hardware"])
        self.assertEqual(icds["rusticl.icd"]["driver"]["hardware"], "not-needed" if cpu_rusticl else "absent")
        # the empty Mesa platforms do not warn in the opencl probe either
        self.assertNotIn("cl.platform-no-devices", r.finding_ids())
        plats = {p["name"]: p for p in doc["opencl"]["platforms"]}
        self.assertTrue(plats["Clover"]["absent_hardware"])
        self.assertEqual(plats["rusticl"]["absent_hardware"], not cpu_rusticl)
        # the verdict's root cause is the missing GPU, never the absent-hardware drivers
        self.assertEqual(doc["verdict"]["targets"]["gpu"]["reasons"], ["pci.no-gpu"])
        self.assertNotIn("absent-hardware", doc["verdict"]["text"])
        # every CPU device computes: PoCL, and rusticl's llvmpipe when enabled
        smoke = doc["smoke"]["devices"]
        self.assertTrue(smoke and all(d["status"] == "pass" for d in smoke), smoke)
        self.assertEqual(any("llvmpipe" in (d.get("name") or "") for d in smoke), cpu_rusticl)


class NoGpuTests(AbsentHardwareCase):
    def test_real_drivers_without_their_gpu_through_ocl_icd_vendors(self):
        # The issue's own case: the real packages' .icd files, on this machine, through OCL_ICD_VENDORS.
        # (CI machines have no GPU; pci.no-gpu must say so, or the premise of this test is gone.)
        for rusticl in (None, "llvmpipe"):
            with self.subTest(RUSTICL_ENABLE=rusticl):
                r = self.run_json("--timeout", "30", env=self.env(OCL_ICD_VENDORS=self.vendors_dir(),
                                                                  RUSTICL_ENABLE=rusticl))
                self.assertIn("pci.no-gpu", r.finding_ids(), "this test needs a machine without a GPU")
                self.assert_no_gpu_verdict(r, cpu_rusticl=rusticl is not None)

    def test_fake_empty_bus(self):
        # The same verdict on a fake root with an empty PCI bus, whatever this machine has.
        t = self.tree()
        for rusticl in (None, "llvmpipe"):
            with self.subTest(RUSTICL_ENABLE=rusticl):
                r = self.run_json("--root", t.root, "--live", "--timeout", "30", env=self.env(RUSTICL_ENABLE=rusticl))
                self.assert_no_gpu_verdict(r, cpu_rusticl=rusticl is not None)

    def test_text_says_driver_for_absent_hardware(self):
        t = self.tree()
        r = gctest.run("icd", "--root", t.root, "--live", "-v", env=self.env())
        self.assertEqual(r.rc, 0, repr(r))
        self.assertRegex(r.stdout, r"\[info\] OpenCL ICD +intel\.icd: driver for absent hardware \(error: -6 "
                                   r"\(CL_OUT_OF_HOST_MEMORY\)\)")
        self.assertRegex(r.stdout, r"\[info\] OpenCL ICD +mesa\.icd: Clover \(0 devices\); driver for absent hardware")
        self.assertRegex(r.stdout, r"\[ ok \] OpenCL ICD +pocl\.icd: Portable Computing Language")
        self.assertNotIn("[FAIL]", r.stdout)
        self.assertNotIn("[warn]", r.stdout)
        # each finding under -v (rusticl's too where this machine has it)
        absent = re.findall(r"icd\.absent-hardware \(/etc/OpenCL/vendors/(\S+)\)", r.stdout)
        self.assertEqual(absent[:2], ["intel.icd", "mesa.icd"], r.stdout)
        # without -v the drivers for absent hardware are one line, and their findings one
        r = gctest.run("icd", "--root", t.root, "--live", env=self.env())
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("] OpenCL ICD     %d drivers for absent hardware: %s (-v: each)\n" % (len(absent), ", ".join(absent)),
                      r.stdout)
        self.assertNotIn("intel.icd: driver for absent hardware", r.stdout)
        self.assertRegex(r.stdout, r"\[ ok \] OpenCL ICD +pocl\.icd: Portable Computing Language")
        self.assertIn("icd.absent-hardware (%d: %s)\n" % (len(absent), ", ".join(absent)), r.stdout)
        self.assertEqual(r.stdout.count("icd.absent-hardware ("), 1, r.stdout)

    def test_unknown_hardware_keeps_the_error(self):
        # A PCI dump is not this machine's bus: nothing can be called absent, the failure stays an error.
        t = self.tree()
        dump = t.t.write("/dump.txt", "00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma] (rev 02)\n"
                                      "00: 86 80 37 12 00 00 00 00 00 00 00 06 00 00 00 00\n"
                                      "10: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
                                      "20: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
                                      "30: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n")
        r = self.run_json("icd", "--root", t.root, "--live", "--pci-dump", dump, env=self.env())
        self.assertEqual(r.rc, 1, repr(r))
        self.assertIn("icd.error", r.finding_ids())
        self.assertNotIn("icd.absent-hardware", r.finding_ids())
        self.assertEqual(self.icds_by_file(r.json)["intel.icd"]["driver"]["hardware"], "unknown")


class NvidiaTests(AbsentHardwareCase):
    """The NVIDIA row: a driver answering -1001 (the fake noplat ICD, as nvidia.icd: recognised by the file name)."""

    def nvidia_tree(self, gpu):
        t = PciTree(self.make_tree())
        if gpu:
            t.healthy_nvidia()
        t.t.write("/etc/OpenCL/vendors/nvidia.icd", os.environ["GC_FAKE_ICD_NOPLAT"] + "\n")
        return t

    def test_without_an_nvidia_gpu_it_is_absent_hardware(self):
        r = self.run_json("icd", "--root", self.nvidia_tree(gpu=False).root, "--live", env=self.env())
        self.assertEqual(r.rc, 0, repr(r))
        (f,) = r.findings("icd.absent-hardware")
        self.assertIn("NVIDIA OpenCL", f["message"])
        self.assertIn("-1001 (CL_PLATFORM_NOT_FOUND_KHR)", f["message"])
        self.assertNotIn("icd.no-platforms", r.finding_ids())
        (e,) = r.json["icd"]["icds"]
        self.assertEqual((e["status"], e["vendor"], e["driver"]["name"]), ("no-platforms", "nvidia", "nvidia"))

    def test_with_an_nvidia_gpu_it_stays_a_warning_with_the_vendor_hint(self):
        r = self.run_json("icd", "--root", self.nvidia_tree(gpu=True).root, "--live", env=self.env())
        self.assertNotIn("icd.absent-hardware", r.finding_ids())
        (f,) = r.findings("icd.no-platforms")
        self.assertEqual(f["severity"], "warning")
        self.assertIn("An NVIDIA GPU is here (PCI device 0000:01:00.0 is vendor 10de, driver nvidia)", f["hint"])
        self.assertIn("fails with CL_PLATFORM_NOT_FOUND_KHR", f["hint"])


class IntelGpuTests(AbsentHardwareCase):
    def test_neo_failure_with_an_i915_gpu_is_an_error_with_a_vendor_hint(self):
        t = self.tree(intel_gpu=True)
        r = self.run_json("icd", "--root", t.root, "--live", env=self.env())
        self.assertEqual(r.rc, 1, repr(r))
        (err,) = r.findings("icd.error")
        self.assertEqual(os.path.basename(err["subject"]), "intel.icd")
        self.assertEqual(err["severity"], "error")
        self.assertIn("CL_OUT_OF_HOST_MEMORY", err["message"])
        hint = err["hint"]
        self.assertIn("0000:00:02.0", hint)
        self.assertIn("46a6", hint)
        self.assertIn("bound to i915", hint)
        self.assertIn("render node /dev/dri/renderD128 (group render, mode 0660) is accessible", hint)
        self.assertIn("NEO older than the GPU generation", hint)
        self.assertIn("no firmware directory", hint)
        ev = {e["source"]: e["value"] for e in err["evidence"]}
        self.assertEqual(ev["/lib/firmware/i915"], "absent")
        self.assertIn("0000:00:02.0 is vendor 8086, driver i915", ev["/sys/bus/pci/devices"])
        icds = self.icds_by_file(r.json)
        self.assertEqual(icds["intel.icd"]["driver"]["hardware"], "present")
        self.assertFalse(icds["intel.icd"]["driver"]["absent_hardware"])
        # Clover drives AMD GPUs only: still a driver for absent hardware next to an Intel GPU.
        absent = [os.path.basename(f["subject"]) for f in r.findings("icd.absent-hardware")]
        self.assertEqual(absent, ["mesa.icd"])
        self.assertEqual(icds["rusticl.icd"]["driver"]["hardware"], "present")

        # With the firmware directory there, the hint says so.
        t.t.mkdir("/lib/firmware/i915")
        r = self.run_json("icd", "--root", t.root, "--live", env=self.env())
        (err,) = r.findings("icd.error")
        self.assertIn("the firmware directory is there", err["hint"])
        self.assertEqual({e["source"]: e["value"] for e in err["evidence"]}["/lib/firmware/i915"], "present")

    def test_render_node_out_of_reach_is_named(self):
        # As a user outside the render node's group (nobody; root may open anything), the hint says so.
        if os.geteuid() != 0:
            self.fail("this test runs gpucheckup as nobody through setpriv: run the suite as root, as CI does")
        t = self.tree(intel_gpu=True)
        for dirpath, dirnames, filenames in os.walk(t.root):
            os.chmod(dirpath, 0o755)
            for f in filenames:
                if not os.path.islink(os.path.join(dirpath, f)):
                    os.chmod(os.path.join(dirpath, f), 0o644 if not f.startswith(("card", "render")) else 0o660)
        os.chmod(self.cache, 0o777)
        e = dict(os.environ)
        e.update({k: v for k, v in self.env().items() if v is not None})
        for k, v in self.env().items():
            if v is None:
                e.pop(k, None)
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", gctest.GPUCHECKUP,
                               "--json", "icd", "--root", t.root, "--live"], capture_output=True, text=True, env=e,
                              timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr[-3000:])
        doc = json.loads(proc.stdout)
        gctest.validate(doc)
        (err,) = [f for f in doc["findings"] if f["id"] == "icd.error"]
        self.assertIn("render node /dev/dri/renderD128 (group render, mode 0660) is not readable and writable by "
                      "this user", err["hint"])
        self.assertIn("sudo usermod -aG render $USER", err["hint"])

    def test_intel_gpu_without_driver_names_the_kernel_driver(self):
        t = self.tree(intel_gpu=True, driver=None)
        r = self.run_json("icd", "--root", t.root, "--live", env=self.env())
        self.assertEqual(r.rc, 1, repr(r))
        (err,) = r.findings("icd.error")
        self.assertIn("bound to no driver", err["hint"])
        self.assertIn("i915 or xe", err["hint"])
        self.assertIn("pci.no-driver", r.finding_ids())


if __name__ == "__main__":
    gctest.main()
