"""The real NVIDIA Vulkan driver (Debian 12's 535 libGLX_nvidia.so.0 and its nvidia_icd.json) on this machine
without an NVIDIA GPU (issue 28): the vulkan probe and the full check call it vulkan.absent-hardware (info), never
a warning or an error, and the run exits 0. As root inside tests/real/private-dev: no device node appears in /dev.
LD_DEBUG=files (every process writes to LD_DEBUG_OUTPUT) proves the driver really ran, in a child and not in
gpucheckup itself: libGLX_nvidia, and the libnvidia-glvkspirv it dlopens on its own, are loaded there.
With an NVIDIA GPU on a fake bus the same driver is vulkan.init-failed, and the loader's own words (evidence) tell
the driver refusing (it cannot reach its GPU) from libGLX_nvidia failing to load (a library it needs is missing):
both are VK_ERROR_INCOMPATIBLE_DRIVER."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import gctest
import nvidia_real

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the pci tests' fake sysfs trees)

LINE = re.compile(r"^\s*(\d+):\s+file=(\S+) \[\d+\];\s+(?:dynamically loaded by|needed by)")


class RealNvidiaVulkanTests(nvidia_real.RootCase):
    TMP_PREFIX = "gc-real-vulkan-"
    ROOT_WHY = ("e2e-real-nvidia-vulkan runs the real NVIDIA driver as root inside tests/real/private-dev "
                "to check that it creates no device node: run it as root")
    NO_NODE = True

    def setUp(self):
        super().setUp()
        # libGLX_nvidia and only the libraries it needs: not libcuda, so only the Vulkan driver is NVIDIA's here
        self.libs = os.path.join(self.tmp, "lib")
        if not os.path.isdir(self.libs):
            os.makedirs(self.libs)
            for f in [self.nv.glx] + self.nv.gl_libs:
                os.symlink(f, os.path.join(self.libs, os.path.basename(f)))

    def run_private(self, name, manifest, *args, libs=None):
        """gpucheckup ARGS as root in a private /dev, seeing only MANIFEST as Vulkan driver (None: the manifests of
        a --root tree), LIBS (default self.libs) on the library path, with LD_DEBUG=files:
        (process, report, nodes that appeared, {pid: [file, ...]}, gpucheckup's pid)."""
        out = os.path.join(self.tmp, name)
        os.makedirs(out)
        env = dict(os.environ, LD_LIBRARY_PATH=libs or self.libs, LD_DEBUG="files", LD_DEBUG_OUTPUT=os.path.join(out, "ld"))
        for k in ("VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DRIVERS_SELECT",
                  "VK_LOADER_DRIVERS_DISABLE", "VK_LOADER_DEBUG", "__NV_PRIME_RENDER_OFFLOAD", "XDG_CONFIG_HOME",
                  "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_DATA_DIRS"):
            env.pop(k, None)
        if manifest:
            env["VK_DRIVER_FILES"] = manifest
        else:
            env["HOME"] = "/nonexistent"
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

    def gpu_tree_run(self, name, libs):
        """`vulkan --root T --live` on a tree with a healthy NVIDIA GPU on its bus whose one Vulkan manifest names
        LIBS/libGLX_nvidia.so.0 (the children load the real one): the driver's vulkan.init-failed finding."""
        t = PciTree(self.make_tree())
        t.healthy_nvidia()
        lib = os.path.join(libs, "libGLX_nvidia.so.0")
        t.t.write("/usr/share/vulkan/icd.d/nvidia_icd.json", json.dumps(
            {"file_format_version": "1.0.0", "ICD": {"library_path": lib, "api_version": "1.3.242"}}))
        t.t.write(lib, "")
        # the loader's search reads ELF headers in the tree: a copy of this machine's loader there
        loader = (glob.glob("/usr/lib/*/libvulkan.so.1") + glob.glob("/lib/*/libvulkan.so.1"))[0]
        shutil.copy(os.path.realpath(loader), t.t.path(os.path.join(libs, "libvulkan.so.1")))
        p, doc, appeared, loads, parent = self.run_private(name, None, "vulkan", "--json", "--root", t.root, "--live",
                                                           libs=libs)
        self.assertEqual(appeared, [], appeared)
        self.assertEqual(p.returncode, 1, p.stderr[-2000:])
        self.assertIn("libGLX_nvidia.so.0", {f for pid, v in loads.items() if pid != parent for f in v}, loads)
        (d,) = doc["vulkan"]["drivers"]
        self.assertEqual((d["status"], d["detail"]), ("init-failed", "vkCreateInstance fails with "
                                                      "VK_ERROR_INCOMPATIBLE_DRIVER (-9)"), d)
        self.assertFalse([f for f in doc["findings"] if f["id"] == "vulkan.absent-hardware"], doc["findings"])
        (f,) = [f for f in doc["findings"] if f["id"] == "vulkan.init-failed"]
        self.assertEqual(f["severity"], "error", f)
        said = [e["value"] for e in f.get("evidence", []) if e["source"] == "loader output"]
        self.assertEqual(len(said), 1, f)
        return said[0]

    def test_with_its_gpu_on_the_bus_the_loader_says_the_driver_refused(self):
        said = self.gpu_tree_run("gpu-refused", self.libs)
        self.assertIn("Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr'", said)
        self.assertNotIn("cannot open shared object file", said)

    def test_with_its_gpu_on_the_bus_a_missing_library_is_named(self):
        """A broken install: libnvidia-glsi (libnvidia-eglcore's) is missing, so libGLX_nvidia cannot load."""
        libs = os.path.join(self.tmp, "lib-without-glsi")
        os.makedirs(libs)
        for f in [self.nv.glx] + self.nv.gl_libs:
            if "glsi" not in os.path.basename(f):
                os.symlink(f, os.path.join(libs, os.path.basename(f)))
        said = self.gpu_tree_run("gpu-broken", libs)
        self.assertIn("libnvidia-glsi.so.%s: cannot open shared object file" % self.nv.version, said)
        self.assertIn("Failed loading library", said)


if __name__ == "__main__":
    gctest.main()
