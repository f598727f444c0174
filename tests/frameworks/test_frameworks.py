"""End-to-end tests of the frameworks probe: --root trees built from real wheels' metadata files, with the fake libcuda."""
import os
import re
import shutil
import sys

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "cuda"))
sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
from test_cuda import CudaBase  # noqa: E402
from fwfixtures import install_pins  # noqa: E402
import fwelf  # noqa: E402

FIXTURES = os.path.join(gctest.SOURCE_ROOT, "tests", "frameworks", "fixtures")
SITE = "opt/venv/lib/python3.11/site-packages"
DRIVER_535 = "535.261.03"


class FrameworksTest(CudaBase):
    def venv(self, t, *wheels, site=SITE, venv="opt/venv", pins=True):
        """Install the fixtures' files of WHEELS into SITE of tree T (a venv with pyvenv.cfg), with the NVIDIA
        wheels each pins (their dist-info folders) unless PINS is false."""
        os.makedirs(os.path.join(t.root, site), exist_ok=True)
        os.makedirs(os.path.join(t.root, venv, "bin"), exist_ok=True)
        for rel, text in ((venv + "/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n"),
                          (venv + "/bin/python3", "")):
            with open(os.path.join(t.root, rel), "w") as fh:
                fh.write(text)
        for w in wheels:
            src = os.path.join(FIXTURES, w)
            for top in os.listdir(src):
                if top != "SOURCE":
                    shutil.copytree(os.path.join(src, top), os.path.join(t.root, site, top), dirs_exist_ok=True)
                if pins and top.endswith(".dist-info"):
                    install_pins(os.path.join(t.root, site), os.path.join(src, top, "METADATA"))

    def run_fw(self, t, *extra, driver=None, cuda_version=None, live=True, expect_rc=None, env=None):
        e = {"VIRTUAL_ENV": "/opt/venv", "CONDA_PREFIX": None, "HOME": "/root", "PATH": "/usr/bin"}
        args = ["frameworks", "--root", t.root]
        if live:
            d = self.libdir(driver) if driver else self.libdir()
            e.update({"LD_LIBRARY_PATH": d, "GC_FAKE_CUDA_VERSION": cuda_version,
                      "GC_FAKE_NVML_GPUS": str(len(t.gc_gpus)), "GC_FAKE_NVML_BUSIDS": ",".join(t.gc_gpus),
                      "GC_FAKE_NVML_DRIVER": driver or "580.159.04", "GC_FAKE_NVML_MODE": None,
                      "GC_FAKE_CUDA_MODE": None, "GC_FAKE_CUDA_GPUS": None, "GC_FAKE_CUDA_INIT": None,
                      "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_BUSIDS": None, "GC_FAKE_CUDA_CC": None})
            args.append("--live")
        e.update(env or {})
        r = self.run_json(*args, *extra, env=e, expect_rc=expect_rc)
        self.assertEqual(r.json["frameworks"]["status"], "ok", repr(r))
        return r

    def copies(self, r):
        return [f for env in r.json["frameworks"]["environments"] for f in env["frameworks"]]

    def fw_ids(self, r):
        return sorted(f["id"] for f in r.json["findings"] if f["id"].startswith("frameworks."))

    # ---- the case: a CUDA 13 torch on a 535 driver -----------------------------------------------

    def test_torch_cu132_on_driver_535(self):
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "torch-2.15.0")
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (f,) = self.copies(r)
        self.assertEqual((f["name"], f["version"], f["build"], f["cuda_version"]), ("torch", "2.15.0+cu132", "cuda", "13.2"))
        self.assertIs(f["gpu"], False)
        self.assertEqual(f["root"], "frameworks.cuda-too-new")
        self.assertIn({"name": "nvidia-cudnn-cu13", "spec": '==9.26.0.51; platform_system == "Linux"',
                       "installed": "9.26.0.51", "state": "ok"}, f["nvidia_pins"])
        self.assertEqual(self.fw_ids(r), ["frameworks.cuda-too-new"], repr(r))
        line = ("PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: built for CUDA 13.2, the driver 535.261.03 "
                "runs CUDA 12.2 at most (frameworks.cuda-too-new)")
        self.assertIn(line, r.json["verdict"]["text"], repr(r))
        tgt = r.json["verdict"]["targets"]["torch-gpu"]
        self.assertIs(tgt["ready"], False)
        self.assertEqual(tgt["reasons"], ["frameworks.cuda-too-new"])
        # a framework is no reason for the gpu target: the GPU itself computes
        self.assertNotIn("frameworks.cuda-too-new", r.json["verdict"]["targets"]["gpu"]["reasons"])
        env = r.json["frameworks"]["environments"][0]
        self.assertEqual((env["prefix"], env["kind"], env["origin"]), ("/opt/venv", "venv", "VIRTUAL_ENV"))

    def test_torch_cu128_on_driver_580_ready(self):
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        r = self.run_fw(t, cuda_version="13000")
        (f,) = self.copies(r)
        self.assertIs(f["gpu"], True, repr(r))
        self.assertEqual(self.fw_ids(r), [])
        self.assertIs(r.json["verdict"]["targets"]["torch-gpu"]["ready"], True)
        self.assertIn("PyTorch 2.9.0+cu128 (/opt/venv): will use the GPU", r.json["verdict"]["text"])
        r = self.run_fw(t, "--require", "torch-gpu", cuda_version="13000", expect_rc=0)

    def test_tree_mode_reads_the_driver_from_the_kernel_module(self):
        """--root alone runs no libcuda (issue 36): the tree's /proc/driver/nvidia/version states the driver, and
        NVIDIA's release table the CUDA it runs (535.261.03: 12.2, as its cuDriverGetVersion answers)."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "torch-2.15.0")
        r = self.run_fw(t, live=False)
        self.assertEqual(r.json["cuda"]["status"], "skipped", repr(r))
        (f,) = self.copies(r)
        self.assertIs(f["gpu"], False, repr(r))
        self.assertEqual(f["root"], "frameworks.cuda-too-new")
        self.assertIn("PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: built for CUDA 13.2, the driver "
                      "535.261.03 runs CUDA 12.2 at most (frameworks.cuda-too-new)", r.json["verdict"]["text"], repr(r))
        # a driver that can run it: not proven (nothing ran), but not "not checked" either
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        r = self.run_fw(t, live=False)
        (f,) = self.copies(r)
        self.assertIsNone(f["gpu"], repr(r))
        self.assertEqual(self.fw_ids(r), [])
        text = r.json["verdict"]["text"]
        self.assertIn("CUDA 12.8 build the driver can run (NVIDIA kernel module 580.159.04: CUDA 13.0); not proven",
                      text, repr(r))
        self.assertNotIn("was not checked", text)
        # no module version in the tree: nothing says which driver, and the line says so
        t = self.tree(module=False)
        self.venv(t, "torch-2.9.0")
        r = self.run_fw(t, live=False)
        self.assertIn("built for CUDA 12.8; the CUDA driver was not checked", r.json["verdict"]["text"], repr(r))

    # ---- the pinned NVIDIA wheels (torch 2.15.0's real METADATA) ----------------------------------------

    def test_pins_missing_are_the_root_cause(self):
        """pip install --no-deps torch, or a half-finished install: the import fails on the wheels' libraries,
        whatever the driver; the line names that first, then what comes after."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "torch-2.15.0", pins=False)
        meta = os.path.join(FIXTURES, "torch-2.15.0", "torch-2.15.0.dist-info", "METADATA")
        install_pins(os.path.join(t.root, SITE), meta, skip=("nvidia-cudnn-cu13", "cuda-toolkit"),
                     versions={"nvidia-nccl-cu13": "2.27.3", "cuda-bindings": "12.9.0"})
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (f,) = self.copies(r)
        states = {p["name"]: (p["state"], p["installed"]) for p in f["nvidia_pins"]}
        self.assertEqual(states, {"cuda-toolkit": ("missing", None), "cuda-bindings": ("other-version", "12.9.0"),
                                  "nvidia-cudnn-cu13": ("missing", None), "nvidia-cusparselt-cu13": ("ok", "0.8.1"),
                                  "nvidia-nccl-cu13": ("other-version", "2.27.3"),
                                  "nvidia-nvshmem-cu13": ("ok", "3.7.2")})
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.nvidia-pins"))
        self.assertEqual(self.fw_ids(r), ["frameworks.cuda-too-new", "frameworks.nvidia-pins"], repr(r))
        (p,) = r.findings("frameworks.nvidia-pins")
        self.assertEqual(p["severity"], "warning")
        self.assertIn("the NVIDIA wheels it pins are not installed beside it: cuda-toolkit[cublas,cudart,cufft,cufile,"
                      "cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2, nvidia-cudnn-cu13==9.26.0.51; installed at "
                      "other versions than it pins: cuda-bindings<14,>=13.0.3 (installed 12.9.0), "
                      "nvidia-nccl-cu13==2.30.7 (installed 2.27.3)", p["message"])
        self.assertIn("`/opt/venv/bin/python3 -m pip install 'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,"
                      "cusparse,nvjitlink,nvrtc,nvtx]==13.2.2' 'nvidia-cudnn-cu13==9.26.0.51' "
                      "'cuda-bindings<14,>=13.0.3' 'nvidia-nccl-cu13==2.30.7'`", p["hint"])
        line = ("PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: the NVIDIA wheels it pins are missing "
                "(cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2, "
                "nvidia-cudnn-cu13==9.26.0.51): importing it fails on their libraries; also built for CUDA 13.2, the "
                "driver 535.261.03 runs CUDA 12.2 at most (frameworks.nvidia-pins)")
        self.assertIn(line, r.json["verdict"]["text"], repr(r))
        self.assertEqual(r.json["verdict"]["targets"]["torch-gpu"]["reasons"], ["frameworks.nvidia-pins"])

    def test_pins_missing_but_found_by_the_loader(self):
        """torch 2.15.0+cu132's real METADATA, cuDNN and the cuda-toolkit wheels not installed, their libraries
        on LD_LIBRARY_PATH (a system CUDA 13 and cuDNN 9): torch's loader takes those, so the pins stay a
        finding but the line says it will probably work; one library fewer and it is as before."""
        t = self.tree()
        self.venv(t, "torch-2.15.0", pins=False)
        meta = os.path.join(FIXTURES, "torch-2.15.0", "torch-2.15.0.dist-info", "METADATA")
        # cuda-bindings (Python only, imported lazily) missing too, as with `pip install --no-deps torch`
        install_pins(os.path.join(t.root, SITE), meta, skip=("nvidia-cudnn-cu13", "cuda-toolkit", "cuda-bindings"))
        # CUDA 13 has no libnvToolsExt (torch preloads it with required=False): not needed
        toolkit = ("libcublas.so.13", "libcudart.so.13", "libcufft.so.12", "libcufile.so.0", "libcupti.so.13",
                   "libcusolver.so.12", "libcusparse.so.12", "libnvJitLink.so.13", "libnvrtc.so.13")
        for name in toolkit:
            self.cudnn_wheel(t, where="usr/local/cuda-13.2/lib64", name=name)
        self.cudnn_wheel(t, where="opt/cudnn/lib", name="libcudnn.so.9.1.0")
        os.symlink("libcudnn.so.9.1.0", os.path.join(t.root, "opt/cudnn/lib/libcudnn.so.9"))
        ld = self.libdir() + ":/usr/local/cuda-13.2/lib64:/opt/cudnn/lib"
        r = self.run_fw(t, cuda_version="13000", env={"LD_LIBRARY_PATH": ld})
        (f,) = self.copies(r)
        self.assertIs(f["gpu"], True, repr(r))
        self.assertIsNone(f["root"])
        # the cuDNN it finds is 9.1.0, built against 9.26: PyTorch's cuDNN check refuses it at first use (issue 36),
        # a finding that leaves the import (and so the line) alone
        self.assertEqual(self.fw_ids(r), ["frameworks.lib-older-minor", "frameworks.nvidia-pins"], repr(r))
        (m,) = r.findings("frameworks.lib-older-minor")
        self.assertIn("PyTorch 2.15.0+cu132 (/opt/venv): the loader takes libcudnn.so.9 from /opt/cudnn/lib/libcudnn.so.9 "
                      "(LD_LIBRARY_PATH entry /opt/cudnn/lib), cuDNN 9.1.0, older than the 9.26.0.51 it needs "
                      "(nvidia-cudnn-cu13==9.26.0.51): PyTorch refuses it at its first cuDNN use", m["message"])
        (p,) = r.findings("frameworks.nvidia-pins")
        self.assertEqual(p["severity"], "warning")
        self.assertIn("nvidia-cudnn-cu13==9.26.0.51 (the loader finds their libraries elsewhere: "
                      "/usr/local/cuda-13.2/lib64 (LD_LIBRARY_PATH): libcublas.so.13, libcudart.so.13, libcufft.so.12, "
                      "libcufile.so.0, libcupti.so.13, libcusolver.so.12, libcusparse.so.12, libnvJitLink.so.13, "
                      "libnvrtc.so.13; /opt/cudnn/lib (LD_LIBRARY_PATH): libcudnn.so.9 (9.1.0))",
                      p["message"])
        text = r.json["verdict"]["text"]
        self.assertIn("PyTorch 2.15.0+cu132 (/opt/venv): will use the GPU: ", text)
        self.assertIn("its pinned NVIDIA wheels are missing (cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,"
                      "cusparse,nvjitlink,nvrtc,nvtx]==13.2.2, cuda-bindings<14,>=13.0.3, nvidia-cudnn-cu13==9.26.0.51), but the loader finds "
                      "their libraries in /usr/local/cuda-13.2/lib64, /opt/cudnn/lib: it will probably work with those",
                      text)
        self.assertNotIn("will not use the GPU", text)
        self.assertIs(r.json["verdict"]["targets"]["torch-gpu"]["ready"], True)
        # without cuDNN on the loader's path: the import fails, as before
        os.unlink(os.path.join(t.root, "opt/cudnn/lib/libcudnn.so.9"))
        r = self.run_fw(t, cuda_version="13000", env={"LD_LIBRARY_PATH": ld})
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.nvidia-pins"))
        self.assertNotIn("elsewhere", r.findings("frameworks.nvidia-pins")[0]["message"])
        self.assertIn("PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: the NVIDIA wheels it pins are missing",
                      r.json["verdict"]["text"])

    def test_cu12_pins_missing_but_in_the_default_dirs(self):
        """torch 2.9.0+cu128 installed without its pins (its real METADATA: the per-library nvidia-*-cu12 wheels),
        CUDA 12's libraries and cuDNN 9 in the system's default directory (a distribution's packages)."""
        t = self.tree()
        self.venv(t, "torch-2.9.0", pins=False)
        libs = ("libnvrtc.so.12", "libcudart.so.12", "libcupti.so.12", "libcudnn.so.9", "libcublas.so.12",
                "libcufft.so.11", "libcurand.so.10", "libcusolver.so.11", "libcusparse.so.12", "libcusparseLt.so.0",
                "libnccl.so.2", "libnvshmem_host.so.3", "libnvJitLink.so.12", "libcufile.so.0")
        for name in libs:
            self.cudnn_wheel(t, where="usr/lib/x86_64-linux-gnu", name=name)
        r = self.run_fw(t, cuda_version="13000")
        (f,) = self.copies(r)
        self.assertIs(f["gpu"], True, repr(r))
        (p,) = r.findings("frameworks.nvidia-pins")
        self.assertIn("(the loader finds their libraries elsewhere: /usr/lib/x86_64-linux-gnu (", p["message"])
        for name in libs:
            self.assertIn(name, p["message"])
        self.assertIn("but the loader finds their libraries in /usr/lib/x86_64-linux-gnu: it will probably work",
                      r.json["verdict"]["text"])
        # CUDA 12's cuFFT is libcufft.so.11: CUDA 13's name is no use to a cu12 build
        os.rename(os.path.join(t.root, "usr/lib/x86_64-linux-gnu/libcufft.so.11"),
                  os.path.join(t.root, "usr/lib/x86_64-linux-gnu/libcufft.so.12"))
        r = self.run_fw(t, cuda_version="13000")
        self.assertEqual((self.copies(r)[0]["gpu"], self.copies(r)[0]["root"]), (False, "frameworks.nvidia-pins"))

    def test_extra_pins_count_once_the_extra_was_asked_for(self):
        """TensorFlow 2.21.0's `and-cuda` and jax-cuda12-plugin 0.9.2's `with-cuda` pins (their real METADATA):
        pip records no extras, so none installed is the extra not asked for; some installed is a half-done
        extra: a finding for the missing ones, never the root cause (both name the same wheels)."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "jaxlib-0.9.2", "jax-cuda12-plugin-0.9.2", "tensorflow-2.21.0")
        self.cudnn_wheel(t)
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        tf = [f for f in self.copies(r) if f["name"] == "tensorflow"][0]
        self.assertEqual({p["state"] for p in tf["nvidia_pins"]}, {"optional"}, repr(tf))
        self.assertEqual(len(tf["nvidia_pins"]), 12)
        self.assertNotIn("frameworks.nvidia-pins", self.fw_ids(r))
        # `pip install 'tensorflow[and-cuda]'` cut short: all but nccl and cudnn
        meta = os.path.join(FIXTURES, "tensorflow-2.21.0", "tensorflow-2.21.0.dist-info", "METADATA")
        with open(meta, encoding="utf-8") as fh:
            extra = re.findall(r'^Requires-Dist: (nvidia-[a-z0-9-]+)<[^,]*,>=([0-9.]+); extra == "and-cuda"$',
                               fh.read(), re.M)
        self.assertEqual(len(extra), 12)
        for name, version in extra:
            if name not in ("nvidia-nccl-cu12", "nvidia-cudnn-cu12"):
                d = os.path.join(t.root, SITE, "%s-%s.dist-info" % (name.replace("-", "_"), version))
                os.makedirs(d)
                with open(os.path.join(d, "METADATA"), "w") as fh:
                    fh.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        by = {f["name"]: f for f in self.copies(r)}
        states = {p["name"]: p["state"] for p in by["tensorflow"]["nvidia_pins"]}
        self.assertEqual((states["nvidia-nccl-cu12"], states["nvidia-cudnn-cu12"], states["nvidia-cublas-cu12"]),
                         ("extra-missing", "extra-missing", "ok"))
        jstates = {p["name"]: p["state"] for p in by["jax"]["nvidia_pins"]}
        self.assertEqual((jstates["nvidia-nvshmem-cu12"], jstates["nvidia-cufft-cu12"]), ("extra-missing", "ok"))
        for name in ("tensorflow", "jax"):
            self.assertIs(by[name]["gpu"], True, repr(by[name]))
        msgs = [p["message"] for p in r.findings("frameworks.nvidia-pins")]
        self.assertEqual(len(msgs), 2, repr(msgs))
        tfmsg = [m for m in msgs if m.startswith("TensorFlow 2.21.0")][0]
        self.assertIn("of its CUDA extra's wheels, not installed while others of it are (a half-done `pip install` of "
                      "the extra, or another framework's wheels): nvidia-cudnn-cu12<10.0,>=9.3.0.75, "
                      "nvidia-nccl-cu12<3.0,>=2.27.7", tfmsg)
        self.assertNotIn("will not use the GPU", "\n".join(l for l in r.json["verdict"]["text"].split("\n")
                                                          if l.startswith(("TensorFlow", "JAX"))))

    def test_pin_for_other_pythons_is_not_missing(self):
        """cuda-bindings is pinned `python_version < "3.15"` only: a Python 3.15 site does not need it."""
        t = self.tree()
        site = "opt/venv/lib/python3.15/site-packages"
        self.venv(t, "torch-2.15.0", site=site, pins=False)
        meta = os.path.join(FIXTURES, "torch-2.15.0", "torch-2.15.0.dist-info", "METADATA")
        install_pins(os.path.join(t.root, site), meta, skip=("cuda-bindings",))
        r = self.run_fw(t, cuda_version="13020")
        (f,) = self.copies(r)
        states = {p["name"]: p["state"] for p in f["nvidia_pins"]}
        self.assertEqual(states["cuda-bindings"], "other-python", states)
        self.assertEqual(set(states.values()), {"ok", "other-python"})
        self.assertEqual(self.fw_ids(r), [])
        self.assertIs(f["gpu"], True)

    def test_pins_at_other_versions_only_is_a_finding_not_the_root(self):
        t = self.tree()
        self.venv(t, "torch-2.9.0", pins=False)
        meta = os.path.join(FIXTURES, "torch-2.9.0", "torch-2.9.0.dist-info", "METADATA")
        made = install_pins(os.path.join(t.root, SITE), meta)
        self.assertTrue(made)
        name = made[0][0]
        install_pins(os.path.join(t.root, SITE), meta, versions={name: "0.0.1"})
        shutil.rmtree(os.path.join(t.root, SITE, "%s-%s.dist-info" % (name.replace("-", "_"), made[0][1])))
        r = self.run_fw(t, cuda_version="13000")
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (True, None), repr(f))
        self.assertEqual(self.fw_ids(r), ["frameworks.nvidia-pins"])
        (p,) = r.findings("frameworks.nvidia-pins")
        self.assertIn("installed at other versions than it pins: %s" % name, p["message"])
        self.assertIn("(installed 0.0.1)", p["message"])
        self.assertNotIn("not installed", p["message"])

    # ---- LD_LIBRARY_PATH shadowing a wheel's library ----------------------------------------------------

    def shadow_tree(self):
        """torch 2.9.0+cu128 with its pins; the nvjitlink wheel's libnvJitLink.so.12 (12.8.93) and cusparse's; a
        CUDA 12.1 toolkit's libnvJitLink.so.12 -> libnvJitLink.so.12.1.105 under /usr/local/cuda-12.1/lib64."""
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        site = os.path.join(t.root, SITE)
        for wheel, lib in (("nvjitlink", "libnvJitLink.so.12"), ("cusparse", "libcusparse.so.12")):
            os.makedirs(os.path.join(site, "nvidia", wheel, "lib"))
            with open(os.path.join(site, "nvidia", wheel, "lib", lib), "wb") as fh:
                fh.write(b"\x7fELF")
        tk = os.path.join(t.root, "usr/local/cuda-12.1/lib64")
        os.makedirs(tk)
        with open(os.path.join(tk, "libnvJitLink.so.12.1.105"), "wb") as fh:
            fh.write(b"\x7fELF")
        os.symlink("libnvJitLink.so.12.1.105", os.path.join(tk, "libnvJitLink.so.12"))
        return t

    def test_ld_library_path_shadows_a_wheel_library(self):
        t = self.shadow_tree()
        ld = self.libdir() + ":/nowhere:/usr/local/cuda-12.1/lib64"
        r = self.run_fw(t, cuda_version="13000", env={"LD_LIBRARY_PATH": ld})
        (f,) = r.findings("frameworks.ld-shadow")
        self.assertEqual((f["severity"], f["subject"]), ("warning", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12"))
        self.assertIn("PyTorch 2.9.0+cu128 (/opt/venv): LD_LIBRARY_PATH's /usr/local/cuda-12.1/lib64/libnvJitLink.so.12 "
                      "(12.1.105) comes before the wheel's own /%s/nvidia/nvjitlink/lib/libnvJitLink.so.12 "
                      "(nvidia-nvjitlink-cu12 12.8.93)" % SITE, f["message"])
        self.assertIn("undefined symbol", f["message"])
        self.assertIn("Take /usr/local/cuda-12.1/lib64 out of LD_LIBRARY_PATH", f["hint"])
        # a warning of the framework layer, the line unchanged: --import says whether it breaks the import
        (c,) = self.copies(r)
        self.assertEqual((c["gpu"], c["root"]), (True, None))
        # another environment's wheel directory on the path: its version from the dist-info beside it
        old = os.path.join(t.root, "opt/old/site-packages")
        os.makedirs(os.path.join(old, "nvidia/nvjitlink/lib"))
        os.makedirs(os.path.join(old, "nvidia_nvjitlink_cu12-12.1.105.dist-info"))
        with open(os.path.join(old, "nvidia/nvjitlink/lib/libnvJitLink.so.12"), "wb") as fh:
            fh.write(b"\x7fELF")
        r = self.run_fw(t, cuda_version="13000", env={"LD_LIBRARY_PATH": "/opt/old/site-packages/nvidia/nvjitlink/lib:"
                                                       "/usr/local/cuda-12.1/lib64"})
        (f,) = r.findings("frameworks.ld-shadow")
        self.assertIn("LD_LIBRARY_PATH's /opt/old/site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12 "
                      "(nvidia-nvjitlink-cu12 12.1.105) comes before", f["message"])

    def test_wheel_dir_first_on_ld_library_path_is_no_shadow(self):
        t = self.shadow_tree()
        wheel = "/%s/nvidia/nvjitlink/lib" % SITE
        for ld in ("%s:%s:/usr/local/cuda-12.1/lib64" % (self.libdir(), wheel), self.libdir()):
            r = self.run_fw(t, cuda_version="13000", env={"LD_LIBRARY_PATH": ld})
            self.assertEqual(r.findings("frameworks.ld-shadow"), [], ld)

    # ---- the GPU architectures in the wheel's fatbinaries --------------------------------------------------

    def arch_tree(self, body):
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        lib = os.path.join(t.root, SITE, "torch", "lib")
        os.makedirs(lib, exist_ok=True)
        with open(os.path.join(lib, "libtorch_cuda.so"), "wb") as fh:
            fh.write(body)
        return t

    def test_arch_missing_is_the_root_cause(self):
        # torch 2.15.0+cu132's real list (sm_75 ... sm_121, no PTX), in two containers and a decoy section
        sb = fwelf.fatbin([[(fwelf.SASS, a, 40) for a in (75, 80, 86, 89, 90)],
                           [(fwelf.SASS, a, 13) for a in (100, 103, 120, 121)]])
        t = self.arch_tree(fwelf.elf([(".text", b"\x90" * 32), (".nv_fatbin_x", fwelf.fatbin([[(fwelf.SASS, 70, 8)]])),
                                      (".nv_fatbin", sb)]))
        r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "7.0"})
        (f,) = self.copies(r)
        code = f["gpu_code"]
        self.assertEqual((code["status"], code["sass"], code["ptx"], code["containers"], code["entries"]),
                         ("ok", [75, 80, 86, 89, 90, 100, 103, 120, 121], [], 2, 9), repr(code))
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.arch-missing"))
        (a,) = r.findings("frameworks.arch-missing")
        self.assertIn("PyTorch 2.9.0+cu128 (/opt/venv): built for sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_103, "
                      "sm_120, sm_121 (PTX: none), no code GPU 0 (", a["message"])
        self.assertIn("compute capability 7.0, sm_70) can run", a["message"])
        self.assertIn("includes sm_70", a["hint"])
        self.assertIn("PyTorch 2.9.0+cu128 (/opt/venv): will not use the GPU: its GPU code is for sm_75, sm_80",
                      r.json["verdict"]["text"])
        self.assertEqual(r.json["verdict"]["targets"]["torch-gpu"]["reasons"], ["frameworks.arch-missing"])
        # binary compatibility within a major: sm_80 runs on 8.6 and 8.7; sm_90 on 9.0
        for cc in ("8.7", "9.0", "12.1"):
            r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": cc})
            self.assertEqual([x for x in self.fw_ids(r) if x.startswith("frameworks.arch")], [], cc)
            self.assertIs(self.copies(r)[0]["gpu"], True, cc)

    def test_ptx_only_is_info_and_jit(self):
        t = self.arch_tree(fwelf.elf([(".nv_fatbin", fwelf.fatbin([[(fwelf.SASS, 80, 16), (fwelf.SASS, 90, 16),
                                                                     (fwelf.PTX, 90, 30)]]))]))
        r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "12.0"})
        (f,) = self.copies(r)
        self.assertEqual((f["gpu_code"]["sass"], f["gpu_code"]["ptx"], f["gpu"]), ([80, 90], [90], True))
        (p,) = r.findings("frameworks.arch-ptx-only")
        self.assertEqual(p["severity"], "info")
        self.assertIn("no sm_120 code for GPU 0", p["message"])
        self.assertIn("JIT-compiles its compute_90 PTX", p["message"])
        self.assertNotIn("frameworks.arch-missing", self.fw_ids(r))
        # PTX of a newer architecture is no use to an older GPU
        r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "7.5"})
        self.assertIn("frameworks.arch-missing", self.fw_ids(r))

    def test_damaged_fatbin_is_no_crash_and_no_finding(self):
        good = fwelf.fatbin([[(fwelf.SASS, 80, 16), (fwelf.SASS, 90, 16)]])
        cases = (
            (fwelf.elf([(".nv_fatbin", good[:-9])]), "damaged"),  # a container longer than its section
            (fwelf.elf([(".nv_fatbin", b"\x7fELF" + b"\0" * 60)]), "damaged"),  # no container magic
            (fwelf.elf([(".nv_fatbin", good[:24] + b"\xff" * 8 + good[32:])]), "damaged"),  # an entry's size
            (fwelf.elf([(".nv_fatbin", good)])[:-64], "damaged"),  # the section headers cut short
            (b"not an ELF file at all" * 4, "not-elf"),
            (fwelf.elf([(".text", b"x")]), "no-fatbin"),
        )
        for data, status in cases:
            t = self.arch_tree(data)
            r = self.run_fw(t, cuda_version="13000", env={"GC_FAKE_CUDA_CC": "7.0"})
            (f,) = self.copies(r)
            self.assertEqual(f["gpu_code"]["status"], status, repr(f["gpu_code"]))
            self.assertNotIn("frameworks.arch-missing", self.fw_ids(r))
            self.assertIs(f["gpu"], True)

    # ---- PaddlePaddle (the real wheels' paddle/version/__init__.py) -----------------------------------------

    def test_paddle_cpu_and_gpu_wheels(self):
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "paddlepaddle-gpu-2.6.2")
        self.venv(t, "paddlepaddle-3.3.1", site="usr/lib/python3/dist-packages", venv="usr")
        os.remove(os.path.join(t.root, "usr/pyvenv.cfg"))
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        got = {(f["distribution"], f["version"]): (f["build"], f["cuda_version"], f["detail"], f["gpu"])
               for f in self.copies(r)}
        self.assertEqual(got, {("paddlepaddle-gpu", "2.6.2"): ("cuda", "11.8", "cuDNN 8.6.0", True),
                               ("paddlepaddle", "3.3.1"): ("cpu", None, None, False)}, repr(r))
        self.assertIn("PaddlePaddle 2.6.2 (/opt/venv): will use the GPU", r.json["verdict"]["text"])
        self.assertIn("PaddlePaddle 3.3.1 (/usr): CPU only: a CPU-only build (paddlepaddle)", r.json["verdict"]["text"])
        self.assertIs(r.json["verdict"]["targets"]["paddle-gpu"]["ready"], True)
        self.run_fw(t, "--require", "paddle-gpu", driver=DRIVER_535, cuda_version="12020", expect_rc=0)
        # a damaged version file is said, never a crash
        with open(os.path.join(t.root, SITE, "paddle/version/__init__.py"), "w") as fh:
            fh.write("full_version = '2.6.2'\ncuda_version = compute()\n")
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (u,) = r.findings("frameworks.unreadable")
        self.assertIn("PaddlePaddle 2.6.2 (/opt/venv): cannot tell its build", u["message"])

    # ---- conda's environment lists -------------------------------------------------------------------------

    def conda_env(self, t, prefix, wheel):
        """A conda environment at PREFIX (conda-meta/, a python3.11 site) with the fixture WHEEL in it."""
        site = prefix.strip("/") + "/lib/python3.11/site-packages"
        self.venv(t, wheel, site=site, venv=prefix.strip("/"))
        os.remove(os.path.join(t.root, prefix.strip("/"), "pyvenv.cfg"))
        os.makedirs(os.path.join(t.root, prefix.strip("/"), "conda-meta"), exist_ok=True)

    def test_conda_environment_lists(self):
        t = self.tree()
        self.conda_env(t, "/home/u/miniforge3/envs/ml", "tensorflow-cpu-2.21.0")   # environments.txt
        self.conda_env(t, "/data/envs/ort", "onnxruntime-1.32.0")                 # ~/.condarc envs_dirs
        self.conda_env(t, "/home/u/my-envs/jx", "jaxlib-0.9.2")                   # envs_dirs, "~/"
        self.conda_env(t, "/opt/conda", "torch-2.9.0")                            # CONDA_EXE's base
        self.conda_env(t, "/opt/conda/envs/old", "onnxruntime-1.32.0")            # CONDA_EXE's envs
        os.makedirs(os.path.join(t.root, "data/envs/not-an-env/lib"))
        os.makedirs(os.path.join(t.root, "home/u/.conda"))
        with open(os.path.join(t.root, "home/u/.conda/environments.txt"), "w") as fh:
            fh.write("/home/u/miniforge3/envs/ml\n\n  relative/ignored\n/gone/env\n")
        with open(os.path.join(t.root, "home/u/.condarc"), "w") as fh:
            fh.write("channels:\n  - conda-forge\nenvs_dirs:\n  - /data/envs  # shared\n  - '~/my-envs'\n"
                     "pkgs_dirs:\n  - /data/pkgs\n")
        r = self.run_fw(t, env={"HOME": "/home/u", "VIRTUAL_ENV": None, "CONDA_EXE": "/opt/conda/bin/conda"})
        envs = {e["prefix"]: (e["kind"], e["origin"], [f["name"] for f in e["frameworks"]])
                for e in r.json["frameworks"]["environments"]}
        self.assertEqual(envs.get("/home/u/miniforge3/envs/ml"), ("conda", "conda (~/.conda/environments.txt)",
                                                                  ["tensorflow"]), envs)
        self.assertEqual(envs.get("/data/envs/ort"), ("conda", "conda (envs_dirs of ~/.condarc)", ["onnxruntime"]))
        self.assertEqual(envs.get("/home/u/my-envs/jx"), ("conda", "conda (envs_dirs of ~/.condarc)", ["jax"]))
        self.assertEqual(envs.get("/opt/conda"), ("conda", "conda base (CONDA_EXE)", ["torch"]))
        self.assertEqual(envs.get("/opt/conda/envs/old"), ("conda", "conda (CONDA_EXE's envs)", ["onnxruntime"]))
        for gone in ("/gone/env", "/data/envs/not-an-env", "/data/pkgs"):
            self.assertNotIn(gone, envs)

    def test_conda_environments_past_the_cap_are_counted_and_said(self):
        """Issue 36: a shared server's environments.txt lists 50 environments; those not examined are counted in
        environments_not_examined and said in a note, never dropped silently."""
        t = self.tree()
        os.makedirs(os.path.join(t.root, "home/u/.conda"))
        prefixes = ["/srv/conda/envs/e%02d" % i for i in range(50)]
        for p in prefixes:
            os.makedirs(os.path.join(t.root, p.strip("/"), "lib/python3.11/site-packages"))
            os.makedirs(os.path.join(t.root, p.strip("/"), "conda-meta"))
        with open(os.path.join(t.root, "home/u/.conda/environments.txt"), "w") as fh:
            fh.write("".join(p + "\n" for p in prefixes))
        r = self.run_fw(t, env={"HOME": "/home/u", "VIRTUAL_ENV": None, "CONDA_EXE": None})
        fw = r.json["frameworks"]
        self.assertEqual(len(fw["environments"]), 32)  # FW_MAX_ENVS
        listed = sum(1 for e in fw["environments"] if e["prefix"].startswith("/srv/conda/envs/"))
        # every listed one not examined is counted (the system Python's, found after the list, may be too)
        self.assertGreaterEqual(fw["environments_not_examined"], 50 - listed)
        self.assertLessEqual(fw["environments_not_examined"], 50 - listed + 4)
        notes = [n for n in fw.get("notes", []) if "not examined" in n]
        self.assertEqual(len(notes), 1, fw.get("notes"))
        self.assertIn("%d more Python environments" % fw["environments_not_examined"], notes[0])
        # 10 environments: all examined, the count says 0 and no note
        with open(os.path.join(t.root, "home/u/.conda/environments.txt"), "w") as fh:
            fh.write("".join(p + "\n" for p in prefixes[:10]))
        r = self.run_fw(t, env={"HOME": "/home/u", "VIRTUAL_ENV": None, "CONDA_EXE": None})
        self.assertEqual(r.json["frameworks"]["environments_not_examined"], 0)
        self.assertEqual(len([e for e in r.json["frameworks"]["environments"]
                              if e["prefix"].startswith("/srv/conda/envs/")]), 10)
        self.assertFalse([n for n in r.json["frameworks"].get("notes", []) if "not examined" in n])

    def test_distributions_past_the_cap_are_said(self):
        """Issue 36: a site with more dist-info folders than are looked at (1024) says how many were not."""
        t = self.tree()
        self.venv(t, "onnxruntime-1.32.0")
        for i in range(1030):
            os.makedirs(os.path.join(t.root, SITE, "zz%04d-1.0.dist-info" % i))
        r = self.run_fw(t)
        n = len([d for d in os.listdir(os.path.join(t.root, SITE)) if d.endswith(".dist-info")])
        notes = [x for x in r.json["frameworks"].get("notes", []) if "installed distribution" in x]
        self.assertEqual(notes, ["%d installed distributions (dist-info folders past the first 1024 of a site) were "
                                 "not looked at: a framework among them may be missed" % (n - 1024)])

    # ---- CPU builds, other frameworks --------------------------------------------------------------------

    def test_cpu_builds_are_info_unless_required(self):
        t = self.tree()
        self.venv(t, "tensorflow-cpu-2.21.0", "onnxruntime-1.32.0")
        r = self.run_fw(t, expect_rc=0)
        builds = {f["name"]: (f["distribution"], f["build"]) for f in self.copies(r)}
        self.assertEqual(builds, {"tensorflow": ("tensorflow-cpu", "cpu"), "onnxruntime": ("onnxruntime", "cpu")})
        self.assertEqual(self.fw_ids(r), ["frameworks.cpu-build", "frameworks.cpu-build"])
        self.assertTrue(all(f["severity"] == "info" for f in r.json["findings"] if f["id"].startswith("frameworks.")))
        r = self.run_fw(t, "--require", "tensorflow-gpu", expect_rc=1)
        (u,) = r.findings("require.unmet")
        self.assertIn("a CPU-only build (tensorflow-cpu)", u["message"])

    def test_lib64_link_to_lib_is_one_site(self):
        """python3 -m venv makes lib64 a link to lib: one site directory, each copy found once."""
        t = self.tree()
        self.venv(t, "onnxruntime-1.32.0")
        os.symlink("lib", os.path.join(t.root, "opt/venv/lib64"))
        r = self.run_fw(t, expect_rc=0)
        self.assertEqual([f["name"] for f in self.copies(r)], ["onnxruntime"], repr(r))

    def test_gpu_wheels_jax_cupy_tf_ort_on_driver_535(self):
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "jaxlib-0.9.2", "jax-cuda12-plugin-0.9.2", "cupy-cuda12x-14.2.0", "tensorflow-2.21.0",
                  "onnxruntime-gpu-1.31.1")
        self.cudnn_wheel(t)
        # the CUDA 12 wheels' libraries TensorFlow loads besides cuDNN (frameworks.tf-cuda-libs-missing otherwise)
        for wheel, name in (("cuda_runtime", "libcudart.so.12"), ("cublas", "libcublas.so.12"),
                            ("cublas", "libcublasLt.so.12"), ("cufft", "libcufft.so.11"),
                            ("cusolver", "libcusolver.so.11"), ("cusparse", "libcusparse.so.12")):
            self.cudnn_wheel(t, where=SITE + "/nvidia/%s/lib" % wheel, name=name)
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        got = {f["name"]: (f["build"], f["cuda_version"], f["gpu"]) for f in self.copies(r)}
        self.assertEqual(got, {"jax": ("cuda", "12", True), "cupy": ("cuda", "12", True),
                               "tensorflow": ("cuda", "12.5.1", True), "onnxruntime": ("cuda", "13.0", False)}, repr(r))
        tf = [f for f in self.copies(r) if f["name"] == "tensorflow"][0]
        self.assertEqual(tf["detail"], "cuDNN 9")
        (too_new,) = r.findings("frameworks.cuda-too-new")
        self.assertIn("ONNX Runtime 1.31.1 (/opt/venv): will not use the GPU: built for CUDA 13.0", too_new["message"])

    def cudnn_wheel(self, t, where=SITE + "/nvidia/cudnn/lib", name="libcudnn.so.9"):
        """nvidia-cudnn-cu12's library file: an x86-64 ELF header (the loader's search skips other files)."""
        os.makedirs(os.path.join(t.root, where), exist_ok=True)
        with open(os.path.join(t.root, where, name), "wb") as fh:
            fh.write(fwelf.elf([(".text", b"\x90")]))

    # ---- a pinned library's first copy older (major.minor) than the framework needs (issue 36) --------------

    def test_jax_plugin_with_an_older_cudnn_first(self):
        """jax-cuda12-plugin 0.9.2's real METADATA pins nvidia-cudnn-cu12<10.0,>=9.8. An NVIDIA cuDNN 9.1.0 tarball
        (libcudnn.so.9 -> libcudnn.so.9.1.0) first on LD_LIBRARY_PATH is what JAX loads, ahead of the wheel
        (RUNPATH): JAX fails at start. A 9.10.0 there, or none (the wheel's own), says nothing."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "jaxlib-0.9.2", "jax-cuda12-plugin-0.9.2")
        self.cudnn_wheel(t)
        for v in ("9.1.0", "9.10.0"):
            self.cudnn_wheel(t, where="opt/cudnn-%s/lib" % v, name="libcudnn.so.%s" % v)
            os.symlink("libcudnn.so.%s" % v, os.path.join(t.root, "opt/cudnn-%s/lib" % v, "libcudnn.so.9"))
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020",
                        env={"LD_LIBRARY_PATH": self.libdir(DRIVER_535) + ":/opt/cudnn-9.1.0/lib"})
        (f,) = r.findings("frameworks.lib-older-minor")
        self.assertEqual((f["severity"], f["subject"]), ("warning", "/opt/cudnn-9.1.0/lib/libcudnn.so.9"))
        self.assertIn("the loader takes libcudnn.so.9 from /opt/cudnn-9.1.0/lib/libcudnn.so.9 (LD_LIBRARY_PATH entry "
                      "/opt/cudnn-9.1.0/lib), cuDNN 9.1.0, older than the 9.8 it needs (nvidia-cudnn-cu12<10.0,>=9.8)",
                      f["message"])
        self.assertIn("Found cuDNN version 9.1.0, but JAX was built against 9.8", f["message"])
        self.assertIn("Take /opt/cudnn-9.1.0/lib out of LD_LIBRARY_PATH", f["hint"])
        jax = [c for c in self.copies(r) if c["name"] == "jax"][0]
        self.assertEqual((jax["gpu"], jax["root"]), (False, "frameworks.lib-older-minor"))
        for ld in ("/opt/cudnn-9.10.0/lib", "/nowhere"):
            r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020",
                            env={"LD_LIBRARY_PATH": self.libdir(DRIVER_535) + ":" + ld})
            self.assertEqual(r.findings("frameworks.lib-older-minor"), [], ld)

    def test_jax_plugin_local_cuda_with_an_older_system_cudnn(self):
        """jax[cuda12-local]: the plugin without NVIDIA wheels uses the system's cuDNN; Debian-style
        /usr/lib/x86_64-linux-gnu/libcudnn.so.9 -> libcudnn.so.9.1.0 (a default directory) is older than 9.8."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "jaxlib-0.9.2", "jax-cuda12-plugin-0.9.2", pins=False)
        sysdir = "usr/lib/x86_64-linux-gnu"
        self.cudnn_wheel(t, where=sysdir, name="libcudnn.so.9.1.0")
        os.symlink("libcudnn.so.9.1.0", os.path.join(t.root, sysdir, "libcudnn.so.9"))
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (f,) = r.findings("frameworks.lib-older-minor")
        self.assertIn("(default), cuDNN 9.1.0, older than the 9.8", f["message"])
        self.assertIn("pip install 'nvidia-cudnn-cu12<10.0,>=9.8'", f["hint"])
        # a torch 2.9.0 (its real METADATA pins nvidia-cudnn-cu12==9.10.2.21) beside it takes its own wheel: nothing
        self.venv(t, "torch-2.9.0")
        self.cudnn_wheel(t)
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12080")
        self.assertEqual([f["message"] for f in r.findings("frameworks.lib-older-minor") if "PyTorch" in f["message"]],
                         [])

    def test_tensorflow_cudnn_missing(self):
        """tensorflow 2.21.0 without [and-cuda]: no libcudnn.so.9 anywhere, "Cannot dlopen some GPU libraries"."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "tensorflow-2.21.0")
        self.cudnn_wheel(t, name="libcudnn.so.8")  # another major is no use
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.cudnn-missing"))
        (c,) = r.findings("frameworks.cudnn-missing")
        self.assertIn("TensorFlow 2.21.0 (/opt/venv): built with cuDNN 9, and no libcudnn.so.9 is in "
                      "/%s/nvidia/cudnn/lib or on the loader's path" % SITE, c["message"])
        self.assertIn("tensorflow[and-cuda]", c["hint"])
        self.assertIn("TensorFlow 2.21.0 (/opt/venv): will not use the GPU: built with cuDNN 9, and no libcudnn.so.9 "
                      "can be found", r.json["verdict"]["text"])
        # on the loader's path (LD_LIBRARY_PATH, inside the tree) it is found
        self.cudnn_wheel(t, where="opt/cudnn/lib")
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020",
                        env={"LD_LIBRARY_PATH": self.libdir(DRIVER_535) + ":/opt/cudnn/lib"})
        self.assertNotIn("frameworks.cudnn-missing", self.fw_ids(r))
        # ... but without [and-cuda] its other CUDA 12 libraries must be there too (frameworks.tf-cuda-libs-missing)
        self.assertEqual(self.copies(r)[0]["root"], "frameworks.tf-cuda-libs-missing")
        for name in ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11",
                     "libcusparse.so.12"):
            self.cudnn_wheel(t, where="opt/cudnn/lib", name=name)
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020",
                        env={"LD_LIBRARY_PATH": self.libdir(DRIVER_535) + ":/opt/cudnn/lib"})
        self.assertIs(self.copies(r)[0]["gpu"], True)

    def test_tensorflow_cuda_libraries_missing(self):
        """tensorflow 2.21.0 (build_info: CUDA 12.5.1) without [and-cuda], cuDNN found: its other CUDA 12 libraries
        (cudart, cuBLAS, cuBLASLt, cuFFT, cuSOLVER, cuSPARSE) are nowhere: "Cannot dlopen some GPU libraries"
        (issue 36). A system CUDA 12.5 on LD_LIBRARY_PATH with all of them: it will use the GPU."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "tensorflow-2.21.0", pins=False)
        self.cudnn_wheel(t)
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020")
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, "frameworks.tf-cuda-libs-missing"))
        (c,) = r.findings("frameworks.tf-cuda-libs-missing")
        self.assertIn("TensorFlow 2.21.0 (/opt/venv): built with CUDA 12.5.1, and libcudart.so.12, libcublas.so.12, "
                      "libcublasLt.so.12, libcufft.so.11, libcusolver.so.11, libcusparse.so.12 are in none of its NVIDIA "
                      "wheels", c["message"])
        self.assertNotIn("frameworks.cudnn-missing", self.fw_ids(r))
        libs = ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11",
                "libcusparse.so.12")
        for name in libs[:-1]:
            self.cudnn_wheel(t, where="usr/local/cuda-12.5/lib64", name=name)
        ld = self.libdir(DRIVER_535) + ":/usr/local/cuda-12.5/lib64"
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020", env={"LD_LIBRARY_PATH": ld})
        (c,) = r.findings("frameworks.tf-cuda-libs-missing")
        self.assertIn("and libcusparse.so.12 is in none", c["message"])
        self.cudnn_wheel(t, where="usr/local/cuda-12.5/lib64", name=libs[-1])
        r = self.run_fw(t, driver=DRIVER_535, cuda_version="12020", env={"LD_LIBRARY_PATH": ld})
        self.assertNotIn("frameworks.tf-cuda-libs-missing", self.fw_ids(r))
        self.assertIs(self.copies(r)[0]["gpu"], True, repr(r))

    def test_cuda_visible_devices_hiding_every_gpu(self):
        """cuInit fails (CUDA_VISIBLE_DEVICES names no device): the framework's own cuInit fails the same way; its
        line and target name the cuda probe's root cause."""
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        r = self.run_fw(t, cuda_version="13000", env={"CUDA_VISIBLE_DEVICES": "7"})
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, None))
        line = [x for x in r.json["verdict"]["text"].splitlines() if x.startswith("PyTorch 2.9.0+cu128 (/opt/venv)")][0]
        self.assertIn(": will not use the GPU: CUDA 12.8 build, and the CUDA driver does not initialise here", line)
        self.assertTrue(line.endswith("(cuda.visible-devices-none)"), line)
        self.assertEqual(r.json["verdict"]["targets"]["torch-gpu"]["reasons"], ["cuda.visible-devices-none"])

    def test_tensorflow_on_a_cpu_without_avx(self):
        """A CPU without AVX (a real CPUID dump, tests/cpu/dumps): `import tensorflow` dies with SIGILL."""
        t = self.tree(kver=DRIVER_535)
        self.venv(t, "tensorflow-2.21.0", "onnxruntime-1.32.0")
        self.cudnn_wheel(t)
        dumps = os.path.join(gctest.SOURCE_ROOT, "tests", "cpu", "dumps")
        r = self.run_fw(t, "--cpuid-dump", os.path.join(dumps, "no-avx.dump"), driver=DRIVER_535, cuda_version="12020")
        self.assertIs(r.json["cpu"]["flags"]["avx"], False)
        tf = [f for f in self.copies(r) if f["name"] == "tensorflow"][0]
        self.assertEqual((tf["gpu"], tf["root"]), (False, "frameworks.tf-no-avx"))
        (w,) = r.findings("frameworks.tf-no-avx")
        self.assertIn("TensorFlow 2.21.0 (/opt/venv): this CPU has no usable AVX", w["message"])
        self.assertIn("Illegal instruction", r.json["verdict"]["text"])
        # only TensorFlow's wheels are judged so; with AVX (this tree's other dump) nothing is said
        r = self.run_fw(t, "--cpuid-dump", os.path.join(dumps, "avx512.dump"), driver=DRIVER_535, cuda_version="12020")
        self.assertNotIn("frameworks.tf-no-avx", self.fw_ids(r))

    # ---- other vendors, no GPU, nothing, damage ------------------------------------------------------------

    def test_rocm_torch_on_nvidia(self):
        t = self.tree()
        self.venv(t, "torch-2.9.0")
        vp = os.path.join(t.root, SITE, "torch", "version.py")
        with open(vp) as fh:
            text = fh.read()
        text = text.replace("'2.9.0+cu128'", "'2.9.0+rocm6.4'").replace("cuda: Optional[str] = '12.8'",
                                                                                   "cuda: Optional[str] = None")
        with open(vp, "w") as fh:
            fh.write(text.replace("hip: Optional[str] = None", "hip: Optional[str] = '6.4.43482'"))
        r = self.run_fw(t)
        (f,) = self.copies(r)
        self.assertEqual((f["build"], f["rocm_version"], f["gpu"]), ("rocm", "6.4.43482", False))
        self.assertEqual(self.fw_ids(r), ["frameworks.wrong-vendor"])
        self.assertIn("this machine's GPUs are NVIDIA", r.json["verdict"]["text"])

    def test_no_gpu_names_pci_no_gpu(self):
        t = self.make_tree()
        self.venv(t, "torch-2.15.0")
        r = self.run_fw(t, live=False, expect_rc=0)
        (f,) = self.copies(r)
        self.assertEqual((f["gpu"], f["root"]), (False, "pci.no-gpu"))
        self.assertEqual(self.fw_ids(r), [])
        self.assertIn("PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: there is no GPU on this machine "
                      "(pci.no-gpu)", r.json["verdict"]["text"])

    def test_no_framework_is_no_finding(self):
        t = self.make_tree()
        self.venv(t)
        r = self.run_fw(t, live=False, expect_rc=0)
        self.assertEqual(self.copies(r), [])
        self.assertEqual(self.fw_ids(r), [])
        self.assertIn("no PyTorch, TensorFlow, JAX, CuPy, ONNX Runtime or PaddlePaddle", r.json["frameworks"]["notes"][0])
        self.assertNotIn("PyTorch", r.json["verdict"]["text"])
        self.assertNotIn("torch-gpu", r.json["verdict"]["targets"])

    def test_damaged_files_are_findings(self):
        t = self.make_tree()
        self.venv(t, "torch-2.15.0", "tensorflow-2.21.0")
        with open(os.path.join(t.root, SITE, "torch", "version.py"), "wb") as fh:
            fh.write(b"\x00\xff garbage\n__version__ = ")
        os.truncate(os.path.join(t.root, SITE, "tensorflow/python/platform/build_info.py"), 0)
        big = os.path.join(t.root, SITE, "onnxruntime", "capi", "build_and_package_info.py")
        os.makedirs(os.path.dirname(big))
        with open(big, "w") as fh:
            fh.write("#" * (300 * 1024))
        r = self.run_fw(t, live=False, expect_rc=0)
        self.assertEqual(self.fw_ids(r), ["frameworks.unreadable"] * 3, repr(r))
        self.assertTrue(all(f["build"] == "unknown" and f["gpu"] is None for f in self.copies(r)))
        self.assertIn("larger than a build file can be", r.json["frameworks"]["environments"][0]["frameworks"][2]["damaged"])

    def test_python_option_and_system_site(self):
        t = self.make_tree()
        self.venv(t, "torch-2.9.0", site="srv/py/lib/python3.12/site-packages", venv="srv/py")
        self.venv(t, "tensorflow-cpu-2.21.0", site="usr/lib/python3/dist-packages", venv="usr/local/unused")
        r = self.run_fw(t, "--python=/srv/py/bin/python3", live=False, expect_rc=0, env={"VIRTUAL_ENV": None})
        envs = [(e["prefix"], e["kind"], e["origin"], e["python"]) for e in r.json["frameworks"]["environments"]]
        self.assertEqual(envs, [("/srv/py", "venv", "--python", "/srv/py/bin/python3"),
                                ("/usr", "system", "system", None)], repr(r))
        r = gctest.run("frameworks", "--python=relative/python3")
        self.assertEqual(r.rc, 2)
        self.assertIn("--python: 'relative/python3' is not an absolute path", r.stderr)


if __name__ == "__main__":
    gctest.main()
