"""End-to-end tests of the pci probe on fake /sys, /proc and /dev trees laid out as the kernel does."""
import glob
import os
import shutil
import struct
import subprocess
import time

import gctest

HERE = os.path.dirname(os.path.abspath(__file__))
DUMP = os.path.join(HERE, "dump-allones.txt")
AREAS = ("pci.", "drv.", "dev.")


def config_space(vendor, device, cls, sub=(0, 0), size=64, exp_link=None):
    """Bytes of a type-0 configuration header; EXP_LINK=(max_code, max_w, cur_code, cur_w) adds a PCIe cap."""
    c = bytearray(size)
    struct.pack_into("<HH", c, 0, vendor, device)
    c[0x0a] = cls & 0xff
    c[0x0b] = cls >> 8
    struct.pack_into("<HH", c, 0x2c, *sub)
    if exp_link:
        assert size >= 256
        struct.pack_into("<H", c, 0x06, 0x10)  # status: capability list
        c[0x34] = 0x60
        c[0x60:0x64] = bytes([0x10, 0x00, 0x02, 0x00])
        mc, mw, cc, cw = exp_link
        struct.pack_into("<I", c, 0x6c, mc | mw << 4)
        struct.pack_into("<H", c, 0x72, cc | cw << 4)
    return bytes(c)


