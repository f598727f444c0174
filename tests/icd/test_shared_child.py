"""End-to-end tests of the child the icd and opencl probes share in one run (issue 17 item 2, probes/clonce/clonce.c):
drivers are loaded through libOpenCL once, and what each probe reports is what it reports when it runs alone."""
import os
import shutil
import tempfile
import time

import gctest

FAKE = {name: os.environ["GC_FAKE_ICD_" + name.upper()]
        for name in ("working", "segv", "abort", "hang", "noplat", "error", "noentry", "nokhricd")}
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"
CLEAN = {"OCL_ICD_VENDORS": None, "OPENCL_VENDOR_PATH": None, "OCL_ICD_FILENAMES": None,
         "GPUCHECKUP_LIBOPENCL": None, "LD_LIBRARY_PATH": None, "OPENCL_LAYERS": None,
         "OCL_ICD_ASSUME_ICD_EXTENSION": None, "GC_FAKE_ICD_CRASH_AT": None, "GC_FAKE_ICD_LOG": None,
         "GC_FAKE_ICD_SAY": None}


def untimed(o):
    """O without its timings (every key ending in _ms): what must not change between two runs."""
    if isinstance(o, dict):
        return {k: untimed(v) for k, v in o.items() if not k.endswith("_ms")}
    if isinstance(o, list):
        return [untimed(v) for v in o]
    return o


