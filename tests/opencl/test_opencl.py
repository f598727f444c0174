"""End-to-end tests of `gpucheckup opencl` and `gpucheckup list`: PoCL with 1, 4 and 0 devices, no platform,
no loader, a fake loader with GPU platforms, and drivers that crash or hang."""
import os
import re
import shutil
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(os.environ["GPUCHECKUP_SOURCE_ROOT"], "tests", "pci"))
from test_pci import PciTree  # noqa: E402  (the fake sysfs trees of the pci tests)

FAKE_LIB = os.environ["GC_OCL_FAKE_LIB"]


class OpenclCase(gctest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp(prefix="gc-ocl-pocl-")
        self.addCleanup(shutil.rmtree, self.cache, True)
        # Only PoCL's .icd: the system directory may hold other drivers too (CI installs Intel's and
        # Mesa's), whose platforms would change every count below.
        self.vendors = tempfile.mkdtemp(prefix="gc-ocl-vendors-")
        self.addCleanup(shutil.rmtree, self.vendors, True)
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", self.vendors)

    def env(self, **kw):
        """PoCL alone through the system loader, unless KW says otherwise; None removes a variable."""
        e = {"POCL_CACHE_DIR": self.cache, "OCL_ICD_VENDORS": self.vendors, "OPENCL_VENDOR_PATH": None,
             "OCL_ICD_FILENAMES": None, "GPUCHECKUP_LIBOPENCL": None, "POCL_DEVICES": None}
        e.update(kw)
        return e

    def fake(self, mode, **kw):
        return self.env(GPUCHECKUP_LIBOPENCL=FAKE_LIB, GC_OCL_FAKE_MODE=mode, **kw)

    def opencl(self, *args, env=None, expect_rc=None, timeout=120):
        r = self.run_json("opencl", *args, env=env, expect_rc=expect_rc, timeout=timeout)
        return r, r.json["opencl"]

    def cl_ids(self, r):
        return sorted(i for i in r.finding_ids() if i.startswith("cl."))


class PoclTests(OpenclCase):
    def test_one_device(self):
        r, o = self.opencl(env=self.env(POCL_DEVICES="pthread"), expect_rc=0)
        self.assertEqual(o["status"], "ok")
        self.assertEqual(o["enumeration"]["status"], "ok")
        self.assertTrue(o["loader"].startswith("/"), o["loader"])
        self.assertEqual(o["counts"], {"platforms": 1, "devices": 1, "gpu": 0, "cpu": 1, "accelerator": 0,
                                       "custom": 0})
        self.assertEqual(o["environment"]["POCL_DEVICES"], "pthread")
        self.assertIn("pci", r.json)  # its dependency ran first
        (p,) = o["platforms"]
        self.assertEqual(p["name"], "Portable Computing Language")
        self.assertEqual(p["icd_suffix"], "POCL")
        self.assertIsNone(p["error"])
        self.assertRegex(p["properties"]["CL_PLATFORM_NUMERIC_VERSION"], r"^\d+\.\d+\.\d+$")
        (d,) = p["devices"]
        self.assertEqual(d["index"], 0)
        self.assertEqual(d["type"], ["CPU"])
        self.assertIsNone(d["pci_address"])
        self.assertIsNone(d["uuid"])
        self.assertRegex(d["opencl_version"], r"^\d+\.\d+$")
        self.assertTrue(d["available"])
        props = d["properties"]
        self.assertEqual(props["CL_DEVICE_TYPE"], ["CL_DEVICE_TYPE_CPU"])
        self.assertEqual(props["CL_DEVICE_NAME"], d["name"])
        self.assertEqual(props["CL_DRIVER_VERSION"], d["driver_version"])
        self.assertIsInstance(props["CL_DEVICE_MAX_COMPUTE_UNITS"], int)
        self.assertGreater(props["CL_DEVICE_MAX_COMPUTE_UNITS"], 0)
        self.assertGreater(props["CL_DEVICE_GLOBAL_MEM_SIZE"], 0)
        self.assertEqual(len(props["CL_DEVICE_MAX_WORK_ITEM_SIZES"]), props["CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS"])
        self.assertIn("CL_FP_FMA", props["CL_DEVICE_SINGLE_FP_CONFIG"])
        self.assertIs(props["CL_DEVICE_ENDIAN_LITTLE"], True)
        self.assertIn({"name": "cl_khr_fp64", "version": "1.0.0"}, props["CL_DEVICE_EXTENSIONS_WITH_VERSION"])
        self.assertEqual(props["CL_DEVICE_PLATFORM"], 0)
        self.assertIsNone(props["CL_DEVICE_PARENT_DEVICE"])
        # an OpenCL 3.0 device: the 2.0+ name of query 0x102A, never the 1.x one
        self.assertIn("CL_DEVICE_QUEUE_ON_HOST_PROPERTIES", props)
        self.assertNotIn("CL_DEVICE_QUEUE_PROPERTIES", props)
        # extension queries appear only with their extension
        self.assertNotIn("CL_DEVICE_HALF_FP_CONFIG", props)  # PoCL 3.1 on x86 has no cl_khr_fp16
        self.assertNotIn("CL_DEVICE_WARP_SIZE_NV", props)
        self.assertIn("CL_DEVICE_SPIR_VERSIONS", props)  # cl_khr_spir
        self.assertGreater(len(props), 100)
        self.assertEqual(self.cl_ids(r), [])
        # the pci probe ran first, so the GPU cross-checks had its data (no "pci probe" note)
        self.assertEqual(r.json["pci"]["status"], "ok")
        self.assertFalse(any("pci probe" in n for n in o.get("notes", [])), o.get("notes"))
        labels = [line["label"] for line in o["summary"]]
        self.assertEqual(labels, ["OpenCL", "OpenCL dev 0:0"])

    def test_four_devices(self):
        r, o = self.opencl(env=self.env(POCL_DEVICES="pthread pthread pthread pthread"), expect_rc=0)
        (p,) = o["platforms"]
        self.assertEqual([d["index"] for d in p["devices"]], [0, 1, 2, 3])
        self.assertEqual(o["counts"]["devices"], 4)
        self.assertEqual(o["counts"]["cpu"], 4)
        names = {d["name"] for d in p["devices"]}
        self.assertEqual(len(names), 1)
        # every device carries the same full property set
        keys = [sorted(d["properties"]) for d in p["devices"]]
        self.assertTrue(all(k == keys[0] for k in keys))
        self.assertEqual(self.cl_ids(r), [])  # four CPU devices without address: not duplicates
        self.assertEqual(len(o["summary"]), 5)

    def test_zero_devices(self):
        r, o = self.opencl(env=self.env(POCL_DEVICES="foo"), expect_rc=0)
        (p,) = o["platforms"]
        self.assertEqual(p["devices"], [])
        self.assertEqual(p["error"], {"code": -1, "name": "CL_DEVICE_NOT_FOUND"})
        self.assertEqual(o["counts"]["devices"], 0)
        self.assertEqual(self.cl_ids(r), ["cl.platform-no-devices"])
        (f,) = r.findings("cl.platform-no-devices")
        self.assertEqual(f["severity"], "warning")
        self.assertEqual(f["subject"], "platform 0 (Portable Computing Language)")
        self.assertIn("POCL_DEVICES", f["hint"])
        self.assertIn({"source": "POCL_DEVICES", "value": "foo"}, f["evidence"])

    def test_no_platform(self):
        r, o = self.opencl(env=self.env(OCL_ICD_VENDORS="/nonexistent"))
        gctest.absent_api_expectation(r, "cl.no-platforms")
        self.assertEqual(o["status"], "ok")
        self.assertEqual(o["platforms"], [])
        self.assertEqual(o["enumeration"]["status"], "ok")
        self.assertIn("CL_PLATFORM_NOT_FOUND_KHR", o["enumeration"]["detail"])
        self.assertEqual(self.cl_ids(r), ["cl.no-platforms"])
        (f,) = r.findings("cl.no-platforms")
        self.assertIn("gpucheckup icd", f["hint"])
        self.assertIn({"source": "OCL_ICD_VENDORS", "value": "/nonexistent"}, f["evidence"])
        self.assertEqual(r.json["verdict"]["ready"], not gctest.bus_gpus(r.json))

    def test_no_loader(self):
        r, o = self.opencl(env=self.env(GPUCHECKUP_LIBOPENCL="/nonexistent/libOpenCL.so.1"))
        gctest.absent_api_expectation(r, "cl.no-platforms")
        self.assertEqual(o["enumeration"]["status"], "no-loader")
        self.assertIsNone(o["loader"])
        self.assertIn("/nonexistent/libOpenCL.so.1", o["enumeration"]["detail"])
        self.assertEqual(self.cl_ids(r), ["cl.no-platforms"])
        self.assertIn("ocl-icd-libopencl1", r.findings("cl.no-platforms")[0]["hint"])


class FilterTests(OpenclCase):
    FOUR = "pthread pthread pthread pthread"

    def test_device_p_d(self):
        r, o = self.opencl("--device", "0:2", env=self.env(POCL_DEVICES=self.FOUR), expect_rc=0)
        (p,) = o["platforms"]
        self.assertEqual([d["index"] for d in p["devices"]], [2])
        self.assertEqual(o["filter"], {"device": "0:2", "prop": None})
        self.assertEqual(o["counts"]["devices"], 4)  # counts cover everything

    def test_device_p(self):
        r, o = self.opencl("--device", "0", env=self.env(POCL_DEVICES=self.FOUR), expect_rc=0)
        self.assertEqual(len(o["platforms"][0]["devices"]), 4)

    def test_device_out_of_range_is_a_usage_error(self):
        for arg, words in (("1", ["--device 1", "no OpenCL platform 1"]), ("0:4", ["--device 0:4", "no device 4"])):
            r = gctest.run("opencl", "--device", arg, env=self.env(POCL_DEVICES=self.FOUR))
            self.assertEqual(r.rc, 2, repr(r))
            for w in words:
                self.assertIn(w, r.stderr)
            self.assertEqual(r.stdout, "")
            r = self.run_json("opencl", "--device", arg, env=self.env(POCL_DEVICES=self.FOUR), expect_rc=2)
            self.assertIn("--device", r.json["error"]["message"])

    def test_prop_filters_platform_and_device_properties(self):
        r, o = self.opencl("--prop", "mem_size", env=self.env(POCL_DEVICES="pthread"), expect_rc=0)
        self.assertEqual(o["filter"]["prop"], "mem_size")
        (p,) = o["platforms"]
        self.assertEqual(p["properties"], {})
        props = p["devices"][0]["properties"]
        self.assertIn("CL_DEVICE_GLOBAL_MEM_SIZE", props)
        self.assertIn("CL_DEVICE_LOCAL_MEM_SIZE", props)
        for k in props:
            self.assertIn("MEM_SIZE", k)
        self.assertEqual(p["devices"][0]["name"], "pthread-" + p["devices"][0]["name"].split("-", 1)[1])

    def test_prop_and_device_in_text(self):
        r = gctest.run("opencl", "--device", "0:1", "--prop", "COMPUTE_UNITS",
                       env=self.env(POCL_DEVICES="pthread pthread"))
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("Max compute units", r.stdout)
        self.assertNotIn("Global memory size", r.stdout)
        self.assertIn("Device #1 (--device 0:1)", r.stdout)
        self.assertNotIn("Device #0 (", r.stdout)


class TextTests(OpenclCase):
    def test_opencl_text_reads_like_clinfo(self):
        r = gctest.run("opencl", env=self.env(POCL_DEVICES="pthread pthread"))
        self.assertEqual(r.rc, 0, repr(r))
        out = r.stdout
        for want in ("Number of platforms", "Platform #0: Portable Computing Language", "Platform Name",
                     "Platform Extensions function suffix", "Number of devices", "Device #0 (--device 0:0)",
                     "Device #1 (--device 0:1)", "Max compute units", "Global memory size", "GiB)",
                     "Max clock frequency", " MHz", "Single-precision Floating-point support", "CL_FP_FMA",
                     "Device Extensions with Version"):
            self.assertIn(want, out)
        # -v shows the symbolic names that --prop filters on
        v = gctest.run("opencl", "-v", env=self.env(POCL_DEVICES="pthread"))
        self.assertIn("CL_DEVICE_MAX_COMPUTE_UNITS", v.stdout)

    def test_list_like_clinfo_l(self):
        r = gctest.run("list", env=self.env(POCL_DEVICES="pthread pthread pthread"))
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("Platform #0: Portable Computing Language\n", r.stdout)
        devs = re.findall(r"^ ([+`])-- Device #(\d): pthread.* \[CPU\]$", r.stdout, re.M)
        self.assertEqual(devs, [("+", "0"), ("+", "1"), ("`", "2")])
        self.assertNotIn("Max compute units", r.stdout)
        j = self.run_json("list", env=self.env(POCL_DEVICES="pthread"), expect_rc=0)
        self.assertEqual(j.json["command"], "list")
        self.assertEqual(len(j.json["opencl"]["platforms"][0]["devices"]), 1)

    def test_list_with_pci_addresses_and_empty_platform(self):
        r = gctest.run("list", env=self.fake("gpus"))
        self.assertIn(" `-- Device #0: Fake GeForce RTX 3090 [GPU] 0000:01:00.0\n", r.stdout)
        self.assertIn(" +-- Device #0: NVIDIA GA102 (rusticl) [GPU] 0000:01:00.0\n", r.stdout)
        self.assertIn(" `-- Device #1: Fake Radeon RX 6800 [GPU] 0000:83:00.1\n", r.stdout)
        self.assertIn("Platform #2: Fake Clover\n `-- (no devices: CL_DEVICE_NOT_FOUND)\n", r.stdout)

    def test_no_platform_text(self):
        r = gctest.run("list", env=self.env(OCL_ICD_VENDORS="/nonexistent"))
        self.assertIn("No OpenCL platform", r.stdout)
        self.assertIn("cl.no-platforms", r.stdout)
        # an absent OpenCL stops no GPU where the bus has none (gctest.absent_api_expectation); --require opencl
        # asks for it whatever the bus holds
        j = gctest.run("--json", "list", env=self.env(OCL_ICD_VENDORS="/nonexistent"))
        self.assertEqual(r.rc, j.rc)
        gctest.absent_api_expectation(j, "cl.no-platforms")
        q = gctest.run("list", "--require", "opencl", env=self.env(OCL_ICD_VENDORS="/nonexistent"))
        self.assertEqual(q.rc, 1, repr(q))


class FakeGpuTests(OpenclCase):
    """A fake loader shows what PoCL cannot: GPUs, PCI addresses from three sources, duplicates, errors."""

    def amd_tree(self):
        """A fake bus with the AMD GPU the fake Clover platform would drive: its empty platform then warns."""
        t = PciTree(self.make_tree())
        t.device("0000:83:00.1", 0x1002, 0x73bf, 0x030000, driver="amdgpu", drm=("card0", "renderD128"))
        t.module("amdgpu")
        t.node("/dev/kfd")
        t.node("/dev/dri/card0")
        t.node("/dev/dri/renderD128")
        return t

    def test_empty_clover_without_amd_gpu_is_not_a_warning(self):
        # No AMD GPU on the (fake, empty) bus: Clover's empty platform is a driver for absent hardware.
        t = PciTree(self.make_tree())
        r, o = self.opencl("--root", t.root, "--live", env=self.fake("gpus"))
        self.assertEqual([p["absent_hardware"] for p in o["platforms"]], [False, False, True])
        self.assertNotIn("cl.platform-no-devices", r.finding_ids())
        text = gctest.run("opencl", "--root", t.root, "--live", env=self.fake("gpus")).stdout
        self.assertRegex(text, r"\[info\] OpenCL plat 2 +Fake Clover: no device \(driver for absent hardware\)")

    def test_gpu_platforms(self):
        r, o = self.opencl("--root", self.amd_tree().root, "--live", env=self.fake("gpus"))
        self.assertEqual(r.rc, 0, repr(r))  # warnings only
        cuda, rusticl, clover = o["platforms"]
        self.assertEqual([p["name"] for p in o["platforms"]], ["Fake CUDA", "Fake rusticl", "Fake Clover"])
        self.assertEqual(o["counts"]["gpu"], 3)

        (nv,) = cuda["devices"]
        self.assertEqual(nv["pci_address"], "0000:01:00.0")
        self.assertEqual(nv["pci_address_source"], "nvidia_attribute_query")
        self.assertEqual(nv["uuid"], "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf")
        self.assertEqual(nv["vendor_id"], "10de")
        self.assertEqual(nv["type"], ["GPU"])
        p = nv["properties"]
        self.assertEqual((p["CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV"], p["CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV"]), (8, 6))
        self.assertEqual(p["CL_DEVICE_WARP_SIZE_NV"], 32)
        self.assertEqual(p["CL_DEVICE_PCI_BUS_ID_NV"], 1)
        # a legal query the driver refused carries its error structurally
        self.assertEqual(p["CL_DEVICE_PCI_DOMAIN_ID_NV"], {"error": "CL_INVALID_VALUE", "code": -30})
        self.assertEqual(p["CL_DEVICE_QUEUE_ON_HOST_PROPERTIES"], ["CL_QUEUE_PROFILING_ENABLE", "0x10000000000"])
        self.assertNotIn("CL_DEVICE_TOPOLOGY_AMD", p)
        self.assertNotIn("CL_DEVICE_HALF_FP_CONFIG", p)

        nv2, amd = rusticl["devices"]
        self.assertEqual(nv2["pci_address"], "0000:01:00.0")
        self.assertEqual(nv2["pci_address_source"], "cl_khr_pci_bus_info")
        self.assertEqual(nv2["opencl_version"], "1.2")
        p2 = nv2["properties"]
        self.assertEqual(p2["CL_DEVICE_PCI_BUS_INFO_KHR"], {"domain": 0, "bus": 1, "device": 0, "function": 0})
        self.assertEqual(p2["CL_DEVICE_HALF_FP_CONFIG"], ["CL_FP_INF_NAN", "CL_FP_ROUND_TO_NEAREST"])
        # an OpenCL 1.2 device: the 1.x name of query 0x102A, and no 2.0+/3.0 queries
        self.assertIn("CL_DEVICE_QUEUE_PROPERTIES", p2)
        self.assertNotIn("CL_DEVICE_QUEUE_ON_HOST_PROPERTIES", p2)
        self.assertNotIn("CL_DEVICE_NUMERIC_VERSION", p2)
        self.assertNotIn("CL_DEVICE_SVM_CAPABILITIES", p2)
        self.assertIn("CL_DEVICE_LINKER_AVAILABLE", p2)

        self.assertEqual(amd["pci_address"], "0000:83:00.1")  # bus stored as a negative cl_char
        self.assertEqual(amd["pci_address_source"], "amd_topology")
        pa = amd["properties"]
        self.assertEqual(pa["CL_DEVICE_BOARD_NAME_AMD"], "AMD Radeon RX 6800")
        self.assertEqual(pa["CL_DEVICE_WAVEFRONT_WIDTH_AMD"], 32)
        self.assertEqual(pa["CL_DEVICE_MAX_COMPUTE_UNITS"], {"error": "unexpected value size 3", "code": None})
        self.assertEqual(pa["CL_DEVICE_TOPOLOGY_AMD"], {"type": "PCIe", "bus": 131, "device": 0, "function": 1})

        self.assertEqual(clover["devices"], [])
        self.assertEqual(clover["error"]["name"], "CL_DEVICE_NOT_FOUND")
        self.assertFalse(clover["absent_hardware"])  # an AMD GPU is on the bus

        self.assertEqual(self.cl_ids(r), ["cl.duplicate-device", "cl.platform-no-devices"])
        (dup,) = r.findings("cl.duplicate-device")
        self.assertEqual(dup["subject"], "0000:01:00.0")
        self.assertIn("0:0 (Fake GeForce RTX 3090 on Fake CUDA)", dup["message"])
        self.assertIn("1:0 (NVIDIA GA102 (rusticl) on Fake rusticl)", dup["message"])
        (empty,) = r.findings("cl.platform-no-devices")
        self.assertEqual(empty["subject"], "platform 2 (Fake Clover)")
        self.assertIn("Clover", empty["hint"])

    def test_text_shows_errors_and_addresses(self):
        r = gctest.run("opencl", env=self.fake("gpus"))
        self.assertIn("PCI address", r.stdout)
        self.assertIn("0000:83:00.1 (from amd_topology)", r.stdout)
        self.assertIn("error: CL_INVALID_VALUE", r.stdout)
        self.assertIn("a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf", r.stdout)


class BrokenDriverTests(OpenclCase):
    def test_crash(self):
        for mode, sig in (("crash", "SIGSEGV"), ("abort", "SIGABRT")):
            r, o = self.opencl(env=self.fake(mode), expect_rc=1)
            self.assertEqual(o["status"], "ok")  # the probe did its job: it found the crash
            self.assertEqual(o["enumeration"]["status"], "crash")
            self.assertIn(sig, o["enumeration"]["detail"])
            self.assertEqual(o["platforms"], [])
            self.assertEqual(self.cl_ids(r), ["cl.enumeration-crash"])
            self.assertIn(sig, r.findings("cl.enumeration-crash")[0]["message"])

    def test_hang_ends_at_the_timeout(self):
        t0 = time.monotonic()
        r, o = self.opencl("--timeout", "1", env=self.fake("hang"), expect_rc=1, timeout=60)
        elapsed = time.monotonic() - t0
        self.assertLess(elapsed, 6.0)
        self.assertEqual(o["enumeration"]["status"], "timeout")
        self.assertGreaterEqual(o["enumeration"]["elapsed_ms"], 900)
        self.assertEqual(self.cl_ids(r), ["cl.enumeration-hang"])
        self.assertIn("gpucheckup icd", r.findings("cl.enumeration-hang")[0]["hint"])

    def test_exit_and_error(self):
        r, o = self.opencl(env=self.fake("exit"), expect_rc=1)
        self.assertEqual(o["enumeration"]["status"], "failed")
        self.assertEqual(self.cl_ids(r), ["cl.enumeration-failed"])
        r, o = self.opencl(env=self.fake("error"), expect_rc=1)
        self.assertEqual(o["enumeration"]["status"], "error")
        self.assertIn("CL_OUT_OF_HOST_MEMORY", o["enumeration"]["detail"])
        self.assertEqual(self.cl_ids(r), ["cl.enumeration-failed"])
        r, o = self.opencl(env=self.fake("none"))
        self.assertEqual(self.cl_ids(r), ["cl.no-platforms"])
        gctest.absent_api_expectation(r, "cl.no-platforms")
        # what a job needs is asked for: then no platform fails the run on any machine
        r, o = self.opencl("--require", "opencl", env=self.fake("none"), expect_rc=1)

    def test_crash_text(self):
        r = gctest.run("opencl", env=self.fake("crash"))
        self.assertEqual(r.rc, 1)
        self.assertIn("cl.enumeration-crash", r.stdout)
        self.assertIn("enumeration crash", r.stdout)


if __name__ == "__main__":
    gctest.main()