class PciTree:
    """A fake host tree with PCI devices, modules, libraries and device nodes."""

    def __init__(self, tree):
        self.t = tree
        self.root = tree.root
        self.modules = []
        tree.mkdir("/sys/bus/pci/devices")
        tree.mkdir("/sys/bus/pci/drivers")

    def device(self, addr, vendor, device, cls, driver=None, dangling=True, bridge=None, config=None,
               link=None, numa=0, boot_vga=None, power="D0", drm=(), sub=(0, 0), skip=()):
        """Add a PCI function. CLS is 24 bits (0x030000). LINK=(cur_speed, cur_w, max_speed, max_w) strings/ints.
        BRIDGE puts it behind that bridge's address, as the kernel nests it. SKIP leaves out attribute files."""
        domain = addr.rsplit(":", 2)[0]
        rel = "pci%s:00/" % domain + (bridge + "/" if bridge else "") + addr
        dev = "/sys/devices/" + rel
        up = "../" * (rel.count("/") + 2)  # from the device directory back up to /sys
        attrs = {
            "vendor": "0x%04x\n" % vendor, "device": "0x%04x\n" % device, "class": "0x%06x\n" % cls,
            "subsystem_vendor": "0x%04x\n" % sub[0], "subsystem_device": "0x%04x\n" % sub[1],
            "numa_node": "%d\n" % numa, "irq": "16\n", "power_state": power + "\n",
            "modalias": "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n" % (
                vendor, device, sub[0], sub[1], cls >> 16, (cls >> 8) & 0xff, cls & 0xff),
        }
        if boot_vga is not None:
            attrs["boot_vga"] = "%d\n" % boot_vga
        if link:
            attrs["current_link_speed"] = "%s\n" % link[0]
            attrs["current_link_width"] = "%s\n" % link[1]
            attrs["max_link_speed"] = "%s\n" % link[2]
            attrs["max_link_width"] = "%s\n" % link[3]
        for k, v in attrs.items():
            if k not in skip:
                self.t.write(dev + "/" + k, v)
        if "config" not in skip:
            self.t.write(dev + "/config", config if config is not None else config_space(vendor, device, cls >> 8, sub))
        self.t.symlink("../../../devices/" + rel, "/sys/bus/pci/devices/" + addr)
        if driver:
            self.t.symlink(up + "bus/pci/drivers/" + driver, dev + "/driver")
            if not dangling:
                self.t.mkdir("/sys/bus/pci/drivers/" + driver)
        for n in drm:
            self.t.mkdir(dev + "/drm/" + n)
        return dev

    def module(self, name, refcount=0):
        self.modules.append("%s 1234567 %d - Live 0x0000000000000000\n" % (name, refcount))
        self.t.write("/proc/modules", "".join(self.modules))

    def node(self, path, mode=0o666, gid=None, fifo=False):
        p = self.t.path(path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if fifo:
            os.mkfifo(p)
        else:
            open(p, "w").close()
        os.chmod(p, mode)
        if gid is not None:
            os.chown(p, 0, gid)
        return p

    def nvidia_version(self, v, open_module=False):
        flavor = "NVIDIA UNIX Open Kernel Module for x86_64" if open_module else "NVIDIA UNIX x86_64 Kernel Module"
        self.t.write("/proc/driver/nvidia/version",
                     "NVRM version: %s  %s  Release Build  (dvs-builder@U16)  Thu May 30 2024\n"
                     "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n" % (flavor, v))

    def nvidia_libs(self, v, libdir="/usr/lib/x86_64-linux-gnu"):
        for lib in ("libcuda.so", "libnvidia-opencl.so", "libnvidia-ml.so"):
            self.t.write("%s/%s.%s" % (libdir, lib, v), "")
            self.t.symlink("%s.%s" % (lib, v), "%s/%s.1" % (libdir, lib))

    def healthy_nvidia(self, addr="0000:01:00.0", v="550.90.07"):
        self.device(addr, 0x10de, 0x2204, 0x030000, driver="nvidia", bridge="0000:00:01.0",
                    link=("16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16), boot_vga=1, drm=("card0", "renderD128"))
        self.module("nvidia", 3)
        self.module("nvidia_uvm")
        self.module("nvidia_drm")
        self.nvidia_version(v)
        self.nvidia_libs(v)
        self.node("/dev/nvidiactl")
        self.node("/dev/nvidia0")
        self.node("/dev/nvidia-uvm")
        self.node("/dev/dri/card0", 0o660)
        self.node("/dev/dri/renderD128", 0o666)


class PciTests(gctest.TestCase):
    def tree(self):
        return PciTree(self.make_tree())

    def pci(self, t, *extra, expect_rc=None):
        r = self.run_json("pci", "--root", t.root, *extra, expect_rc=expect_rc)
        self.assertEqual(r.json["pci"]["status"], "ok", repr(r))
        return r

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"] if f["id"].startswith(AREAS)})

    def subjects(self, r, fid):
        return sorted(f["subject"] for f in r.findings(fid))

    # ---- healthy and empty ----------------------------------------------------------------

    def test_healthy_nvidia_gpu(self):
        t = self.tree()
        t.healthy_nvidia()
        r = self.pci(t, expect_rc=0)
        self.assertEqual(self.ids(r), [])
        pci = r.json["pci"]
        self.assertEqual(len(pci["devices"]), 1)
        d = pci["devices"][0]
        self.assertEqual(d["address"], "0000:01:00.0")
        self.assertEqual((d["vendor_id"], d["device_id"], d["class"]), ("10de", "2204", "0300"))
        # names come from pci.ids through libpci
        self.assertEqual(d["vendor_name"], "NVIDIA Corporation")
        self.assertIn("GA102", d["device_name"])
        # the driver link dangles (its target was not captured): readlink still names it
        self.assertFalse(os.path.exists(t.t.path("/sys/bus/pci/drivers/nvidia")))
        self.assertEqual(d["driver"], "nvidia")
        self.assertEqual(d["kind"], "compute-gpu")
        self.assertEqual(d["link"]["current_width"], 16)
        self.assertEqual(d["link"]["max_speed"], 16.0)
        self.assertEqual(d["link"]["source"], "sysfs")
        self.assertEqual(d["numa_node"], 0)
        self.assertIs(d["boot_vga"], True)
        self.assertEqual(d["power_state"], "D0")
        self.assertTrue(d["modalias"].startswith("pci:v000010DEd00002204"))
        self.assertEqual(d["drm"], ["card0", "renderD128"])
        self.assertEqual(d["id_source"], "libpci")
        self.assertIs(d["responding"], True)
        self.assertIs(pci["modules"]["nvidia"]["loaded"], True)
        self.assertEqual(pci["modules"]["nvidia"]["refcount"], 3)
        self.assertIs(pci["modules"]["nouveau"]["loaded"], False)
        self.assertEqual(sorted(pci["modules"]), sorted(
            ["nvidia", "nvidia_uvm", "nvidia_drm", "nouveau", "amdgpu", "radeon", "i915", "xe"]))
        self.assertEqual(pci["nvidia"]["kernel_module_version"], "550.90.07")
        self.assertIs(pci["nvidia"]["kernel_module_open"], False)
        libs = {os.path.basename(l["path"]): l["version"] for l in pci["nvidia"]["libraries"]}
        self.assertEqual(libs, {"libcuda.so.550.90.07": "550.90.07", "libnvidia-opencl.so.550.90.07": "550.90.07",
                                "libnvidia-ml.so.550.90.07": "550.90.07"})
        nodes = {n["path"]: n for n in pci["nodes"]}
        for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/dri/card0", "/dev/dri/renderD128"):
            self.assertTrue(nodes[p]["present"], p)
            self.assertIs(nodes[p]["accessible"], True, p)
        self.assertEqual(nodes["/dev/nvidiactl"]["mode"], "0666")
        self.assertEqual(nodes["/dev/dri/renderD128"]["device"], "0000:01:00.0")
        self.assertEqual(r.json["pci"]["summary"][0]["label"], "GPU")
        self.assertEqual(r.json["pci"]["summary"][0]["mark"], "ok")
        # text: like lspci -k
        text = gctest.run("pci", "--root", t.root)
        self.assertIn("0000:01:00.0 VGA compatible controller [0300]: NVIDIA Corporation", text.stdout)
        self.assertIn("Kernel driver in use: nvidia", text.stdout)
        self.assertIn("Link: 16.0 GT/s x16", text.stdout)
        self.assertRegex(text.stdout, r"\[ ok \] GPU +0000:01:00.0 .*driver nvidia, PCIe 16.0 GT/s x16")

    def test_empty_tree_is_no_gpu_not_failure(self):
        t = self.make_tree()
        r = self.run_json("pci", "--root", t.root, expect_rc=0)
        self.assertEqual(r.json["pci"]["status"], "ok")
        self.assertEqual(self.ids(r), ["pci.no-gpu"])
        self.assertIs(r.json["pci"]["bus_visible"], False)
        self.assertEqual(r.json["pci"]["devices"], [])
        self.assertIsNone(r.json["pci"]["modules"]["nvidia"]["loaded"])  # nothing says either way
        text = gctest.run("pci", "--root", t.root)
        self.assertRegex(text.stdout, r"\[info\] GPU +no GPU found")

    def test_no_gpu_among_other_devices(self):
        t = self.tree()
        t.device("0000:00:00.0", 0x8086, 0x1237, 0x060000)
        t.device("0000:00:03.0", 0x1af4, 0x1041, 0x020000, driver="virtio-pci")
        r = self.pci(t, expect_rc=0)
        self.assertEqual(self.ids(r), ["pci.no-gpu"])
        self.assertEqual(r.json["pci"]["scanned"], 2)
        self.assertEqual(r.json["pci"]["devices"], [])
        self.assertEqual(r.findings("pci.no-gpu")[0]["severity"], "info")

    def test_display_only_without_driver_is_normal(self):
        t = self.tree()
        t.device("0000:03:00.0", 0x1a03, 0x2000, 0x030000, boot_vga=1)
        r = self.pci(t, expect_rc=0)
        self.assertEqual(self.ids(r), ["pci.no-gpu"])
        d = r.json["pci"]["devices"][0]
        self.assertEqual(d["kind"], "display-only")
        self.assertIsNone(d["driver"])
        self.assertIn("display-only", r.findings("pci.no-gpu")[0]["message"])

    # ---- one scenario per finding ---------------------------------------------------------

    def test_no_driver(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000)
        t.device("0000:02:00.0", 0x1da3, 0x1000, 0x120000)  # Habana accelerator, no driver either
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.no-driver"])
        self.assertEqual(self.subjects(r, "pci.no-driver"), ["0000:01:00.0", "0000:02:00.0"])
        f = [f for f in r.findings("pci.no-driver") if f["subject"] == "0000:01:00.0"][0]
        self.assertIn("modprobe nvidia", f["hint"])
        self.assertEqual(r.json["pci"]["devices"][1]["kind"], "accelerator")

    # ---- an NVIDIA GPU with no driver: why, from files (issue 24 item 4) -------------------------

    KREL = "6.1.0-18-amd64"

    def unbound_nvidia(self, userspace="535.261.03", dep=None, dkms=None, modprobe=None, cmdline=None):
        """An NVIDIA GPU with no driver and no nvidia module loaded; USERSPACE libraries (Debian's layout) or
        none; the running kernel's modules.dep lines (None: no modules.dep); DKMS builds {VERSION: [KERNEL]};
        modprobe.d files {NAME: TEXT}; the kernel command line."""
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2330, 0x030200)
        t.module("snd_hda_intel")
        t.t.write("/proc/sys/kernel/osrelease", self.KREL + "\n")
        if userspace:
            t.nvidia_libs(userspace)
        if dep is not None:
            t.t.write("/lib/modules/%s/modules.dep" % self.KREL, "".join(x + "\n" for x in dep))
        for version, kernels in (dkms or {}).items():
            for k in kernels:
                t.t.mkdir("/var/lib/dkms/nvidia-current/%s/%s/x86_64/module" % (version, k))
            t.t.mkdir("/var/lib/dkms/nvidia-current/%s/source" % version)
        for name, text in (modprobe or {}).items():
            t.t.write("/etc/modprobe.d/" + name, text)
        t.t.write("/proc/cmdline", cmdline or "BOOT_IMAGE=/vmlinuz-%s root=/dev/sda1 ro quiet\n" % self.KREL)
        return t

    def no_driver(self, r):
        f = r.findings("pci.no-driver")
        self.assertEqual(len(f), 1, repr(r))
        return f[0]

    def test_unbound_nvidia_module_not_built_for_the_running_kernel(self):
        """A kernel update without headers: DKMS built the module for the old kernel only."""
        t = self.unbound_nvidia(dep=["kernel/sound/pci/hda/snd-hda-intel.ko: kernel/sound/core/snd.ko"],
                                dkms={"535.261.03": ["6.1.0-13-amd64"]})
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nvidia-not-built", "pci.no-driver"])
        nb = r.findings("drv.nvidia-not-built")[0]
        for word in ("535.261.03", self.KREL, "6.1.0-13-amd64"):
            self.assertIn(word, nb["message"])
        self.assertIn("linux-headers", nb["hint"])
        self.assertEqual((self.no_driver(r)["caused_by"] or {}).get("id"), "drv.nvidia-not-built")
        km = r.json["pci"]["nvidia"]["kernel_module"]
        self.assertEqual(km["running_kernel"], self.KREL)
        self.assertEqual(km["files"], [])
        self.assertEqual(km["dkms"], [{"module": "nvidia-current", "version": "535.261.03",
                                       "kernels": ["6.1.0-13-amd64"]}])

    def test_unbound_nvidia_userspace_without_any_module(self):
        """Only the userspace (libcuda1, libnvidia-ml1) installed: the kernel half is missing, not the driver."""
        t = self.unbound_nvidia(dep=[])
        r = self.pci(t, expect_rc=1)
        nb = r.findings("drv.nvidia-not-built")
        self.assertEqual(len(nb), 1, repr(r))
        self.assertIn("nvidia-kernel-dkms", nb[0]["hint"])
        self.assertIn("535.261.03", nb[0]["hint"])
        self.assertNotIn("Install the NVIDIA driver", self.no_driver(r)["hint"] or "")

    def test_unbound_nvidia_module_built_but_not_loaded(self):
        """Debian's renamed module is there for this kernel: the hint says load it, never install it."""
        dep = ["updates/dkms/nvidia-current.ko.xz:", "updates/dkms/nvidia-current-uvm.ko.xz: updates/dkms/"
               "nvidia-current.ko.xz", "updates/dkms/nvidia-current-modeset.ko.xz: updates/dkms/nvidia-current.ko.xz"]
        t = self.unbound_nvidia(dep=dep, dkms={"535.261.03": [self.KREL]})
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.no-driver"])
        hint = self.no_driver(r)["hint"]
        self.assertIn("/lib/modules/%s/updates/dkms/nvidia-current.ko.xz" % self.KREL, hint)
        self.assertIn("sudo modprobe nvidia", hint)
        self.assertNotIn("apt install", hint)
        self.assertEqual(r.json["pci"]["nvidia"]["kernel_module"]["files"],
                         ["/lib/modules/%s/updates/dkms/nvidia-current.ko.xz" % self.KREL])

    def test_unbound_nvidia_module_blacklisted(self):
        dep = ["kernel/drivers/video/nvidia.ko:"]
        cases = {
            "modprobe.d": ({"gpu.conf": "# keep it off\nblacklist nouveau\n  blacklist nvidia  \n"}, None,
                           "/etc/modprobe.d/gpu.conf:3", "blacklist nvidia"),
            "install false": ({"x.conf": "install nvidia /bin/false\n"}, None, "/etc/modprobe.d/x.conf:1",
                              "install nvidia /bin/false"),
            "kernel command line": (None, "ro quiet modprobe.blacklist=nouveau,nvidia\n", "/proc/cmdline",
                                    "modprobe.blacklist=nvidia"),
            # bytes that are no text: reported, sanitised (the JSON stays UTF-8)
            "garbage bytes": ({"odd.conf": b"blacklist nvidia \xff\xfe\x1b[31m\n"}, None, "/etc/modprobe.d/odd.conf:1",
                              None),
        }
        for what, (modprobe, cmdline, src, value) in cases.items():
            with self.subTest(what):
                t = self.unbound_nvidia(dep=dep, modprobe=modprobe, cmdline=cmdline)
                r = self.pci(t, expect_rc=1)
                self.assertEqual(self.ids(r), ["drv.nvidia-blacklisted", "pci.no-driver"])
                bl = r.findings("drv.nvidia-blacklisted")[0]
                if value is None:
                    self.assertEqual([e["source"] for e in bl["evidence"]], [src])
                    blocked = r.json["pci"]["nvidia"]["kernel_module"]["blocked_by"][0]
                    self.assertTrue(blocked.startswith(src + ": blacklist nvidia "), blocked)
                    self.assertNotIn("\x1b", blocked)
                else:
                    self.assertIn({"source": src, "value": value}, bl["evidence"])
                self.assertEqual((self.no_driver(r)["caused_by"] or {}).get("id"), "drv.nvidia-blacklisted")
        # what does not stop it: Debian's alias and install-through-modprobe, a companion module, comments
        t = self.unbound_nvidia(dep=dep, modprobe={"nvidia.conf": "alias nvidia nvidia-current\ninstall nvidia "
                                                   "modprobe -i nvidia-current $CMDLINE_OPTS\nblacklist nvidia-drm\n"
                                                   "# blacklist nvidia\n"})
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.no-driver"])
        self.assertEqual(r.json["pci"]["nvidia"]["kernel_module"]["blocked_by"], [])

    def test_modprobe_d_entries_past_the_cap_are_said(self):
        """Issue 36: a directory listing is capped (256 entries each); what is past it is said in a note, not dropped
        silently (a blacklist there would not be seen)."""
        files = {"%03d-x.conf" % i: "options snd index=%d\n" % i for i in range(300)}
        t = self.unbound_nvidia(dep=["kernel/drivers/video/nvidia.ko:"], modprobe=files)
        r = self.pci(t, expect_rc=1)
        notes = [n for n in r.json["pci"].get("notes", []) if "not read" in n]
        self.assertEqual(len(notes), 1, r.json["pci"].get("notes"))
        self.assertIn("44 entries of modprobe.d", notes[0])
        t = self.unbound_nvidia(dep=["kernel/drivers/video/nvidia.ko:"], modprobe={"a.conf": "blacklist nvidia\n"})
        self.assertFalse([n for n in self.pci(t, expect_rc=1).json["pci"].get("notes", []) if "not read" in n])

    def test_unbound_nvidia_nothing_installed_says_install(self):
        t = self.unbound_nvidia(userspace=None, dep=[])
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.no-driver"])
        self.assertIn("Install the NVIDIA driver", self.no_driver(r)["hint"])

    def test_kernel_module_facts_only_where_an_nvidia_gpu_waits(self):
        t = self.tree()
        t.healthy_nvidia()
        r = self.pci(t, expect_rc=0)
        self.assertNotIn("kernel_module", r.json["pci"]["nvidia"])

    def test_nouveau_bound_and_both_modules(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x1b80, 0x030000, driver="nouveau", dangling=False, drm=("card0", "renderD128"))
        t.module("nouveau", 1)
        t.module("nvidia")
        t.node("/dev/dri/card0")
        t.node("/dev/dri/renderD128")
        t.node("/dev/nvidiactl")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nouveau-and-nvidia", "pci.nouveau-bound"])
        self.assertEqual(self.subjects(r, "pci.nouveau-bound"), ["0000:01:00.0"])
        self.assertEqual(self.subjects(r, "drv.nouveau-and-nvidia"), ["nouveau"])
        self.assertIn("blacklist", r.findings("drv.nouveau-and-nvidia")[0]["hint"])

    # ---- why nouveau has the GPU (issue 36): the causes in order -----------------------------------

    SECURE_BOOT = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

    def nouveau_nvidia(self, **kw):
        """unbound_nvidia's tree, but nouveau has the GPU (loaded, bound)."""
        t = self.unbound_nvidia(**kw)
        shutil.rmtree(t.t.path("/sys/devices/pci0000:00/0000:01:00.0"))
        os.unlink(t.t.path("/sys/bus/pci/devices/0000:01:00.0"))
        t.device("0000:01:00.0", 0x10de, 0x2330, 0x030200, driver="nouveau", dangling=False,
                 drm=("card0", "renderD128"))
        t.module("nouveau", 1)
        t.node("/dev/dri/card0")
        t.node("/dev/dri/renderD128")
        return t

    def nouveau_bound(self, r):
        f = r.findings("pci.nouveau-bound")
        self.assertEqual(len(f), 1, repr(r))
        return f[0]

    BUILT = ["updates/dkms/nvidia-current.ko.xz:"]

    def test_nouveau_bound_because_no_module_for_the_running_kernel(self):
        """DKMS built nvidia for the old kernel only: that stays the finding, and nouveau-bound is its consequence."""
        t = self.nouveau_nvidia(dep=["kernel/sound/core/snd.ko:"], dkms={"535.261.03": ["6.1.0-13-amd64"]},
                                modprobe={"nvidia-blacklists-nouveau.conf": "blacklist nouveau\n"})
        t.t.write(self.SECURE_BOOT, b"\x06\x00\x00\x00\x01")  # Secure Boot too: no module, nothing refused
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nvidia-not-built", "pci.nouveau-bound"])
        self.assertEqual(self.nouveau_bound(r)["caused_by"], {"id": "drv.nvidia-not-built", "subject": "nvidia"})
        self.assertIn("6.1.0-13-amd64", r.findings("drv.nvidia-not-built")[0]["message"])

    def test_nouveau_bound_with_secure_boot_refusing_the_module(self):
        """The module exists for this kernel, is not loaded, Secure Boot is on: the hint says so, and no pci
        finding claims the cause (the cuda probe's cuda.secure-boot-module is the firmware layer's)."""
        t = self.nouveau_nvidia(dep=self.BUILT, dkms={"535.261.03": [self.KREL]},
                                modprobe={"nvidia-blacklists-nouveau.conf": "blacklist nouveau\n"})
        t.t.write(self.SECURE_BOOT, b"\x06\x00\x00\x00\x01")
        r = self.pci(t, expect_rc=1)
        nb = self.nouveau_bound(r)
        self.assertIsNone(nb["caused_by"], repr(r))
        self.assertIn("Secure Boot", nb["hint"])
        self.assertIn("nvidia-current.ko.xz", nb["hint"])
        self.assertNotIn("Install the NVIDIA driver", nb["hint"])
        # with the cuda probe there (it reads the tree's files only), the doctor makes its firmware-layer finding
        # the cause, and the verdict's reason
        r = self.run_json("cuda", "--root", t.root, "--live", expect_rc=1,
                          env={"LD_LIBRARY_PATH": None, "CUDA_VISIBLE_DEVICES": None, "NVIDIA_VISIBLE_DEVICES": None})
        self.assertEqual(self.nouveau_bound(r)["caused_by"], {"id": "cuda.secure-boot-module", "subject": "nvidia"})
        self.assertEqual(r.findings("drv.nouveau-blacklist-ignored"), [])
        # Secure Boot off: the blacklist that did not take effect is the cause
        t.t.write(self.SECURE_BOOT, b"\x06\x00\x00\x00\x00")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.nouveau_bound(r)["caused_by"],
                         {"id": "drv.nouveau-blacklist-ignored", "subject": "nouveau"})

    def test_nouveau_bound_although_blacklisted(self):
        """A blacklist in /etc/modprobe.d, nouveau loaded all the same (the initramfs was not rebuilt)."""
        t = self.nouveau_nvidia(dep=self.BUILT, modprobe={"blacklist-nvidia-nouveau.conf":
                                                          "blacklist nouveau\noptions nouveau modeset=0\n"})
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nouveau-blacklist-ignored", "pci.nouveau-bound"])
        bi = r.findings("drv.nouveau-blacklist-ignored")[0]
        self.assertEqual(bi["severity"], "error")
        self.assertIn({"source": "/etc/modprobe.d/blacklist-nvidia-nouveau.conf:1", "value": "blacklist nouveau"},
                      bi["evidence"])
        self.assertIn("update-initramfs -u", bi["hint"])
        self.assertIn("dracut", bi["hint"])
        self.assertEqual(self.nouveau_bound(r)["caused_by"], {"id": "drv.nouveau-blacklist-ignored",
                                                              "subject": "nouveau"})
        self.assertEqual(r.json["pci"]["nvidia"]["kernel_module"]["nouveau_blocked_by"],
                         ["/etc/modprobe.d/blacklist-nvidia-nouveau.conf:1: blacklist nouveau"])
        # only dracut's rd.driver.blacklist on the command line: the hint says to write it where modprobe reads it
        t = self.nouveau_nvidia(dep=self.BUILT, cmdline="ro quiet rd.driver.blacklist=nouveau\n")
        r = self.pci(t, expect_rc=1)
        bi = r.findings("drv.nouveau-blacklist-ignored")
        self.assertEqual(len(bi), 1, repr(r))
        self.assertIn("/etc/modprobe.d/blacklist-nouveau.conf", bi[0]["hint"])
        self.assertIn("rd.driver.blacklist=", bi[0]["hint"])
        # with nvidia loaded too, the two-modules warning is the same blacklist's consequence
        t = self.nouveau_nvidia(dep=self.BUILT, modprobe={"b.conf": "blacklist nouveau\n"})
        t.module("nvidia")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(r.findings("drv.nouveau-and-nvidia")[0]["caused_by"],
                         {"id": "drv.nouveau-blacklist-ignored", "subject": "nouveau"})

    def test_nouveau_bound_driver_installed_nothing_blacklisted(self):
        t = self.nouveau_nvidia(dep=self.BUILT)
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.nouveau-bound"])
        nb = self.nouveau_bound(r)
        self.assertIsNone(nb["caused_by"])
        self.assertIn("535.261.03 is installed", nb["hint"])
        self.assertIn("blacklist nouveau", nb["hint"])
        # nothing NVIDIA installed: the catalogue's "install the driver"
        t = self.nouveau_nvidia(userspace=None, dep=["kernel/sound/core/snd.ko:"])
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.nouveau-bound"])
        self.assertIn("Install the NVIDIA driver", self.nouveau_bound(r)["hint"])

    # ---- a GPU bound to a driver gpucheckup does not know (issue 36) --------------------------------

    def test_nova_core_bound(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2684, 0x030000, driver="nova_core", dangling=False)
        t.module("nova_core")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.nova-core-bound"])
        f = r.findings("pci.nova-core-bound")[0]
        self.assertEqual(f["subject"], "0000:01:00.0")
        self.assertEqual(f["severity"], "error")
        self.assertIn("CUDA, NVIDIA's OpenCL and Vulkan need the nvidia driver", f["message"])
        self.assertIn("/sys/bus/pci/drivers/nova_core/unbind", f["hint"])
        self.assertIn("blacklist nova_core", f["hint"])
        self.assertEqual(r.json["pci"]["devices"][0]["driver"], "nova_core")

    def test_gpu_bound_to_a_driver_gpucheckup_does_not_know(self):
        t = self.tree()
        t.device("0000:03:00.0", 0x1002, 0x744c, 0x030000, driver="amdgpu_custom", dangling=False)
        t.device("0000:04:00.0", 0x8086, 0x56a0, 0x030000, driver="i915", dangling=False)
        t.device("0000:05:00.0", 0x10de, 0x2330, 0x030200, driver="nvgrace_gpu_vfio_pci", dangling=False)
        t.device("0000:06:00.0", 0x1a03, 0x2000, 0x030000, driver="ast", dangling=False)  # a BMC's VGA
        t.device("0000:07:00.0", 0x1da3, 0x1000, 0x120000, driver="habanalabs", dangling=False)
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.unknown-driver", "pci.vfio-bound"])
        u = r.findings("pci.unknown-driver")
        self.assertEqual([f["subject"] for f in u], ["0000:03:00.0"])
        self.assertEqual(u[0]["severity"], "warning")
        self.assertIn("amdgpu_custom", u[0]["message"])
        self.assertIn("ROCm", u[0]["message"])
        self.assertIn("/sys/bus/pci/drivers/amdgpu_custom/unbind", u[0]["hint"])
        self.assertEqual(self.subjects(r, "pci.vfio-bound"), ["0000:05:00.0"])

    # ---- small BAR: Resizable BAR off (issue 36) ---------------------------------------------------

    MB = 1024 * 1024

    def bar_gpu(self, t, addr, vendor, device, driver, bars, resize=None, config=None, files=None):
        """A GPU with BARS {index: (size, prefetchable)} in sysfs resource, resourceN_resize masks {index: mask},
        a config space, and extra files {relative path: text}."""
        dev = t.device(addr, vendor, device, 0x030000, driver=driver, dangling=False, config=config)
        lines = []
        base = 0x4000000000
        for i in range(13):
            size, pref = bars.get(i, (0, False))
            if size:
                lines.append("0x%016x 0x%016x 0x%016x\n" % (base, base + size - 1, 0x14220c if pref else 0x40200))
                base += max(size, 1 << 32)
            else:
                lines.append("0x%016x 0x%016x 0x%016x\n" % (0, 0, 0))
        t.t.write(dev + "/resource", "".join(lines))
        for i, mask in (resize or {}).items():
            t.t.write(dev + "/resource%d_resize" % i, "%016x\n" % mask)
        for rel, text in (files or {}).items():
            t.t.write(dev + "/" + rel, text)
        t.module(driver)
        return dev

    @staticmethod
    def rebar_config(vendor, device, bar, mask, cur_mb):
        c = bytearray(config_space(vendor, device, 0x0300, size=4096))
        struct.pack_into("<I", c, 0x100, 0x0015 | 1 << 16)
        struct.pack_into("<I", c, 0x104, mask << 4)
        struct.pack_into("<I", c, 0x108, bar | 1 << 5 | (cur_mb.bit_length() - 1) << 8)
        return bytes(c)

    def test_small_bar_intel_arc_on_xe(self):
        """An Arc A770 16 GB whose BAR 2 stayed 256 MiB: xe states the VRAM, so a warning naming the setting."""
        t = self.tree()
        self.bar_gpu(t, "0000:03:00.0", 0x8086, 0x56a0, "xe", {0: (16 * self.MB, False), 2: (256 * self.MB, True)},
                     resize={2: 0x7f00}, files={"tile0/physical_vram_size_bytes": "17179869184\n"})
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.small-bar"])
        f = r.findings("pci.small-bar")[0]
        self.assertEqual((f["subject"], f["severity"]), ("0000:03:00.0", "warning"))
        for word in ("256 MiB", "16 GiB", "BAR 2"):
            self.assertIn(word, f["message"])
        self.assertIn("Above 4G Decoding", f["hint"])
        self.assertIn("Re-Size BAR Support", f["hint"])
        self.assertIn("Level Zero", f["hint"])
        self.assertIn({"source": "/sys/bus/pci/devices/0000:03:00.0/resource2_resize", "value": "7f00 (largest: 16 GiB)"},
                      f["evidence"])
        # resized: nothing to say
        t = self.tree()
        self.bar_gpu(t, "0000:03:00.0", 0x8086, 0x56a0, "xe", {0: (16 * self.MB, False), 2: (16384 * self.MB, True)},
                     resize={2: 0x7f00}, files={"tile0/physical_vram_size_bytes": "17179869184\n"})
        self.assertEqual(self.ids(self.pci(t)), [])

    def test_small_bar_vram_unknown_is_information(self):
        """i915 states no VRAM: the supported size is only an upper bound, so information."""
        t = self.tree()
        self.bar_gpu(t, "0000:03:00.0", 0x8086, 0x56a0, "i915", {2: (256 * self.MB, True)}, resize={2: 0x7f00})
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.bar-resizable"])
        self.assertEqual(r.findings("pci.bar-resizable")[0]["severity"], "info")
        # a 24 GiB card mapped whole through a 32 GiB BAR that could be 64: Resizable BAR is on, nothing to say
        t = self.tree()
        self.bar_gpu(t, "0000:03:00.0", 0x10de, 0x2684, "nvidia", {1: (32768 * self.MB, True)}, resize={1: 0xffff00})
        self.assertEqual([x for x in self.ids(self.pci(t)) if "bar" in x], [])

    def test_small_bar_from_the_config_capability(self):
        """No readable resourceN_resize (not root): the Resizable BAR capability in config says what is supported;
        amdgpu states the VRAM."""
        t = self.tree()
        cfg = self.rebar_config(0x1002, 0x744c, 0, 0x7f00, 256)
        self.bar_gpu(t, "0000:0a:00.0", 0x1002, 0x744c, "amdgpu", {0: (256 * self.MB, True), 5: (self.MB, False)},
                     config=cfg, files={"mem_info_vram_total": "25753026560\n"})
        t.module("amdgpu")
        t.node("/dev/kfd")
        r = self.pci(t)
        f = r.findings("pci.small-bar")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn({"source": "/sys/bus/pci/devices/0000:0a:00.0/config",
                       "value": "Resizable BAR capability: up to 16 GiB"}, f[0]["evidence"])
        self.assertIn("24.0 GiB", f[0]["message"])

    def test_small_bar_never_for_igpus_or_small_vram(self):
        t = self.tree()
        # an Intel iGPU on bus 0 with a resizable BAR
        self.bar_gpu(t, "0000:00:02.0", 0x8086, 0x7d55, "i915", {2: (256 * self.MB, True)}, resize={2: 0x1f00})
        # an APU-like GPU: 512 MiB of VRAM behind a 256 MiB BAR is not "far smaller"
        self.bar_gpu(t, "0000:c4:00.0", 0x1002, 0x15bf, "amdgpu", {0: (256 * self.MB, True)}, resize={0: 0x3f00},
                     files={"mem_info_vram_total": "536870912\n"})
        # a Root Complex Integrated Endpoint off bus 0
        cfg = bytearray(self.rebar_config(0x8086, 0x56a0, 2, 0x7f00, 256))
        struct.pack_into("<H", cfg, 0x06, 0x10)
        cfg[0x34] = 0x40
        cfg[0x40:0x44] = bytes([0x10, 0x00, 0x92, 0x00])
        self.bar_gpu(t, "0000:01:00.0", 0x8086, 0x56a0, "xe", {2: (256 * self.MB, True)}, config=bytes(cfg))
        t.node("/dev/kfd")
        r = self.pci(t)
        self.assertEqual([x for x in self.ids(r) if "bar" in x], [], repr(r))

    def test_radeon_bound(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x1002, 0x6798, 0x030000, driver="radeon", drm=("card0", "renderD128"))
        t.module("radeon")
        t.node("/dev/dri/renderD128")
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.radeon-bound"])
        self.assertEqual(r.findings("pci.radeon-bound")[0]["subject"], "0000:01:00.0")
        self.assertIn("amdgpu", r.findings("pci.radeon-bound")[0]["hint"])

    def test_vfio_bound(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="vfio-pci")
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.vfio-bound"])

    def test_link_narrower_is_warning_slower_is_info(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia",
                 link=("16.0 GT/s PCIe", 4, "16.0 GT/s PCIe", 16))
        t.device("0000:02:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia",
                 link=("2.5 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
        t.device("0000:03:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia",
                 link=("Unknown", 0, "16.0 GT/s PCIe", 16))  # link down: unknown, not "x0"
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia0")
        r = self.pci(t)
        self.assertEqual(self.ids(r), ["pci.link-degraded", "pci.link-slow"])
        deg = r.findings("pci.link-degraded")
        self.assertEqual([f["subject"] for f in deg], ["0000:01:00.0"])
        self.assertEqual(deg[0]["severity"], "warning")
        self.assertIn("x4 of its x16", deg[0]["message"])
        slow = r.findings("pci.link-slow")
        self.assertEqual([f["subject"] for f in slow], ["0000:02:00.0"])
        self.assertEqual(slow[0]["severity"], "info")
        d3 = r.json["pci"]["devices"][2]["link"]
        self.assertIsNone(d3["current_speed"])
        self.assertIsNone(d3["current_width"])

    def test_link_from_config_space_when_sysfs_has_none(self):
        t = self.tree()
        cfg = config_space(0x1002, 0x73bf, 0x0300, size=256, exp_link=(4, 16, 4, 8))
        t.device("0000:01:00.0", 0x1002, 0x73bf, 0x030000, driver="amdgpu", config=cfg)
        r = self.pci(t)
        self.assertIn("pci.link-degraded", self.ids(r))
        link = r.json["pci"]["devices"][0]["link"]
        self.assertEqual((link["current_width"], link["max_width"], link["source"]), (8, 16, "config"))

    def test_not_responding(self):
        t = self.tree()
        # the kernel's cached IDs stay in sysfs; the config space libpci reads is all ones
        t.device("0000:01:00.0", 0x10de, 0x20b0, 0x030200, driver="nvidia", config=b"\xff" * 256)
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia0")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["pci.not-responding"])
        self.assertEqual(r.findings("pci.not-responding")[0]["subject"], "0000:01:00.0")
        d = r.json["pci"]["devices"][0]
        self.assertIs(d["responding"], False)
        self.assertEqual(d["vendor_id"], "10de")
        self.assertEqual(r.json["pci"]["summary"][0]["mark"], "error")

    def test_nvidia_version_mismatch_with_ld_so_conf(self):
        t = self.tree()
        t.healthy_nvidia(v="550.90.07")
        # a second driver's libraries in a directory only ld.so.conf.d names
        t.t.write("/etc/ld.so.conf", "# comment\ninclude /etc/ld.so.conf.d/*.conf\n")
        t.t.write("/etc/ld.so.conf.d/nvidia.conf", "/opt/nvidia/lib64\n")
        t.t.write("/etc/ld.so.conf.d/ignored.txt", "/opt/ignored\n")
        t.nvidia_libs("535.183.01", "/opt/nvidia/lib64")
        t.nvidia_libs("535.183.01", "/opt/ignored")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nvidia-version-mismatch"])
        f = r.findings("drv.nvidia-version-mismatch")[0]
        self.assertEqual(f["subject"], "nvidia")
        self.assertIn("550.90.07", f["message"])
        self.assertIn("535.183.01", f["message"])
        ev = [e["source"] for e in f["evidence"]]
        self.assertIn("/proc/driver/nvidia/version", ev)
        self.assertIn("/opt/nvidia/lib64/libcuda.so.535.183.01", ev)
        self.assertFalse(any(e.startswith("/opt/ignored") for e in ev))
        self.assertIn("/opt/nvidia/lib64", r.json["pci"]["nvidia"]["library_dirs"])
        self.assertIn("reboot", f["hint"])

    def test_debian_alternatives_layout(self):
        """Debian: lib.so.1 -> /etc/alternatives/... -> nvidia/current/lib.so.VERSION."""
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia")
        t.module("nvidia")
        t.nvidia_version("550.90.07")
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia0")
        multi = "/usr/lib/x86_64-linux-gnu"
        t.t.write(multi + "/nvidia/current/libnvidia-ml.so.535.183.01", "")
        t.t.symlink("/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.183.01",
                    "/etc/alternatives/nvidia--libnvidia-ml.so.1-x86_64-linux-gnu")
        t.t.symlink("/etc/alternatives/nvidia--libnvidia-ml.so.1-x86_64-linux-gnu", multi + "/libnvidia-ml.so.1")
        t.t.write(multi + "/libcuda.so.550.90.07", "")
        t.t.symlink("libcuda.so.550.90.07", multi + "/libcuda.so.1")
        t.t.symlink("libnvidia-opencl.so.1", multi + "/libnvidia-opencl.so.1")  # a loop: ignored
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["drv.nvidia-version-mismatch"])
        libs = {l["path"]: l["version"] for l in r.json["pci"]["nvidia"]["libraries"]}
        self.assertEqual(libs, {multi + "/libcuda.so.550.90.07": "550.90.07",
                                multi + "/nvidia/current/libnvidia-ml.so.535.183.01": "535.183.01"})

    def test_open_kernel_module_version(self):
        t = self.tree()
        t.healthy_nvidia()
        t.nvidia_version("550.90.07", open_module=True)
        r = self.pci(t, expect_rc=0)
        self.assertIs(r.json["pci"]["nvidia"]["kernel_module_open"], True)
        self.assertEqual(r.json["pci"]["nvidia"]["kernel_module_version"], "550.90.07")

    def test_missing_nodes_as_in_a_container(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia")
        t.device("0000:02:00.0", 0x1002, 0x73bf, 0x030000, driver="amdgpu", drm=("card1", "renderD129"))
        t.module("nvidia")
        t.module("nvidia_uvm")
        t.module("amdgpu")
        t.t.mkdir("/dev")
        r = self.pci(t, expect_rc=1)
        self.assertEqual(self.ids(r), ["dev.missing-node"])
        self.assertEqual(self.subjects(r, "dev.missing-node"),
                         ["/dev/dri/renderD129", "/dev/kfd", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"])
        hints = {f["subject"]: f["hint"] for f in r.findings("dev.missing-node")}
        self.assertIn("--gpus all", hints["/dev/nvidiactl"])
        self.assertIn("--device /dev/dri", hints["/dev/dri/renderD129"])
        nodes = {n["path"]: n for n in r.json["pci"]["nodes"]}
        self.assertIs(nodes["/dev/kfd"]["present"], False)
        self.assertEqual(nodes["/dev/kfd"]["device"], "0000:02:00.0")
        # the card node is not needed for compute: absent, not reported
        self.assertNotIn("/dev/dri/card1", nodes)

    def test_no_access_names_group_and_command(self):
        t = self.tree()
        t.device("0000:01:00.0", 0x1002, 0x73bf, 0x030000, driver="amdgpu", drm=("card0", "renderD128"))
        t.module("amdgpu")
        t.t.write("/etc/group", "root:x:0:\nvideo:x:44:\nrender:x:4242:someoneelse\n")
        root = os.geteuid() == 0
        if root:
            t.node("/dev/dri/renderD128", 0o660, gid=4242)
            t.node("/dev/kfd", 0o660, gid=4242, fifo=True)
            t.node("/dev/dri/card0", 0o660, gid=44)
            # root may open anything: run as nobody, as a normal user would
            os.chmod(t.root, 0o755)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        else:
            # a normal user owns what it creates: a mode with no owner bits denies the owner
            t.node("/dev/dri/renderD128", 0o060)
            t.node("/dev/kfd", 0o060, fifo=True)
            t.node("/dev/dri/card0", 0o060)
            prefix = []
        proc = subprocess.run(prefix + [gctest.GPUCHECKUP, "--json", "pci", "--root", t.root],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        r = gctest.Result(proc, ["pci"])
        gctest.validate(r.json)
        self.assertEqual(self.ids(r), ["dev.no-access"])
        # the card node is for display: not needed for compute, so not reported
        self.assertEqual(self.subjects(r, "dev.no-access"), ["/dev/dri/renderD128", "/dev/kfd"])
        nodes = {n["path"]: n for n in r.json["pci"]["nodes"]}
        self.assertIs(nodes["/dev/dri/renderD128"]["accessible"], False)
        self.assertIs(nodes["/dev/dri/card0"]["accessible"], False)
        if root:
            f = r.findings("dev.no-access")[0]
            self.assertIn("group render", f["message"])
            self.assertIn("sudo usermod -aG render $USER", f["hint"])
            self.assertEqual(nodes["/dev/kfd"]["group"], "render")
            self.assertEqual(nodes["/dev/kfd"]["type"], "fifo")
            self.assertIs(nodes["/dev/kfd"]["user_in_group"], False)
            self.assertIs(nodes["/dev/kfd"]["listed_in_group"], False)
            self.assertEqual(nodes["/dev/kfd"]["mode"], "0660")

    # ---- robustness -----------------------------------------------------------------------

    def test_libpci_errors_do_not_end_the_process(self):
        t = self.tree()
        # no vendor file: libpci's sysfs backend raises an error for it; we read the config file instead
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia", skip=("vendor", "device"))
        # no config, no class: nothing can be learnt about it
        t.device("0000:02:00.0", 0x10de, 0x2204, 0x030000, skip=("class", "config", "vendor"))
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia0")
        r = self.pci(t)
        devs = r.json["pci"]["devices"]
        self.assertEqual([d["address"] for d in devs], ["0000:01:00.0"])
        self.assertEqual((devs[0]["vendor_id"], devs[0]["device_id"], devs[0]["id_source"]), ("10de", "2204", "sysfs"))
        notes = "\n".join(r.json["pci"]["notes"])
        self.assertIn("libpci could not identify it", notes)
        self.assertIn("vendor", notes)
        self.assertEqual(r.json["pci"]["scanned"], 2)

    def test_garbage_does_not_crash(self):
        t = self.tree()
        dev = t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nvidia",
                       link=("fast", "wide", "", "-3"), config=b"\x00\x01")
        t.t.write(dev + "/numa_node", "abc\n")
        t.t.write(dev + "/boot_vga", "\x00\x01\x02")
        t.t.write(dev + "/power_state", "D0\x1b[31m\n")
        t.t.symlink("loop", "/sys/bus/pci/devices/loop")
        t.t.symlink("0000:09:00.0", "/sys/bus/pci/devices/0000:09:00.0")  # a link to itself
        t.t.write("/sys/bus/pci/devices/garbage", "x")
        t.t.write("/proc/modules", "\x00\xff garbage\nnvidia\n")
        t.t.write("/proc/driver/nvidia/version", "NVRM version: nothing here\n")
        t.t.write("/etc/ld.so.conf", "include /etc/ld.so.conf\ninclude ../../../../*\n/nonexistent\n")
        t.t.symlink("/etc/group", "/etc/group")  # a loop
        r = self.pci(t)
        d = r.json["pci"]["devices"][0]
        self.assertIsNone(d["link"])
        self.assertIsNone(d["numa_node"])
        self.assertIsNone(d["boot_vga"])
        self.assertEqual(d["power_state"], "D0?[31m")
        self.assertIsNone(d["responding"])  # a 2-byte config file says nothing
        self.assertIsNone(r.json["pci"]["nvidia"]["kernel_module_version"])
        self.assertEqual(len(r.json["pci"]["devices"]), 1)
        notes = "\n".join(r.json["pci"]["notes"])
        self.assertIn("garbage: not a PCI address", notes)

    def test_wide_domain_and_bridge_layout(self):
        t = self.tree()
        t.device("10000:01:00.0", 0x10de, 0x20b0, 0x030200, driver="nvidia", bridge="10000:00:02.0",
                 link=("16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16), numa=1)
        t.node("/dev/nvidiactl")
        t.node("/dev/nvidia0")
        r = self.pci(t, expect_rc=0)
        d = r.json["pci"]["devices"][0]
        self.assertEqual(d["address"], "10000:01:00.0")
        self.assertEqual(d["class"], "0302")
        self.assertEqual(d["numa_node"], 1)
        self.assertEqual(d["driver"], "nvidia")

    def test_fs_trace_lists_what_a_capture_needs(self):
        t = self.tree()
        t.healthy_nvidia()
        t.device("0000:02:00.0", 0x1002, 0x73bf, 0x030000, driver="amdgpu", drm=("card1", "renderD129"),
                 link=("8.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16))
        t.module("amdgpu")
        t.node("/dev/dri/renderD129", 0o666)
        t.node("/dev/kfd", 0o666)
        trace = os.path.join(t.root, "..", os.path.basename(t.root) + ".trace")
        self.addCleanup(lambda: os.path.exists(trace) and os.unlink(trace))
        first = self.run_json("pci", "--root", t.root, env={"GPUCHECKUP_FS_TRACE": trace})
        with open(trace) as f:
            paths = [l.rstrip("\n") for l in f if l.strip()]
        for p in ("/sys/bus/pci/devices/0000:01:00.0/config", "/sys/bus/pci/devices/0000:01:00.0/vendor",
                  "/sys/bus/pci/devices/0000:01:00.0/driver", "/proc/modules", "/proc/driver/nvidia/version",
                  "/dev/nvidiactl"):
            self.assertIn(p, paths)
        # copy only those paths, as `cp -a --parents` would, and diagnose the copy: same answer
        cap = self.make_tree()
        for p in paths:
            src = t.t.path(p)
            dst = cap.path(p)
            if not os.path.lexists(src) or os.path.lexists(dst):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            elif os.path.isdir(src):
                os.makedirs(dst, exist_ok=True)
            else:
                shutil.copy2(src, dst)
        second = self.run_json("pci", "--root", cap.root)
        strip = lambda doc: {k: v for k, v in doc["pci"].items() if k not in ("access_path", "duration_ms")}
        self.assertEqual(strip(second.json), strip(first.json))
        self.assertEqual(self.ids(second), self.ids(first))
        self.assertEqual(self.ids(first), ["pci.link-slow"])

    # ---- this machine and dumps -----------------------------------------------------------

    def test_this_machine(self):
        r = self.run_json("pci")
        self.assertEqual(r.json["pci"]["status"], "ok", repr(r))
        expected = []
        for p in sorted(glob.glob("/sys/bus/pci/devices/*")):
            try:
                with open(os.path.join(p, "class")) as f:
                    cls = int(f.read(), 16) >> 8
            except (OSError, ValueError):
                continue
            if cls >> 8 in (0x03, 0x12) or cls == 0x0b40:
                expected.append(os.path.basename(p))
        self.assertEqual(sorted(d["address"] for d in r.json["pci"]["devices"]), expected)
        self.assertEqual(r.json["pci"]["scanned"], len(glob.glob("/sys/bus/pci/devices/*")))
        if not any(d["kind"] in ("compute-gpu", "accelerator") for d in r.json["pci"]["devices"]):
            # no GPU here: only the info finding, nothing alarming
            self.assertIn("pci.no-gpu", self.ids(r))
            bad = [f["id"] for f in r.json["findings"] if f["id"].startswith(AREAS) and f["severity"] != "info"]
            self.assertEqual(bad, [])
            self.assertEqual(r.json["pci"]["summary"][-1]["text"][:12], "no GPU found")
        else:
            self.assertNotIn("pci.no-gpu", self.ids(r))

    def test_pci_dump_with_all_ones_device(self):
        r = self.run_json("pci", "--pci-dump", DUMP, expect_rc=1)
        pci = r.json["pci"]
        self.assertEqual(pci["source"], "dump")
        self.assertEqual(self.ids(r), ["pci.link-degraded", "pci.not-responding"])
        self.assertEqual(self.subjects(r, "pci.not-responding"), ["0000:02:00.0"])
        self.assertEqual(self.subjects(r, "pci.link-degraded"), ["0000:01:00.0"])
        devs = {d["address"]: d for d in pci["devices"]}
        self.assertEqual(sorted(devs), ["0000:01:00.0", "0000:02:00.0", "10000:01:00.0"])
        dead = devs["0000:02:00.0"]
        self.assertIs(dead["responding"], False)
        self.assertIsNone(dead["vendor_id"])
        self.assertIsNone(dead["kind"])
        gpu = devs["0000:01:00.0"]
        self.assertEqual((gpu["vendor_id"], gpu["device_id"], gpu["class"]), ("10de", "2204", "0300"))
        self.assertEqual((gpu["subsystem_vendor_id"], gpu["subsystem_device_id"]), ("1043", "877f"))
        self.assertEqual(gpu["link"], {"current_speed": 16.0, "current_width": 8, "max_speed": 16.0,
                                       "max_width": 16, "source": "config"})
        self.assertIsNone(gpu["driver"])
        self.assertIs(gpu["driver_known"], False)
        self.assertEqual(devs["10000:01:00.0"]["class"], "0302")
        # config space only: no kernel side
        self.assertIsNone(pci["modules"])
        self.assertIsNone(pci["nodes"])
        self.assertIsNone(pci["nvidia"])
        self.assertNotIn("pci.no-driver", self.ids(r))
        self.assertEqual(pci["scanned"], 4)

    def test_pci_dump_unusable_exits_2(self):
        r = gctest.run("pci", "--pci-dump", "/nonexistent/dump.txt")
        self.assertEqual(r.rc, 2)
        self.assertIn("/nonexistent/dump.txt", r.stderr)
        self.assertIn("No such file", r.stderr)
        t = self.make_tree()
        bad = t.write("bad.txt", "00:00.0 Host bridge\n00: zz zz\n")
        r = self.run_json("pci", "--pci-dump", bad, expect_rc=2)
        self.assertIn("Malformed", r.json["error"]["message"])
        self.assertIn(bad, r.json["error"]["message"])
        notdump = t.write("notdump.txt", "hello\n")
        r = gctest.run("pci", "--pci-dump", notdump)
        self.assertEqual(r.rc, 2)
        self.assertIn("no device found", r.stderr)
        r = gctest.run("pci", "--pci-dump", t.root)
        self.assertEqual(r.rc, 2)
        self.assertIn("directory", r.stderr)
        if os.geteuid() != 0:
            locked = t.write("locked.txt", "x", mode=0)
            r = gctest.run("pci", "--pci-dump", locked)
            self.assertEqual(r.rc, 2)
            self.assertIn("Permission denied", r.stderr)

    def test_pci_dump_limits(self):
        # A made-up dump with more GPUs than any machine: the first PCI_MAX_GPUS (1024) are reported,
        # a note counts the rest, and the run stays quick (findings and correlation grew quadratically
        # with the GPU count: 12000 GPUs took 80 s before the cap).
        with open(DUMP) as f:
            body = f.read().split("\n\n")[1].split("\n", 1)[1]
        t = self.make_tree()
        entries = ["%04x:%02x:%02x.0 VGA compatible controller\n%s\n" % (i >> 13, (i >> 5) & 0xff, i & 0x1f, body)
                   for i in range(1100)]
        many = t.write("many.txt", "\n".join(entries))
        start = time.monotonic()
        r = self.run_json("pci", "--pci-dump", many, expect_rc=0)  # link warnings only
        self.assertLess(time.monotonic() - start, 30)
        pci = r.json["pci"]
        self.assertEqual(pci["scanned"], 1100)
        self.assertEqual(len(pci["devices"]), 1024)
        self.assertIn("76 more GPUs or accelerators beyond the first 1024 are not reported", pci["notes"])
        # A file larger than any real dump is refused before libpci reads it.
        big = t.path("big.txt")
        with open(big, "wb") as f:
            f.truncate(65 * 1024 * 1024)
        r = self.run_json("pci", "--pci-dump", big, expect_rc=2)
        self.assertIn(big, r.json["error"]["message"])
        self.assertIn("too large", r.json["error"]["message"])

    def test_check_lists_pci_ids_in_catalogue(self):
        r = self.run_json("--list-checks", expect_rc=0)
        ids = {c["id"]: c["severity"] for c in r.json["checks"]}
        for fid, sev in (("pci.no-gpu", "info"), ("pci.no-driver", "error"), ("pci.nouveau-bound", "error"),
                         ("pci.radeon-bound", "warning"), ("pci.link-degraded", "warning"),
                         ("pci.link-slow", "info"), ("pci.not-responding", "error"),
                         ("drv.nouveau-and-nvidia", "warning"), ("drv.nvidia-version-mismatch", "error"),
                         ("dev.missing-node", "error"), ("dev.no-access", "error")):
            self.assertEqual(ids.get(fid), sev, fid)
        with open(os.path.join(gctest.SOURCE_ROOT, "man", "gpucheckup.1"), encoding="utf-8") as f:
            man = f.read().replace("\\-", "-")
        for fid in ids:
            if fid.startswith(AREAS):
                self.assertTrue(".B " + fid in man, "man page lacks " + fid)


if __name__ == "__main__":
    gctest.main()