class SharedChild(gctest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gc-clonce-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.log = os.path.join(self.tmp, "loads.log")

    def env(self, *drivers, **kw):
        """A vendors directory with PoCL and the fake DRIVERS; KW adds variables."""
        d = os.path.join(self.tmp, "vendors-" + "-".join(drivers))
        os.makedirs(d, exist_ok=True)
        shutil.copy(POCL_ICD, d)
        for name in drivers:
            with open(os.path.join(d, name + ".icd"), "w") as f:
                f.write(FAKE[name] + "\n")
        e = dict(CLEAN)
        e.update({"OCL_ICD_VENDORS": d, "POCL_DEVICES": "pthread",
                  "POCL_CACHE_DIR": os.path.join(self.tmp, "pocl-cache")})
        e.update(kw)
        return e

    def loaders_of_fake(self):
        """How many processes loaded a fake driver since the last call (GC_FAKE_ICD_LOG)."""
        return len(set().union(*self.loaders_by_fake().values()))

    def loaders_by_fake(self):
        """The processes that loaded each fake driver since the last call: {name: {pid, ...}}."""
        by = {}
        try:
            with open(self.log) as f:
                for line in f:
                    if line.strip():
                        pid, name = line.split()
                        by.setdefault(name, set()).add(pid)
        except FileNotFoundError:
            pass
        if os.path.exists(self.log):
            os.unlink(self.log)
        return by

    def alone_and_shared(self, env, timeout=120, smoke=False):
        """`icd` alone, `opencl` alone and `check` (where they share one child; SMOKE: the child runs the
        smoke test after its enumeration, whose output it then keeps apart until it is done): their JSON."""
        icd = self.run_json("icd", env=env, timeout=timeout)
        cl = self.run_json("opencl", env=env, timeout=timeout)
        check = self.run_json("check", *([] if smoke else ["--no-smoke"]), env=env, timeout=timeout)
        return icd.json, cl.json, check

    def assert_same_as_alone(self, icd, cl, check):
        self.assertEqual(untimed(check.json["icd"]), untimed(icd["icd"]))
        self.assertEqual(untimed(check.json["opencl"]), untimed(cl["opencl"]))
        for fid in ("icd.", "cl."):
            alone = sorted((f["id"], f["subject"], f["message"]) for f in icd["findings"] + cl["findings"]
                           if f["id"].startswith(fid))
            shared = sorted((f["id"], f["subject"], f["message"]) for f in check.json["findings"]
                            if f["id"].startswith(fid))
            self.assertEqual(shared, alone)

    def test_drivers_loaded_through_the_loader_once(self):
        env = self.env("working", GC_FAKE_ICD_LOG=self.log)
        self.run_json("icd", env=env, expect_rc=0)
        icd_loads = self.loaders_of_fake()
        self.run_json("opencl", env=env, expect_rc=0)
        opencl_loads = self.loaders_of_fake()
        check = self.run_json("check", "--no-smoke", env=env)
        check_loads = self.loaders_of_fake()
        # icd: the driver alone, and all of them through the loader; opencl: through the loader
        self.assertEqual((icd_loads, opencl_loads), (2, 1))
        # check: one child through the loader for both probes, which also answers for each driver
        # the loader holds: no child of its own for any
        self.assertEqual(check_loads, 1, repr(check))
        self.assertEqual([e["status"] for e in check.json["icd"]["icds"]], ["ok", "ok"])
        self.assertEqual(check.json["icd"]["combined"]["status"], "ok")
        self.assertEqual(check.json["opencl"]["enumeration"]["status"], "ok")

    def test_same_devices_as_when_enumerating_alone(self):
        env = self.env("working", GC_FAKE_ICD_DEVICES="3", GC_FAKE_ICD_PCI="0000:03:00.0")
        icd, cl, check = self.alone_and_shared(env)
        names = [p["name"] for p in check.json["opencl"]["platforms"]]
        self.assertIn("gpucheckup fake working", names)
        self.assertIn("Portable Computing Language", names)
        fake = [p for p in check.json["opencl"]["platforms"] if p["name"] == "gpucheckup fake working"][0]
        self.assertEqual([d["pci_address"] for d in fake["devices"]],
                         ["0000:03:00.0", "0000:03:01.0", "0000:03:02.0"])
        self.assertEqual(check.json["opencl"]["counts"]["devices"], 4)
        self.assert_same_as_alone(icd, cl, check)

    def test_driver_crashing_in_the_shared_child_is_named(self):
        env = self.env("working", "segv")
        icd, cl, check = self.alone_and_shared(env)
        d = check.json
        segv = [e for e in d["icd"]["icds"] if e["file"].endswith("/segv.icd")][0]
        self.assertEqual(segv["status"], "crash")
        self.assertIn(segv["file"], [f["subject"] for f in check.findings("icd.crash")])
        self.assertEqual(d["icd"]["combined"]["status"], "crash")
        self.assertRegex(d["icd"]["combined"]["detail"], r"SIGSEGV in clGetPlatformIDs")
        self.assertEqual(d["opencl"]["enumeration"]["status"], "crash")
        self.assertIn("cl.enumeration-crash", check.finding_ids())
        self.assert_same_as_alone(icd, cl, check)

    def test_crash_after_the_listing_is_the_enumerations_alone(self):
        # The fake says something while listed, then dies on CL_DEVICE_NAME, which only the full
        # enumeration reads: the icd probe's view stays healthy, its output what was said while listing.
        env = self.env("working", GC_FAKE_ICD_CRASH_AT="device-name", GC_FAKE_ICD_SAY="listed")
        icd, cl, check = self.alone_and_shared(env)
        d = check.json
        comb = d["icd"]["combined"]
        self.assertEqual(comb["status"], "ok")
        self.assertIn("fake ICD working: listed", comb["output"])
        self.assertNotIn("crashing", comb["output"])
        self.assertIn("gpucheckup fake working", [p["name"] for p in comb["platforms"]])
        self.assertEqual(d["opencl"]["enumeration"]["status"], "crash")
        out = d["opencl"]["enumeration"]["output"]
        self.assertIn("fake ICD working: listed", out)
        self.assertIn("crashing in clGetDeviceInfo(CL_DEVICE_NAME)", out)
        self.assertNotIn("icd.conflict", check.finding_ids())
        self.assertNotIn("icd.crash", check.finding_ids())
        self.assert_same_as_alone(icd, cl, check)

    def test_crash_after_the_listing_with_the_smoke_test_planned(self):
        # As above, in a check that also runs the smoke test: the shared child keeps the enumeration's
        # output apart until the enumeration is done (the opencl probe then takes both without waiting
        # for the smoke part); it died before: its output is still the evidence, as alone.
        env = self.env("working", GC_FAKE_ICD_CRASH_AT="device-name", GC_FAKE_ICD_SAY="listed")
        icd, cl, check = self.alone_and_shared(env, smoke=True)
        out = check.json["opencl"]["enumeration"]["output"]
        self.assertEqual(check.json["opencl"]["enumeration"]["status"], "crash")
        self.assertIn("fake ICD working: listed", out)
        self.assertIn("crashing in clGetDeviceInfo(CL_DEVICE_NAME)", out)
        self.assert_same_as_alone(icd, cl, check)

    def test_output_while_listed_with_the_smoke_test_planned(self):
        # The opencl probe takes the enumeration from the child's page, before the smoke part ends:
        # what was printed while listing comes with it, as the child's end would have given it.
        env = self.env("working", GC_FAKE_ICD_SAY="listed")
        icd, cl, check = self.alone_and_shared(env, smoke=True)
        self.assertEqual(check.json["opencl"]["enumeration"]["status"], "ok")
        self.assertIn("fake ICD working: listed", check.json["opencl"]["enumeration"]["output"])
        self.assertEqual(check.json["smoke"]["status"], "ok")
        self.assert_same_as_alone(icd, cl, check)

    def test_output_of_a_driver_dying_while_listed(self):
        # It prints, then aborts inside the loader's clGetPlatformIDs: its line is the evidence.
        env = self.env("abort")
        icd, cl, check = self.alone_and_shared(env)
        d = check.json
        self.assertEqual(d["icd"]["combined"]["status"], "crash")
        self.assertIn("registered more than once", d["icd"]["combined"]["output"])
        self.assertIn("registered more than once", d["opencl"]["enumeration"]["output"])
        self.assert_same_as_alone(icd, cl, check)

    def test_hang_in_the_shared_child_within_the_timeout(self):
        env = self.env("hang")
        # a sanitizer build is slower to start its children: more time, for PoCL's own child
        t = 6 if gctest.SANITIZED else 2
        t0 = time.monotonic()
        check = self.run_json("check", "--no-smoke", "--timeout", str(t), env=env, timeout=60)
        wall = time.monotonic() - t0
        d = check.json
        hang = [e for e in d["icd"]["icds"] if e["file"].endswith("/hang.icd")][0]
        self.assertEqual(hang["status"], "hang")
        self.assertIn(hang["file"], [f["subject"] for f in check.findings("icd.hang")])
        # the shared child never answered for PoCL: its own child, started after the grace period
        # (a third of the time left), still had the time to say it works
        pocl = [e for e in d["icd"]["icds"] if e["file"].endswith("/pocl.icd")][0]
        self.assertEqual(pocl["status"], "ok")
        self.assertEqual(d["icd"]["combined"]["status"], "hang")
        self.assertRegex(d["icd"]["combined"]["detail"], r"in clGetPlatformIDs")
        # opencl waited for the shared child beside icd: the same hang is its outcome
        self.assertEqual(d["opencl"]["enumeration"]["status"], "timeout")
        self.assertIn("cl.enumeration-hang", check.finding_ids())
        self.assertLess(wall, t + (4.0 if gctest.SANITIZED else 1.5), repr(check))

    def test_odd_drivers_answered_in_the_shared_child_as_alone(self):
        # ocl-icd keeps a library loaded when it has no entry point or no platform, or fails: the
        # shared child answers for it, and the icd section says what `icd` alone says. A library
        # that cannot be loaded at all is still diagnosed by a child of its own.
        env = self.env("working", "noplat", "error", "noentry", "nokhricd", GC_FAKE_ICD_LOG=self.log)
        with open(os.path.join(env["OCL_ICD_VENDORS"], "missing.icd"), "w") as f:
            f.write("/nonexistent/gpucheckup/libmissing.so\n")
        icd, cl, check = self.alone_and_shared(env)
        self.assert_same_as_alone(icd, cl, check)
        status = {os.path.basename(e["file"]): e["status"] for e in check.json["icd"]["icds"]}
        self.assertEqual(status["working.icd"], "ok")
        self.assertEqual(status["noplat.icd"], "no-platforms")
        self.assertEqual(status["error.icd"], "error")
        self.assertEqual(status["noentry.icd"], "no-entry-point")
        self.assertEqual(status["nokhricd.icd"], "rejected")
        self.assertEqual(status["missing.icd"], "missing-library")
        self.assertIn("/nonexistent/gpucheckup/libmissing.so", [f["message"].split(" names ")[-1].split(",")[0]
                                                                for f in check.findings("icd.missing-library")][0])
        self.loaders_by_fake()
        self.run_json("check", "--no-smoke", env=env)
        by = self.loaders_by_fake()
        for name in ("working", "noplat", "error", "noentry"):
            self.assertEqual(len(by.get(name, ())), 1, "%s loaded by %r" % (name, by))
        # ocl-icd closes a library whose every platform it rejects: then it has its own child
        self.assertIn(len(by.get("nokhricd", ())), (1, 2))

    def test_output_while_listed_gives_each_driver_its_own_child(self):
        # Output printed while the loader lists the platforms cannot be told apart per driver: each
        # driver then runs alone, so that its output is its own, as in `icd` alone.
        env = self.env("working", "noplat", GC_FAKE_ICD_SAY="listed", GC_FAKE_ICD_LOG=self.log)
        icd, cl, check = self.alone_and_shared(env)
        self.assert_same_as_alone(icd, cl, check)
        # (an entry that is ok shows no output)
        noplat = [e for e in check.json["icd"]["icds"] if e["file"].endswith("/noplat.icd")][0]
        self.assertEqual(noplat["output"], "fake ICD noplat: listed")
        self.assertIn("fake ICD noplat: listed", check.json["icd"]["combined"]["output"])
        self.loaders_by_fake()
        self.run_json("check", "--no-smoke", env=env)
        by = self.loaders_by_fake()
        self.assertEqual((len(by["working"]), len(by["noplat"])), (2, 2), repr(by))

    def test_crash_in_the_shared_child_gives_each_driver_its_own_child(self):
        env = self.env("working", "segv", GC_FAKE_ICD_LOG=self.log)
        check = self.run_json("check", "--no-smoke", env=env)
        status = {os.path.basename(e["file"]): e["status"] for e in check.json["icd"]["icds"]}
        self.assertEqual((status["working.icd"], status["segv.icd"]), ("ok", "crash"))
        by = self.loaders_by_fake()
        # working: the shared child (dead before answering) and its own; segv: the same two
        self.assertEqual((len(by["working"]), len(by["segv"])), (2, 2), repr(by))

    def test_crash_while_answering_leaves_both_probes_their_own_children(self):
        # The fake dies only when asked to count its platforms a second time in one process: the
        # shared child, answering for it after the loader listed it, dies there. Each driver then has
        # its own child and the opencl probe enumerates alone: both sections are what they are alone.
        env = self.env("working", GC_FAKE_ICD_CRASH_AT="second-count", GC_FAKE_ICD_LOG=self.log)
        icd, cl, check = self.alone_and_shared(env)
        self.assert_same_as_alone(icd, cl, check)
        d = check.json
        self.assertEqual(d["icd"]["combined"]["status"], "ok")
        self.assertEqual([e["status"] for e in d["icd"]["icds"]], ["ok", "ok"])
        self.assertEqual(d["opencl"]["enumeration"]["status"], "ok")
        self.assertNotIn("cl.enumeration-crash", check.finding_ids())
        self.loaders_by_fake()
        self.run_json("check", "--no-smoke", env=env)
        # the shared child, the driver's own child, the opencl probe's enumeration alone
        self.assertEqual(len(self.loaders_by_fake()["working"]), 3)

    def test_hang_while_answering_holds_nothing_but_a_second(self):
        # The fake hangs when asked to count its platforms a second time in one process: under the
        # loader (clinfo, frameworks) and alone it works. The shared child, answering for it after the
        # loader listed it, used to hang there until the deadline: the opencl section, the smoke test
        # and the time were lost ("not started: the run's --timeout was already spent"). It now waits
        # a second for its answers, then goes on; the driver is answered in a child of its own.
        env = self.env("working", GC_FAKE_ICD_CRASH_AT="hang-second-count", GC_FAKE_ICD_LOG=self.log)
        t0 = time.monotonic()
        check = self.run_json("check", "--timeout", "30", env=env, timeout=120)
        wall = time.monotonic() - t0
        d = check.json
        self.assertEqual(d["icd"]["combined"]["status"], "ok")
        self.assertEqual([e["status"] for e in d["icd"]["icds"]], ["ok", "ok"])
        self.assertEqual(d["opencl"]["enumeration"]["status"], "ok")
        self.assertIn("gpucheckup fake working", [p["name"] for p in d["opencl"]["platforms"]])
        pocl = [x for x in d["smoke"]["devices"] if x["name"] and "pthread" in x["name"]]
        self.assertEqual([x["status"] for x in pocl], ["pass"], repr(d["smoke"]))
        self.assertEqual(check.findings("core.timeout-spent"), [])
        self.assertNotIn("icd.hang", check.finding_ids())
        self.assertLess(wall, 15 if gctest.SANITIZED else 8, repr(check))
        # the shared child (hung in its answering thread, then ended) and the driver's own child
        self.assertEqual(len(self.loaders_by_fake()["working"]), 2)


if __name__ == "__main__":
    gctest.main()
