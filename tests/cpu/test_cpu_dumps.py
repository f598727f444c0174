"""End-to-end tests of --cpuid-dump on real dumps from other machines (tests/cpu/dumps/real/).

The truth is not gpucheckup's output. Each dump is decoded here a second time, by a small parser and
a table of CPUID bit positions written from the vendors' documents (Intel SDM vol. 2A, "CPUID"; AMD
APM vol. 3, appendix E), with the x86-64 levels as the x86-64 psABI lists them; and the level of every
dump is also written out by hand in EXPECTED from what each CPU generation is documented to have.
"""
import os
import re

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "dumps", "real")

# (register, bit) per flag: Intel SDM vol. 2A, CPUID, tables 3-10/3-11 (leaf 1), 3-8 (leaf 7,
# 0x80000001); AMD APM vol. 3, appendix E.3.2, E.3.6, E.4.2. Leaf "7.1" is leaf 7 subleaf 1.
BITS = {
    "fpu": ("1.edx", 0), "cx8": ("1.edx", 8), "cmov": ("1.edx", 15), "mmx": ("1.edx", 23),
    "fxsr": ("1.edx", 24), "sse": ("1.edx", 25), "sse2": ("1.edx", 26),
    "sse3": ("1.ecx", 0), "pclmulqdq": ("1.ecx", 1), "ssse3": ("1.ecx", 9), "fma": ("1.ecx", 12),
    "cx16": ("1.ecx", 13), "sse4_1": ("1.ecx", 19), "sse4_2": ("1.ecx", 20), "movbe": ("1.ecx", 22),
    "popcnt": ("1.ecx", 23), "aes": ("1.ecx", 25), "osxsave": ("1.ecx", 27), "avx": ("1.ecx", 28),
    "f16c": ("1.ecx", 29),
    "bmi1": ("7.ebx", 3), "avx2": ("7.ebx", 5), "bmi2": ("7.ebx", 8), "avx512f": ("7.ebx", 16),
    "avx512dq": ("7.ebx", 17), "avx512cd": ("7.ebx", 28), "sha_ni": ("7.ebx", 29), "avx512bw": ("7.ebx", 30),
    "avx512vl": ("7.ebx", 31), "avx512_vnni": ("7.ecx", 11),
    "amx_bf16": ("7.edx", 22), "amx_tile": ("7.edx", 24), "amx_int8": ("7.edx", 25),
    "avx_vnni": ("7.1.eax", 4), "avx512_bf16": ("7.1.eax", 5), "avx10": ("7.1.edx", 19),
    "lahf_lm": ("e1.ecx", 0), "abm": ("e1.ecx", 5), "syscall": ("e1.edx", 11), "lm": ("e1.edx", 29),
}
# The register state (XCR0 bits, Intel SDM vol. 1, 13.1) a flag's instructions need.
AVX_STATE = {"avx", "avx2", "fma", "f16c", "avx_vnni"}
AVX512_STATE = {f for f in BITS if f.startswith("avx512")} | {"avx10"}  # AVX10 runs on the opmask/ZMM state
AMX_STATE = {"amx_bf16", "amx_tile", "amx_int8"}
# x86-64 psABI, "Micro-architecture levels". The baseline's SCE (SYSCALL) is left out on purpose:
# Intel reports it only to 64-bit code, and long mode (LM) is what makes a CPU x86-64.
LEVELS = [
    ["fpu", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2", "lm"],
    ["cx16", "lahf_lm", "popcnt", "sse3", "sse4_1", "sse4_2", "ssse3"],
    ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "osxsave"],
    ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"],
]

AIDA_LINE = re.compile(r"^CPUID\s+([0-9A-Fa-f]{8})\s*:?\s*([0-9A-Fa-f]{8})[-\s]+([0-9A-Fa-f]{8})[-\s]+"
                       r"([0-9A-Fa-f]{8})[-\s]+([0-9A-Fa-f]{8})(?:\s+\[SL ([0-9A-Fa-f]+)\])?")
TOOL_LINE = re.compile(r"^\s*0x([0-9a-f]{8}) 0x([0-9a-f]+): eax=0x([0-9a-f]{8}) ebx=0x([0-9a-f]{8}) "
                       r"ecx=0x([0-9a-f]{8}) edx=0x([0-9a-f]{8})\s*$")
CPU_HEADER = re.compile(r"^(------\[ (CPUID Registers / )?Logical CPU #\d+ \]------|CPU#\d+ AffMask:.*|"
                        r"CPUID Registers \(CPU #\d+.*\):|CPU \d+:|CPU:)$")


