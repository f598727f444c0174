"""`gpucheckup cuda` loads no CUDA library whose version a file states (issue 30), and what it must load it
loads in one child per origin. Debian's real NVIDIA 535 libcuda and NVML are first on the library path (as
root, inside tests/real/private-dev), today's cuDNN wheel (tests/real/fetch-wheels) is the venv, and whatever
toolkit this machine has stays where it is. The dynamic linker's own trace (LD_DEBUG=files, written by every
process of the run to LD_DEBUG_OUTPUT) names each file each process loads: that is the proof, not gpucheckup's
word. Which versions a file states is decided here from the files themselves (a real file's name, the wheel
RECORDs listing the file with its size), then checked against the trace."""
import glob
import json
import os
import re
import subprocess

import gctest
import nvidia_real

FETCH_WHEELS = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-wheels")
LINE = re.compile(r"^\s*(\d+):\s+file=(\S+) \[\d+\];\s+(?:dynamically loaded by|needed by)")


def fetch_wheel_venv(test):
    p = subprocess.run([FETCH_WHEELS], capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        test.fail("tests/real/fetch-wheels failed (it needs PyPI once, then its cache): " + p.stderr[-3000:])
    return p.stdout.strip().splitlines()[-1]


def record_sizes(dist_dirs):
    """{basename: {size, ...}} of every file the RECORDs of these dist-info directories list."""
    out = {}
    for d in dist_dirs:
        try:
            with open(os.path.join(d, "RECORD"), encoding="utf-8") as f:
                for line in f:
                    parts = line.rstrip("\r\n").split(",")
                    if len(parts) == 3 and parts[2].isdigit():
                        out.setdefault(os.path.basename(parts[0]), set()).add(int(parts[2]))
        except OSError:
            pass
    return out


def stated_by_a_file(path, records):
    """True when a file states PATH's version: its real name carries one, or a RECORD lists it and its size."""
    real = os.path.realpath(path)
    base = os.path.basename(real)
    if re.search(r"\.so\.\d+\.\d+[\d.]*$", base):
        return True
    return os.path.getsize(real) in records.get(base, set())


class RealCudaNoLoadTests(nvidia_real.RootCase):
    TMP_PREFIX = "gc-real-noload-"
    ROOT_WHY = "e2e-real-cuda-noload loads the real libcuda as root inside tests/real/private-dev: run it as root"
    NO_NODE = False

    def setUp(self):
        super().setUp()
        self.venv = fetch_wheel_venv(self)

    def traced(self, name, ld_path, venv):
        """`gpucheckup --json cuda` in a private /dev with LD_DEBUG=files: (report, {pid: [file, ...]}, parent pid)."""
        out = os.path.join(self.tmp, "trace-" + name)
        os.makedirs(out)
        env = dict(os.environ, LD_LIBRARY_PATH=ld_path, LD_DEBUG="files", LD_DEBUG_OUTPUT=os.path.join(out, "ld"))
        env.pop("VIRTUAL_ENV", None)
        if venv:
            env["VIRTUAL_ENV"] = venv
        p = subprocess.run([nvidia_real.PRIVATE_DEV, os.path.join(out, "new"), gctest.GPUCHECKUP,
                            *gctest._timeout_args(("--json", "cuda"))],
                           capture_output=True, text=True, env=env, timeout=300)
        doc = json.loads(p.stdout)
        gctest.validate(doc)
        loads = {}
        for f in glob.glob(os.path.join(out, "ld.*")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = LINE.match(line)
                    if m:
                        loads.setdefault(int(m.group(1)), []).append(os.path.basename(m.group(2)))
        parent = min(int(os.path.basename(f).split(".")[1]) for f in glob.glob(os.path.join(out, "ld.*")))
        return doc, loads, parent

    def test_nothing_loaded_whose_version_a_file_states(self):
        doc, loads, parent = self.traced("stated", self.nv.amd64_libs, self.venv)
        libs = doc["cuda"]["libraries"]
        self.assertIsNone(doc["cuda"]["libraries_not_loaded"])
        # the trace sees the children: the real libcuda is loaded in one, not in gpucheckup itself
        self.assertTrue(any("libcuda.so.1" in v for pid, v in loads.items() if pid != parent), loads)
        self.assertNotIn("libcuda.so.1", loads.get(parent, []))
        sites = {os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(x["path"]))))
                 for x in libs if x["wheel"]}
        tk = [t["dir"] for t in doc["cuda"]["toolkits"]]
        records = record_sizes(glob.glob(os.path.join(self.venv, "lib", "python3*", "site-packages", "nvidia*.dist-info")) +
                               [d for s in sites for d in glob.glob(os.path.join(s, "nvidia*.dist-info"))] +
                               [d for t in tk for d in glob.glob(os.path.join(t, "dist-info", "nvidia*.dist-info"))])
        stated = [x for x in libs if stated_by_a_file(x["path"], records)]
        wheel = [x for x in libs if x["path"].startswith(os.path.realpath(self.venv) + "/")]
        self.assertTrue(wheel, "the cuDNN wheel's files are listed: %s" % libs)
        self.assertTrue(all(x in stated for x in wheel), wheel)  # its RECORD lists each of them
        loaded = {f for v in loads.values() for f in v}
        for x in stated:
            base = os.path.basename(x["path"])
            self.assertNotIn(base, loaded, "%s was loaded though a file states its version" % x["path"])
            self.assertIn(x["version_from"], ("file name", "wheel metadata", "toolkit version.json"), x)
            self.assertIsNone(x["error"], x)
        # the wheel's version, as its own dist-info says
        dist = glob.glob(os.path.join(self.venv, "lib", "python3*", "site-packages", "nvidia_cudnn_cu12-*.dist-info"))
        version = os.path.basename(dist[0])[len("nvidia_cudnn_cu12-"):-len(".dist-info")]
        for x in wheel:
            self.assertEqual((x["version"], x["cuda_major"]), (version, 12), x)
        # their dependencies (DT_NEEDED, read without loading) all resolve: no false alarm on real software,
        # the wheel's files and whatever toolkit the machine's cache names (here /usr/local/cuda-13.0)
        self.assertNotIn("cuda.lib-load-failed", [f["id"] for f in doc["findings"]], libs)

    def test_what_must_be_loaded_is_loaded_in_one_child(self):
        """The wheel's cuDNN files through symlinks on LD_LIBRARY_PATH, no venv: no dist-info is read for them
        (their site is not looked at), so they are loaded: all in one child, none in gpucheckup itself."""
        libdir = glob.glob(os.path.join(self.venv, "lib", "python3*", "site-packages", "nvidia", "cudnn", "lib"))[0]
        links = os.path.join(self.tmp, "links")
        os.makedirs(links)
        names = sorted(os.listdir(libdir))
        for n in names:
            os.symlink(os.path.join(libdir, n), os.path.join(links, n))
        doc, loads, parent = self.traced("links", self.nv.amd64_libs + ":" + links, None)
        mine = [x for x in doc["cuda"]["libraries"] if x["search_entry"] == links]
        self.assertEqual(sorted(x["file"] for x in mine), names, doc["cuda"]["libraries"])
        for x in mine:
            self.assertIn(x["version_from"], ("library", "main library"), x)
            self.assertIsNone(x["error"], x)
        pids = {pid for pid, v in loads.items() for n in names if n in v}
        self.assertEqual(len(pids), 1, "cuDNN's files were loaded by %s" % sorted(pids))
        self.assertNotIn(parent, pids)


if __name__ == "__main__":
    gctest.main()
