"""End-to-end tests of frameworks --import on fakes: a venv of this machine's python3 holding a fake torch the test writes."""
import os
import shutil
import sys
import time

import gctest
from fwfixtures import install_pins

FIXTURES = os.path.join(gctest.SOURCE_ROOT, "tests", "frameworks", "fixtures")
PYTHON = os.path.realpath(sys.executable)
PYVER = "python%d.%d" % sys.version_info[:2]

# The fake torch: version.py and METADATA are torch 2.9.0+cu128's own (the fixture); __init__.py answers as
# GC_FAKE_TORCH says: gpu (is_available() True, one device, the matmul right), cpu (False), importerror, hang,
# segv, or mark (writes GC_FAKE_TORCH_MARK: it was imported at all).
FAKE_INIT = r'''
import os
from . import version
__version__ = version.__version__
_mode = os.environ.get("GC_FAKE_TORCH", "gpu")
if _mode == "mark":
    open(os.environ["GC_FAKE_TORCH_MARK"], "w").close()
if _mode == "importerror":
    raise ImportError("libcudnn.so.9: cannot open shared object file: No such file or directory")
if _mode == "hang":
    import time
    time.sleep(600)
if _mode == "segv":
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)
print("a framework printing on stdout must not spoil the answer")


class _Tensor:
    def __matmul__(self, other):
        return self

    def sum(self):
        return self

    def item(self):
        return 64.0 * 64 * 64


def ones(*args, **kwargs):
    return _Tensor()


class cuda:
    @staticmethod
    def is_available():
        return _mode == "gpu"

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def get_device_name(i):
        return "Fake GPU \x1b[31m%d" % i
'''


def make_venv(base, rel="venv"):
    """A venv at BASE/REL whose bin/python3 is this machine's python3 (PEP 405: pyvenv.cfg's home), with the
    fake torch in its site-packages. Returns the venv's path."""
    venv = os.path.join(base, rel)
    site = os.path.join(venv, "lib", PYVER, "site-packages")
    os.makedirs(site)
    os.makedirs(os.path.join(venv, "bin"))
    os.symlink(PYTHON, os.path.join(venv, "bin", "python3"))
    with open(os.path.join(venv, "pyvenv.cfg"), "w") as fh:
        fh.write("home = %s\ninclude-system-site-packages = false\n" % os.path.dirname(PYTHON))
    src = os.path.join(FIXTURES, "torch-2.9.0")
    for top in os.listdir(src):
        if top != "SOURCE":
            shutil.copytree(os.path.join(src, top), os.path.join(site, top))
    install_pins(site, os.path.join(src, "torch-2.9.0.dist-info", "METADATA"))
    with open(os.path.join(site, "torch", "__init__.py"), "w") as fh:
        fh.write(FAKE_INIT)
    return venv


def python_running(path):
    """Whether a process of ours still runs with PATH in its command line."""
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as fh:
                    if path.encode() in fh.read():
                        return True
            except OSError:
                pass
    return False


