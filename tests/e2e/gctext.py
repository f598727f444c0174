"""The text a person reads (issue 38), as a property of every report the suite reads (gctest.validate and
Result.json call check_report): every Summary label names its stack and no label is two stacks', and the
verdict lines come in the documented order (docs/guide.md "The verdict": each API, frameworks, the CPU)."""

# The Summary's stacks in their order, with the words a label of each starts with (frameworks: its
# frameworks' names, and the "  imported" line under one). A section the run skips is shown by its name.
STACKS = [
    ("cpu", ("CPU", "cpu")),
    ("bus", ("GPU", "WSL2", "pci")),
    ("kernel", ("Kernel log", "PCIe errors", "Temperature", "health")),
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

# The verdict lines' order: each API, frameworks, the CPU, then a probe without a stack (the suite's fake
# API); a line of none of these is a framework's (it starts with the framework's name).
VERDICT = [("cuda", "CUDA for "), ("rocm", "HIP (ROCm): "), ("opencl", "GPU compute (OpenCL): "),
           ("opencl", "OpenCL: "), ("levelzero", "Level Zero: "), ("vulkan", "Vulkan: "), ("cpu", "CPU for "),
           ("unset", "FakeAPI: ")]
VERDICT_RANK = {"cuda": 0, "rocm": 1, "opencl": 2, "levelzero": 3, "vulkan": 4, "frameworks": 5, "cpu": 6, "unset": 7}


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


def label_problems(doc):
    """Summary labels of report DOC that do not name their section's stack, or that two stacks share."""
    out, seen = [], {}
    for sec, stack in SECTION_STACK.items():
        lines = doc.get(sec).get("summary") if isinstance(doc.get(sec), dict) else None
        for line in lines if isinstance(lines, list) else []:
            label = line.get("label") or ""
            if stack_of(label) != stack:
                out.append("%s's label %r does not name its stack (%s)" % (sec, label, stack))
            seen.setdefault(label, set()).add(stack)
    out += ["label %r is %s's" % (l, sorted(s)) for l, s in seen.items() if len(s) > 1]
    return out


def verdict_problems(text):
    """What is out of order in verdict text TEXT (its lines, then `Verdict:`)."""
    lines = [l for l in (text or "").splitlines() if not l.startswith("  ")]
    if not lines:
        return []
    out = [] if lines[-1].startswith("Verdict: ") else ["the last line is not the verdict: %r" % lines[-1]]
    stacks = [verdict_stack(l) for l in lines[:-1]]
    ranks = [VERDICT_RANK[s] for s in stacks]
    if ranks != sorted(ranks):
        out.append("verdict lines out of order:\n" + text)
    runs = [s for i, s in enumerate(stacks) if i == 0 or stacks[i - 1] != s]
    if len(runs) != len(set(runs)):
        out.append("a stack's verdict lines apart:\n" + text)
    return out


def check_report(doc):
    """Raise AssertionError if report DOC's labels or verdict lines break the properties above."""
    if not isinstance(doc, dict):
        return
    verdict = doc.get("verdict")
    bad = label_problems(doc) + verdict_problems(verdict.get("text") if isinstance(verdict, dict) else None)
    if bad:
        raise AssertionError("the text a person reads:\n  " + "\n  ".join(bad))
