"""End-to-end tests of the cpu probe: captured and derived CPUID dumps, fake trees, the live CPU.

libcpuid (a build dependency) exists for x86 only, so the live tests assume an x86 machine.
"""
import os
import re
import subprocess
import sys

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
DUMPS = os.path.join(HERE, "dumps")
CPUINFO = os.path.join(HERE, "cpuinfo")


def dump(name):
    return os.path.join(DUMPS, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# The table's kernel spellings, written out independently of probes/cpu_x86.c: /proc/cpuinfo says
# pni for SSE3, and never lists osxsave (its "xsave" means the kernel enabled XSAVE, i.e. OSXSAVE).
KERNEL_NAME = {"sse3": "pni", "osxsave": "xsave"}
# Table rows /proc/cpuinfo has no name for (Linux names AVX10 only inside KVM): cpuinfo_flags says null.
NO_KERNEL_NAME = {"avx10"}

TABLE = ["fpu", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2", "syscall", "lm", "sse3", "ssse3", "sse4_1",
         "sse4_2", "popcnt", "cx16", "lahf_lm", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe",
         "osxsave", "avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
         "avx_vnni", "avx10", "amx_tile", "amx_bf16", "amx_int8", "aes", "pclmulqdq", "sha_ni"]

# What the issue asks the table to have at least.
REQUIRED = ["sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi1",
            "bmi2", "movbe", "avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
            "avx512_bf16", "amx_tile"]

# The captured machine: AMD EPYC (Zen 3) KVM guest with AVX2, no AVX-512.
EPYC_USABLE = {"sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi1",
               "bmi2", "movbe", "abm", "cx16", "lahf_lm", "osxsave", "fpu", "cx8", "cmov", "mmx", "fxsr", "syscall",
               "lm", "aes", "pclmulqdq", "sha_ni"}


def cpuinfo_flags(text):
    """The flags every processor of a /proc/cpuinfo text lists."""
    sets = [set(line.split(":", 1)[1].split()) for line in text.splitlines()
            if re.match(r"^flags\s*:", line)]
    return set.intersection(*sets) if sets else set()


class CpuTestCase(gctest.TestCase):
    def cpu(self, *args, expect_rc=0):
        r = self.run_json("cpu", *args, expect_rc=expect_rc)
        return r, r.json["cpu"]

    def cpu_ids(self, r):
        return sorted(i for i in r.finding_ids() if i.startswith("cpu."))

    def tree_with_cpuinfo(self, text, cmdline=None):
        t = self.make_tree()
        t.write("/proc/cpuinfo", text)
        if cmdline is not None:
            t.write("/proc/cmdline", cmdline)
        return t

    def assertFlags(self, flags, expected):
        for name, value in expected.items():
            self.assertIs(flags[name], value, name)


class DumpTests(CpuTestCase):
    def test_derived_dumps_are_current(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "make_dumps.py"), "--check"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_captured_dump(self):
        r, c = self.cpu("--cpuid-dump", dump("epyc-milan-kvm.dump"))
        self.assertEqual(c["status"], "ok")
        self.assertEqual(c["source"], "dump")
        self.assertEqual(c["architecture"], "x86_64")
        self.assertEqual(c["vendor"], "AuthenticAMD")
        self.assertEqual(c["brand"], "AMD EPYC")
        self.assertEqual((c["family"], c["model"], c["stepping"]), (25, 1, 1))
        self.assertEqual(c["microarchitecture"], "Zen 3")
        self.assertEqual(c["codename"], "EPYC (Milan)")
        self.assertEqual(c["hypervisor"], {"present": True, "vendor": "KVM", "signature": "KVMKVMKVM"})
        self.assertEqual(c["x86_64_level"], 3)
        self.assertEqual(c["x86_64_missing"], {"v4": ["avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl"]})
        self.assertEqual(sorted(c["flags"]), sorted(TABLE))
        for name in REQUIRED:
            self.assertIn(name, c["flags"])
        self.assertEqual({k for k, v in c["flags"].items() if v}, EPYC_USABLE)
        self.assertEqual(c["cpuid_flags"], c["flags"])
        self.assertEqual(c["os_enabled"], {"source": "dump", "osxsave": True, "xcr0": 7, "avx": True,
                                           "avx512": False, "amx": False})
        self.assertEqual(c["dump"]["libcpuid_version"], "0.6.2")
        self.assertTrue(c["dump"]["has_xcr0"])
        self.assertEqual(c["libcpuid"]["disagrees"], [])
        # another machine's dump is not compared with this machine's kernel
        self.assertIsNone(c["cpuinfo_flags"])
        self.assertEqual(self.cpu_ids(r), [])
        self.assertEqual(c["summary"][0]["label"], "CPU")
        self.assertEqual(c["summary"][0]["mark"], "ok")
        self.assertTrue(c["summary"][0]["text"].startswith("AMD EPYC (Zen 3), 2 cores, x86-64-v3: SSE4.2 AVX AVX2 FMA"),
                        c["summary"][0]["text"])

    def test_libcpuid_written_dump_without_extras(self):
        r, c = self.cpu("--cpuid-dump", dump("epyc-milan-kvm-libcpuid.dump"))
        self.assertEqual({k for k, v in c["flags"].items() if v}, EPYC_USABLE)
        self.assertEqual(c["x86_64_level"], 3)
        # no hypervisor leaf in libcpuid's format: present, vendor unknown
        self.assertEqual(c["hypervisor"], {"present": True, "vendor": None, "signature": None})
        # no XCR0: assumed from leaf 0xD, and said so
        self.assertEqual(c["os_enabled"]["source"], "assumed")
        self.assertIsNone(c["os_enabled"]["xcr0"])
        self.assertTrue(c["os_enabled"]["avx"])
        self.assertTrue(any("does not record XCR0" in n for n in c["notes"]), c["notes"])
        self.assertFalse(c["dump"]["has_xcr0"])
        self.assertEqual(self.cpu_ids(r), [])

    # name -> (flags expected, level, cpu.* finding IDs, extra checks)
    CASES = {
        "no-avx.dump": ({"avx": False, "avx2": False, "fma": False, "f16c": False, "sse4_2": True, "popcnt": True},
                        2, ["cpu.no-avx"]),
        "vm-hides-avx.dump": ({"avx": False, "avx2": False, "sse4_2": True}, 2,
                              ["cpu.avx-hidden-by-hypervisor", "cpu.no-avx"]),
        "avx-disabled-xcr0.dump": ({"avx": False, "avx2": False, "fma": False, "f16c": False, "bmi2": True}, 2,
                                   ["cpu.avx-disabled-by-os", "cpu.no-avx"]),
        "avx-disabled-osxsave.dump": ({"avx": False, "avx2": False, "osxsave": False}, 2,
                                      ["cpu.avx-disabled-by-os", "cpu.no-avx"]),
        "pre-v2.dump": ({"avx": False, "sse4_1": False, "sse4_2": False, "popcnt": False, "ssse3": True,
                         "cx16": True, "lahf_lm": True}, 1, ["cpu.below-x86-64-v2", "cpu.no-avx"]),
        "avx512.dump": ({"avx512f": True, "avx512bw": True, "avx512vl": True, "avx512_vnni": True,
                         "avx512_bf16": True, "amx_tile": False}, 4, []),
        "avx512-disabled-xcr0.dump": ({"avx": True, "avx512f": False, "avx512_bf16": False, "avx512_vnni": False},
                                      3, ["cpu.avx512-disabled-by-os"]),
        "avx512-libcpuid.dump": ({"avx512f": True, "avx512_bf16": None, "avx_vnni": None}, 4, []),
    }

    def test_derived_dumps(self):
        for name, (flags, level, ids) in self.CASES.items():
            with self.subTest(dump=name):
                r, c = self.cpu("--cpuid-dump", dump(name))
                self.assertEqual(c["source"], "dump")
                self.assertFlags(c["flags"], flags)
                self.assertEqual(c["x86_64_level"], level)
                self.assertEqual(self.cpu_ids(r), ids)
                mark = c["summary"][0]["mark"]
                self.assertEqual(mark, "warning" if "cpu.no-avx" in ids or level < 2 else "ok")

    def test_no_avx_on_bare_metal_names_tensorflow(self):
        r, c = self.cpu("--cpuid-dump", dump("no-avx.dump"))
        self.assertIsNone(c["hypervisor"])
        f = r.findings("cpu.no-avx")[0]
        self.assertEqual(f["severity"], "warning")
        self.assertIn("TensorFlow", f["message"])
        self.assertIn("1.6", f["message"])
        self.assertIsNone(f["caused_by"])
        self.assertIn({"source": "CPUID.1:ECX[28] (AVX)", "value": "0"}, f["evidence"])
        self.assertIn("no AVX (not in this CPU)", c["summary"][0]["text"])

    def test_vm_hiding_avx(self):
        r, c = self.cpu("--cpuid-dump", dump("vm-hides-avx.dump"))
        self.assertEqual(c["hypervisor"]["vendor"], "KVM")
        self.assertIs(c["cpuid_flags"]["avx"], False)
        hidden = r.findings("cpu.avx-hidden-by-hypervisor")[0]
        self.assertIn("KVM", hidden["message"])
        self.assertIn("-cpu host", hidden["hint"])
        self.assertIn({"source": "CPUID.1:ECX[31] (hypervisor)", "value": "1"}, hidden["evidence"])
        no = r.findings("cpu.no-avx")[0]
        self.assertEqual(no["caused_by"], {"id": "cpu.avx-hidden-by-hypervisor", "subject": None})
        self.assertIn("no AVX (hidden by the KVM hypervisor)", c["summary"][0]["text"])

    def test_avx_disabled_by_xcr0(self):
        r, c = self.cpu("--cpuid-dump", dump("avx-disabled-xcr0.dump"))
        self.assertIs(c["cpuid_flags"]["avx"], True)
        self.assertIs(c["flags"]["avx"], False)
        self.assertEqual(c["os_enabled"], {"source": "dump", "osxsave": True, "xcr0": 3, "avx": False,
                                           "avx512": False, "amx": False})
        f = r.findings("cpu.avx-disabled-by-os")[0]
        self.assertIn({"source": "XCR0 (recorded in the dump)", "value": "0x3"}, f["evidence"])
        self.assertIn({"source": "CPUID.1:ECX[28] (AVX)", "value": "1"}, f["evidence"])
        self.assertEqual(r.findings("cpu.no-avx")[0]["caused_by"]["id"], "cpu.avx-disabled-by-os")
        self.assertEqual(c["x86_64_missing"]["v3"], ["avx", "avx2", "fma", "f16c"])

    def test_avx_disabled_by_osxsave(self):
        r, c = self.cpu("--cpuid-dump", dump("avx-disabled-osxsave.dump"))
        self.assertEqual(c["os_enabled"]["source"], "osxsave")
        self.assertFalse(c["os_enabled"]["osxsave"])
        self.assertIsNone(c["os_enabled"]["xcr0"])
        f = r.findings("cpu.avx-disabled-by-os")[0]
        self.assertIn("OSXSAVE", f["message"])
        self.assertIn({"source": "CPUID.1:ECX[27] (OSXSAVE)", "value": "0"}, f["evidence"])
        self.assertIn("x86-64-v2", c["summary"][0]["text"])
        self.assertIn("no AVX (disabled by the OS)", c["summary"][0]["text"])

    def test_pre_v2(self):
        r, c = self.cpu("--cpuid-dump", dump("pre-v2.dump"))
        self.assertEqual(c["x86_64_missing"]["v2"], ["sse4_1", "sse4_2", "popcnt"])
        f = r.findings("cpu.below-x86-64-v2")[0]
        self.assertEqual(f["severity"], "warning")
        self.assertIn("NumPy 2.4", f["message"])
        self.assertIn("sse4_2", f["message"])
        self.assertIn("x86-64-v1", c["summary"][0]["text"])

    def test_avx512_and_libcpuid_gap(self):
        r, c = self.cpu("--cpuid-dump", dump("avx512.dump"))
        self.assertEqual(c["os_enabled"]["xcr0"], 0xe7)
        self.assertIsNone(c["x86_64_missing"])
        self.assertIn("AVX-512", c["summary"][0]["text"])
        # libcpuid 0.6 does not decode AVX-512 for AMD: recorded, not believed
        if c["libcpuid"]["version"].startswith("0.6"):
            self.assertIn("avx512f", c["libcpuid"]["disagrees"])
            self.assertTrue(any("libcpuid" in n and "avx512f" in n for n in c["notes"]), c["notes"])

    def test_avx512_disabled_by_os(self):
        r, c = self.cpu("--cpuid-dump", dump("avx512-disabled-xcr0.dump"))
        self.assertIs(c["cpuid_flags"]["avx512f"], True)
        self.assertFalse(c["os_enabled"]["avx512"])
        f = r.findings("cpu.avx512-disabled-by-os")[0]
        self.assertEqual(f["severity"], "info")
        self.assertIn({"source": "XCR0", "value": "0x7"}, f["evidence"])

    def test_multi_cpu_dump(self):
        r, c = self.cpu("--cpuid-dump", dump("epyc-milan-kvm-all.dump"))
        self.assertEqual(c["dump"]["logical_cpus"], 2)
        self.assertEqual(len(c["core_types"]), 1)
        self.assertEqual(c["core_types"][0]["purpose"], "general")
        self.assertEqual(c["core_types"][0]["logical_cpus"], 2)
        self.assertEqual({k for k, v in c["flags"].items() if v}, EPYC_USABLE)

    def test_dump_in_check_command(self):
        r = self.run_json("check", "--cpuid-dump", dump("vm-hides-avx.dump"), "--smoke=none", "--timeout", "60")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertIn("cpu.avx-hidden-by-hypervisor", r.finding_ids())
        self.assertEqual(r.json["cpu"]["source"], "dump")

    def test_text_output(self):
        r = gctest.run("cpu", "--cpuid-dump", dump("avx-disabled-xcr0.dump"))
        self.assertEqual(r.rc, 0, repr(r))
        out = r.stdout
        self.assertRegex(out, r"\[warn\] CPU +AMD EPYC \(Zen 3\), 2 cores, x86-64-v2: SSE4\.2; no AVX \(disabled by the OS\)")
        self.assertRegex(out, r"usable +fpu cx8 ")
        self.assertRegex(out, r"disabled by OS +avx avx2 fma f16c\n")
        self.assertRegex(out, r"not reported +avx512f ")
        self.assertIn("XCR0=0x3", out)
        self.assertIn("cpu.avx-disabled-by-os", out)
        # compact: the details fit in a screenful
        self.assertLess(len(out.splitlines()), 45, out)


class DocTests(CpuTestCase):
    def test_every_cpu_finding_is_documented(self):
        r = self.run_json("--list-checks", expect_rc=0)
        ids = [c["id"] for c in r.json["checks"] if c["probe"] == "cpu"]
        for required in ("cpu.no-avx", "cpu.avx-hidden-by-hypervisor", "cpu.avx-disabled-by-os",
                         "cpu.below-x86-64-v2", "cpu.flags-disagree"):
            self.assertIn(required, ids)
        man = read(os.path.join(gctest.SOURCE_ROOT, "man", "gpucheckup.1")).replace("\\-", "-")
        cpu_section = man[man.index(".SS CPU"):man.index(".SH JSON OUTPUT")]
        # The guide's CPU section is where a reader looks for what a cpu finding means.
        guide = read(os.path.join(gctest.SOURCE_ROOT, "docs", "guide.md"))
        guide_cpu = guide[guide.index("\n## CPU"):guide.index("\n## PCI")]
        for i in ids:
            self.assertIn(".B " + i + "\n", cpu_section)
            self.assertIn("`" + i + "`", guide_cpu)


class BadDumpTests(CpuTestCase):
    def bad(self, path, words, cmd="cpu"):
        r = gctest.run(cmd, "--cpuid-dump", path)
        self.assertEqual(r.rc, 2, repr(r))
        self.assertEqual(r.stdout, "")
        self.assertIn("--cpuid-dump " + path, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        j = self.run_json(cmd, "--cpuid-dump", path, expect_rc=2)
        self.assertEqual(j.json["error"]["kind"], "input")
        self.assertIn(path, j.json["error"]["message"])
        return r

    def test_garbage_file(self):
        t = self.make_tree()
        self.bad(t.write("garbage.dump", "this is not\na CPUID dump\n"), ["not a CPUID dump in a format"])

    def test_empty_file(self):
        t = self.make_tree()
        self.bad(t.write("empty.dump", ""), ["empty"])

    def test_directory(self):
        t = self.make_tree()
        self.bad(t.mkdir("dir.dump"), ["directory"])

    def test_missing_file(self):
        self.bad("/nonexistent/cpu.dump", ["No such file"])

    def test_binary_file(self):
        t = self.make_tree()
        self.bad(t.write("bin.dump", bytes(range(256)) * 4), ["NUL"])

    def test_version_line_only_decodes_to_nothing(self):
        t = self.make_tree()
        self.bad(t.write("v.dump", "version=0.6.2\n"), ["decodes to nothing"])

    def test_overlong_version_line(self):
        # libcpuid 0.6's own reader copies this into an 8-byte buffer; ours must not care
        t = self.make_tree()
        text = read(dump("epyc-milan-kvm.dump")).replace("version=0.6.2", "version=" + "9" * 500)
        r, c = self.cpu("--cpuid-dump", t.write("long.dump", text))
        self.assertEqual(c["x86_64_level"], 3)

    def test_truncated_dump(self):
        t = self.make_tree()
        text = read(dump("epyc-milan-kvm.dump"))
        self.bad(t.write("cut.dump", text[:text.index("basic_cpuid[1]=") + 20]), ["line 3"])

    def test_arm_dump(self):
        t = self.make_tree()
        self.bad(t.write("arm.dump", "version=0.8.1\narm_midr=00000000413fd0c1\narm_mpidr=0000000080000000\n"),
                 ["decodes to nothing", "ARM"])

    def test_zeroed_leaves(self):
        t = self.make_tree()
        text = re.sub(r"=([0-9a-f]{8} ){3}[0-9a-f]{8}", "=00000000 00000000 00000000 00000000",
                      read(dump("epyc-milan-kvm-libcpuid.dump")))
        self.bad(t.write("zero.dump", text), ["decodes to nothing"])

    def test_bad_dump_in_check_command(self):
        t = self.make_tree()
        self.bad(t.write("garbage.dump", "garbage\n"), ["not a CPUID dump in a format"], cmd="check")


class SaveTests(CpuTestCase):
    def test_save_and_reload_matches_live(self):
        t = self.make_tree()
        for cmd in ("cpu", "check"):
            with self.subTest(cmd=cmd):
                out = t.path(cmd + ".dump")
                args = [cmd, "--save-cpuid", out] + (["--smoke=none", "--timeout", "60"] if cmd == "check" else [])
                live = self.run_json(*args)
                self.assertIn(live.rc, (0, 1), repr(live))
                self.assertEqual(live.json["cpu"]["saved_dump"], out)
                self.assertEqual([n for n in os.listdir(t.root) if n.startswith(".gpucheckup")], [])
                text = read(out)
                self.assertTrue(text.startswith("version="), text[:40])
                self.assertIn("\n" + "-" * 80 + "\n", text)
                self.assertRegex(text, r"\ngpucheckup\.xcr0=[0-9a-f]{16}\n")
                r, c = self.cpu("--cpuid-dump", out)
                lc = live.json["cpu"]
                for key in ("flags", "cpuid_flags", "x86_64_level", "vendor", "brand", "family", "model",
                            "stepping", "hypervisor"):
                    self.assertEqual(c[key], lc[key], key)
                self.assertEqual(c["os_enabled"]["xcr0"], lc["os_enabled"]["xcr0"])

    def test_save_replaces_atomically(self):
        t = self.make_tree()
        out = t.write("old.dump", "old content\n")
        r = gctest.run("cpu", "--save-cpuid", out, "-q")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertTrue(read(out).startswith("version="))
        self.assertEqual(sorted(os.listdir(t.root)), ["old.dump"])

    def test_save_into_missing_directory(self):
        r = gctest.run("cpu", "--save-cpuid", "/nonexistent-dir/cpu.dump")
        self.assertEqual(r.rc, 2, repr(r))
        self.assertIn("--save-cpuid /nonexistent-dir/cpu.dump", r.stderr)
        j = self.run_json("cpu", "--save-cpuid", "/nonexistent-dir/cpu.dump", expect_rc=2)
        self.assertIn("/nonexistent-dir/cpu.dump", j.json["error"]["message"])

    def test_save_onto_directory(self):
        t = self.make_tree()
        r = gctest.run("cpu", "--save-cpuid", t.root)
        self.assertEqual(r.rc, 2, repr(r))
        self.assertIn("is a directory", r.stderr)

    def test_save_under_root_needs_live(self):
        t = self.tree_with_cpuinfo(read(os.path.join(CPUINFO, "epyc-milan-kvm.txt")))
        out = t.path("x.dump")
        r = gctest.run("cpu", "--root", t.root, "--save-cpuid", out)
        self.assertEqual(r.rc, 2, repr(r))
        self.assertIn("--live", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_resave_a_dump(self):
        # a dump read back and saved again decodes the same (extras included)
        t = self.make_tree()
        out = t.path("again.dump")
        r1, c1 = self.cpu("--cpuid-dump", dump("avx512.dump"), "--save-cpuid", out)
        r2, c2 = self.cpu("--cpuid-dump", out)
        self.assertEqual(c1["flags"], c2["flags"])
        self.assertEqual(c1["os_enabled"], c2["os_enabled"])


class LiveTests(CpuTestCase):
    def test_live_agrees_with_proc_cpuinfo(self):
        r, c = self.cpu(expect_rc=None)
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertEqual(c["status"], "ok")
        self.assertEqual(c["source"], "cpuid")
        self.assertEqual(c["os_enabled"]["source"], "xgetbv")
        kernel = cpuinfo_flags(read("/proc/cpuinfo"))
        self.assertTrue(kernel)
        checked = 0
        for name, usable in c["flags"].items():
            self.assertIsNotNone(usable, name)  # live CPUID reads every leaf it needs
            checked += 1
            if name in NO_KERNEL_NAME:
                self.assertIsNone(c["cpuinfo_flags"][name], name)
                continue
            self.assertEqual(usable, KERNEL_NAME.get(name, name) in kernel, name)
            self.assertEqual(c["cpuinfo_flags"][name], KERNEL_NAME.get(name, name) in kernel, name)
        self.assertEqual(checked, len(TABLE))
        self.assertEqual(r.findings("cpu.flags-disagree"), [])
        self.assertIsNotNone(c["x86_64_level"])
        self.assertGreaterEqual(c["x86_64_level"], 1)
        self.assertEqual(c["hypervisor"] is not None, "hypervisor" in kernel)
        self.assertEqual(c["libcpuid"]["error"], None)

    def test_live_under_root_compares_with_the_tree(self):
        text = read("/proc/cpuinfo")
        self.assertIn(" sse2", text)
        t = self.tree_with_cpuinfo(re.sub(r"(?m)^(flags\s*:.*) sse2( |$)", r"\1\2", text))
        r, c = self.cpu("--root", t.root, "--live", expect_rc=None)
        self.assertEqual(c["source"], "cpuid")
        f = r.findings("cpu.flags-disagree")
        self.assertEqual([x["subject"] for x in f], ["sse2"])
        self.assertIn({"source": "CPUID", "value": "sse2 usable"}, f[0]["evidence"])
        self.assertIn({"source": "/proc/cpuinfo flags", "value": "sse2 not listed"}, f[0]["evidence"])
        self.assertIs(c["flags"]["sse2"], True)
        self.assertIs(c["cpuinfo_flags"]["sse2"], False)

    def test_text_has_identification_and_table(self):
        r = gctest.run("cpu")
        self.assertIn(r.rc, (0, 1), repr(r))
        self.assertRegex(r.stdout, r"\[( ok |warn)\] CPU +\S")
        for word in ("vendor", "family/model/stepping", "x86-64 level", "usable", "not reported",
                     "disabled by OS", "OS-enabled state"):
            self.assertIn(word, r.stdout)


class TreeTests(CpuTestCase):
    EPYC = read(os.path.join(CPUINFO, "epyc-milan-kvm.txt"))

    def test_x86_tree(self):
        t = self.tree_with_cpuinfo(self.EPYC)
        r, c = self.cpu("--root", t.root)
        self.assertEqual(c["source"], "cpuinfo")
        self.assertEqual(c["architecture"], "x86_64")
        self.assertEqual(c["vendor"], "AuthenticAMD")
        self.assertEqual(c["brand"], "AMD EPYC")
        self.assertEqual((c["cores"], c["logical_cpus"], c["packages"]), (2, 2, 1))
        self.assertEqual({k for k, v in c["flags"].items() if v}, EPYC_USABLE)
        self.assertIsNone(c["cpuid_flags"])
        self.assertIsNone(c["os_enabled"])
        self.assertIsNone(c["libcpuid"])
        self.assertEqual(c["x86_64_level"], 3)
        self.assertEqual(c["hypervisor"], {"present": True, "vendor": None, "signature": None})
        self.assertEqual(self.cpu_ids(r), [])

    def test_dump_with_its_own_tree_is_cross_checked(self):
        t = self.tree_with_cpuinfo(self.EPYC)
        r, c = self.cpu("--root", t.root, "--cpuid-dump", dump("epyc-milan-kvm.dump"))
        self.assertEqual(c["source"], "dump")
        named = {k: v for k, v in c["flags"].items() if k not in NO_KERNEL_NAME}
        self.assertEqual({k: v for k, v in c["cpuinfo_flags"].items() if k not in NO_KERNEL_NAME}, named)
        for name in NO_KERNEL_NAME:
            self.assertIsNone(c["cpuinfo_flags"][name], name)  # unknown to the kernel: no disagreement
        self.assertEqual(r.findings("cpu.flags-disagree"), [])
        self.assertEqual(c["packages"], 1)

    def test_flags_disagree(self):
        text = re.sub(r" avx2 ", " ", self.EPYC)
        t = self.tree_with_cpuinfo(text)
        r, c = self.cpu("--root", t.root, "--cpuid-dump", dump("epyc-milan-kvm.dump"))
        f = r.findings("cpu.flags-disagree")
        self.assertEqual([x["subject"] for x in f], ["avx2"])
        self.assertEqual(f[0]["severity"], "warning")
        self.assertIn({"source": "CPUID (dump)", "value": "avx2 usable"}, f[0]["evidence"])
        self.assertIn({"source": "/proc/cpuinfo flags", "value": "avx2 not listed"}, f[0]["evidence"])
        self.assertEqual(c["x86_64_level"], 3)  # CPUID decides; the kernel's view is evidence

    def test_kernel_lists_a_flag_the_os_disabled(self):
        # XCR0 says AVX is off, but this kernel lists avx: disagreement on every AVX-state flag
        t = self.tree_with_cpuinfo(self.EPYC)
        r, c = self.cpu("--root", t.root, "--cpuid-dump", dump("avx-disabled-xcr0.dump"))
        f = r.findings("cpu.flags-disagree")
        self.assertEqual(sorted(x["subject"] for x in f), ["avx", "avx2", "f16c", "fma"])
        self.assertIn("reported but not enabled by the OS", f[0]["message"])

    def test_vm_tree_without_avx(self):
        text = re.sub(r" (avx|avx2|fma|f16c)(?= )", "", self.EPYC)
        t = self.tree_with_cpuinfo(text)
        r, c = self.cpu("--root", t.root)
        self.assertIs(c["flags"]["avx"], False)
        self.assertEqual(c["x86_64_level"], 2)
        self.assertEqual(self.cpu_ids(r), ["cpu.avx-hidden-by-hypervisor", "cpu.no-avx"])

    def test_tree_with_noxsave(self):
        text = re.sub(r" (avx|avx2|fma|f16c|xsave)(?= )", "", self.EPYC)
        t = self.tree_with_cpuinfo(text, cmdline="BOOT_IMAGE=/vmlinuz root=/dev/vda1 noxsave quiet\n")
        r, c = self.cpu("--root", t.root)
        self.assertEqual(self.cpu_ids(r), ["cpu.avx-disabled-by-os", "cpu.no-avx"])
        f = r.findings("cpu.avx-disabled-by-os")[0]
        self.assertIn({"source": "/proc/cmdline", "value": "noxsave"}, f["evidence"])

    def test_aarch64_tree(self):
        t = self.tree_with_cpuinfo(read(os.path.join(CPUINFO, "neoverse-n1.txt")))
        r, c = self.cpu("--root", t.root)
        self.assertEqual(c["status"], "ok")
        self.assertEqual(c["architecture"], "aarch64")
        self.assertEqual(c["vendor"], "ARM")
        self.assertEqual(c["brand"], "Neoverse-N1")
        self.assertEqual(c["logical_cpus"], 4)
        for key in ("flags", "cpuid_flags", "cpuinfo_flags", "os_enabled", "x86_64_level", "x86_64_missing",
                    "hypervisor", "libcpuid"):
            self.assertIsNone(c[key], key)
        self.assertIn("asimd", c["features"])
        self.assertIn("asimddp", c["features"])
        self.assertEqual(self.cpu_ids(r), [])
        self.assertEqual(c["summary"][0]["text"], "aarch64 ARM Neoverse-N1, 4 CPUs: ASIMD ASIMDDP")
        text = gctest.run("cpu", "--root", t.root)
        self.assertEqual(text.rc, 0)
        self.assertIn("kernel features", text.stdout)
        self.assertNotIn("x86-64 level", text.stdout)
        self.assertNotIn("not reported", text.stdout)

    def test_empty_tree_skips(self):
        t = self.make_tree()
        r, c = self.cpu("--root", t.root)
        self.assertEqual(c["status"], "skipped")
        self.assertIn("/proc/cpuinfo", c["reason"])

    def test_hostile_cpuinfo(self):
        cases = {
            "binary": bytes(range(256)) * 64,
            "no flags": "processor : 0\nvendor_id : GenuineIntel\n",
            "huge line": "flags : " + "x" * 200000 + "\n",
            "colons": ":::\n:\nprocessor:\nflags:\n",
        }
        for name, content in cases.items():
            with self.subTest(case=name):
                t = self.tree_with_cpuinfo(content)
                r, c = self.cpu("--root", t.root, expect_rc=None)
                self.assertIn(r.rc, (0, 1), repr(r))
                self.assertIn(c["status"], ("ok", "skipped"))
        t = self.make_tree()
        t.mkdir("/proc/cpuinfo")
        r, c = self.cpu("--root", t.root)
        self.assertEqual(c["status"], "skipped")
        t = self.make_tree()
        t.symlink("cpuinfo", "/proc/cpuinfo")
        r, c = self.cpu("--root", t.root)
        self.assertEqual(c["status"], "skipped")
        self.assertTrue(any("cpuinfo" in n for n in c.get("notes", [])), c)


if __name__ == "__main__":
    gctest.main()
