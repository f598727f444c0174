"""End-to-end tests of `gpucheckup snapshot` and of replaying a snapshot with --root (issue 16)."""
import gzip
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pci"))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from test_pci import PciTree, config_space  # noqa: E402

TOP = "gpucheckup-snapshot/"
# Probes that need the live machine: under a snapshot their sections are the captured ones.
LIVE = ("cuda", "opencl", "smoke")
# The icd findings that come from loading drivers or from the run's environment (probes/icd/icd_replay.c).
ICD_CAPTURED = {"icd.load-failed", "icd.no-entry-point", "icd.no-platforms", "icd.rejected", "icd.error",
                "icd.crash", "icd.hang", "icd.conflict", "icd.insecure", "icd.loader-ignores-env",
                "icd.absent-hardware", "icd.missing-library"}


def owners():
    """Finding ID -> the probe (or core) that owns it, from --list-checks."""
    r = gctest.run("--list-checks", "--json")
    return {c["id"]: c["probe"] for c in r.json["checks"]}


def key(f):
    return (f["id"], f["subject"] or "", f["severity"], f["message"])


def tar_bytes(path):
    with open(path, "rb") as f:
        return gzip.decompress(f.read())


class Base(gctest.TestCase):
    def setUp(self):
        # a private TMPDIR: what the replay unpacks must be gone when it ends
        self.tmp = tempfile.mkdtemp(prefix="gc-snap-")
        self.addCleanup(subprocess.run, ["rm", "-rf", self.tmp])
        self.env = {"TMPDIR": self.tmp}

    def out(self, name):
        return os.path.join(self.tmp, name)

    def leftovers(self):
        return [n for n in os.listdir(self.tmp) if n.startswith("gpucheckup-")]

    def snapshot(self, *args, expect_ok=True):
        path = self.out("snap-%d.tar.gz" % len(os.listdir(self.tmp)))
        r = gctest.run("snapshot", "-o", path, "--json", *args, env=self.env, timeout=300)
        if expect_ok:
            self.assertIn(r.rc, (0, 1), repr(r))
            gctest.validate(r.json)
            self.assertTrue(os.path.isfile(path), repr(r))
        return path, r