def leaves_of_first_cpu(text):
    """{(leaf, subleaf): [eax, ebx, ecx, edx]} of the first logical CPU of an AIDA64 or cpuid -r dump."""
    leaves = {}
    headers = 0
    prev = None
    for raw in text.splitlines():
        line = raw.strip()
        if CPU_HEADER.match(line):
            headers += 1
            prev = None
            if headers > 1:
                break
            continue
        m = TOOL_LINE.match(line)
        if m:
            leaf, sub = int(m.group(1), 16), int(m.group(2), 16)
            regs = [int(m.group(i), 16) for i in range(3, 7)]
        else:
            m = AIDA_LINE.match(line)
            if not m:
                continue
            leaf = int(m.group(1), 16)
            regs = [int(m.group(i), 16) for i in range(2, 6)]
            if m.group(6) is not None:
                sub = int(m.group(6), 16)
            else:  # subleaves written as repeated lines
                sub = prev[1] + 1 if prev and prev[0] == leaf else 0
        if leaf == 0 and sub == 0 and (0, 0) in leaves:
            break  # the next CPU, listed without a header
        prev = (leaf, sub)
        leaves[(leaf, sub)] = regs
    return leaves


def truth(text):
    """(usable flags {name: True/False/None}, x86-64 level) from the documented bits."""
    lv = leaves_of_first_cpu(text)
    zero = [0, 0, 0, 0]
    max_basic = lv.get((0, 0), zero)[0]
    max_ext = lv.get((0x80000000, 0), zero)[0]
    has_ext = 0x80000001 <= max_ext <= 0x8000FFFF
    regs = {
        "1": lv.get((1, 0), zero) if max_basic >= 1 else zero,
        "7": lv.get((7, 0), zero) if max_basic >= 7 else zero,
        "e1": lv.get((0x80000001, 0), zero) if has_ext else zero,
    }
    names = {"eax": 0, "ebx": 1, "ecx": 2, "edx": 3}
    reported = {}
    for flag, (where, bit) in BITS.items():
        if where.startswith("7.1."):
            if max_basic < 7 or regs["7"][0] < 1:
                reported[flag] = False  # leaf 7 EAX: the highest subleaf
            elif (7, 1) not in lv:
                reported[flag] = None
            else:
                reported[flag] = bool(lv[(7, 1)][names[where[4:]]] >> bit & 1)
            continue
        leaf, reg = where.split(".")
        reported[flag] = bool(regs[leaf][names[reg]] >> bit & 1)
    # These dumps record no XCR0: OSXSAVE 0 means no XSAVE state; else what leaf 0xD says the CPU
    # supports, as Linux enables it.
    if not reported["osxsave"]:
        xcr0 = 0
    elif max_basic >= 0xD:
        xcr0 = lv.get((0xD, 0), zero)[0]
    else:
        xcr0 = 0x3 | (0x6 if reported["avx"] else 0)
    state_avx = xcr0 & 0x6 == 0x6
    state = {f: state_avx for f in AVX_STATE}
    state.update({f: state_avx and xcr0 & 0xE0 == 0xE0 for f in AVX512_STATE})
    state.update({f: xcr0 & 0x60000 == 0x60000 for f in AMX_STATE})
    usable = {f: (v and state.get(f, True)) if v is not None else None for f, v in reported.items()}
    level = 0
    for n, flags in enumerate(LEVELS, 1):
        if not all(usable[f] for f in flags):
            break
        level = n
    return reported, usable, level


