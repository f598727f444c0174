"""Reads in gpucheckup's own process that never return (issue 37): a run ends at --timeout plus a second
whatever blocks, with a complete, schema-valid report naming the path.

- A FIFO at any file a captured tree holds (every file of both fixture trees that a run reads) is refused
  at once: opened O_NONBLOCK, found not to be a regular file, named by core.not-a-regular-file. libpci
  opens the PCI attributes itself: the pci probe checks them first.
- A FUSE filesystem whose reads never return (GC_REL_HANG_FUSE, mounted in a private mount namespace),
  under a tree and on the library path: O_NONBLOCK cannot help, so the run's watchdog leaves the blocked
  probe behind at the deadline, core.probe-timed-out names it and the path it was reading, every other
  probe's results are kept, and --health says UNKNOWN. Needs root (mount); the suite runs as root."""
import json
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import time

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
HANG_FUSE = os.environ["GC_REL_HANG_FUSE"]
T = 3.0
# the "plus a second": the watchdog leaves a blocked probe half a second after the deadline
SLACK = 1.5 if gctest.SANITIZED else 1.0


def unpack(fixture, into):
    with tarfile.open(os.path.join(FIXTURES, fixture, "tree.tar.gz")) as t:
        t.extractall(into, filter="tar") if hasattr(tarfile, "data_filter") else t.extractall(into)
    return into


def tree_files(root):
    """Every regular file of the tree at ROOT, as host paths ("/proc/cpuinfo")."""
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if stat.S_ISREG(os.lstat(p).st_mode):
                out.append("/" + os.path.relpath(p, root))
    return sorted(out)


def only_looked_up(path):
    """Files a run under --root looks up (stat, access) but never reads in its own process: device nodes
    (whose open is the point, and only on the live machine) and the driver libraries only its children
    load. A FIFO there is no file read: nothing to name, but the run must still end in time."""
    return path.startswith("/dev/") or ".so." in os.path.basename(path) or path.endswith(".so")


def run_timed(argv, env=None):
    e = dict(os.environ)
    e.update(env or {})
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=60)
    return proc, time.monotonic() - start