class LiveSnapshot(Base):
    """A snapshot of this machine, replayed."""

    @classmethod
    def setUpClass(cls):
        cls.owner = owners()

    def test_replay_gives_the_same_findings(self):
        path, live = self.snapshot("--no-smoke")
        with tarfile.open(path) as t:
            names = t.getnames()
            manifest = json.load(t.extractfile(TOP + "manifest.json"))
            captured = json.load(t.extractfile(TOP + "report.json"))
        for n in ("manifest.json", "report.json", "cpuid.dump"):
            self.assertIn(TOP + n, names)
        self.assertEqual(manifest["format"], "gpucheckup-snapshot")
        self.assertEqual(manifest["format_version"], 1)
        self.assertTrue(manifest["redacted"])
        # every .icd file the run read, and the PCI config space of every device libpci reads
        for icd in live.json["icd"]["icds"]:
            if icd["file"]:
                self.assertTrue(any(n.endswith("/tree" + icd["file"]) or n.endswith(icd["file"]) for n in names),
                                icd["file"])
        # (the suite's machines may have no GPU: every PCI function of this machine, then)
        bus = "/sys/bus/pci/devices"
        for addr in (os.listdir(bus) if os.path.isdir(bus) else []):
            self.assertTrue(any(n.endswith("/%s/config" % addr) for n in names), addr)
        self.assertTrue(manifest["libraries"] == [] or all(".so" in x["path"] for x in manifest["libraries"]))

        r = self.run_json("--root", path, env=self.env)
        self.assertEqual(self.leftovers(), [], "the unpacked snapshot was not removed")
        self.assertFalse(r.json["host"]["live"])
        self.assertEqual(r.json["host"]["snapshot"]["path"], path)
        # cpu, pci and the icd file checks ran again: exactly the live findings
        def rerun(doc):
            return sorted(key(f) for f in doc["findings"]
                          if self.owner.get(f["id"]) in ("cpu", "pci")
                          or (self.owner.get(f["id"]) == "icd" and f["id"] not in ICD_CAPTURED))
        self.assertEqual(rerun(r.json), rerun(live.json))
        self.assertFalse(any(f.get("captured") for f in r.json["findings"]
                             if self.owner.get(f["id"]) in ("cpu", "pci")))
        # everything else is the captured result, marked so
        for f in r.json["findings"]:
            o = self.owner.get(f["id"])
            if o in LIVE or f["id"] in ICD_CAPTURED:
                self.assertTrue(f.get("captured"), f)
        self.assertEqual(sorted(key(f) for f in r.json["findings"]), sorted(key(f) for f in captured["findings"]))
        for name in LIVE:
            self.assertTrue(r.json[name].get("captured"), name)
            self.assertEqual(r.json[name]["status"], live.json[name]["status"], name)
        for name in ("cpu", "pci", "icd"):
            self.assertNotIn("captured", r.json[name], name)
            self.assertEqual(r.json[name]["status"], "ok", name)
        self.assertEqual(r.json["cpu"]["x86_64_level"] if "x86_64_level" in r.json["cpu"] else None,
                         live.json["cpu"].get("x86_64_level"))
        self.assertEqual(r.json["verdict"]["ready"], live.json["verdict"]["ready"])

        # the text marks what was not run here
        t = gctest.run("--root", path, env=self.env)
        self.assertIn(t.rc, (0, 1), repr(t))
        self.assertIn("Replaying the snapshot", t.stdout)
        self.assertIn("[captured]", t.stdout)
        for line in t.stdout.splitlines():
            if line.strip().startswith("[") and " CPU " in line:
                self.assertNotIn("[captured]", line)

    def test_replayed_sections_print_as_captured(self):
        """Issue 38: a replayed section is read into its typed result (opencl, cuda, ...) and printed from it:
        the same members in the same order with the same values as the capture, only the replay's mark added."""
        path, _ = self.snapshot("--no-smoke")
        with tarfile.open(path) as t:
            captured = json.load(t.extractfile(TOP + "report.json"))
        r = self.run_json("--root", path, env=self.env)
        replayed = [n for n, v in r.json.items() if isinstance(v, dict) and v.get("captured")]
        self.assertIn("opencl", replayed)
        self.assertIn("cuda", replayed)
        for name in replayed:
            got = {k: v for k, v in r.json[name].items() if k not in ("captured", "duration_ms")}
            want = {k: v for k, v in captured[name].items() if k != "duration_ms"}
            self.assertEqual(json.dumps(got), json.dumps(want), name)  # order too: dumps keeps it
        # cpu runs again on the captured CPUID dump, through its typed result: the same facts as the capture
        for k in ("architecture", "x86_64_level", "flags"):
            self.assertEqual(json.dumps(r.json["cpu"][k]), json.dumps(captured["cpu"][k]), k)

    def test_icd_file_checks_replay_where_the_run_looked(self):
        """.icd files in OCL_ICD_VENDORS: the replay reads them from the tree, under the captured environment."""
        vend = self.out("vendors")
        os.mkdir(vend)
        with open(os.path.join(vend, "broken.icd"), "wb") as f:
            f.write(b"lib\x01\x02garbage\n")
        open(os.path.join(vend, "empty.icd"), "w").close()
        with open(os.path.join(vend, "missing.icd"), "w") as f:
            f.write("libgc-no-such-driver.so\n")
        if os.path.exists("/etc/OpenCL/vendors/pocl.icd"):
            with open("/etc/OpenCL/vendors/pocl.icd") as src, open(os.path.join(vend, "pocl.icd"), "w") as dst:
                dst.write(src.read())
        env = dict(self.env, OCL_ICD_VENDORS=vend)
        path = self.out("icd.tar.gz")
        live = gctest.run("snapshot", "-o", path, "--json", "--no-smoke", env=env, timeout=300)
        self.assertIn(live.rc, (0, 1), repr(live))
        r = self.run_json("--root", path, env=self.env)  # not this process's OCL_ICD_VENDORS
        def files(doc):
            return sorted(key(f) for f in doc["findings"] if f["id"] in ("icd.malformed", "icd.unreadable"))
        self.assertEqual(len(files(live.json)), 2, repr(live))
        self.assertEqual(files(r.json), files(live.json))
        self.assertFalse(any(f.get("captured") for f in r.json["findings"] if f["id"] == "icd.malformed"))
        self.assertEqual(r.json["icd"]["vendors_dir"], vend)
        # each library is found again in the tree, where the live run found it
        want = {e["file"]: e["resolved"] for e in live.json["icd"]["icds"]}
        got = {e["file"]: e["resolved"] for e in r.json["icd"]["icds"]}
        self.assertEqual(got, want)
        self.assertEqual(sorted(key(f) for f in r.json["findings"]), sorted(key(f) for f in live.json["findings"]))

    def test_unpacked_directory_replays_too(self):
        path, _ = self.snapshot("--no-smoke")
        d = self.out("unpacked")
        os.mkdir(d)
        with tarfile.open(path) as t:
            t.extractall(d)
        a = self.run_json("--root", path, env=self.env)
        for root in (d, os.path.join(d, "gpucheckup-snapshot")):
            b = self.run_json("--root", root, env=self.env)
            self.assertEqual(sorted(key(f) for f in a.json["findings"]),
                             sorted(key(f) for f in b.json["findings"]), root)
            self.assertEqual(b.json["host"]["snapshot"]["path"], root)

    def test_snapshot_needs_a_file(self):
        for args in ((), ("-o", "-")):
            r = gctest.run("snapshot", "--json", *args, env=self.env)
            self.assertEqual(r.rc, 2, repr(r))
            gctest.validate(r.json)
            self.assertIn("-o FILE.tar.gz", r.json["error"]["message"])

    def test_output_directory_missing_is_usage(self):
        r = gctest.run("snapshot", "-o", self.out("nowhere/s.tar.gz"), "--json", env=self.env)
        self.assertEqual(r.rc, 2, repr(r))
        gctest.validate(r.json)


