"""A library for another architecture is named, not "not installed" (issue 24 item 6): Debian's real 535
libcuda.so.1 and NVML for arm64 on this host's library path (glibc's loader refuses them, so loading them is
safe) and in a --root tree where the host's own libcuda would be; Debian's arm64 CUDA 11.8 runtime
(cuda.lib-wrong-arch, unless a copy for this machine of that name is found); Debian's arm64 OpenCL driver
named by its own nvidia.icd (icd.wrong-arch) and its arm64 ICD loader (icd.loader-wrong-arch)."""
import os
import platform
import shutil

import gctest
import nvidia_real


class RealNvidiaArchTests(gctest.TestCase):

    def setUp(self):
        if platform.machine() != "x86_64":
            self.fail("e2e-real-nvidia-arch puts an arm64 libcuda on an x86-64 host; this one is %s"
                      % platform.machine())
        self.nv = nvidia_real.fetch(self)
        self.assertTrue(os.path.exists(self.nv.arm64_libcuda), self.nv.arm64_libcuda)

    def check_arch(self, f, via):
        """F (one finding) names AArch64 against this x86-64 host, with its evidence."""
        self.assertIn("AArch64, 64-bit", f["message"])
        self.assertIn("x86-64, 64-bit", f["message"])
        ev = {e["source"]: e["value"] for e in f["evidence"]}
        self.assertEqual(ev, {"ELF header": "AArch64, 64-bit", "host": "x86-64, 64-bit", "found via": via})

    def check(self, r, path, via):
        ids = r.finding_ids()
        self.assertIn("cuda.driver-wrong-arch", ids, repr(r))
        self.assertNotIn("cuda.no-driver", ids, repr(r))  # it is installed, for the wrong machine
        f = [x for x in r.findings("cuda.driver-wrong-arch") if x["subject"] == path]
        self.assertEqual(len(f), 1, r.findings("cuda.driver-wrong-arch"))
        self.assertEqual(f[0]["severity"], "warning")
        self.assertIn("AArch64, 64-bit", f[0]["message"])
        self.assertIn("x86-64, 64-bit", f[0]["message"])
        ev = {e["source"]: e["value"] for e in f[0]["evidence"]}
        self.assertEqual(ev, {"ELF header": "AArch64, 64-bit", "host": "x86-64, 64-bit", "found via": via})

    def test_live_ld_library_path(self):
        env = {"LD_LIBRARY_PATH": self.nv.arm64_libs, "CUDA_VISIBLE_DEVICES": None}
        r = self.run_json("cuda", env=env)
        self.check(r, os.path.join(self.nv.arm64_libs, "libcuda.so.1"), "LD_LIBRARY_PATH")
        self.assertEqual(r.json["cuda"]["driver"]["status"], "no-library", r.json["cuda"]["driver"])
        r = self.run_json(env=env)  # the full check says it too
        self.check(r, os.path.join(self.nv.arm64_libs, "libcuda.so.1"), "LD_LIBRARY_PATH")

    def test_root_tree(self):
        t = self.make_tree()
        name = "libcuda.so.%s" % self.nv.version
        lib = t.path("/usr/lib/x86_64-linux-gnu/" + name)
        os.makedirs(os.path.dirname(lib))
        shutil.copy(os.path.join(self.nv.arm64_libs, name), lib)
        t.symlink(name, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
        # --live: the driver child runs here (this host has no libcuda on the path given), the search reads the tree
        r = self.run_json("cuda", "--root", t.root, "--live", env={"LD_LIBRARY_PATH": None})
        self.check(r, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "default")


    def test_live_nvml(self):
        # only NVML's directory: libnvidia-ml.so.1 for arm64, no libcuda
        d = os.path.join(self.make_tree().root, "nvml")
        os.mkdir(d)
        for name in os.listdir(self.nv.arm64_libs):
            if name.startswith("libnvidia-ml.so"):
                os.symlink(os.path.join(self.nv.arm64_libs, name), os.path.join(d, name))
        r = self.run_json("cuda", env={"LD_LIBRARY_PATH": d, "CUDA_VISIBLE_DEVICES": None})
        f = [x for x in r.findings("cuda.driver-wrong-arch") if x["subject"] == os.path.join(d, "libnvidia-ml.so.1")]
        self.assertEqual(len(f), 1, r.findings("cuda.driver-wrong-arch"))
        self.assertIn("NVML", f[0]["message"])
        self.check_arch(f[0], "LD_LIBRARY_PATH")

    def cudart(self, r):
        return [x for x in r.findings("cuda.lib-wrong-arch")]

    def test_live_cudart(self):
        d = self.nv.arm64_multiarch
        r = self.run_json("cuda", env={"LD_LIBRARY_PATH": d, "CUDA_VISIBLE_DEVICES": None})
        f = self.cudart(r)
        # libcudart.so.11.0 and libcudart.so.11.8.89 are one file: one finding, under the name met first
        self.assertEqual([x["subject"] for x in f], [os.path.join(d, "libcudart.so.11.0")], f)
        self.assertIn("CUDA runtime", f[0]["message"])
        self.check_arch(f[0], "LD_LIBRARY_PATH")

    def test_cudart_with_a_copy_for_this_machine_is_not_reported(self):
        # as on a multiarch install: a copy for this machine of the same name, later on the path, is the one
        # loaded (the suite's fake runtime stands for it)
        native = os.path.join(self.make_tree().root, "native")
        os.mkdir(native)
        shutil.copy(os.environ["GC_FAKE_CUDART_13_0"], os.path.join(native, "libcudart.so.11.0"))
        env = {"LD_LIBRARY_PATH": self.nv.arm64_multiarch + ":" + native, "CUDA_VISIBLE_DEVICES": None}
        r = self.run_json("cuda", env=env)
        self.assertEqual(self.cudart(r), [])

    def test_root_tree_cudart(self):
        t = self.make_tree()
        lib = t.path("/usr/lib/x86_64-linux-gnu/libcudart.so.11.8.89")
        os.makedirs(os.path.dirname(lib))
        shutil.copy(os.path.join(self.nv.arm64_multiarch, "libcudart.so.11.8.89"), lib)
        t.symlink("libcudart.so.11.8.89", "/usr/lib/x86_64-linux-gnu/libcudart.so.11.0")
        r = self.run_json("cuda", "--root", t.root, "--live", env={"LD_LIBRARY_PATH": None})
        f = self.cudart(r)
        self.assertEqual([x["subject"] for x in f], ["/usr/lib/x86_64-linux-gnu/libcudart.so.11.0"], f)
        self.check_arch(f[0], "default")

    def icd_env(self, vendors, **more):
        env = {"OCL_ICD_VENDORS": vendors, "OCL_ICD_FILENAMES": None, "OPENCL_VENDOR_PATH": None,
               "GPUCHECKUP_LIBOPENCL": None, "LD_LIBRARY_PATH": None}
        env.update(more)
        return env

    def test_icd_driver_by_name(self):
        # the package's own nvidia.icd ("libnvidia-opencl.so.1"), the arm64 driver on LD_LIBRARY_PATH
        v = os.path.join(self.make_tree().root, "vendors")
        os.mkdir(v)
        shutil.copy(self.nv.arm64_icd, v)
        r = self.run_json("icd", env=self.icd_env(v, LD_LIBRARY_PATH=self.nv.arm64_libs), expect_rc=1)
        icd = os.path.join(v, "nvidia.icd")
        f = r.findings("icd.wrong-arch")
        self.assertEqual([x["subject"] for x in f], [icd], r.json["findings"])
        self.assertEqual(f[0]["severity"], "error")  # as icd.missing-library: the loaders drop it as silently
        self.assertIn("libnvidia-opencl.so.1", f[0]["message"])
        self.check_arch(f[0], "LD_LIBRARY_PATH")
        self.assertNotIn("icd.missing-library", r.finding_ids())
        e = [x for x in r.json["icd"]["icds"] if x["file"] == icd][0]
        self.assertEqual(e["status"], "wrong-arch", e)

    def test_icd_driver_by_path_in_root_tree(self):
        # --root --live: the .icd file comes from the tree, the library it names is looked up on this machine
        t = self.make_tree()
        lib = os.path.join(self.nv.arm64_libs, "libnvidia-opencl.so.1")
        t.write("/etc/OpenCL/vendors/arm.icd", lib + "\n")
        r = self.run_json("icd", "--root", t.root, "--live", env=self.icd_env(None), expect_rc=1)
        f = r.findings("icd.wrong-arch")
        self.assertEqual([x["subject"] for x in f], ["/etc/OpenCL/vendors/arm.icd"], r.json["findings"])
        self.check_arch(f[0], "absolute")
        self.assertNotIn("icd.load-failed", r.finding_ids())

    def test_icd_loader(self):
        # the only loader gpucheckup may load is Debian's arm64 libOpenCL.so.1
        v = os.path.join(self.make_tree().root, "vendors")
        os.mkdir(v)
        env = self.icd_env(v, GPUCHECKUP_LIBOPENCL=self.nv.arm64_libopencl)
        r = self.run_json("icd", env=env, expect_rc=1)
        f = r.findings("icd.loader-wrong-arch")
        self.assertEqual([x["subject"] for x in f], [self.nv.arm64_libopencl], r.json["findings"])
        self.check_arch(f[0], "GPUCHECKUP_LIBOPENCL")
        nl = r.findings("icd.no-loader")
        self.assertEqual(len(nl), 1)
        self.assertEqual(nl[0]["caused_by"], {"id": "icd.loader-wrong-arch", "subject": self.nv.arm64_libopencl})


if __name__ == "__main__":
    gctest.main()
