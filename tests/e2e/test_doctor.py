"""End-to-end doctor scenarios: fake trees + fake ICDs + PoCL, asserting root causes and verdicts."""
import os
import shutil
import subprocess
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the pci tests' tree builder)

POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"


class DoctorTests(gctest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp(prefix="gc-pocl-cache-")
        os.chmod(self.cache, 0o777)
        self.addCleanup(shutil.rmtree, self.cache, True)

    def vendors(self, tree, icds, libs=None):
        """Write .icd files (name -> library path) into a host dir V and into TREE at the same path V:
        the ICD probe reads .icd files inside --root, the loader in the OpenCL and smoke children reads
        the host's. LIBS: file name -> source library, copied into a dir the .icd files may name."""
        v = tempfile.mkdtemp(prefix="gc-vendors-")
        os.chmod(v, 0o755)
        self.addCleanup(shutil.rmtree, v, True)
        libdir = os.path.join(v, "lib")
        os.mkdir(libdir)
        for name, src in (libs or {}).items():
            shutil.copy(src, os.path.join(libdir, name))
        with open(POCL_ICD) as f:
            icds = dict(icds, **{"pocl.icd": f.read().strip()})
        for name, lib in icds.items():
            lib = lib.replace("@LIB@", libdir)
            for base in (v, tree.path(v)):
                os.makedirs(base, exist_ok=True)
                with open(os.path.join(base, name), "w") as f:
                    f.write(lib + "\n")
        return v

    def env(self, vendors, **extra):
        e = {"OCL_ICD_VENDORS": vendors, "POCL_CACHE_DIR": self.cache, "POCL_DEVICES": None}
        e.update(extra)
        return e

    def doctor(self, tree, vendors, *args, env_extra=None, prefix=None, expect_rc=None):
        e = self.env(vendors, **(env_extra or {}))
        argv = ["--root", tree.root, "--live", "--timeout", "20", *args]
        if prefix is None:
            return self.run_json(*argv, env=e, expect_rc=expect_rc)
        env = dict(os.environ)
        for k, v in e.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        proc = subprocess.run(prefix + [gctest.GPUCHECKUP, "--json", *argv], capture_output=True, text=True,
                              env=env, timeout=180)
        r = gctest.Result(proc, argv)
        gctest.validate(r.json)
        if expect_rc is not None:
            self.assertEqual(r.rc, expect_rc, repr(r))
        return r

    def assert_caused_by(self, r, fid, cause_id, cause_subject=None):
        fs = r.findings(fid)
        self.assertTrue(fs, "%s missing in %s" % (fid, r.finding_ids()))
        for f in fs:
            self.assertIsNotNone(f["caused_by"], "%s has no cause\n%r" % (fid, r))
            self.assertEqual(f["caused_by"]["id"], cause_id, "%s: %r" % (fid, f))
            if cause_subject:
                self.assertEqual(f["caused_by"]["subject"], cause_subject)

    def roots(self, r, severity="error"):
        return sorted({f["id"] for f in r.json["findings"] if f["severity"] == severity and not f["caused_by"]})

    # ---- scenarios ------------------------------------------------------------------------

    def test_nouveau_bound_nvidia_gpu_is_one_root_cause(self):
        tree = self.make_tree()
        t = PciTree(tree)
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nouveau", drm=("card0", "renderD128"))
        t.module("nouveau", 1)
        t.node("/dev/dri/renderD128")
        v = self.vendors(tree, {"nvidia.icd": "@LIB@/libnvidia-opencl.so.1"},
                         {"libnvidia-opencl.so.1": os.environ["GC_FAKE_ICD_NOPLAT"]})
        r = self.doctor(tree, v, "--require", "gpu", expect_rc=1)
        self.assertEqual(self.roots(r), ["pci.nouveau-bound"], repr(r))
        self.assert_caused_by(r, "icd.no-platforms", "pci.nouveau-bound", "0000:01:00.0")
        self.assert_caused_by(r, "cl.gpu-without-opencl", "pci.nouveau-bound", "0000:01:00.0")
        self.assert_caused_by(r, "require.unmet", "pci.nouveau-bound")
        gpu = r.json["verdict"]["targets"]["gpu"]
        self.assertFalse(gpu["ready"])
        self.assertEqual(gpu["reasons"], ["pci.nouveau-bound"])
        # PoCL still computes: OpenCL is ready, on the CPU only
        self.assertTrue(r.json["verdict"]["targets"]["opencl"]["ready"])
        text = gctest.run("--root", tree.root, "--live", "--timeout", "20", env=self.env(v))
        self.assertIn("GPU compute (OpenCL): not ready", text.stdout)
        self.assertIn("caused by: pci.nouveau-bound (0000:01:00.0)", text.stdout)
        # JSON keeps a consequence's hint (data); text prints none of them: the cause's is the fix (issue 24
        # item 8)
        caused = [f for f in r.json["findings"] if f["caused_by"] and f["hint"]]
        self.assertTrue(caused, repr(r))
        for f in caused:
            self.assertNotIn(f["hint"], text.stdout, f)
        # the hint is given once, at the root cause
        self.assertEqual(text.stdout.count("fix: "), len(self.roots(r, "error")) + len(
            [f for f in r.json["findings"] if f["severity"] != "error" and not f["caused_by"] and f["hint"]]))

    def test_nvidia_version_mismatch_explains_the_failing_icd(self):
        tree = self.make_tree()
        t = PciTree(tree)
        t.healthy_nvidia(v="550.90.07")
        tree.write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
        tree.write("/etc/ld.so.conf.d/nvidia.conf", "/opt/nvidia/lib64\n")
        t.nvidia_libs("535.183.01", "/opt/nvidia/lib64")
        v = self.vendors(tree, {"nvidia.icd": "@LIB@/libnvidia-opencl.so.1"},
                         {"libnvidia-opencl.so.1": os.environ["GC_FAKE_ICD_NOPLAT"]})
        r = self.doctor(tree, v, expect_rc=1)
        # this machine has no libcuda.so.1 to load (the tree's are empty files): a packaging fact no module
        # version can cause, so a root of its own beside the mismatch (issue 36: a cause must be able to cause)
        self.assertEqual(self.roots(r), ["cuda.no-libcuda", "drv.nvidia-version-mismatch"], repr(r))
        self.assert_caused_by(r, "icd.no-platforms", "drv.nvidia-version-mismatch")
        self.assert_caused_by(r, "cl.gpu-without-opencl", "drv.nvidia-version-mismatch")
        self.assertEqual(r.json["verdict"]["targets"]["gpu"]["reasons"][0], "drv.nvidia-version-mismatch")
        # the NVIDIA module is no reason for the APIs of other vendors' GPUs
        for name in ("levelzero", "rocm"):
            self.assertNotIn("drv.nvidia-version-mismatch", r.json["verdict"]["targets"][name]["reasons"])
        self.assertIn("not ready", r.json["verdict"]["text"])

    def test_amd_kfd_not_accessible_explains_platform_without_devices(self):
        tree = self.make_tree()
        t = PciTree(tree)
        t.device("0000:03:00.0", 0x1002, 0x73bf, 0x030000, driver="amdgpu", drm=("card0", "renderD128"))
        t.module("amdgpu")
        tree.write("/etc/group", "root:x:0:\nvideo:x:44:\nrender:x:4242:someoneelse\n")
        t.node("/dev/dri/renderD128", 0o660, gid=4242)
        t.node("/dev/kfd", 0o660, gid=4242)
        os.chmod(tree.root, 0o755)
        v = self.vendors(tree, {"amdocl64.icd": "@LIB@/libamdocl64.so"},
                         {"libamdocl64.so": os.environ["GC_FAKE_ICD_WORKING"]})
        fake = {"GC_FAKE_ICD_DEVICES": "0", "GC_FAKE_ICD_PLATFORM_NAME": "AMD Accelerated Parallel Processing",
                "GC_FAKE_ICD_PLATFORM_VENDOR": "Advanced Micro Devices, Inc."}
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        if not prefix:
            # a normal user owns what it creates: no owner bits deny the owner
            os.chmod(tree.path("/dev/kfd"), 0o060)
            os.chmod(tree.path("/dev/dri/renderD128"), 0o060)
        r = self.doctor(tree, v, env_extra=fake, prefix=prefix, expect_rc=1)
        self.assertIn("dev.no-access", self.roots(r), repr(r))
        self.assertNotIn("cl.platform-no-devices", self.roots(r))
        self.assert_caused_by(r, "cl.platform-no-devices", "dev.no-access")
        self.assert_caused_by(r, "cl.gpu-without-opencl", "dev.no-access")
        self.assertFalse(r.json["verdict"]["targets"]["gpu"]["ready"])

    def test_healthy_machine_with_only_pocl(self):
        r = self.run_json("--require", "opencl,avx", env={"POCL_CACHE_DIR": self.cache}, expect_rc=0)
        self.assertEqual([f for f in r.json["findings"] if f["severity"] != "info"], [])
        self.assertTrue(r.json["verdict"]["ready"])
        self.assertTrue(r.json["verdict"]["targets"]["opencl"]["ready"])
        self.assertTrue(r.json["verdict"]["targets"]["cpu_avx"]["ready"])
        self.assertFalse(r.json["verdict"]["targets"]["gpu"]["ready"])
        self.assertEqual([q["met"] for q in r.json["verdict"]["requirements"]], [True, True])
        q = gctest.run("-q", "--require", "opencl", env={"POCL_CACHE_DIR": self.cache})
        self.assertEqual(q.rc, 0)
        self.assertEqual(len(q.stdout.strip().splitlines()), 1, q.stdout)
        self.assertIn("Verdict: ready", q.stdout)

    # ---- --require ------------------------------------------------------------------------

    def test_require_avx_passes_here(self):
        r = self.run_json("cpu", "--require", "avx", expect_rc=0)
        self.assertEqual(r.json["verdict"]["requirements"][0]["name"], "avx")
        self.assertTrue(r.json["verdict"]["requirements"][0]["met"])

    def test_require_gpu_fails_here(self):
        r = self.run_json("--require", "gpu", env={"POCL_CACHE_DIR": self.cache}, expect_rc=1)
        unmet = r.findings("require.unmet")
        self.assertEqual([f["subject"] for f in unmet], ["gpu"])
        self.assertEqual(unmet[0]["caused_by"]["id"], "pci.no-gpu")
        self.assertFalse(r.json["verdict"]["ready"])

    def test_require_nonsense_exits_2_listing_valid_names(self):
        r = gctest.run("--require", "nonsense")
        self.assertEqual(r.rc, 2)
        self.assertIn("nonsense", r.stderr)
        for word in ("gpu", "opencl", "fp64", "gpus>=N", "x86-64-v2", "avx2"):
            self.assertIn(word, r.stderr)
        j = self.run_json("--require", "gpu,nonsense", expect_rc=2)
        self.assertIn("nonsense", j.json["error"]["message"])

    def test_require_every_form(self):
        # Every form is evaluated on the live machine, so what the CPU forms expect comes from what this
        # machine's kernel reports (an AVX-512 host meets x86-64-v4, an older one does not), and the
        # OpenCL driver set is PoCL's alone (a CPU device: no GPU, OpenCL 1.2 or later, fp64 on x86).
        flags = gctest.host_cpu_flags()
        level = gctest.host_x86_64_level(flags)
        cases = {"x86-64-v2": level >= 2, "x86-64-v3": level >= 3, "x86-64-v4": level >= 4,
                 "gpus>=1": False, "opencl-version>=1.2": True, "opencl-version>=9.9": False, "fp64": True,
                 "sse4_2": "sse4_2" in flags, "avx2": "avx2" in flags, "avx512f": "avx512f" in flags}
        v = tempfile.mkdtemp(prefix="gc-vendors-")
        self.addCleanup(shutil.rmtree, v, True)
        shutil.copy(POCL_ICD, v)
        r = self.run_json("--require", ",".join(cases), env={"POCL_CACHE_DIR": self.cache, "OCL_ICD_VENDORS": v})
        got = {q["name"]: q["met"] for q in r.json["verdict"]["requirements"]}
        self.assertEqual(got, cases)
        self.assertEqual(r.rc, 1)


if __name__ == "__main__":
    gctest.main()
