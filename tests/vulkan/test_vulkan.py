"""The vulkan probe end to end: lavapipe computes, Mesa's GPU drivers without hardware are info, vulkaninfo
agrees, and a fake driver the suite builds crashes, hangs, lists nothing or computes nothing."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pci"))
from test_pci import PciTree  # noqa: E402  (the pci tests' fake sysfs trees)

ICD_DIR = "/usr/share/vulkan/icd.d"
LOADER = (glob.glob("/usr/lib/*/libvulkan.so.1") + glob.glob("/lib/*/libvulkan.so.1") + ["libvulkan.so.1"])[0]
FAKE = os.environ["GC_FAKE_VK_ICD"]
# PCI vendor IDs of the hardware each Mesa driver needs (a GPU of that vendor on the bus).
MESA_GPU_DRIVERS = {"intel": {0x8086}, "intel_hasvk": {0x8086}, "radeon": {0x1002, 0x1022}}


def lvp_manifest():
    found = sorted(glob.glob(os.path.join(ICD_DIR, "lvp_icd.*.json")))
    assert found, "mesa-vulkan-drivers' lavapipe manifest is missing (see .ci/packages)"
    return found[0]


def bus_gpu_vendors():
    """PCI vendor IDs of the display controllers and accelerators on this machine's bus (sysfs)."""
    out = set()
    for dev in glob.glob("/sys/bus/pci/devices/*"):
        try:
            with open(os.path.join(dev, "class"), encoding="ascii") as f:
                cls = int(f.read(), 16)
            with open(os.path.join(dev, "vendor"), encoding="ascii") as f:
                ven = int(f.read(), 16)
        except (OSError, ValueError):
            continue
        if cls >> 16 in (0x03, 0x12):
            out.add(ven)
    return out


