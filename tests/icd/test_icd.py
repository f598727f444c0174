"""End-to-end tests of `gpucheckup icd`: fake vendor drivers next to the real PoCL ICD, loaders, env forms."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import gctest

FAKE = {name: os.environ["GC_FAKE_ICD_" + name.upper().replace("-", "_")]
        for name in ("working", "noplat", "segv", "abort", "hang", "noentry", "error", "nokhricd",
                     "conflict-a", "conflict-b")}
FAKE_LOADER = os.environ["GC_FAKE_LOADER"]
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"
# What the environment of a test run must not inherit from the caller's.
CLEAN = {"OCL_ICD_VENDORS": None, "OPENCL_VENDOR_PATH": None, "OCL_ICD_FILENAMES": None,
         "GPUCHECKUP_LIBOPENCL": None, "LD_LIBRARY_PATH": None, "OPENCL_LAYERS": None,
         "OCL_ICD_ASSUME_ICD_EXTENSION": None}


def pocl_line():
    """The real PoCL ICD's content (PoCL is a test dependency: its absence is a failure)."""
    with open(POCL_ICD, "rb") as f:
        return f.read()


class IcdTestCase(gctest.TestCase):
    def vendors(self, files):
        """A vendors directory holding FILES (name -> bytes or str)."""
        d = tempfile.mkdtemp(prefix="gc-icd-")
        self.addCleanup(shutil.rmtree, d, True)
        for name, content in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())
        return d

    def icd(self, *args, env=None, expect_rc=None, timeout=120):
        e = dict(CLEAN)
        e.update(env or {})
        return self.run_json("icd", *args, env=e, expect_rc=expect_rc, timeout=timeout)

    @staticmethod
    def by_file(doc):
        return {os.path.basename(e["file"]) if e["file"] else e["source"]: e for e in doc["icd"]["icds"]}

    def assert_finding(self, r, fid, subject):
        subjects = [f["subject"] for f in r.findings(fid)]
        self.assertIn(subject, subjects, "%s not reported for %s\n%r" % (fid, subject, r))


