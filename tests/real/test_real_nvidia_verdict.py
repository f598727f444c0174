"""The verdict on a machine without a GPU that has NVIDIA's real driver 535 userspace (issue 24): ready, no
warning, every verdict line naming pci.no-gpu, and a CUDA 13 runtime beside it told as information only."""
import json
import os
import shutil
import subprocess
import tempfile

import sys

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_real_cuda_wheels import fetch as fetch_cudnn_wheel  # noqa: E402
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"


def nvidia_535():
    """The unpacked Debian packages (tests/real/fetch-nvidia): (libdir, version)."""
    out = subprocess.run([os.path.join(HERE, "fetch-nvidia")], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError("tests/real/fetch-nvidia failed:\n" + out.stderr)
    base = out.stdout.strip()
    with open(os.path.join(base, "VERSION")) as f:
        version = f.read().strip().split("-")[0]
    return os.path.join(base, "amd64/usr/lib/x86_64-linux-gnu/nvidia/current"), version


class RealNvidiaVerdict(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise RuntimeError("these tests load the real libcuda in a private mount namespace: run them as root")
        cls.libdir, cls.version = nvidia_535()

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gc-real-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        # a CUDA 13 runtime (the suite's fake libcudart, answering 13.0) and only PoCL for OpenCL
        self.cudart = os.path.join(self.tmp, "cudart")
        os.mkdir(self.cudart)
        shutil.copy(os.environ["GC_FAKE_CUDART_13_0"], os.path.join(self.cudart, "libcudart.so.13"))
        self.vendors = os.path.join(self.tmp, "vendors")
        os.mkdir(self.vendors)
        shutil.copy(POCL_ICD, self.vendors)

    def check(self, *args, ldpath, venv=None):
        new = os.path.join(self.tmp, "new-nodes")
        env = dict(os.environ, LD_LIBRARY_PATH=ldpath, OCL_ICD_VENDORS=self.vendors)
        for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "VIRTUAL_ENV"):
            env.pop(k, None)
        if venv:
            env["VIRTUAL_ENV"] = venv
        cmd = [os.path.join(HERE, "private-dev"), new, gctest.GPUCHECKUP, "--json", *gctest._timeout_args(args)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        r = gctest.Result(p, args)
        try:
            gctest.validate(r.json)
        except (ValueError, Exception) as e:  # noqa: BLE001
            self.fail("%s\n%r" % (e, r))
        return r

    def test_no_gpu_with_the_real_driver_userspace_is_ready_and_names_no_gpu(self):
        r = self.check("check", ldpath=self.libdir + ":" + self.cudart)
        self.assertEqual(r.rc, 0, repr(r))
        bad = [(f["id"], f["severity"]) for f in r.json["findings"] if f["severity"] != "info"]
        self.assertEqual(bad, [], repr(r))
        ids = r.finding_ids()
        self.assertIn("pci.no-gpu", ids)
        # the real libcuda says so itself: cuInit answers no device
        nogpu = r.findings("cuda.no-gpu")
        self.assertEqual(len(nogpu), 1, repr(r))
        self.assertIn(self.version, nogpu[0]["message"])
        # the CUDA 13 runtime needs a newer driver than 535: information, caused by there being no GPU
        old = r.findings("cuda.lib-driver-too-old")
        self.assertEqual(len(old), 1, repr(r))
        self.assertEqual(old[0]["severity"], "info")
        self.assertEqual(old[0]["caused_by"]["id"], "cuda.no-gpu")
        # every verdict line about the GPU names the real reason, and no target is blamed on CUDA's libraries
        lines = r.json["verdict"]["text"].splitlines()
        gpu_lines = [x for x in lines if x.startswith(("GPU compute", "CUDA for"))]
        self.assertEqual(len(gpu_lines), 2, lines)
        for line in gpu_lines:
            self.assertIn("(pci.no-gpu)", line)
        for name, t in r.json["verdict"]["targets"].items():
            self.assertFalse([x for x in t["reasons"] if x.startswith("cuda.lib-")], (name, t))
        self.assertTrue(r.json["verdict"]["targets"]["opencl"]["ready"])
        self.assertFalse(r.json["verdict"]["targets"]["gpu"]["ready"])

    def test_issue_24_done_when(self):
        """Issue 24's scenario whole: no GPU, the real 535 userspace on the library path, today's cuDNN wheel in
        the active venv (its libcudnn_ext.so.9 has no cudnnGetVersion): exit 0, no warning, and the verdict
        lines name pci.no-gpu, with the libraries listed (check) and loaded (cuda)."""
        venv = fetch_cudnn_wheel()
        for command in ("check", "cuda"):
            with self.subTest(command):
                r = self.check(command, ldpath=self.libdir, venv=venv)
                self.assertEqual(r.rc, 0, repr(r))
                self.assertEqual([(f["id"], f["subject"]) for f in r.json["findings"] if f["severity"] != "info"], [],
                                 repr(r))
                libs = [x for x in r.json["cuda"]["libraries"] if x["path"].startswith(venv)]
                self.assertTrue([x for x in libs if x["file"] == "libcudnn_ext.so.9"], libs)
                lines = [x for x in r.json["verdict"]["text"].splitlines() if x.startswith(("GPU compute", "CUDA for"))]
                self.assertTrue(lines, r.json["verdict"]["text"])
                for line in lines:
                    self.assertIn("(pci.no-gpu)", line)

    def test_cuda_version_requirement_is_not_met_without_a_gpu(self):
        """cuDriverGetVersion of the real 535 says 12.2 without a GPU: a CI gate must still fail."""
        r = self.check("check", "--no-smoke", "--require", "cuda>=12.0", ldpath=self.libdir)
        self.assertEqual(r.rc, 1, repr(r))
        q = {x["name"]: x for x in r.json["verdict"]["requirements"]}
        self.assertFalse(q["cuda>=12.0"]["met"], repr(r))
        self.assertIn("supports CUDA 12.2", q["cuda>=12.0"]["detail"])
        self.assertIn("did not initialise", q["cuda>=12.0"]["detail"])


if __name__ == "__main__":
    gctest.main()
