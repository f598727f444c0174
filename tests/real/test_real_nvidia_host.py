"""gpucheckup changes nothing on the host (issue 24 item 5): as root, with Debian's real NVIDIA 535 libcuda
and NVML on LD_LIBRARY_PATH and no /dev/nvidiactl, no device node appears in /dev (the libraries would
make /dev/nvidiactl; the vendor children may not). Runs inside tests/real/private-dev: a private mount
namespace whose /dev is a tmpfs copy, so even a failure changes nothing here."""
import json
import os
import subprocess

import gctest
import nvidia_real


class RealNvidiaHostTests(nvidia_real.RootCase):
    # Only root can make a mount namespace, and only root's children could create nodes: without root this
    # test would prove nothing, so it fails rather than skip (CI runs as root). With the node already there (a
    # machine with the NVIDIA driver loaded) nothing could appear.
    TMP_PREFIX = "gc-real-host-"
    ROOT_WHY = ("e2e-real-nvidia-host must run as root (it checks that root's runs create no device "
                "node, inside tests/real/private-dev); run it with sudo")
    NO_NODE = True

    def run_private(self, name, *args):
        """gpucheckup ARGS as root in a private /dev with the real 535 libraries first on the library
        path; returns (completed process, nodes that appeared in /dev)."""
        new = os.path.join(self.tmp, name + ".new")
        env = dict(os.environ, LD_LIBRARY_PATH=self.nv.amd64_libs)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        p = subprocess.run([nvidia_real.PRIVATE_DEV, new, gctest.GPUCHECKUP, *gctest._timeout_args(args)],
                           capture_output=True, text=True, env=env, timeout=300)
        with open(new, encoding="utf-8") as f:
            appeared = [line for line in f.read().splitlines() if line]
        return p, appeared

    def check_report(self, p, appeared, what):
        self.assertEqual(appeared, [], "%s created nodes in /dev: %s\nstderr: %s" % (what, appeared, p.stderr[-2000:]))
        doc = json.loads(p.stdout)
        gctest.validate(doc)
        gctest.assert_no_duplicate_keys(p.stdout)
        cuda = doc["cuda"]
        self.assertEqual(cuda["status"], "ok", p.stdout[-3000:])
        drv = cuda["driver"]
        # the driver is there (the real one, loaded from the path given) and says there is no GPU
        self.assertEqual(drv["library"]["version"], self.nv.version, drv)
        self.assertEqual(drv["library"]["found_via"], "LD_LIBRARY_PATH", drv)
        self.assertEqual(drv["cuinit"]["code"], 100, drv)
        ids = {f["id"] for f in doc["findings"]}
        self.assertIn("cuda.no-gpu", ids, sorted(ids))
        self.assertNotIn("cuda.no-driver", ids)
        return doc

    def test_full_check_creates_nothing(self):
        p, appeared = self.run_private("full", "--json")
        self.assertIn(p.returncode, (0, 1), p.stderr[-2000:])
        self.check_report(p, appeared, "gpucheckup --json")

    def test_cuda_creates_nothing(self):
        p, appeared = self.run_private("cuda", "cuda", "--json")
        self.assertIn(p.returncode, (0, 1), p.stderr[-2000:])
        self.check_report(p, appeared, "gpucheckup cuda --json")

    def test_snapshot_creates_nothing(self):
        out = os.path.join(self.tmp, "snap.tar.gz")
        p, appeared = self.run_private("snapshot", "snapshot", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(appeared, [], "gpucheckup snapshot created nodes in /dev: %s" % appeared)
        self.assertTrue(os.path.getsize(out) > 0)


if __name__ == "__main__":
    gctest.main()
