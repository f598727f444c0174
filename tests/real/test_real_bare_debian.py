"""gpucheckup on the Quick start's machine: a bare Debian 12 root (tests/real/fetch-bookworm-root) with none of the optional stacks."""
import os
import re
import subprocess

import gctest

FETCH = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-bookworm-root")
LSAN_SUPP = os.path.join(gctest.SOURCE_ROOT, "tests", "lsan.supp")
# Inside a private mount namespace: the root's own /proc and a sysfs (this machine's devices, as on the
# Quick start's machine), a tmpfs on its /tmp holding this build's binary (the cached root is never
# written), then the binary run chrooted with a clean environment. "$1" the root, "$2" the binary,
# "$3" the LSan suppressions, then gpucheckup's arguments.
IN_ROOT = r'''set -e
root=$1 bin=$2 supp=$3
shift 3
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t tmpfs tmpfs "$root/tmp"
mkdir "$root/tmp/gc"
cp "$bin" "$root/tmp/gc/gpucheckup"
cp "$supp" "$root/tmp/gc/lsan.supp"
set +e
exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    ${ASAN_OPTIONS+"ASAN_OPTIONS=$ASAN_OPTIONS"} ${UBSAN_OPTIONS+"UBSAN_OPTIONS=$UBSAN_OPTIONS"} \
    ${LSAN_OPTIONS+"LSAN_OPTIONS=suppressions=/tmp/gc/lsan.supp:print_suppressions=0"} \
    /tmp/gc/gpucheckup "$@"
'''
# What each stack says when it is not installed on a machine without a GPU of its own (its summary line
# and its words), and the files whose absence makes it so (checked in the root first).
ABSENT = {
    "rocm": ("ROCm", "not installed (no AMD GPU here)", "libhsa-runtime64.so.1"),
    "levelzero": ("Level Zero", "not installed (no Intel GPU here)", "libze_loader.so.1"),
    "opencl": ("OpenCL", "not installed: no OpenCL loader, so no platform", "libOpenCL.so.1"),
    "icd": ("OpenCL loader", "not installed: no OpenCL ICD loader (libOpenCL.so.1)", "libOpenCL.so.1"),
    "vulkan": ("Vulkan", "not installed", "libvulkan.so.1"),
    "cuda": ("CUDA", "no NVIDIA driver: libcuda.so.1 not found (no NVIDIA GPU)", "libcuda.so.1"),
}
VENDOR_OF = {"rocm": "1002", "levelzero": "8086", "cuda": "10de"}


class BareDebianTest(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("this test makes a Debian 12 root with mmdebstrap and runs gpucheckup in it with "
                                 "unshare and chroot: run it as root")
        p = subprocess.run([FETCH, gctest.GPUCHECKUP], capture_output=True, text=True, timeout=1500)
        if p.returncode != 0:
            raise AssertionError("tests/real/fetch-bookworm-root failed (rc %d; is mmdebstrap installed, the "
                                 "Debian mirror reachable?):\n%s" % (p.returncode, p.stderr[-3000:]))
        cls.root = p.stdout.strip().splitlines()[-1]

    def run_bare(self, *args):
        proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", IN_ROOT, "sh",
                               self.root, gctest.GPUCHECKUP, LSAN_SUPP, *args],
                              capture_output=True, text=True, timeout=300)
        return gctest.Result(proc, list(args))

    def test_root_has_no_optional_stack(self):
        # the premise: none of the libraries the optional stacks need is anywhere in the root
        found = []
        for top in ("usr", "etc"):
            for d, _, files in os.walk(os.path.join(self.root, top)):
                found += [os.path.join(d, f) for f in files
                          if f.split(".so")[0] in ("libOpenCL", "libhsa-runtime64", "libze_loader", "libvulkan",
                                                   "libcuda", "libamdhip64", "libpython3")]
        self.assertEqual(found, [])
        self.assertFalse(os.path.exists(os.path.join(self.root, "etc/OpenCL/vendors")))

    def test_json_ready_no_warning_plain_words(self):
        r = self.run_bare("--json")
        doc = r.json  # the suite's property: no Summary line marked worse than its findings
        gctest.validate(doc)
        gpus = gctest.bus_gpus(doc)
        vendors = {d.get("vendor_id") for d in gpus}
        self.assertEqual(r.rc, 1 if gpus else 0, repr(r))
        if not gpus:
            # the Quick start's machine: nothing to warn about, every line information at most
            self.assertEqual([(f["id"], f["severity"]) for f in doc["findings"] if f["severity"] != "info"], [],
                             repr(r))
            self.assertEqual((doc["verdict"]["counts"]["warning"], doc["verdict"]["counts"]["error"]), (0, 0))
            for name, sec in doc.items():
                if isinstance(sec, dict) and "summary" in sec:
                    for line in sec["summary"]:
                        self.assertIn(line["mark"], ("ok", "info", "skipped"), (name, line))
        for name, (label, words, _) in ABSENT.items():
            if VENDOR_OF.get(name) in vendors or (name in ("opencl", "icd", "vulkan") and gpus):
                continue  # a GPU of its own on this bus: the line says what is missing for it (and is no info)
            lines = [(l["mark"], l["label"], l["text"]) for l in doc[name]["summary"]]
            self.assertIn(("info", label, words), lines, name)

    def test_text_summary_has_no_fail_or_warn(self):
        r = self.run_bare("--color=never")
        if gctest.bus_gpus(self.run_bare("--json").json):
            self.assertEqual(r.rc, 1, repr(r))
            return
        self.assertEqual(r.rc, 0, repr(r))
        summary = r.stdout.split("\nSummary\n", 1)[1].split("\n\n", 1)[0]
        self.assertNotRegex(summary, re.compile(r"\[(FAIL|warn)\]"), r.stdout)
        for label, words, _ in ABSENT.values():
            self.assertRegex(summary, re.compile(r"\[info\] %s +%s$" % (re.escape(label), re.escape(words)), re.M))
        self.assertIn("\nOpenCL: not available: ", r.stdout)
        self.assertNotIn("GPU compute (OpenCL)", r.stdout)  # one OpenCL verdict line, not two
        self.assertRegex(r.stdout, r"\nVerdict: ready \(0 warnings\)")
        self.assertNotRegex(summary, r"no-loader|no-library")  # status codes are no words for people
        self.assertNotRegex(r.stdout, r"cannot load (\S+): \1:")  # glibc's text names the library once


if __name__ == "__main__":
    gctest.main()
