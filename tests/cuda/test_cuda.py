"""End-to-end tests of the cuda probe: the fake libcuda.so.1 on fake sysfs trees, and the toolkit's real stub."""
import json
import os
import shutil
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKE = os.environ["GC_FAKE_LIBCUDA"]
# The suite's fake NVML (tests/cuda/fake_nvml.c): a driver ships libnvidia-ml beside libcuda, and without
# it the NVML part rightly warns (cuda.nvml-missing) on every fake GPU here.
FAKE_NVML = os.path.join(os.environ["GC_FAKE_NVML_DIR"], "libnvidia-ml.so.1")
STUB = os.environ.get("GC_CUDA_STUB")
# A fake cuBLAS 13.1.0 with a DT_NEEDED on libcuda.so.1 (tests/cuda/meson.build).
FAKE_CUBLAS_NEEDS_CUDA = os.environ.get("GC_FAKE_CUBLAS_NEEDS_CUDA")  # set for e2e-cuda (other tests import this file)
KVER = "580.159.04"
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"


def gpu_addr(i):
    return "0000:%02x:00.0" % (i + 1)


class CudaBase(gctest.TestCase):
    """Helpers: fake trees, the fake libcuda in a directory of its own, runs of `gpucheckup cuda`."""

    def libdir(self, version=KVER, real_name=None):
        """A directory holding the fake as libcuda.so.VERSION, with libcuda.so.1 linked to it (as drivers ship)."""
        d = tempfile.mkdtemp(prefix="gc-libcuda-")
        self.addCleanup(shutil.rmtree, d, True)
        name = real_name or "libcuda.so.%s" % version
        shutil.copy(FAKE, os.path.join(d, name))
        os.symlink(name, os.path.join(d, "libcuda.so.1"))
        shutil.copy(FAKE_NVML, os.path.join(d, "libnvidia-ml.so.1"))
        self._nvml_driver = version
        return d

    def tree(self, gpus=1, kver=KVER, uvm=True, uvm_node=True, bound=True, module=True):
        t = PciTree(self.make_tree())
        for i in range(gpus):
            t.device(gpu_addr(i), 0x10de, 0x2330, 0x030200, driver="nvidia" if bound else None,
                     link=("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16))
        if module:
            t.module("nvidia", gpus)
            t.nvidia_version(kver, open_module=True)
        if uvm:
            t.module("nvidia_uvm")
        t.node("/dev/nvidiactl")
        for i in range(gpus):
            t.node("/dev/nvidia%d" % i)
        if uvm_node:
            t.node("/dev/nvidia-uvm")
        t.gc_gpus = [gpu_addr(i) for i in range(gpus)]
        return t

    def cuda(self, t, libdir, *extra, env=None, command="cuda", expect_rc=None, timeout=120):
        e = {"LD_LIBRARY_PATH": libdir, "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_INIT": None,
             "GC_FAKE_CUDA_MODE": None, "GC_FAKE_CUDA_GPUS": None, "GC_FAKE_CUDA_COMPUTE_MODE": None,
             "GC_FAKE_CUDA_CC": None, "GC_FAKE_CUDA_VERSION": None, "NVIDIA_VISIBLE_DEVICES": None,
             "GC_FAKE_CUDA_BUSIDS": None, "GC_FAKE_CUDA_P2P": None, "GC_FAKE_CUDA_P2P_PAIR": None}
        if t is not None and getattr(t, "gc_gpus", None):
            # the fake NVML sees the tree's GPUs, with the driver version of the libcuda beside it
            e.update({"GC_FAKE_NVML_GPUS": str(len(t.gc_gpus)), "GC_FAKE_NVML_BUSIDS": ",".join(t.gc_gpus),
                      "GC_FAKE_NVML_DRIVER": getattr(self, "_nvml_driver", KVER), "GC_FAKE_NVML_MODE": None})
        e.update(env or {})
        args = [command]
        if t is not None:
            args += ["--root", t.root, "--live"]
        r = self.run_json(*args, *extra, env=e, expect_rc=expect_rc, timeout=timeout)
        self.assertEqual(r.json["cuda"]["status"], "ok", repr(r))
        return r

    def cuda_ids(self, r):
        """The driver, NVML and smoke findings. The library part (cuda.lib-*) lists the --root tree's
        libraries (none here: an info cuda.lib-none beside a GPU) without loading them; unit-cuda-libs and
        the tests below test it on trees of their own."""
        return sorted({f["id"] for f in r.json["findings"]
                       if f["id"].startswith("cuda.") and not f["id"].startswith("cuda.lib-")})


class CudaTests(CudaBase):
    """The fake libcuda (tests/cuda/fake_libcuda.c) on fake trees."""

    # ---- healthy ------------------------------------------------------------------------------

    def test_healthy_one_gpu(self):
        t = self.tree()
        d = self.libdir()
        r = self.cuda(t, d, expect_rc=0)
        self.assertEqual(self.cuda_ids(r), [], repr(r))
        c = r.json["cuda"]
        drv = c["driver"]
        self.assertEqual(drv["status"], "ok")
        self.assertEqual(drv["cuinit"], {"code": 0, "name": "CUDA_SUCCESS"})
        self.assertEqual(drv["cuda_version"], "13.0")
        self.assertEqual(drv["library"]["version"], KVER)
        self.assertEqual(drv["library"]["path"], os.path.join(os.path.realpath(d), "libcuda.so." + KVER))
        self.assertEqual(drv["library"]["found_via"], "LD_LIBRARY_PATH")
        self.assertEqual(drv["library"]["search_entry"], d)
        self.assertEqual(drv["kernel_module_version"], KVER)
        self.assertEqual(len(c["devices"]), 1)
        dev = c["devices"][0]
        self.assertEqual(dev["pci_address"], "0000:01:00.0")
        self.assertIs(dev["on_pci_bus"], True)
        self.assertEqual(dev["pci_bus_id"], "00000000:01:00.0")
        self.assertEqual(dev["compute_capability"], "9.0")
        self.assertEqual(dev["name"], "NVIDIA H100 80GB HBM3")
        self.assertRegex(dev["uuid"], r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
        self.assertEqual(dev["memory_bytes"], 85520809984)
        self.assertEqual(dev["multiprocessors"], 132)
        self.assertIs(dev["ecc_enabled"], True)
        self.assertEqual(dev["compute_mode"], "default")
        self.assertIs(dev["integrated"], False)
        # "CUDA libraries" depends on what this machine has installed; the rest is the fake GPU's
        labels = [s["label"] for s in c["summary"] if s["label"] != "CUDA libraries"]
        self.assertEqual(labels, ["CUDA smoke %s" % gpu_addr(0), "CUDA", "CUDA 0"])

    def test_healthy_eight_gpus(self):
        t = self.tree(gpus=8)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_GPUS": "8"}, expect_rc=0)
        self.assertEqual(self.cuda_ids(r), [], repr(r))
        devs = r.json["cuda"]["devices"]
        self.assertEqual([d["pci_address"] for d in devs], [gpu_addr(i) for i in range(8)])
        self.assertTrue(all(d["on_pci_bus"] for d in devs))
        self.assertEqual(len({d["uuid"] for d in devs}), 8)

    def test_gpu_missing_from_cuda_is_named(self):
        t = self.tree(gpus=2)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_GPUS": "1"}, expect_rc=0)
        f = r.findings("cuda.gpu-not-visible")
        self.assertEqual([x["subject"] for x in f], [gpu_addr(1)], repr(r))
        self.assertEqual(f[0]["severity"], "warning")

    def test_gpu_not_given_to_this_container_is_no_warning(self):
        """sysfs lists every GPU of the host inside a container; only the granted ones have /dev/nvidiaN."""
        t = self.tree(gpus=2)
        for i in range(2):
            t.t.write("/proc/driver/nvidia/gpus/%s/information" % gpu_addr(i),
                      "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t %s\nDevice Minor: \t %d\n"
                      "GPU Excluded:\t No\n" % (gpu_addr(i), i))
        os.unlink(t.t.path("/dev/nvidia1"))
        granted = {"GC_FAKE_CUDA_GPUS": "1", "GC_FAKE_NVML_GPUS": "1", "GC_FAKE_NVML_BUSIDS": gpu_addr(0)}
        r = self.cuda(t, self.libdir(), env=granted, expect_rc=0)
        self.assertEqual(self.cuda_ids(r), [], repr(r))
        self.assertTrue(any(gpu_addr(1) in n and "not given" in n for n in r.json["cuda"].get("notes", [])), repr(r))
        # with its node present, the same GPU missing from CUDA is a warning
        t.node("/dev/nvidia1")
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_GPUS": "1"}, expect_rc=0)
        self.assertEqual([f["subject"] for f in r.findings("cuda.gpu-not-visible")], [gpu_addr(1)], repr(r))

    def test_text_output(self):
        t = self.tree()
        r = gctest.run("cuda", "--root", t.root, "--live", "-v",
                       env={"LD_LIBRARY_PATH": self.libdir(), "CUDA_VISIBLE_DEVICES": None})
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("CUDA 0", r.stdout)
        self.assertIn("NVIDIA H100 80GB HBM3 0000:01:00.0, compute capability 9.0", r.stdout)
        self.assertIn("cuInit(0)              CUDA_SUCCESS (0)", r.stdout)

    # ---- no driver ------------------------------------------------------------------------------

    def test_no_libcuda_no_gpu_is_info(self):
        t = PciTree(self.make_tree())
        empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.cuda(t, empty, expect_rc=0)
        self.assertEqual(self.cuda_ids(r), ["cuda.no-driver"])
        self.assertEqual(r.findings("cuda.no-driver")[0]["severity"], "info")
        self.assertEqual(r.json["cuda"]["driver"]["status"], "no-library")
        self.assertEqual(r.json["cuda"]["summary"][0]["mark"], "info")

    def test_absent_hardware_without_libcuda_starts_no_child(self):
        """This machine (no NVIDIA GPU, no /dev/nvidia* node): with no libcuda.so.1 or libnvidia-ml.so.1 on the
        dynamic linker's search, dlopen's answer is known from the files and no child is started for it (the speed
        policy); cuda.no-driver keeps its meaning."""
        self.assertFalse([n for n in os.listdir("/dev") if n.startswith("nvidia")])
        empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.cuda(None, empty, "--no-smoke", expect_rc=0)
        drv, nvml = r.json["cuda"]["driver"], r.json["cuda"]["nvml"]
        if any(d.get("vendor_id") == "10de" for d in r.json["pci"].get("devices") or []):
            self.fail("this machine has an NVIDIA GPU: the test needs one without")
        self.assertEqual(drv["status"], "no-library")
        self.assertIn("libcuda.so.1: cannot open shared object file: not found by the dynamic linker's search (read from "
                      "the files; not loaded: no NVIDIA GPU on this host)", drv["dlopen_error"])
        self.assertEqual(drv["elapsed_ms"], 0)
        self.assertEqual(nvml["status"], "no-library")
        self.assertIn("not loaded: no NVIDIA GPU on this host", nvml["error"])
        self.assertEqual(self.cuda_ids(r), ["cuda.no-driver"])
        # a libcuda.so.1 the search finds is loaded as before, even here (its answer names a stub, a broken driver)
        r = self.cuda(None, self.libdir(), "--no-smoke", env={"GC_FAKE_CUDA_INIT": "100"}, expect_rc=0)
        self.assertIn("cuda.no-gpu", self.cuda_ids(r), repr(r))
        self.assertEqual(r.json["cuda"]["driver"]["cuinit"]["code"], 100, repr(r))
        self.assertGreater(r.json["cuda"]["driver"]["elapsed_ms"], 0)

    def test_health_does_not_look_for_libraries_of_absent_hardware(self):
        """--health on this machine without an NVIDIA GPU, module or libcuda: the CUDA libraries are not looked
        for (a check lists them, unloaded), and the section says so."""
        d = tempfile.mkdtemp(prefix="gc-cudart-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(FAKE, os.path.join(d, "libcudart.so.12"))
        env = {"LD_LIBRARY_PATH": d, "CUDA_VISIBLE_DEVICES": None}
        r = self.run_json("check", "--no-smoke", env=env)
        self.assertIn(os.path.join(d, "libcudart.so.12"), [x["path"] for x in r.json["cuda"]["libraries"]], repr(r))
        self.assertEqual(r.json["cuda"]["libraries_not_loaded"], "no NVIDIA GPU or driver on this host")
        out = os.path.join(d, "health.json")
        h = gctest.run("--health", "--no-smoke", "--format=json", "-o", out, env=env)
        self.assertIn(h.rc, (0, 1, 2), repr(h))
        with open(out) as f:
            doc = json.load(f)
        gctest.validate(doc)
        self.assertEqual(doc["cuda"]["libraries"], [])
        self.assertEqual(doc["cuda"]["libraries_not_loaded"], "not looked for under --health: no NVIDIA GPU or driver on this host")
        self.assertIn("CUDA libraries: not looked for under --health (no NVIDIA GPU or driver on this host)", doc["cuda"]["notes"])

    def test_no_libcuda_with_bound_gpu_is_error(self):
        t = self.tree()
        empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.cuda(t, empty, expect_rc=1)
        f = r.findings("cuda.no-libcuda")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "error")
        self.assertIn(KVER, f[0]["message"])
        self.assertIn("libnvidia-compute-580", f[0]["hint"])

    def test_secure_boot_with_module_absent(self):
        t = self.tree(module=False, uvm=False)
        t.t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", b"\x06\x00\x00\x00\x01")
        empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.cuda(t, empty, expect_rc=1)
        self.assertIn("cuda.secure-boot-module", self.cuda_ids(r), repr(r))
        # Secure Boot off: no such finding
        t.t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", b"\x06\x00\x00\x00\x00")
        r = self.cuda(t, empty)
        self.assertNotIn("cuda.secure-boot-module", self.cuda_ids(r), repr(r))
        # with a libcuda installed, cuInit fails (no module): the same finding, with Secure Boot on
        t.t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", b"\x06\x00\x00\x00\x01")
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "100"}, expect_rc=1)
        self.assertIn("cuda.secure-boot-module", self.cuda_ids(r), repr(r))

    def test_secure_boot_explains_the_unbound_gpu(self):
        """Issue 24 item 3: GPU unbound, module absent, Secure Boot on. The refused module is why the GPU has
        no driver: pci.no-driver is caused by cuda.secure-boot-module (never the other way round), so the
        MOK-signing fix is the one the verdict shows."""
        t = self.tree(module=False, uvm=False, bound=False)
        t.t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", b"\x06\x00\x00\x00\x01")
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "100"}, command="check", expect_rc=1)
        sb = r.findings("cuda.secure-boot-module")
        nd = r.findings("pci.no-driver")
        self.assertEqual(len(sb), 1, repr(r))
        self.assertEqual(len(nd), 1, repr(r))
        self.assertIsNone(sb[0].get("caused_by"), repr(r))
        self.assertEqual((nd[0].get("caused_by") or {}).get("id"), "cuda.secure-boot-module", repr(r))
        for name in ("cuda12", "cuda13"):
            self.assertIn("cuda.secure-boot-module", r.json["verdict"]["targets"][name]["reasons"], repr(r))
        self.assertNotIn("pci.no-driver", r.json["verdict"]["targets"]["cuda12"]["reasons"], repr(r))

    def test_secure_boot_is_not_blamed_where_no_module_exists(self):
        """Secure Boot on, but the running kernel has no nvidia module at all: nothing was refused, and the
        reason is the missing module (drv.nvidia-not-built), never Secure Boot."""
        t = self.tree(module=False, uvm=False, bound=False)
        t.t.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", b"\x06\x00\x00\x00\x01")
        t.t.write("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
        t.t.write("/lib/modules/6.1.0-18-amd64/modules.dep", "kernel/sound/core/snd.ko:\n")
        t.nvidia_libs(KVER)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "100"}, command="check", expect_rc=1)
        self.assertEqual(r.findings("cuda.secure-boot-module"), [], repr(r))
        self.assertEqual((r.findings("pci.no-driver")[0]["caused_by"] or {}).get("id"), "drv.nvidia-not-built")
        for name in ("cuda12", "cuda13"):
            self.assertIn("drv.nvidia-not-built", r.json["verdict"]["targets"][name]["reasons"], repr(r))

    # ---- the libraries frameworks load: when they are loaded ----------------------------------

    def test_root_tree_libraries_listed_not_loaded(self):
        """Under --root the libraries are the tree's: listed with versions from their names, never loaded
        (this one is libcuda under a runtime's name: loaded, it would fail to answer cudaRuntimeGetVersion)."""
        t = self.tree()
        t.t.write("/usr/lib/libcudart.so.13.0.96", open(FAKE, "rb").read())
        os.symlink("libcudart.so.13.0.96", t.t.path("/usr/lib/libcudart.so.13"))
        r = self.cuda(t, self.libdir(), expect_rc=0)
        c = r.json["cuda"]
        self.assertIn("--root", c["libraries_not_loaded"])
        self.assertEqual([(x["path"], x["version"], x["version_from"], x["error"]) for x in c["libraries"]],
                         [("/usr/lib/libcudart.so.13.0.96", "13.0.96", "file name", None)], repr(r))
        self.assertEqual([f["id"] for f in r.json["findings"] if f["id"].startswith("cuda.lib-")], [], repr(r))
        self.assertIn("not loaded: " + c["libraries_not_loaded"],
                      [s["text"] for s in c["summary"] if s["label"] == "CUDA libraries"][0])

    def test_check_loads_libraries_only_where_usable(self):
        """A check on a host with neither an NVIDIA GPU nor libcuda.so.1 lists the CUDA libraries without
        loading them; `gpucheckup cuda` on the same host loads them. Both hosts kinds are asserted: which one
        this is comes from the report itself."""
        empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = self.run_json("check", "--no-smoke", env={"LD_LIBRARY_PATH": empty}, timeout=300)
        c = r.json["cuda"]
        gpu = any(d.get("vendor_id") == "10de" for d in (r.json["pci"].get("devices") or []))
        no_driver = c["driver"]["status"] == "no-library" and not c["driver"]["kernel_module_version"]
        if gpu or not no_driver:
            self.assertIsNone(c["libraries_not_loaded"], repr(r))
            return
        self.assertEqual(c["libraries_not_loaded"], "no NVIDIA GPU or driver on this host")
        for lib in c["libraries"]:
            self.assertIn(lib["version_from"], ("file name", "SONAME", None), lib)
            self.assertIsNone(lib["error"], lib)
            self.assertIsNone(lib["cuda_version_from"], lib)
        loads = {"cuda.lib-driver-too-old", "cuda.lib-version-conflict", "cuda.lib-versions-differ",
                 "cuda.lib-cudnn-cuda-mismatch", "cuda.lib-cudnn-mixed", "cuda.lib-toolkit-differs",
                 "cuda.lib-load-failed"}
        self.assertEqual([f["id"] for f in r.json["findings"] if f["id"] in loads], [], repr(r))
        # asked by name, or through --require, the same host loads them
        r2 = self.run_json("cuda", env={"LD_LIBRARY_PATH": empty}, timeout=300)
        self.assertIsNone(r2.json["cuda"]["libraries_not_loaded"])
        # loaded: what a file states is taken from it (issue 30), the rest is the library's own answer, never
        # the SONAME alone
        self.assertTrue(all(x["version_from"] in ("library", "main library", "file name", "wheel metadata",
                                                  "toolkit version.json", None)
                            for x in r2.json["cuda"]["libraries"]), repr(r2))
        r3 = self.run_json("check", "--no-smoke", "--require", "cuda>=12.0", env={"LD_LIBRARY_PATH": empty},
                           timeout=300)
        self.assertIsNone(r3.json["cuda"]["libraries_not_loaded"])

    # ---- the library found --------------------------------------------------------------------

    def test_version_mismatch(self):
        t = self.tree(kver=KVER)
        d = self.libdir(version="550.54.14")
        r = self.cuda(t, d, expect_rc=1)
        f = r.findings("cuda.driver-library-mismatch")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("550.54.14", f[0]["message"])
        self.assertIn(KVER, f[0]["message"])
        self.assertIn(d, f[0]["hint"])

    def test_compat_on_unsupported_gpu(self):
        t = self.tree()
        base = tempfile.mkdtemp(prefix="gc-cuda-")
        self.addCleanup(shutil.rmtree, base, True)
        compat = os.path.join(base, "cuda-13.0", "compat")
        os.makedirs(compat)
        shutil.copy(FAKE, os.path.join(compat, "libcuda.so.590.10.01"))
        os.symlink("libcuda.so.590.10.01", os.path.join(compat, "libcuda.so.1"))
        nvml = self.libdir()  # the installed driver's NVML, on the path after the compat directory
        r = self.cuda(t, compat + ":" + nvml, env={"GC_FAKE_CUDA_INIT": "804"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.compat-unsupported"], repr(r))
        self.assertIs(r.json["cuda"]["driver"]["library"]["compat"], True)
        self.assertIn(compat, r.findings("cuda.compat-unsupported")[0]["hint"])

    def test_older_compat_on_path_is_a_mismatch(self):
        """The real H100 image: /usr/local/cuda/compat holds libcuda 580.95.05 under a 580.159.04 kernel
        module; with that directory on LD_LIBRARY_PATH the real cuInit answered 803."""
        t = self.tree(kver=KVER)
        base = tempfile.mkdtemp(prefix="gc-cuda-")
        self.addCleanup(shutil.rmtree, base, True)
        compat = os.path.join(base, "cuda-13.0", "compat")
        os.makedirs(compat)
        shutil.copy(FAKE, os.path.join(compat, "libcuda.so.580.95.05"))
        os.symlink("libcuda.so.580.95.05", os.path.join(compat, "libcuda.so.1"))
        nvml = self.libdir()
        r = self.cuda(t, compat + ":" + nvml, env={"GC_FAKE_CUDA_INIT": "803"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.compat-mismatch"], repr(r))
        f = r.findings("cuda.compat-mismatch")[0]
        self.assertEqual(f["severity"], "error")
        self.assertIn("580.95.05", f["message"])
        self.assertIn("older than the driver", f["message"])
        self.assertIn(compat, f["hint"])
        self.assertNotIn("cuda.driver-library-mismatch", self.cuda_ids(r))

    # ---- cuInit results -----------------------------------------------------------------------

    def test_999_without_uvm(self):
        t = self.tree(uvm=False, uvm_node=False)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "999"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.uvm-missing"], repr(r))
        self.assertIn("nvidia_uvm kernel module is not loaded", r.findings("cuda.uvm-missing")[0]["message"])

    def test_999_uvm_node_missing(self):
        t = self.tree(uvm=True, uvm_node=False)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "999"}, expect_rc=1)
        self.assertIn("cuda.uvm-missing", self.cuda_ids(r), repr(r))
        self.assertIn("/dev/nvidia-uvm does not exist", r.findings("cuda.uvm-missing")[0]["message"])

    def test_999_with_uvm_is_generic(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_INIT": "999"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.init-failed"], repr(r))
        self.assertIn("CUDA_ERROR_UNKNOWN (999)", r.findings("cuda.init-failed")[0]["message"])

    def test_visible_devices_empty_and_wrong(self):
        t = self.tree()
        for cvd, words in (("", "is empty"), ("3", "names no device that exists")):
            r = self.cuda(t, self.libdir(), env={"CUDA_VISIBLE_DEVICES": cvd}, expect_rc=1)
            f = r.findings("cuda.visible-devices-none")
            self.assertEqual(len(f), 1, repr(r))
            self.assertIn(words, f[0]["message"])
            self.assertIn("CUDA_ERROR_NO_DEVICE", f[0]["message"])

    def test_libcuda_without_gpu_is_info_whatever_cuinit_says(self):
        t = PciTree(self.make_tree())
        for env in ({"GC_FAKE_CUDA_INIT": "100"}, {"GC_FAKE_CUDA_INIT": "999"}, {"CUDA_VISIBLE_DEVICES": ""}):
            r = self.cuda(t, self.libdir(), env=env, expect_rc=0)
            self.assertEqual(self.cuda_ids(r), ["cuda.no-gpu"], repr(r))
            self.assertEqual(r.findings("cuda.no-gpu")[0]["severity"], "info")

    def test_visible_devices_subset_is_not_a_missing_gpu(self):
        t = self.tree(gpus=2)
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_GPUS": "2", "CUDA_VISIBLE_DEVICES": "1"}, expect_rc=0)
        self.assertEqual(self.cuda_ids(r), [], repr(r))
        self.assertEqual([d["pci_address"] for d in r.json["cuda"]["devices"]], [gpu_addr(1)])

    def test_802_fabric_manager(self):
        r = self.cuda(self.tree(), self.libdir(), env={"GC_FAKE_CUDA_INIT": "802"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.fabric-manager"], repr(r))

    def test_other_cuinit_result_named(self):
        r = self.cuda(self.tree(), self.libdir(), env={"GC_FAKE_CUDA_INIT": "46"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.init-failed"], repr(r))
        self.assertIn("CUDA_ERROR_DEVICE_UNAVAILABLE (46)", r.findings("cuda.init-failed")[0]["message"])
        r = self.cuda(self.tree(), self.libdir(), env={"GC_FAKE_CUDA_INIT": "12345"}, expect_rc=1)
        self.assertIn("(12345)", r.findings("cuda.init-failed")[0]["message"])

    def test_compute_mode_prohibited(self):
        r = self.cuda(self.tree(), self.libdir(), env={"GC_FAKE_CUDA_COMPUTE_MODE": "2"}, expect_rc=1)
        f = r.findings("cuda.compute-prohibited")
        self.assertEqual([x["subject"] for x in f], ["0000:01:00.0"], repr(r))
        self.assertIn("nvidia-smi -i 0 -c DEFAULT", f[0]["hint"])

    def test_truncated_libcuda_causes_the_library_crashes(self):
        """Issue 24 item 7: a truncated libcuda (SIGBUS while loading) kills every library child that loads
        it: those findings are caused by cuda.driver-crash, not a reinstall of the library. The same
        libraries beside an intact libcuda load fine, and the run is live (no --root: libraries load)."""
        d = self.libdir()
        shutil.copy(FAKE_CUBLAS_NEEDS_CUDA, os.path.join(d, "libcublas.so.13"))
        r = self.cuda(None, d)
        mine = [x for x in r.json["cuda"]["libraries"] if x["path"] == os.path.join(d, "libcublas.so.13")]
        self.assertEqual([(x["version"], x["error"]) for x in mine], [("13.1.0", None)], repr(r))
        # cut the library short, inside its loaded segments (ELF and program headers kept)
        real = os.path.join(d, "libcuda.so.%s" % KVER)
        os.truncate(real, 4096)
        r = self.cuda(None, d, expect_rc=1)
        crash = r.findings("cuda.driver-crash")
        self.assertEqual(len(crash), 1, repr(r))
        self.assertIn("SIGBUS", crash[0]["message"])
        lib = [f for f in r.findings("cuda.lib-load-failed") if f["subject"] == os.path.join(d, "libcublas.so.13")]
        self.assertEqual(len(lib), 1, repr(r))
        self.assertIn("SIGBUS", lib[0]["message"])
        self.assertEqual(lib[0]["caused_by"], {"id": "cuda.driver-crash", "subject": crash[0]["subject"]}, repr(r))
        # every library child that crashed here did so through libcuda: none is a root cause of the verdict
        for f in r.findings("cuda.lib-load-failed"):
            if "killed by" in f["message"]:
                self.assertEqual(f["caused_by"]["id"], "cuda.driver-crash", f)
        for name, t in r.json["verdict"]["targets"].items():
            self.assertNotIn("cuda.lib-load-failed", t["reasons"], "%s: %s" % (name, t))

    def test_crash_and_hang_in_cuinit(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_MODE": "crash"}, expect_rc=1)
        self.assertEqual(self.cuda_ids(r), ["cuda.driver-crash"], repr(r))
        self.assertIn("SIGSEGV", r.findings("cuda.driver-crash")[0]["message"])
        t0 = time.monotonic()
        r = self.cuda(t, self.libdir(), "--timeout", "1", env={"GC_FAKE_CUDA_MODE": "hang"}, expect_rc=1)
        # --timeout bounds the whole run (issue 17), plus a second for all that is not a child
        self.assertLessEqual(time.monotonic() - t0, 1 + 1.0)
        self.assertEqual(self.cuda_ids(r), ["cuda.driver-hang"], repr(r))
        self.assertEqual(r.json["cuda"]["driver"]["status"], "timeout")

    def test_hang_in_cumoduleload_ends_at_the_deadline(self):
        # The smoke child hangs loading its module: the run still ends at --timeout (plus a second),
        # the GPU is named, and the rest of the section is complete.
        t0 = time.monotonic()
        # (5 s: the driver and library children before it must finish on a loaded machine)
        r = self.cuda(self.tree(), self.libdir(), "--timeout", "5", env={"GC_FAKE_CUDA_COMPUTE": "hang-load"},
                      expect_rc=1)
        self.assertLessEqual(time.monotonic() - t0, 5 + 1.0)
        self.assertEqual(self.cuda_ids(r), ["cuda.smoke-timeout"], repr(r))
        self.assertEqual([s["status"] for s in r.json["cuda"]["smoke"]], ["timeout"])
        self.assertEqual(r.findings("cuda.smoke-timeout")[0]["subject"], "cuda:0")
        self.assertEqual(r.json["cuda"]["driver"]["status"], "ok")
        self.assertEqual(len(r.json["cuda"]["devices"]), 1)

    # ---- verdict and requirements ----------------------------------------------------------

    def test_requirements_on_driver_version_and_compute_capability(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), "--require", "cuda>=12.4,compute-capability>=8.0", expect_rc=0)
        got = {q["name"]: q["met"] for q in r.json["verdict"]["requirements"]}
        self.assertEqual(got, {"cuda>=12.4": True, "compute-capability>=8.0": True}, repr(r))
        r = self.cuda(t, self.libdir(), "--require", "cuda>=13.1,compute-capability>=9.1", expect_rc=1)
        q = {x["name"]: x for x in r.json["verdict"]["requirements"]}
        self.assertFalse(q["cuda>=13.1"]["met"])
        self.assertIn("supports CUDA 13.0, 13.1 needed", q["cuda>=13.1"]["detail"])
        self.assertFalse(q["compute-capability>=9.1"]["met"])
        self.assertIn("compute capability 9.0", q["compute-capability>=9.1"]["detail"])
        self.assertEqual(sorted(f["subject"] for f in r.findings("require.unmet")),
                         ["compute-capability>=9.1", "cuda>=13.1"])

    def test_cuda_version_requirement_needs_a_working_driver(self):
        """Issue 24 item 2: cuDriverGetVersion answers before cuInit and without a GPU, so a CUDA version
        requirement is met only where cuInit succeeds and a device is usable, never on the version alone."""
        t = self.tree()
        cases = {
            "cuInit fails": ({"GC_FAKE_CUDA_INIT": "100"}, "did not initialise"),
            "no device": ({"GC_FAKE_CUDA_GPUS": "0"}, None),
        }
        for what, (env, words) in cases.items():
            with self.subTest(what):
                r = self.cuda(t, self.libdir(), "--require", "cuda>=12.0", env=env, expect_rc=1)
                q = {x["name"]: x for x in r.json["verdict"]["requirements"]}
                self.assertFalse(q["cuda>=12.0"]["met"], repr(r))
                self.assertIn("supports CUDA 13.0, 12.0 needed", q["cuda>=12.0"]["detail"])
                if words:
                    self.assertIn(words, q["cuda>=12.0"]["detail"])
                self.assertEqual([f["subject"] for f in r.findings("require.unmet")], ["cuda>=12.0"], repr(r))
        # the CUDA smoke test failing on every device: not met either
        r = self.cuda(t, self.libdir(), "--require", "cuda>=12.0", env={"GC_FAKE_CUDA_COMPUTE": "lazy"}, expect_rc=1)
        q = {x["name"]: x for x in r.json["verdict"]["requirements"]}
        self.assertFalse(q["cuda>=12.0"]["met"], repr(r))
        self.assertIn("no CUDA device passed the CUDA smoke test", q["cuda>=12.0"]["detail"])

    def test_cuda_only_gpu_meets_require_gpu(self):
        """Issue 25: a GPU proven by the CUDA smoke test, no NVIDIA OpenCL ICD (as in most containers): the gpu
        target is ready and --require gpu / gpus>=1 are met, one definition of "a GPU computes"."""
        t = self.tree()
        v = tempfile.mkdtemp(prefix="gc-vendors-")
        self.addCleanup(shutil.rmtree, v, True)
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", v)
        r = self.cuda(t, self.libdir(), "--require", "gpu,gpus>=1,gpus>=2", command="check",
                      env={"OCL_ICD_VENDORS": v}, expect_rc=1)
        q = {x["name"]: x["met"] for x in r.json["verdict"]["requirements"]}
        self.assertEqual(q, {"gpu": True, "gpus>=1": True, "gpus>=2": False}, repr(r))
        self.assertTrue(r.json["verdict"]["targets"]["gpu"]["ready"], repr(r))
        self.assertEqual([f["subject"] for f in r.findings("require.unmet")], ["gpus>=2"])

    def test_bad_require_is_usage_error(self):
        r = gctest.run("cuda", "--json", "--require", "cuda>=12.x")
        self.assertEqual(r.rc, 2, repr(r))
        self.assertIn("cuda>=X.Y", r.stderr)

    def test_wheel_verdict_line_names_an_old_driver(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_VERSION": "12040"}, expect_rc=0)
        text = r.json["verdict"]["text"]
        self.assertIn("CUDA for PyTorch / TensorFlow / JAX wheels", text)
        self.assertIn("CUDA 13 not ready: the driver supports CUDA 12.4 only", text)
        c13 = r.json["verdict"]["targets"]["cuda13"]
        self.assertFalse(c13["ready"])

    def test_wheel_verdict_line_names_an_old_gpu(self):
        t = self.tree()
        r = self.cuda(t, self.libdir(), env={"GC_FAKE_CUDA_CC": "6.1"}, expect_rc=0)
        self.assertIn("CUDA 13 not ready: compute capability 6.1 is below the 7.5", r.json["verdict"]["text"])

    def test_h100_machine_without_nvidia_opencl_is_ready(self):
        """Regression: the healthy H100 machine (GPU at 0000:00:06.0, only PoCL for OpenCL) was "not ready"
        in gpucheckup 0.1 because cl.cpu-only was an error although the GPU computes through CUDA."""
        t = PciTree(self.make_tree())
        t.device("0000:00:06.0", 0x10de, 0x2330, 0x030200, driver="nvidia",
                 link=("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16))
        t.module("nvidia", 1)
        t.module("nvidia_uvm")
        t.nvidia_version(KVER, open_module=True)
        for n in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"):
            t.node(n)
        # PoCL only, for the loader in the children (host dir) and the ICD probe (inside --root)
        vendors = tempfile.mkdtemp(prefix="gc-vendors-")
        os.chmod(vendors, 0o755)
        self.addCleanup(shutil.rmtree, vendors, True)
        with open(POCL_ICD) as f:
            pocl = f.read()
        for base in (vendors, t.t.path(vendors)):
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(base, "pocl.icd"), "w") as f:
                f.write(pocl)
        cache = tempfile.mkdtemp(prefix="gc-pocl-cache-")
        self.addCleanup(shutil.rmtree, cache, True)
        r = self.cuda(t, self.libdir(), "--timeout", "20", command="check",
                      env={"GC_FAKE_CUDA_BUSIDS": "00000000:00:06.0", "OCL_ICD_VENDORS": vendors,
                           "POCL_CACHE_DIR": cache, "POCL_DEVICES": None}, expect_rc=0, timeout=240)
        self.assertTrue(r.json["verdict"]["ready"], repr(r))
        self.assertEqual(self.cuda_ids(r), [], repr(r))
        # OpenCL is only absent for the GPU that CUDA proves: information, and no warning is left
        for fid in ("cl.cpu-only", "cl.gpu-without-opencl"):
            (f,) = r.findings(fid)
            self.assertEqual(f["severity"], "info", fid)
            self.assertIn("(information: the GPU computes through CUDA)", f["message"])
        self.assertEqual(r.json["cuda"]["devices"][0]["pci_address"], "0000:00:06.0")
        self.assertEqual([x["id"] for x in r.json["findings"] if x["severity"] in ("error", "warning")], [])

    # ---- where it runs ------------------------------------------------------------------------

    def test_foreign_root_skips(self):
        t = self.tree()
        r = self.run_json("cuda", "--root", t.root)
        self.assertEqual(r.json["cuda"]["status"], "skipped")

    def test_check_includes_cuda(self):
        r = self.run_json("check", "--no-smoke", env={"LD_LIBRARY_PATH": None})
        self.assertIn("cuda", r.json)
        self.assertEqual(r.json["cuda"]["status"], "ok")

    def test_catalogue_lists_driver_ids(self):
        r = gctest.run("--list-checks")
        for fid in ("cuda.stub-library", "cuda.no-libcuda", "cuda.driver-library-mismatch", "cuda.uvm-missing",
                    "cuda.visible-devices-none", "cuda.fabric-manager", "cuda.compat-unsupported"):
            self.assertIn(fid, r.stdout)


class StubTests(CudaBase):
    """The CUDA toolkit's real parts; meson registers these (e2e-cuda-stub) only where the stub exists."""

    def setUp(self):
        self.assertTrue(STUB and os.path.exists(STUB), "GC_CUDA_STUB must name the toolkit's stubs/libcuda.so")

    def test_toolkit_without_driver_is_info_on_this_machine(self):
        """The toolkit's lib64 on LD_LIBRARY_PATH (no libcuda.so.1 there, only stubs/) and no NVIDIA GPU."""
        lib64 = os.path.dirname(os.path.dirname(STUB))
        r = self.cuda(None, lib64)
        devs = [d for d in (r.json.get("pci", {}).get("devices") or []) if d.get("vendor_id") == "10de"]
        if devs:
            self.skipTest("this machine has an NVIDIA GPU")
        self.assertIn("cuda.no-driver", self.cuda_ids(r), repr(r))
        self.assertFalse([f for f in r.json["findings"] if f["id"].startswith("cuda.") and f["severity"] != "info"])
        self.assertEqual(r.rc, 0, repr(r))

    def test_real_stub_via_ld_library_path(self):
        d = tempfile.mkdtemp(prefix="gc-stubdir-")
        self.addCleanup(shutil.rmtree, d, True)
        os.symlink(STUB, os.path.join(d, "libcuda.so.1"))
        r = self.cuda(None, d, expect_rc=1)
        f = r.findings("cuda.stub-library")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("LD_LIBRARY_PATH entry %s" % d, f[0]["message"])
        self.assertEqual(f[0]["subject"], os.path.realpath(STUB))
        self.assertIn("Remove %s from LD_LIBRARY_PATH" % d, f[0]["hint"])
        self.assertEqual(r.json["cuda"]["driver"]["cuinit"]["name"], "CUDA_ERROR_STUB_LIBRARY")
        self.assertIs(r.json["cuda"]["driver"]["library"]["stub"], True)

    def test_real_stub_as_unversioned_name_beside_a_working_driver(self):
        """The toolkit's real stubs directory first on LD_LIBRARY_PATH, the (fake) driver's libcuda.so.1 after it:
        CUDA works, but programs that dlopen libcuda.so (Warp, cudarc) get the stub (issue 36)."""
        stubs = os.path.dirname(STUB)
        d = self.libdir()
        r = self.cuda(None, stubs + ":" + d)
        self.assertNotIn("cuda.stub-library", [f["id"] for f in r.json["findings"]], repr(r))
        (f,) = r.findings("cuda.lib-unversioned-stub")
        self.assertEqual(f["severity"], "warning")
        self.assertEqual(f["subject"], os.path.realpath(STUB))
        self.assertIn("LD_LIBRARY_PATH entry %s" % stubs, f["message"])
        self.assertIn("libcuda.so.1 is the driver's %s" % os.path.join(os.path.realpath(d), "libcuda.so." + KVER),
                      f["message"])
        self.assertEqual(f["caused_by"]["id"], "cuda.lib-ld-path-stubs", repr(f))
        self.assertFalse(r.findings("cuda.lib-unversioned-missing"))
        # the driver's directory first, with its own libcuda.so: nothing about the unversioned name
        os.symlink("libcuda.so.1", os.path.join(d, "libcuda.so"))
        r = self.cuda(None, d + ":" + stubs)
        self.assertFalse(r.findings("cuda.lib-unversioned-stub"), repr(r))
        self.assertFalse(r.findings("cuda.lib-unversioned-missing"), repr(r))

    def test_require_cuda_explained_by_the_stub(self):
        d = tempfile.mkdtemp(prefix="gc-stubdir-")
        self.addCleanup(shutil.rmtree, d, True)
        os.symlink(STUB, os.path.join(d, "libcuda.so.1"))
        r = self.cuda(None, d, "--require", "cuda", expect_rc=1)
        (u,) = r.findings("require.unmet")
        self.assertEqual(u["caused_by"]["id"], "cuda.stub-library", repr(r))


if __name__ == "__main__":
    gctest.main()