class VulkanTests(gctest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gc-vulkan-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def manifest(self, name, library=FAKE, text=None):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text is not None else json.dumps(
                {"file_format_version": "1.0.0", "ICD": {"library_path": library, "api_version": "1.0.0"}}))
        return path

    def vk(self, files, *args, mode=None, expect_rc=None, command="vulkan"):
        env = {"VK_DRIVER_FILES": files, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None,
               "GC_FAKE_VK": mode}
        return self.run_json(command, *args, env=env, expect_rc=expect_rc)

    def finding(self, r, fid):
        fs = r.findings(fid)
        self.assertTrue(fs, "%s missing: %r" % (fid, r))
        return fs[0]

    def test_lavapipe_passes_the_smoke_test(self):
        r = self.vk(lvp_manifest(), "--require", "vulkan", expect_rc=0)
        sec = r.json["vulkan"]
        self.assertEqual([d["status"] for d in sec["drivers"]], ["ok"])
        self.assertEqual(len(sec["devices"]), 1)
        dev = sec["devices"][0]
        self.assertEqual(dev["type"], "cpu")
        self.assertEqual(dev["driver_name"], "llvmpipe")
        self.assertEqual(dev["smoke"]["status"], "pass")
        self.assertEqual([p["kind"] for p in dev["smoke"]["passes"]], ["exact", "random"])
        self.assertTrue(all(p["wrong_elements"] == 0 for p in dev["smoke"]["passes"]))
        self.assertEqual(dev["smoke"]["n"], 64)  # a CPU device's size (COMPUTE_CPU_SIZE)
        self.assertGreater(dev["smoke"]["gflops"], 0)
        self.assertTrue(any(q["compute"] for q in dev["queue_families"]))
        self.assertTrue(r.json["verdict"]["targets"]["vulkan"]["ready"])
        self.assertIn("Vulkan: ready on llvmpipe", r.json["verdict"]["text"])
        self.assertEqual(r.json["verdict"]["requirements"][0]["met"], True)

    def test_smoke_size_given_is_every_devices(self):
        # --smoke-size applies to CPU devices too: only the default is smaller on them
        r = self.vk(lvp_manifest(), "--smoke-size", "96", expect_rc=0)
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["n"], 96)
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "pass")

    def test_no_smoke_leaves_devices_untested(self):
        r = self.vk(lvp_manifest(), "--no-smoke", "--require", "vulkan", expect_rc=1)
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "skipped")

    def test_mesa_gpu_drivers_without_hardware_are_info(self):
        gpus = bus_gpu_vendors()
        present = [m for m in sorted(MESA_GPU_DRIVERS)
                   if glob.glob(os.path.join(ICD_DIR, m + "_icd.*.json"))]
        self.assertTrue(present, "mesa-vulkan-drivers' GPU manifests are missing")
        files = ":".join(sorted(glob.glob(os.path.join(ICD_DIR, m + "_icd.*.json"))[0] for m in present))
        r = self.vk(files, expect_rc=0)
        by_manifest = {d["manifest"]: d for d in r.json["vulkan"]["drivers"]}
        for m in present:
            path = glob.glob(os.path.join(ICD_DIR, m + "_icd.*.json"))[0]
            if MESA_GPU_DRIVERS[m] & gpus:
                continue  # its GPU is here: not this test's case
            self.assertEqual(by_manifest[path]["status"], "absent-hardware", r)
            self.assertTrue([f for f in r.findings("vulkan.absent-hardware") if f["subject"] == path], r)
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, r)
        self.assertEqual(r.json["verdict"]["counts"]["error"], 0, r)

    def test_health_does_not_load_drivers_for_absent_hardware(self):
        # The fake driver under RADV's library name, crashing in vkCreateInstance: --health must not load it
        # when the bus has no AMD GPU (the speed policy's rule 2), and the full check still does.
        lib = os.path.join(self.tmp, "libvulkan_radeon.so")
        os.symlink(FAKE, lib)
        files = self.manifest("radeon_icd.x86_64.json", library=lib) + ":" + lvp_manifest()
        env = {"VK_DRIVER_FILES": files, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None, "GC_FAKE_VK": "crash-init"}
        out = os.path.join(self.tmp, "health.json")
        h = gctest.run("vulkan", "--health", "--no-smoke", "--json", "-o", out, env=env)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        drv = {d["manifest"]: d for d in doc["vulkan"]["drivers"]}[files.split(":")[0]]
        full = self.vk(files, "--no-smoke", mode="crash-init")
        if {0x1002, 0x1022} & bus_gpu_vendors():  # its hardware is here: loaded as before, and it crashes
            self.assertEqual(drv["status"], "crash", doc)
            self.assertTrue(h.stdout.startswith("NOT-READY"), h)
        else:
            self.assertEqual(drv["status"], "absent-hardware", doc)
            self.assertTrue(drv["detail"].startswith("not loaded (--health): a driver for absent hardware"), drv)
            fs = [f for f in doc["findings"] if f["id"] == "vulkan.absent-hardware"]
            self.assertEqual(len(fs), 1, doc)
            self.assertIn("not loaded (--health)", fs[0]["message"])
            self.assertFalse([f for f in doc["findings"] if f["id"] == "vulkan.crash"], doc)
            self.assertTrue(h.stdout.startswith("READY"), h)
            txt = os.path.join(self.tmp, "health.txt")
            gctest.run("vulkan", "--health", "--no-smoke", "-o", txt, env=env)
            with open(txt, encoding="utf-8") as f:
                self.assertIn("radeon_icd.x86_64.json: not loaded (--health)", f.read())
        # lavapipe, a CPU driver, is not loaded by --health either (the lead's decision: --health answers for
        # the GPUs), and no 'no device' finding stands for it ...
        lvp = doc["vulkan"]["drivers"][1]
        self.assertEqual(lvp["status"], "not-loaded", lvp)
        self.assertTrue(lvp["detail"].startswith("CPU driver, not loaded (--health)"), lvp)
        self.assertFalse({f["id"] for f in doc["findings"]} & {"vulkan.no-device", "vulkan.no-drivers"}, doc)
        if not {0x1002, 0x1022} & bus_gpu_vendors():  # nothing worse than information: the verdict says why
            self.assertIn("Vulkan: not checked: no GPU device listed, and CPU drivers are not loaded (--health)",
                          doc["verdict"]["text"])
            self.assertFalse(doc["verdict"]["targets"]["vulkan"]["ready"])
        # ... unless a --require form is given (a CPU device may meet it): then it loads as before
        gctest.run("vulkan", "--health", "--no-smoke", "--require", "sse2", "--json", "-o", out, env=env)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual([d["status"] for d in doc["vulkan"]["drivers"]][1], "ok")
        # the full check loads it, as every Vulkan program's loader does: the crash is named
        self.assertEqual(full.json["vulkan"]["drivers"][0]["status"], "crash", full)

    def test_default_check_is_clean_here(self):
        r = self.run_json(expect_rc=0)
        self.assertEqual(r.json["vulkan"]["status"], "ok")
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, r)
        self.assertFalse([f for f in r.json["findings"] if f["id"].startswith("vulkan.") and f["severity"] != "info"], r)

    def test_vulkaninfo_parity(self):
        lvp = lvp_manifest()
        env = dict(os.environ, VK_DRIVER_FILES=lvp)
        env.pop("VK_ICD_FILENAMES", None)
        out = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True, env=env, timeout=60).stdout
        block = out.split("GPU0:", 1)[1]
        vi = dict(re.findall(r"^\s+(\w+)\s+= (.*)$", block, re.M))
        dev = self.vk(lvp, "--no-smoke").json["vulkan"]["devices"][0]
        types = {"PHYSICAL_DEVICE_TYPE_CPU": "cpu", "PHYSICAL_DEVICE_TYPE_DISCRETE_GPU": "discrete-gpu",
                 "PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU": "integrated-gpu",
                 "PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU": "virtual-gpu", "PHYSICAL_DEVICE_TYPE_OTHER": "other"}
        self.assertEqual(dev["name"], vi["deviceName"])
        self.assertEqual(dev["type"], types[vi["deviceType"]])
        self.assertEqual(dev["api_version"], vi["apiVersion"])
        self.assertEqual(dev["driver_version"], vi["driverVersion"])
        self.assertEqual(dev["vendor_id"], int(vi["vendorID"], 16))
        self.assertEqual(dev["device_id"], int(vi["deviceID"], 16))
        self.assertEqual(dev["driver_name"], vi["driverName"])
        # driverID: vulkaninfo prints the enum's name, the Vulkan headers give its value
        with open("/usr/include/vulkan/vulkan_core.h", encoding="utf-8") as f:
            ids = dict(re.findall(r"^\s+VK_(DRIVER_ID_\w+) = (\d+),", f.read(), re.M))
        self.assertEqual(dev["driver_id"], int(ids[vi["driverID"]]))
        self.assertEqual(dev["driver_info"], vi["driverInfo"])

    def test_fake_crash_in_init(self):
        r = self.vk(self.manifest("fake.json") + ":" + lvp_manifest(), mode="crash-init", expect_rc=1)
        f = self.finding(r, "vulkan.crash")
        self.assertEqual(f["severity"], "error")
        self.assertIn("SIGSEGV", f["message"])
        # the other driver still computes
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "pass")

    def test_fake_crash_alone(self):
        # Without a GPU on the bus and no other Vulkan device, a broken driver stops nothing: info caused by
        # vulkan.no-device. With a GPU there, it stays an error (it may be what keeps Vulkan from the GPU).
        gpu_here = bool(bus_gpu_vendors())
        r = self.vk(self.manifest("fake.json"), mode="crash-init", expect_rc=1 if gpu_here else 0)
        self.assertEqual(self.finding(r, "vulkan.crash")["severity"], "error" if gpu_here else "info")
        self.assertEqual(bool(r.findings("vulkan.no-device")), not gpu_here)

    def test_fake_hang_in_init_ends_with_the_timeout(self):
        t0 = time.monotonic()
        r = self.vk(self.manifest("fake.json") + ":" + lvp_manifest(), "--timeout", "4", mode="hang-init",
                    expect_rc=1)
        elapsed = time.monotonic() - t0
        self.assertLess(elapsed, (4 * (gctest.SANITIZED_SCALE if gctest.SANITIZED else 1)) + 1.0)
        self.assertEqual(self.finding(r, "vulkan.hang")["severity"], "error")
        # lavapipe's child runs its smoke test beside the hanging one: it still passes
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "pass")

    def test_fake_crash_in_smoke_is_the_smoke_tests(self):
        # The driver's child goes on from listing its one device to the smoke test: a crash there is the
        # smoke test's (vulkan.smoke-crash), and the driver's facts it said before still stand.
        r = self.vk(self.manifest("fake.json") + ":" + lvp_manifest(), mode="crash-smoke", expect_rc=1)
        self.assertFalse(r.findings("vulkan.crash"))
        self.assertEqual([d["status"] for d in r.json["vulkan"]["drivers"]], ["ok", "ok"])
        devs = {d["name"]: d for d in r.json["vulkan"]["devices"]}
        fake = devs["gpucheckup fake Vulkan GPU"]
        self.assertEqual(fake["type"], "discrete-gpu")
        self.assertEqual(fake["smoke"]["status"], "crash")
        f = self.finding(r, "vulkan.smoke-crash")
        self.assertIn("SIGSEGV", f["message"])
        self.assertEqual([d["smoke"]["status"] for n, d in devs.items() if n != fake["name"]], ["pass"])

    def test_fake_hang_in_smoke_is_a_smoke_timeout(self):
        t0 = time.monotonic()
        r = self.vk(self.manifest("fake.json") + ":" + lvp_manifest(), "--timeout", "4", mode="hang-smoke",
                    expect_rc=1)
        elapsed = time.monotonic() - t0
        self.assertLess(elapsed, (4 * (gctest.SANITIZED_SCALE if gctest.SANITIZED else 1)) + 1.0)
        self.assertFalse(r.findings("vulkan.hang"))
        self.assertEqual([d["status"] for d in r.json["vulkan"]["drivers"]], ["ok", "ok"])
        devs = {d["name"]: d for d in r.json["vulkan"]["devices"]}
        self.assertEqual(devs["gpucheckup fake Vulkan GPU"]["smoke"]["status"], "timeout")
        # the smoke test had all that was left of --timeout 4 (not half of it, as the drivers' children had
        # before it ran in its driver's child)
        after = re.search(r"timed out after ([0-9.]+) s", self.finding(r, "vulkan.smoke-timeout")["message"])
        self.assertTrue(after)
        self.assertGreaterEqual(float(after.group(1)), 3.0)
        self.assertEqual(sorted(d["smoke"]["status"] for d in devs.values()), ["pass", "timeout"])

    def test_fake_no_device(self):
        r = self.vk(self.manifest("fake.json"), mode="no-device", expect_rc=0)
        self.assertEqual(r.json["vulkan"]["drivers"][0]["status"], "no-device")
        self.finding(r, "vulkan.driver-idle")
        if not bus_gpu_vendors():
            self.finding(r, "vulkan.no-device")
        self.assertEqual(r.json["vulkan"]["devices"], [])

    def test_fake_init_error(self):
        r = self.vk(self.manifest("fake.json") + ":" + lvp_manifest(), mode="init-error", expect_rc=1)
        f = self.finding(r, "vulkan.init-failed")
        self.assertIn("vkCreateInstance", f["message"])

    def test_fake_device_that_computes_nothing_fails(self):
        r = self.vk(self.manifest("fake.json"), "--require", "vulkan", mode="nothing", expect_rc=1)
        dev = r.json["vulkan"]["devices"][0]
        self.assertEqual(dev["name"], "gpucheckup fake Vulkan GPU")
        self.assertEqual(dev["type"], "discrete-gpu")
        self.assertEqual(dev["smoke"]["status"], "wrong-result")
        f = self.finding(r, "vulkan.smoke-wrong-result")
        self.assertIn("left the output buffer as it was", f["message"])
        self.assertFalse(r.json["verdict"]["targets"]["vulkan"]["ready"])
        self.assertIn("Vulkan: not ready", r.json["verdict"]["text"])
        self.assertFalse(r.json["verdict"]["requirements"][0]["met"])

    def test_fake_cpu_device_that_computes_nothing_fails(self):
        # A CPU device's smaller default size must still fail a device that computes nothing (policy rule 3).
        r = self.vk(self.manifest("fake.json"), "--require", "vulkan", mode="cpu-nothing", expect_rc=1)
        dev = r.json["vulkan"]["devices"][0]
        self.assertEqual(dev["type"], "cpu")
        self.assertEqual(dev["smoke"]["n"], 64)
        self.assertEqual(dev["smoke"]["status"], "wrong-result")
        self.assertTrue(all(p["wrong_elements"] == 64 * 64 for p in dev["smoke"]["passes"]), dev)
        self.finding(r, "vulkan.smoke-wrong-result")
        self.assertFalse(r.json["verdict"]["requirements"][0]["met"])

    def test_malformed_manifests(self):
        bad = {
            "notjson.json": "{ this is not json",
            "array.json": "[1, 2, 3]",
            "noicd.json": '{"file_format_version": "1.0.0"}',
            "nolib.json": '{"file_format_version": "1.0.0", "ICD": {"api_version": "1.3.0"}}',
            "libnumber.json": '{"file_format_version": "1.0.0", "ICD": {"library_path": 5}}',
            "empty.json": "",
            "garbage.json": "\x00\xff\xfe garbage \x01",
            "deep.json": "[" * 10000,
        }
        files = [self.manifest(n, text=t) for n, t in sorted(bad.items())]
        r = self.vk(":".join(files + [lvp_manifest()]), expect_rc=1)
        subjects = {f["subject"] for f in r.findings("vulkan.manifest-malformed")}
        self.assertEqual(subjects, set(files), r)
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "pass")

    def test_missing_library(self):
        gone = os.path.join(self.tmp, "libvulkan_gone.so")
        r = self.vk(self.manifest("gone.json", library=gone) + ":" + lvp_manifest(), expect_rc=1)
        f = self.finding(r, "vulkan.missing-library")
        self.assertIn(gone, f["message"])
        r = self.vk(self.manifest("bare.json", library="libvulkan_no_such_driver.so") + ":" + lvp_manifest(),
                    expect_rc=1)
        self.assertIn("libvulkan_no_such_driver.so", self.finding(r, "vulkan.missing-library")["message"])

    def test_bad_driver_files_values(self):
        # What VK_DRIVER_FILES may hold, however odd: never a crash, a clear status for each entry.
        for value, status in (("relative.json", "unreadable"), (":::", None), ("/x" * 3000, "unreadable"),
                              ("/dev/zero", "unreadable"), ("/proc/self/mem", "unreadable"), ("/etc", None)):
            r = self.vk(value, expect_rc=0)
            got = {d["status"] for d in r.json["vulkan"]["drivers"]}
            self.assertEqual(got, {status} if status else set(), r)

    def test_no_drivers(self):
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        r = self.vk(empty, expect_rc=0)
        self.finding(r, "vulkan.no-drivers")
        self.assertEqual(r.json["vulkan"]["drivers"], [])

    def test_xdg_search(self):
        data = os.path.join(self.tmp, "data")
        os.makedirs(os.path.join(data, "vulkan", "icd.d"))
        mine = os.path.join(data, "vulkan", "icd.d", "lvp.json")
        shutil.copy(lvp_manifest(), mine)
        home = os.path.join(self.tmp, "home")
        os.mkdir(home)
        env = {"VK_DRIVER_FILES": None, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None,
               "XDG_CONFIG_HOME": None, "XDG_CONFIG_DIRS": None, "XDG_DATA_HOME": None,
               "XDG_DATA_DIRS": data, "HOME": home}
        r = self.run_json("vulkan", env=env, expect_rc=0)
        expected = sorted(glob.glob("/etc/xdg/vulkan/icd.d/*.json")) + sorted(glob.glob("/etc/vulkan/icd.d/*.json"))
        self.assertEqual([d["manifest"] for d in r.json["vulkan"]["drivers"]], expected + [mine])

    def test_root_tree_manifests(self):
        t = self.make_tree()
        t.write("usr/share/vulkan/icd.d/broken.json", "{")
        env = {"VK_DRIVER_FILES": None, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None,
               "XDG_CONFIG_HOME": None, "XDG_CONFIG_DIRS": None, "XDG_DATA_HOME": None, "XDG_DATA_DIRS": None,
               "HOME": "/nonexistent"}
        r = self.run_json("vulkan", "--root", t.path(""), "--live", env=env)
        self.assertEqual({f["subject"] for f in r.findings("vulkan.manifest-malformed")},
                         {"/usr/share/vulkan/icd.d/broken.json"}, r)
        r = self.run_json("vulkan", "--root", t.path(""), env=env, expect_rc=0)
        self.assertEqual(r.json["vulkan"]["status"], "skipped")
        # A tree with a driver manifest and no loader (its ld.so.cache and library folders hold none).
        shutil.copy(lvp_manifest(), t.path("usr/share/vulkan/icd.d/lvp.json"))
        r = self.run_json("vulkan", "--root", t.path(""), "--live", env=env, expect_rc=1)
        self.assertIsNone(r.json["vulkan"]["loader"])
        self.assertEqual(self.finding(r, "vulkan.no-loader")["severity"], "error")
        self.assertEqual({d["status"] for d in r.json["vulkan"]["drivers"]}, {"malformed", "missing-library"})

    def gpu_tree(self, manifests):
        """A tree whose PCI bus the pci tests' helper lays out, holding MANIFESTS (copied from this machine)
        placeholders for their libraries and a copy of the loader (the children load this machine's)."""
        t = PciTree(self.make_tree())
        for m in manifests:
            t.t.write("/usr/share/vulkan/icd.d/" + os.path.basename(m), open(m, encoding="utf-8").read())
            lib = json.load(open(m, encoding="utf-8"))["ICD"]["library_path"]
            t.t.write(lib, "")
            # the loader's search reads ELF headers: a copy of this machine's loader
            shutil.copy(os.path.realpath(LOADER), t.t.path(os.path.join(os.path.dirname(lib), "libvulkan.so.1")))
        return t

    def tree_env(self):
        return {"VK_DRIVER_FILES": None, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None,
                "XDG_CONFIG_HOME": None, "XDG_CONFIG_DIRS": None, "XDG_DATA_HOME": None, "XDG_DATA_DIRS": None,
                "HOME": "/nonexistent"}

    def test_gpu_driver_without_device_while_its_gpu_is_there_warns(self):
        intel = sorted(glob.glob(os.path.join(ICD_DIR, "intel_icd.*.json")))
        self.assertTrue(intel, "mesa-vulkan-drivers' Intel manifest is missing")
        t = self.gpu_tree(intel[:1])
        t.device("0000:00:02.0", 0x8086, 0x4680, 0x030000, driver="i915", drm=("card0", "renderD128"))
        t.module("i915", 1)
        r = self.run_json("vulkan", "--root", t.root, "--live", env=self.tree_env())
        f = self.finding(r, "vulkan.driver-no-device")
        self.assertEqual(f["severity"], "warning")
        self.assertIn("0000:00:02.0", json.dumps(f["evidence"]))
        self.assertFalse(r.findings("vulkan.absent-hardware"))
        self.assertEqual(self.finding(r, "vulkan.gpu-without-device")["subject"], "0000:00:02.0")

    def test_gpu_without_vulkan_device_is_info(self):
        t = self.gpu_tree([lvp_manifest()])
        t.healthy_nvidia()
        r = self.run_json("vulkan", "--root", t.root, "--live", env=self.tree_env(), expect_rc=0)
        f = self.finding(r, "vulkan.gpu-without-device")
        self.assertEqual((f["subject"], f["severity"]), ("0000:01:00.0", "info"))
        self.assertEqual(r.json["vulkan"]["devices"][0]["smoke"]["status"], "pass")
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, r)


if __name__ == "__main__":
    gctest.main()
