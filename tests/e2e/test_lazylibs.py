#!/usr/bin/env python3
"""test_lazylibs.py: libxml2, libarchive, cairo and libsystemd are never linked; the commands that need one load it,
and fail with exit 3 and the library's name when it cannot be loaded (issue 17, src/util/lazylib.h); libsystemd
only feeds the health probe's journal fallback, whose absence is a reason in the kernel log (test_health.py)."""
import os
import re
import subprocess
import tempfile

import gctest

LAZY = {"libxml2": "GPUCHECKUP_LIBXML2", "libarchive": "GPUCHECKUP_LIBARCHIVE", "libcairo": "GPUCHECKUP_LIBCAIRO",
        "libsystemd": "GPUCHECKUP_LIBSYSTEMD"}
# Names no system has: the override makes the command load this instead of the real library.
MISSING = "libgc-no-such-lazy-library.so.7"
CLEAN = {v: None for v in LAZY.values()}
# Set by tests/meson.build from the `plot` option: "1" when bench --plot draws with cairo.
WITH_CAIRO = os.environ.get("GC_BUILT_WITH_CAIRO")


def loaded(*args, env=None):
    """The libraries the dynamic linker opened for a run of gpucheckup ARGS (LD_DEBUG=files), and the run."""
    r = gctest.run(*args, env=dict(CLEAN, LD_DEBUG="files", **(env or {})))
    return set(re.findall(r"file=(lib[^ \[]+) \[", r.stderr)), r


