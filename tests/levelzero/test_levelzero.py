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
FAKE_DRIVERS = os.environ["GC_FAKE_ZE_DRIVERS"]  # the same, as a 1.10 loader with zeInitDrivers
GUC_FW = "i915/dg2_guc_70.bin"


def guc_info(status, fw=GUC_FW, wanted=None):
    """debugfs guc_info as i915 prints it (intel_guc_load_status, intel_uc_fw_dump)."""
    return ("GuC firmware: %s\n" % fw + ("GuC firmware wanted: %s\n" % wanted if wanted else "") +
            "\tstatus: %s\n\tversion: found 70.20.0\n\tuCode: 389568 bytes\n\tRSA: 384 bytes\n\nGuC status 0x8002f0ec:\n" % status)
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

    def libdir(self, lib=FAKE):
        d = tempfile.mkdtemp(prefix="gc-ze-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(lib, os.path.join(d, "libze_loader.so.1"))
        return d

    def lz(self, t, *extra, live=False, env=None, expect_rc=None, lib=FAKE):
        e = {"GC_FAKE_ZE_INIT": None, "GC_FAKE_ZE_GPUS": None, "GC_FAKE_ZE_LOG": None}
        if live:
            e["LD_LIBRARY_PATH"] = self.libdir(lib)
        e.update(env or {})
        args = ["levelzero"] + (["--root", t.root] if t else []) + (["--live"] if live and t else [])
        r = self.run_json(*args, *extra, env=e, expect_rc=expect_rc)
        self.assertEqual(r.json["levelzero"]["status"], "ok", repr(r))
        return r

    def exports(self, lib, sym):
        """Does LIB export SYM (the real loader's version decides which init the child calls)?"""
        import ctypes
        return hasattr(ctypes.CDLL(lib), sym)

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"] if f["id"].startswith("levelzero.")})

    def test_debian_loader_without_hardware_is_info(self):
        self.assertTrue(os.path.exists(LIBDIR + "/libze_loader.so.1"), "libze1 (.ci/packages) is not installed")
        r = self.run_json("check", env={"LD_LIBRARY_PATH": None})
        rt = r.json["levelzero"]["runtime"]
        # No Intel GPU or NPU here: the loader, which loads only Intel's backends, is not loaded (the speed
        # policy, docs/performance.md); Debian's libze1 has every dependency it needs.
        self.assertFalse(os.path.exists("/dev/accel"))
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", None), repr(rt))
        self.assertIn("no Intel GPU: no PCI GPU of vendor 8086 (Intel)", rt["detail"])
        self.assertEqual(self.ids(r), ["levelzero.no-device"])
        f = r.findings("levelzero.no-device")[0]
        self.assertEqual(f["severity"], "info")
        self.assertTrue(f["message"].endswith("there is no Intel GPU on the PCI bus (not loaded)"), f["message"])
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, repr(r))
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("Level Zero: not available", r.json["verdict"]["text"])
        text = gctest.run("levelzero", "-v", env={"LD_LIBRARY_PATH": None}).stdout
        self.assertRegex(text, r"\n  zeInit +not loaded: no Intel GPU: no PCI GPU of vendor 8086 \(Intel\)[^\n]*\n")
        self.assertRegex(text, r"\n  loader +/\S*libze_loader.so.1\n")

    def test_tree_with_an_intel_gpu_still_loads_this_machines_loader(self):
        """Debian's real loader, loaded because the tree (--root --live) has an Intel GPU: Intel's backend takes
        no device on this machine, so zeInit reports ZE_RESULT_ERROR_UNINITIALIZED."""
        r = self.run_json("levelzero", "--root", self.tree().root, "--live", env={"LD_LIBRARY_PATH": None})
        rt = r.json["levelzero"]["runtime"]
        self.assertEqual((rt["status"], rt["init"]["name"]), ("init-failed", "ZE_RESULT_ERROR_UNINITIALIZED"), repr(rt))
        self.assertEqual(rt["init_call"], "zeInitDrivers" if self.exports(LIBDIR + "/libze_loader.so.1", "zeInitDrivers")
                         else "zeInit")

    def test_loader_of_absent_hardware_is_not_loaded(self):
        """A loader that would log its zeInit and crash, on this machine without an Intel GPU: never loaded."""
        log = os.path.join(tempfile.mkdtemp(prefix="gc-ze-log-"), "calls")
        self.addCleanup(shutil.rmtree, os.path.dirname(log), True)
        d = self.libdir(FAKE_DRIVERS)
        r = self.lz(None, env={"LD_LIBRARY_PATH": d, "GC_FAKE_ZE_INIT": "crash", "GC_FAKE_ZE_LOG": log}, expect_rc=0)
        rt = r.json["levelzero"]["runtime"]
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", None), repr(rt))
        self.assertFalse(os.path.exists(log), "the loader was loaded")
        self.assertEqual(self.ids(r), ["levelzero.no-device"])
        self.assertEqual(r.findings("levelzero.no-device")[0]["subject"], os.path.join(d, "libze_loader.so.1"))

    def test_broken_loader_of_absent_hardware_is_named_from_its_files(self):
        """The fake loader with its DT_NEEDED libc.so.6 renamed libq.so.6 (found nowhere): named, not loaded."""
        d = self.libdir()
        path = os.path.join(d, "libze_loader.so.1")
        with open(path, "rb") as f:
            data = f.read()
        self.assertIn(b"\0libc.so.6\0", data)
        with open(path, "wb") as f:
            f.write(data.replace(b"\0libc.so.6\0", b"\0libq.so.6\0"))
        r = self.lz(None, env={"LD_LIBRARY_PATH": d}, expect_rc=0)
        rt = r.json["levelzero"]["runtime"]
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", "libq.so.6"), repr(rt))
        self.assertIn("(not loaded; it could not be, not found: libq.so.6)", r.findings("levelzero.no-device")[0]["message"])

    def test_tree_files_only(self):
        r = self.lz(self.tree())
        sec = r.json["levelzero"]
        self.assertIsNone(sec["runtime"])
        self.assertIsNone(sec["device_nodes"])
        self.assertEqual(sec["gpus"], [{"pci_address": ADDR, "name": sec["gpus"][0]["name"], "driver": "i915",
                                        "render_node": "/dev/dri/renderD128", "guc": None}])
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

    def guc_tree(self, status, installed=None, **kw):
        """A tree whose i915 reports STATUS for its GuC firmware, and INSTALLED (a path) as the file."""
        t = self.tree(**kw)
        t.t.write("/sys/kernel/debug/dri/0/gt0/uc/guc_info", guc_info(status))
        if installed:
            t.t.write(installed, "firmware")
        return t

    def test_guc_running_with_its_file(self):
        r = self.lz(self.guc_tree("RUNNING", "/lib/firmware/i915/dg2_guc_70.bin.zst"))
        self.assertEqual(r.json["levelzero"]["gpus"][0]["guc"],
                         {"debugfs": "/sys/kernel/debug/dri/0/gt0/uc/guc_info", "firmware": GUC_FW, "wanted": None,
                          "status": "RUNNING", "file": "/lib/firmware/i915/dg2_guc_70.bin.zst"})
        self.assertEqual(self.ids(r), [])
        # a GPU whose GuC is not used (TGL and older by default): no finding, file or not
        self.assertEqual(self.ids(self.lz(self.guc_tree("DISABLED"))), [])
        # no debugfs (not root): nothing said, nothing guessed
        self.assertIsNone(self.lz(self.tree()).json["levelzero"]["gpus"][0]["guc"])

    def test_guc_firmware_missing(self):
        t = self.guc_tree("MISSING")
        r = self.lz(t)
        self.assertEqual(self.ids(r), ["levelzero.guc-firmware-missing"])
        f = r.findings("levelzero.guc-firmware-missing")[0]
        self.assertEqual((f["severity"], f["subject"]), ("warning", ADDR))
        self.assertIn(GUC_FW + " (status MISSING), which is not installed", f["message"])
        self.assertIn("firmware-misc-nonfree", f["hint"])
        # live, zeInit fails for it: the init finding is its consequence, and says so
        r = self.lz(t, live=True, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertEqual(self.ids(r), ["levelzero.guc-firmware-missing", "levelzero.init-failed"])
        init = r.findings("levelzero.init-failed")[0]
        self.assertEqual(init["caused_by"]["id"], "levelzero.guc-firmware-missing", repr(init))
        self.assertIn("GuC firmware %s is not installed" % GUC_FW, init["message"])
        self.assertIn("levelzero.guc-firmware-missing", r.json["verdict"]["targets"]["levelzero"]["detail"])

    def test_guc_load_failed_with_the_file_installed(self):
        r = self.lz(self.guc_tree("LOAD FAIL", "/lib/firmware/updates/i915/dg2_guc_70.bin"), live=True,
                    env={"GC_FAKE_ZE_GPUS": "0"})
        self.assertEqual(self.ids(r), ["levelzero.guc-not-running", "levelzero.no-gpu-device"])
        f = r.findings("levelzero.guc-not-running")[0]
        self.assertIn("as LOAD FAIL, though /lib/firmware/updates/i915/dg2_guc_70.bin is installed", f["message"])
        self.assertEqual(r.findings("levelzero.no-gpu-device")[0]["caused_by"]["id"], "levelzero.guc-not-running")

    def test_init_drivers_where_the_loader_has_it(self):
        log = os.path.join(self.make_tree().root, "ze.log")
        r = self.lz(self.tree(), "--require", "levelzero", live=True, lib=FAKE_DRIVERS, env={"GC_FAKE_ZE_LOG": log},
                    expect_rc=0)
        rt = r.json["levelzero"]["runtime"]
        self.assertEqual((rt["init_call"], rt["status"]), ("zeInitDrivers", "ok"))
        self.assertEqual([d["pci_address"] for d in rt["drivers"][0]["devices"]], [ADDR])
        with open(log) as f:  # the GPU drivers, with the specification's structure type: the count, then the handles
            self.assertEqual(f.read().splitlines(), ["zeInitDrivers stype=0x20021 flags=1"] * 2)
        r = self.lz(self.tree(), live=True, lib=FAKE_DRIVERS, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertIn("zeInitDrivers(GPU): ZE_RESULT_ERROR_UNINITIALIZED", r.findings("levelzero.init-failed")[0]["message"])
        # a 1.8 loader (Debian's libze1 1.8.12) has no zeInitDrivers: zeInit
        r = self.lz(self.tree(), live=True)
        self.assertEqual(r.json["levelzero"]["runtime"]["init_call"], "zeInit")
        r = self.lz(self.tree(), live=True, env={"GC_FAKE_ZE_INIT": "uninit"})
        self.assertIn("zeInit(0): ZE_RESULT_ERROR_UNINITIALIZED", r.findings("levelzero.init-failed")[0]["message"])


if __name__ == "__main__":
    gctest.main()
