"""End-to-end tests of containers (issue 31): trees laid out as a docker, podman or Kubernetes container's."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKE = os.environ["GC_FAKE_LIBCUDA"]
FAKE_NVML = os.environ["GC_FAKE_NVML_DIR"] + "/libnvidia-ml.so.1"
KVER = "580.159.04"
ADDR = "0000:01:00.0"
LIBDIR = "/usr/lib/x86_64-linux-gnu"
POCL_ICD = "/etc/OpenCL/vendors/pocl.icd"
TOOLKIT_ENV = {"NVIDIA_VISIBLE_DEVICES": None, "NVIDIA_DRIVER_CAPABILITIES": None}


class ContainerTree:
    """A container's files on a host with an NVIDIA GPU. Where each fact comes from:
    - /.dockerenv: Docker creates it, empty, in every container's root (moby daemon/initlayer);
      /run/.containerenv: podman's (podman-run(1)).
    - /proc/1/cgroup: cgroup v1 lines name the container's cgroup ("12:devices:/docker/<id>",
      "/kubepods/besteffort/pod<uid>/<id>", "libpod-<id>.scope"); cgroup v2 with a private cgroup namespace
      (Docker's default there) shows "0::/" and tells nothing.
    - /sys/bus/pci and /proc/modules are the host's (sysfs is mounted read-only, /proc/modules is not
      namespaced), and so is /proc/driver/nvidia without the toolkit (procfs's driver entries are global):
      a container without --gpus still sees the GPU bound to nvidia and the module loaded, but has no
      /dev/nvidia* (Docker's default /dev is a tmpfs holding only the standard nodes).
    - With --gpus, libnvidia-container (src/nvc_mount.c) mounts a tmpfs over /proc/driver/nvidia, copies the
      host's version file into it, bind-mounts /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN and the driver's
      libraries (libcuda.so.<version>, libnvidia-ml.so.<version>) into the container: /proc/mounts lists them."""

    def __init__(self, tree, runtime="docker", gpus=True, cgroup=None):
        self.p = PciTree(tree)
        self.t = tree
        self.root = tree.root
        if runtime == "docker":
            tree.write("/.dockerenv", "")
        elif runtime == "podman":
            tree.write("/run/.containerenv", 'engine="podman-4.3.1"\n')
        tree.write("/proc/1/cgroup", cgroup if cgroup is not None else "0::/\n")
        self.p.device(ADDR, 0x10de, 0x2330, 0x030200, driver="nvidia",
                      link=("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16))
        self.p.module("nvidia", 1)
        self.p.module("nvidia_uvm")
        self.p.nvidia_version(KVER, open_module=True)
        mounts = ["overlay / overlay rw,relatime,lowerdir=/var/lib/docker/overlay2/l/A,upperdir=U,workdir=W 0 0",
                  "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
                  "tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755 0 0"]
        if gpus:
            for n in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"):
                self.p.node(n)
            mounts += ["tmpfs /proc/driver/nvidia tmpfs rw,nosuid,nodev,noexec,relatime,mode=555 0 0",
                       "/dev/nvme0n1p1 %s/libcuda.so.%s ext4 ro,nosuid,nodev,relatime 0 0" % (LIBDIR, KVER),
                       "/dev/nvme0n1p1 %s/libnvidia-ml.so.%s ext4 ro,nosuid,nodev,relatime 0 0" % (LIBDIR, KVER),
                       "udev /dev/nvidiactl devtmpfs ro,nosuid,noexec,relatime,mode=755 0 0",
                       "udev /dev/nvidia0 devtmpfs ro,nosuid,noexec,relatime,mode=755 0 0"]
            for lib in ("libcuda.so", "libnvidia-ml.so"):
                tree.write("%s/%s.%s" % (LIBDIR, lib, KVER), "")
                tree.symlink("%s.%s" % (lib, KVER), "%s/%s.1" % (LIBDIR, lib))
        tree.write("/proc/mounts", "\n".join(mounts) + "\n")


class ContainerTests(gctest.TestCase):
    def container(self, **kw):
        return ContainerTree(self.make_tree(), **kw)

    def pci(self, t, *extra, env=None):
        e = dict(TOOLKIT_ENV)
        e.update(env or {})
        return self.run_json("pci", "--root", t.root, *extra, env=e)

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"]})

    # ---- recognition ----------------------------------------------------------------------------

    def test_docker_with_gpu_recognised_no_findings(self):
        r = self.pci(self.container())
        plat = r.json["pci"]["platform"]
        self.assertEqual(plat["container"], "docker", repr(r))
        self.assertEqual(plat["kind"], "bare-metal-or-vm")
        tk = plat["nvidia_container_toolkit"]
        self.assertIs(tk["driver_tmpfs"], True, repr(tk))
        self.assertEqual(tk["injected_libcuda"], "%s/libcuda.so.%s" % (LIBDIR, KVER))
        self.assertIsNone(tk["visible_devices"])  # --root alone: the environment is not the tree's
        self.assertEqual([i for i in self.ids(r) if i.startswith(("container.", "dev.", "drv."))], [], repr(r))

    def test_podman_from_containerenv(self):
        r = self.pci(self.container(runtime="podman"))
        self.assertEqual(r.json["pci"]["platform"]["container"], "podman", repr(r))

    def test_kubernetes_from_cgroup(self):
        # a cgroup v1 pod container (containerd's CRI under the kubelet), no /.dockerenv
        cg = ("12:devices:/kubepods/besteffort/pod3f1c2a4e-0b1d-4c7e-9a7f-1c2d3e4f5a6b/"
              "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
              "0::/kubepods/besteffort/pod3f1c2a4e-0b1d-4c7e-9a7f-1c2d3e4f5a6b/0123456789abcdef\n")
        r = self.pci(self.container(runtime=None, cgroup=cg))
        self.assertEqual(r.json["pci"]["platform"]["container"], "kubernetes", repr(r))

    def test_docker_from_cgroup_v1(self):
        cg = "12:devices:/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
        r = self.pci(self.container(runtime=None, cgroup=cg))
        self.assertEqual(r.json["pci"]["platform"]["container"], "docker", repr(r))

    def test_host_is_no_container(self):
        t = PciTree(self.make_tree())
        t.t.write("/proc/1/cgroup", "0::/init.scope\n")
        r = self.pci(t)
        self.assertIsNone(r.json["pci"]["platform"]["container"], repr(r))
        self.assertIsNone(r.json["pci"]["platform"]["nvidia_container_toolkit"])

    def test_host_toolkit_no_cgroups_on_cgroup_v2_with_docker(self):
        """The host's /etc/nvidia-container-runtime/config.toml with no-cgroups = true under [nvidia-container-cli]
        (the setting for rootless podman) on a cgroup v2 host running Docker: --gpus containers lose NVML. Read
        through the tree (--root); false, commented out, another table's key, cgroup v1 or no Docker: nothing."""
        conf = os.path.join(gctest.SOURCE_ROOT, "tests", "fuzz", "corpus", "pcikernel",
                            "nvidia-container-runtime-config-toml")
        with open(conf, encoding="utf-8") as fh:
            text = fh.read()
        self.assertIn("\nno-cgroups = true\n", text)

        def host(config, v2=True, docker=True):
            t = PciTree(self.make_tree())
            t.t.write("/proc/1/cgroup", "0::/init.scope\n")
            t.device(ADDR, 0x10de, 0x2330, 0x030200, driver="nvidia")
            if v2:
                t.t.write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
                t.t.write("/sys/fs/cgroup/cgroup.events", "populated 1\n")
            if docker:
                t.t.write("/usr/bin/dockerd", "")
            t.t.write("/etc/nvidia-container-runtime/config.toml", config)
            return t

        r = self.pci(host(text))
        self.assertIsNone(r.json["pci"]["platform"]["container"])
        (f,) = r.findings("container.toolkit-no-cgroups")
        self.assertEqual((f["severity"], f["subject"]), ("warning", "/etc/nvidia-container-runtime/config.toml"))
        self.assertIn("sets no-cgroups = true (line 12, [nvidia-container-cli]) on this cgroup v2 host, which runs "
                      "Docker", f["message"])
        self.assertIn("Failed to initialize NVML: Unknown Error", f["message"])
        self.assertIn("no-cgroups = false", f["hint"])
        quiet = [(text.replace("no-cgroups = true", "no-cgroups = false"), {}),
                 (text.replace("no-cgroups = true", "#no-cgroups = true"), {}),
                 (text.replace("no-cgroups = true", "").replace('log-level = "info"', "no-cgroups = true"), {}),
                 (text, {"v2": False}), (text, {"docker": False})]
        for config, kw in quiet:
            r = self.pci(host(config, **kw))
            self.assertEqual(r.findings("container.toolkit-no-cgroups"), [], (kw, config))

    # ---- containers without a runtime's marker file ---------------------------------------------------
    # What is reliable, as systemd's detect_container() (src/basic/virt.c) decides: the manager's own statement
    # (/run/host/container-manager, /run/systemd/container, PID 1's container= in /proc/1/environ), then a cgroup
    # namespace told by the cgroup files: under v2 only a nested cgroup has cgroup.type, under v1 only the root has
    # release_agent. /proc/1/cgroup reading "0::/" alone is no proof (a host whose PID 1 is not systemd reads it).

    def test_cgroup_v2_namespace_without_markers(self):
        t = self.container(runtime=None, gpus=False)  # /proc/1/cgroup "0::/", no /.dockerenv
        self.assertIsNone(self.pci(t).json["pci"]["platform"]["container"])
        t.t.write("/sys/fs/cgroup/cgroup.events", "populated 1\nfrozen 0\n")
        t.t.write("/sys/fs/cgroup/cgroup.type", "domain\n")
        r = self.pci(t)
        plat = r.json["pci"]["platform"]
        self.assertEqual((plat["container"], plat["container_from"]), ("other", "/sys/fs/cgroup/cgroup.type"))
        f = r.findings("container.no-gpu")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("cgroup-namespaced container", f[0]["message"])

    def test_host_root_cgroup_is_no_container(self):
        # a host's root cgroup (recent kernels): cgroup.events but no cgroup.type; v1: release_agent at the root
        t = PciTree(self.make_tree())
        t.t.write("/proc/1/cgroup", "0::/\n")
        t.t.write("/sys/fs/cgroup/cgroup.events", "populated 1\n")
        self.assertIsNone(self.pci(t).json["pci"]["platform"]["container"])
        t = PciTree(self.make_tree())
        t.t.write("/proc/1/cgroup", "1:name=systemd:/\n0::/\n")
        t.t.write("/sys/fs/cgroup/systemd/release_agent", "")
        plat = self.pci(t).json["pci"]["platform"]
        self.assertIsNone(plat["container"])
        self.assertNotIn("container_from", plat)
        # the same v1 hierarchy without release_agent is a namespace's
        os.unlink(t.t.path("/sys/fs/cgroup/systemd/release_agent"))
        plat = self.pci(t).json["pci"]["platform"]
        self.assertEqual((plat["container"], plat["container_from"]), ("other", "/sys/fs/cgroup/systemd/release_agent"))

    def test_container_manager_statements(self):
        for path, text, want, label in (("/run/host/container-manager", "systemd-nspawn\n", "other", "systemd-nspawn"),
                                        ("/run/systemd/container", "lxc\n", "other", "lxc"),
                                        ("/run/systemd/container", "podman\n", "podman", None),
                                        ("/proc/1/environ", "PATH=/usr/bin\0container=podman\0HOME=/\0", "podman",
                                         None),
                                        ("/proc/1/environ", "HOME=/\0container=lxc\0", "other", "lxc")):
            t = self.container(runtime=None, gpus=False)
            t.t.write(path, text)
            r = self.pci(t)
            plat = r.json["pci"]["platform"]
            self.assertEqual((plat["container"], plat["container_from"]), (want, path), text)
            if label:
                self.assertIn("a %s container" % label, r.findings("container.no-gpu")[0]["message"])
        # systemd writes "wsl" there under WSL: no container
        t = self.container(runtime=None, gpus=False)
        t.t.write("/run/systemd/container", "wsl\n")
        self.assertIsNone(self.pci(t).json["pci"]["platform"]["container"])

    # ---- failures -------------------------------------------------------------------------------

    def test_started_without_gpus(self):
        r = self.pci(self.container(gpus=False))
        f = r.findings("container.no-gpu")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "error")
        self.assertIn("--gpus all", f[0]["hint"])
        self.assertIn("nvidia.com/gpu=all", f[0]["hint"])
        self.assertIn("container", f[0]["message"])
        # the missing nodes are its consequences, not separate problems with a host's fix
        missing = r.findings("dev.missing-node")
        self.assertTrue(missing, repr(r))
        for m in missing:
            self.assertEqual(m["caused_by"]["id"], "container.no-gpu", repr(m))
        self.assertIs(r.json["pci"]["platform"]["nvidia_container_toolkit"]["driver_tmpfs"], False)

    def test_started_without_gpus_text_says_the_container(self):
        t = self.container(gpus=False)
        r = gctest.run("pci", "--root", t.root, env=dict(TOOLKIT_ENV))
        self.assertIn("--gpus all", r.stdout, repr(r))
        self.assertNotIn("nvidia-modprobe", r.stdout, repr(r))

    def test_visible_devices_void(self):
        for v in ("void", "none", ""):
            r = self.pci(self.container(gpus=False), "--live", env={"NVIDIA_VISIBLE_DEVICES": v})
            f = r.findings("container.no-gpu")
            self.assertEqual(len(f), 1, repr(r))
            self.assertIn("NVIDIA_VISIBLE_DEVICES", f[0]["message"])
            self.assertEqual(r.json["pci"]["platform"]["nvidia_container_toolkit"]["visible_devices"], v)

    def test_environment_ignored_without_live(self):
        r = self.pci(self.container(), env={"NVIDIA_VISIBLE_DEVICES": "void",
                                            "NVIDIA_DRIVER_CAPABILITIES": "compute"})
        self.assertEqual([i for i in self.ids(r) if i.startswith("container.")], [], repr(r))

    def test_compute_without_utility(self):
        r = self.pci(self.container(), "--live", env={"NVIDIA_VISIBLE_DEVICES": "all",
                                                      "NVIDIA_DRIVER_CAPABILITIES": "compute"})
        f = r.findings("container.no-utility")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "warning")
        self.assertIn("NVIDIA_DRIVER_CAPABILITIES=compute,utility", f[0]["hint"])
        for ok in ("compute,utility", "utility, compute", "all"):
            r = self.pci(self.container(), "--live", env={"NVIDIA_VISIBLE_DEVICES": "all",
                                                          "NVIDIA_DRIVER_CAPABILITIES": ok})
            self.assertNotIn("container.no-utility", self.ids(r), ok)

    def test_no_graphics_capability_no_vulkan(self):
        """NVIDIA_DRIVER_CAPABILITIES without `graphics` (or unset: the toolkit's default utility,compute): no
        nvidia_icd.json in the container, so the NVIDIA GPU has no Vulkan device. Information, which explains
        vulkan.gpu-without-device; `graphics` or `all` says nothing, nor does a run that cannot see the variable."""
        t = self.container()
        vk = {"VK_DRIVER_FILES": None, "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None}
        for caps, shown in (("compute,utility", '"compute,utility"'),
                            (None, 'unset (the toolkit\'s default, "utility,compute")')):
            env = dict(vk, NVIDIA_VISIBLE_DEVICES="all", NVIDIA_DRIVER_CAPABILITIES=caps)
            r = self.run_json("vulkan", "--root", t.root, "--live", env=env)
            (f,) = r.findings("vulkan.container-no-graphics")
            self.assertEqual((f["severity"], f["subject"]), ("info", "NVIDIA_DRIVER_CAPABILITIES"))
            self.assertIn("NVIDIA GPU %s has no Vulkan device in this docker container: NVIDIA_DRIVER_CAPABILITIES is %s "
                          "(no `graphics`)" % (ADDR, shown), f["message"])
            self.assertIn("NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", f["hint"])
            self.assertEqual(r.findings("vulkan.gpu-without-device"), [])  # no loader in this image
        for caps in ("compute,utility,graphics", "all"):
            env = dict(vk, NVIDIA_VISIBLE_DEVICES="all", NVIDIA_DRIVER_CAPABILITIES=caps)
            r = self.run_json("vulkan", "--root", t.root, "--live", env=env)
            self.assertEqual(r.findings("vulkan.container-no-graphics"), [], caps)
        r = self.run_json("vulkan", "--root", t.root, env=dict(vk, NVIDIA_DRIVER_CAPABILITIES="compute"))
        self.assertEqual(r.findings("vulkan.container-no-graphics"), [])
        # an image with the Vulkan loader and Mesa's lavapipe (its manifest and a copy of this machine's loader,
        # as tests/vulkan lays them out): the GPU without a Vulkan device is explained by the capability
        import glob
        lvp = sorted(glob.glob("/usr/share/vulkan/icd.d/lvp_icd.*.json"))
        loader = (glob.glob("/usr/lib/*/libvulkan.so.1") + glob.glob("/lib/*/libvulkan.so.1"))
        self.assertTrue(lvp and loader, "mesa-vulkan-drivers and libvulkan1 are needed (.ci/packages)")
        with open(lvp[0], encoding="utf-8") as fh:
            text = fh.read()
        t.t.write("/usr/share/vulkan/icd.d/" + os.path.basename(lvp[0]), text)
        lib = json.loads(text)["ICD"]["library_path"]
        t.t.write(lib, "")
        shutil.copy(os.path.realpath(loader[0]), t.t.path(os.path.join(os.path.dirname(lib), "libvulkan.so.1")))
        env = dict(vk, NVIDIA_VISIBLE_DEVICES="all", NVIDIA_DRIVER_CAPABILITIES="compute,utility", HOME="/nonexistent",
                   XDG_CONFIG_HOME=None, XDG_CONFIG_DIRS=None, XDG_DATA_HOME=None, XDG_DATA_DIRS=None)
        r = self.run_json("vulkan", "--root", t.root, "--live", env=env)
        (g,) = r.findings("vulkan.gpu-without-device")
        self.assertEqual((g["subject"], g["caused_by"]["id"]), (ADDR, "vulkan.container-no-graphics"), repr(g))

    # ---- ROCm containers ------------------------------------------------------------------------------

    def rocm(self, nodes, runtime="docker"):
        """A container on a host with an AMD GPU bound to amdgpu (the host's sysfs and /proc/modules show through,
        as for NVIDIA above); NODES: the ones `--device` passed in. ROCm's Docker guide: /dev/kfd is the compute
        interface of all GPUs, /dev/dri/renderD<N> each GPU's."""
        t = self.make_tree()
        p = PciTree(t)
        if runtime == "docker":
            t.write("/.dockerenv", "")
        t.write("/proc/1/cgroup", "0::/\n")
        p.device("0000:03:00.0", 0x1002, 0x74a1, 0x038000, driver="amdgpu", drm=("card0", "renderD128"))
        p.module("amdgpu")
        for n in nodes:
            p.node(n)
        t.write("/proc/mounts", "overlay / overlay rw 0 0\n")
        return p

    def test_rocm_container_without_its_nodes(self):
        r = self.pci(self.rocm(()).t)
        f = r.findings("container.no-amd-devices")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "error")
        self.assertEqual(f[0]["subject"], "0000:03:00.0")
        self.assertIn("docker container", f[0]["message"])
        for opt in ("--device /dev/kfd", "--device /dev/dri", "--group-add video", "--group-add render"):
            self.assertIn(opt, f[0]["hint"])
        self.assertEqual(sorted(e["source"] for e in f[0]["evidence"]), ["/dev/dri/renderD128", "/dev/kfd"])
        # the missing nodes are its consequences, with no host advice of their own
        missing = r.findings("dev.missing-node")
        self.assertEqual(sorted(m["subject"] for m in missing), ["/dev/dri/renderD128", "/dev/kfd"], repr(r))
        for m in missing:
            self.assertEqual(m["caused_by"]["id"], "container.no-amd-devices", repr(m))
        self.assertNotIn("container.no-gpu", self.ids(r))

    def test_rocm_container_without_kfd_only(self):
        # `--device /dev/dri` alone: graphics works, ROCm does not
        r = self.pci(self.rocm(("/dev/dri/renderD128", "/dev/dri/card0")).t)
        f = r.findings("container.no-amd-devices")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("/dev/kfd", f[0]["message"])
        self.assertEqual([e["source"] for e in f[0]["evidence"]], ["/dev/kfd"])

    def test_node_group_inside_a_container(self):
        # --device passed the nodes in, but they keep the host's group (render, gid 4242 here), which the image's
        # /etc/group does not know and the container's user is not in (ROCm/ROCm-docker#116). The fix is the
        # container's --group-add with the host's number, not a usermod. Run as nobody: root opens anything.
        p = self.rocm(())
        for n in ("/dev/kfd", "/dev/dri/renderD128"):
            p.node(n, 0o660, gid=4242)
        p.t.write("/etc/group", "root:x:0:\nvideo:x:44:\n")
        os.chmod(p.t.root, 0o755)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", gctest.GPUCHECKUP, "--json", "pci",
                "--root", p.t.root]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        doc = json.loads(proc.stdout)
        gctest.validate(doc)
        f = [x for x in doc["findings"] if x["id"] == "dev.no-access"]
        self.assertEqual(sorted(x["subject"] for x in f), ["/dev/dri/renderD128", "/dev/kfd"], proc.stdout[-3000:])
        for x in f:
            self.assertIn("--group-add 4242", x["hint"])
            self.assertNotIn("usermod -aG", x["hint"])
        self.assertNotIn("container.no-amd-devices", [x["id"] for x in doc["findings"]])

    def test_rocm_container_with_its_nodes_and_bare_metal_are_quiet(self):
        r = self.pci(self.rocm(("/dev/kfd", "/dev/dri/renderD128", "/dev/dri/card0")).t)
        self.assertEqual([i for i in self.ids(r) if i.startswith(("container.", "dev."))], [], repr(r))
        # the same missing nodes outside a container are the host's: no container finding
        r = self.pci(self.rocm((), runtime=None).t)
        self.assertNotIn("container.no-amd-devices", self.ids(r))
        self.assertTrue(r.findings("dev.missing-node"), repr(r))

    def test_nvml_unknown_error_in_a_container(self):
        # "Failed to initialize NVML: Unknown Error": nvmlInit answers NVML_ERROR_UNKNOWN (999) in a container whose
        # /dev/nvidia* exist but whose device rules a host `systemctl daemon-reload` dropped (NVIDIA/nvidia-docker
        # #1730); the fake NVML's init-unknown mode answers so
        t = self.container()
        env = self.healthy_env(t)
        env["GC_FAKE_NVML_MODE"] = "init-unknown"
        r = self.run_json("cuda", "--root", t.root, "--live", "--no-smoke", env=env)
        f = r.findings("cuda.nvml-init-failed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("NVML_ERROR_UNKNOWN", f[0]["message"])
        self.assertIn("docker container", f[0]["message"])
        self.assertIn("/dev/nvidiactl", f[0]["message"])
        self.assertIn("docker rm", f[0]["hint"])
        self.assertIn("nvidia-ctk system create-dev-char-symlinks", f[0]["hint"])
        # the same answer on a host is NVML's own failure: the generic hint
        host = PciTree(self.make_tree())
        host.device(ADDR, 0x10de, 0x2330, 0x030200, driver="nvidia")
        host.module("nvidia", 1)
        host.nvidia_version(KVER, open_module=True)
        for n in ("/dev/nvidiactl", "/dev/nvidia0"):
            host.node(n)
        r = self.run_json("cuda", "--root", host.t.root, "--live", "--no-smoke", env=env)
        f = r.findings("cuda.nvml-init-failed")
        self.assertEqual(len(f), 1, repr(r))
        self.assertNotIn("container", f[0]["message"])
        self.assertNotIn("docker rm", f[0]["hint"])

    # ---- container.devices-denied: a live run, nodes whose open() fails with EPERM ----------------------------

    def test_devices_denied_live(self):
        """The device cgroup denies open() with EPERM while stat() and the mode bits say nothing (NVIDIA/nvidia-docker
        #1730: after a `systemctl daemon-reload` on the host). The check runs only where the files are this
        machine's, so gpucheckup runs live in a private mount and PID namespace (nothing on this machine changes):
        /dev a tmpfs copy of the host's, /dev/nvidiactl and /dev/nvidia0 bind mounts of an immutable file (open
        for writing fails with EPERM, as a denied device does), and /proc/1/cgroup a Docker cgroup v1 line. Needs
        root (namespaces, chattr), as e2e-real-nvidia-host does."""
        self.assertEqual(os.geteuid(), 0, "this test needs root: a private mount namespace and chattr +i")
        d = tempfile.mkdtemp(prefix="gc-denied-")
        imm, cg = os.path.join(d, "node"), os.path.join(d, "cgroup")
        with open(imm, "w"):
            pass
        os.chmod(imm, 0o666)
        subprocess.run(["chattr", "+i", imm], check=True)
        self.addCleanup(shutil.rmtree, d, True)
        self.addCleanup(subprocess.run, ["chattr", "-i", imm])
        with open(cg, "w") as f:
            f.write("12:devices:/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n0::/\n")
        script = """set -eu
d=$(mktemp -d); mount -t tmpfs -o mode=0755 gc-denied-dev "$d"; cp -a /dev/. "$d"/ 2>/dev/null || true
touch "$d/nvidiactl" "$d/nvidia0"; mount --bind "$d" /dev
mount --bind "$1" /dev/nvidiactl; mount --bind "$1" /dev/nvidia0; mount --bind "$2" /proc/1/cgroup
shift 2; exec "$@" """
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc",
                            "bash", "-c", script, "denied", imm, cg, gctest.GPUCHECKUP, "--json", "pci"],
                           capture_output=True, text=True, timeout=120)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        doc = json.loads(p.stdout)
        gctest.validate(doc)
        self.assertEqual(doc["pci"]["platform"]["container"], "docker")
        f = [x for x in doc["findings"] if x["id"] == "container.devices-denied"]
        self.assertEqual(len(f), 1, p.stdout[-3000:])
        self.assertEqual(f[0]["subject"], "/dev/nvidiactl")
        self.assertEqual(f[0]["severity"], "error")
        self.assertIn("EPERM", f[0]["message"])
        self.assertIn("systemctl daemon-reload", f[0]["hint"])
        self.assertIn("nvidia-ctk system create-dev-char-symlinks", f[0]["hint"])
        # the host's own run (no container) never opens its nodes for this check
        host = gctest.run("--json", "pci")
        self.assertNotIn("container.devices-denied", host.stdout)

    def test_catalogue_lists_container_ids(self):
        r = gctest.run("--list-checks")
        for fid in ("container.no-gpu", "container.no-utility", "container.devices-denied", "container.no-amd-devices"):
            self.assertIn(fid, r.stdout)

    # ---- a healthy GPU container ----------------------------------------------------------------

    def healthy_env(self, t):
        """The environment of a healthy GPU container over tree T: the fake libcuda and NVML answering for the tree's
        GPU, the variables NVIDIA's CUDA images set (NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=
        compute,utility), OpenCL through PoCL only: a CUDA image has no nvidia.icd (the toolkit injects
        libnvidia-opencl.so.1 with `compute` but, before NVIDIA/nvidia-container-toolkit#1893, not the .icd file:
        issue #682 there)."""
        lib = tempfile.mkdtemp(prefix="gc-libcuda-")
        self.addCleanup(shutil.rmtree, lib, True)
        shutil.copy(FAKE, os.path.join(lib, "libcuda.so.%s" % KVER))
        os.symlink("libcuda.so.%s" % KVER, os.path.join(lib, "libcuda.so.1"))
        shutil.copy(FAKE_NVML, os.path.join(lib, "libnvidia-ml.so.1"))
        # OpenCL: PoCL only, for the loader in the children (host dir) and the ICD probe (inside --root)
        vendors = tempfile.mkdtemp(prefix="gc-vendors-")
        os.chmod(vendors, 0o755)
        self.addCleanup(shutil.rmtree, vendors, True)
        with open(POCL_ICD) as f:
            pocl = f.read()
        for base in (vendors, t.t.path(vendors)):
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(base, "pocl.icd"), "w") as f:
                f.write(pocl)
        cache = tempfile.mkdtemp(prefix="gc-pocl-cache-")
        self.addCleanup(shutil.rmtree, cache, True)
        return {"LD_LIBRARY_PATH": lib, "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_INIT": None,
                "GC_FAKE_CUDA_MODE": None, "GC_FAKE_CUDA_GPUS": None, "GC_FAKE_CUDA_COMPUTE_MODE": None,
                "GC_FAKE_CUDA_CC": None, "GC_FAKE_CUDA_VERSION": None, "GC_FAKE_CUDA_BUSIDS": "00000000:01:00.0",
                "GC_FAKE_NVML_GPUS": "1", "GC_FAKE_NVML_BUSIDS": ADDR, "GC_FAKE_NVML_DRIVER": KVER,
                "GC_FAKE_NVML_MODE": None, "NVIDIA_VISIBLE_DEVICES": "all",
                "NVIDIA_DRIVER_CAPABILITIES": "compute,utility", "OCL_ICD_VENDORS": vendors,
                "POCL_CACHE_DIR": cache, "POCL_DEVICES": None}

    def test_healthy_gpu_container_is_ready(self):
        t = self.container()
        r = self.run_json("check", "--root", t.root, "--live", "--require", "gpu", "--timeout", "60",
                          env=self.healthy_env(t), expect_rc=0, timeout=240)
        doc = r.json
        self.assertEqual(doc["pci"]["platform"]["container"], "docker")
        # OpenCL here is PoCL alone (a CUDA image has no nvidia.icd): the GPU computes through CUDA, so OpenCL's
        # absence for it is information (its hint speaks to the container: test_opencl_hint_speaks_to_the_container);
        # nothing warns
        bad = [f for f in doc["findings"] if f["severity"] in ("warning", "error")]
        self.assertEqual(bad, [], repr(r))
        self.assertEqual(r.findings("cl.gpu-without-opencl")[0]["severity"], "info")
        self.assertIs(doc["verdict"]["ready"], True, repr(doc["verdict"]))
        self.assertEqual({q["name"]: q["met"] for q in doc["verdict"]["requirements"]}, {"gpu": True})
        self.assertEqual(len(doc["cuda"]["devices"]), 1)

    def test_opencl_hint_speaks_to_the_container(self):
        # a CUDA image: no nvidia.icd, so OpenCL lists PoCL's CPU only; the fix is the container's, not the host's
        t = self.container()
        env = self.healthy_env(t)
        r = self.run_json("opencl", "--root", t.root, "--live", env=env)
        f = r.findings("cl.gpu-without-opencl")
        self.assertEqual(len(f), 1, repr(r))
        for words in ("inside this container", "NVIDIA_DRIVER_CAPABILITIES", "compute",
                      "-v /etc/OpenCL/vendors/nvidia.icd:/etc/OpenCL/vendors/nvidia.icd:ro",
                      "echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd"):
            self.assertIn(words, f[0]["hint"])
        self.assertNotIn("nvidia-opencl-icd (Debian", f[0]["hint"])
        # the same machine outside a container gets the host's hint
        os.unlink(t.t.path("/.dockerenv"))
        r = self.run_json("opencl", "--root", t.root, "--live", env=env)
        self.assertIsNone(r.json["pci"]["platform"]["container"])
        f = r.findings("cl.gpu-without-opencl")
        self.assertEqual(len(f), 1, repr(r))
        self.assertNotIn("inside this container", f[0]["hint"])
        self.assertIn("nvidia-opencl-icd", f[0]["hint"])

    # ---- snapshot of a container ------------------------------------------------------------------

    def snapshot(self, t, env, *extra):
        """`gpucheckup snapshot` of container tree T (--live: the fakes and the toolkit's variables are this
        process's), its private TMPDIR, and the live result."""
        tmp = tempfile.mkdtemp(prefix="gc-ctrsnap-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "ctr.tar.gz")
        live = gctest.run("snapshot", "-o", path, "--json", "--root", t.root, "--live", "--timeout", "60", *extra,
                          env=dict(env, TMPDIR=tmp), timeout=240)
        self.assertIn(live.rc, (0, 1), repr(live))
        gctest.validate(live.json)
        return path, live, tmp

    def test_snapshot_of_healthy_gpu_container_replays(self):
        t = self.container()
        path, live, tmp = self.snapshot(t, self.healthy_env(t))
        # the replay runs without the toolkit's variables or the fakes: the platform is read again from the
        # captured tree (/.dockerenv, /proc/mounts), the variables come from the captured run
        e = dict(TOOLKIT_ENV, TMPDIR=tmp, LD_LIBRARY_PATH=None)
        r = self.run_json("--root", path, "--require", "gpu", env=e, expect_rc=0)
        plat = r.json["pci"]["platform"]
        self.assertEqual(plat, live.json["pci"]["platform"])
        self.assertEqual(plat["container"], "docker")
        self.assertEqual(plat["nvidia_container_toolkit"]["visible_devices"], "all")
        self.assertEqual(plat["nvidia_container_toolkit"]["driver_capabilities"], "compute,utility")
        self.assertIs(plat["nvidia_container_toolkit"]["driver_tmpfs"], True)
        self.assertEqual(sorted((f["id"], f["subject"], f["severity"]) for f in r.json["findings"]),
                         sorted((f["id"], f["subject"], f["severity"]) for f in live.json["findings"]))
        self.assertEqual([f["id"] for f in r.json["findings"] if f["id"].startswith(("container.", "dev."))], [])
        self.assertIs(r.json["verdict"]["ready"], True, repr(r.json["verdict"]))
        self.assertEqual({q["name"]: q["met"] for q in r.json["verdict"]["requirements"]}, {"gpu": True})

    def test_snapshot_replays_container_findings(self):
        # a container started with the GPU withheld by NVIDIA_VISIBLE_DEVICES=void: its finding replays
        t = self.container(gpus=False)
        path, live, tmp = self.snapshot(t, {"NVIDIA_VISIBLE_DEVICES": "void", "NVIDIA_DRIVER_CAPABILITIES": None},
                                        "--no-smoke")
        r = self.run_json("pci", "--root", path, env=dict(TOOLKIT_ENV, TMPDIR=tmp))
        f = r.findings("container.no-gpu")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("NVIDIA_VISIBLE_DEVICES", f[0]["message"])
        self.assertEqual(r.json["pci"]["platform"]["nvidia_container_toolkit"]["visible_devices"], "void")


if __name__ == "__main__":
    gctest.main()
