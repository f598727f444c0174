"""The text a person reads (issue 38), on this machine's live run: every Summary label names its stack, a
stack's lines are together and in the Summary's order, and the verdict lines come in the documented order
(docs/guide.md "The verdict": each API, then frameworks, then the CPU, then `Verdict:`)."""
import json
import os
import re
import subprocess
import tarfile
import tempfile

import gctest
import gctext

from gctext import RANK, SECTION_STACK, stack_of, verdict_problems  # noqa: E402


class TextTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = gctest.run("--json", timeout=300).json
        cls.text = gctest.run(timeout=300).stdout

    def test_every_label_names_its_stack(self):
        # (every report the suite reads is checked so too: gctext.check_report; here, this machine's run)
        self.assertEqual(gctext.label_problems(self.doc), [])
        self.assertTrue(any((self.doc.get(s) or {}).get("summary") for s in SECTION_STACK), "no summary line")

    def test_properties_find_what_they_must(self):
        self.assertEqual(len(gctext.label_problems({"icd": {"summary": [{"label": "Loader"}]}})), 1)
        self.assertEqual(len(gctext.label_problems({"icd": {"summary": [{"label": "OpenCL loader"}]},
                                                    "vulkan": {"summary": [{"label": "OpenCL loader"}]}})), 2)
        self.assertNotEqual(verdict_problems("Vulkan: ready\nOpenCL: ready\nVerdict: ready (0 warnings)"), [])
        self.assertNotEqual(verdict_problems("CPU for prebuilt TensorFlow (AVX): ok\nPyTorch 2.1 (/usr): CPU "
                                             "only\nVerdict: ready (0 warnings)"), [])
        self.assertEqual(verdict_problems("CUDA for x: ready\nGPU compute (OpenCL): ready\nOpenCL: ready\n"
                                          "PyTorch 2.1 (/usr): CPU only\nCPU for prebuilt TensorFlow (AVX): ok\n"
                                          "Verdict: ready (0 warnings)"), [])

    def summary_lines(self):
        body = self.text.split("\nSummary\n", 1)[1].split("\n\n", 1)[0]
        lines = body.splitlines()
        self.assertTrue(lines)
        out = []
        for line in lines:
            m = re.match(r"^  \[(?: ok |info|warn|FAIL|skip)\] (.*)$", line)
            self.assertTrue(m, "not a Summary line: %r" % line)
            out.append((stack_of(m.group(1)), line))
        return out

    def test_summary_groups_each_stack_in_order(self):
        lines = self.summary_lines()
        self.assertEqual([l for s, l in lines if s is None], [], "Summary lines of no stack")
        order = []
        for stack, _ in lines:
            if not order or order[-1] != stack:
                self.assertNotIn(stack, order, "%s's lines are not together:\n%s" % (stack, self.text))
                order.append(stack)
        self.assertEqual(order, sorted(order, key=RANK.get), self.text)
        self.assertEqual(order[0], "cpu")

    def test_label_column_fits_80_columns(self):
        # the labels pad to one column of 14 (a longer one, a CUDA smoke test's bus address, runs past
        # it): at 80 columns a line keeps 56 for its text
        labels = {l["label"] for sec in SECTION_STACK for l in (self.doc.get(sec) or {}).get("summary", [])}
        checked = 0
        for _, line in self.summary_lines():
            label = line[9:].split("  ", 1)[0] if "  " in line[9:] else None
            if label in labels and len(label) <= 14:
                self.assertEqual(line[9:24], label.ljust(14) + " ", line)
                checked += 1
        self.assertGreater(checked, 0, self.text)

    def test_verdict_lines_in_documented_order(self):
        for text in (self.doc["verdict"]["text"], self.text.rstrip("\n").rsplit("\n\n", 1)[1]):
            self.assertTrue(text.splitlines()[-1].startswith("Verdict: "), text)
            self.assertEqual(verdict_problems(text), [])


# The labels before every label named its stack, per section (a snapshot taken then replays with today's).
OLD_LABELS = {"icd": {"OpenCL loader": "Loader", "OpenCL ICD": "ICD"}, "smoke": {"OpenCL smoke": "Smoke"},
              "cuda": {"CUDA libraries": "CUDA libs"}, "rocm": {"ROCm KFD": "KFD"},
              "vulkan": {"Vulkan loader": "Loader", "Vulkan driver": "Driver", "Vulkan device": "Device"}}


class OldSnapshotTests(gctest.TestCase):
    def test_old_labels_replay_as_today(self):
        d = tempfile.mkdtemp(prefix="gc-oldsnap-")
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        snap = os.path.join(d, "s.tar.gz")
        r = gctest.run("snapshot", "-o", snap, timeout=300)
        self.assertTrue(os.path.exists(snap), repr(r))
        with tarfile.open(snap) as t:
            t.extractall(d)  # gpucheckup's own snapshot, just made
        path = os.path.join(d, "gpucheckup-snapshot", "report.json")
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        today = {}
        for sec, old in list(OLD_LABELS.items()) + [("opencl", None)]:
            for line in (doc.get(sec) or {}).get("summary", []):
                was = re.sub(r"^OpenCL (?:dev|plat) ", "CL ", line["label"]) if old is None else \
                    old.get(line["label"], line["label"])
                today.setdefault(sec, []).append(line["label"])
                line["label"] = was
        self.assertIn("CL 0:0", [l["label"] for l in doc["opencl"]["summary"]])  # pocl's CPU device, at least
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        old = os.path.join(d, "old.tar.gz")
        with tarfile.open(old, "w:gz") as t:
            t.add(os.path.join(d, "gpucheckup-snapshot"), arcname="gpucheckup-snapshot")
        r = self.run_json("--root", old, timeout=300)
        for sec, labels in today.items():
            self.assertEqual([l["label"] for l in r.json[sec]["summary"]], labels, sec)


if __name__ == "__main__":
    gctest.main()
