"""contrib/nhc/gpucheckup.nhc: check_gpucheckup in bash with NHC's check API (die RC MSG, log, dbg), stood in
for here (LBNL NHC is not in Debian): ready passes, not ready dies with the root cause, unknown is logged (or
dies with -u), options reach gpucheckup."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import gctest

CHECK = os.path.join(gctest.SOURCE_ROOT, "contrib", "nhc", "gpucheckup.nhc")
# NHC's API as a check sees it (nhc, "die", "log", "dbg"): die records the status and message (NHC then
# marks the node offline with it), log and dbg write to NHC's log.
HARNESS = r'''
die() { echo "DIE $1 $2" >> "$OUT"; }
log() { echo "LOG $*" >> "$OUT"; }
dbg() { echo "DBG $*" >> "$OUT"; }
. "$CHECK"
check_gpucheckup "$@"
echo "RETURN $?" >> "$OUT"
'''


class NhcCheckTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleet-nhc-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def check(self, *args, binary=None):
        out = os.path.join(self.dir, "out")
        if os.path.exists(out):
            os.unlink(out)
        env = {**os.environ, "OUT": out, "CHECK": CHECK, "GPUCHECKUP": binary or gctest.GPUCHECKUP}
        p = subprocess.run(["bash", "-c", HARNESS, "nhc", *args], env=env, capture_output=True, text=True,
                           timeout=180)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            return f.read().splitlines()

    def health(self, *args):
        return gctest.run("--health", *args)

    def test_ready_passes(self):
        h = self.health("--no-smoke")
        self.assertEqual(h.rc, 0, "precondition: this machine is not ready: %r" % h)
        lines = self.check("-n")
        self.assertEqual(lines, ["DBG check_gpucheckup: " + h.stdout.strip(), "RETURN 0"])

    def test_not_ready_dies_with_the_root_cause(self):
        flags = gctest.host_cpu_flags()
        flag = next(f for f in ("amx_tile", "amx_int8", "avx512_bf16", "avx512f", "avx2", "avx") if f not in flags)
        h = self.health("--no-smoke", "--require", flag)
        self.assertEqual(h.rc, 1, repr(h))
        report = os.path.join(self.dir, "report.json")
        lines = self.check("-n", "-r", flag, "-o", report)
        self.assertEqual(lines, ["DIE 1 check_gpucheckup: " + h.stdout.strip()[len("NOT-READY "):], "RETURN 1"])
        with open(report, encoding="utf-8") as f:
            doc = json.load(f)
        gctest.validate(doc)
        self.assertFalse(doc["verdict"]["ready"])

    def test_unknown_is_logged_or_fatal_with_u(self):
        lines = self.check("-n", "-r", "warp-drive")
        self.assertEqual(len(lines), 2, lines)
        self.assertTrue(lines[0].startswith("LOG check_gpucheckup: could not decide: UNKNOWN input --require"), lines)
        self.assertEqual(lines[1], "RETURN 0")
        lines = self.check("-n", "-u", "-a", "--timeout=nonsense")
        self.assertTrue(lines[0].startswith("DIE 1 check_gpucheckup: UNKNOWN usage --timeout"), lines)
        self.assertEqual(lines[1], "RETURN 1")

    def test_missing_binary_and_bad_options_die(self):
        lines = self.check(binary=os.path.join(self.dir, "no-such-gpucheckup"))
        self.assertEqual(lines[0], "DIE 1 check_gpucheckup: %s not found or not runnable"
                         % os.path.join(self.dir, "no-such-gpucheckup"))
        self.assertEqual(self.check("-x"), ["DIE 1 check_gpucheckup: unknown option -x", "RETURN 1"])
        self.assertEqual(self.check("-r"), ["DIE 1 check_gpucheckup: option -r needs a value", "RETURN 1"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
