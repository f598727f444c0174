"""The bad-input matrix, through the binary: every option value and input file gpucheckup can be
handed in a bad shape, and fake /sys, /proc and /etc trees full of loops, dangling links and
garbage. Each case asserts a message naming the option or file, the documented exit code (2 for a
usage or input error), a schema-valid JSON error document when --json was asked, and no crash
(no signal, no sanitizer report)."""
import json
import os
import shutil
import stat
import subprocess
import tempfile

import gctest

# Runs as "nobody" for the unreadable cases: root reads anything, so it cannot test them itself.
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
SANITIZER_WORDS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:")
HUGE = "9" * 4000  # a value far beyond every limit, and longer than a file name may be
BIG = 100 * 1024 * 1024


def run_raw(args, prefix=(), cwd=None, timeout=120):
    """gpucheckup ARGS (after PREFIX, e.g. setpriv), without gctest's text decoding (the output of a
    broken run may not be UTF-8: that is one of the things checked)."""
    proc = subprocess.run([*prefix, gctest.GPUCHECKUP, *args], capture_output=True, cwd=cwd, timeout=timeout)
    return proc


class BadInputCase(gctest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gc-bad-")
        os.chmod(self.dir, 0o755)  # nobody must reach the files it is meant to be refused
        self.addCleanup(self._cleanup)

    def _cleanup(self):
        for dirpath, dirnames, _ in os.walk(self.dir):
            for d in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, d), 0o755)
                except OSError:
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- fixtures ----

    def path(self, name):
        return os.path.join(self.dir, name)

    def make(self, name, kind):
        """A file NAME of KIND: dir, empty, garbage, big (100 MB, sparse), missing, unreadable,
        loop (a symlink to itself), dangling (a symlink to nothing)."""
        p = self.path(name)
        if kind == "dir":
            os.mkdir(p)
        elif kind == "empty":
            open(p, "wb").close()
        elif kind == "garbage":
            with open(p, "wb") as f:
                f.write(bytes(range(256)) * 16 + b"\xff\xfe\x00\x01" * 1024)
        elif kind == "big":
            with open(p, "wb") as f:
                f.truncate(BIG)
        elif kind == "unreadable":
            with open(p, "w") as f:
                f.write("basic_cpuid[0]=0000000d 68747541 444d4163 69746e65\n")
            os.chmod(p, 0)
        elif kind == "loop":
            os.symlink(name, p)
        elif kind == "dangling":
            os.symlink(self.path("nothing-here"), p)
        elif kind != "missing":
            raise ValueError(kind)
        return p

    # ---- assertions ----

    def assert_no_crash(self, proc, what):
        self.assertGreaterEqual(proc.returncode, 0, "%s: killed by signal %d" % (what, -proc.returncode))
        err = proc.stderr.decode("utf-8", "replace")
        for word in SANITIZER_WORDS:
            self.assertNotIn(word, err, "%s: sanitizer report:\n%s" % (what, err[-3000:]))

    def assert_refused(self, args, words, rc=2, prefix=(), cwd=None, kinds=("usage", "input")):
        """ARGS fail with exit RC, naming every one of WORDS on stderr, in text and in JSON."""
        what = " ".join(os.fsdecode(a) for a in args)[:200]
        proc = run_raw(args, prefix, cwd)
        self.assert_no_crash(proc, what)
        self.assertEqual(proc.returncode, rc, "%s: %r" % (what, proc.stderr[-2000:]))
        err = proc.stderr.decode("utf-8")  # our own message: valid UTF-8 whatever the input was
        self.assertTrue(err.startswith("gpucheckup: "), "%s: %r" % (what, err))
        for w in words:
            self.assertIn(w, err, what)
        self.assertEqual(proc.stdout, b"", what)

        proc = run_raw(["--json", *args], prefix, cwd)
        self.assert_no_crash(proc, "--json " + what)
        self.assertEqual(proc.returncode, rc, what)
        doc = json.loads(proc.stdout.decode("utf-8"))
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(proc.stdout.decode("utf-8"))
        self.assertIn(doc["error"]["kind"], kinds, what)
        self.assertEqual(doc["error"]["exit_code"], rc, what)
        for w in words:
            self.assertIn(w, doc["error"]["message"], what)
        self.assertIn(doc["error"]["message"], proc.stderr.decode("utf-8"), what)
        return doc

    def assert_report(self, args, prefix=(), cwd=None, timeout=120):
        """ARGS give a report (exit 0 or 1), schema-valid as JSON. Returns the document."""
        what = " ".join(args)[:200]
        proc = run_raw(["--json", *args], prefix, cwd, timeout)
        self.assert_no_crash(proc, what)
        self.assertIn(proc.returncode, (0, 1), "%s: %r" % (what, proc.stderr[-2000:]))
        text = proc.stdout.decode("utf-8")
        doc = json.loads(text)
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(text)
        self.assertEqual(doc["verdict"]["exit_code"], proc.returncode)
        return doc


