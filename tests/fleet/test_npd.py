"""contrib/npd/gpucheckup-plugin-monitor.json and the contract node-problem-detector's custom plugin monitor
relies on. NPD is not packaged in Debian: its reading of a plugin (pkg/custompluginmonitor/plugin/plugin.go:
stdout up to 4 KiB, whitespace trimmed, cut at max_output_length bytes; exit 0 OK, 1 NonOK, anything else
Unknown; killed at the rule's timeout) is restated here, and the config's own rules are run against the
real gpucheckup: every answer fits uncut, comes well before NPD would kill it, and maps to the status its
line says."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import gctest

CONFIG = os.path.join(gctest.SOURCE_ROOT, "contrib", "npd", "gpucheckup-plugin-monitor.json")
STATUS = {0: "OK", 1: "NonOK"}
WORD = {"OK": "READY", "NonOK": "NOT-READY", "Unknown": "UNKNOWN"}


def duration(s):
    """A Go duration of the forms the config uses ("300s", "1m", "1m30s") in seconds."""
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?", s)
    if not m or not s:
        raise AssertionError("not a duration: %r" % s)
    h, mi, sec = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(sec or 0)


def npd_run(argv, timeout, max_len, env=None):
    """(status, message, seconds) as NPD's plugin runner would report them."""
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "Unknown", "Timeout when running plugin", time.monotonic() - start
    out = p.stdout[:4096].decode("utf-8", "replace").strip()
    return STATUS.get(p.returncode, "Unknown"), out[:max_len], time.monotonic() - start


class NpdTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(CONFIG, encoding="utf-8") as f:
            cls.cfg = json.load(f)

    def rules(self):
        return self.cfg["rules"]

    def test_config_is_what_npd_accepts(self):
        c = self.cfg
        self.assertEqual(c["plugin"], "custom")
        g = c["pluginConfig"]
        self.assertEqual(g["max_output_length"], 80)
        self.assertGreaterEqual(g["concurrency"], 1)
        interval, timeout = duration(g["invoke_interval"]), duration(g["timeout"])
        self.assertLessEqual(timeout, interval)
        conditions = {x["type"] for x in c["conditions"]}
        for x in c["conditions"]:
            self.assertTrue(x["reason"] and x["message"])
        self.assertTrue(self.rules())
        for r in self.rules():
            self.assertIn(r["type"], ("permanent", "temporary"))
            if r["type"] == "permanent":
                self.assertIn(r["condition"], conditions)
            self.assertTrue(r["reason"])
            # NPD rejects a rule timeout above the plugin's
            self.assertLessEqual(duration(r["timeout"]), timeout)
            self.assertEqual(r["path"], "/usr/bin/gpucheckup")  # where the package installs it
            self.assertEqual(r["args"][0], "--health")
            self.assertIn("--no-smoke", r["args"])  # pods may be using the GPUs
            # gpucheckup's own --timeout ends the run (a hung driver included) before NPD kills it
            t = [float(a.split("=", 1)[1]) for a in r["args"] if a.startswith("--timeout=")]
            self.assertEqual(len(t), 1, r["args"])
            self.assertLessEqual(t[0] + 5, duration(r["timeout"]))

    def argv(self, rule, *extra):
        return [gctest.GPUCHECKUP, *rule["args"], *extra]

    def test_each_rule_answers_within_the_contract(self):
        max_len = self.cfg["pluginConfig"]["max_output_length"]
        flags = gctest.host_cpu_flags()
        missing = next(f for f in ("amx_tile", "amx_int8", "avx512_bf16", "avx512f", "avx2", "avx") if f not in flags)
        for rule in self.rules():
            for extra, expect in (((), None), (("--require=" + missing,), "NonOK"),
                                  (("--require=warp-drive",), "Unknown")):
                argv = self.argv(rule, *extra)
                status, msg, secs = npd_run(argv, duration(rule["timeout"]), max_len)
                raw = subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout.strip()
                self.assertEqual(msg, raw, "NPD would cut the line")  # it fits uncut
                self.assertLessEqual(len(raw.encode()), max_len)
                self.assertEqual(msg.split(" ")[0], WORD[status], (argv, msg))
                if expect:
                    self.assertEqual(status, expect, (argv, msg))

    def test_a_hung_driver_is_unknown_before_npd_kills_the_plugin(self):
        d = tempfile.mkdtemp(prefix="fleet-npd-")
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "hang.icd"), "w") as f:
            f.write(os.environ["GC_FAKE_ICD_HANG"] + "\n")
        env = {**os.environ, "OCL_ICD_VENDORS": d}
        rule = self.rules()[0]
        # the rule's own arguments with a short --timeout, and NPD's timeout scaled alike
        args = [a if not a.startswith("--timeout=") else "--timeout=3" for a in rule["args"]]
        scale = 3 if gctest.SANITIZED else 1
        status, msg, secs = npd_run([gctest.GPUCHECKUP, *args], (3 + 5) * scale, 80, env=env)
        self.assertEqual(status, "Unknown", msg)
        self.assertTrue(msg.startswith("UNKNOWN "), msg)
        self.assertIn("hang.icd", msg)
        self.assertLess(secs, 3 + 2 * scale)


if __name__ == "__main__":
    unittest.main(verbosity=2)
