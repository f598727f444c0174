"""End-to-end tests of the rocm probe: fake AMD sysfs trees, the suite's fake HSA/HIP runtime, and Debian's
real ROCm 5.2 userspace on this GPU-less machine."""
import os
import shutil
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKE = os.environ["GC_FAKE_HSA"]

# /sys/class/kfd/kfd/topology/nodes/1/properties of a Radeon RX 7900 XTX (Navi 31, 1002:744c = device_id
# 29772), the members and values as published in tinygrad's mock AMD GPU (test/mockgpu/amd/amdgpu.py), the
# field order being the kernel's node_show() (drivers/gpu/drm/amd/amdkfd/kfd_topology.c); location_id 768 is
# bus 03, device 0, function 0, drm_render_minor 128 its renderD128.
RX7900_PROPS = """cpu_cores_count 0
simd_count 192
mem_banks_count 1
caches_count 206
io_links_count 1
p2p_links_count 0
cpu_core_id_base 0
simd_id_base 2147488032
max_waves_per_simd 16
lds_size_in_kb 64
gds_size_in_kb 0
num_gws 64
wave_front_size 32
array_count 12
simd_arrays_per_engine 2
cu_per_simd_array 8
simd_per_cu 2
max_slots_scratch_cu 32
gfx_target_version 110000
vendor_id 4098
device_id 29772
location_id 768
domain 0
drm_render_minor 128
hive_id 0
num_sdma_engines 2
num_sdma_xgmi_engines 0
num_sdma_queues_per_engine 6
num_cp_queues 8
max_engine_clk_fcompute 2482
local_mem_size 0
fw_version 2140
capability 671588992
debug_prop 1495
sdma_fw_version 20
unique_id 11673270660693242239
num_xcc 1
max_engine_clk_ccompute 2400
"""
# Node 0, the processor, as every KFD topology starts: gfx_target_version 0.
CPU_PROPS = """cpu_cores_count 16
simd_count 0
mem_banks_count 1
caches_count 0
io_links_count 1
p2p_links_count 0
gfx_target_version 0
vendor_id 0
device_id 0
location_id 0
domain 0
drm_render_minor 0
"""
ADDR = "0000:03:00.0"
VRAM = 25753026560  # 24 GiB less the reservation, as an RX 7900 XTX's mem_info_vram_total reads


