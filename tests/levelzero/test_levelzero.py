"""End-to-end tests of the levelzero probe: fake Intel sysfs trees, the suite's fake Level Zero loader, and
Debian's real loader (libze1) with Intel's backend on this GPU-less machine."""
import os
import shutil
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKE = os.environ["GC_FAKE_ZE"]
ADDR = "0000:00:02.0"  # where Intel puts its integrated GPU
LIBDIR = "/usr/lib/x86_64-linux-gnu"


class LevelZeroTests(gctest.TestCase):
    def tree(self, driver="i915", backend=True, loader=True):
        t = PciTree(self.make_tree())
        # Raptor Lake-S UHD Graphics 770 (8086:a780), as the pci tests lay out a device
        t.device(ADDR, 0x8086, 0xa780, 0x030000, driver=driver, drm=("card0", "renderD128"), boot_vga=1)
        t.module(driver or "i915", 1)
        t.node("/dev/dri/card0", 0o660)
        t.node("/dev/dri/renderD128", 0o666)
        # The tree's libraries, found by the dynamic linker's default directories (ELF files: the fake)
        t.t.mkdir(LIBDIR)
        if loader:
            shutil.copy(FAKE, t.t.path(LIBDIR + "/libze_loader.so.1"))
        if backend:
            shutil.copy(FAKE, t.t.path(LIBDIR + "/libze_intel_gpu.so.1"))
        return t

    def libdir(self):
        d = tempfile.mkdtemp(prefix="gc-ze-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(FAKE, os.path.join(d, "libze_loader.so.1"))
        return d

    def lz(self, t, *extra, live=False, env=None, expect_rc=None):
        e = {"GC_FAKE_ZE_INIT": None, "GC_FAKE_ZE_GPUS": None}
        if live:
            e["LD_LIBRARY_PATH"] = self.libdir()
        e.update(env or {})
        args = ["levelzero"] + (["--root", t.root] if t else []) + (["--live"] if live and t else [])
        r = self.run_json(*args, *extra, env=e, expect_rc=expect_rc)
        self.assertEqual(r.json["levelzero"]["status"], "ok", repr(r))
        return r

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"] if f["id"].startswith("levelzero.")})

    def test_debian_loader_without_hardware_is_info(self):
        self.assertTrue(os.path.exists(LIBDIR + "/libze_loader.so.1"), "libze1 (.ci/packages) is not installed")
        r = self.run_json("check", env={"LD_LIBRARY_PATH": None})
        rt = r.json["levelzero"]["runtime"]
        # Debian's loader finds Intel's backend (intel-opencl-icd ships libze_intel_gpu.so.1), which takes no
        # device here: zeInit reports ZE_RESULT_ERROR_UNINITIALIZED.
        self.assertEqual((rt["status"], rt["init"]["name"]), ("init-failed", "ZE_RESULT_ERROR_UNINITIALIZED"))
        self.assertEqual(self.ids(r), ["levelzero.no-device"])
        self.assertEqual(r.findings("levelzero.no-device")[0]["severity"], "info")
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, repr(r))
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("Level Zero: not available", r.json["verdict"]["text"])
        text = gctest.run("levelzero", "-v", env={"LD_LIBRARY_PATH": None}).stdout
        self.assertRegex(text, r"\n  zeInit +ZE_RESULT_ERROR_UNINITIALIZED\n")
        self.assertRegex(text, r"\n  loader +/\S*libze_loader.so.1\n")

    def test_tree_files_only(self):
        r = self.lz(self.tree())
        sec = r.json["levelzero"]
        self.assertIsNone(sec["runtime"])
        self.assertIsNone(sec["device_nodes"])
        self.assertEqual(sec["gpus"], [{"pci_address": ADDR, "name": sec["gpus"][0]["name"], "driver": "i915",
                                        "render_node": "/dev/dri/renderD128"}])
        self.assertEqual(sec["libraries"]["intel_gpu"], LIBDIR + "/libze_intel_gpu.so.1")
        self.assertEqual(self.ids(r), [])

    def test_tree_without_loader(self):
        r = self.lz(self.tree(loader=False, backend=False))
        self.assertEqual(self.ids(r), ["levelzero.no-loader"])
        self.assertEqual(r.findings("levelzero.no-loader")[0]["severity"], "info")

    def test_fake_loader_lists_the_gpu(self):
        r = self.lz(self.tree(), "--require", "levelzero", live=True, expect_rc=0)
        drv = r.json["levelzero"]["runtime"]["drivers"]
        self.assertEqual(drv[0]["api_version"], "1.3")
        self.assertEqual([(d["pci_address"], d["vendor_id"], d["integrated"]) for d in drv[0]["devices"]], [(ADDR, "8086", True)])
        self.assertEqual(self.ids(r), [])
        self.assertTrue(r.json["verdict"]["targets"]["levelzero"]["ready"])
        self.assertIn("Level Zero: lists %s Fake Intel Graphics" % ADDR, r.json["verdict"]["text"])
        nfd = gctest.run("levelzero", "--root", self.tree().root, "--live", "--format=nfd",
                         env={"LD_LIBRARY_PATH": self.libdir()})
        self.assertIn("feature.node.kubernetes.io/gpucheckup-levelzero.device-count=1", nfd.stdout.splitlines())

    def test_uninitialized_is_explained_by_its_cause(self):
        # no backend in the tree: the cause, not the code
        r = self.lz(self.tree(backend=False), live=True, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertEqual(self.ids(r), ["levelzero.no-backend"])
        # the GPU reserved for a VM
        r = self.lz(self.tree(driver="vfio-pci"), live=True, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertIn("levelzero.gpu-not-bound", self.ids(r))
        self.assertNotIn("levelzero.init-failed", self.ids(r))
        # nothing the files explain: the code, by name
        r = self.lz(self.tree(), live=True, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertEqual(self.ids(r), ["levelzero.init-failed"])
        self.assertIn("ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)", r.findings("levelzero.init-failed")[0]["message"])

    def test_no_gpu_device(self):
        r = self.lz(self.tree(), live=True, env={"GC_FAKE_ZE_GPUS": "0"})
        self.assertEqual(self.ids(r), ["levelzero.no-gpu-device"])

    def test_opencl_lists_the_gpu_level_zero_does_not(self):
        # Intel's OpenCL platform (the suite's fake ICD, named as NEO names it) lists the GPU; Level Zero lists none.
        vendors = tempfile.mkdtemp(prefix="gc-ze-vendors-")
        self.addCleanup(shutil.rmtree, vendors, True)
        with open(os.path.join(vendors, "intel.icd"), "w") as f:
            f.write(os.path.join(os.environ["GC_FAKE_ICD_DIR"], "libgcfakeicd-working.so") + "\n")
        env = {"GC_FAKE_ZE_GPUS": "0", "OCL_ICD_VENDORS": vendors, "OPENCL_VENDOR_PATH": None, "OCL_ICD_FILENAMES": None,
               "GC_FAKE_ICD_PLATFORM_NAME": "Intel(R) OpenCL Graphics", "GC_FAKE_ICD_DEVICES": "1",
               "GC_FAKE_ICD_DEVICE_TYPE": "gpu", "GC_FAKE_ICD_PCI": ADDR}
        r = self.lz(self.tree(), live=True, env=env)
        self.assertEqual(self.ids(r), ["levelzero.opencl-only"], repr(r))
        self.assertIn("Intel's OpenCL driver lists", r.findings("levelzero.opencl-only")[0]["message"])

    def test_hang_ends_within_the_timeout(self):
        start = time.monotonic()
        r = self.lz(self.tree(), "--timeout", "3", live=True, env={"GC_FAKE_ZE_INIT": "hang"})
        self.assertLess(time.monotonic() - start, 3 + 2 * (gctest.SANITIZED_SCALE if gctest.SANITIZED else 1) + 2)
        f = r.findings("levelzero.runtime-crashed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("hung in zeInit", f[0]["message"])

    def test_crash(self):
        r = self.lz(self.tree(), live=True, env={"GC_FAKE_ZE_INIT": "crash"})
        f = r.findings("levelzero.runtime-crashed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("SIGSEGV", f[0]["message"])


if __name__ == "__main__":
    gctest.main()
