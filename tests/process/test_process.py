"""End-to-end tests of the process probe: --pid on real processes the suite starts (its own environment, a
library it mapped, another uid), --unit on systemd unit files in fake AMD trees, --user on a tree."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_pci import PciTree  # noqa: E402

FAKE_LIBCUDA = os.environ["GC_FAKE_LIBCUDA"]
RENDER, VIDEO, OLLAMA = 992, 44, 998
# A child that maps the library named on its command line (if any), says so, and waits.
CHILD = ("import ctypes, sys, time\n"
         "if len(sys.argv) > 1: ctypes.CDLL(sys.argv[1])\n"
         "print('ready', flush=True)\n"
         "time.sleep(120)\n")
PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
          "ollama:x:998:998::/usr/share/ollama:/bin/false\n"
          "bob:x:1001:1001::/home/bob:/bin/bash\n"
          "alice:x:1002:1002::/home/alice:/bin/bash\n")
GROUP = ("root:x:0:\nvideo:x:44:alice\nrender:x:992:alice\nollama:x:998:\nbob:x:1001:\nalice:x:1002:\n")


def sanitizer_preload(lib):
    """The environment a plain python3 needs to map LIB when LIB links the sanitizer runtime (tests/run-suite's
    ASan stage builds the suite's fakes so): that runtime must come first, so it is preloaded."""
    out = subprocess.run(["ldd", lib], capture_output=True, text=True, timeout=30).stdout
    for line in out.splitlines():
        if "libasan.so" in line and "=>" in line:
            return {"LD_PRELOAD": line.split("=>", 1)[1].split("(")[0].strip(), "ASAN_OPTIONS": "detect_leaks=0"}
    return {}


def cgroup2_mount():
    """Where the cgroup2 hierarchy is mounted, or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if " - " in line and line.split(" - ", 1)[1].split()[0] == "cgroup2":
                return line.split()[4]
    return None


def bpf_allow_all_devices(cgroup_dir):
    """Attach a device program that allows everything (r0 = 1; exit) to CGROUP_DIR with the bpf syscall."""
    import ctypes
    import platform
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": 321, "aarch64": 280}[platform.machine()]

    def bpf(cmd, attr):
        buf = ctypes.create_string_buffer(attr, 128)
        r = libc.syscall(nr, cmd, buf, 128)
        if r < 0:
            raise OSError(ctypes.get_errno(), "bpf %d: %s" % (cmd, os.strerror(ctypes.get_errno())))
        return r
    insns = struct.pack("<BBhi", 0xb7, 0, 0, 1) + struct.pack("<BBhi", 0x95, 0, 0, 0)
    ib, lic = ctypes.create_string_buffer(insns, len(insns)), ctypes.create_string_buffer(b"GPL")
    # BPF_PROG_LOAD of a BPF_PROG_TYPE_CGROUP_DEVICE (15) program, expected attach type BPF_CGROUP_DEVICE (6)
    prog = bpf(5, struct.pack("<IIQQIIQII16sII", 15, 2, ctypes.addressof(ib), ctypes.addressof(lic), 0, 0, 0, 0, 0,
                              b"gc_allow_all", 0, 6))
    cg = os.open(cgroup_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        bpf(8, struct.pack("<IIII", cg, prog, 6, 0))  # BPF_PROG_ATTACH
    finally:
        os.close(cg)
        os.close(prog)


class ProcessTests(gctest.TestCase):
    def child(self, env=None, lib=None, prefix=()):
        e = dict(os.environ)
        e.update(sanitizer_preload(lib) if lib else {})
        e.update(env or {})
        p = subprocess.Popen([*prefix, sys.executable, "-c", CHILD, *([lib] if lib else [])], env=e,
                             stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        self.assertEqual(p.stdout.readline().strip(), "ready")
        return p

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="gc-process-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def ids(self, r):
        return sorted({f["id"] for f in r.json["findings"] if f["id"].split(".")[0] in ("process", "unit", "user")})

    def amd_tree(self):
        """An RX 7900 XTX bound to amdgpu, its nodes root:render 0660 as udev makes them."""
        t = PciTree(self.make_tree())
        t.device("0000:03:00.0", 0x1002, 0x744c, 0x030000, driver="amdgpu", drm=("card0", "renderD128"))
        t.module("amdgpu", 1)
        t.t.write("/sys/module/amdgpu/initstate", "live\n")
        t.node("/dev/kfd", 0o660, gid=RENDER)
        t.node("/dev/dri/card0", 0o660, gid=VIDEO)
        t.node("/dev/dri/renderD128", 0o660, gid=RENDER)
        t.t.write("/etc/passwd", PASSWD)
        t.t.write("/etc/group", GROUP)
        return t

    # ---- --pid ------------------------------------------------------------------------------------

    def test_not_in_check_without_an_option(self):
        r = self.run_json("check", "--root", self.amd_tree().t.root)
        self.assertNotIn("process", r.json)
        r = self.run_json("process", "--root", self.amd_tree().t.root)
        self.assertEqual(r.json["process"]["status"], "not-applicable", repr(r))

    def test_pid_reports_its_environment_not_ours(self):
        lib = self.tmpdir()
        p = self.child(env={"CUDA_VISIBLE_DEVICES": "1", "LD_LIBRARY_PATH": lib, "HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
        r = self.run_json("process", "--pid", str(p.pid),
                          env={"CUDA_VISIBLE_DEVICES": "0", "LD_LIBRARY_PATH": None, "HSA_OVERRIDE_GFX_VERSION": None})
        pid = r.json["process"]["pid"]
        self.assertEqual(pid["pid"], p.pid)
        self.assertEqual(pid["environment"]["CUDA_VISIBLE_DEVICES"], "1")
        self.assertEqual(pid["environment"]["LD_LIBRARY_PATH"], lib)
        self.assertEqual(pid["environment"]["HSA_OVERRIDE_GFX_VERSION"], "10.3.0")
        self.assertEqual(pid["uid"], os.geteuid())
        self.assertIs(pid["other_mount_namespace"], False)
        self.assertEqual(pid["not_readable"], [])

    def test_pid_names_the_cudnn_it_mapped(self):
        d = self.tmpdir()
        lib = os.path.join(d, "libcudnn.so.9")
        shutil.copy(FAKE_LIBCUDA, lib)
        p = self.child(lib=lib)
        r = self.run_json("process", "--pid", str(p.pid))
        libs = {l["path"]: l for l in r.json["process"]["pid"]["libraries"]}
        self.assertIn(os.path.realpath(lib), libs, repr(r))
        self.assertEqual(libs[os.path.realpath(lib)]["version"], "9")
        self.assertEqual(libs[os.path.realpath(lib)]["name"], "libcudnn.so.9")
        self.assertIn("libcudnn.so.9", r.stdout)

    def test_pid_libcuda_other_than_ours(self):
        mine, theirs = self.tmpdir(), self.tmpdir()
        shutil.copy(FAKE_LIBCUDA, os.path.join(mine, "libcuda.so.1"))
        shutil.copy(FAKE_LIBCUDA, os.path.join(theirs, "libcuda.so.1"))
        p = self.child(lib=os.path.join(theirs, "libcuda.so.1"))
        r = self.run_json("process", "--pid", str(p.pid), env={"LD_LIBRARY_PATH": mine})
        ours = r.json["cuda"]["driver"]["library"]["path"]
        self.assertEqual(os.path.dirname(ours), os.path.realpath(mine), repr(r))
        f = r.findings("process.other-libcuda")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn(os.path.join(os.path.realpath(theirs), "libcuda.so.1"), f[0]["message"])
        # the same library: nothing to say
        r = self.run_json("process", "--pid", str(p.pid), env={"LD_LIBRARY_PATH": theirs})
        self.assertEqual(r.findings("process.other-libcuda"), [], repr(r))

    def test_pid_libcuda_loaded_as_it(self):
        """Its LD_LIBRARY_PATH picks its libcuda, which a child loads with its environment and credentials."""
        its, mine = self.tmpdir(), self.tmpdir()
        for d in (its, mine):
            shutil.copy(FAKE_LIBCUDA, os.path.join(d, "libcuda.so.1"))
        its_lib, my_lib = (os.path.realpath(os.path.join(d, "libcuda.so.1")) for d in (its, mine))
        ours = {"LD_LIBRARY_PATH": mine, "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_GPUS": None}
        p = self.child(env={"LD_LIBRARY_PATH": its, "CUDA_VISIBLE_DEVICES": "1", "GC_FAKE_CUDA_GPUS": "1"})
        r = self.run_json("process", "--pid", str(p.pid), env=ours)
        pid = r.json["process"]["pid"]
        self.assertEqual(pid["predicted"]["libcuda.so.1"], {"its": its_lib, "ours": my_lib})
        self.assertEqual([f["subject"] for f in r.findings("process.other-library")], ["libcuda.so.1"], repr(r))
        # the cuda section's child found gpucheckup's library (the dynamic linker's path is read at start) and ran
        # with the process's environment: CUDA_VISIBLE_DEVICES=1 hides the one GPU from it too
        self.assertEqual(r.json["cuda"]["driver"]["library"]["path"], my_lib)
        self.assertEqual(r.json["cuda"]["driver"]["cuinit"]["name"], "CUDA_ERROR_NO_DEVICE", repr(r))
        self.assertEqual(pid["run_as_it"], {"environment": True, "credentials": False, "why": None})
        a = pid["cuda_as_it"]
        self.assertEqual((a["library"], a["status"], a["cuinit"]), (its_lib, "ok", 100), a)
        self.assertNotIn("devices", a)
        f = r.findings("process.cuda-fails")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("cuInit(0) returns 100", f[0]["message"])
        # with CUDA_VISIBLE_DEVICES=0 it sees its one GPU
        p = self.child(env={"LD_LIBRARY_PATH": its, "CUDA_VISIBLE_DEVICES": "0", "GC_FAKE_CUDA_GPUS": "1"})
        r = self.run_json("process", "--pid", str(p.pid), env=ours)
        self.assertEqual(r.json["process"]["pid"]["cuda_as_it"]["devices"], 1, repr(r))
        self.assertIn("CUDA as it", gctest.run("process", "--pid", str(p.pid), env=ours).stdout)
        self.assertEqual(r.findings("process.cuda-fails"), [], repr(r))
        # nobody cannot read root's 0700 temp dir: loaded as it, the library does not load
        if os.geteuid() == 0:
            p = self.child(env={"LD_LIBRARY_PATH": its}, prefix=("setpriv", "--reuid=nobody", "--regid=nogroup",
                                                                 "--clear-groups"))
            r = self.run_json("process", "--pid", str(p.pid), env=ours)
            a = r.json["process"]["pid"]["cuda_as_it"]
            self.assertEqual(a["credentials"], "its")
            self.assertIn("Permission denied", a["dlopen_error"])
            self.assertIn("and credentials", r.findings("process.cuda-fails")[0]["message"])
            # every child of the run was nobody: the cuda section's own cannot search root's 0700 dir either, so
            # its libcuda.so.1 (found as root above) is not found
            self.assertEqual(r.json["process"]["pid"]["run_as_it"]["credentials"], True)
            self.assertIn("libcuda.so.1: cannot open shared object file", r.json["cuda"]["driver"]["dlopen_error"],
                          repr(r))

    def test_pid_every_child_runs_with_its_environment(self):
        """An OpenCL driver (PoCL) only the process's OCL_ICD_VENDORS names: `check --pid` finds it through the
        opencl section's own child; gpucheckup's own environment names an empty directory."""
        vendors, empty, cache = self.tmpdir(), self.tmpdir(), self.tmpdir()
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", vendors)
        # and the suite's fake Vulkan driver, which only its VK_DRIVER_FILES names
        vk = os.path.join(self.tmpdir(), "gc_fake_vk.json")
        with open(vk, "w") as f:
            f.write('{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.0.0"}}'
                    % os.environ["GC_FAKE_VK_ICD"])
        ours = {"OCL_ICD_VENDORS": empty, "OCL_ICD_FILENAMES": None, "OPENCL_VENDOR_PATH": None,
                "GPUCHECKUP_LIBOPENCL": None, "POCL_DEVICES": None, "POCL_CACHE_DIR": cache, "VK_DRIVER_FILES": None,
                "VK_ICD_FILENAMES": None, "VK_ADD_DRIVER_FILES": None, "GC_FAKE_VK": None}
        p = self.child(env={"OCL_ICD_VENDORS": vendors, "POCL_DEVICES": "pthread", "POCL_CACHE_DIR": cache,
                            "VK_DRIVER_FILES": vk})
        r = self.run_json("check", "--pid", str(p.pid), env=ours, timeout=300)
        self.assertEqual([x["name"] for x in r.json["opencl"]["platforms"]], ["Portable Computing Language"],
                         repr(r))
        self.assertIn(vk, __import__("json").dumps(r.json["vulkan"]["drivers"]), repr(r))
        self.assertEqual(r.json["opencl"]["environment"]["OCL_ICD_VENDORS"], vendors)
        self.assertEqual(r.json["process"]["pid"]["run_as_it"]["environment"], True)
        self.assertIn("run as it", gctest.run("process", "--pid", str(p.pid), env=ours).stdout)
        # its OCL_ICD_VENDORS is compared with gpucheckup's own, not with itself
        self.assertEqual(r.json["process"]["pid"]["environment"]["OCL_ICD_VENDORS"], vendors)
        # without --pid, gpucheckup's own: no platform
        r = self.run_json("check", env=ours, timeout=300)
        self.assertEqual(r.json["opencl"]["platforms"], [], repr(r))
        self.assertNotIn(vk, __import__("json").dumps(r.json["vulkan"]["drivers"]), repr(r))
        self.assertNotIn("process", r.json)

    def test_pid_in_a_tree_hides_every_gpu_and_holds_a_node(self):
        """The files of a real process started with CUDA_VISIBLE_DEVICES=1, captured into an NVIDIA tree."""
        p = self.child(env={"CUDA_VISIBLE_DEVICES": "1"})
        t = PciTree(self.make_tree())
        t.healthy_nvidia()
        for f in ("status", "environ", "maps"):
            with open("/proc/%d/%s" % (p.pid, f), "rb") as src:
                t.t.write("/proc/%d/%s" % (p.pid, f), src.read())
        t.t.symlink("/dev/nvidia0", "/proc/%d/fd/7" % p.pid)
        t.t.symlink("/dev/null", "/proc/%d/fd/0" % p.pid)
        r = self.run_json("process", "--root", t.t.root, "--pid", str(p.pid))
        f = r.findings("process.hides-all-gpus")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "error")
        self.assertIn("CUDA_VISIBLE_DEVICES=1 hides every NVIDIA GPU", f[0]["message"])
        self.assertEqual(f[0]["subject"], "pid %d: CUDA_VISIBLE_DEVICES" % p.pid)
        self.assertEqual(r.json["process"]["pid"]["open_nodes"], ["/dev/nvidia0"])
        # one GPU, index 0 is fine
        t.t.write("/proc/%d/environ" % p.pid, b"CUDA_VISIBLE_DEVICES=0\0PATH=/usr/bin\0")
        r = self.run_json("process", "--root", t.t.root, "--pid", str(p.pid))
        self.assertEqual(r.findings("process.hides-all-gpus"), [], repr(r))
        # a user outside video: the nodes are 0666 but for card0 (not a compute node); make nvidia0 0660
        os.chmod(t.t.path("/dev/nvidia0"), 0o660)
        with open("/proc/%d/status" % p.pid) as src:
            st = "".join("Uid:\t1001\t1001\t1001\t1001\n" if l.startswith("Uid:") else
                         "Gid:\t1001\t1001\t1001\t1001\n" if l.startswith("Gid:") else
                         "Groups:\t1001\n" if l.startswith("Groups:") else l for l in src)
        t.t.write("/proc/%d/status" % p.pid, st)
        r = self.run_json("process", "--root", t.t.root, "--pid", str(p.pid))
        self.assertEqual([f["subject"] for f in r.findings("process.denied")], ["/dev/nvidia0"], repr(r))

    def test_pid_of_another_user_read_by_root_and_refused_to_nobody(self):
        p = self.child(env={"HIP_VISIBLE_DEVICES": "0"}, prefix=("setpriv", "--reuid=nobody", "--regid=nogroup",
                                                                  "--clear-groups"))
        if os.geteuid() == 0:
            r = self.run_json("process", "--pid", str(p.pid))
            pid = r.json["process"]["pid"]
            self.assertEqual(pid["not_readable"], [], repr(r))
            self.assertEqual(pid["environment"]["HIP_VISIBLE_DEVICES"], "0")
            self.assertEqual(pid["uid"], 65534)
            # and nobody reading root's process (this one's child) is refused, by name
            mine = self.child()
            proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", gctest.GPUCHECKUP,
                                   "process", "--json", "--pid", str(mine.pid)], capture_output=True, text=True,
                                  timeout=120)
            doc = __import__("json").loads(proc.stdout)
            gctest.validate(doc)
            unread = {u["file"]: u["error"] for u in doc["process"]["pid"]["not_readable"]}
            self.assertEqual(sorted(unread), ["environ", "fd", "maps", "ns/mnt"], proc.stdout)
            self.assertNotIn("own_view", doc["process"]["pid"])
            self.assertEqual(set(unread.values()), {"not readable: needs root or the same user (ptrace access)"})
            f = [f for f in doc["findings"] if f["id"] == "process.not-readable"]
            self.assertEqual(len(f), 1)
            self.assertIn("/proc/%d/environ" % mine.pid, f[0]["message"])
            # the text of what could not be read
            proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", gctest.GPUCHECKUP,
                                   "process", "--pid", str(mine.pid)], capture_output=True, text=True, timeout=120)
            self.assertIn(proc.returncode, (0, 1), proc.stderr)
            self.assertIn("not readable: needs root or the same user", proc.stdout)
        else:
            r = self.run_json("process", "--pid", str(p.pid))
            self.assertEqual(len(r.findings("process.not-readable")), 1, repr(r))

    def test_pid_in_its_own_mount_namespace_is_judged_in_its_view(self):
        """unshare -m: a tmpfs over /etc/OpenCL/vendors holding one .icd of its own."""
        script = ("mount -t tmpfs none /etc/OpenCL/vendors && echo /opt/x/libgcfake.so > /etc/OpenCL/vendors/gcfake.icd"
                  " && exec \"$0\" \"$@\"")
        p = self.child(prefix=("unshare", "-m", "sh", "-c", script))
        r = self.run_json("process", "--pid", str(p.pid))
        pid = r.json["process"]["pid"]
        self.assertIs(pid["other_mount_namespace"], True, repr(r))
        self.assertEqual(pid["own_view"]["opencl_vendors"]["icds"], ["gcfake.icd"])
        self.assertNotIn("gcfake.icd", pid["own_view"]["opencl_vendors"]["ours"])
        self.assertEqual(len(r.findings("process.other-mount-namespace")), 1, repr(r))
        f = r.findings("process.other-icds")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("sees 1 OpenCL ICD file in /etc/OpenCL/vendors (gcfake.icd)", f[0]["message"])
        # another program's findings are never the root cause a target of gpucheckup's own names (no GPU here:
        # pci.no-gpu is)
        for name, t in r.json["verdict"]["targets"].items():
            self.assertNotIn("(process.", t["detail"] or "", name)
        if not r.json["pci"]["devices"]:
            self.assertIn("(pci.no-gpu)", r.json["verdict"]["targets"]["gpu"]["detail"])
        # our own process: one namespace, no view of its own
        r = self.run_json("process", "--pid", str(self.child().pid))
        self.assertIs(r.json["process"]["pid"]["other_mount_namespace"], False)
        self.assertNotIn("own_view", r.json["process"]["pid"])
        self.assertEqual(self.ids(r), [], repr(r))

    def test_pid_root_in_a_tree_misses_nodes(self):
        """A container given /dev/nvidiactl only, captured as the tree's /proc/PID/root."""
        p = self.child()
        t = PciTree(self.make_tree())
        t.healthy_nvidia()
        for f in ("status", "environ"):
            with open("/proc/%d/%s" % (p.pid, f), "rb") as src:
                t.t.write("/proc/%d/%s" % (p.pid, f), src.read())
        t.t.write("/proc/%d/root/dev/nvidiactl" % p.pid)
        t.t.write("/proc/%d/root/etc/OpenCL/vendors/nvidia.icd" % p.pid, "libnvidia-opencl.so.1\n")
        r = self.run_json("process", "--root", t.t.root, "--pid", str(p.pid))
        self.assertEqual(sorted(f["subject"] for f in r.findings("process.node-missing")),
                         ["/dev/dri/renderD128", "/dev/nvidia-uvm", "/dev/nvidia0"], repr(r))
        self.assertIn("has 1 of the GPU's 4 compute nodes", r.findings("process.node-missing")[0]["message"])
        self.assertEqual(r.json["process"]["pid"]["own_view"]["opencl_vendors"]["icds"], ["nvidia.icd"])
        self.assertEqual(len(r.findings("process.other-icds")), 1, repr(r))

    # ---- its cgroup's device rules -----------------------------------------------------------------

    def test_pid_devices_cgroup_v1_in_a_tree(self):
        """Docker's default device rules (no 195:*): every NVIDIA node denied; --gpus' rules allow them."""
        t = PciTree(self.make_tree())
        t.healthy_nvidia()
        t.t.write("/proc/devices", "Character devices:\n195 nvidia\n226 drm\n508 nvidia-uvm\n\nBlock devices:\n"
                  "508 nvidia-uvm\n")
        t.t.write("/proc/4242/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t0\n")
        t.t.write("/proc/4242/cgroup", "12:devices:/docker/abc\n1:name=systemd:/docker/abc\n0::/docker/abc\n")
        docker = ("c *:* m\nb *:* m\nc 1:3 rwm\nc 1:5 rwm\nc 1:7 rwm\nc 5:0 rwm\nc 5:1 rwm\nc 5:2 rwm\n"
                  "c 1:8 rwm\nc 1:9 rwm\nc 136:* rwm\nc 10:200 rwm\n")
        t.t.write("/sys/fs/cgroup/devices/docker/abc/devices.list", docker)
        r = self.run_json("process", "--root", t.t.root, "--pid", "4242")
        f = {x["subject"]: x["message"] for x in r.findings("process.cgroup-denied")}
        self.assertEqual(sorted(f), ["/dev/dri/renderD128", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"],
                         repr(r))
        self.assertIn("The devices cgroup of process 4242 (python3) (/docker/abc) allows only 'm' on /dev/nvidia0 "
                      "(c 195:0)", f["/dev/nvidia0"])
        self.assertIn("(c 508:0)", f["/dev/nvidia-uvm"])
        self.assertEqual(r.findings("process.cgroup-denied")[0]["severity"], "error")
        cg = r.json["process"]["pid"]["cgroup"]
        self.assertEqual(cg["v1"]["file"], "/sys/fs/cgroup/devices/docker/abc/devices.list")
        self.assertEqual({n["path"]: n["allowed"] for n in cg["v1"]["nodes"]}["/dev/nvidiactl"], "m")
        # a tree is never asked for device programs, and says so without a finding
        self.assertIsNone(cg["v2"]["device_programs"])
        self.assertIn("a tree is read", cg["v2"]["why"])
        self.assertEqual(r.findings("process.cgroup-unchecked"), [])
        text = gctest.run("process", "--root", t.t.root, "--pid", "4242")
        self.assertIn("/dev/nvidia0 (c 195:0): m", text.stdout)
        self.assertIn("and allows no GPU's node", f["/dev/nvidia0"])
        # docker run --gpus all adds the NVIDIA nodes; CUDA needs no DRM node: its render node (read-only here)
        # is a fact of the JSON, no finding
        t.t.write("/sys/fs/cgroup/devices/docker/abc/devices.list", docker + "c 195:* rwm\nc 508:* rw\nc 226:128 r\n")
        r = self.run_json("process", "--root", t.t.root, "--pid", "4242")
        self.assertEqual(r.findings("process.cgroup-denied"), [], repr(r))
        nodes = {n["path"]: n for n in r.json["process"]["pid"]["cgroup"]["v1"]["nodes"]}
        self.assertEqual((nodes["/dev/dri/renderD128"]["allowed"], nodes["/dev/dri/renderD128"]["can_open"]),
                         ("rm", False))
        self.assertEqual(nodes["/dev/nvidia0"]["allowed"], "rwm")
        # its GPU given but not nvidia-uvm (a hand-written rule set): every CUDA GPU needs it
        t.t.write("/sys/fs/cgroup/devices/docker/abc/devices.list", docker + "c 195:* rwm\n")
        r = self.run_json("process", "--root", t.t.root, "--pid", "4242")
        f = r.findings("process.cgroup-denied")
        self.assertEqual([x["subject"] for x in f], ["/dev/nvidia-uvm"], repr(r))
        self.assertIn("allows only 'm' on /dev/nvidia-uvm (c 508:0), which every GPU of its stack needs",
                      f[0]["message"])
        # an AMD container given its render node but not /dev/kfd: ROCm needs both
        a = self.amd_tree()
        a.t.write("/proc/devices", "Character devices:\n226 drm\n509 kfd\n")
        a.t.write("/proc/77/status", "Name:\tollama\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t0\n")
        a.t.write("/proc/77/cgroup", "5:devices:/docker/amd\n")
        a.t.write("/sys/fs/cgroup/devices/docker/amd/devices.list", docker + "c 226:128 rwm\n")
        r = self.run_json("process", "--root", a.t.root, "--pid", "77")
        self.assertEqual([x["subject"] for x in r.findings("process.cgroup-denied")], ["/dev/kfd"], repr(r))
        self.assertIn("(c 509:0), which every GPU of its stack needs", r.findings("process.cgroup-denied")[0]["message"])
        a.t.write("/sys/fs/cgroup/devices/docker/amd/devices.list", docker + "c 226:128 rwm\nc 509:0 rw\n")
        r = self.run_json("process", "--root", a.t.root, "--pid", "77")
        self.assertEqual(r.findings("process.cgroup-denied"), [], repr(r))
        # a privileged container, and a cgroup file that cannot be found
        t.t.write("/sys/fs/cgroup/devices/docker/abc/devices.list", "a *:* rwm\n")
        r = self.run_json("process", "--root", t.t.root, "--pid", "4242")
        self.assertEqual([i for i in self.ids(r) if ".cgroup-" in i], [], repr(r))
        t.t.write("/proc/4242/cgroup", "12:devices:/docker/other\n")
        r = self.run_json("process", "--root", t.t.root, "--pid", "4242")
        self.assertEqual(r.json["process"]["pid"]["cgroup"]["v1"]["error"], "No such file or directory")
        self.assertNotIn("v2", r.json["process"]["pid"]["cgroup"])
        self.assertEqual([i for i in self.ids(r) if ".cgroup-" in i], [], repr(r))

    def test_pid_cgroup_v2_device_program_for_real(self):
        """A cgroup the test makes on the live cgroup2 hierarchy, the child moved into it, then a device program
        (one that allows everything) attached with the bpf syscall. As another user, the query is refused."""
        mount = cgroup2_mount()
        p = self.child()
        r = self.run_json("process", "--pid", str(p.pid))
        v2 = r.json["process"]["pid"]["cgroup"]["v2"]
        if mount is None or v2["device_programs"] is None:
            # no cgroup2, not root, or (in a container) the kernel refuses bpf: said, never guessed
            self.assertIsNone(v2["device_programs"], repr(r))
            self.assertIn("no cgroup2 hierarchy" if mount is None else "needs root" if os.geteuid() else
                          "the kernel refused bpf", v2["why"])
            self.assertEqual(len(r.findings("process.cgroup-unchecked")), 0 if mount is None else 1, repr(r))
            return
        self.assertEqual(os.geteuid(), 0)
        self.assertIsInstance(v2["device_programs"], int)
        d = os.path.join(mount, "gc-test-%d" % os.getpid())
        try:
            os.mkdir(d)
        except OSError as e:  # a read-only cgroupfs (a container): the count above is what can be checked
            self.assertIn(e.errno, (13, 1, 30), e)
            return
        self.addCleanup(os.rmdir, d)
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(p.pid))
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        r = self.run_json("process", "--pid", str(p.pid))
        v2 = r.json["process"]["pid"]["cgroup"]["v2"]
        self.assertEqual(v2["path"], "/gc-test-%d" % os.getpid(), repr(r))
        self.assertEqual(v2["dir"], d)
        self.assertEqual(v2["device_programs"], 0, repr(r))
        self.assertEqual(self.ids(r), [], repr(r))
        bpf_allow_all_devices(d)
        r = self.run_json("process", "--pid", str(p.pid))
        self.assertEqual(r.json["process"]["pid"]["cgroup"]["v2"]["device_programs"], 1, repr(r))
        f = r.findings("process.cgroup-device-program")
        self.assertEqual(len(f), 1, repr(r))
        self.assertEqual(f[0]["severity"], "info")
        self.assertIn("1 device program acts on the cgroup of process %d" % p.pid, f[0]["message"])
        # nobody may not ask the kernel
        proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", gctest.GPUCHECKUP,
                               "process", "--json", "--pid", str(p.pid)], capture_output=True, text=True, timeout=120)
        doc = __import__("json").loads(proc.stdout)
        gctest.validate(doc)
        self.assertIn("needs root", doc["process"]["pid"]["cgroup"]["v2"]["why"])
        self.assertEqual([x["id"] for x in doc["findings"] if x["id"] == "process.cgroup-unchecked"],
                         ["process.cgroup-unchecked"])

    def test_pid_that_does_not_exist_is_an_input_error(self):
        r = gctest.run("process", "--json", "--pid", "4194304")
        self.assertEqual(r.rc, 2, repr(r))
        self.assertIn("no such process", r.stdout + r.stderr)

    # ---- --unit ----------------------------------------------------------------------------------

    def unit(self, t, text, name="ollama.service", where="/usr/lib/systemd/system"):
        path = t.t.write("%s/%s" % (where, name), text)
        if where.endswith("/system"):
            v = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True, timeout=60)
            self.assertEqual(v.returncode, 0, "not a valid unit: %s" % v.stderr)
        return path

    OLLAMA = ("[Unit]\nDescription=Ollama\n\n[Service]\nExecStart=/usr/bin/sleep infinity\nUser=ollama\n"
              "Group=ollama\nPrivateDevices=yes\n\n[Install]\nWantedBy=multi-user.target\n")

    def test_unit_private_devices_and_user_not_in_render(self):
        t = self.amd_tree()
        self.unit(t, self.OLLAMA)
        r = self.run_json("check", "--root", t.t.root, "--unit", "ollama.service")
        self.assertIn("unit.private-devices", self.ids(r))
        self.assertEqual(r.findings("unit.private-devices")[0]["severity"], "error")
        denied = sorted(f["subject"] for f in r.findings("unit.user-denied"))
        self.assertEqual(denied, ["/dev/dri/renderD128", "/dev/kfd"], repr(r))
        msg = r.findings("unit.user-denied")[0]["message"]
        self.assertIn("User=ollama cannot open", msg)
        self.assertIn("root:render 0660", msg)
        self.assertIn("not in render", msg)
        u = r.json["process"]["unit"]
        self.assertEqual((u["file"], u["user"], u["private_devices"]),
                         ("/usr/lib/systemd/system/ollama.service", "ollama", True))
        h = gctest.run("check", "--root", t.t.root, "--unit", "ollama", "--health")
        self.assertNotEqual(h.rc, 0, repr(h))
        text = gctest.run("process", "--root", t.t.root, "--unit", "ollama")
        self.assertIn("PrivateDevices=yes", text.stdout)

    def mock_manager(self, service_props, active="active"):
        """A private bus (dbus-daemon, session config) with a mock systemd manager (Debian's python3-dbusmock)
        whose LoadUnit("ollama.service") answers an object with SERVICE_PROPS on org.freedesktop.systemd1.Service.
        Its address, for DBUS_SYSTEM_BUS_ADDRESS."""
        import dbus  # python3-dbus, with python3-dbusmock
        d = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                           capture_output=True, text=True, check=True, timeout=30).stdout.split()
        addr, pid = d[0], int(d[1])
        self.addCleanup(os.kill, pid, 15)
        mock = subprocess.Popen([sys.executable, "-m", "dbusmock", "--system", "org.freedesktop.systemd1",
                                 "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"],
                                env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=addr), stdout=subprocess.DEVNULL)
        self.addCleanup(mock.wait)
        self.addCleanup(mock.terminate)
        bus = dbus.bus.BusConnection(addr)
        for _ in range(100):
            if bus.name_has_owner("org.freedesktop.systemd1"):
                break
            time.sleep(0.05)
        path = "/org/freedesktop/systemd1/unit/ollama_2eservice"
        m = "org.freedesktop.DBus.Mock"
        mgr = bus.get_object("org.freedesktop.systemd1", "/org/freedesktop/systemd1")
        mgr.AddMethod("", "LoadUnit", "s", "o",
                      f"ret = dbus.ObjectPath('{path}') if args[0] == 'ollama.service' else "
                      "dbus.ObjectPath('/org/freedesktop/systemd1/unit/other')", dbus_interface=m)
        unit = {"LoadState": "loaded", "ActiveState": active, "FragmentPath": "/etc/systemd/system/ollama.service",
                "DropInPaths": dbus.Array(["/etc/systemd/system/ollama.service.d/override.conf"], signature="s")}
        mgr.AddObject(path, "org.freedesktop.systemd1.Unit", unit, [], dbus_interface=m)
        bus.get_object("org.freedesktop.systemd1", path).AddProperties("org.freedesktop.systemd1.Service",
                                                                     service_props, dbus_interface=m)
        return addr

    def test_unit_from_the_manager(self):
        """Issue 39: where a system bus answers, the manager's merged settings are used (source "manager"):
        PrivateDevices=yes and User=ollama from it, though no unit file exists here; MainPID replaces the
        cgroup lookup."""
        import dbus
        service = {"Environment": dbus.Array(["HIP_VISIBLE_DEVICES=0"], signature="s"),
                   "EnvironmentFiles": dbus.Array([dbus.Struct(("/etc/default/ollama", True), signature="sb")],
                                                  signature="(sb)"),
                   "User": "ollama", "Group": "ollama", "SupplementaryGroups": dbus.Array([], signature="s"),
                   "DynamicUser": False, "PrivateDevices": True, "DevicePolicy": "closed",
                   "DeviceAllow": dbus.Array([dbus.Struct(("/dev/kfd", "rw"), signature="ss")], signature="(ss)"),
                   "ExecStart": dbus.Array([dbus.Struct(("/usr/bin/ollama", dbus.Array(["/usr/bin/ollama", "serve"],
                                                                                      signature="s"),
                                                         False, dbus.UInt64(0), dbus.UInt64(0), dbus.UInt64(0),
                                                         dbus.UInt64(0), dbus.UInt32(0), dbus.Int32(0), dbus.Int32(0)),
                                                        signature="sasbttttuii")], signature="(sasbttttuii)"),
                   "MainPID": dbus.UInt32(os.getpid())}
        addr = self.mock_manager(service)
        r = self.run_json("process", "--unit", "ollama.service",
                          env={"DBUS_SYSTEM_BUS_ADDRESS": addr, "HIP_VISIBLE_DEVICES": None})
        u = r.json["process"]["unit"]
        self.assertEqual((u["source"], u["manager_reason"], u["active_state"]), ("manager", None, "active"), repr(r))
        self.assertEqual((u["file"], u["user"], u["private_devices"], u["device_policy"]),
                         ("/etc/systemd/system/ollama.service", "ollama", True, "closed"))
        self.assertEqual(u["dropins"], ["/etc/systemd/system/ollama.service.d/override.conf"])
        self.assertEqual(u["environment"], {"HIP_VISIBLE_DEVICES": "0"})
        self.assertEqual(u["device_allow"], ["/dev/kfd rw"])
        self.assertEqual(u["exec_start"], "/usr/bin/ollama serve")
        self.assertEqual(u["main_pid"], os.getpid())
        # the findings judge the manager's values (unit.private-devices needs GPU nodes, which live runs here lack)
        self.assertIn("unit.env-differs", self.ids(r))
        text = gctest.run("process", "--unit", "ollama", env={"DBUS_SYSTEM_BUS_ADDRESS": addr})
        self.assertIn("as systemd's manager applies it", text.stdout)
        self.assertIn("systemd's manager (D-Bus)", text.stdout)
        # a bus with no manager on it: the files, and why not the manager
        r = self.run_json("process", "--unit", "ollama.service", env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"})
        u = r.json["process"]["unit"]
        self.assertEqual(u["source"], "files", repr(r))
        self.assertIn("the system bus", u["manager_reason"])
        # without libsystemd: the files, and the library named
        r = self.run_json("process", "--unit", "ollama.service",
                          env={"DBUS_SYSTEM_BUS_ADDRESS": addr, "GPUCHECKUP_LIBSYSTEMD": "libgc-no-such-systemd.so.0"})
        u = r.json["process"]["unit"]
        self.assertEqual(u["source"], "files", repr(r))
        self.assertIn("libgc-no-such-systemd.so.0 (GPUCHECKUP_LIBSYSTEMD)", u["manager_reason"])

    def test_unit_that_runs_is_judged_by_its_process(self):
        """Its cgroup names its process (without D-Bus); that process's files as a tree captured them."""
        t = self.amd_tree()
        self.unit(t, self.OLLAMA.replace("PrivateDevices=yes\n", ""))
        t.t.write("/sys/fs/cgroup/system.slice/ollama.service/cgroup.procs", "4242\n4250\n")
        t.t.write("/proc/4242/status", "Name:\tollama\nUid:\t998\t998\t998\t998\nGid:\t998\t998\t998\t998\n"
                  "Groups:\t998\nNoNewPrivs:\t0\nSeccomp:\t0\n")
        t.t.write("/proc/4242/environ", b"HIP_VISIBLE_DEVICES=1\0HOME=/usr/share/ollama\0")
        r = self.run_json("check", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual(r.json["process"]["unit"]["main_pid"], 4242)
        self.assertEqual(r.json["process"]["pid"]["environment"], {"HIP_VISIBLE_DEVICES": "1"})
        self.assertIn("process 4242 (ollama)", r.findings("process.hides-all-gpus")[0]["message"])
        self.assertEqual(sorted(f["subject"] for f in r.findings("process.denied")),
                         ["/dev/dri/renderD128", "/dev/kfd"], repr(r))
        self.assertEqual(len(r.findings("unit.user-denied")), 2, repr(r))

    def test_unit_that_runs_makes_the_run_its_process(self):
        """Issue 39: --unit of a running service makes the whole run its process's (the manager's MainPID), as
        --pid does: the cuda section's child runs with its CUDA_VISIBLE_DEVICES=1 and sees no GPU, the opencl
        section finds the driver (PoCL) only its OCL_ICD_VENDORS names. The unit's settings are still compared
        with gpucheckup's own environment. When it does not run, the run stays gpucheckup's and the text says
        that its environment is predicted from its settings."""
        import dbus
        mine, vendors, empty, cache = self.tmpdir(), self.tmpdir(), self.tmpdir(), self.tmpdir()
        shutil.copy(FAKE_LIBCUDA, os.path.join(mine, "libcuda.so.1"))
        shutil.copy("/etc/OpenCL/vendors/pocl.icd", vendors)
        p = self.child(env={"CUDA_VISIBLE_DEVICES": "1", "GC_FAKE_CUDA_GPUS": "1", "OCL_ICD_VENDORS": vendors,
                            "POCL_DEVICES": "pthread", "POCL_CACHE_DIR": cache})
        service = {"Environment": dbus.Array(["CUDA_VISIBLE_DEVICES=1"], signature="s"), "MainPID": dbus.UInt32(p.pid)}
        addr = self.mock_manager(service)
        ours = {"DBUS_SYSTEM_BUS_ADDRESS": addr, "LD_LIBRARY_PATH": mine, "CUDA_VISIBLE_DEVICES": None,
                "GC_FAKE_CUDA_GPUS": "1", "OCL_ICD_VENDORS": empty, "OCL_ICD_FILENAMES": None,
                "OPENCL_VENDOR_PATH": None, "GPUCHECKUP_LIBOPENCL": None, "POCL_DEVICES": None,
                "POCL_CACHE_DIR": cache}
        r = self.run_json("check", "--unit", "ollama.service", env=ours, timeout=300)
        u, pid = r.json["process"]["unit"], r.json["process"]["pid"]
        self.assertEqual((u["source"], u["main_pid"], pid["pid"]), ("manager", p.pid, p.pid), repr(r))
        self.assertEqual(pid["run_as_it"], {"environment": True, "credentials": False, "why": None})
        self.assertEqual(r.json["cuda"]["driver"]["cuinit"]["name"], "CUDA_ERROR_NO_DEVICE", repr(r))
        self.assertEqual([x["name"] for x in r.json["opencl"]["platforms"]], ["Portable Computing Language"],
                         repr(r))
        # the unit's CUDA_VISIBLE_DEVICES=1 against gpucheckup's own (unset), not against the one the run took
        f = [f for f in r.findings("unit.env-differs") if f["subject"] == "CUDA_VISIBLE_DEVICES"]
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("this shell has none", f[0]["message"])
        text = gctest.run("process", "--unit", "ollama.service", env=ours)
        self.assertIn("run as it", text.stdout)
        self.assertNotIn("is not running", text.stdout)
        # not running: gpucheckup's own environment (its one GPU visible), said in the text
        service["MainPID"] = dbus.UInt32(0)
        addr = self.mock_manager(service, active="inactive")
        ours["DBUS_SYSTEM_BUS_ADDRESS"] = addr
        r = self.run_json("process", "--unit", "ollama.service", env=ours)
        self.assertEqual((r.json["process"]["unit"]["main_pid"], r.json["process"].get("pid")), (None, None), repr(r))
        self.assertEqual(r.json["cuda"]["driver"]["cuinit"]["name"], "CUDA_SUCCESS", repr(r))
        self.assertIn("CUDA_VISIBLE_DEVICES", [f["subject"] for f in r.findings("unit.env-differs")], repr(r))
        text = gctest.run("process", "--unit", "ollama.service", env=ours)
        self.assertIn("ollama.service is not running (the manager gives no MainPID): the environment and user its "
                      "program would get are predicted from its settings", " ".join(text.stdout.split()))

    def test_unit_dropins_override_in_order(self):
        t = self.amd_tree()
        self.unit(t, self.OLLAMA)
        # /etc's drop-in of a name hides /usr's of the same name; files apply sorted by name
        t.t.write("/usr/lib/systemd/system/ollama.service.d/10-gpu.conf", "[Service]\nPrivateDevices=yes\n")
        t.t.write("/etc/systemd/system/ollama.service.d/10-gpu.conf",
                  "[Service]\n# a comment\nPrivateDevices=no\n"
                  "SupplementaryGroups=render \\\n  video\n")
        t.t.write("/run/systemd/system/ollama.service.d/20-env.conf",
                  "[Service]\nEnvironment=\"HSA_OVERRIDE_GFX_VERSION=11.0.0\" \"OLLAMA_HOST=0.0.0.0 x\"\n"
                  "Environment=HIP_VISIBLE_DEVICES=3\nEnvironmentFile=-/etc/default/ollama-missing\n"
                  "EnvironmentFile=/etc/default/ollama\n")
        t.t.write("/etc/default/ollama", "# the file wins over Environment=\nHSA_OVERRIDE_GFX_VERSION=\"10.3.0\"\n")
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        u = r.json["process"]["unit"]
        self.assertEqual(u["dropins"], ["/etc/systemd/system/ollama.service.d/10-gpu.conf",
                                        "/run/systemd/system/ollama.service.d/20-env.conf"])
        self.assertIs(u["private_devices"], False)
        self.assertEqual(u["supplementary_groups"], ["render", "video"])
        self.assertEqual(u["environment"]["HSA_OVERRIDE_GFX_VERSION"], "10.3.0")
        self.assertEqual(u["environment"]["OLLAMA_HOST"], "0.0.0.0 x")
        self.assertEqual(self.ids(r), ["process.hides-all-gpus"], repr(r))
        self.assertIn("HIP_VISIBLE_DEVICES=3 hides every AMD GPU from unit ollama.service",
                      r.findings("process.hides-all-gpus")[0]["message"])
        self.assertEqual(r.findings("process.hides-all-gpus")[0]["subject"], "ollama.service: HIP_VISIBLE_DEVICES")
        self.assertTrue(all(n["can_open"] for n in u["access"]["nodes"]), u)
        # an environment file without '-' that is missing
        os.unlink(t.t.path("/etc/default/ollama"))
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual([f["subject"] for f in r.findings("unit.env-file-missing")], ["/etc/default/ollama"])

    def test_unit_device_policy(self):
        t = self.amd_tree()
        self.unit(t, self.OLLAMA.replace("PrivateDevices=yes", "DevicePolicy=closed\nDeviceAllow=/dev/kfd rw")
                  .replace("User=ollama\nGroup=ollama\n", ""))
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        f = r.findings("unit.device-policy")
        self.assertEqual(len(f), 1, repr(r))
        self.assertIn("no DeviceAllow= for /dev/dri/renderD128", f[0]["message"])
        self.unit(t, self.OLLAMA.replace("PrivateDevices=yes", "DevicePolicy=strict\nDeviceAllow=/dev/kfd rw\n"
                                         "DeviceAllow=char-drm rw").replace("User=ollama\nGroup=ollama\n", ""),
                  where="/etc/systemd/system")
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual(r.json["process"]["unit"]["file"], "/etc/systemd/system/ollama.service")
        self.assertEqual(self.ids(r), [], repr(r))
        # read-only is not enough
        t.t.write("/etc/systemd/system/ollama.service.d/ro.conf", "[Service]\nDeviceAllow=\nDeviceAllow=char-drm r\n")
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertIn("/dev/dri/renderD128, /dev/kfd", r.findings("unit.device-policy")[0]["message"])

    def test_unit_dynamic_user_needs_supplementary_groups(self):
        t = self.amd_tree()
        body = self.OLLAMA.replace("User=ollama\nGroup=ollama\nPrivateDevices=yes\n", "DynamicUser=yes\n")
        self.unit(t, body)
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual(len(r.findings("unit.user-denied")), 2, repr(r))
        self.unit(t, body.replace("DynamicUser=yes", "DynamicUser=yes\nSupplementaryGroups=render"),
                  where="/etc/systemd/system")
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual(self.ids(r), [], repr(r))

    def test_unit_masked_missing_and_template(self):
        t = self.amd_tree()
        self.unit(t, self.OLLAMA)
        t.t.symlink("/dev/null", "/etc/systemd/system/ollama.service")
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama")
        self.assertEqual(self.ids(r), ["unit.masked"], repr(r))
        r = self.run_json("process", "--root", t.t.root, "--unit", "nothing")
        self.assertEqual(self.ids(r), ["unit.not-found"], repr(r))
        text = gctest.run("process", "--root", t.t.root, "--unit", "nothing", "-v")  # text of a unit without a file
        self.assertEqual(text.rc, 0, repr(text))
        self.assertIn("unit.not-found", text.stdout)
        self.unit(t, self.OLLAMA.replace("User=ollama", "User=nosuchuser"), name="gpu@.service")
        r = self.run_json("process", "--root", t.t.root, "--unit", "gpu@1.service")
        self.assertEqual(r.json["process"]["unit"]["file"], "/usr/lib/systemd/system/gpu@.service")
        self.assertIn("unit.unknown-user", self.ids(r))

    def test_unit_env_differs_from_this_shell(self):
        t = self.amd_tree()
        self.unit(t, self.OLLAMA.replace("PrivateDevices=yes", "Environment=HSA_OVERRIDE_GFX_VERSION=10.3.0")
                  .replace("User=ollama\nGroup=ollama\n", ""))
        env = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "CUDA_VISIBLE_DEVICES": None, "HIP_VISIBLE_DEVICES": None,
               "ROCR_VISIBLE_DEVICES": None, "LD_LIBRARY_PATH": None, "LD_PRELOAD": None, "OCL_ICD_VENDORS": None}
        # --live: this shell is the one to compare with
        r = self.run_json("process", "--root", t.t.root, "--live", "--unit", "ollama", env=env)
        f = r.findings("unit.env-differs")
        self.assertEqual([x["subject"] for x in f], ["HSA_OVERRIDE_GFX_VERSION"], repr(r))
        self.assertIn("started by the unit the program sees \"10.3.0\"", f[0]["message"])
        self.assertIn("started by hand from this shell \"11.0.0\"", f[0]["message"])
        # a variable only the shell sets is missing from the service
        env.update({"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "ROCR_VISIBLE_DEVICES": "0"})
        r = self.run_json("process", "--root", t.t.root, "--live", "--unit", "ollama", env=env)
        f = r.findings("unit.env-differs")
        self.assertEqual([x["subject"] for x in f], ["ROCR_VISIBLE_DEVICES"], repr(r))
        self.assertIn("started by the unit the program sees it unset", f[0]["message"])
        # a captured tree alone says nothing of this shell
        r = self.run_json("process", "--root", t.t.root, "--unit", "ollama", env=env)
        self.assertEqual(r.findings("unit.env-differs"), [], repr(r))

    # ---- --user -----------------------------------------------------------------------------------

    def test_user_on_a_tree(self):
        t = self.amd_tree()
        r = self.run_json("process", "--root", t.t.root, "--user", "bob")
        f = {x["subject"]: x["message"] for x in r.findings("user.denied")}
        self.assertEqual(sorted(f), ["/dev/dri/renderD128", "/dev/kfd"], repr(r))
        self.assertIn("bob cannot open /dev/dri/renderD128 (root:render 0660; bob is not in render", f["/dev/dri/renderD128"])
        r = self.run_json("process", "--root", t.t.root, "--user", "alice")
        self.assertEqual(self.ids(r), [], repr(r))
        self.assertEqual(r.json["process"]["user"]["groups"], ["alice", "video", "render"])
        r = self.run_json("process", "--root", t.t.root, "--user", "carol")
        self.assertEqual(self.ids(r), ["user.unknown"], repr(r))

    def test_user_live_from_the_user_database(self):
        """Live, --user asks NSS: existing system users as `id` sees them, and one only an NSS module knows."""
        for name in ("daemon", "nobody", "root"):
            if subprocess.run(["id", name], capture_output=True).returncode != 0:
                continue
            r = self.run_json("process", "--user", name)
            u = r.json["process"]["user"]
            self.assertEqual(u["source"], "nss")
            self.assertEqual(u["uid"], int(subprocess.check_output(["id", "-u", name])), repr(r))
            self.assertEqual(u["gid"], int(subprocess.check_output(["id", "-g", name])))
            names = subprocess.check_output(["id", "-Gn", name], text=True).split()
            self.assertEqual(sorted(str(g) for g in u["groups"]), sorted(names), repr(r))
        r = self.run_json("process", "--user", "gc-no-such-user")
        self.assertEqual(self.ids(r), ["user.unknown"], repr(r))
        self.assertIn("The user database (getent passwd", r.findings("user.unknown")[0]["message"])
        # an LDAP-like user: /etc/nsswitch.conf, in a mount namespace of its own, adds the suite's module
        d = self.tmpdir()
        with open("/etc/nsswitch.conf") as f:
            conf = "".join(l for l in f if not l.startswith(("passwd:", "group:")))
        with open(os.path.join(d, "nsswitch.conf"), "w") as f:
            f.write("passwd: files gcfake\ngroup: files gcfake\n" + conf)
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.path.dirname(os.environ["GC_FAKE_NSS"]) + ":" + env.get("LD_LIBRARY_PATH", "")
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/gc-no-bus"  # the unit from its files, always
        # and, where the directory exists, its own /etc/systemd/system with a service run by that user
        units = os.path.join(d, "units")
        os.mkdir(units)
        for name, user in (("gcldap", "gcldap"), ("gcnone", "gc-no-such-user")):
            with open(os.path.join(units, name + ".service"), "w") as f:
                f.write("[Service]\nUser=%s\nExecStart=/bin/true\n" % user)
        have_units = os.path.isdir("/etc/systemd/system")
        script = ("mount --bind \"$0\" /etc/nsswitch.conf && { [ ! -d /etc/systemd/system ] || "
                  "mount --bind \"$1\" /etc/systemd/system; } && shift && exec \"$@\"")

        def inside(*args):
            proc = subprocess.run(["unshare", "-m" if os.geteuid() == 0 else "-rm", "sh", "-c", script,
                                   os.path.join(d, "nsswitch.conf"), units, gctest.GPUCHECKUP, "process", "--json",
                                   *args], capture_output=True, text=True, timeout=120, env=env)
            doc = __import__("json").loads(proc.stdout)
            gctest.validate(doc)
            return doc
        doc = inside("--user", "gcldap")
        u = doc["process"]["user"]
        self.assertEqual((u["source"], u["uid"], u["gid"], u["groups"]), ("nss", 4711, 4711, ["gcldap", "gcgpu"]),
                         repr(doc))
        self.assertNotIn("user.unknown", [f["id"] for f in doc["findings"]])
        if have_units:  # a service's User= only the user database knows is no unknown user
            doc = inside("--unit", "gcldap")
            self.assertEqual(doc["process"]["unit"]["user"], "gcldap", repr(doc))
            self.assertNotIn("unit.unknown-user", [f["id"] for f in doc["findings"]])
            doc = inside("--unit", "gcnone")
            f = [f for f in doc["findings"] if f["id"] == "unit.unknown-user"]
            self.assertEqual(len(f), 1, repr(doc))
            self.assertIn("which the user database (getent passwd", f[0]["message"])
        # the same user under --root: the tree's files only
        t = self.amd_tree()
        r = self.run_json("process", "--root", t.t.root, "--user", "gcldap")
        self.assertEqual(r.json["process"]["user"]["source"], "files")
        self.assertEqual(self.ids(r), ["user.unknown"], repr(r))

    def test_user_acl_grants_access(self):
        """logind's uaccess: an ACL entry for the seat's user on a 0660 node."""
        import struct
        t = self.amd_tree()
        acl = struct.pack("<I", 2)
        for tag, perm, ident in ((1, 6, 0xffffffff), (2, 6, 1001), (4, 6, 0xffffffff), (0x10, 6, 0xffffffff),
                                 (0x20, 0, 0xffffffff)):
            acl += struct.pack("<HHI", tag, perm, ident)
        os.setxattr(t.t.path("/dev/dri/renderD128"), "system.posix_acl_access", acl)
        r = self.run_json("process", "--root", t.t.root, "--user", "bob")
        self.assertEqual([x["subject"] for x in r.findings("user.denied")], ["/dev/kfd"], repr(r))
        nodes = {n["path"]: n for n in r.json["process"]["user"]["nodes"]}
        self.assertTrue(nodes["/dev/dri/renderD128"]["acl"])
        self.assertIn("ACL entry for its uid 1001", nodes["/dev/dri/renderD128"]["by"])


if __name__ == "__main__":
    gctest.main()