class LazyLibs(gctest.TestCase):
    def assert_clear_failure(self, r, env_var, subject, json_wanted):
        """Exit 3, a message naming what needed the library, the file tried and dlerror's words."""
        self.assertEqual(r.rc, 3, repr(r))
        for word in (subject, MISSING, env_var, "cannot be loaded", "cannot open shared object file"):
            self.assertIn(word, r.stderr, repr(r))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, repr(r))
        if json_wanted:
            err = r.json["error"]
            self.assertEqual((err["kind"], err["exit_code"]), ("internal", 3), repr(r))
            self.assertIn(MISSING, err["message"])
            self.assertIn(subject, err["message"])

    def test_binary_links_none_of_them(self):
        out = subprocess.run(["readelf", "-d", gctest.GPUCHECKUP], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
        self.assertIn("libjson-c.so.5", needed, out)  # the parse sees NEEDED entries at all
        for lib in LAZY:
            self.assertFalse([n for n in needed if n.startswith(lib + ".")], f"{lib} is NEEDED: {needed}")
        # nor through another library: the whole closure ldd resolves
        closure = subprocess.run(["ldd", gctest.GPUCHECKUP], capture_output=True, text=True, check=True).stdout
        self.assertIn("libjson-c", closure)
        for lib in LAZY:
            self.assertNotIn(lib + ".so", closure)

    def test_commands_load_only_what_they_need(self):
        libs, r = loaded("--json", "pci")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertIn("libjson-c.so.5", libs, r.stderr[-2000:])
        for lib in LAZY:
            self.assertFalse([x for x in libs if x.startswith(lib + ".")], f"{lib} loaded by --json pci: {libs}")
        libs, r = loaded("--format=junit", "pci")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertIn("libxml2.so.2", libs)
        self.assertNotIn("libarchive.so.13", libs)
        self.assertNotIn("libcairo.so.2", libs)
        self.assertIn("<testsuites", r.stdout)

    def test_junit_without_libxml2(self):
        r = gctest.run("--format=junit", "pci", env=dict(CLEAN, GPUCHECKUP_LIBXML2=MISSING))
        self.assert_clear_failure(r, "GPUCHECKUP_LIBXML2", "--format=junit", json_wanted=False)
        self.assertEqual(r.stdout, "")

    def test_junit_library_without_the_functions(self):
        # a library that loads but is not libxml2: named, with the function it lacks
        r = gctest.run("--format=junit", "pci", env=dict(CLEAN, GPUCHECKUP_LIBXML2="libc.so.6"))
        self.assertEqual(r.rc, 3, repr(r))
        self.assertRegex(r.stderr, r"--format=junit needs libc\.so\.6 \(GPUCHECKUP_LIBXML2\), which has no xml\w+: "
                                   r".*undefined symbol: xml\w+")

    def test_snapshot_without_libarchive(self):
        d = tempfile.mkdtemp(prefix="gc-lazy-")
        out = os.path.join(d, "node.tar.gz")
        for json_wanted in (False, True):
            args = ["snapshot", "-o", out, "--no-smoke"] + (["--json"] if json_wanted else [])
            r = gctest.run(*args, env=dict(CLEAN, GPUCHECKUP_LIBARCHIVE=MISSING))
            self.assert_clear_failure(r, "GPUCHECKUP_LIBARCHIVE", "snapshot: reading or writing a snapshot",
                                      json_wanted)
            if json_wanted:
                gctest.validate(r.json)
            self.assertFalse(os.path.exists(out))
        self.assertEqual(os.listdir(d), [])  # nothing half written
        os.rmdir(d)

    def test_root_snapshot_without_libarchive(self):
        d = tempfile.mkdtemp(prefix="gc-lazy-")
        snap = os.path.join(d, "node.tar.gz")
        r = gctest.run("snapshot", "-o", snap, "--no-smoke", env=CLEAN)
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertTrue(os.path.getsize(snap) > 0)
        r = self.run_json("--root", snap, "pci", env=dict(CLEAN, GPUCHECKUP_LIBARCHIVE=MISSING), expect_rc=3)
        self.assert_clear_failure(r, "GPUCHECKUP_LIBARCHIVE", f"--root {snap}: reading or writing a snapshot",
                                  json_wanted=True)
        # a directory as --root never needs it
        r = self.run_json("--root", d, "pci", env=dict(CLEAN, GPUCHECKUP_LIBARCHIVE=MISSING))
        self.assertIn(r.rc, (0, 1), repr(r))
        # and with the library, the same snapshot replays
        r = self.run_json("--root", snap, "pci", env=CLEAN)
        self.assertIn(r.rc, (0, 1), repr(r))
        os.unlink(snap)
        os.rmdir(d)

    def test_plot_without_cairo(self):
        self.assertIn(WITH_CAIRO, ("0", "1"), "GC_BUILT_WITH_CAIRO is set by tests/meson.build")
        out = os.path.join(tempfile.mkdtemp(prefix="gc-lazy-"), "bench.svg")
        env = dict(CLEAN, GPUCHECKUP_LIBCAIRO=MISSING, POCL_DEVICES="pthread")
        for json_wanted in (False, True):
            args = ["bench", "--bench-time", "1", "--plot", out] + (["--json"] if json_wanted else [])
            r = gctest.run(*args, env=env)
            if WITH_CAIRO == "0":  # documented: refused before anything runs, exit 2
                self.assertEqual(r.rc, 2, repr(r))
                self.assertIn("built without cairo", r.stderr)
            else:
                self.assert_clear_failure(r, "GPUCHECKUP_LIBCAIRO", "--plot: drawing the chart", json_wanted)
                # before the benchmark, not after it
                self.assertNotIn("bench: device", r.stderr)
            if json_wanted:
                gctest.validate(r.json)
            self.assertFalse(os.path.exists(out))
        os.rmdir(os.path.dirname(out))

    def test_other_commands_do_not_care(self):
        env = dict(CLEAN, **{v: MISSING for v in LAZY.values()})
        self.assertEqual(gctest.run("--version", env=env).rc, 0)
        r = self.run_json("pci", env=env)
        self.assertIn(r.rc, (0, 1), repr(r))
        for fmt in ("text", "prometheus", "nfd", "github"):
            r = gctest.run(f"--format={fmt}", "pci", env=env)
            self.assertIn(r.rc, (0, 1), repr(r))
            self.assertEqual(r.stderr, "", repr(r))


if __name__ == "__main__":
    gctest.main()
