"""End-to-end tests of the CLI, the writers and the exit codes, through the built binary."""
import json
import os
import shutil
import stat
import subprocess
import tempfile

import gctest


class CliTests(gctest.TestCase):
    def test_json_is_valid_and_schema_valid(self):
        r = self.run_json()
        self.assertIn(r.rc, (0, 1), repr(r))
        doc = r.json
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(doc["tool"]["name"], "gpucheckup")
        self.assertEqual(doc["command"], "check")
        for probe in ("cpu", "pci", "icd", "opencl", "smoke"):
            self.assertIn(probe, doc)
        self.assertEqual(doc["verdict"]["exit_code"], r.rc)
        self.assertEqual(doc["verdict"]["ready"], r.rc == 0)
        # python -m json.tool accepts it, as docs/formats.md promises
        subprocess.run(["python3", "-m", "json.tool"], input=r.stdout, text=True, check=True,
                       capture_output=True)

    def test_fs_trace_is_the_same_every_run(self):
        # GPUCHECKUP_FS_TRACE lists the files a run read (fixtures are captured from it). Children
        # forked while probe threads wrote it used to write the parent's unwritten buffer a second
        # time: the list grew by a random block each run (1024 to 1182 lines in five runs).
        traces = []
        tmp = tempfile.mkdtemp(prefix="gc-trace-")
        self.addCleanup(shutil.rmtree, tmp, True)
        for i in range(3):
            path = os.path.join(tmp, "trace%d" % i)
            r = self.run_json("--no-smoke", env={"GPUCHECKUP_FS_TRACE": path})
            self.assertIn(r.rc, (0, 1), repr(r))
            with open(path) as f:
                lines = f.read().split("\n")
            self.assertEqual(lines[-1], "", "the trace ends with a whole line")
            self.assertTrue(all(l.startswith("/") for l in lines[:-1]), "every line is a path")
            traces.append(sorted(lines))
        self.assertEqual(traces[1], traces[0])
        self.assertEqual(traces[2], traces[0])

    def test_compact_is_one_line(self):
        r = self.run_json("--compact")
        self.assertEqual(r.stdout.count("\n"), 1)

    def test_unknown_option_exits_2_with_message(self):
        r = gctest.run("--frobnicate")
        self.assertEqual(r.rc, 2)
        self.assertIn("--frobnicate", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_unknown_option_with_json_gives_error_document(self):
        r = self.run_json("--bogus", expect_rc=2)
        self.assertEqual(r.json["error"]["kind"], "usage")
        self.assertIn("--bogus", r.json["error"]["message"])

    def test_unknown_command(self):
        r = gctest.run("frobnicate")
        self.assertEqual(r.rc, 2)
        self.assertIn("frobnicate", r.stderr)

    def test_root_nonexistent_exits_2(self):
        r = gctest.run("--root", "/nonexistent")
        self.assertEqual(r.rc, 2)
        self.assertIn("/nonexistent", r.stderr)
        self.assertIn("No such file", r.stderr)
        r = self.run_json("--root", "/nonexistent", expect_rc=2)
        self.assertIn("/nonexistent", r.json["error"]["message"])

    def test_root_on_empty_directory_still_reports(self):
        t = self.make_tree()
        r = self.run_json("--root", t.root)
        self.assertIn(r.rc, (0, 1), repr(r))
        doc = r.json
        self.assertFalse(doc["host"]["live"])
        self.assertEqual(doc["host"]["root"], t.root)
        # probes that need the live machine stand down, saying why
        for probe in ("icd", "opencl", "smoke"):
            self.assertEqual(doc[probe]["status"], "skipped", probe)
            self.assertIn("--live", doc[probe]["reason"])
        text = gctest.run("--root", t.root)
        self.assertIn("Reading a captured tree", text.stdout)

    def test_live_under_root_runs_live_probes(self):
        t = self.make_tree()
        r = self.run_json("--root", t.root, "--live", "icd")
        self.assertNotIn("--live", r.json["icd"]["reason"] or "")

    def test_version_and_help(self):
        r = gctest.run("--version")
        self.assertEqual(r.rc, 0)
        self.assertRegex(r.stdout, r"^gpucheckup \d+\.\d+\.\d+\n$")
        h = gctest.run("--help")
        self.assertEqual(h.rc, 0)
        for word in ("--json", "--format", "--compact", "--output", "--root", "--live", "--timeout",
                     "--color", "--quiet", "--verbose", "--version", "--require", "Exit status"):
            self.assertIn(word, h.stdout)

    def test_help_and_man_page_list_the_same_long_options(self):
        h = gctest.run("--help").stdout
        import re
        opts = set(re.findall(r"(--[a-z][a-z0-9-]+)", h))
        with open(os.path.join(gctest.SOURCE_ROOT, "man", "gpucheckup.1"), encoding="utf-8") as f:
            man = f.read().replace("\\-", "-")
        for o in sorted(opts):
            self.assertIn(o, man, "man page lacks " + o)
        for code in ("0", "1", "2", "3"):
            self.assertRegex(man, r"\.TP\n\.B %s\n" % code)

    def test_each_command_gives_valid_json(self):
        for cmd in ("check", "cpu", "pci", "icd", "opencl", "smoke", "list"):
            with self.subTest(cmd=cmd):
                r = self.run_json(cmd, "--timeout", "60")
                self.assertEqual(r.json["command"], cmd)
                self.assertIn(r.rc, (0, 1), repr(r))

    def test_output_file_written_atomically(self):
        t = self.make_tree()
        out = t.path("report.json")
        with open(out, "w") as f:
            f.write("old")
        r = gctest.run("--json", "-o", out, "cpu")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertEqual(r.stdout, "")
        with open(out) as f:
            gctest.validate(json.load(f))
        self.assertEqual([n for n in os.listdir(t.root) if n.startswith(".gpucheckup")], [])
        mode = stat.S_IMODE(os.stat(out).st_mode)
        self.assertTrue(mode & stat.S_IRUSR)

    def test_output_into_missing_directory_exits_2(self):
        r = gctest.run("--json", "-o", "/nonexistent-dir/x.json")
        self.assertEqual(r.rc, 2)
        self.assertIn("/nonexistent-dir", r.stderr)
        gctest.validate(r.json)

    def test_color(self):
        always = gctest.run("--color=always", "cpu")
        self.assertIn("\033[", always.stdout)
        never = gctest.run("--color=never", "cpu")
        self.assertNotIn("\033[", never.stdout)
        auto = gctest.run("cpu")  # a pipe is no terminal
        self.assertNotIn("\033[", auto.stdout)

    def test_list_checks(self):
        r = self.run_json("--list-checks", expect_rc=0)
        ids = [c["id"] for c in r.json["checks"]]
        self.assertEqual(len(ids), len(set(ids)), "duplicate check IDs")
        self.assertIn("require.unmet", ids)
        text = gctest.run("--list-checks")
        for i in ids:
            self.assertIn(i, text.stdout)

    def test_require_accepts_every_cpu_flag(self):
        """Every flag `cpu --json` reports can be required (the doctor once kept its own, drifted list:
        avx_vnni, amx_bf16 and aes were 'unknown requirement')."""
        flags = sorted(self.run_json("cpu").json["cpu"]["flags"])
        self.assertIn("avx_vnni", flags)
        r = self.run_json("cpu", "--require", ",".join(flags))
        self.assertIn(r.rc, (0, 1), r)
        got = {q["name"]: q["met"] for q in r.json["verdict"]["requirements"]}
        self.assertEqual(sorted(got), flags)
        for name, usable in self.run_json("cpu").json["cpu"]["flags"].items():
            self.assertEqual(got[name], usable is True, name)
        bad = gctest.run("cpu", "--require", "avx_vnnii")
        self.assertEqual(bad.rc, 2, bad)
        self.assertIn("avx_vnni", bad.stderr)  # the message lists the valid flags

    def test_quiet_prints_no_summary(self):
        r = gctest.run("-q", "cpu")
        self.assertNotIn("Summary", r.stdout)
        self.assertIn("Verdict", r.stdout)


if __name__ == "__main__":
    gctest.main()