# By hand, from what each generation is documented to have (vendor datasheets, and the AIDA64
# "Instruction Set" lines the InstLatx64 files carry): file -> (x86-64 level, vendor, brand text).
EXPECTED = {
    # no SSE2/long mode: not x86-64
    "AuthenticAMD0000644_K7_Thunderbird_CPUID.txt": (0, "AuthenticAMD", "Athlon"),
    "CentaurHauls0000694_C5XL_Nehemiah_CPUID.txt": (0, "CentaurHauls", "VIA Nehemiah"),
    "GenuineIntel00006D8_PM_Dothan_CPUID.txt": (0, "GenuineIntel", "Pentium(R) M"),
    # x86-64 v1: SSE2 and long mode; no SSSE3/SSE4.1/SSE4.2 (or no LAHF in 64-bit mode, early P4)
    "AuthenticAMD0000F4A_K8_Clawhammer_CPUID.txt": (1, "AuthenticAMD", "Athlon(tm) 64"),
    "AuthenticAMD0010FF0_K8_Palermo_CPUID.txt": (1, "AuthenticAMD", "Sempron"),
    "AuthenticAMD0100F42_K10_Deneb_CPUID.txt": (1, "AuthenticAMD", "Phenom(tm) II X4 940"),
    "AuthenticAMD0100F42_K10_Callisto_CPUID2.txt": (1, "AuthenticAMD", "Phenom(tm) II X2 B55"),
    "AuthenticAMD0500F20_K14_Bobcat_CPUID.txt": (1, "AuthenticAMD", "E-450"),
    "CentaurHauls00006F1_CNA_Isaiah_CPUID.txt": (1, "CentaurHauls", "VIA CNA"),
    "GenuineIntel0000F41_P4_Prescott_CPUID.txt": (1, "GenuineIntel", "Celeron"),
    "GenuineIntel00006F6_Conroe_CPUID.txt": (1, "GenuineIntel", "Core(TM)2 CPU X6800"),
    "GenuineIntel0010676_Penryn_CPUID.txt": (1, "GenuineIntel", "P8400"),
    "GenuineIntel00106C2_Diamondville_CPUID.txt": (1, "GenuineIntel", "Atom(TM) CPU 230"),
    # v2: SSE4.2, POPCNT, CMPXCHG16B, LAHF; AVX2 missing (or AVX not enabled by the OS)
    "AuthenticAMD0600F01_K15_Bulldozer_CPUID.txt": (2, "AuthenticAMD", "Eng Sample"),
    "AuthenticAMD0610F01_K15_Piledriver_CPUID.txt": (2, "AuthenticAMD", "A10-4600M"),
    "AuthenticAMD0700F01_K16_Kabini_CPUID.txt": (2, "AuthenticAMD", "A4-5000"),
    "AuthenticAMD0600F01_X1_x64_CPUID.txt": (2, "AuthenticAMD", "Virtual CPU"),
    "CentaurHauls00307B2_KX6000_01_CPUID.txt": (2, "CentaurHauls", "KX-6000"),
    "GenuineIntel00106A2_Nehalem-EP_CPUID.txt": (2, "GenuineIntel", "Genuine Intel"),
    "GenuineIntel00206A6_SandyBridge_CPUID.txt": (2, "GenuineIntel", "i7-2600K"),
    "GenuineIntel00206A7_SandyBridge4_CPUID.txt": (2, "GenuineIntel", "Pentium(R) CPU G840"),
    "HygonGenuine0900F02_Hygon_CPUID.txt": (2, "HygonGenuine", "Hygon C86 3185"),  # OSXSAVE 0
    # v3: AVX2, FMA, BMI1/2, MOVBE, LZCNT
    "AuthenticAMD0660F51_K15_BristolRidge_CPUID.txt": (3, "AuthenticAMD", "A12-9800"),
    "AuthenticAMD0800F82_K17_PinnacleRidge_01_CPUID.txt": (3, "AuthenticAMD", "Ryzen 5 2600X"),
    "AuthenticAMD0870F10_K17_Matisse_01_CPUID.txt": (3, "AuthenticAMD", "Ryzen 5 3600X"),
    "AuthenticAMD0A20F12_K19_Vermeer_02_CPUID.txt": (3, "AuthenticAMD", "Ryzen 5 5600X3D"),
    "HygonGenuine0900F22_Hygon_01_CPUID.txt": (3, "HygonGenuine", "Hygon C86 3350"),
    "CentaurHauls00607B1_KX7000_05_CPUID.txt": (3, "CentaurHauls", "KX-7000"),
    "GenuineIntel00306C3_Haswell_CPUID.txt": (3, "GenuineIntel", "i7-4770"),
    "GenuineIntel0050671_KnightsLanding_CPUID.txt": (3, "GenuineIntel", "Xeon Phi"),  # AVX-512F/CD only
    "GenuineIntel0090675_AlderLake_00_CPUID.txt": (3, "GenuineIntel", "i3-12100"),
    "GenuineIntel00B06D1_LunarLake_04_CPUID.txt": (3, "GenuineIntel", "Ultra 9 288V"),
    "this-machine-epyc-milan-kvm.cpuid-r.txt": (3, "AuthenticAMD", "AMD EPYC"),
    # v4: AVX-512 F/BW/CD/DQ/VL
    "AuthenticAMD0A60F12_K19_Raphael_01_CPUID.txt": (4, "AuthenticAMD", "Ryzen 5 7600X"),
    "AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt": (4, "AuthenticAMD", "EPYC 9654"),
    "AuthenticAMD0B40F40_K20_GraniteRidge_02_CPUID.txt": (4, "AuthenticAMD", "Ryzen 9 9950X"),
    "AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt": (4, "AuthenticAMD", "EPYC 9655"),
    "CentaurHauls0040672_CNS_04_CPUID.txt": (4, "CentaurHauls", "CentaurHauls CPU"),
    "GenuineIntel0050654_SkylakeX_CPUID.txt": (4, "GenuineIntel", "i9-7900X"),
    "GenuineIntel0050654_SkylakeXeon_CPUID16.txt": (4, "GenuineIntel", "Gold 6146"),
    "GenuineIntel0090672_AlderLake_01_BC_AVX512_CPUID.txt": (4, "GenuineIntel", "i9-12900K"),
    "GenuineIntel00606C1_ICX_01v_CPUID.txt": (4, "GenuineIntel", "D-1718T"),
    "GenuineIntel00806F8_SapphireRapids_05_CPUID.txt": (4, "GenuineIntel", "w7-2475X"),
    "GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt": (4, "GenuineIntel", "658X"),
}