# Secrets the fake tree holds where the probes read them.
HOST = "secrethost-42"
USER = "alice-sekrit"
HOME_USER = "carolhome"
MAC = "de:ad:be:ef:12:34"
DSN = struct.pack("<Q", 0x1122334455667788)


def dsn_config(vendor, device, cls):
    """A 4 KiB configuration space with a Device Serial Number extended capability at 0x100."""
    c = bytearray(config_space(vendor, device, cls, size=4096))
    struct.pack_into("<I", c, 0x100, 0x0003 | 1 << 16)  # ID 3, version 1, no next capability
    c[0x104:0x10c] = DSN
    return bytes(c)


class Redaction(Base):
    def fake_tree(self):
        p = PciTree(self.make_tree())
        p.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia", config=dsn_config(0x10de, 0x2204, 0x0300))
        p.module("nvidia", 1)
        p.node("/dev/nvidia0", 0o660, gid=44)
        p.node("/dev/nvidiactl", 0o660, gid=44)
        p.t.write("/proc/sys/kernel/hostname", HOST + "\n")
        p.t.write("/etc/hostname", HOST + ".example.org\n")
        p.t.write("/etc/group", "root:x:0:\nvideo:x:44:%s,bob2\nrender:x:105:\n" % USER)
        p.t.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro hwaddr=%s home=/home/%s/x\n" % (MAC.upper(), HOME_USER))
        return p.t

    def test_secrets_never_reach_the_tarball(self):
        tree = self.fake_tree()
        kept, r = self.snapshot("--root", tree.root, "--no-redact")
        raw = tar_bytes(kept)
        # the fake tree's secrets are where the probes read them: a redaction test that can fail
        for secret in (HOST.encode(), USER.encode(), MAC.upper().encode(), HOME_USER.encode(), DSN):
            self.assertIn(secret, raw, secret)
        path, r = self.snapshot("--root", tree.root)
        raw = tar_bytes(path)
        for secret in (HOST.encode(), USER.encode(), MAC.encode(), MAC.upper().encode(), HOME_USER.encode(), DSN,
                       b"bob2"):
            self.assertNotIn(secret, raw, secret)
        self.assertIn(b"redacted-host-1", raw)
        self.assertIn(b"02:00:00:00:00:01", raw)
        with tarfile.open(path) as t:
            m = json.load(t.extractfile(TOP + "manifest.json"))
        self.assertTrue(m["redacted"])
        self.assertGreaterEqual(m["redactions"]["host"], 1)
        self.assertGreaterEqual(m["redactions"]["user"], 2)
        self.assertGreaterEqual(m["redactions"]["mac"], 1)
        # the redacted snapshot replays: same PCI findings as the tree itself
        a = self.run_json("pci", "--root", tree.root, env=self.env)
        b = self.run_json("pci", "--root", path, env=self.env)
        self.assertEqual(sorted((f["id"], f["subject"]) for f in a.json["findings"]),
                         sorted((f["id"], f["subject"]) for f in b.json["findings"]))
        self.assertEqual(b.json["host"]["hostname"], "redacted-host-1")

    def test_fixture_from_a_snapshot(self):
        import snapshot2fixture
        tree = self.fake_tree()
        path, _ = self.snapshot("--root", tree.root)
        dest = self.out("fixtures")
        os.mkdir(dest)
        with open(os.devnull, "w") as null:
            old, sys.stdout = sys.stdout, null
            try:
                self.assertEqual(snapshot2fixture.main([path, "fake", "--dest", dest]), 0)
            finally:
                sys.stdout = old
        fx = os.path.join(dest, "fake")
        for n in ("tree.tar.gz", "SOURCE", "EXPECTED-pci.json"):
            self.assertTrue(os.path.isfile(os.path.join(fx, n)), n)
        with open(os.path.join(fx, "EXPECTED-pci.json")) as f:
            want = json.load(f)
        self.assertIn("pci", want)
        self.assertEqual(want["pci"]["status"], "ok")
        self.assertTrue(any(d["address"] == "0000:01:00.0" for d in want["pci"]["devices"]))
        with open(os.path.join(fx, "SOURCE")) as f:
            self.assertIn("redacted", f.read())


