"""The real NVIDIA Vulkan driver (Debian 12's 535 libGLX_nvidia.so.0 and its nvidia_icd.json) on this machine
without an NVIDIA GPU (issue 28): the vulkan probe and the full check call it vulkan.absent-hardware (info), never
a warning or an error, and the run exits 0. As root inside tests/real/private-dev: no device node appears in /dev.
LD_DEBUG=files (every process writes to LD_DEBUG_OUTPUT) proves the driver really ran, in a child and not in
gpucheckup itself: libGLX_nvidia, and the libnvidia-glvkspirv it dlopens on its own, are loaded there."""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile

import gctest
import nvidia_real

LINE = re.compile(r"^\s*(\d+):\s+file=(\S+) \[\d+\];\s+(?:dynamically loaded by|needed by)")


class RealNvidiaVulkanTests(gctest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gc-real-vulkan-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if os.geteuid() != 0:
            self.fail("e2e-real-nvidia-vulkan runs the real NVIDIA driver as root inside tests/real/private-dev "
                      "to check that it creates no device node: run it as root")
        if os.path.exists("/dev/nvidiactl"):
            self.fail("/dev/nvidiactl exists on this machine: the test needs a machine without it")
        self.nv = nvidia_real.fetch(self)
        # libGLX_nvidia and only the libraries it needs: not libcuda, so only the Vulkan driver is NVIDIA's here
        self.libs = os.path.join(self.tmp, "lib")
        if not os.path.isdir(self.libs):
            os.makedirs(self.libs)
            for f in [self.nv.glx] + self.nv.gl_libs:
                os.symlink(f, os.path.join(self.libs, os.path.basename(f)))

    def run_private(self, name, manifest, *args):
        """gpucheckup ARGS as root in a private /dev, seeing only MANIFEST as Vulkan driver, with LD_DEBUG=files:
        (process, report, nodes that appeared, {pid: [file, ...]}, gpucheckup's pid)."""
        out = os.path.join(self.tmp, name)
        os.makedirs(out)
        env = dict(os.environ, VK_DRIVER_FILES=manifest, LD_LIBRARY_PATH=self.libs, LD_DEBUG="files",
                   LD_DEBUG_OUTPUT=os.path.join(out, "ld"))
        for k in ("VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE",
                  "__NV_PRIME_RENDER_OFFLOAD"):
            env.pop(k, None)
        p = subprocess.run([nvidia_real.PRIVATE_DEV, os.path.join(out, "new"), gctest.GPUCHECKUP,
                            *gctest._timeout_args(args)], capture_output=True, text=True, env=env, timeout=300)
        with open(os.path.join(out, "new"), encoding="utf-8") as f:
            appeared = [line for line in f.read().splitlines() if line]
        doc = json.loads(p.stdout)
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(p.stdout)
        loads = {}
        for f in glob.glob(os.path.join(out, "ld.*")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = LINE.match(line)
                    if m:
                        loads.setdefault(int(m.group(1)), []).append(os.path.basename(m.group(2)))
        parent = min(int(os.path.basename(f).split(".")[1]) for f in glob.glob(os.path.join(out, "ld.*")))
        return p, doc, appeared, loads, parent

    def check(self, p, doc, appeared, loads, parent, manifest, library):
        self.assertEqual(appeared, [], "the real NVIDIA driver run created nodes in /dev: %s\nstderr: %s"
                         % (appeared, p.stderr[-2000:]))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertNotIn("warning", p.stderr.lower(), p.stderr[-2000:])
        # the real driver ran, in a child: libGLX_nvidia and what it dlopens itself (not a DT_NEEDED)
        children = {f for pid, v in loads.items() if pid != parent for f in v}
        self.assertIn("libGLX_nvidia.so.0", children, loads)
        self.assertIn("libnvidia-glvkspirv.so." + self.nv.version, children, loads)
        self.assertNotIn("libGLX_nvidia.so.0", loads.get(parent, []))
        vk = doc["vulkan"]
        self.assertEqual(vk["status"], "ok", vk)
        self.assertEqual(vk["devices"], [], vk)
        self.assertEqual(len(vk["drivers"]), 1, vk["drivers"])
        d = vk["drivers"][0]
        self.assertEqual((d["manifest"], d["library"], d["status"]), (manifest, library, "absent-hardware"), d)
        self.assertIn("NVIDIA GPU", d["detail"], d)
        found = [f for f in doc["findings"] if f["id"] == "vulkan.absent-hardware"]
        self.assertEqual([f["severity"] for f in found], ["info"], doc["findings"])
        self.assertIn(manifest, found[0]["message"])
        bad = [(f["id"], f["severity"]) for f in doc["findings"] if f["severity"] in ("warning", "error")]
        self.assertEqual(bad, [], "a healthy machine without an NVIDIA GPU got a warning or an error")
        return d

    def test_vulkan_probe_with_the_absolute_path(self):
        """The shipped manifest rewritten to name libGLX_nvidia by its absolute path (as some installs do)."""
        with open(self.nv.vulkan_manifest, encoding="utf-8") as f:
            m = json.load(f)
        self.assertEqual(m["ICD"]["library_path"], "libGLX_nvidia.so.0", m)
        lib = os.path.join(self.libs, "libGLX_nvidia.so.0")
        m["ICD"]["library_path"] = lib
        manifest = os.path.join(self.tmp, "nvidia_icd.json")
        with open(manifest, "w", encoding="utf-8") as f:
            json.dump(m, f)
        r = self.run_private("vulkan", manifest, "vulkan", "--json")
        self.check(*r, manifest, lib)

    def test_full_check_with_the_shipped_manifest(self):
        """nvidia_icd.json as Debian ships it (a bare library name, found on LD_LIBRARY_PATH): the full check."""
        r = self.run_private("full", self.nv.vulkan_manifest, "--json")
        self.check(*r, self.nv.vulkan_manifest, "libGLX_nvidia.so.0")
        doc = r[1]
        self.assertEqual(doc["verdict"]["exit_code"], 0, doc["verdict"])
        self.assertEqual((doc["verdict"]["counts"]["warning"], doc["verdict"]["counts"]["error"]), (0, 0),
                         doc["verdict"])
        self.assertFalse(doc["verdict"]["targets"]["vulkan"]["ready"], doc["verdict"])


if __name__ == "__main__":
    gctest.main()
