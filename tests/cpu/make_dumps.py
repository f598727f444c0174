#!/usr/bin/env python3
"""make_dumps.py: derive the test CPUID dumps from the one captured on a real machine.

dumps/epyc-milan-kvm.dump was written by `gpucheckup cpu --save-cpuid` on an AMD EPYC (Zen 3) KVM
guest with AVX2 and no AVX-512. Every other dump in dumps/ is derived from it here, by clearing or
setting CPUID bits and gpucheckup's extras. Run `python3 tests/cpu/make_dumps.py` to regenerate them
after an intended change; the e2e test checks that the committed files match what this writes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DUMPS = os.path.join(HERE, "dumps")
BASE = "epyc-milan-kvm.dump"
SEPARATOR = "-" * 80

# Bits (leaf, register, bit), as the Intel SDM and AMD APM number them.
L1_ECX = ("basic_cpuid", 1, 2)
L1_EDX = ("basic_cpuid", 1, 3)
L7_EBX = ("basic_cpuid", 7, 1)
L7_ECX = ("basic_cpuid", 7, 2)
BITS = {
    "sse3": (L1_ECX, 0), "ssse3": (L1_ECX, 9), "fma": (L1_ECX, 12), "cx16": (L1_ECX, 13),
    "sse4_1": (L1_ECX, 19), "sse4_2": (L1_ECX, 20), "movbe": (L1_ECX, 22), "popcnt": (L1_ECX, 23),
    "aes": (L1_ECX, 25), "xsave": (L1_ECX, 26), "osxsave": (L1_ECX, 27), "avx": (L1_ECX, 28),
    "f16c": (L1_ECX, 29), "hypervisor": (L1_ECX, 31),
    "bmi1": (L7_EBX, 3), "avx2": (L7_EBX, 5), "bmi2": (L7_EBX, 8), "avx512f": (L7_EBX, 16),
    "avx512dq": (L7_EBX, 17), "avx512cd": (L7_EBX, 28), "avx512bw": (L7_EBX, 30), "avx512vl": (L7_EBX, 31),
    "avx512_vnni": (L7_ECX, 11),
}
AVX_FAMILY = ["avx", "fma", "f16c", "avx2"]


class Dump:
    """A dump as lines: libcpuid's part (name[i] -> 4 words) and gpucheckup's extras."""

    def __init__(self, text):
        head, _, tail = text.partition(SEPARATOR + "\n")
        self.lines = head.splitlines()
        self.extras = {}
        for line in tail.splitlines():
            if line.startswith("gpucheckup.") and "=" in line:
                k, v = line.split("=", 1)
                if k != "gpucheckup.note":
                    self.extras[k[len("gpucheckup."):]] = v

    def _find(self, array, index):
        prefix = "%s[%d]=" % (array, index)
        for i, line in enumerate(self.lines):
            if line.startswith(prefix):
                return i, [int(w, 16) for w in line[len(prefix):].split()]
        raise KeyError(prefix)

    def get(self, array, index, reg):
        return self._find(array, index)[1][reg]

    def set(self, array, index, reg, value):
        i, words = self._find(array, index)
        words[reg] = value & 0xffffffff
        self.lines[i] = "%s[%d]=%s" % (array, index, " ".join("%08x" % w for w in words))

    def flag(self, name, on):
        (array, index, reg), bit = BITS[name]
        v = self.get(array, index, reg)
        self.set(array, index, reg, v | (1 << bit) if on else v & ~(1 << bit))

    def text(self, extras=True):
        out = "\n".join(self.lines) + "\n"
        if extras and self.extras:
            out += SEPARATOR + "\n"
            out += "gpucheckup.note=gpucheckup's additions below: libcpuid stops reading at the line above\n"
            for k in ("cpuid_7_1", "cpuid_40000000", "cpuid_40000100", "xcr0"):
                if k in self.extras:
                    out += "gpucheckup.%s=%s\n" % (k, self.extras[k])
        return out


def base():
    with open(os.path.join(DUMPS, BASE)) as f:
        return Dump(f.read())


def bare_metal(d):
    """No hypervisor: clear the bit and drop the hypervisor leaf."""
    d.flag("hypervisor", False)
    d.extras.pop("cpuid_40000000", None)


def without_avx(d):
    """A CPU without AVX: no AVX family, and only x87+SSE state (leaf 0xD and XCR0 = 3)."""
    for f in AVX_FAMILY:
        d.flag(f, False)
    d.set("basic_cpuid", 13, 0, 3)
    d.extras["xcr0"] = "%016x" % 3


def with_avx512(d, xcr0):
    for f in ("avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni"):
        d.flag(f, True)
    d.set("basic_cpuid", 7, 0, 1)  # leaf 7 now has subleaf 1
    d.set("basic_cpuid", 13, 0, 0xe7)
    d.extras["cpuid_7_1"] = "%08x %08x %08x %08x" % (1 << 5, 0, 0, 0)  # AVX512_BF16
    d.extras["xcr0"] = "%016x" % xcr0


def derived():
    """name -> (dump text, what it models)."""
    out = {}

    d = base()
    out["epyc-milan-kvm-libcpuid.dump"] = (d.text(extras=False), "the capture without gpucheckup's extras, as "
                                           "libcpuid's cpuid_tool --save writes it")

    d = base()
    bare_metal(d)
    without_avx(d)
    out["no-avx.dump"] = (d.text(), "bare metal CPU without AVX (x86-64-v2)")

    d = base()
    without_avx(d)
    out["vm-hides-avx.dump"] = (d.text(), "KVM guest whose virtual CPU model hides AVX")

    d = base()
    d.extras["xcr0"] = "%016x" % 3
    out["avx-disabled-xcr0.dump"] = (d.text(), "AVX reported, XCR0 = 0x3 (AVX state not enabled)")

    d = base()
    d.flag("osxsave", False)
    d.extras.pop("xcr0", None)
    out["avx-disabled-osxsave.dump"] = (d.text(), "AVX reported, OSXSAVE = 0 (the OS did not enable XSAVE)")

    d = base()
    bare_metal(d)
    without_avx(d)
    for f in ("sse4_1", "sse4_2", "popcnt", "movbe"):
        d.flag(f, False)
    out["pre-v2.dump"] = (d.text(), "bare metal CPU before x86-64-v2 (Core 2 era: no SSE4.1/4.2, POPCNT)")

    d = base()
    with_avx512(d, 0xe7)
    out["avx512.dump"] = (d.text(), "AVX-512 with BF16, enabled by the OS (x86-64-v4)")

    d = base()
    with_avx512(d, 0x7)
    out["avx512-disabled-xcr0.dump"] = (d.text(), "AVX-512 reported, XCR0 = 0x7 (AVX-512 state not enabled)")

    d = base()
    with_avx512(d, 0xe7)
    out["avx512-libcpuid.dump"] = (d.text(extras=False), "AVX-512 without extras: leaf 7 subleaf 1 not recorded")

    d = base()
    body = "\n".join(line for line in d.lines if not line.startswith("version="))
    multi = "version=0.6.2\n"
    for cpu in range(2):
        multi += "\n_________________ Logical CPU #%d _________________\n" % cpu + body + "\n"
    out["epyc-milan-kvm-all.dump"] = (multi, "both logical CPUs, as cpuid_serialize_all_raw_data writes them")
    return out


def main():
    check = "--check" in sys.argv
    stale = []
    for name, (text, _) in sorted(derived().items()):
        path = os.path.join(DUMPS, name)
        if check:
            try:
                with open(path) as f:
                    if f.read() != text:
                        stale.append(name)
            except OSError:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("stale dumps (run tests/cpu/make_dumps.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
