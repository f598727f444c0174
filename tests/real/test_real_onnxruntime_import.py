"""frameworks --import on a real framework: a cached venv with onnxruntime (the CPU build) from PyPI (tests/real/fetch-onnxruntime)."""
import os
import subprocess
import tempfile

import gctest

FETCH = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-onnxruntime")
GPU_PROVIDERS = {"CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider",
                 "MIGraphXExecutionProvider"}


class RealOnnxruntimeImportTest(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = subprocess.run([FETCH], capture_output=True, text=True, timeout=840)
        if p.returncode != 0:
            raise AssertionError("tests/real/fetch-onnxruntime failed (is PyPI reachable?):\n" + p.stderr[-3000:])
        cls.venv = p.stdout.strip().splitlines()[-1]
        with open(os.path.join(cls.venv, "VERSION")) as fh:
            cls.version = fh.read().strip()

    def test_import_agrees_with_the_prediction(self):
        with tempfile.TemporaryDirectory() as home:
            r = self.run_json("frameworks", "--import", "--timeout", "60",
                              env={"VIRTUAL_ENV": self.venv, "CONDA_PREFIX": None, "HOME": home, "PATH": "/usr/bin:/bin"})
        copies = [f for env in r.json["frameworks"]["environments"] if env["prefix"] == self.venv
                  for f in env["frameworks"]]
        self.assertTrue(copies, repr(r))
        for f in copies:
            # the prediction, from the files: the CPU build
            self.assertEqual((f["name"], f["distribution"], f["version"], f["build"], f["gpu"]),
                             ("onnxruntime", "onnxruntime", self.version, "cpu", False), repr(f))
            # what onnxruntime says, imported by the venv's own python
            imp = f["import"]
            self.assertEqual((imp["status"], imp["error"], imp["version"]), ("ok", None, self.version), repr(imp))
            self.assertEqual(imp["python"], os.path.join(self.venv, "bin", "python3"))
            self.assertTrue(imp["file"].startswith(self.venv + "/"), imp["file"])
            self.assertIn("CPUExecutionProvider", imp["providers"])
            self.assertFalse(GPU_PROVIDERS & set(imp["providers"]), imp["providers"])
            self.assertEqual((imp["gpu"], imp["agrees"]), (False, True))
        ids = r.finding_ids()
        self.assertNotIn("frameworks.prediction-wrong", ids)
        self.assertNotIn("frameworks.import-failed", ids)


if __name__ == "__main__":
    gctest.main()
