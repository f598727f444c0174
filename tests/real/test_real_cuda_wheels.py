"""End-to-end tests of the cuda probe's library part on today's real nvidia-cudnn-cu12 wheel (tests/real/fetch-wheels)."""
import glob
import os
import shutil
import subprocess
import tempfile

import gctest

FETCH = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-wheels")


# An older cuDNN than jax-cuda12-plugin 0.9.2 pins (nvidia-cudnn-cu12>=9.8): a real wheel of 2024 (issue 36).
OLD_CUDNN = "9.1.0.70"


def fetch(version=None):
    """The venv directory fetch-wheels made (cached under $GPUCHECKUP_REAL_CACHE or ~/.cache/gpucheckup-tests):
    today's wheel, or release VERSION."""
    out = subprocess.run([FETCH] + (["", version] if version else []), capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError("tests/real/fetch-wheels failed (it needs PyPI once, then its cache):\n" + out.stderr[-3000:])
    return out.stdout.strip().splitlines()[-1]


def dist_version(site):
    """The wheel's own version (its dist-info METADATA), not gpucheckup's reading: "9.28.0.42"."""
    meta = glob.glob(os.path.join(site, "nvidia_cudnn_cu12-*.dist-info", "METADATA"))
    with open(meta[0], encoding="utf-8") as f:
        for line in f:
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    raise AssertionError("no Version in " + meta[0])


def own_version_fn(path):
    """True when the file itself exports cudnnGetVersion or links libcudnn_graph (which does): nm/readelf,
    the truth gpucheckup's answer is checked against."""
    syms = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return " cudnnGetVersion@" in syms or " cudnnGetVersion\n" in syms or "[libcudnn_graph.so" in dyn


class RealCudnnWheelTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.venv = fetch()
        sites = glob.glob(os.path.join(cls.venv, "lib", "python3*", "site-packages"))
        assert len(sites) == 1, sites
        cls.site = sites[0]
        cls.libdir = os.path.join(cls.site, "nvidia", "cudnn", "lib")
        cls.version = dist_version(cls.site)
        cls.files = sorted(os.listdir(cls.libdir))

    def run_cuda(self):
        # `gpucheckup cuda` on the venv: the wheel's dist-info states the version of each of its files, so none
        # is loaded (issue 30).
        return self.run_json("cuda", env={"VIRTUAL_ENV": self.venv}, timeout=300)

    def run_cuda_loaded(self):
        """`gpucheckup cuda` with the wheel's files through symlinks on LD_LIBRARY_PATH and no venv: their
        site's dist-info is not looked at, so each file is loaded and asked its version (asked by name,
        `gpucheckup cuda` loads even on a host without GPU or driver)."""
        links = tempfile.mkdtemp(prefix="gc-cudnn-links-")
        self.addCleanup(shutil.rmtree, links, True)
        for f in self.files:
            os.symlink(os.path.join(self.libdir, f), os.path.join(links, f))
        return self.run_json("cuda", env={"VIRTUAL_ENV": None, "LD_LIBRARY_PATH": links}, timeout=300)

    def wheel_entries(self, r):
        real = os.path.realpath(self.libdir) + "/"
        return {e["file"]: e for e in r.json["cuda"]["libraries"] if e["path"].startswith(real)}

    def test_every_cudnn_file_takes_the_wheels_version_unloaded(self):
        r = self.run_cuda()
        entries = self.wheel_entries(r)
        self.assertEqual(sorted(entries), self.files, repr(r))
        for name, e in entries.items():
            self.assertIsNone(e["error"], "%s: %s" % (name, e))
            self.assertEqual((e["version"], e["version_from"]), (self.version, "wheel metadata"), "%s: %s" % (name, e))
            self.assertEqual(e["cuda_major"], 12, "%s: %s (a -cu12 wheel)" % (name, e))

    def test_every_cudnn_file_loads_and_has_the_wheels_version(self):
        r = self.run_cuda_loaded()
        entries = self.wheel_entries(r)
        self.assertEqual(sorted(entries), self.files, repr(r))
        want = ".".join(self.version.split(".")[:3])  # cudnnGetVersion has no build number: 9.28.0
        for name, e in entries.items():
            self.assertIsNone(e["error"], "%s: %s" % (name, e))
            self.assertEqual(e["version"], want, "%s: %s" % (name, e))
            self.assertEqual(e["cuda_major"], 12, "%s: %s (a -cu12 wheel)" % (name, e))

    def test_no_load_failed_finding_for_any_cudnn_file(self):
        r = self.run_cuda()
        bad = [f for f in r.findings("cuda.lib-load-failed") if "libcudnn" in (f["subject"] or "")]
        self.assertEqual(bad, [], repr(r))
        for name, t in r.json["verdict"]["targets"].items():
            self.assertNotIn("cuda.lib-load-failed", t["reasons"], "%s: %s" % (name, t))

    def test_member_without_version_function_takes_libcudnns(self):
        """Issue 24 item 1: cuDNN 9.2x's libcudnn_ext.so.9 exports no cudnnGetVersion and links no
        libcudnn_graph: loaded fine, its version is libcudnn.so.9's."""
        lacking = [f for f in self.files if f != "libcudnn.so.9" and not own_version_fn(os.path.join(self.libdir, f))]
        if not lacking:
            self.skipTest("today's wheel (%s) has no cuDNN file without a version function" % self.version)
        r = self.run_cuda_loaded()
        entries = self.wheel_entries(r)
        main = entries["libcudnn.so.9"]
        self.assertEqual(main["version_from"], "library", repr(main))
        for name in lacking:
            e = entries[name]
            self.assertEqual(e["version_from"], "main library", "%s: %s" % (name, e))
            self.assertEqual(e["version"], main["version"], "%s: %s" % (name, e))
            self.assertIn("libcudnn.so.9", e["cuda_version_from"], "%s: %s" % (name, e))
        # the text output lists the family once, with libcudnn's version
        self.assertIn("cuDNN %s" % main["version"], gctest.run("cuda", env={"VIRTUAL_ENV": self.venv}).stdout)

    def jax_venv(self):
        """A venv holding jaxlib 0.9.2's and jax-cuda12-plugin 0.9.2's real dist-info (tests/frameworks/fixtures)."""
        fixtures = os.path.join(gctest.SOURCE_ROOT, "tests", "frameworks", "fixtures")
        venv = tempfile.mkdtemp(prefix="gc-jax-venv-")
        self.addCleanup(shutil.rmtree, venv, True)
        site = os.path.join(venv, "lib", "python3.11", "site-packages")
        for w in ("jaxlib-0.9.2", "jax-cuda12-plugin-0.9.2"):
            for top in os.listdir(os.path.join(fixtures, w)):
                if top != "SOURCE":
                    shutil.copytree(os.path.join(fixtures, w, top), os.path.join(site, top))
        with open(os.path.join(venv, "pyvenv.cfg"), "w") as fh:
            fh.write("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11\n")
        return venv, site

    def test_jax_plugin_names_an_older_real_cudnn_first(self):
        """The issue's case on real files: nvidia-cudnn-cu12 9.1.0.70's real wheel (its libcudnn.so.9 and dist-info)
        first on LD_LIBRARY_PATH, jax-cuda12-plugin 0.9.2's real METADATA (>=9.8) unchanged: JAX would refuse it at start (a
        cuDNN older than the one it was built against), and frameworks.lib-older-minor names the
        copy, how the loader finds it, its version read from its own dist-info, and the 9.8 it needs."""
        old = fetch(OLD_CUDNN)
        (old_site,) = glob.glob(os.path.join(old, "lib", "python3*", "site-packages"))
        self.assertEqual(dist_version(old_site), OLD_CUDNN)
        libdir = os.path.join(old_site, "nvidia", "cudnn", "lib")
        venv, _ = self.jax_venv()
        r = self.run_json("frameworks", env={"VIRTUAL_ENV": venv, "LD_LIBRARY_PATH": libdir, "CONDA_PREFIX": None},
                          timeout=300)
        (f,) = r.findings("frameworks.lib-older-minor")
        self.assertEqual(f["severity"], "warning", repr(f))
        self.assertIn("the loader takes libcudnn.so.9 from %s (LD_LIBRARY_PATH entry %s), cuDNN %s, older than the "
                      "9.8 it needs" % (os.path.join(libdir, "libcudnn.so.9"), libdir, OLD_CUDNN), f["message"])
        # and today's wheel in its place: nothing to say
        r = self.run_json("frameworks", env={"VIRTUAL_ENV": venv, "LD_LIBRARY_PATH": self.libdir, "CONDA_PREFIX": None},
                          timeout=300)
        self.assertEqual(r.findings("frameworks.lib-older-minor"), [], repr(r))

    def test_jax_plugin_reads_this_wheels_version_from_its_dist_info(self):
        """jax-cuda12-plugin 0.9.2's real METADATA (nvidia-cudnn-cu12<10.0,>=9.8) in a venv of its own, this real
        cuDNN wheel's lib directory first on LD_LIBRARY_PATH: its version comes from the wheel's real dist-info
        (the file is only libcudnn.so.9), and it is not older than 9.8: no frameworks.lib-older-minor (issue 36;
        test_jax_plugin_names_an_older_real_cudnn_first does it with a real older wheel)."""
        venv, site = self.jax_venv()
        r = self.run_json("frameworks", env={"VIRTUAL_ENV": venv, "LD_LIBRARY_PATH": self.libdir, "CONDA_PREFIX": None},
                          timeout=300)
        jax = [f for env in r.json["frameworks"]["environments"] for f in env["frameworks"] if f["name"] == "jax"]
        self.assertEqual(len(jax), 1, repr(r))
        self.assertEqual(r.findings("frameworks.lib-older-minor"), [], repr(r))
        self.assertTrue(self.version.startswith("9.") and int(self.version.split(".")[1]) >= 8, self.version)
        # the same METADATA with the cuDNN pin one minor above this wheel (a JAX built against a newer cuDNN):
        # the wheel's real dist-info version is read and named
        major, minor = (int(x) for x in self.version.split(".")[:2])
        meta = glob.glob(os.path.join(site, "jax_cuda12_plugin-*.dist-info", "METADATA"))[0]
        with open(meta, encoding="utf-8") as fh:
            text = fh.read()
        self.assertIn("nvidia-cudnn-cu12<10.0,>=9.8;", text)
        with open(meta, "w", encoding="utf-8") as fh:
            fh.write(text.replace("nvidia-cudnn-cu12<10.0,>=9.8;", "nvidia-cudnn-cu12<10.0,>=%d.%d;" % (major, minor + 1)))
        r = self.run_json("frameworks", env={"VIRTUAL_ENV": venv, "LD_LIBRARY_PATH": self.libdir, "CONDA_PREFIX": None},
                          timeout=300)
        (f,) = r.findings("frameworks.lib-older-minor")
        self.assertIn("the loader takes libcudnn.so.9 from %s (LD_LIBRARY_PATH entry %s), cuDNN %s, older than the "
                      "%d.%d it needs" % (os.path.join(self.libdir, "libcudnn.so.9"), self.libdir, self.version, major,
                                          minor + 1), f["message"])

if __name__ == "__main__":
    gctest.main()