class FrameworksImportTest(gctest.TestCase):
    def setUp(self):
        self.tmp = self.make_tree().root
        self.venv = make_venv(self.tmp)
        self.home = os.path.join(self.tmp, "home")
        os.makedirs(self.home)

    def run_fw(self, *extra, mode="gpu", env=None, timeout=None):
        e = {"VIRTUAL_ENV": self.venv, "CONDA_PREFIX": None, "HOME": self.home, "PATH": "/usr/bin:/bin",
             "GC_FAKE_TORCH": mode}
        e.update(env or {})
        args = ["frameworks", *extra] + (["--timeout", str(timeout)] if timeout else [])
        r = self.run_json(*args, env=e)
        self.assertEqual(r.json["frameworks"]["status"], "ok", repr(r))
        return r

    def torch(self, r):
        (f,) = [f for env in r.json["frameworks"]["environments"] if env["prefix"] == self.venv
                for f in env["frameworks"]]
        self.assertEqual((f["name"], f["version"]), ("torch", "2.9.0+cu128"))
        return f

    def fw_ids(self, r):
        return sorted(f["id"] for f in r.json["findings"] if f["id"].startswith("frameworks."))

    def test_prediction_wrong(self):
        # the prediction is this machine's (no GPU here: "will not"); the fake says the opposite of it. Without
        # --import nothing is imported.
        mark = os.path.join(self.tmp, "imported")
        f = self.torch(self.run_fw(mode="mark", env={"GC_FAKE_TORCH_MARK": mark}))
        self.assertNotIn("import", f)
        self.assertFalse(os.path.exists(mark))
        predicted = f["gpu"]
        self.assertIsNotNone(predicted, "this machine's prediction for a CUDA 12.8 torch must be yes or no")
        r = self.run_fw("--import", mode="cpu" if predicted else "gpu")
        f = self.torch(r)
        imp = f["import"]
        self.assertEqual((imp["status"], imp["gpu"], imp["agrees"], imp["error"]), ("ok", not predicted, False, None))
        self.assertEqual(imp["python"], os.path.join(self.venv, "bin", "python3"))
        self.assertEqual((imp["version"], imp["cuda"]), ("2.9.0+cu128", "12.8"))
        self.assertTrue(imp["file"].startswith(self.venv + "/lib/"), imp["file"])
        if not predicted:
            self.assertEqual((imp["available"], imp["matmul"], imp["device_count"]), (True, True, 1))
            self.assertEqual(imp["devices"], ["Fake GPU ?[31m0"])  # sanitised
        (w,) = r.findings("frameworks.prediction-wrong")
        self.assertEqual(w["severity"], "warning")
        said = "gpucheckup said it will %suse the GPU" % ("" if predicted else "not ")
        self.assertIn("PyTorch 2.9.0+cu128 (%s): %s (" % (self.venv, said), w["message"])
        self.assertIn("torch.cuda.is_available() and a matmul on cuda:0 says it will%s" %
                      (" not" if predicted else ""), w["message"])
        self.assertEqual(self.fw_ids(r), ["frameworks.prediction-wrong"])
        text = gctest.run("frameworks", "--import", env={"VIRTUAL_ENV": self.venv, "CONDA_PREFIX": None,
                                                          "HOME": self.home, "PATH": "/usr/bin:/bin",
                                                          "GC_FAKE_TORCH": "cpu" if predicted else "gpu"})
        self.assertIn("not as predicted (frameworks.prediction-wrong)", text.stdout)
        # reality wins: the line and the torch-gpu target go by what torch said; the finding stays
        tgt = r.json["verdict"]["targets"]["torch-gpu"]
        line = [x for x in r.json["verdict"]["text"].splitlines() if x.startswith("PyTorch 2.9.0+cu128 (%s): " % self.venv)]
        self.assertEqual(len(line), 1, r.json["verdict"]["text"])
        self.assertIn("imported, it says is_available() %s" % ("False" if predicted else "True"), line[0])
        self.assertIn("(gpucheckup predicted: %s)" % f["why"], line[0])
        if predicted:
            self.assertIn(": will not use the GPU: ", line[0])
            self.assertTrue(line[0].endswith("(frameworks.prediction-wrong)"), line[0])
            self.assertEqual((tgt["ready"], tgt["reasons"]), (False, ["frameworks.prediction-wrong"]))
        else:
            self.assertIn(": will use the GPU: ", line[0])
            self.assertEqual((tgt["ready"], tgt["reasons"]), (True, []))
            self.assertIn("imported: is_available() True", tgt["detail"])

    def test_import_error_is_import_failed(self):
        r = self.run_fw("--import", mode="importerror")
        imp = self.torch(r)["import"]
        self.assertEqual(imp["status"], "failed")
        self.assertEqual(imp["error"], "ImportError: libcudnn.so.9: cannot open shared object file: No such file or "
                                       "directory")
        (w,) = r.findings("frameworks.import-failed")
        self.assertEqual(w["severity"], "warning")
        self.assertIn("PyTorch 2.9.0+cu128 (%s): cannot be imported by %s/bin/python3: ImportError: libcudnn.so.9"
                      % (self.venv, self.venv), w["message"])
        self.assertNotIn("frameworks.prediction-wrong", self.fw_ids(r))
        # whatever was predicted, a framework that cannot be imported will not use the GPU: the line says so
        tgt = r.json["verdict"]["targets"]["torch-gpu"]
        self.assertEqual((tgt["ready"], tgt["reasons"]), (False, ["frameworks.import-failed"]))
        self.assertIn("PyTorch 2.9.0+cu128 (%s): will not use the GPU: imported, it fails: ImportError: libcudnn.so.9"
                      % self.venv, r.json["verdict"]["text"])

    def test_crash_is_import_failed(self):
        r = self.run_fw("--import", mode="segv")
        imp = self.torch(r)["import"]
        self.assertEqual(imp["status"], "failed")
        self.assertIn("Python was killed by SIGSEGV", imp["error"])
        self.assertEqual(len(r.findings("frameworks.import-failed")), 1)

    def test_hang_is_killed_at_the_deadline(self):
        start = time.monotonic()
        r = self.run_fw("--import", mode="hang", timeout=3)
        took = time.monotonic() - start
        self.assertLess(took, 3 + 2.5, "the run's --timeout bounds the import")
        imp = self.torch(r)["import"]
        self.assertEqual(imp["status"], "timeout")
        self.assertIn("timed out", imp["error"])
        (w,) = r.findings("frameworks.import-failed")
        self.assertIn("timed out", w["message"])
        self.assertFalse(python_running(self.venv), "the hung python was not killed")

    def test_interpreter_named_by_pyvenv_cfg(self):
        # no bin/python3: the interpreter pyvenv.cfg names, run under the venv's name so that it is the venv's
        os.unlink(os.path.join(self.venv, "bin", "python3"))
        with open(os.path.join(self.venv, "pyvenv.cfg"), "a") as fh:
            fh.write("executable = %s\n" % PYTHON)
        imp = self.torch(self.run_fw("--import", mode="cpu"))["import"]
        self.assertEqual((imp["status"], imp["python"]), ("ok", PYTHON), repr(imp))
        self.assertTrue(imp["file"].startswith(self.venv + "/lib/"), imp["file"])

    def test_root_tree_python_is_never_run(self):
        tree = self.make_tree()
        make_venv(tree.root, "opt/venv")
        mark = os.path.join(self.tmp, "imported")
        for live in ([], ["--live"]):
            r = self.run_json("frameworks", "--import", "--root", tree.root, *live,
                              env={"VIRTUAL_ENV": "/opt/venv", "CONDA_PREFIX": None, "HOME": "/root",
                                   "PATH": "/usr/bin", "GC_FAKE_TORCH": "mark", "GC_FAKE_TORCH_MARK": mark})
            (f,) = [f for env in r.json["frameworks"]["environments"] for f in env["frameworks"]]
            self.assertNotIn("import", f)
            self.assertIn("--import: nothing imported: the environments are --root's", " ".join(
                r.json["frameworks"]["notes"]))
            self.assertFalse(os.path.exists(mark), "a --root tree's Python was run")


if __name__ == "__main__":
    gctest.main()