class RocmTests(gctest.TestCase):
    def tree(self, gfx_version=110000, device=0x744c, kfd=True, initstate="live"):
        t = PciTree(self.make_tree())
        dev = t.device(ADDR, 0x1002, device, 0x030000, driver="amdgpu", drm=("card0", "renderD128"),
                       link=("16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
        t.t.write(dev + "/mem_info_vram_total", "%d\n" % VRAM)
        t.module("amdgpu", 1)
        t.t.write("/sys/module/amdgpu/initstate", initstate + "\n")
        if kfd:
            t.t.write("/sys/class/kfd/kfd/topology/nodes/0/properties", CPU_PROPS)
            t.t.write("/sys/class/kfd/kfd/topology/nodes/1/properties",
                      RX7900_PROPS.replace("gfx_target_version 110000", "gfx_target_version %d" % gfx_version))
        t.node("/dev/kfd", 0o666)
        t.node("/dev/dri/card0", 0o660)
        t.node("/dev/dri/renderD128", 0o666)
        return t

    def libdir(self):
        d = tempfile.mkdtemp(prefix="gc-rocm-")
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(FAKE, os.path.join(d, "libhsa-runtime64.so.1"))
        shutil.copy(FAKE, os.path.join(d, "libamdhip64.so.6"))
        return d

    def rocm(self, t, *extra, live=False, env=None, command="rocm", expect_rc=None):
        e = {"HSA_OVERRIDE_GFX_VERSION": None, "HIP_VISIBLE_DEVICES": None, "ROCR_VISIBLE_DEVICES": None,
             "GC_FAKE_HSA_INIT": None, "GC_FAKE_HSA_GPUS": None, "GC_FAKE_HIP_COUNT": None}
        if live:
            e["LD_LIBRARY_PATH"] = self.libdir()
        e.update(env or {})
        args = [command] + (["--root", t.root] if t else []) + (["--live"] if live and t else [])
        r = self.run_json(*args, *extra, env=e, expect_rc=expect_rc)
        self.assertEqual(r.json["rocm"]["status"], "ok", repr(r))
        return r

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"] if f["id"].startswith("rocm.")})

    # ---- this machine: Debian's ROCm 5.2 without an AMD GPU ----------------------------------------

    def test_debian_rocm_without_hardware_is_info(self):
        r = self.rocm(None, command="check", env={"LD_LIBRARY_PATH": None})
        rt = r.json["rocm"]["runtime"]
        hsa_installed = any(os.path.exists(os.path.join(d, "libhsa-runtime64.so.1"))
                            for d in ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"))
        self.assertTrue(hsa_installed, "Debian's libhsa-runtime64-1 (.ci/packages) is not installed")
        # No AMD GPU and no /dev/kfd here: the runtime, which drives only AMD's GPUs, is not loaded (the speed
        # policy, docs/performance.md); Debian's package has every dependency it needs.
        self.assertFalse(os.path.exists("/dev/kfd"))
        self.assertEqual((rt["status"], rt["where"], rt["missing_needed"]), ("not-loaded", None, None), repr(rt))
        self.assertIn("no AMD GPU: no PCI GPU of vendor 1002 (AMD)", rt["detail"])
        self.assertNotIn("hsa", rt)
        self.assertEqual(self.ids(r), ["rocm.no-device"])
        f = r.findings("rocm.no-device")[0]
        self.assertEqual(f["severity"], "info")
        self.assertTrue(f["message"].endswith("there is no AMD GPU on the PCI bus (not loaded)"), f["message"])
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0, repr(r))
        self.assertEqual(r.rc, 0, repr(r))
        self.assertIn("HIP (ROCm): not available", r.json["verdict"]["text"])
        self.assertEqual(r.json["rocm"]["smoke"], {"not_run": "no AMD GPU here (the runtime was not loaded)"})
        lines = [(x["mark"], x["text"]) for x in r.json["rocm"]["summary"] if x["label"] == "ROCm"]
        self.assertEqual(lines, [("info", "no AMD GPU here; runtime not loaded")])
        text = gctest.run("rocm", "-v", env={"LD_LIBRARY_PATH": None}).stdout
        self.assertRegex(text, r"\n  runtime +not loaded: no AMD GPU: no PCI GPU of vendor 1002 \(AMD\)[^\n]*\n")

    def test_tree_with_an_amd_gpu_still_loads_this_machines_runtime(self):
        """Debian's real ROCm 5.2, loaded because the tree (--root --live) has an AMD GPU: ROCr's hsa_init fails
        with HSA_STATUS_ERROR_OUT_OF_RESOURCES, this machine having no /dev/kfd."""
        self.assertFalse(os.path.exists("/dev/kfd"))
        r = self.rocm(self.tree(), "--no-smoke", live=True, env={"LD_LIBRARY_PATH": None})
        rt = r.json["rocm"]["runtime"]
        self.assertEqual(rt["status"], "ok", repr(rt))
        self.assertEqual((rt["hsa"]["status"], rt["hsa"]["init"]["code"]), ("init-failed", 0x1008))
        self.assertIn("OUT_OF_RESOURCES", rt["hsa"]["init"]["text"])
        # rocm-smi's library (librocm-smi64-1): rsmi_init fails without an amdgpu device (RSMI_STATUS_INIT_ERROR, 8)
        self.assertEqual((rt["smi"]["status"], rt["smi"]["init"]["code"]), ("init-failed", 8))
        if rt["hip"]["status"] != "no-library":  # libamdhip64-5: hipErrorNoDevice, its version 5.x
            self.assertEqual(rt["hip"]["device_count_result"]["name"], "hipErrorNoDevice")
            self.assertTrue(rt["hip"]["runtime_version"].startswith("5."), rt["hip"])
        self.assertEqual(self.ids(r), ["rocm.hsa-init-failed"])

    def test_runtime_of_absent_hardware_is_not_loaded(self):
        """A runtime that would crash in hsa_init, on this machine without an AMD GPU: never loaded, so never
        crashes (before, the child loaded it on every host and reported "crash")."""
        self.assertFalse(os.path.exists("/dev/kfd"))
        d = self.libdir()
        r = self.rocm(None, env={"LD_LIBRARY_PATH": d, "GC_FAKE_HSA_INIT": "crash"}, expect_rc=0)
        rt = r.json["rocm"]["runtime"]
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", None), repr(rt))
        self.assertEqual(self.ids(r), ["rocm.no-device"])
        self.assertEqual(r.findings("rocm.no-device")[0]["subject"], os.path.join(d, "libhsa-runtime64.so.1"))

    def test_broken_runtime_of_absent_hardware_is_named_from_its_files(self):
        """The fake runtime with its DT_NEEDED libm.so.6 renamed libq.so.6 (found nowhere): not loaded, the
        dependency dlopen would miss is named from the dynamic section."""
        d = self.libdir()
        path = os.path.join(d, "libhsa-runtime64.so.1")
        with open(path, "rb") as f:
            data = f.read()
        self.assertIn(b"\0libm.so.6\0", data)
        with open(path, "wb") as f:
            f.write(data.replace(b"\0libm.so.6\0", b"\0libq.so.6\0"))
        r = self.rocm(None, env={"LD_LIBRARY_PATH": d}, expect_rc=0)
        rt = r.json["rocm"]["runtime"]
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", "libq.so.6"), repr(rt))
        f = r.findings("rocm.no-device")[0]
        self.assertEqual(f["severity"], "info")
        self.assertIn("(not loaded; it could not be, not found: libq.so.6)", f["message"])

    def test_tree_without_amd_gpu_is_not_loaded(self):
        """--root --live on a tree with an NVIDIA GPU only: the fake (which would crash) is not loaded."""
        t = PciTree(self.make_tree())
        t.device(ADDR, 0x10de, 0x2330, 0x030200, driver="nvidia")
        r = self.rocm(t, live=True, env={"GC_FAKE_HSA_INIT": "crash"})
        rt = r.json["rocm"]["runtime"]
        self.assertEqual((rt["status"], rt["missing_needed"]), ("not-loaded", None), repr(rt))
        self.assertNotIn("rocm.runtime-crashed", self.ids(r))
        # WSL2's /dev/dxg: the PCI facts say nothing of the GPU behind it, so the runtime is loaded as before
        t.node("/dev/dxg", 0o666)
        r = self.rocm(t, live=True, env={"GC_FAKE_HSA_INIT": "crash"})
        self.assertEqual(r.json["rocm"]["runtime"]["status"], "crash", repr(r))

    # ---- files only (--root) ---------------------------------------------------------------------

    def test_rx7900_tree(self):
        r = self.rocm(self.tree())
        sec = r.json["rocm"]
        self.assertIsNone(sec["runtime"])
        self.assertIsNone(sec["device_nodes"])  # not this machine's files
        self.assertEqual(sec["kernel"]["amdgpu_initstate"], "live")
        self.assertIsNone(sec["kernel"]["dkms_module"])
        cpu, gpu = sec["nodes"]
        self.assertFalse(cpu["gpu"])
        self.assertIsNone(cpu["gfx"])
        self.assertEqual((gpu["gfx"], gpu["pci_address"], gpu["on_pci_bus"], gpu["vram_bytes"], gpu["support"]),
                         ("gfx1100", ADDR, True, VRAM, "supported"))
        self.assertEqual(gpu["integrated"], False)
        # The tree holds no ROCm runtime: said, as information.
        self.assertEqual(self.ids(r), ["rocm.no-runtime"])
        self.assertEqual(r.findings("rocm.no-runtime")[0]["severity"], "info")

    def test_dkms_module_seen(self):
        t = self.tree()
        t.t.write("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
        t.t.write("/lib/modules/6.8.0-45-generic/updates/dkms/amdgpu.ko.zst", "")
        t.t.write("/sys/module/amdgpu/version", "6.8.5\n")
        k = self.rocm(t).json["rocm"]["kernel"]
        self.assertEqual(k["dkms_module"], "/lib/modules/6.8.0-45-generic/updates/dkms/amdgpu.ko.zst")
        self.assertEqual(k["amdgpu_version"], "6.8.5")

    def test_unsupported_gfx_names_the_override(self):
        r = self.rocm(self.tree(gfx_version=100301, device=0x73df))  # RX 6700 XT: gfx1031
        self.assertEqual(self.ids(r), ["rocm.gfx-unsupported", "rocm.no-runtime"])
        f = r.findings("rocm.gfx-unsupported")[0]
        self.assertEqual((f["severity"], f["subject"]), ("warning", ADDR))
        self.assertIn("HSA_OVERRIDE_GFX_VERSION=10.3.0", f["hint"])

    def rocblas(self, t, layout, targets):
        """A rocBLAS in the tree: the library (an ELF file: the fake) and its Tensile files for TARGETS."""
        lib = "/usr/lib/x86_64-linux-gnu"  # a directory the dynamic linker searches without a cache
        t.t.mkdir(lib)
        shutil.copy(FAKE, t.t.path(lib + "/librocblas.so.4"))
        # AMD's packages put the Tensile files at <libdir>/rocblas/library, Debian's at <libdir>/rocblas/VERSION/library
        d = lib + ("/rocblas/library" if layout == "amd" else "/rocblas/4.3.0/library")
        for g in targets:  # file names as AMD's packages ship them
            t.t.write("%s/TensileLibrary_lazy_%s.dat" % (d, g), "")
            t.t.write("%s/Kernels.so-000-%s.hsaco" % (d, g), "")
        t.t.write(d + "/TensileManifest.txt", "")

    def test_rocblas_without_the_gpus_kernels(self):
        t = self.tree()  # gfx1100
        self.rocblas(t, "debian", ["gfx1030", "gfx90a", "gfx942"])
        r = self.rocm(t)
        rb = r.json["rocm"]["rocblas"]
        self.assertEqual((rb["library"], rb["tensile_dir"], rb["targets"]),
                         ("/usr/lib/x86_64-linux-gnu/librocblas.so.4", "/usr/lib/x86_64-linux-gnu/rocblas/4.3.0/library",
                          ["gfx1030", "gfx90a", "gfx942"]))
        self.assertEqual(self.ids(r), ["rocm.no-runtime", "rocm.rocblas-no-code"])
        self.assertIn("no kernels for gfx1100", r.findings("rocm.rocblas-no-code")[0]["message"])

    def test_rocblas_with_the_gpus_kernels_outweighs_the_list(self):
        # AMD does not list gfx1031, but this rocBLAS has its kernels: no warning
        t = self.tree(gfx_version=100301, device=0x73df)
        self.rocblas(t, "amd", ["gfx1030", "gfx1031"])
        r = self.rocm(t)
        self.assertEqual(r.json["rocm"]["rocblas"]["tensile_dir"], "/usr/lib/x86_64-linux-gnu/rocblas/library")
        self.assertEqual(self.ids(r), ["rocm.no-runtime"])

    def test_rocblas_and_the_override(self):
        t = self.tree(gfx_version=100301, device=0x73df)
        self.rocblas(t, "amd", ["gfx1030", "gfx1100"])
        r = self.rocm(t, live=True, env={"GC_FAKE_HSA_GPUS": "gfx1030@0300"})
        self.assertEqual(self.ids(r), ["rocm.rocblas-no-code"])
        self.assertIn("HSA_OVERRIDE_GFX_VERSION=10.3.0", r.findings("rocm.rocblas-no-code")[0]["hint"])
        r = self.rocm(t, live=True, env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "GC_FAKE_HSA_GPUS": "gfx1030@0300"})
        self.assertEqual(self.ids(r), ["rocm.gfx-override"])

    def add_raphael_igpu(self, t):
        """A Ryzen 7000's integrated graphics (Raphael, 1002:164e, gfx1036) beside the card, as KFD node 2."""
        igpu = "0000:13:00.0"
        t.device(igpu, 0x1002, 0x164e, 0x030000, driver="amdgpu", drm=("card1", "renderD129"))
        t.t.write("/sys/class/kfd/kfd/topology/nodes/2/properties",
                  RX7900_PROPS.replace("gfx_target_version 110000", "gfx_target_version 100306")
                  .replace("location_id 768", "location_id %d" % 0x1300).replace("simd_count 192", "simd_count 4")
                  .replace("device_id 29772", "device_id %d" % 0x164e).replace("drm_render_minor 128", "drm_render_minor 129"))
        t.node("/dev/dri/renderD129", 0o666)
        return igpu

    def test_integrated_gpu_beside_a_supported_card_is_information(self):
        t = self.tree()
        igpu = self.add_raphael_igpu(t)
        r = self.rocm(t)
        nodes = {n["pci_address"]: n for n in r.json["rocm"]["nodes"] if n["gpu"]}
        self.assertEqual((nodes[igpu]["gfx"], nodes[igpu]["integrated"], nodes[igpu]["support"]), ("gfx1036", True, "unsupported"))
        self.assertEqual(self.ids(r), ["rocm.igpu-unsupported", "rocm.no-runtime"])
        f = r.findings("rocm.igpu-unsupported")[0]
        self.assertEqual((f["subject"], f["severity"]), (igpu, "info"))
        self.assertEqual(r.json["verdict"]["counts"]["warning"], 0)
        # hidden already: nothing to say
        r = self.rocm(t, live=True, env={"HIP_VISIBLE_DEVICES": "0", "GC_FAKE_HSA_GPUS": "gfx1100@0300"})
        self.assertEqual(self.ids(r), [])
        # alone (no card ROCm supports), it is the GPU: unsupported, a warning
        t2 = self.tree(gfx_version=100306, device=0x164e)
        self.assertIn("rocm.gfx-unsupported", self.ids(self.rocm(t2)))

    # ---- issue 36: chips KFD refuses, and an integrated GPU first beside a card that needs the override ----

    def test_chip_kfd_refuses_is_named(self):
        """A Radeon HD 7970 (Tahiti, GCN 1, 1002:6798) on amdgpu (si_support=1): KFD logs "tahiti not supported in
        kfd" and makes no node; that is the kernel's refusal, not a missing ROCm."""
        t = self.tree(device=0x6798)
        os.remove(t.t.path("/sys/class/kfd/kfd/topology/nodes/1/properties"))
        r = self.rocm(t)
        self.assertIn("rocm.kfd-unsupported-chip", self.ids(r))
        self.assertNotIn("rocm.gpu-not-in-kfd", self.ids(r))
        f = r.findings("rocm.kfd-unsupported-chip")[0]
        self.assertEqual((f["subject"], f["severity"]), (ADDR, "warning"))
        for word in ("Tahiti", "GCN 1", "not supported in kfd", "no ROCm"):
            self.assertIn(word, f["message"])
        self.assertIn("rusticl", f["hint"])
        # Hawaii: KFD's support is experimental, behind amdgpu.exp_hw_support=1
        t = self.tree(device=0x67b0)
        os.remove(t.t.path("/sys/class/kfd/kfd/topology/nodes/1/properties"))
        f = self.rocm(t).findings("rocm.kfd-unsupported-chip")
        self.assertEqual(len(f), 1)
        self.assertIn("amdgpu.exp_hw_support=1", f[0]["hint"])
        # a chip KFD takes but left out (an RX 7900 XTX without its node): the old finding, as before
        t = self.tree()
        os.remove(t.t.path("/sys/class/kfd/kfd/topology/nodes/1/properties"))
        self.assertIn("rocm.gpu-not-in-kfd", self.ids(self.rocm(t)))
        # Hawaii with exp_hw_support reaches KFD as gfx701: a target ROCm does not support, named as such
        r = self.rocm(self.tree(gfx_version=70001, device=0x67b0))
        self.assertIn("rocm.gfx-unsupported", self.ids(r))
        self.assertEqual(r.json["rocm"]["nodes"][1]["support"], "unsupported")

    def igpu_first(self, t):
        """Make the Raphael iGPU KFD node 1 (HIP device 0) and the card node 2."""
        igpu = self.add_raphael_igpu(t)
        a, b = (t.t.path("/sys/class/kfd/kfd/topology/nodes/%d/properties" % i) for i in (1, 2))
        with open(a) as fa, open(b) as fb:
            ta, tb = fa.read(), fb.read()
        with open(a, "w") as fa, open(b, "w") as fb:
            fa.write(tb)
            fb.write(ta)
        return igpu

    def test_integrated_gpu_first_beside_a_card_that_needs_the_override(self):
        """An RX 6600 (gfx1032, ROCm runs it with HSA_OVERRIDE_GFX_VERSION=10.3.0) beside Raphael graphics that KFD
        lists first: HIP device 0 is the integrated GPU, named even though the card itself needs the override."""
        t = self.tree(gfx_version=100302, device=0x73ff)
        igpu = self.igpu_first(t)
        r = self.rocm(t)
        self.assertEqual(self.ids(r), ["rocm.gfx-unsupported", "rocm.igpu-first", "rocm.no-runtime"])
        f = r.findings("rocm.igpu-first")[0]
        self.assertEqual((f["subject"], f["severity"]), (igpu, "warning"))
        for word in ("HIP device 0", "device 1", "HSA_OVERRIDE_GFX_VERSION=10.3.0"):
            self.assertIn(word, f["message"])
        self.assertIn("HIP_VISIBLE_DEVICES=1", f["hint"])
        self.assertEqual([x["subject"] for x in r.findings("rocm.gfx-unsupported")], [ADDR])
        # the override set: the card runs, the integrated GPU is still device 0
        r = self.rocm(t, live=True, env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0",
                                         "GC_FAKE_HSA_GPUS": "gfx1030@1300,gfx1030@0300"})
        self.assertIn("rocm.igpu-first", self.ids(r))
        # the card listed first: information, as beside a supported card
        t = self.tree(gfx_version=100302, device=0x73ff)
        self.add_raphael_igpu(t)
        r = self.rocm(t)
        self.assertEqual(self.ids(r), ["rocm.gfx-unsupported", "rocm.igpu-unsupported", "rocm.no-runtime"])
        self.assertIn("HSA_OVERRIDE_GFX_VERSION=10.3.0", r.findings("rocm.igpu-unsupported")[0]["message"])
        # a card ROCm can neither support nor run by override (RX 5700, gfx1010): nothing about the iGPU's order
        t = self.tree(gfx_version=100100, device=0x731f)
        self.igpu_first(t)
        ids = self.ids(self.rocm(t))
        self.assertNotIn("rocm.igpu-first", ids)
        self.assertNotIn("rocm.igpu-unsupported", ids)

    def test_kfd_nodes_past_the_cap_are_said(self):
        """Issue 36: KFD nodes past the 256 read are counted in a note, never dropped silently."""
        t = self.tree()
        for i in range(2, 260):
            t.t.mkdir("/sys/class/kfd/kfd/topology/nodes/%d" % i)
        r = self.rocm(t)
        notes = [n for n in r.json["rocm"].get("notes", []) if "KFD topology node" in n]
        self.assertEqual(notes, ["4 more KFD topology nodes past the first 256 were not read"])
        self.assertFalse([n for n in self.rocm(self.tree()).json["rocm"].get("notes", []) if "KFD topology node" in n])

    def test_no_kfd(self):
        r = self.rocm(self.tree(kfd=False))
        self.assertEqual(self.ids(r), ["rocm.no-kfd", "rocm.no-runtime"])

    def test_amdgpu_not_live(self):
        r = self.rocm(self.tree(initstate="coming"))
        self.assertIn("rocm.amdgpu-not-live", self.ids(r))

    # ---- the runtime: the fake HSA/HIP on a tree (--root --live) --------------------------------------

    def test_fake_runtime_reaches_the_gpu(self):
        r = self.rocm(self.tree(), "--require", "rocm", live=True, expect_rc=0)
        rt = r.json["rocm"]["runtime"]
        self.assertEqual((rt["hsa"]["status"], rt["hsa"]["version"]), ("ok", "1.14"))
        gpu = [a for a in rt["hsa"]["agents"] if a["device_type"] == "gpu"]
        self.assertEqual([(a["name"], a["pci_address"]) for a in gpu], [("gfx1100", ADDR)])
        self.assertEqual((rt["hip"]["runtime_version"], rt["hip"]["device_count"]), ("6.2.41133", 1))
        self.assertEqual(self.ids(r), [])
        self.assertTrue(r.json["verdict"]["targets"]["rocm"]["ready"])
        self.assertIn("HIP (ROCm): ready on %s gfx1100 Fake Radeon (HIP 6.2.41133; HIP smoke test passed)" % ADDR,
                      r.json["verdict"]["text"])
        sm = r.json["rocm"]["smoke"]["devices"]
        self.assertEqual([(d["ordinal"], d["gfx"], d["status"], [p["pass"] for p in d["passes"]]) for d in sm],
                         [(0, "gfx1100", "pass", ["exact", "random"])])
        self.assertEqual([q["met"] for q in r.json["verdict"]["requirements"]], [True])
        nfd = gctest.run("rocm", "--root", self.tree().root, "--live", "--format=nfd",
                         env={"LD_LIBRARY_PATH": self.libdir()})
        for label in ("gpucheckup-rocm.gfx=gfx1100", "gpucheckup-rocm.device-count=1", "gpucheckup-rocm.ready=true",
                      "gpucheckup-hip.ready=true"):
            self.assertIn("feature.node.kubernetes.io/" + label, nfd.stdout.splitlines())

    def test_smoke_not_run_is_untested(self):
        r = self.rocm(self.tree(), "--no-smoke", live=True)
        self.assertEqual(r.json["rocm"]["smoke"], {"not_run": "--no-smoke"})
        self.assertIn("HIP (ROCm): reaches %s gfx1100 Fake Radeon (HIP 6.2.41133; untested: --no-smoke)" % ADDR,
                      r.json["verdict"]["text"])

    def test_smoke_device_that_computes_nothing(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HIP_SMOKE": "nothing"}, command="check")
        f = r.findings("rocm.smoke-wrong-result")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual((f[0]["subject"], f[0]["severity"]), (ADDR, "error"))
        self.assertIn("the kernel left the output buffer as it was", f[0]["message"])
        self.assertFalse(r.json["verdict"]["targets"]["rocm"]["ready"])
        self.assertIn("rocm.smoke-wrong-result", r.json["verdict"]["targets"]["rocm"]["reasons"])

    def test_smoke_wrong_element(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HIP_SMOKE": "wrong"})
        f = r.findings("rocm.smoke-wrong-result")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("1 of 65536 elements wrong; first at row 1, column 1", f[0]["message"])

    def test_smoke_failures(self):
        for mode, words in (("compile-error", "hiprtcCompileProgram returned"), ("launch-error", "hipModuleLaunchKernel"),
                            ("crash", "crashed on HIP device 0"), ("hang", "hung on HIP device 0")):
            extra = ("--timeout", "4") if mode == "hang" else ()
            r = self.rocm(self.tree(), *extra, live=True, env={"GC_FAKE_HIP_SMOKE": mode})
            self.assertEqual(self.ids(r), ["rocm.smoke-failed"], mode)
            self.assertIn(words, r.findings("rocm.smoke-failed")[0]["message"], mode)
        self.assertIn("undeclared identifier", gctest.run("rocm", "--root", self.tree().root, "--live", "--json",
                      env={"LD_LIBRARY_PATH": self.libdir(), "GC_FAKE_HIP_SMOKE": "compile-error"}).stdout)

    def test_out_of_resources_is_an_error(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HSA_INIT": "oor"})
        self.assertEqual(self.ids(r), ["rocm.hsa-init-failed"])
        self.assertIn("(0x1008)", r.findings("rocm.hsa-init-failed")[0]["message"])

    def test_hang_in_init_ends_within_the_timeout(self):
        start = time.monotonic()
        r = self.rocm(self.tree(), "--timeout", "3", live=True, env={"GC_FAKE_HSA_INIT": "hang"})
        self.assertLess(time.monotonic() - start, 3 + 2 * (gctest.SANITIZED_SCALE if gctest.SANITIZED else 1) + 2)
        f = r.findings("rocm.runtime-crashed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("hung in hsa_init", f[0]["message"])

    def test_crash_in_init(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HSA_INIT": "crash"})
        f = r.findings("rocm.runtime-crashed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("in hsa_init", f[0]["message"])
        self.assertIn("SIGSEGV", f[0]["message"])

    def test_hip_without_device(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HIP_COUNT": "nodevice"})
        self.assertEqual(self.ids(r), ["rocm.hip-no-device"])
        self.assertIn("hipErrorNoDevice", r.findings("rocm.hip-no-device")[0]["message"])

    def test_no_gpu_agent(self):
        r = self.rocm(self.tree(), live=True, env={"GC_FAKE_HSA_GPUS": ""})
        self.assertEqual(self.ids(r), ["rocm.no-gpu-agent"])

    def test_visible_devices_hide_every_gpu(self):
        for env in ({"HIP_VISIBLE_DEVICES": "1"}, {"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "1"},
                    {"ROCR_VISIBLE_DEVICES": "-1"}):
            r = self.rocm(self.tree(), live=True, env=dict(env, GC_FAKE_HSA_GPUS=""))
            self.assertEqual(self.ids(r), ["rocm.visible-devices-hide-all"], env)
        r = self.rocm(self.tree(), live=True, env={"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"})
        self.assertEqual(self.ids(r), [])

    def test_override_named_instead_of_unsupported(self):
        r = self.rocm(self.tree(gfx_version=100301, device=0x73df), live=True,
                      env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "GC_FAKE_HSA_GPUS": "gfx1030@0300"})
        self.assertEqual(self.ids(r), ["rocm.gfx-override"])
        f = r.findings("rocm.gfx-override")[0]
        self.assertEqual(f["severity"], "info")
        self.assertIn("gfx1031", f["message"])


if __name__ == "__main__":
    gctest.main()
