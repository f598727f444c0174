"""gctest: helpers for gpucheckup's end-to-end tests (run the binary, validate JSON, build fake trees)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import jsonschema

import gcscope
import gctext

GPUCHECKUP = os.environ.get("GPUCHECKUP", "gpucheckup")
SCHEMA_PATH = os.environ["GPUCHECKUP_SCHEMA"]
SOURCE_ROOT = os.environ.get("GPUCHECKUP_SOURCE_ROOT", ".")
BUILD_ROOT = os.environ.get("GPUCHECKUP_BUILD_ROOT", ".")

with open(SCHEMA_PATH, encoding="utf-8") as _f:
    SCHEMA = json.load(_f)
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


class Result:
    """What one run of gpucheckup produced."""

    def __init__(self, proc, args):
        self.args = args
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self._json = None

    @property
    def json(self):
        if self._json is None:
            self._json = json.loads(self.stdout)
            check_summary_marks(self._json)
            gctext.check_report(self._json)  # labels that name their stack, verdict lines in order
        return self._json

    def finding_ids(self):
        return sorted({f["id"] for f in self.json["findings"]})

    def findings(self, fid):
        return [f for f in self.json["findings"] if f["id"] == fid]

    def __repr__(self):
        return "gpucheckup %s -> rc=%d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(self.args), self.rc, self.stdout[-4000:], self.stderr[-4000:])


def _sanitized(binary):
    """True for an ASan build (tests/run-suite's second stage), whose own work runs several times slower."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "libasan" in out


SANITIZED = _sanitized(GPUCHECKUP)
# --timeout bounds the whole run (issue 17). A sanitizer build on a shared 2-core machine can spend
# the default 15 s on a healthy run (cuBLAS loads, PoCL builds, NEO, all instrumented), which would
# turn into timeouts the test did not ask for. There, a run that sets no --timeout gets this one, and
# a generous one (10 to 120 s, not a hang test's short bound) is scaled; others are left as given.
SANITIZED_DEFAULT_TIMEOUT = "90"
SANITIZED_SCALE = 3.0


def _timeout_args(args):
    if not SANITIZED:
        return list(args)
    out = list(args)
    for i, a in enumerate(out):
        v = None
        if a == "--timeout" and i + 1 < len(out):
            v, at = out[i + 1], i + 1
        elif a.startswith("--timeout="):
            v, at = a.split("=", 1)[1], i
        if v is not None:
            try:
                secs = float(v)
            except ValueError:
                return out  # a bad value is what the test checks
            if 10 <= secs <= 120:
                scaled = "%g" % (secs * SANITIZED_SCALE)
                out[at] = scaled if at != i else "--timeout=" + scaled
            return out
    if "--help" in out or "-h" in out:
        return out
    return ["--timeout", SANITIZED_DEFAULT_TIMEOUT, *out]


def run(*args, env=None, timeout=120, input=None):
    """Run gpucheckup with ARGS; ENV entries are added to (or, when None, removed from) the environment.
    In a sanitizer build, --timeout is widened (see SANITIZED_DEFAULT_TIMEOUT)."""
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    full = _timeout_args(args)
    proc = subprocess.run([GPUCHECKUP, *full], capture_output=True, text=True, env=e,
                          timeout=timeout * (SANITIZED_SCALE if SANITIZED else 1), input=input, errors="strict")
    return Result(proc, full)


# The x86-64 micro-architecture levels (the psABI's list), in /proc/cpuinfo's flag names. The kernel
# lists a feature only where the CPU reports it and the OS enabled its state, which is what gpucheckup's
# "usable" means: an oracle for tests on the live machine that does not go through gpucheckup's decoding.
# The kernel never lists OSXSAVE; it clears avx and the rest when it did not enable XSAVE, so "xsave"
# stands for it here.
X86_64_LEVELS = {
    2: ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"),
    3: ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"),
    4: ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}


def host_cpu_flags():
    """The live machine's CPU flags as the kernel lists them (/proc/cpuinfo, first processor)."""
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def host_x86_64_level(flags=None):
    """The highest x86-64 level whose every feature the live machine has (1 when it has not all of v2)."""
    flags = host_cpu_flags() if flags is None else flags
    level = 1
    for n in (2, 3, 4):
        if not all(f in flags for f in X86_64_LEVELS[n]):
            break
        level = n
    return level


def bus_gpus(doc):
    """The compute GPUs on the PCI bus of report DOC (its pci section), as the doctor counts them."""
    return [d for d in (doc.get("pci") or {}).get("devices") or [] if d.get("kind") == "compute-gpu"]


def absent_api_expectation(r, fid):
    """An API that is only absent (no loader, no ICD, no platform) stops no GPU where the bus has none: then
    finding FID is information and the run ready (rc 0); with a GPU on the bus it is an error (rc 1). Checks
    the finding and the exit code of result R against this machine's bus."""
    gpus = bus_gpus(r.json)
    sev = {f["severity"] for f in r.findings(fid)}
    want = ("error", 1) if gpus else ("info", 0)
    if sev != {want[0]} or r.rc != want[1]:
        raise AssertionError("%s: severities %s, rc %d; want %s with %d GPU(s) on the bus\n%r"
                             % (fid, sorted(sev), r.rc, want, len(gpus), r))
    if not gpus and not all("there is no GPU on this machine for it" in f["message"] for f in r.findings(fid)):
        raise AssertionError("%s: the message does not say why it is information\n%r" % (fid, r))


def validate(doc):
    """Raise if DOC does not follow the JSON Schema, or if a Summary line is marked worse than its findings."""
    VALIDATOR.validate(doc)
    check_summary_marks(doc)
    gctext.check_report(doc)


# Every report the suite reads (Result.json, validate) must have no Summary line marked worse than the
# worst finding it summarises (issue 35: "[FAIL] ROCm" above "ready (0 warnings)"). A section's lines
# summarise the findings its probe owns (the "probe" of each ID in --list-checks --json) and the run's
# core.* findings (a probe that failed or ran out of time), as report_marks_agree (src/report/report.c)
# caps them; with none of them, no line is worse than info (docs/formats.md, "Summary marks").
MARK_RANK = {"ok": 0, "info": 0, "skipped": 0, "warning": 1, "error": 2}
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
_OWNERS = None


def check_owners():
    """{finding ID: the probe that owns it}, as the binary's own catalogue says (--list-checks --json)."""
    global _OWNERS  # pylint: disable=global-statement
    if _OWNERS is None:
        proc = subprocess.run([GPUCHECKUP, "--list-checks", "--json"], capture_output=True, text=True,
                              timeout=60 * (SANITIZED_SCALE if SANITIZED else 1), check=True)
        _OWNERS = {c["id"]: c["probe"] for c in json.loads(proc.stdout)["checks"]}
    return _OWNERS


def summary_mark_disagreements(doc):
    """The Summary lines of report DOC marked worse than the worst finding they summarise, as sentences."""
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        return []
    owners = check_owners()
    worst, core = {}, 0
    for f in doc["findings"]:
        fid = f.get("id") or ""
        rank = SEVERITY_RANK.get(f.get("severity"), 0)
        if fid.startswith("core."):
            core = max(core, rank)
        probe = owners.get(fid, fid.split(".")[0])
        worst[probe] = max(worst.get(probe, 0), rank)
    out = []
    for name, sec in doc.items():
        if not isinstance(sec, dict) or not isinstance(sec.get("summary"), list):
            continue
        allowed = max(worst.get(name, 0), core)
        for line in sec["summary"]:
            if MARK_RANK.get(line.get("mark"), 0) > allowed:
                out.append("%s: [%s] %s %s, but its worst finding is %s" % (
                    name, line.get("mark"), line.get("label"), line.get("text"),
                    [k for k, v in SEVERITY_RANK.items() if v == allowed][0]))
    return out


def check_summary_marks(doc):
    """Raise AssertionError if a Summary line of report DOC is marked worse than the findings it summarises."""
    bad = summary_mark_disagreements(doc)
    if bad:
        raise AssertionError("Summary marks worse than their findings:\n  " + "\n  ".join(bad))


def assert_no_duplicate_keys(text):
    """Raise ValueError if any JSON object in TEXT repeats a key."""
    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate keys: %s" % keys)
        return dict(pairs)
    json.loads(text, object_pairs_hook=hook)


class Tree:
    """A fake host tree under a temp dir: files, directories and symlinks laid out as the kernel does."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="gc-tree-")

    def path(self, rel):
        return os.path.join(self.root, rel.lstrip("/"))

    def write(self, rel, content="", mode=None):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def mkdir(self, rel):
        os.makedirs(self.path(rel), exist_ok=True)
        return self.path(rel)

    def symlink(self, target, rel):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
        return p

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


class TestCase(unittest.TestCase):
    """Base class: run_json() runs gpucheckup --json and validates what comes back."""

    def run_json(self, *args, env=None, expect_rc=None, timeout=120):
        r = run("--json", *args, env=env, timeout=timeout)
        try:
            doc = r.json
        except ValueError as e:  # pragma: no cover - the assertion message is the point
            self.fail("not JSON: %s\n%r" % (e, r))
        try:
            validate(doc)
            assert_no_duplicate_keys(r.stdout)
        except Exception as e:  # noqa: BLE001
            self.fail("schema: %s\n%r" % (str(e)[:3000], r))
        try:
            gcscope.check_report(doc, GPUCHECKUP)  # reasons scoped to their API's vendor; causes that can cause
        except AssertionError as e:
            self.fail("%s\n%r" % (e, r))
        if expect_rc is not None:
            self.assertEqual(r.rc, expect_rc, repr(r))
        return r

    def make_tree(self):
        t = Tree()
        self.addCleanup(t.cleanup)
        return t


def main():
    unittest.main(verbosity=2)
