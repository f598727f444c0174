"""nvidia_real: where tests/real/fetch-nvidia put Debian's NVIDIA 535 userspace, for the tests on the real libraries."""
import os
import shutil
import subprocess
import tempfile

import gctest

FETCH = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "fetch-nvidia")
PRIVATE_DEV = os.path.join(gctest.SOURCE_ROOT, "tests", "real", "private-dev")


class Nvidia535:
    """The unpacked packages: .amd64_libs (libcuda, NVML), .arm64_libs (libcuda, NVML, libnvidia-opencl for
    AArch64), .arm64_multiarch (libOpenCL.so.1, libcudart.so.11.0 for AArch64), .arm64_icd (nvidia.icd),
    .version (the driver version, "535.309.01"); amd64 Vulkan: .vulkan_manifest (nvidia_icd.json as shipped,
    naming libGLX_nvidia.so.0), .glx (libGLX_nvidia.so.0), .gl_libs (what it needs and dlopens, in
    .amd64_multiarch); amd64 OpenCL: .amd64_icd (nvidia.icd, naming libnvidia-opencl.so.1, in .amd64_libs)."""

    def __init__(self, base):
        self.base = base
        self.amd64_libs = os.path.join(base, "amd64/usr/lib/x86_64-linux-gnu/nvidia/current")
        self.amd64_multiarch = os.path.join(base, "amd64/usr/lib/x86_64-linux-gnu")
        self.vulkan_manifest = os.path.join(base, "amd64/usr/share/vulkan/icd.d/nvidia_icd.json")
        self.glx = os.path.join(self.amd64_libs, "libGLX_nvidia.so.0")
        self.amd64_icd = os.path.join(base, "amd64/etc/OpenCL/vendors/nvidia.icd")
        self.arm64_libs = os.path.join(base, "arm64/usr/lib/aarch64-linux-gnu/nvidia/current")
        self.arm64_libcuda = os.path.join(self.arm64_libs, "libcuda.so.1")
        self.arm64_nvml = os.path.join(self.arm64_libs, "libnvidia-ml.so.1")
        # the OpenCL driver (named by the package's own nvidia.icd), the ICD loader and a CUDA 11.8 runtime
        self.arm64_icd = os.path.join(base, "arm64/etc/OpenCL/vendors/nvidia.icd")
        self.arm64_multiarch = os.path.join(base, "arm64/usr/lib/aarch64-linux-gnu")
        self.arm64_libopencl = os.path.join(self.arm64_multiarch, "libOpenCL.so.1")
        with open(os.path.join(base, "VERSION"), encoding="utf-8") as f:
            # "535.309.01-0+deb12u1": the upstream part is the driver's version
            self.version = f.read().strip().split("-", 1)[0]
        self.gl_libs = [os.path.join(self.amd64_multiarch, "libnvidia-%s.so.%s" % (n, self.version))
                        for n in ("glcore", "tls", "glsi", "glvkspirv")]


def fetch(test):
    """Run tests/real/fetch-nvidia (downloads once into its cache; needs the network the first time) and
    return an Nvidia535; fails TEST with the script's words when it cannot."""
    try:
        p = subprocess.run([FETCH], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as e:
        test.fail("tests/real/fetch-nvidia: %s" % e)
    if p.returncode != 0:
        test.fail("tests/real/fetch-nvidia failed (rc %d): %s" % (p.returncode, p.stderr[-3000:]))
    return Nvidia535(p.stdout.strip().splitlines()[-1])


class RootCase(gctest.TestCase):
    """A test that runs the real NVIDIA userspace as root (inside tests/real/private-dev): a temporary directory
    per class (.tmp, named TMP_PREFIX...), and a setUp that fails, never skips, without root (ROOT_WHY says why
    root is needed), and, with NO_NODE, where /dev/nvidiactl already exists (nothing could appear there); then
    .nv, the fetched Nvidia535."""
    TMP_PREFIX = "gc-real-"
    ROOT_WHY = "this test runs the real NVIDIA userspace as root inside tests/real/private-dev: run it as root"
    NO_NODE = False

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix=cls.TMP_PREFIX)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if os.geteuid() != 0:
            self.fail(self.ROOT_WHY)
        if self.NO_NODE and os.path.exists("/dev/nvidiactl"):
            self.fail("/dev/nvidiactl exists on this machine: the test needs a machine without it")
        self.nv = fetch(self)