class OptionValueTests(BadInputCase):
    """Every option that takes a value: empty, negative, huge and non-numeric values."""

    # option -> (command it applies to, words its refusal must contain besides the option)
    NUMERIC = {
        "--timeout": "seconds",
        "--smoke-size": "whole number",
        "--device": "P or P:D",
    }
    CHOICES = {
        "--format": "text, json, junit, prometheus, nfd or github",
        "--color": "auto, always, never",
        "--colour": "auto, always, never",  # named "--color" in the message: one option, two spellings
        "--smoke": "all, gpu, none",
    }

    def test_numeric_options(self):
        for opt, words in self.NUMERIC.items():
            for value in ("", "-1", "-0.5", HUGE, "1e999", "abc", "12abc", " ", "nan", "inf", "0x", "1:2:3"):
                with self.subTest(opt=opt, value=value[:20]):
                    self.assert_refused(["%s=%s" % (opt, value), "cpu"], [opt.replace("colour", "color"), words])
            with self.subTest(opt=opt, form="separate negative value"):
                # getopt takes the next word as the value even when it starts with '-'
                self.assert_refused([opt, "-5", "cpu"], [opt, "'-5'"])
            with self.subTest(opt=opt, form="no value at all"):
                self.assert_refused(["cpu", opt], [opt, "missing value"])
        # limits: zero and just past the top are refused, the top itself is fine
        self.assert_refused(["--timeout=0", "cpu"], ["--timeout", "'0'"])
        self.assert_refused(["--timeout=3600.001", "cpu"], ["--timeout", "3600"])
        self.assert_refused(["--smoke-size=0", "cpu"], ["--smoke-size", "'0'"])
        self.assert_refused(["--smoke-size=4097", "cpu"], ["--smoke-size", "4096"])
        self.assert_refused(["--device=65536", "cpu"], ["--device", "65536"])
        self.assert_refused(["--device=0:-1", "cpu"], ["--device", "0:-1"])
        self.assert_report(["--timeout=3600", "--smoke-size=4096", "--device=65535:65535", "cpu"])

    def test_choice_options(self):
        for opt, words in self.CHOICES.items():
            for value in ("", "-1", HUGE, "JSON", "yes", "all,gpu"):
                with self.subTest(opt=opt, value=value[:20]):
                    self.assert_refused(["%s=%s" % (opt, value), "cpu"], [opt.replace("colour", "color"), words])

    def test_require(self):
        for value in ("", ",", " , ", "-1", HUGE, "abc", "gpus>=-1", "gpus>=" + HUGE, "gpus>=abc", "gpus>=",
                      "opencl-version>=abc", "opencl-version>=1e9", "x86-64-v9", "avx,-1"):
            with self.subTest(value=value[:20]):
                self.assert_refused(["--require=" + value, "cpu"], ["--require"])

    def test_file_name_options_empty(self):
        for opt in ("--output", "--root", "--cpuid-dump", "--pci-dump", "--save-cpuid"):
            with self.subTest(opt=opt):
                self.assert_refused([opt + "=", "cpu"], [opt, "empty"])

    def test_file_name_options_huge(self):
        # A name longer than any file name can be: ENAMETOOLONG, named, before or instead of the run.
        name = "a" * 5000
        self.assert_refused(["--root=" + name, "cpu"], ["--root", "File name too long"])
        self.assert_refused(["--cpuid-dump=" + name, "cpu"], ["--cpuid-dump", "File name too long"])
        self.assert_refused(["--pci-dump=" + name, "pci"], ["--pci-dump", "File name too long"])
        self.assert_refused(["--output=" + name, "cpu"], ["--output", "longer than"], cwd=self.dir)
        self.assert_refused(["--save-cpuid=" + name, "cpu"], ["--save-cpuid", "too long"], cwd=self.dir)
        self.assertEqual(os.listdir(self.dir), [], "a temp file was left behind")

    def test_file_name_options_negative_and_text(self):
        # "-1" is a file name like any other: refused where it must exist, written where it is made.
        self.assert_refused(["--root=-1", "cpu"], ["--root -1", "No such file"], cwd=self.dir)
        self.assert_refused(["--cpuid-dump=-1", "cpu"], ["--cpuid-dump -1", "No such file"], cwd=self.dir)
        self.assert_refused(["--pci-dump=-1", "pci"], ["--pci-dump -1", "No such file"], cwd=self.dir)
        proc = run_raw(["--json", "--output=-1", "cpu"], cwd=self.dir)
        self.assert_no_crash(proc, "--output=-1")
        self.assertIn(proc.returncode, (0, 1))
        with open(self.path("-1")) as f:
            gctest.validate(json.load(f))

    def test_prop_accepts_any_text(self):
        # --prop is a filter, not a number: any text is fine, and none of it reaches the output raw.
        for value in ("", "-1", HUGE, "abc", "\x1b[31m", "%s%n%s"):
            with self.subTest(value=value[:20]):
                self.assert_report(["--prop=" + value, "opencl"])

    def test_unknown_options_and_commands(self):
        self.assert_refused(["--timeout-s=5"], ["--timeout-s"])
        self.assert_refused(["-Z"], ["-Z"])
        self.assert_refused(["cpu", "pci"], ["pci", "cpu"])
        self.assert_refused([HUGE], ["unknown command", "'" + HUGE[:64] + "...'"])
        self.assert_refused(["--" + HUGE], ["unknown option", "'--" + HUGE[:62] + "...'"])
        # raw bytes that are not UTF-8 (and a terminal escape) come back sanitised, on stderr too
        self.assert_refused([b"\xff\xfe\x1b[2J"], ["unknown command '???[2J'"])
        self.assert_refused([b"--root=/nonexistent/\xff\x07", "cpu"], ["--root /nonexistent/??", "No such file"])


