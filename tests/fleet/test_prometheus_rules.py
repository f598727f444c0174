"""contrib/prometheus/gpucheckup.rules.yml: Debian's promtool checks the rules and runs them on series shaped
as gpucheckup's Prometheus writer writes them (the series names come from a real run, so a renamed metric
fails here)."""
import os
import shutil
import subprocess
import tempfile
import unittest

import gctest

RULES = os.path.join(gctest.SOURCE_ROOT, "contrib", "prometheus", "gpucheckup.rules.yml")
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

# promtool's unit-test format (prometheus docs, "Unit testing for rules"): input series over time, then
# the alerts expected at a time. Each case below could fail: a wrong expression, label or `for`.
TESTS = """
rule_files:
  - %(rules)s
evaluation_interval: 1m
tests:
  - interval: 5m
    input_series:
      - series: 'gpucheckup_ready{instance="gpu1", job="node"}'
        values: '0x6'
      - series: 'gpucheckup_ready{instance="gpu2", job="node"}'
        values: '1x6'
      - series: 'gpucheckup_ready{instance="gpu3", job="node"}'
        values: '1 1 0 0 1 1 1'
    alert_rule_test:
      - eval_time: 10m
        alertname: GpucheckupNotReady
        exp_alerts: []
      - eval_time: 20m
        alertname: GpucheckupNotReady
        exp_alerts:
          - exp_labels: {severity: warning, instance: gpu1, job: node}
            exp_annotations:
              summary: "GPU node gpu1 is not ready"
              description: "gpucheckup says not ready; the gpucheckup_check series with severity=\\"error\\" say why (gpucheckup --explain on the node)."
  - interval: 5m
    input_series:
      - series: 'gpucheckup_check{instance="gpu1", id="health.gpu-error", subject="0000:65:00.0", severity="error"}'
        values: '1x3'
      - series: 'gpucheckup_check{instance="gpu2", id="health.gpu-error-past", subject="0000:65:00.0", severity="warning"}'
        values: '1x3'
      - series: 'gpucheckup_check{instance="gpu3", id="cuda.init-failed", subject="libcuda.so.1", severity="error"}'
        values: '1x3'
    alert_rule_test:
      - eval_time: 5m
        alertname: GpucheckupGpuHealthError
        exp_alerts:
          - exp_labels: {severity: critical, instance: gpu1, id: health.gpu-error, subject: "0000:65:00.0"}
            exp_annotations:
              summary: "GPU health error health.gpu-error on gpu1 (0000:65:00.0)"
              description: "gpucheckup found health.gpu-error for 0000:65:00.0: drain the node and see `gpucheckup health` there."
  - interval: 5m
    input_series:
      - series: 'gpucheckup_check{instance="gpu1", id="cuda.nvml-memory-held-most", subject="0000:65:00.0", severity="warning"}'
        values: '1x6'
      - series: 'gpucheckup_check{instance="gpu2", id="cuda.nvml-memory-held", subject="0000:65:00.0", severity="info"}'
        values: '1x6'
    alert_rule_test:
      - eval_time: 20m
        alertname: GpucheckupGpuMemoryHeld
        exp_alerts:
          - exp_labels: {severity: warning, instance: gpu1, id: cuda.nvml-memory-held-most, subject: "0000:65:00.0"}
            exp_annotations:
              summary: "GPU 0000:65:00.0 on gpu1 is held by another process"
              description: "cuda.nvml-memory-held-most: a process left from a finished job may still hold the GPU; see `gpucheckup cuda` on the node."
  - interval: 5m
    input_series:
      # stopped at the start; rewritten every five minutes (its value is the run's time, here the series' time)
      - series: 'gpucheckup_run_timestamp_seconds{instance="gpu1"}'
        values: '0x30'
      - series: 'gpucheckup_run_timestamp_seconds{instance="gpu2"}'
        values: '0+300x30'
    alert_rule_test:
      - eval_time: 55m
        alertname: GpucheckupStale
        exp_alerts: []
      - eval_time: 2h
        alertname: GpucheckupStale
        exp_alerts:
          - exp_labels: {severity: warning, instance: gpu1}
            exp_annotations:
              summary: "gpucheckup has not run on gpu1 for over an hour"
              description: "Check `systemctl status gpucheckup.timer gpucheckup.service` on the node."
"""


class PrometheusRulesTests(unittest.TestCase):
    def test_rules_check(self):
        p = subprocess.run([PROMTOOL, "check", "rules", RULES], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS: 4 rules found", p.stdout + p.stderr)

    def test_rules_fire_as_meant(self):
        d = tempfile.mkdtemp(prefix="gc-promrules-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "test.yml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(TESTS % {"rules": RULES})
        p = subprocess.run([PROMTOOL, "test", "rules", path], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS", p.stdout + p.stderr)

    def test_series_the_rules_use_are_written(self):
        """The metric names and labels the rules match are the ones gpucheckup writes."""
        t = gctest.Tree()
        self.addCleanup(t.cleanup)
        t.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2\n")
        r = gctest.run("cpu", "--root", t.root, "--format=prometheus")
        for name in ("gpucheckup_ready ", "gpucheckup_run_timestamp_seconds "):
            self.assertIn("\n" + name, "\n" + r.stdout, r.stdout)
        with open(RULES, encoding="utf-8") as f:
            rules = f.read()
        for metric in ("gpucheckup_ready", "gpucheckup_check{", "gpucheckup_run_timestamp_seconds"):
            self.assertIn(metric, rules)


if __name__ == "__main__":
    gctest.main()