def tarball(path, members, gz=True):
    """Write a tarball of MEMBERS: (name, kind, payload) with kind file/dir/sym/hard/huge."""
    with tarfile.open(path, "w:gz" if gz else "w") as t:
        for name, kind, payload in members:
            ti = tarfile.TarInfo(name)
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            elif kind in ("sym", "hard"):
                ti.type = tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE
                ti.linkname = payload
                t.addfile(ti)
            elif kind == "huge":
                ti.size = payload
                t.addfile(ti, io.BytesIO(bytes(payload)))
            else:
                data = payload.encode() if isinstance(payload, str) else payload
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))


GOOD = [(TOP + "manifest.json", "file", '{"format": "gpucheckup-snapshot", "format_version": 1}'),
        (TOP + "report.json", "file", "{}"), (TOP + "tree", "dir", None)]


class BadTarballs(Base):
    def bad(self, path, words):
        for json_mode in (True, False):
            args = ("--json",) if json_mode else ()
            r = gctest.run("--root", path, *args, env=self.env)
            self.assertEqual(r.rc, 2, repr(r))
            self.assertGreaterEqual(r.rc, 0, "killed by a signal: %r" % r)
            self.assertIn(path, r.stderr, repr(r))
            for w in words:
                self.assertIn(w, r.stderr, repr(r))
            if json_mode:
                gctest.validate(r.json)
                self.assertEqual(r.json["error"]["kind"], "usage")
                self.assertIn(path, r.json["error"]["message"])
        self.assertEqual(self.leftovers(), [], "a temporary directory was left behind")

    def test_garbage(self):
        p = self.out("garbage.tar.gz")
        with open(p, "wb") as f:
            f.write(os.urandom(4096))
        self.bad(p, ["Not a directory, nor a gpucheckup snapshot"])

    def test_empty_file(self):
        p = self.out("empty.tar.gz")
        open(p, "w").close()
        self.bad(p, ["snapshot"])

    def test_truncated(self):
        tree = self.make_tree()
        PciTree(tree).device("0000:00:02.0", 0x8086, 0x1234, 0x030000)
        good, _ = self.snapshot("--root", tree.root)
        with open(good, "rb") as f:
            data = f.read()
        p = self.out("truncated.tar.gz")
        with open(p, "wb") as f:
            f.write(data[: len(data) // 2])
        self.bad(p, [])

    def test_path_traversal(self):
        for i, name in enumerate((TOP + "../escaped", "/tmp/gc-escaped-abs", "other/manifest.json",
                                  TOP + "tree/./x")):
            p = self.out("traversal%d.tar.gz" % i)
            tarball(p, GOOD + [(name, "file", "x")])
            self.bad(p, ["outside"])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escaped")))
        self.assertFalse(os.path.exists("/tmp/gc-escaped-abs"))

    def test_symlink_escape(self):
        p = self.out("symlink.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/etc", "sym", "../../../../../etc")])
        self.bad(p, ["symbolic link"])
        # ".." after a name: where the name leads decides where ".." goes
        p = self.out("dotdot.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/a/b", "sym", "c/../../x")])
        self.bad(p, ["symbolic link"])
        # libpci follows /sys links by their real path: an absolute one would read this machine's bus
        p = self.out("abs-sys.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/sys/bus", "sym", "/sys/bus")])
        self.bad(p, ["symbolic link"])
        # a link, then a file written through it
        p = self.out("through.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/d", "sym", "x"), (TOP + "tree/d/f", "file", "y")])
        self.bad(p, [])

    def test_hard_link_and_device(self):
        p = self.out("hard.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/h", "hard", TOP + "report.json")])
        self.bad(p, ["hard link"])

    def test_huge_member(self):
        p = self.out("huge.tar.gz")
        tarball(p, GOOD + [(TOP + "tree/big", "huge", 17 * 1024 * 1024)])
        self.bad(p, ["larger than 16 MiB"])

    def test_not_a_snapshot(self):
        p = self.out("nomanifest.tar.gz")
        tarball(p, [(TOP + "tree", "dir", None), (TOP + "tree/x", "file", "x")])
        self.bad(p, ["manifest.json"])
        p = self.out("newer.tar.gz")
        tarball(p, [(TOP + "manifest.json", "file", '{"format": "gpucheckup-snapshot", "format_version": 99}'),
                    (TOP + "report.json", "file", "{}"), (TOP + "tree", "dir", None)])
        self.bad(p, ["version 99"])
        p = self.out("noreport.tar.gz")
        tarball(p, [GOOD[0], GOOD[2]])
        self.bad(p, ["report.json"])

    def test_minimal_snapshot_replays(self):
        """The smallest valid snapshot: live sections absent from its report are skipped, not invented."""
        p = self.out("minimal.tar.gz")
        tarball(p, GOOD)
        r = self.run_json("--root", p, env=self.env)
        self.assertIn(r.rc, (0, 1))
        for name in LIVE:
            self.assertEqual(r.json[name]["status"], "skipped", name)
            self.assertNotIn("captured", r.json[name])
        self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    gctest.main()