class InputFileTests(BadInputCase):
    """--cpuid-dump, --pci-dump, --root, --output and --save-cpuid given files in every bad shape."""

    # kind -> words the refusal names, per option (None: not an error for that option)
    CPUID = {
        "dir": "is a directory", "empty": "empty", "garbage": "NUL bytes", "big": "too large",
        "missing": "No such file", "loop": "Too many levels of symbolic links", "dangling": "No such file",
    }
    PCI = {
        "dir": "is a directory", "empty": "no device found", "garbage": "not a usable lspci -x dump",
        "big": "too large", "missing": "No such file", "loop": "Too many levels of symbolic links",
        "dangling": "No such file",
    }
    ROOT = {
        "empty": "Not a directory", "garbage": "Not a directory", "big": "Not a directory",
        "missing": "No such file", "loop": "Too many levels of symbolic links", "dangling": "No such file",
    }

    def check_kinds(self, opt, command, table):
        for kind, words in table.items():
            with self.subTest(opt=opt, kind=kind):
                p = self.make("%s-%s" % (opt.strip("-"), kind), kind)
                self.assert_refused(["%s=%s" % (opt, p), command], ["%s %s" % (opt, p), words])

    def test_cpuid_dump(self):
        self.check_kinds("--cpuid-dump", "cpu", self.CPUID)

    def test_pci_dump(self):
        self.check_kinds("--pci-dump", "pci", self.PCI)

    def test_root(self):
        self.check_kinds("--root", "cpu", self.ROOT)

    def test_unreadable_as_nobody(self):
        dump = self.make("dump", "unreadable")
        locked = self.make("locked", "dir")
        os.chmod(locked, 0)
        self.assert_refused(["--cpuid-dump=" + dump, "cpu"], ["--cpuid-dump " + dump, "Permission denied"],
                            prefix=AS_NOBODY)
        self.assert_refused(["--pci-dump=" + dump, "pci"], ["--pci-dump " + dump, "Permission denied"],
                            prefix=AS_NOBODY)
        self.assert_refused(["--root=" + locked, "cpu"], ["--root " + locked, "Permission denied"],
                            prefix=AS_NOBODY)
        self.assert_refused(["--output=" + locked + "/report.json", "cpu"],
                            ["--output " + locked + "/report.json", "not writable"], prefix=AS_NOBODY)
        self.assert_refused(["--save-cpuid=" + locked + "/cpu.dump", "cpu"],
                            ["--save-cpuid " + locked + "/cpu.dump", "Permission denied"], prefix=AS_NOBODY)
        # root is not refused what the mode bits refuse nobody: it reads the (incomplete) dump
        proc = run_raw(["--cpuid-dump=" + dump, "cpu"])
        self.assertEqual(proc.returncode, 2)
        self.assertNotIn(b"Permission denied", proc.stderr)
        self.assertIn(b"basic_cpuid[1]", proc.stderr)

    def test_output_refused(self):
        for kind, words in (("dir", "is a directory"), ("loop", "Too many levels of symbolic links"),
                            ("dangling", "symbolic link to nothing")):
            with self.subTest(kind=kind):
                p = self.make("out-" + kind, kind)
                self.assert_refused(["--output=" + p, "cpu"], ["--output " + p, words])
        missing_dir = self.path("no-such-dir") + "/report.json"
        self.assert_refused(["--output=" + missing_dir, "cpu"], ["--output " + missing_dir, "No such file"])
        file_as_dir = self.make("plain", "empty") + "/report.json"
        self.assert_refused(["--output=" + file_as_dir, "cpu"], ["--output " + file_as_dir, "not a directory"])
        # nothing was created on the way
        self.assertFalse(os.path.exists(self.path("nothing-here")))
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith(".gpucheckup")), [])

    def test_output_replaces_any_old_content(self):
        # empty, garbage, 100 MB and unreadable old files are replaced whole by a valid report
        for kind in ("empty", "garbage", "big", "unreadable", "missing"):
            with self.subTest(kind=kind):
                p = self.make("report-" + kind, kind)
                proc = run_raw(["--json", "--output=" + p, "cpu"])
                self.assert_no_crash(proc, kind)
                self.assertIn(proc.returncode, (0, 1), proc.stderr)
                self.assertEqual(proc.stdout, b"")
                self.assertLess(os.path.getsize(p), 1024 * 1024)
                with open(p) as f:
                    gctest.validate(json.load(f))
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith(".gpucheckup")), [])

    def test_output_through_links_and_devices(self):
        # a symlink to a file: the file is replaced and the link stays a link
        target = self.make("real.json", "garbage")
        link = self.path("link.json")
        os.symlink("real.json", link)
        self.assertIn(run_raw(["--json", "-o", link, "cpu"]).returncode, (0, 1))
        self.assertTrue(os.path.islink(link))
        with open(target) as f:
            gctest.validate(json.load(f))
        # a device is written in place, not replaced (as root, renaming over /dev/null would replace it)
        st = os.stat("/dev/null")
        self.assertIn(run_raw(["-o", "/dev/null", "cpu"]).returncode, (0, 1))
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        self.assertEqual(os.stat("/dev/null").st_ino, st.st_ino)
        # a FIFO: the reader gets the report, the FIFO stays a FIFO
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        try:
            proc = run_raw(["--json", "-o", fifo, "cpu"], timeout=60)
            out, _ = reader.communicate(timeout=60)
        finally:
            if reader.poll() is None:
                reader.kill()
                reader.wait()
        self.assertIn(proc.returncode, (0, 1))
        gctest.validate(json.loads(out))
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        # a link to stdout (what /dev/stdout is) writes to stdout, and stays a link
        out_link = self.path("stdout")
        os.symlink("/proc/self/fd/1", out_link)
        proc = run_raw(["--json", "-o", out_link, "cpu"])
        self.assertIn(proc.returncode, (0, 1))
        gctest.validate(json.loads(proc.stdout))
        self.assertTrue(os.path.islink(out_link))

    def test_save_cpuid_refused(self):
        for kind, words in (("dir", "is a directory"), ("loop", "Too many levels of symbolic links")):
            with self.subTest(kind=kind):
                p = self.make("save-" + kind, kind)
                self.assert_refused(["--save-cpuid=" + p, "cpu"], ["--save-cpuid " + p, words])
        fifo = self.path("save-fifo")
        os.mkfifo(fifo)
        self.assert_refused(["--save-cpuid=" + fifo, "cpu"], ["--save-cpuid " + fifo, "not a regular file"])
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        missing_dir = self.path("no-such-dir") + "/cpu.dump"
        self.assert_refused(["--save-cpuid=" + missing_dir, "cpu"], ["--save-cpuid " + missing_dir, "No such file"])
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith(".gpucheckup")), [])


