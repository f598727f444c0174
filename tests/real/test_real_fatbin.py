"""The fatbin reader on a real NVIDIA library: libcudnn_ext.so.9 of today's nvidia-cudnn-cu12 wheel (tests/real/fetch-wheels,
cached), put where a torch keeps its kernels; the architectures gpucheckup reads are the ones an independent
walk of the whole section finds, and each device's compute capability (the fake libcuda's) is judged by them."""
import os
import shutil
import sys

import gctest

for sub in ("frameworks", "cuda", "pci"):
    sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", sub))
import fwelf  # noqa: E402
import subprocess  # noqa: E402
from test_frameworks import FrameworksTest, SITE  # noqa: E402
from test_cuda import CudaBase  # noqa: E402

FETCH = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-wheels")


class RealFatbinTest(CudaBase):
    venv = FrameworksTest.venv
    run_fw = FrameworksTest.run_fw
    copies = FrameworksTest.copies
    fw_ids = FrameworksTest.fw_ids

    @classmethod
    def setUpClass(cls):
        p = subprocess.run([FETCH], capture_output=True, text=True, timeout=840)
        if p.returncode != 0:
            raise AssertionError("tests/real/fetch-wheels failed (is PyPI reachable?):\n" + p.stderr[-3000:])
        wheel = p.stdout.strip().splitlines()[-1]
        cls.lib = os.path.join(wheel, "lib", "python3.11", "site-packages", "nvidia", "cudnn", "lib",
                               "libcudnn_ext.so.9")
        if not os.path.exists(cls.lib):
            raise AssertionError("the cuDNN wheel has no libcudnn_ext.so.9 any more: %s" % cls.lib)

    def test_real_cudnn_fatbin(self):
        section = fwelf.real_fatbin(self.lib)
        self.assertTrue(section, "libcudnn_ext.so.9 has no .nv_fatbin section")
        sass, ptx = fwelf.archs(section)
        self.assertTrue(sass and all(30 <= a <= 200 for a in sass), sass)
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        lib = os.path.join(t.root, SITE, "torch", "lib")
        os.makedirs(lib)
        shutil.copy(self.lib, os.path.join(lib, "libtorch_cuda.so"))
        # a compute capability it has SASS for: no arch finding
        top = max(sass)
        r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "%d.%d" % (top // 10, top % 10)})
        (f,) = self.copies(r)
        code = f["gpu_code"]
        self.assertEqual((code["status"], code["sass"], code["ptx"]), ("ok", sorted(sass), sorted(ptx)), repr(code))
        self.assertGreater(code["entries"], 0)
        self.assertEqual([x for x in self.fw_ids(r) if x.startswith("frameworks.arch")], [])
        # one older than all it has, with no PTX at or below it: no kernel for it
        low = min(list(sass) + list(ptx)) - 5
        r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "%d.%d" % (low // 10, low % 10)})
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.arch-missing"), repr(f))


if __name__ == "__main__":
    gctest.main()
