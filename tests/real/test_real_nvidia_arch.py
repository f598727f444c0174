"""A libcuda for another architecture is named, not "not installed" (issue 24 item 6): Debian's real 535
libcuda.so.1 for arm64 on this host's library path (glibc's loader refuses it, so loading it is safe)
and in a --root tree where the host's own libcuda would be."""
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


if __name__ == "__main__":
    gctest.main()
