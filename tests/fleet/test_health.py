"""The node health contract (--health): exit 0/1/2, one line of at most 80 printable ASCII bytes naming the
root cause's finding ID and subject, the full report only in -o FILE; the JSON report is the oracle."""
import json
import os
import shutil
import tempfile
import time
import unittest

import gctest

MAX = 80
WORDS = {0: "READY", 1: "NOT-READY", 2: "UNKNOWN"}


def root_cause(doc):
    """(ID, subject) the health line must name for a JSON report DOC that is not ready (write_health.c's rule,
    restated: the first error not caused by another, else the first error's cause)."""
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    for f in errors:
        if not f["caused_by"]:
            return f["id"], f["subject"]
    if errors:
        return errors[0]["caused_by"]["id"], errors[0]["caused_by"]["subject"]
    return "require.unmet", None


def expected_line(word, fid, subject):
    line = word + (" " + fid if fid else "") + (" " + subject if subject else "")
    line = "".join(c if " " <= c <= "~" else "?" for c in line)
    return line if len(line) <= MAX else line[:MAX - 3] + "..."


class HealthTests(gctest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleet-health-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        # the machine's own OpenCL drivers (the JSON report of the same run is the oracle), or a
        # vendors directory of the test's own where a test says so
        self.env = {}

    def health(self, *args, env=None):
        r = gctest.run("--health", *args, env={**self.env, **(env or {})})
        self.assertIn(r.rc, (0, 1, 2), repr(r))
        self.assertTrue(r.stdout.endswith("\n"), repr(r))
        line = r.stdout[:-1]
        self.assertNotIn("\n", line, "more than one line: %r" % r)
        self.assertLessEqual(len(line.encode()), MAX, repr(r))
        self.assertTrue(all(" " <= c <= "~" for c in line), repr(line))
        self.assertEqual(line.split(" ")[0], WORDS[r.rc], repr(r))
        return r, line

    def assert_matches_json(self, *args):
        """--health says what the JSON report of the same run says: its exit code and root cause."""
        j = self.run_json(*args, env=self.env)
        self.assertIn(j.rc, (0, 1), repr(j))
        r, line = self.health(*args)
        self.assertEqual(r.rc, j.rc, "health %r, json %r" % (line, j))
        if j.rc == 1:
            self.assertEqual(line, expected_line("NOT-READY", *root_cause(j.json)))
        return r, line, j

    def missing_cpu_flag(self):
        """A CPU flag --require knows that this machine's kernel does not list (the oracle: /proc/cpuinfo)."""
        flags = gctest.host_cpu_flags()
        for f in ("amx_tile", "amx_int8", "avx512_bf16", "sha_ni", "avx512f", "avx2", "avx"):
            if f not in flags:
                return f
        self.fail("this CPU lists every flag the test knows to ask for")

    def test_ready_and_not_ready_follow_the_report(self):
        r, line, j = self.assert_matches_json("--no-smoke")
        if j.rc == 0:
            self.assertRegex(line, r"^READY \d+ warnings$")
        flag = self.missing_cpu_flag()
        r, line, j = self.assert_matches_json("--no-smoke", "--require", flag)
        self.assertEqual(r.rc, 1)
        if [f["id"] for f in j.json["findings"] if f["severity"] == "error"] == ["require.unmet"]:
            self.assertEqual(line, "NOT-READY require.unmet " + flag)

    def test_unmet_gpu_requirement_names_its_cause(self):
        # on a machine with no GPU, `--require gpu` is unmet because of what explains it (pci.no-gpu
        # here), and that cause, not require.unmet, is what a drain reason must name
        r, line, j = self.assert_matches_json("--no-smoke", "--require", "gpu")
        if any(f["id"] == "pci.no-gpu" for f in j.json["findings"]):
            self.assertEqual(line, "NOT-READY pci.no-gpu")

    def test_ready_names_the_requirements(self):
        j = self.run_json("--no-smoke", "--require", "x86-64-v1", env=self.env)
        r, line = self.health("--no-smoke", "--require", "x86-64-v1")
        self.assertEqual(r.rc, j.rc)
        if r.rc == 0:
            self.assertRegex(line, r"^READY require x86-64-v1; \d+ warnings$")

    def test_usage_and_input_errors_are_unknown(self):
        r, line = self.health("--no-such-option")
        self.assertEqual((r.rc, line), (2, "UNKNOWN usage unknown option '--no-such-option' (see --help)"))
        r, line = self.health("--require", "warp-drive")
        self.assertEqual(r.rc, 2)
        self.assertTrue(line.startswith("UNKNOWN input --require: unknown requirement 'warp-drive'"), line)
        self.assertTrue(line.endswith("..."), line)  # the list of valid names is cut at 80
        self.assertIn("unknown requirement", r.stderr)  # the whole message is still on stderr
        # with --json too, stdout is the line alone; the JSON error document goes to -o FILE only
        r, line = self.health("--json", "--require", "warp-drive")
        self.assertEqual(r.rc, 2)
        out = os.path.join(self.dir, "error.json")
        r, line = self.health("--json", "--require", "warp-drive", "-o", out)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        gctest.validate(doc)
        self.assertEqual(doc["error"]["exit_code"], 2)
        r, line = self.health("-o", "-")
        self.assertEqual(r.rc, 2)
        self.assertTrue(line.startswith("UNKNOWN usage --health:"), line)
        r, line = self.health("snapshot", "-o", os.path.join(self.dir, "s.tar.gz"))
        self.assertEqual(r.rc, 2)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "s.tar.gz")))

    def test_gpucheckups_own_failure_is_unknown(self):
        # without --health this is exit 3 (libxml2 missing for --format=junit); the contract says 2
        env = {"GPUCHECKUP_LIBXML2": "nothing-here.so"}
        plain = gctest.run("--format=junit", "--no-smoke", env={**self.env, **env})
        self.assertEqual(plain.rc, 3, repr(plain))
        out = os.path.join(self.dir, "report.xml")
        r, line = self.health("--format=junit", "--no-smoke", "-o", out, env=env)
        self.assertEqual(r.rc, 2)
        self.assertTrue(line.startswith("UNKNOWN internal "), line)

    def test_spent_time_is_unknown_and_names_the_hung_driver(self):
        vendors = os.path.join(self.dir, "vendors")
        os.mkdir(vendors)
        self.env = {"OCL_ICD_VENDORS": vendors}
        hang = os.environ["GC_FAKE_ICD_HANG"]
        with open(os.path.join(vendors, "hang.icd"), "w") as f:
            f.write(hang + "\n")
        start = time.monotonic()
        r, line = self.health("--timeout", "2")
        self.assertLess(time.monotonic() - start, 2 + 3 * (3 if gctest.SANITIZED else 1), repr(r))
        self.assertEqual(r.rc, 2, repr(r))
        # what the run saw before the time ran out: the driver that hung, named by its .icd file
        self.assertTrue(line.startswith("UNKNOWN "), line)
        self.assertIn(os.path.join(vendors, "hang.icd")[-40:], line)

    def test_report_goes_to_the_file_in_the_format_asked(self):
        out = os.path.join(self.dir, "report.json")
        r, line = self.health("--json", "--no-smoke", "-o", out)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        gctest.validate(doc)
        self.assertEqual(doc["verdict"]["exit_code"], r.rc)
        self.assertEqual(sorted(os.listdir(self.dir)), ["report.json"])  # no temp file left
        prom = os.path.join(self.dir, "gpucheckup.prom")
        r2, line2 = self.health("--format=prometheus", "--no-smoke", "-o", prom)
        with open(prom, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("gpucheckup_ready %d" % (1 if r2.rc == 0 else 0), text)
        # without -o the line is everything
        r3, _ = self.health("--json", "--no-smoke")
        self.assertEqual(r3.stdout.count("\n"), 1)

    def test_default_run_fits_slurms_health_check_limit(self):
        # Slurm kills a HealthCheckProgram after 60 s; the default run (smoke test included) is bounded
        # by the default --timeout of 15 s, and takes far less on a healthy machine.
        start = time.monotonic()
        r, line = self.health()
        elapsed = time.monotonic() - start
        limit = 60 * (gctest.SANITIZED_SCALE if gctest.SANITIZED else 1)
        self.assertLess(elapsed, limit, repr(r))
        print("default --health run: %.1f s: %s" % (elapsed, line))


if __name__ == "__main__":
    unittest.main(verbosity=2)
