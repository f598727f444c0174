"""Verdict reasons scoped to the GPUs a compute API can drive (issue 36 part 1), on four NVIDIA-only trees made from
the captured H100 fixture: module 535 under 580 libraries, no module for the running kernel, the GPU unbound with
Secure Boot on, a container started without --gpus. Level Zero and HIP speak of no NVIDIA finding; the NVIDIA
paths (the gpu target, CUDA) still do. Also every captured fixture, whole (`check`), against gcscope's properties."""
import glob
import os
import re
import shutil
import tarfile

import gcscope
import gctest
from test_cuda import CudaBase

FIXTURES = os.path.join(gctest.SOURCE_ROOT, "tests", "fixtures")
H100 = os.path.join(FIXTURES, "h100-nvidia-cuda-container", "tree.tar.gz")
GPU = "0000:00:06.0"  # the fixture's H100
KREL = "6.8.0-51-generic"
SECURE_BOOT = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def unpack(tarball, dest):
    with tarfile.open(tarball) as t:
        for m in t.getmembers():
            if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir() or m.issym()):
                raise ValueError("unsafe member %r in %s" % (m.name, tarball))
        t.extractall(dest)


class ScopeTests(CudaBase):
    # ---- the four trees ------------------------------------------------------------------------

    def h100(self):
        t = self.make_tree()
        unpack(H100, t.root)
        return t

    def remove(self, t, *rels):
        for rel in rels:
            p = t.path(rel)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.unlink(p)

    def unload_nvidia(self, t):
        """No nvidia module loaded and the GPU bound to nothing (what the kernel shows when none could load)."""
        with open(t.path("/proc/modules")) as f:
            mods = [m for m in f if not m.startswith("nvidia")]
        t.write("/proc/modules", "".join(mods))
        self.remove(t, "/proc/driver/nvidia", "/sys/module/nvidia", "/sys/module/nvidia_uvm")
        dev = os.path.realpath(t.path("/sys/bus/pci/devices/" + GPU))
        self.assertTrue(dev.startswith(t.root), dev)
        self.remove(t, dev[len(t.root):] + "/driver")
        t.write("/proc/sys/kernel/osrelease", KREL + "\n")

    def version_mismatch(self):
        """A driver upgrade without a reboot: the module still 535, the libraries 580.159.04."""
        t = self.h100()
        with open(t.path("/proc/driver/nvidia/version")) as f:
            text = f.read()
        t.write("/proc/driver/nvidia/version", text.replace("580.159.04", "535.261.03"))
        t.write("/sys/module/nvidia/version", "535.261.03\n")
        return t, "drv.nvidia-version-mismatch"

    def not_built(self):
        """A new kernel without headers: DKMS built the module for the previous kernel only."""
        t = self.h100()
        self.unload_nvidia(t)
        t.write("/lib/modules/%s/modules.dep" % KREL, "kernel/sound/core/snd.ko:\n")
        t.mkdir("/var/lib/dkms/nvidia/580.159.04/6.8.0-45-generic/x86_64/module")
        t.mkdir("/var/lib/dkms/nvidia/580.159.04/source")
        return t, "drv.nvidia-not-built"

    def secure_boot(self):
        """The module is built for this kernel but not loaded, the GPU unbound, Secure Boot on."""
        t = self.h100()
        self.unload_nvidia(t)
        t.write("/lib/modules/%s/modules.dep" % KREL, "updates/dkms/nvidia.ko.zst:\n")
        t.write(SECURE_BOOT, b"\x06\x00\x00\x00\x01")
        return t, "pci.no-driver"

    def container_without_gpus(self):
        """docker run without --gpus on the H100 host: the host's sysfs and module, no /dev/nvidia*."""
        t = self.h100()
        self.remove(t, "/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")
        t.write("/.dockerenv", "")
        t.write("/proc/1/cgroup", "0::/\n")
        t.write("/proc/mounts", "overlay / overlay rw,relatime,lowerdir=/var/lib/docker/overlay2/l/A 0 0\n"
                                "tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755 0 0\n")
        return t, "container.no-gpu"

    TREES = ("version_mismatch", "not_built", "secure_boot", "container_without_gpus")

    # ---- what the lines say --------------------------------------------------------------------

    def nvidia_reasons(self, doc, reasons):
        """The reasons among REASONS whose findings speak of NVIDIA only."""
        return [rid for rid in reasons
                if {gcscope.finding_vendor(doc, f) for f in doc["findings"] if f["id"] == rid} == {"nvidia"}]

    def assert_other_vendors_clean(self, r, what):
        doc = r.json
        targets = doc["verdict"]["targets"]
        for name, prefix, vendor in (("levelzero", "Level Zero", "Intel"), ("rocm", "HIP (ROCm)", "AMD")):
            self.assertEqual(self.nvidia_reasons(doc, targets[name]["reasons"]), [], "%s: %s %r" % (what, name, r))
            line = [ln for ln in doc["verdict"]["text"].splitlines() if ln.startswith(prefix + ":")]
            self.assertEqual(len(line), 1, "%s: %r" % (what, r))
            # "not available (no Intel GPU listed)", or with a loader on this machine "not available: A Level Zero
            # loader without its hardware: ... no Intel GPU on the PCI bus ..."
            self.assertRegex(line[0], r"^%s: not available\b.*\bno %s GPU" % (re.escape(prefix), vendor), what)
            self.assertNotRegex(line[0], r"(?i)nvidia", what)

    def test_tree_mode(self):
        """--root alone (no library is run): Level Zero and HIP are "not available" for want of their vendor's
        GPU; the gpu target, which any vendor's GPU can serve, names the NVIDIA finding."""
        for tree in self.TREES:
            with self.subTest(tree=tree):
                t, want = getattr(self, tree)()
                r = self.run_json("--root", t.root, expect_rc=1)
                self.assertIn(want, r.finding_ids(), "%s: %r" % (tree, r))
                self.assert_other_vendors_clean(r, tree)
                gpu = r.json["verdict"]["targets"]["gpu"]
                self.assertFalse(gpu["ready"], tree)
                self.assertIn(want, gpu["reasons"], "%s: %r" % (tree, r))

    def test_live_cuda_lines_name_the_nvidia_cause(self):
        """With the suite's fake libcuda run against the tree, every CUDA target still names an NVIDIA reason,
        and Level Zero and HIP still none."""
        env = {"version_mismatch": {"GC_FAKE_CUDA_INIT": "803"}, "not_built": {"GC_FAKE_CUDA_INIT": "100"},
               "secure_boot": {"GC_FAKE_CUDA_INIT": "100"}, "container_without_gpus": {"GC_FAKE_CUDA_INIT": "100"}}
        for tree in self.TREES:
            with self.subTest(tree=tree):
                t, want = getattr(self, tree)()
                r = self.cuda(t, self.libdir(), env=env[tree], command="check", expect_rc=1)
                self.assert_other_vendors_clean(r, tree)
                targets = r.json["verdict"]["targets"]
                cuda = [n for n in targets if re.fullmatch(r"cuda[0-9]+", n)]
                self.assertTrue(cuda, "%s: %r" % (tree, r))
                for name in cuda:
                    self.assertFalse(targets[name]["ready"], "%s %s" % (tree, name))
                    self.assertTrue(self.nvidia_reasons(r.json, targets[name]["reasons"]), "%s %s: %r" % (tree, name, r))
                if tree == "secure_boot":
                    self.assertIn("cuda.secure-boot-module", targets[cuda[0]]["reasons"], repr(r))
                else:
                    self.assertIn(want, targets[cuda[0]]["reasons"], "%s: %r" % (tree, r))

    # ---- a cause must be able to cause ------------------------------------------------------------

    def test_missing_nvml_is_no_consequence_of_a_node_or_the_module(self):
        """Issue 36: with /dev/nvidia-uvm removed, and with the module at 535 under 580 libraries, a
        libnvidia-ml.so.1 the loader cannot find was shown "caused by" the node or the mismatch. It is a
        packaging fact: its own root, while cuInit's failure is still the node's or the module's."""
        no_uvm = self.h100()
        self.remove(no_uvm, "/dev/nvidia-uvm")
        for t, state, init_id in ((no_uvm, "dev.missing-node", "cuda.uvm-missing"),
                                  (self.version_mismatch()[0], "drv.nvidia-version-mismatch", "cuda.init-failed")):
            with self.subTest(state=state):
                d = self.libdir()
                os.unlink(os.path.join(d, "libnvidia-ml.so.1"))  # the driver's libcuda without its NVML
                r = self.cuda(t, d, env={"GC_FAKE_CUDA_INIT": "999"}, command="check", expect_rc=1)
                self.assertIn(state, r.finding_ids(), repr(r))
                (nvml,) = r.findings("cuda.nvml-missing")
                self.assertIn("cannot open shared object file", nvml["message"], repr(r))
                self.assertIsNone(nvml["caused_by"], repr(r))
                # cuInit's failure is the node's or the module's consequence (a state explains a state)
                (init,) = r.findings(init_id)
                self.assertEqual((init["caused_by"] or {}).get("id"), state, repr(r))

    # ---- every captured fixture ------------------------------------------------------------------

    def test_every_fixture_whole(self):
        """Each captured tree replayed with the whole `check` (not only `pci`, which the fixture test compares):
        run_json holds every report to gcscope's properties; here they must also have been judged."""
        found = sorted(glob.glob(os.path.join(FIXTURES, "*", "tree.tar.gz")))
        self.assertTrue(found)
        for tarball in found:
            with self.subTest(fixture=os.path.basename(os.path.dirname(tarball))):
                t = self.make_tree()
                unpack(tarball, t.root)
                r = self.run_json("--root", t.root)
                self.assertIn(r.rc, (0, 1), repr(r))
                self.assertEqual(gcscope.scope_violations(r.json, gctest.GPUCHECKUP), [])
                self.assertEqual(gcscope.cause_violations(r.json, gctest.GPUCHECKUP), [])


if __name__ == "__main__":
    gctest.main()