class HungReadTests(gctest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gc-hung-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def doc_of(self, proc):
        try:
            doc = json.loads(proc.stdout)
        except ValueError as e:
            self.fail("not JSON: %s\nstdout %s\nstderr %s" % (e, proc.stdout[-2000:], proc.stderr[-2000:]))
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(proc.stdout)
        return doc

    def assert_in_time(self, elapsed, what):
        self.assertLessEqual(elapsed, T + SLACK, "%s: the run took %.2f s with --timeout %.1f" % (what, elapsed, T))

    # ---- FIFOs in a captured tree ------------------------------------------------------------------

    def read_paths(self, fixture):
        """The files of FIXTURE's tree that a run reads (GPUCHECKUP_FS_TRACE), each one to replace by a FIFO."""
        root = unpack(fixture, os.path.join(self.dir, "trace-" + fixture))
        trace = os.path.join(self.dir, "trace-" + fixture + ".txt")
        proc, _ = run_timed([gctest.GPUCHECKUP, "--root", root, "--json", "--timeout", str(T)],
                            env={"GPUCHECKUP_FS_TRACE": trace})
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        with open(trace, encoding="utf-8", errors="replace") as f:
            traced = {line.strip() for line in f}
        files = [p for p in tree_files(root) if p in traced]
        self.assertGreaterEqual(len(files), 15, "too few files of %s are read: %s" % (fixture, files))
        return root, files

    def check_fifos(self, fixture):
        root, files = self.read_paths(fixture)
        checked = 0
        for path in files:
            with self.subTest(fixture=fixture, path=path):
                real = os.path.join(root, path.lstrip("/"))
                saved = real + ".gc-saved"
                os.rename(real, saved)
                os.mkfifo(real)
                try:
                    proc, elapsed = run_timed([gctest.GPUCHECKUP, "--root", root, "--json", "--timeout", str(T)])
                finally:
                    os.unlink(real)
                    os.rename(saved, real)
                self.assert_in_time(elapsed, path)
                self.assertIn(proc.returncode, (0, 1), proc.stderr)
                doc = self.doc_of(proc)
                self.assertFalse([f for f in doc["findings"] if f["id"] == "core.probe-failed"], path)
                named = [f for f in doc["findings"] if f["id"] == "core.not-a-regular-file" and f["subject"] == path]
                if not only_looked_up(path):
                    self.assertEqual(len(named), 1, "%s: %s" % (path, [f["id"] for f in doc["findings"]]))
                    self.assertIn("is a FIFO", named[0]["message"])
                    checked += 1
                self.assertFalse([f for f in doc["findings"] if f["id"] == "core.probe-timed-out"], path)
        self.assertGreaterEqual(checked, 15, fixture)

    def test_fifo_at_each_file_of_the_vm_tree(self):
        self.check_fifos("debian12-vm-no-gpu")

    def test_fifo_at_each_file_of_the_h100_tree(self):
        self.check_fifos("h100-nvidia-cuda-container")

    def test_fifo_where_libpci_reads_an_attribute(self):
        """The issue's case: libpci would open it itself and wait for a writer for good."""
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        attr = "/sys/bus/pci/devices/0000:00:02.0/vendor"
        real = os.path.join(root, attr.lstrip("/"))
        os.unlink(real)
        os.mkfifo(real)
        proc, elapsed = run_timed([gctest.GPUCHECKUP, "--root", root, "--json", "--timeout", str(T)])
        self.assert_in_time(elapsed, attr)
        doc = self.doc_of(proc)
        self.assertEqual([f["subject"] for f in doc["findings"] if f["id"] == "core.not-a-regular-file"], [attr])
        self.assertEqual(doc["pci"]["status"], "ok")
        # the device is still identified, from its config space read through hostfs
        notes = doc["pci"].get("notes") or []
        self.assertTrue(any("0000:00:02.0: libpci not used" in n for n in notes), notes)

    # ---- FUSE reads that never return --------------------------------------------------------------

    def fuse_run(self, mounts, args, env=None):
        argv = [HANG_FUSE]
        for d, names in mounts:
            argv += [d, ",".join(names)]
        argv += ["--", gctest.GPUCHECKUP, "--timeout", str(T), *args]
        return run_timed(argv, env=env)

    def test_fuse_under_a_pci_device_of_a_tree(self):
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        dev = os.path.join(root, "sys/bus/pci/devices/0000:00:02.0")
        names = sorted(os.listdir(dev))
        proc, elapsed = self.fuse_run([(dev, names)], ["--root", root, "--json"])
        self.assert_in_time(elapsed, "pci under FUSE")
        self.assertGreaterEqual(elapsed, T, "the run did not wait for its deadline: nothing hung?")
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        doc = self.doc_of(proc)
        timed = [f for f in doc["findings"] if f["id"] == "core.probe-timed-out"]
        self.assertEqual([f["subject"] for f in timed], ["pci"], doc["findings"])
        self.assertIn("/sys/bus/pci/devices/0000:00:02.0/", timed[0]["message"])
        self.assertEqual(doc["pci"]["status"], "failed")
        # every other probe's results are kept
        self.assertEqual(doc["cpu"]["status"], "ok")
        self.assertTrue(doc["cpu"].get("model") or doc["cpu"].get("vendor"), doc["cpu"])
        self.assertTrue(doc["host"].get("os"), doc["host"])

    def test_fuse_at_proc_and_etc_of_a_tree(self):
        """/proc/cpuinfo (the cpu probe) and /etc/os-release (the host section, read outside any probe)."""
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        proc_dir = os.path.join(root, "proc")
        etc = os.path.join(root, "etc")
        proc, elapsed = self.fuse_run([(proc_dir, ["cpuinfo"]), (etc, ["os-release"])],
                                      ["--root", root, "--json"])
        self.assert_in_time(elapsed, "proc and etc under FUSE")
        doc = self.doc_of(proc)
        timed = {f["subject"]: f["message"] for f in doc["findings"] if f["id"] == "core.probe-timed-out"}
        self.assertIn("cpu", timed, doc["findings"])
        self.assertIn("host", timed, doc["findings"])
        self.assertIn("/etc/os-release", timed["host"])
        self.assertEqual(doc["pci"]["status"], "ok")  # read nothing hung: kept
        self.assertTrue(doc["pci"].get("devices") is not None, doc["pci"])

    def test_fuse_on_the_library_path(self):
        """A hung mount on LD_LIBRARY_PATH: the probes that read a library's ELF header in-process are left
        behind, naming it; the drivers' children that dlopen it are killed at the deadline, as ever."""
        libdir = os.path.join(self.dir, "lib")
        os.makedirs(libdir)
        names = ["libcuda.so.1", "libnvidia-ml.so.1", "libOpenCL.so.1", "libvulkan.so.1"]
        proc, elapsed = self.fuse_run([(libdir, names)], ["--json"], env={"LD_LIBRARY_PATH": libdir})
        self.assert_in_time(elapsed, "library path under FUSE")
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        doc = self.doc_of(proc)
        timed = [f for f in doc["findings"] if f["id"] == "core.probe-timed-out"]
        self.assertTrue(timed, [f["id"] for f in doc["findings"]])
        self.assertTrue(any(libdir + "/" in f["message"] for f in timed), timed)
        self.assertEqual(doc["cpu"]["status"], "ok")

    def test_health_says_unknown(self):
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        dev = os.path.join(root, "sys/bus/pci/devices/0000:00:02.0")
        proc, elapsed = self.fuse_run([(dev, sorted(os.listdir(dev)))], ["--root", root, "--health"])
        self.assert_in_time(elapsed, "--health")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip(), "UNKNOWN core.probe-timed-out pci")

    # ---- a probe left behind has no answer: what it serves is unknown, never ready ---------------------

    def test_timed_out_pci_leaves_the_gpu_unknown(self):
        """pci serves the GPUs on the bus and every API's path (they depend on it): left behind, the run
        cannot say ready; --require gpu fails naming the timeout, and so does the gpu target."""
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        dev = os.path.join(root, "sys/bus/pci/devices/0000:00:02.0")
        proc, elapsed = self.fuse_run([(dev, sorted(os.listdir(dev)))],
                                      ["--root", root, "--json", "--require", "gpu"])
        self.assert_in_time(elapsed, "pci under FUSE, --require gpu")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        doc = self.doc_of(proc)
        timed = [f for f in doc["findings"] if f["id"] == "core.probe-timed-out"]
        self.assertEqual([(f["subject"], f["severity"]) for f in timed], [("pci", "error")], timed)
        self.assertFalse(doc["verdict"]["ready"], doc["verdict"])
        req = {q["name"]: q for q in doc["verdict"]["requirements"]}
        self.assertFalse(req["gpu"]["met"], req)
        self.assertIn("unknown: the pci probe", req["gpu"]["detail"])
        unmet = [f for f in doc["findings"] if f["id"] == "require.unmet"]
        self.assertEqual([(f.get("caused_by") or {}).get("id") for f in unmet], ["core.probe-timed-out"], unmet)
        gpu = doc["verdict"]["targets"]["gpu"]
        self.assertFalse(gpu["ready"], gpu)
        self.assertEqual(gpu["reasons"], ["core.probe-timed-out"], gpu)

    def test_timed_out_cpu_fails_its_require_forms(self):
        """The cpu probe answers --require avx2 and the cpu_avx target: left behind at /proc/cpuinfo, the
        requirement is unmet as unknown (not 'not usable'), and the verdict is not ready."""
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        proc, elapsed = self.fuse_run([(os.path.join(root, "proc"), ["cpuinfo"])],
                                      ["--root", root, "--json", "--require", "avx2"])
        self.assert_in_time(elapsed, "cpu under FUSE, --require avx2")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        doc = self.doc_of(proc)
        req = {q["name"]: q for q in doc["verdict"]["requirements"]}
        self.assertFalse(req["avx2"]["met"], req)
        self.assertIn("unknown: the cpu probe", req["avx2"]["detail"])
        sev = {f["subject"]: f["severity"] for f in doc["findings"] if f["id"] == "core.probe-timed-out"}
        self.assertEqual(sev.get("cpu"), "error", sev)
        for name, t in doc["verdict"]["targets"].items():
            if name == "cpu_avx":
                self.assertFalse(t["ready"], t)

    def test_timed_out_host_section_stays_a_warning(self):
        """The host section (/etc/os-release) serves no verdict: left behind, it is a warning and the run
        is as ready as the same tree without the hang (no false alarm)."""
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        plain = subprocess.run([gctest.GPUCHECKUP, "--root", root, "--json"], capture_output=True, text=True,
                               timeout=60)
        proc, elapsed = self.fuse_run([(os.path.join(root, "etc"), ["os-release"])], ["--root", root, "--json"])
        self.assert_in_time(elapsed, "etc under FUSE")
        doc = self.doc_of(proc)
        sev = {f["subject"]: f["severity"] for f in doc["findings"] if f["id"] == "core.probe-timed-out"}
        self.assertEqual(sev, {"host": "warning"}, doc["findings"])
        self.assertEqual(proc.returncode, plain.returncode, proc.stderr)
        self.assertEqual(doc["verdict"]["ready"], json.loads(plain.stdout)["verdict"]["ready"])

    def test_text_verdict_is_not_ready(self):
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        dev = os.path.join(root, "sys/bus/pci/devices/0000:00:02.0")
        proc, elapsed = self.fuse_run([(dev, sorted(os.listdir(dev)))], ["--root", root])
        self.assert_in_time(elapsed, "text verdict")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("Verdict: not ready", proc.stdout)

    def test_text_output_is_complete(self):
        root = unpack("debian12-vm-no-gpu", os.path.join(self.dir, "vm"))
        dev = os.path.join(root, "sys/bus/pci/devices/0000:00:02.0")
        proc, elapsed = self.fuse_run([(dev, sorted(os.listdir(dev)))], ["--root", root])
        self.assert_in_time(elapsed, "text")
        self.assertIn("core.probe-timed-out", proc.stdout)
        self.assertIn("Verdict:", proc.stdout)


if __name__ == "__main__":
    gctest.main()
