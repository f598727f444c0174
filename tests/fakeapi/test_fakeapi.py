"""A compute API built only into the test suite (tests/fakeapi/fakeapi.c) reaches the verdict, --require,
NFD and Prometheus through its own folder: nothing under src/ names it (issue 25)."""
import os
import shutil
import subprocess
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKEAPI = os.environ["GC_GPUCHECKUP_FAKEAPI"]
GPU = "0000:01:00.0"


class FakeApiTests(gctest.TestCase):
    def setUp(self):
        # a GPU on the bus that only FakeAPI drives; OpenCL has PoCL alone, CUDA no driver
        self.t = PciTree(self.make_tree())
        self.t.device(GPU, 0x1ed5, 0x0300, 0x030200, driver="fakegpu")
        self.vendors = tempfile.mkdtemp(prefix="gc-vendors-")
        self.addCleanup(shutil.rmtree, self.vendors, True)
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", self.vendors)
        # the icd probe reads .icd files inside --root, the loader in the children the host's: both
        os.makedirs(self.t.t.path(self.vendors))
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", self.t.t.path(self.vendors))
        self.empty = tempfile.mkdtemp(prefix="gc-empty-")
        self.addCleanup(shutil.rmtree, self.empty, True)

    def run_fake(self, *args, devices=None, warn=False, fmt="--json"):
        env = dict(os.environ, OCL_ICD_VENDORS=self.vendors, LD_LIBRARY_PATH=self.empty)
        for k in ("GC_FAKEAPI", "GC_FAKEAPI_WARN", "VIRTUAL_ENV", "CUDA_VISIBLE_DEVICES"):
            env.pop(k, None)
        if devices is not None:
            env["GC_FAKEAPI"] = devices
        if warn:
            env["GC_FAKEAPI_WARN"] = "1"
        argv = [fmt, *gctest._timeout_args(["check", "--root", self.t.root, "--live", *args])]
        p = subprocess.run([FAKEAPI, *argv], capture_output=True, text=True, env=env, timeout=300)
        return gctest.Result(p, argv)

    def test_a_device_it_proves_is_a_gpu_that_computes(self):
        r = self.run_fake("--require", "gpu,gpus>=1,fakeapi", devices=GPU + "=passed")
        self.assertEqual(r.rc, 0, repr(r))
        v = r.json["verdict"]
        self.assertEqual({q["name"]: q["met"] for q in v["requirements"]},
                         {"gpu": True, "gpus>=1": True, "fakeapi": True})
        self.assertTrue(v["targets"]["fakeapi"]["ready"])
        self.assertEqual(v["targets"]["gpu"]["detail"], "ready on %s FakeGPU 0 (FakeAPI)" % GPU)
        self.assertIn("FakeAPI: ready on %s FakeGPU 0" % GPU, v["text"])
        # the GPU has no OpenCL device, but it computes through FakeAPI: the OpenCL findings that say
        # so are warnings, and the verdict says no "no GPU computes here"
        self.assertNotIn("no GPU computes here", v["text"])
        nfd = self.run_fake(devices=GPU + "=passed", fmt="--format=nfd").stdout
        for label in ("gpu.ready=true", "fakeapi.ready=true", "opencl.ready=true"):
            self.assertIn("feature.node.kubernetes.io/gpucheckup-" + label + "\n", nfd)
        # every target has its label, the CPU's too (its value is this machine's)
        self.assertRegex(nfd, r"feature\.node\.kubernetes\.io/gpucheckup-cpu_avx\.ready=(true|false)\n")
        prom = self.run_fake(devices=GPU + "=passed", fmt="--format=prometheus").stdout
        self.assertIn('gpucheckup_smoke_pass{api="fakeapi",device="0",name="FakeGPU 0",pci_address="%s"} 1\n' % GPU,
                      prom)
        self.assertIn('gpucheckup_target_ready{target="fakeapi"} 1\n', prom)

    def test_a_failed_device_is_its_own_reason_and_no_other_api_s(self):
        r = self.run_fake("--require", "fakeapi", devices=GPU + "=failed")
        self.assertEqual(r.rc, 1, repr(r))
        v = r.json["verdict"]
        self.assertFalse(v["targets"]["fakeapi"]["ready"])
        self.assertFalse(v["targets"]["gpu"]["ready"])
        self.assertIn("fakeapi.device-failed", v["targets"]["fakeapi"]["reasons"])
        self.assertNotIn("fakeapi.device-failed", v["targets"]["opencl"]["reasons"])
        unmet = r.findings("require.unmet")
        self.assertEqual([(f["subject"], f["caused_by"]["id"]) for f in unmet], [("fakeapi", "fakeapi.device-failed")])
        nfd = self.run_fake(devices=GPU + "=failed", fmt="--format=nfd").stdout
        self.assertIn("feature.node.kubernetes.io/gpucheckup-fakeapi.ready=false\n", nfd)

    def test_no_device_relieves_its_own_warnings(self):
        r = self.run_fake(warn=True)
        self.assertEqual(r.findings("fakeapi.old-library")[0]["severity"], "info", repr(r))
        self.assertEqual(r.findings("fakeapi.old-library")[0]["caused_by"]["id"], "fakeapi.no-device")
        r = self.run_fake(devices=GPU + "=passed", warn=True)
        self.assertEqual(r.findings("fakeapi.old-library")[0]["severity"], "warning", repr(r))

    def test_src_names_no_fake_probe(self):
        """The whole point: nothing under src/ knows the fake API."""
        src = os.path.join(gctest.SOURCE_ROOT, "src")
        seen = 0
        for top, _dirs, files in os.walk(src):
            for name in sorted(files):
                with open(os.path.join(top, name), encoding="utf-8") as f:
                    self.assertNotIn("fakeapi", f.read().replace("tests/fakeapi/", ""), name)
                seen += 1
        self.assertGreater(seen, 50)


if __name__ == "__main__":
    gctest.main()
