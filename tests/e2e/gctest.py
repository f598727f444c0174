"""gctest: helpers for gpucheckup's end-to-end tests (run the binary, validate JSON, build fake trees)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import jsonschema

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
        return self._json

    def finding_ids(self):
        return sorted({f["id"] for f in self.json["findings"]})

    def findings(self, fid):
        return [f for f in self.json["findings"] if f["id"] == fid]

    def __repr__(self):
        return "gpucheckup %s -> rc=%d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(self.args), self.rc, self.stdout[-4000:], self.stderr[-4000:])


def run(*args, env=None, timeout=120, input=None):
    """Run gpucheckup with ARGS; ENV entries are added to (or, when None, removed from) the environment."""
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    proc = subprocess.run([GPUCHECKUP, *args], capture_output=True, text=True, env=e, timeout=timeout,
                          input=input, errors="strict")
    return Result(proc, list(args))


def validate(doc):
    """Raise if DOC does not follow the JSON Schema."""
    VALIDATOR.validate(doc)


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
        if expect_rc is not None:
            self.assertEqual(r.rc, expect_rc, repr(r))
        return r

    def make_tree(self):
        t = Tree()
        self.addCleanup(t.cleanup)
        return t


def main():
    unittest.main(verbosity=2)