def read(name):
    with open(os.path.join(REAL, name), encoding="latin-1") as f:
        return f.read()


def fmt_of(name):
    return "cpuid-r" if name.endswith(".cpuid-r.txt") else "aida64"


class RealDumpTests(gctest.TestCase):
    def test_every_fixture_has_a_truth_and_a_source(self):
        files = sorted(f for f in os.listdir(REAL) if f.endswith(".txt"))
        self.assertEqual(files, sorted(EXPECTED))
        self.assertGreaterEqual(len(files), 30)
        with open(os.path.join(REAL, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for name in files:
            self.assertIn(name, readme, "README.md names no source for " + name)

    def test_documented_bits_agree_with_the_hand_levels(self):
        # The two truths must agree before either is used against gpucheckup.
        for name, (level, _, _) in EXPECTED.items():
            with self.subTest(dump=name):
                self.assertEqual(truth(read(name))[2], level)

    def test_real_dumps_decode_to_the_documented_flags_and_level(self):
        for name, (level, vendor, brand) in sorted(EXPECTED.items()):
            with self.subTest(dump=name):
                reported, usable, _ = truth(read(name))
                r = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, name))
                c = r.json["cpu"]
                self.assertEqual(c["source"], "dump")
                self.assertEqual(c["dump"]["format"], fmt_of(name))
                self.assertEqual(c["vendor"], vendor)
                self.assertIn(brand, c["brand"])
                self.assertEqual(c["x86_64_level"], level)
                self.assertEqual(c["architecture"], "x86_64" if reported["lm"] else "x86")
                for flag in BITS:
                    self.assertIs(c["cpuid_flags"][flag], reported[flag], "reported " + flag)
                    self.assertIs(c["flags"][flag], usable[flag], "usable " + flag)
                # below-v2 warns exactly when the level is below 2
                self.assertEqual("cpu.below-x86-64-v2" in r.finding_ids(), level < 2)

    def test_avx10_version_and_widths(self):
        # Only Granite Rapids among the real dumps reports AVX10 (CPUID.(7,1):EDX[19]); its leaf 0x24
        # says AVX10.1 with 128/256/512-bit vectors (EBX 0x00070001).
        for name in sorted(EXPECTED):
            with self.subTest(dump=name):
                c = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, name)).json["cpu"]
                if name.startswith("GenuineIntel00A06D1_GraniteRapids"):
                    self.assertEqual(c["avx10"], {"version": 1, "vector_bits": [128, 256, 512]})
                    self.assertTrue(c["flags"]["avx10"])
                else:
                    self.assertIsNone(c["avx10"])
        r = gctest.run("cpu", "--cpuid-dump", os.path.join(REAL, "GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt"))
        self.assertIn("AVX10.1, 128/256/512-bit vectors", r.stdout)
        # --require takes every flag of the table, AVX10 included
        ok = gctest.run("cpu", "--cpuid-dump", os.path.join(REAL, "GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt"),
                        "--require", "avx10")
        self.assertEqual(ok.rc, 0, ok.stderr)
        no = gctest.run("cpu", "--cpuid-dump", os.path.join(REAL, "GenuineIntel00806F8_SapphireRapids_05_CPUID.txt"),
                        "--require", "avx10")
        self.assertNotEqual(no.rc, 0)

    def test_sandy_bridge_without_syscall_bit_is_x86_64_v2(self):
        # Regression: this i7-2600K dump was taken by 32-bit code, so CPUID.80000001H:EDX[11]
        # (SYSCALL) reads 0 though the CPU has it in 64-bit mode. It is x86-64-v2 with AVX.
        name = "GenuineIntel00206A6_SandyBridge_CPUID.txt"
        reported, _, _ = truth(read(name))
        self.assertFalse(reported["syscall"])
        self.assertTrue(reported["lm"])
        r = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, name))
        c = r.json["cpu"]
        self.assertEqual(c["x86_64_level"], 2)
        self.assertFalse(c["flags"]["syscall"])
        self.assertTrue(c["flags"]["avx"])
        self.assertFalse(c["flags"]["avx2"])
        self.assertEqual(c["x86_64_missing"]["v3"], ["avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"])
        self.assertNotIn("cpu.below-x86-64-v2", r.finding_ids())
        t = gctest.run("cpu", "--cpuid-dump", os.path.join(REAL, name))
        self.assertNotIn("not an x86-64 CPU", t.stdout)
        self.assertIn("v2", t.stdout)

    def test_famous_cpus(self):
        # Checked by hand against the vendors' documents.
        cases = {
            # K10: SSE4a and POPCNT, no SSSE3: v1
            "AuthenticAMD0100F42_K10_Deneb_CPUID.txt": {"popcnt": True, "ssse3": False, "abm": True},
            # Haswell: AVX2 + FMA + BMI2, no AVX-512
            "GenuineIntel00306C3_Haswell_CPUID.txt": {"avx2": True, "fma": True, "bmi2": True, "avx512f": False},
            # Skylake-X: AVX-512 F/CD/BW/DQ/VL, no VNNI (Cascade Lake added it)
            "GenuineIntel0050654_SkylakeX_CPUID.txt": {"avx512f": True, "avx512vl": True, "avx512_vnni": False},
            # Zen 4: AVX-512 with BF16 (leaf 7 subleaf 1) and VNNI
            "AuthenticAMD0A60F12_K19_Raphael_01_CPUID.txt": {"avx512f": True, "avx512_bf16": True,
                                                             "avx512_vnni": True, "amx_tile": False},
            # Knights Landing: AVX-512F/CD without BW/DQ/VL
            "GenuineIntel0050671_KnightsLanding_CPUID.txt": {"avx512f": True, "avx512cd": True,
                                                             "avx512bw": False, "avx512vl": False},
            # Sapphire Rapids: AMX
            "GenuineIntel00806F8_SapphireRapids_05_CPUID.txt": {"amx_tile": True, "amx_bf16": True,
                                                                "amx_int8": True, "avx_vnni": True},
            # Alder Lake with AVX-512 left enabled by an early BIOS
            "GenuineIntel0090672_AlderLake_01_BC_AVX512_CPUID.txt": {"avx512f": True, "avx_vnni": True},
            # Hygon dump taken with OSXSAVE 0: AVX reported, not usable
            "HygonGenuine0900F02_Hygon_CPUID.txt": {"avx": False, "avx2": False, "osxsave": False},
        }
        for name, flags in cases.items():
            with self.subTest(dump=name):
                c = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, name)).json["cpu"]
                for f, v in flags.items():
                    self.assertIs(c["flags"][f], v, f)
        c = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, "HygonGenuine0900F02_Hygon_CPUID.txt")).json["cpu"]
        self.assertTrue(c["cpuid_flags"]["avx2"])

    def test_hypervisor_from_an_aida64_dump(self):
        c = self.run_json("cpu", "--cpuid-dump", os.path.join(REAL, "GenuineIntel00606C1_ICX_01v_CPUID.txt")).json["cpu"]
        self.assertEqual(c["hypervisor"], {"present": True, "vendor": "Hyper-V", "signature": "Microsoft Hv"})

    def test_cpuid_r_capture_of_this_machine_kind(self):
        c = self.run_json("cpu", "--cpuid-dump",
                          os.path.join(REAL, "this-machine-epyc-milan-kvm.cpuid-r.txt")).json["cpu"]
        self.assertEqual(c["dump"]["format"], "cpuid-r")
        self.assertEqual(c["dump"]["logical_cpus"], 2)
        self.assertEqual(c["hypervisor"]["vendor"], "KVM")
        self.assertIsNone(c["dump"]["libcpuid_version"])
        self.assertFalse(c["dump"]["has_xcr0"])


    def test_save_converts_to_libcpuid_format(self):
        # --save-cpuid writes what was read (here an AIDA64 report) in libcpuid's format plus
        # gpucheckup's extras; it decodes the same.
        t = self.make_tree()
        out = t.path("spr.dump")
        src = os.path.join(REAL, "GenuineIntel00806F8_SapphireRapids_05_CPUID.txt")
        a = self.run_json("cpu", "--cpuid-dump", src, "--save-cpuid", out).json["cpu"]
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("basic_cpuid[7]=", text)
        self.assertIn("gpucheckup.cpuid_7_1=", text)
        self.assertNotIn("gpucheckup.xcr0", text)  # the report recorded none: nothing invented
        b = self.run_json("cpu", "--cpuid-dump", out).json["cpu"]
        self.assertEqual(b["dump"]["format"], "libcpuid")
        self.assertEqual(b["cpuid_flags"], a["cpuid_flags"])
        self.assertEqual(b["flags"], a["flags"])
        self.assertEqual(b["x86_64_level"], 4)


