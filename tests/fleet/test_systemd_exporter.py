"""contrib/systemd: the units pass `systemd-analyze verify` (no warning either), and what their ExecStart lines
write is what Debian's real prometheus-node-exporter reads with its textfile collector (on 127.0.0.1, a free
port, the unit's textfile directory): gpucheckup_ready and the finding series are scraped, and
node_textfile_scrape_error stays 0, also while the file is being replaced over and over (gpucheckup -o is
atomic)."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import unittest
import urllib.request

import fleetd
import gctest

UNITS = os.path.join(gctest.SOURCE_ROOT, "contrib", "systemd")
EXPORTER = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def series(name, **labels):
    """The key of a sample in scrape()'s result: node_exporter orders labels its own way."""
    return (name, frozenset(labels.items()))


def configure(text, values):
    """The unit template TEXT with @NAME@ replaced, as meson's configure_file does at install."""
    for k, v in values.items():
        text = text.replace("@%s@" % k, v)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise AssertionError("unreplaced: %s" % left)
    return text


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    samples = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            samples[(m.group(1), frozenset(LABEL.findall(m.group(2) or "")))] = float(m.group(3))
    return samples


class SystemdExporterTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="fleet-systemd-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.textdir = os.path.join(cls.dir, "node-exporter")
        cls.nfddir = os.path.join(cls.dir, "features.d")
        cls.unitdir = os.path.join(cls.dir, "units")
        os.mkdir(cls.unitdir)
        with open(os.path.join(UNITS, "gpucheckup.service.in"), encoding="utf-8") as f:
            service = configure(f.read(), {"BINDIR": os.path.dirname(os.path.abspath(gctest.GPUCHECKUP)),
                                           "TEXTFILE_DIR": cls.textdir, "NFD_DIR": cls.nfddir})
        cls.service = os.path.join(cls.unitdir, "gpucheckup.service")
        with open(cls.service, "w", encoding="utf-8") as f:
            f.write(service)
        shutil.copy(os.path.join(UNITS, "gpucheckup.timer"), cls.unitdir)

    def exec_lines(self, key):
        with open(self.service, encoding="utf-8") as f:
            return [line.split("=", 1)[1] for line in f.read().splitlines() if line.startswith(key + "=")]

    def run_service(self, args="--no-smoke"):
        """What systemd would run for the service: ExecStartPre, then each ExecStart, $GPUCHECKUP_ARGS
        replaced as systemd does for an unbraced variable (split into words); returns the exit codes."""
        rcs = []
        for key in ("ExecStartPre", "ExecStart"):
            for line in self.exec_lines(key):
                words = []
                for w in shlex.split(line):
                    words += shlex.split(args) if w == "$GPUCHECKUP_ARGS" else [w]
                rcs.append(subprocess.run(words, capture_output=True, timeout=120).returncode)
        return rcs

    def test_units_verify(self):
        p = subprocess.run(["systemd-analyze", "verify", "--man=no", self.service,
                            os.path.join(self.unitdir, "gpucheckup.timer")],
                           capture_output=True, text=True, timeout=60, cwd=self.unitdir)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        # and the check can fail: a misspelt key is a warning it reports
        bad = os.path.join(self.unitdir, "bad.service")
        with open(self.service, encoding="utf-8") as f, open(bad, "w", encoding="utf-8") as g:
            g.write(f.read().replace("SuccessExitStatus=", "SuccessExitStatuss="))
        p = subprocess.run(["systemd-analyze", "verify", "--man=no", bad], capture_output=True, text=True,
                           timeout=60, cwd=self.unitdir)
        self.assertIn("Unknown key", p.stderr)
        os.unlink(bad)

    def test_node_exporter_scrapes_the_textfile(self):
        rcs = self.run_service()
        self.assertTrue(all(rc in (0, 1) for rc in rcs), rcs)
        j = gctest.run("--json", "--no-smoke")
        self.assertEqual(rcs[1:], [j.rc, j.rc])
        # exactly the two files, no temporary file left beside them
        self.assertEqual(os.listdir(self.textdir), ["gpucheckup.prom"])
        self.assertEqual(os.listdir(self.nfddir), ["gpucheckup"])
        with open(os.path.join(self.nfddir, "gpucheckup"), encoding="utf-8") as f:
            self.assertIn("feature.node.kubernetes.io/gpucheckup-ready=%s" % ("true" if j.rc == 0 else "false"),
                          f.read().splitlines())

        port = fleetd.free_port()
        daemons = fleetd.Daemons(self.dir)
        self.addCleanup(daemons.stop_all)
        daemons.start("node-exporter", [EXPORTER, "--web.listen-address=127.0.0.1:%d" % port,
                                        "--collector.disable-defaults", "--collector.textfile",
                                        "--collector.textfile.directory=" + self.textdir])

        def up():
            daemons.check_alive()
            try:
                return scrape(port)
            except OSError:
                return None
        s = fleetd.wait_for("node_exporter to answer", up, 30)
        self.assertEqual(s.get(series("node_textfile_scrape_error")), 0.0, s)
        self.assertEqual(s.get(series("gpucheckup_ready")), 1.0 if j.rc == 0 else 0.0, s)
        for f in j.json["findings"]:
            key = series("gpucheckup_check", id=f["id"], subject=f["subject"] or "", severity=f["severity"])
            self.assertEqual(s.get(key), 1.0, "%s not scraped: %s" % (key, [k for k in s if "gpucheckup" in k[0]]))
        self.assertIn(series("node_textfile_mtime_seconds", file=os.path.join(self.textdir, "gpucheckup.prom")), s)

        # while the file is replaced again and again, every scrape still parses it whole
        stop = threading.Event()
        seen = []

        def scraper():
            while not stop.is_set():
                seen.append(scrape(port))
        t = threading.Thread(target=scraper)
        t.start()
        try:
            for _ in range(8):
                self.run_service()
        finally:
            stop.set()
            t.join(30)
        self.assertGreater(len(seen), 2)
        for s in seen:
            self.assertEqual(s.get(series("node_textfile_scrape_error")), 0.0)
            self.assertIn(series("gpucheckup_ready"), s)

        # and a file node_exporter cannot parse shows as a scrape error: the check above can fail
        with open(os.path.join(self.textdir, "broken.prom"), "w", encoding="utf-8") as f:
            f.write("gpucheckup_broken{ 1\n")
        self.assertEqual(scrape(port).get(series("node_textfile_scrape_error")), 1.0)
        print("node_exporter scraped gpucheckup_ready and %d finding series, %d scrapes during 8 rewrites"
              % (len(j.json["findings"]), len(seen)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