class BrokenDrivers(IcdTestCase):
    """Every kind of broken driver at once, next to PoCL and a working fake."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gc-icd-broken-")
        link_dir = tempfile.mkdtemp(prefix="gc-icd-links-")
        cls.tmp = [cls.dir, link_dir]
        # the working fake reached by a second path: a duplicate
        os.symlink(FAKE["working"], os.path.join(link_dir, "libsame.so"))
        pocl = pocl_line()
        files = {
            "pocl.icd": pocl,
            "working.icd": FAKE["working"] + "\n",
            "zsame.icd": os.path.join(link_dir, "libsame.so") + "\n",
            "noplat.icd": FAKE["noplat"] + "\n",
            "segv.icd": FAKE["segv"] + "\n",
            "abort.icd": FAKE["abort"] + "\n",
            "hang.icd": FAKE["hang"] + "\n",
            "noentry.icd": FAKE["noentry"] + "\n",
            "error.icd": FAKE["error"] + "\n",
            "nokhricd.icd": FAKE["nokhricd"] + "\n",
            "crlf.icd": pocl.rstrip(b"\n") + b"\r\n",
            "space.icd": pocl.rstrip(b"\n") + b" \n",
            "empty.icd": b"",
            "binary.icd": b"\x7fELF\x02\x01\x01\x00\x00\x00garbage\x01\x02",
            "self.icd": "libOpenCL.so.1\n",
            "missing.icd": "libgpucheckup-no-such-driver.so.1\n",
            "readme.txt": "not an ICD\n",
        }
        for name, content in files.items():
            with open(os.path.join(cls.dir, name), "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())
        env = dict(os.environ)
        env.update({k: v for k, v in CLEAN.items() if v is not None})
        for k in CLEAN:
            env.pop(k, None)
        env["OCL_ICD_VENDORS"] = cls.dir
        t0 = time.monotonic()
        cls.proc = subprocess.run([gctest.GPUCHECKUP, "icd", "--json", "--timeout", "2"], env=env,
                                  capture_output=True, text=True, timeout=60)
        cls.wall = time.monotonic() - t0
        cls.text = subprocess.run([gctest.GPUCHECKUP, "icd", "--timeout", "2"], env=env,
                                  capture_output=True, text=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        for d in cls.tmp:
            shutil.rmtree(d, ignore_errors=True)

    def setUp(self):
        self.doc = json.loads(self.proc.stdout)
        self.icds = self.by_file(self.doc)

    def ids_for(self, name):
        path = os.path.join(self.dir, name)
        return {f["id"] for f in self.doc["findings"] if f["subject"] == path}

    def test_json_valid_exit_1_and_within_the_timeout(self):
        gctest.validate(self.doc)
        gctest.assert_no_duplicate_keys(self.proc.stdout)
        self.assertEqual(self.proc.returncode, 1, self.proc.stderr)
        # children run in parallel: the hanging one costs one timeout, not one per driver
        self.assertLess(self.wall, 2 + 3.0, "took %.1f s with --timeout 2" % self.wall)

    def test_pocl_still_works_beside_the_broken_ones(self):
        e = self.icds["pocl.icd"]
        self.assertEqual(e["status"], "ok")
        self.assertEqual(e["vendor"], "pocl")
        self.assertEqual([p["name"] for p in e["platforms"]], ["Portable Computing Language"])
        self.assertGreaterEqual(e["platforms"][0]["devices"], 1)
        self.assertEqual(self.ids_for("pocl.icd"), set())

    def test_working_fake(self):
        e = self.icds["working.icd"]
        self.assertEqual(e["status"], "ok")
        self.assertEqual(e["library"], FAKE["working"])
        self.assertEqual(e["found_via"], "absolute")
        self.assertEqual(e["platforms"][0]["name"], "gpucheckup fake working")
        self.assertEqual(e["platforms"][0]["devices"], 1)
        self.assertEqual(e["platforms"][0]["gpu_devices"], 1)
        self.assertEqual(e["platforms"][0]["icd_suffix"], "FAKE")
        self.assertIsNotNone(e["elapsed_ms"])

    def test_outcomes_and_ids(self):
        want = {
            "noplat.icd": ("no-platforms", "icd.no-platforms"),
            "segv.icd": ("crash", "icd.crash"),
            "abort.icd": ("crash", "icd.crash"),
            "hang.icd": ("hang", "icd.hang"),
            "noentry.icd": ("no-entry-point", "icd.no-entry-point"),
            "error.icd": ("error", "icd.error"),
            "nokhricd.icd": ("rejected", "icd.rejected"),
            "crlf.icd": ("malformed", "icd.malformed"),
            "space.icd": ("malformed", "icd.malformed"),
            "empty.icd": ("malformed", "icd.malformed"),
            "binary.icd": ("malformed", "icd.malformed"),
            "self.icd": ("self-reference", "icd.self-reference"),
            "missing.icd": ("missing-library", "icd.missing-library"),
            "zsame.icd": ("duplicate", "icd.duplicate"),
        }
        for name, (status, fid) in want.items():
            with self.subTest(name=name):
                self.assertEqual(self.icds[name]["status"], status, self.icds[name])
                self.assertIn(fid, self.ids_for(name))

    def test_details_name_signal_stage_and_code(self):
        self.assertIn("SIGSEGV", self.icds["segv.icd"]["detail"])
        self.assertIn("clIcdGetPlatformIDsKHR", self.icds["segv.icd"]["detail"])
        self.assertIn("SIGABRT", self.icds["abort.icd"]["detail"])
        self.assertIn("registered more than once", self.icds["abort.icd"]["output"])
        # the hanging child had what was left of the run's --timeout 2 when it started: at most 2.0 s
        m = re.search(r"no answer within (\d+\.\d) s \(in clIcdGetPlatformIDsKHR\)", self.icds["hang.icd"]["detail"])
        self.assertIsNotNone(m, self.icds["hang.icd"])
        self.assertTrue(1.0 <= float(m.group(1)) <= 2.0, self.icds["hang.icd"])
        self.assertIn("-6", self.icds["error.icd"]["detail"])
        self.assertIn("CL_OUT_OF_HOST_MEMORY", self.icds["error.icd"]["detail"])
        self.assertIn("-1001", self.icds["noplat.icd"]["detail"])
        self.assertIn("CL_PLATFORM_NOT_FOUND_KHR", self.icds["noplat.icd"]["detail"])

    def test_malformed_says_which(self):
        self.assertEqual(self.icds["crlf.icd"]["malformed"], ["crlf"])
        self.assertEqual(self.icds["space.icd"]["malformed"], ["whitespace"])
        self.assertEqual(self.icds["empty.icd"]["malformed"], ["empty"])
        self.assertIn("binary", self.icds["binary.icd"]["malformed"])
        self.assertEqual(self.icds["crlf.icd"]["library"], pocl_line().decode().rstrip("\n") + "?")
        hint = [f["hint"] for f in self.doc["findings"]
                if f["id"] == "icd.malformed" and f["subject"].endswith("crlf.icd")][0]
        self.assertIn(pocl_line().decode().strip(), hint)

    def test_duplicate_names_the_first(self):
        self.assertIn("working.icd", self.icds["zsame.icd"]["detail"])
        self.assertEqual(self.icds["zsame.icd"]["resolved"], self.icds["working.icd"]["resolved"])

    def test_ignored_file_listed(self):
        self.assertEqual(self.doc["icd"]["ignored_files"], ["readme.txt"])
        self.assertNotIn("readme.txt", self.icds)

    def test_combined_crash_is_explained_not_a_conflict(self):
        c = self.doc["icd"]["combined"]
        self.assertIn(c["status"], ("crash", "hang"))
        self.assertTrue(c["explained_by"])
        self.assertNotIn("icd.conflict", {f["id"] for f in self.doc["findings"]})

    def test_text_shows_loader_and_table(self):
        out = self.text.stdout
        self.assertEqual(self.text.returncode, 1)
        # programs crash: the loader line says so, though the loader itself is fine
        self.assertRegex(out, r"\[FAIL\] OpenCL loader +ocl-icd .*programs see no platform \((crash|hang)")
        self.assertRegex(out, r"FILE +LIBRARY +STATUS +PLATFORMS")
        self.assertRegex(out, r"segv\.icd +\S+ +crash +killed by SIGSEGV")
        self.assertRegex(out, r"pocl\.icd +libpocl\S* +ok +Portable Computing Language")
        self.assertEqual(out.count("OpenCL ICD     "), len(self.icds))


class HealthyAndEnvironment(IcdTestCase):
    def test_pocl_and_working_fake_are_ready(self):
        d = self.vendors({"pocl.icd": pocl_line(), "working.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"OCL_ICD_VENDORS": d})
        doc = r.json["icd"]
        self.assertEqual(r.rc, 0, repr(r))
        self.assertEqual([f for f in r.json["findings"] if f["severity"] == "error"], [])
        self.assertEqual(doc["vendors_dir"], d)
        self.assertEqual(doc["vendors_from"], "OCL_ICD_VENDORS")
        self.assertEqual(doc["env"]["OCL_ICD_VENDORS"], d)
        self.assertIsNone(doc["env"]["OCL_ICD_FILENAMES"])
        self.assertEqual(doc["loader"]["kind"], "ocl-icd")
        self.assertEqual(doc["loader"]["name"], "OpenCL ICD Loader")
        self.assertTrue(os.path.isabs(doc["loader"]["path"]))
        wins = [l for l in doc["loaders"] if l["wins"]]
        self.assertEqual(len(wins), 1)
        self.assertEqual(os.path.realpath(wins[0]["path"]), doc["loader"]["path"])
        self.assertEqual(doc["combined"]["status"], "ok")
        names = sorted(p["name"] for p in doc["combined"]["platforms"])
        self.assertEqual(names, ["Portable Computing Language", "gpucheckup fake working"])
        labels = [l["label"] for l in doc["summary"]]
        self.assertEqual(labels, ["OpenCL loader", "OpenCL ICD", "OpenCL ICD"])

    def test_no_loader(self):
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": "libgpucheckup-no-such-loader.so.1"})
        gctest.absent_api_expectation(r, "icd.no-loader")
        doc = r.json["icd"]
        self.assertIsNone(doc["loader"])
        self.assertEqual(doc["combined"]["status"], "not-run")
        # the loader line says no more than the finding: an error with a GPU on the bus, information without
        self.assertEqual(doc["summary"][0]["mark"], "error" if gctest.bus_gpus(r.json) else "info")
        # the drivers are still probed one by one
        self.assertEqual(self.by_file(r.json)["pocl.icd"]["status"], "ok")
        text = gctest.run("icd", env=dict(CLEAN, GPUCHECKUP_LIBOPENCL="libgpucheckup-no-such-loader.so.1"))
        self.assertEqual(text.rc, r.rc)
        self.assertIn("icd.no-loader", text.stdout)

    def test_vendors_as_nonexistent_path_is_a_library_for_ocl_icd(self):
        r = self.icd(env={"OCL_ICD_VENDORS": "/nonexistent"}, expect_rc=1)
        doc = r.json["icd"]
        self.assertIsNone(doc["vendors_dir"])
        self.assertEqual(len(doc["icds"]), 1)
        e = doc["icds"][0]
        self.assertEqual((e["source"], e["file"], e["library"], e["status"]),
                         ("OCL_ICD_VENDORS", None, "/nonexistent", "missing-library"))
        self.assertEqual(doc["combined"]["status"], "no-platforms")

    def test_vendors_as_one_icd_file_and_as_a_library(self):
        d = self.vendors({"working.icd": FAKE["working"] + "\n", "segv.icd": FAKE["segv"] + "\n"})
        r = self.icd(env={"OCL_ICD_VENDORS": os.path.join(d, "working.icd")}, expect_rc=0)
        icds = r.json["icd"]["icds"]
        self.assertEqual([(e["file"], e["status"]) for e in icds], [(os.path.join(d, "working.icd"), "ok")])
        # a bare name ending in .icd is looked for in the vendors directory
        r = self.icd(env={"OCL_ICD_VENDORS": "working.icd", "OPENCL_VENDOR_PATH": d}, expect_rc=0)
        self.assertEqual(r.json["icd"]["icds"][0]["file"], os.path.join(d, "working.icd"))
        r = self.icd(env={"OCL_ICD_VENDORS": FAKE["working"]}, expect_rc=0)
        e = r.json["icd"]["icds"][0]
        self.assertEqual((e["file"], e["library"], e["status"]), (None, FAKE["working"], "ok"))

    def test_opencl_vendor_path(self):
        d = self.vendors({"working.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"OPENCL_VENDOR_PATH": d}, expect_rc=0)
        self.assertEqual(r.json["icd"]["vendors_dir"], d)
        self.assertEqual(r.json["icd"]["vendors_from"], "OPENCL_VENDOR_PATH")

    def test_empty_and_missing_vendor_directories(self):
        d = self.vendors({"notes.txt": "x"})
        r = self.icd(env={"OCL_ICD_VENDORS": d})
        gctest.absent_api_expectation(r, "icd.no-icds")
        self.assertEqual(r.json["icd"]["icds"], [])
        r = self.icd(env={"OPENCL_VENDOR_PATH": d + "/missing"})
        gctest.absent_api_expectation(r, "icd.no-icds")
        self.assertIn("No such file", r.findings("icd.no-icds")[0]["message"])

    def test_relative_library_resolves_against_the_cwd(self):
        work = tempfile.mkdtemp(prefix="gc-icd-cwd-")
        self.addCleanup(shutil.rmtree, work, True)
        os.makedirs(os.path.join(work, "drivers"))
        os.symlink(FAKE["working"], os.path.join(work, "drivers", "libfake.so"))
        d = self.vendors({"rel.icd": "drivers/libfake.so\n"})
        env = dict(os.environ)
        for k in CLEAN:
            env.pop(k, None)
        env["OCL_ICD_VENDORS"] = d
        for cwd, status in ((work, "ok"), (d, "missing-library")):
            p = subprocess.run([gctest.GPUCHECKUP, "icd", "--json"], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=60)
            doc = json.loads(p.stdout)
            gctest.validate(doc)
            e = doc["icd"]["icds"][0]
            self.assertEqual(e["status"], status, (cwd, e))
            if status == "ok":
                self.assertEqual(e["found_via"], "relative")
                self.assertEqual(e["resolved"], os.path.realpath(FAKE["working"]))

    def test_unreadable_load_failed_and_overlong(self):
        d = self.vendors({"text.icd": "", "big.icd": b"a" * 70000})
        os.symlink("/nonexistent/x.icd", os.path.join(d, "dangling.icd"))
        os.mkdir(os.path.join(d, "dir.icd"))
        os.mkfifo(os.path.join(d, "fifo.icd"))  # ocl-icd would block on it forever
        notlib = os.path.join(d, "notalib.txt")
        with open(notlib, "w") as f:
            f.write("plain text\n")
        with open(os.path.join(d, "text.icd"), "w") as f:
            f.write(notlib + "\n")
        r = self.icd("--timeout", "2", env={"OCL_ICD_VENDORS": d}, expect_rc=1)
        icds = self.by_file(r.json)
        # the real loader blocks on the FIFO: that explains why programs hang
        self.assertEqual(r.json["icd"]["combined"]["status"], "hang")
        self.assertEqual(r.json["icd"]["combined"]["explained_by"], [os.path.join(d, "fifo.icd")])
        self.assertEqual(icds["dangling.icd"]["status"], "unreadable")
        self.assertIn("missing file", icds["dangling.icd"]["detail"])
        self.assertEqual(icds["dir.icd"]["status"], "unreadable")
        self.assertEqual(icds["fifo.icd"]["status"], "unreadable")
        self.assertIn("FIFO", icds["fifo.icd"]["detail"])
        self.assertEqual(icds["text.icd"]["status"], "load-failed")
        self.assertEqual(icds["big.icd"]["status"], "malformed")
        self.assertEqual(icds["big.icd"]["malformed"], ["overlong"])
        self.assert_finding(r, "icd.unreadable", os.path.join(d, "dangling.icd"))
        self.assert_finding(r, "icd.load-failed", os.path.join(d, "text.icd"))

    def test_insecure_only_as_root(self):
        d = self.vendors({"working.icd": FAKE["working"] + "\n"})
        os.chmod(d, 0o777)
        r = self.icd(env={"OCL_ICD_VENDORS": d})
        subject = os.path.join(d, "working.icd")
        if os.geteuid() == 0:
            self.assert_finding(r, "icd.insecure", subject)
            ev = " ".join(e["value"] for f in r.findings("icd.insecure") for e in f["evidence"])
            self.assertIn("writable by every user", ev)
        else:
            self.assertEqual(r.findings("icd.insecure"), [])

    def test_conflict_names_the_two_drivers(self):
        d = self.vendors({"pocl.icd": pocl_line(), "a.icd": FAKE["conflict-a"] + "\n",
                          "b.icd": FAKE["conflict-b"] + "\n"})
        t0 = time.monotonic()
        r = self.icd("--timeout", "5", env={"OCL_ICD_VENDORS": d}, expect_rc=1)
        self.assertLess(time.monotonic() - t0, 2 * 5 + 3)
        icds = self.by_file(r.json)
        for name in ("pocl.icd", "a.icd", "b.icd"):
            self.assertEqual(icds[name]["status"], "ok", name)
        c = r.json["icd"]["combined"]
        self.assertEqual(c["status"], "crash")
        self.assertIn("SIGABRT", c["detail"])
        self.assertEqual(c["conflict"], [os.path.join(d, "a.icd"), os.path.join(d, "b.icd")])
        f = r.findings("icd.conflict")
        self.assertEqual(len(f), 1)
        self.assertIn("a.icd", f[0]["message"])
        self.assertIn("b.icd", f[0]["message"])
        self.assertNotIn("pocl.icd", f[0]["message"])


class Loaders(IcdTestCase):
    def test_second_loader_on_ld_library_path_shadows(self):
        base = self.icd().json["icd"]["loader"]["path"]
        lib = tempfile.mkdtemp(prefix="gc-icd-ldpath-")
        self.addCleanup(shutil.rmtree, lib, True)
        shutil.copy(base, os.path.join(lib, "libOpenCL.so.1"))
        r = self.icd(env={"LD_LIBRARY_PATH": lib})
        doc = r.json["icd"]
        copy = os.path.join(lib, "libOpenCL.so.1")
        self.assertEqual(doc["loader"]["path"], copy)
        mine = [l for l in doc["loaders"] if l["path"] == copy][0]
        self.assertTrue(mine["wins"])
        self.assertEqual(mine["source"], "LD_LIBRARY_PATH")
        self.assertEqual(mine["kind"], "ocl-icd")
        self.assertTrue(mine["loadable"])
        self.assertTrue(mine["searched"])
        self.assertEqual(sum(l["wins"] for l in doc["loaders"]), 1)
        f = r.findings("icd.multiple-loaders")
        self.assertEqual(len(f), 1)
        self.assertEqual(f[0]["severity"], "info")
        self.assertEqual(f[0]["subject"], copy)
        self.assertIn(copy, f[0]["message"])
        # each loader is named by its path in the list, not only by its kind (seen blank on a real machine)
        self.assertIn("%s (ocl-icd, LD_LIBRARY_PATH)" % copy, f[0]["message"])
        self.assertIn("%s (ocl-icd, " % os.path.join(os.path.dirname(base), "libOpenCL.so.1"), f[0]["message"])

    def test_loader_with_another_compiled_in_vendors_directory(self):
        """A loader built in another prefix (tests/icd/meson.build: the fake loader with its compiled-in directory under
        the build directory, a string in its .rodata as ocl-icd's and Khronos' are) reads that directory, not
        /etc/OpenCL/vendors: the probe reads the one it reads, and names the drivers registered in /etc that it does
        not see. Linked in there too: no finding. OCL_ICD_VENDORS set: that one, as before."""
        loader, vdir = os.environ["GC_FAKE_LOADER_PREFIX"], os.environ["GC_FAKE_LOADER_PREFIX_VENDORS"]
        shutil.rmtree(os.path.dirname(os.path.dirname(os.path.dirname(vdir))), True)
        self.addCleanup(shutil.rmtree, os.path.dirname(os.path.dirname(os.path.dirname(vdir))), True)
        etc = sorted(n for n in os.listdir("/etc/OpenCL/vendors") if n.endswith(".icd"))
        self.assertIn("pocl.icd", etc)
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": loader})
        doc = r.json["icd"]
        self.assertEqual((doc["vendors_dir"], doc["vendors_from"]), (vdir, "loader"))
        (f,) = r.findings("icd.loader-vendors-dir")
        self.assertEqual((f["severity"], f["subject"]), ("warning", vdir))
        self.assertIn("The OpenCL loader %s reads its vendors from %s (compiled into it), not /etc/OpenCL/vendors: the "
                      "%d driver%s registered there (%s)" % (os.path.realpath(loader), vdir, len(etc),
                                                              "" if len(etc) == 1 else "s", ", ".join(etc)),
                      f["message"])
        self.assertIn("OCL_ICD_VENDORS=/etc/OpenCL/vendors", f["hint"])
        self.assertTrue(r.findings("icd.no-icds"))  # the directory it reads does not exist
        # the prefix's directory holds one driver of its own: /etc's are still lost
        os.makedirs(vdir)
        with open(os.path.join(vdir, "working.icd"), "w") as fh:
            fh.write(FAKE["working"] + "\n")
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": loader})
        self.assertEqual([e["file"] for e in r.json["icd"]["icds"]], [os.path.join(vdir, "working.icd")])
        self.assertEqual(len(r.findings("icd.loader-vendors-dir")), 1)
        # /etc's drivers linked in (conda's ocl-icd-system): nothing lost, nothing said
        for n in etc:
            os.symlink(os.path.join("/etc/OpenCL/vendors", n), os.path.join(vdir, n))
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": loader})
        self.assertEqual(r.findings("icd.loader-vendors-dir"), [])
        # OCL_ICD_VENDORS wins over the compiled-in directory; the system's loader reads /etc/OpenCL/vendors
        d = self.vendors({"pocl.icd": pocl_line()})
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": loader, "OCL_ICD_VENDORS": d})
        self.assertEqual((r.json["icd"]["vendors_dir"], r.json["icd"]["vendors_from"]), (d, "OCL_ICD_VENDORS"))
        self.assertEqual(r.findings("icd.loader-vendors-dir"), [])
        for env in ({"GPUCHECKUP_LIBOPENCL": FAKE_LOADER}, {}):
            r = self.icd(env=env)
            self.assertEqual(r.json["icd"]["vendors_from"], "default", env)
            self.assertEqual(r.findings("icd.loader-vendors-dir"), [])

    def test_khronos_loader_semantics(self):
        d = self.vendors({"pocl.icd": pocl_line(), "extra.icd": FAKE["working"] + "\nsecond line\n"})
        env = {"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "OCL_ICD_VENDORS": d, "OCL_ICD_FILENAMES": FAKE["noplat"]}
        r = self.icd(env=env, expect_rc=1)
        doc = r.json["icd"]
        self.assertEqual(doc["loader"]["kind"], "khronos")
        self.assertEqual(doc["loader"]["name"], "Khronos OpenCL ICD Loader")
        icds = self.by_file(r.json)
        # Khronos reads the whole file: a second line makes the name unusable
        self.assertEqual(icds["extra.icd"]["status"], "malformed")
        self.assertEqual(icds["extra.icd"]["malformed"], ["extra-lines"])
        self.assertEqual(r.findings("icd.malformed")[0]["severity"], "error")
        # OCL_ICD_FILENAMES comes first
        self.assertEqual(doc["icds"][0]["source"], "OCL_ICD_FILENAMES")
        self.assertEqual(doc["icds"][0]["status"], "no-platforms")
        self.assertEqual(doc["combined"]["status"], "no-platforms")  # the fake loader has none
        # the same directory under ocl-icd: the second line is ignored, only a warning remains
        r = self.icd(env={"OCL_ICD_VENDORS": d, "OCL_ICD_FILENAMES": FAKE["noplat"]}, expect_rc=0)
        icds = self.by_file(r.json)
        self.assertEqual(icds["extra.icd"]["status"], "ok")
        self.assertEqual([f["severity"] for f in r.findings("icd.malformed")], ["warning"])
        self.assertNotIn("OCL_ICD_FILENAMES", icds)  # ocl-icd ignores it
        # ... and says that the driver it names is lost (the real NVIDIA container case)
        f = r.findings("icd.loader-ignores-env")
        self.assertEqual([(x["subject"], x["severity"]) for x in f], [("OCL_ICD_FILENAMES", "warning")])
        self.assertIn(FAKE["noplat"], f[0]["message"])

    def test_ocl_icd_filenames_covered_by_an_icd_file_is_no_loss(self):
        d = self.vendors({"pocl.icd": pocl_line(), "working.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"OCL_ICD_VENDORS": d, "OCL_ICD_FILENAMES": FAKE["working"]}, expect_rc=0)
        self.assertEqual(r.findings("icd.loader-ignores-env"), [])

    def test_opencl_vendor_path_under_khronos_is_ignored(self):
        d = self.vendors({"pocl.icd": pocl_line()})
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "OPENCL_VENDOR_PATH": d})
        f = r.findings("icd.loader-ignores-env")
        self.assertEqual([x["subject"] for x in f], ["OPENCL_VENDOR_PATH"])
        self.assertIn(d, f[0]["message"])
        self.assertEqual(f[0]["severity"], "warning")

    def test_duplicate_under_khronos_is_a_note(self):
        """The Khronos loader loads a library once: an .icd file and OCL_ICD_FILENAMES naming the same
        driver (seen on a real NVIDIA image: libpocl.so.2 in both) is no finding there."""
        d = self.vendors({"working.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "OCL_ICD_VENDORS": d,
                          "OCL_ICD_FILENAMES": FAKE["working"]})
        self.assertEqual(r.findings("icd.duplicate"), [])
        self.assertEqual(self.by_file(r.json)["working.icd"]["status"], "duplicate")
        self.assertTrue(any("loads it once" in n for n in r.json["icd"]["notes"]), r.json["icd"]["notes"])
        # under ocl-icd two .icd files naming one library stay a warning
        d2 = self.vendors({"a.icd": FAKE["working"] + "\n", "b.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"OCL_ICD_VENDORS": d2})
        self.assertEqual([f["severity"] for f in r.findings("icd.duplicate")], ["warning"])

    def test_khronos_takes_an_empty_vendors_variable_literally(self):
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "OCL_ICD_VENDORS": ""})
        gctest.absent_api_expectation(r, "icd.no-icds")
        self.assertEqual(r.json["icd"]["icds"], [])
        self.assertEqual([f["subject"] for f in r.findings("icd.no-icds")], ["OCL_ICD_VENDORS"])
        # ocl-icd treats it as unset: the default directory, with PoCL in it
        r = self.icd(env={"OCL_ICD_VENDORS": ""})
        self.assertEqual(r.json["icd"]["vendors_dir"], "/etc/OpenCL/vendors")
        self.assertIn("pocl.icd", self.by_file(r.json))

    def test_loader_without_info_is_unknown(self):
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "GC_FAKE_LOADER_NAME": ""})
        self.assertEqual(r.json["icd"]["loader"]["kind"], "unknown")
        self.assertIsNone(r.json["icd"]["loader"]["name"])

    def test_loader_crash_with_healthy_drivers(self):
        d = self.vendors({"working.icd": FAKE["working"] + "\n"})
        r = self.icd(env={"GPUCHECKUP_LIBOPENCL": FAKE_LOADER, "GC_FAKE_LOADER_CRASH": "1",
                          "OCL_ICD_VENDORS": d}, expect_rc=1)
        self.assertEqual(r.json["icd"]["combined"]["status"], "crash")
        self.assertEqual(self.by_file(r.json)["working.icd"]["status"], "ok")
        self.assertEqual(len(r.findings("icd.conflict")), 1)


class RootAndLive(IcdTestCase):
    def test_root_live_reads_icd_files_from_the_tree(self):
        t = self.make_tree()
        t.write("etc/OpenCL/vendors/working.icd", FAKE["working"] + "\n")
        r = self.icd("--root", t.root, "--live", expect_rc=0)
        doc = r.json["icd"]
        self.assertEqual(doc["vendors_dir"], "/etc/OpenCL/vendors")
        self.assertEqual([(e["file"], e["status"]) for e in doc["icds"]],
                         [("/etc/OpenCL/vendors/working.icd", "ok")])
        # the loader reads the tree's vendors too: PoCL, installed on this machine, is not there
        self.assertEqual([p["name"] for p in doc["combined"]["platforms"]], ["gpucheckup fake working"])
        r = self.icd("--root", t.root)
        self.assertEqual(r.json["icd"]["status"], "skipped")


if __name__ == "__main__":
    gctest.main()