class DumpFormatTests(gctest.TestCase):
    def bad(self, path, words):
        r = gctest.run("cpu", "--cpuid-dump", path)
        self.assertEqual(r.rc, 2, r.stderr)
        self.assertIn("--cpuid-dump " + path, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        j = self.run_json("cpu", "--cpuid-dump", path, expect_rc=2)
        self.assertIn(path, j.json["error"]["message"])

    def test_unknown_format_names_the_accepted_ones(self):
        t = self.make_tree()
        # x86info's and a Windows "coreinfo" style are not read: an error, never an empty answer
        p = t.write("x86info.txt", "eax in: 0x00000000, eax = 0000000d ebx = 756e6547 ecx = 6c65746e edx = 49656e69\n")
        self.bad(p, ["not a CPUID dump in a format gpucheckup reads", "libcpuid", "AIDA64", "cpuid -r",
                     "/dev/cpu/N/cpuid"])

    def test_aida64_bad_register_line(self):
        t = self.make_tree()
        lines = read("GenuineIntel0050654_SkylakeX_CPUID.txt").splitlines()
        n = next(i for i, l in enumerate(lines, 1) if l.startswith("CPUID 00000001:"))
        lines[n - 1] = "CPUID 00000001: 00050654-0010"  # cut short
        self.bad(t.write("cut.txt", "\n".join(lines) + "\n"), ["line %d" % n, "AIDA64/InstLatx64"])

    def test_aida64_without_leaf_1(self):
        t = self.make_tree()
        text = "".join(l + "\n" for l in read("GenuineIntel0050654_SkylakeX_CPUID.txt").splitlines()
                       if not l.startswith("CPUID 00000001:"))
        self.bad(t.write("noleaf1.txt", text), ["decodes to nothing", "leaf 0 and leaf 1"])

    def test_cpuid_r_bad_line(self):
        t = self.make_tree()
        text = read("this-machine-epyc-milan-kvm.cpuid-r.txt").replace("ecx=0x", "ecx=", 1)
        self.bad(t.write("bad.txt", text), ["line 2", "`cpuid -r`"])

    def test_windows_line_endings(self):
        t = self.make_tree()
        text = read("GenuineIntel0050654_SkylakeX_CPUID.txt").replace("\n", "\r\n")
        c = self.run_json("cpu", "--cpuid-dump", t.write("crlf.txt", text)).json["cpu"]
        self.assertEqual(c["x86_64_level"], 4)

    def test_dev_cpu_cpuid(self):
        # Linux's cpuid module: readable by root. Compare with the live CPUID of this very machine.
        path = "/dev/cpu/0/cpuid"
        if not os.access(path, os.R_OK):
            self.skipTest("%s is not readable here (needs root and the cpuid module)" % path)
        c = self.run_json("cpu", "--cpuid-dump", path).json["cpu"]
        live = self.run_json("cpu").json["cpu"]
        self.assertEqual(c["dump"]["format"], "dev-cpuid")
        self.assertEqual(c["brand"], live["brand"])
        self.assertEqual(c["cpuid_flags"], live["cpuid_flags"])
        self.assertEqual(c["x86_64_level"], live["x86_64_level"])

    def test_other_character_device(self):
        self.bad("/dev/null", ["not a /dev/cpu/N/cpuid device"])


if __name__ == "__main__":
    gctest.main()
