"""The real NVIDIA OpenCL driver (Debian 12's 535 libnvidia-opencl.so.1, named by its own nvidia.icd, with the real
libcuda it loads) on this machine without an NVIDIA GPU: the icd probe calls it icd.absent-hardware (info), and
beside PoCL (a healthy CPU OpenCL) the full check exits 0 with no warning. As root inside tests/real/private-dev:
no device node appears in /dev. LD_DEBUG=files proves the driver ran in a child, not in gpucheckup itself.
(The fake for this case, tests/icd/test_absent_hardware.py, answers -1001; the real driver answers -1.)"""
import glob
import json
import os
import re
import shutil
import subprocess

import gctest
import nvidia_real

LINE = re.compile(r"^\s*(\d+):\s+file=(\S+) \[\d+\];\s+(?:dynamically loaded by|needed by)")
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"


class RealNvidiaOpenclTests(nvidia_real.RootCase):
    TMP_PREFIX = "gc-real-opencl-"
    ROOT_WHY = ("e2e-real-nvidia-opencl runs the real NVIDIA driver as root inside tests/real/private-dev "
                "to check that it creates no device node: run it as root")
    NO_NODE = True

    def setUp(self):
        super().setUp()
        with open(self.nv.amd64_icd, encoding="utf-8") as f:
            self.assertEqual(f.read().strip(), "libnvidia-opencl.so.1")

    def run_private(self, name, vendors, *args):
        """gpucheckup ARGS as root in a private /dev, the loader reading VENDORS, the real 535 libraries first on
        the library path, LD_DEBUG=files: (process, report, nodes that appeared, {pid: [file, ...]}, parent)."""
        out = os.path.join(self.tmp, name)
        os.makedirs(out)
        env = dict(os.environ, OCL_ICD_VENDORS=vendors, LD_LIBRARY_PATH=self.nv.amd64_libs, LD_DEBUG="files",
                   LD_DEBUG_OUTPUT=os.path.join(out, "ld"))
        for k in ("OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH", "GPUCHECKUP_LIBOPENCL", "CUDA_VISIBLE_DEVICES"):
            env.pop(k, None)
        p = subprocess.run([nvidia_real.PRIVATE_DEV, os.path.join(out, "new"), gctest.GPUCHECKUP,
                            *gctest._timeout_args(args)], capture_output=True, text=True, env=env, timeout=300)
        with open(os.path.join(out, "new"), encoding="utf-8") as f:
            appeared = [line for line in f.read().splitlines() if line]
        self.assertEqual(appeared, [], "the real NVIDIA OpenCL driver run created nodes in /dev: %s\nstderr: %s"
                         % (appeared, p.stderr[-2000:]))
        doc = json.loads(p.stdout)
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(p.stdout)
        loads = {}
        for f in glob.glob(os.path.join(out, "ld.*")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = LINE.match(line)
                    if m:
                        loads.setdefault(int(m.group(1)), []).append(os.path.basename(m.group(2)))
        parent = min(int(os.path.basename(f).split(".")[1]) for f in glob.glob(os.path.join(out, "ld.*")))
        children = {f for pid, v in loads.items() if pid != parent for f in v}
        self.assertIn("libnvidia-opencl.so.1", children, loads)
        self.assertNotIn("libnvidia-opencl.so.1", loads.get(parent, []))
        return p, doc

    def check_nvidia_entry(self, doc, vendors):
        icd = os.path.join(vendors, "nvidia.icd")
        (e,) = [e for e in doc["icd"]["icds"] if e["file"] == icd]
        self.assertEqual(e["resolved"], os.path.realpath(os.path.join(self.nv.amd64_libs, "libnvidia-opencl.so.1")), e)
        self.assertEqual((e["vendor"], e["driver"]["hardware"], e["driver"]["absent_hardware"]),
                         ("nvidia", "absent", True), e)
        found = [f for f in doc["findings"] if f["id"] == "icd.absent-hardware" and f["subject"] == icd]
        self.assertEqual([f["severity"] for f in found], ["info"], doc["findings"])
        bad = [(f["id"], f["severity"]) for f in doc["findings"]
               if f["id"].startswith("icd.") and f["severity"] in ("warning", "error")]
        self.assertEqual(bad, [], "the NVIDIA OpenCL driver without its GPU got a warning or an error")

    def test_icd_probe_alone(self):
        vendors = os.path.join(self.tmp, "vendors-nvidia")
        os.makedirs(vendors)
        shutil.copy(self.nv.amd64_icd, vendors)
        p, doc = self.run_private("icd", vendors, "icd", "--json")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.check_nvidia_entry(doc, vendors)

    def test_full_check_beside_pocl(self):
        """A healthy GPU-less machine: PoCL computes on the CPU, NVIDIA's driver package has no GPU to drive."""
        self.assertTrue(os.path.exists(POCL_ICD), "pocl-opencl-icd is missing (.ci/packages lists it)")
        vendors = os.path.join(self.tmp, "vendors-both")
        os.makedirs(vendors)
        shutil.copy(self.nv.amd64_icd, vendors)
        shutil.copy(POCL_ICD, vendors)
        p, doc = self.run_private("full", vendors, "--json")
        self.check_nvidia_entry(doc, vendors)
        bad = [(f["id"], f["severity"]) for f in doc["findings"] if f["severity"] in ("warning", "error")]
        self.assertEqual(bad, [], "a healthy machine without an NVIDIA GPU got a warning or an error")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(doc["verdict"]["exit_code"], 0, doc["verdict"])
        self.assertTrue(doc["verdict"]["targets"]["opencl"]["ready"], doc["verdict"])


if __name__ == "__main__":
    gctest.main()
