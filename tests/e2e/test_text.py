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

# The Summary's stacks in their order, with the words a label of each starts with (frameworks: its
# frameworks' names, and the "  imported" line under one). A section the run skips is shown by its name.
STACKS = [
    ("cpu", ("CPU", "cpu")),
    ("bus", ("GPU", "WSL2", "pci")),
    ("kernel", ("Kernel log", "PCIe errors", "health")),
    ("topology", ("Topology", "topology")),
    ("cuda", ("CUDA", "cuda")),
    ("rocm", ("ROCm", "rocm")),
    ("opencl", ("OpenCL", "icd", "opencl", "smoke")),
    ("levelzero", ("Level Zero", "levelzero")),
    ("vulkan", ("Vulkan", "vulkan")),
    ("frameworks", ("Frameworks", "PyTorch", "TensorFlow", "JAX", "CuPy", "ONNX Runtime", "PaddlePaddle",
                    "  imported", "frameworks")),
]
SECTION_STACK = {"cpu": "cpu", "pci": "bus", "health": "kernel", "topology": "topology", "cuda": "cuda",
                 "rocm": "rocm", "icd": "opencl", "opencl": "opencl", "smoke": "opencl",
                 "levelzero": "levelzero", "vulkan": "vulkan", "frameworks": "frameworks"}
RANK = {name: i for i, (name, _) in enumerate(STACKS)}

# The verdict lines' order: each API, frameworks, the CPU (a framework's line starts with its name).
VERDICT = [("cuda", "CUDA for "), ("rocm", "HIP (ROCm): "), ("opencl", "GPU compute (OpenCL): "),
           ("opencl", "OpenCL: "), ("levelzero", "Level Zero: "), ("vulkan", "Vulkan: "), ("cpu", "CPU for ")]
VERDICT_RANK = {"cuda": 0, "rocm": 1, "opencl": 2, "levelzero": 3, "vulkan": 4, "frameworks": 5, "cpu": 6}


def stack_of(text):
    """The stack whose words TEXT (a label, or a Summary line after its mark) starts with; the longest match."""
    best, size = None, 0
    for name, words in STACKS:
        for w in words:
            if text.startswith(w) and (len(text) == len(w) or text[len(w)] == " ") and len(w) > size:
                best, size = name, len(w)
    return best


def verdict_stack(line):
    for name, start in VERDICT:
        if line.startswith(start):
            return name
    return "frameworks"


class TextTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = gctest.run("--json", timeout=300).json
        cls.text = gctest.run(timeout=300).stdout

    def test_every_label_names_its_stack(self):
        seen = {}
        for sec, stack in SECTION_STACK.items():
            for line in (self.doc.get(sec) or {}).get("summary", []):
                label = line["label"]
                self.assertEqual(stack_of(label), stack, "%s's label %r does not name its stack" % (sec, label))
                seen.setdefault(label, set()).add(stack)
        self.assertEqual({l: s for l, s in seen.items() if len(s) > 1}, {}, "labels shared by stacks")
        self.assertTrue(seen, "no summary line at all")

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
            lines = text.splitlines()
            self.assertTrue(lines[-1].startswith("Verdict: "), text)
            ranks = [VERDICT_RANK[verdict_stack(l)] for l in lines[:-1] if not l.startswith("  ")]
            self.assertEqual(ranks, sorted(ranks), "verdict lines out of order:\n%s" % text)
            # a stack's verdict lines together (OpenCL's two)
            stacks = [verdict_stack(l) for l in lines[:-1] if not l.startswith("  ")]
            runs = [s for i, s in enumerate(stacks) if i == 0 or stacks[i - 1] != s]
            self.assertEqual(len(runs), len(set(runs)), text)



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