class FakeTreeTests(BadInputCase):
    """--root trees whose files are loops, dangling links, directories, garbage or huge."""

    GPU = "0000:03:00.0"

    def tree(self):
        t = self.make_tree()
        os.chmod(t.root, 0o755)
        d = "/sys/devices/pci0000:00/" + self.GPU
        t.write(d + "/vendor", "0x10de\n")
        t.write(d + "/device", "0x2204\n")
        t.write(d + "/class", "0x030000\n")
        t.write(d + "/config", b"\xde\x10\x04\x22" + b"\0" * 60)
        t.symlink("../../../devices/pci0000:00/" + self.GPU, "/sys/bus/pci/devices/" + self.GPU)
        return t, d

    def test_symlink_loops_and_dangling_links(self):
        t, d = self.tree()
        # PCI devices that are loops or lead nowhere, and a GPU whose own files are
        t.symlink("0000:01:00.0", "/sys/bus/pci/devices/0000:01:00.0")
        t.symlink("../../../devices/pci0000:00/0000:02:00.0", "/sys/bus/pci/devices/0000:02:00.0")
        t.symlink("../../../bus/pci/drivers/nvidia", d + "/driver")
        t.symlink("current_link_speed", d + "/current_link_speed")
        t.symlink("max_link_speed_b", d + "/max_link_speed")
        t.symlink("max_link_speed", d + "/max_link_speed_b")
        t.symlink("/nonexistent", d + "/current_link_width")
        t.symlink("drm", d + "/drm")
        t.symlink("numa_node", d + "/numa_node")
        # the kernel side, the CPU, the host and the OpenCL vendors
        t.symlink("cpuinfo", "/proc/cpuinfo")
        t.symlink("/nonexistent", "/proc/modules")
        t.symlink("nvidia", "/sys/module/nvidia")
        t.symlink("version", "/proc/driver/nvidia/version")
        t.symlink("/dev/dri/nothing", "/dev/dri/renderD128")
        t.symlink("nvidiactl", "/dev/nvidiactl")
        t.symlink("os-release", "/etc/os-release")
        t.symlink("group", "/etc/group")
        t.symlink("hostname", "/proc/sys/kernel/hostname")
        t.write("/etc/ld.so.conf", "include /etc/ld.so.conf\ninclude /etc/ld.so.conf.d/*.conf\n/usr/lib\n")
        t.symlink("loop.conf", "/etc/ld.so.conf.d/loop.conf")
        t.symlink("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
        t.symlink("loop.icd", "/etc/OpenCL/vendors/loop.icd")
        t.symlink("/nonexistent.icd", "/etc/OpenCL/vendors/dangling.icd")

        doc = self.assert_report(["--root", t.root])
        self.assertIn("/proc/cpuinfo: Too many levels of symbolic links", " ".join(doc["cpu"]["notes"]))
        notes = " ".join(doc["pci"]["notes"])
        self.assertIn("0000:01:00.0", notes)
        self.assertIn("Too many levels of symbolic links", notes)
        self.assertIn("0000:02:00.0", notes)
        devs = {x["address"]: x for x in doc["pci"]["devices"]}
        self.assertEqual(sorted(devs), [self.GPU])
        gpu = devs[self.GPU]
        self.assertEqual(gpu["driver"], "nvidia")  # the link text is enough, its target need not exist
        self.assertIsNone(gpu["numa_node"])
        self.assertEqual(gpu["drm"], [])
        self.assertIsNone(doc["host"]["os"])
        self.assertIsNone(doc["host"]["hostname"])
        # the device nodes the bound nvidia driver needs: a loop and a dangling link are not nodes
        missing = {f["subject"] for f in doc["findings"] if f["id"] == "dev.missing-node"}
        self.assertIn("/dev/nvidiactl", missing)

        # the same tree with the live-only probes: .icd loops and dangling links are findings
        doc = self.assert_report(["--root", t.root, "--live", "icd"])
        icds = {e["file"]: e for e in doc["icd"]["icds"]}
        self.assertEqual(icds["/etc/OpenCL/vendors/loop.icd"]["status"], "unreadable")
        self.assertIn("symbolic links", icds["/etc/OpenCL/vendors/loop.icd"]["detail"])
        self.assertEqual(icds["/etc/OpenCL/vendors/dangling.icd"]["status"], "unreadable")

    def test_root_without_proc(self):
        t, _ = self.tree()
        t.write("/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
        self.assertFalse(os.path.exists(t.path("/proc")))
        doc = self.assert_report(["--root", t.root])
        self.assertIn("/proc/cpuinfo", " ".join(doc["cpu"]["notes"]))
        self.assertIn("No such file", " ".join(doc["cpu"]["notes"]))
        self.assertIn("neither /proc/modules nor /sys/module", " ".join(doc["pci"]["notes"]))
        self.assertIsNone(doc["pci"]["modules"]["nvidia"]["loaded"])
        self.assertEqual([x["address"] for x in doc["pci"]["devices"]], [self.GPU])
        self.assertEqual(doc["host"]["os"], "Debian GNU/Linux 12 (bookworm)")
        text = gctest.run("--root", t.root)
        self.assertIn(text.rc, (0, 1))
        self.assertIn("Reading a captured tree", text.stdout)

    def test_files_in_every_bad_shape(self):
        # Each file the probes read, as a directory, empty, binary garbage, 100 MB, unreadable, or a
        # FIFO with no writer.
        files = ["/proc/cpuinfo", "/proc/modules", "/proc/driver/nvidia/version", "/etc/os-release",
                 "/etc/group", "/etc/ld.so.conf", "/proc/sys/kernel/hostname", "/proc/sys/kernel/osrelease",
                 "/sys/devices/pci0000:00/%s/current_link_speed" % self.GPU,
                 "/sys/devices/pci0000:00/%s/numa_node" % self.GPU,
                 "/sys/devices/pci0000:00/%s/power_state" % self.GPU,
                 "/sys/devices/pci0000:00/%s/modalias" % self.GPU,
                 "/etc/OpenCL/vendors/shape.icd"]
        for kind in ("dir", "empty", "garbage", "big", "unreadable", "fifo"):
            with self.subTest(kind=kind):
                t, _ = self.tree()
                for f in files:
                    p = t.path(f)
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    if kind == "dir":
                        os.mkdir(p)
                    elif kind == "big":
                        with open(p, "wb") as fh:
                            fh.truncate(BIG)
                    elif kind == "garbage":
                        with open(p, "wb") as fh:
                            fh.write(bytes(range(256)) * 4 + b"\n\xff\xfe\n")
                    elif kind == "fifo":
                        os.mkfifo(p)  # nobody ever writes: a blocking read would hang forever
                    else:
                        open(p, "wb").close()
                        if kind == "unreadable":
                            os.chmod(p, 0)
                for dirpath, dirnames, _ in os.walk(t.root):
                    for dn in dirnames:
                        os.chmod(os.path.join(dirpath, dn), 0o755)
                prefix = AS_NOBODY if kind == "unreadable" else ()
                doc = self.assert_report(["--root", t.root], prefix=prefix)
                self.assertEqual([x["address"] for x in doc["pci"]["devices"]], [self.GPU])
                gpu = doc["pci"]["devices"][0]
                self.assertIsNone(gpu["link"])
                self.assertIsNone(gpu["numa_node"])
                # whatever was read is sanitised text, never raw bytes
                for key in ("power_state", "modalias"):
                    v = gpu[key]
                    self.assertTrue(v is None or all(c == "\t" or (ord(c) >= 0x20 and ord(c) != 0x7f) for c in v),
                                    repr(v))
                cpu_notes = " ".join(doc["cpu"]["notes"])
                if kind in ("dir", "big", "unreadable"):
                    why = {"dir": "Is a directory", "big": "too large", "unreadable": "Permission denied"}[kind]
                    self.assertIn("/proc/cpuinfo", cpu_notes)
                    self.assertIn(why, cpu_notes)
                doc = self.assert_report(["--root", t.root, "--live", "--timeout", "5", "icd"], prefix=prefix)
                shape = [e for e in doc["icd"]["icds"] if e["file"] == "/etc/OpenCL/vendors/shape.icd"]
                if kind != "dir":
                    self.assertEqual(len(shape), 1, doc["icd"])
                    self.assertIn(shape[0]["status"], ("malformed", "unreadable", "missing-library"), shape)


if __name__ == "__main__":
    gctest.main()
