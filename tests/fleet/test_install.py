"""`meson install` into a DESTDIR: the binary (which runs from there), the man page, the JSON Schema, bash and zsh
completions made by the binary from its option table, the Slurm, NHC and NPD recipes, the systemd units with
their paths filled in. The bash completion is then run in bash with Debian's bash-completion, and checked
against --help: every option --help names is completed, and nothing else."""
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

import gctest

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


class InstallTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dest = tempfile.mkdtemp(prefix="fleet-install-")
        cls.addClassCleanup(shutil.rmtree, cls.dest, True)
        build = gctest.BUILD_ROOT
        p = subprocess.run(["meson", "install", "-C", build, "--destdir", cls.dest, "--no-rebuild", "--quiet"],
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise AssertionError("meson install failed: %s %s" % (p.stdout[-3000:], p.stderr[-3000:]))
        with open(os.path.join(build, "meson-info", "intro-buildoptions.json"), encoding="utf-8") as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        cls.opts = opts
        cls.prefix = cls.dest + opts["prefix"]

    def path(self, *rel):
        return os.path.join(self.prefix, *rel)

    def test_tree(self):
        o = self.opts
        unitdir = o["systemdunitdir"] or os.path.join(o["prefix"], "lib", "systemd", "system")
        share = o["datadir"]
        want = {
            os.path.join(o["bindir"], "gpucheckup"): 0o755,
            os.path.join(o["mandir"], "man1", "gpucheckup.1"): 0o644,
            os.path.join(share, "gpucheckup", "gpucheckup.schema.json"): 0o644,
            os.path.join(share, "bash-completion", "completions", "gpucheckup"): 0o644,
            os.path.join(share, "zsh", "vendor-completions", "_gpucheckup"): 0o644,
            os.path.join(share, "gpucheckup", "contrib", "slurm", "gpucheckup-healthcheck"): 0o755,
            os.path.join(share, "gpucheckup", "contrib", "slurm", "slurm-healthcheck.conf"): 0o644,
            os.path.join(share, "gpucheckup", "contrib", "nhc", "gpucheckup.nhc"): 0o644,
            os.path.join(share, "gpucheckup", "contrib", "npd", "gpucheckup-plugin-monitor.json"): 0o644,
            os.path.join(share, "gpucheckup", "contrib", "npd", "README.md"): 0o644,
            os.path.join(share, "gpucheckup", "contrib", "prometheus", "gpucheckup.rules.yml"): 0o644,
            os.path.join(unitdir, "gpucheckup.service"): 0o644,
            os.path.join(unitdir, "gpucheckup.timer"): 0o644,
        }
        got = {}
        for d, _, files in os.walk(self.dest):
            for f in files:
                full = os.path.join(d, f)
                got[os.path.relpath(full, self.dest)] = stat.S_IMODE(os.stat(full).st_mode)
        expect = {os.path.relpath(os.path.join(o["prefix"], k), "/"): v for k, v in want.items()}
        self.assertEqual(sorted(got), sorted(expect))
        for k, mode in expect.items():
            self.assertEqual(got[k] & 0o111 != 0, mode & 0o111 != 0, k)

    def test_installed_binary_runs(self):
        exe = self.path(self.opts["bindir"], "gpucheckup")
        p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^gpucheckup \d+\.\d+\.\d+\n$")
        with open(self.path(self.opts["datadir"], "gpucheckup", "gpucheckup.schema.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), gctest.SCHEMA)
        p = subprocess.run(["man", "-l", "--warnings", self.path(self.opts["mandir"], "man1", "gpucheckup.1")],
                           capture_output=True, text=True, timeout=60, env={**os.environ, "MANWIDTH": "80"})
        self.assertIn("--health", p.stdout)

    def test_unit_paths_filled_in(self):
        unitdir = self.opts["systemdunitdir"] or os.path.join(self.opts["prefix"], "lib", "systemd", "system")
        with open(self.dest + os.path.join(unitdir, "gpucheckup.service"), encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("@", text.replace("@BINDIR@", "!"))  # nothing left unreplaced
        self.assertIn("ExecStart=%s/gpucheckup " % os.path.join(self.opts["prefix"], self.opts["bindir"]), text)
        self.assertIn("-o %s/gpucheckup.prom" % self.opts["textfile_dir"], text)
        self.assertIn("-o %s/gpucheckup" % self.opts["nfd_dir"], text)

    def help_options(self):
        """The options --help lists, and --colour, the alias of --color getopt accepts that it does not list."""
        out = gctest.run("--help").stdout
        return set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z0-9-]+)", out)) | {"--colour"}

    def complete(self, line):
        """What bash offers for LINE (the cursor at its end), with bash-completion and the installed file."""
        comp = self.path(self.opts["datadir"], "bash-completion", "completions", "gpucheckup")
        words = line.split(" ")
        script = ('. %s\n. %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\nCOMP_LINE=%s\nCOMP_POINT=${#COMP_LINE}\n'
                  '_gpucheckup gpucheckup\nprintf "%%s\\n" "${COMPREPLY[@]}"\n'
                  % (BASH_COMPLETION, comp, " ".join("'%s'" % w for w in words), len(words) - 1, "'%s'" % line))
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, cwd=self.dest)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [w for w in p.stdout.split("\n") if w]

    def test_bash_completion_follows_the_option_table(self):
        offered = {w.rstrip("=") for w in self.complete("gpucheckup --")}
        self.assertEqual(offered, self.help_options())
        self.assertEqual(self.complete("gpucheckup --form"), ["--format="])
        self.assertEqual(sorted(self.complete("gpucheckup --format ")),
                         sorted(["text", "json", "junit", "prometheus", "nfd", "github"]))
        self.assertEqual(self.complete("gpucheckup --format=pro"), ["prometheus"])
        self.assertEqual(sorted(self.complete("gpucheckup --color a")), ["always", "auto"])
        self.assertIn("snapshot", self.complete("gpucheckup "))
        self.assertEqual(self.complete("gpucheckup sn"), ["snapshot"])
        self.assertEqual(self.complete("gpucheckup --timeout "), [])
        # a path option completes files (here, in the DESTDIR's top)
        top = os.listdir(self.dest)
        self.assertEqual(sorted(self.complete("gpucheckup -o ")), sorted(top))

    def test_zsh_completion_names_every_option(self):
        with open(self.path(self.opts["datadir"], "zsh", "vendor-completions", "_gpucheckup"), encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("#compdef gpucheckup\n"))
        named = set(re.findall(r"'(--[a-z0-9-]+)", text))
        self.assertEqual(named, self.help_options())
        if shutil.which("zsh"):
            p = subprocess.run(["zsh", "-n", self.path(self.opts["datadir"], "zsh", "vendor-completions",
                                                       "_gpucheckup")], capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
