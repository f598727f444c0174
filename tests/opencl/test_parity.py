"""Parity with clinfo: every platform and device property value `clinfo --json` reports must appear in
`gpucheckup opencl --json` with the same value (clinfo's key naming mapped to ours)."""
import json
import os
import shutil
import subprocess
import tempfile

import gctest

# Properties clinfo reports that gpucheckup deliberately does not, and why. Nothing else may be missing.
NOT_REPORTED = {
    # A property of a compiled kernel, not of the device: clinfo builds a program on every device to get
    # it (about 45 ms per PoCL device warm, 0.7 s cold, and a compiler that crashes takes clinfo down).
    # Listing devices must not run compilers; the smoke probe builds kernels.
    "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE",
}

# Bit-field names we list although clinfo hides them, and why: clinfo shows
# CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT for single precision only (the spec defines it there); we list every
# bit the driver sets, so nothing the driver said is lost.
EXTRA_BITS = {
    "CL_DEVICE_DOUBLE_FP_CONFIG": {"CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT": 0x80},
    "CL_DEVICE_HALF_FP_CONFIG": {"CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT": 0x80},
}


class Pairs(list):
    """A JSON object as clinfo wrote it: (key, value) pairs in order, duplicate keys kept."""

    def keys(self):
        return [k for k, _ in self]

    def get(self, key):
        vals = [v for k, v in self if k == key]
        return vals[-1] if vals else None


def load_pairs(text):
    return json.loads(text, object_pairs_hook=Pairs)


def raw_of(p):
    """clinfo spells the raw value "raw" and, for numeric versions, " raw "."""
    return p.get("raw") if "raw" in p.keys() else p.get(" raw ")


def compare(name, theirs, ours):
    """None when OURS renders THEIRS; else a message."""
    if isinstance(theirs, Pairs):
        keys = theirs.keys()
        has_raw = "raw" in keys or " raw " in keys
        if has_raw and "version" in keys and len(keys) == 2:  # a packed version
            want = theirs.get("version")
            return None if ours == want else "version %r, ours %r" % (want, ours)
        if has_raw and len(keys) == 2:  # a bit field: {"raw": n, "<what>": [names]}
            names = [v for k, v in theirs if k not in ("raw", " raw ")][0]
            if not isinstance(ours, list):
                return "bit field %r, ours %r" % (names, ours)
            extra = set(ours) - set(names)
            allowed = EXTRA_BITS.get(name, {})
            for bit in extra:
                if bit not in allowed or not raw_of(theirs) & allowed[bit]:
                    return "bit field %r, ours %r (extra %s)" % (names, ours, bit)
            if set(names) - set(ours):
                return "bit field %r, ours %r" % (names, ours)
            return None
        # a name-version list: {"name": {"raw": n, "version": "x.y.z"}, ...}, names may repeat
        want = [{"name": k, "version": v.get("version")} for k, v in theirs]
        return None if ours == want else "name-version list %r, ours %r" % (want, ours)
    if isinstance(theirs, list):
        return None if ours == theirs else "list %r, ours %r" % (theirs, ours)
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return None if ours is theirs else "%r, ours %r" % (theirs, ours)
    return None if ours == theirs else "%r, ours %r" % (theirs, ours)


class ParityTests(gctest.TestCase):
    def setUp(self):
        self.cache = tempfile.mkdtemp(prefix="gc-ocl-parity-")
        self.addCleanup(shutil.rmtree, self.cache, True)

    def both(self, pocl_devices):
        env = dict(os.environ)
        for k in ("OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH", "OCL_ICD_FILENAMES", "GPUCHECKUP_LIBOPENCL"):
            env.pop(k, None)
        env["POCL_CACHE_DIR"] = self.cache
        env["POCL_DEVICES"] = pocl_devices
        # PoCL sizes global memory from what the system has free at that moment, so two processes can
        # see different CL_DEVICE_GLOBAL_MEM_SIZE / MAX_MEM_ALLOC_SIZE; a limit makes both see the same.
        env["POCL_MEMORY_LIMIT"] = "1"
        clinfo = subprocess.run(["clinfo", "--json"], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(clinfo.returncode, 0, clinfo.stderr)
        ours = self.run_json("opencl", env={k: env.get(k) for k in ("POCL_CACHE_DIR", "POCL_DEVICES", "POCL_MEMORY_LIMIT",
                                                                     "OCL_ICD_VENDORS", "GPUCHECKUP_LIBOPENCL")})
        return load_pairs(clinfo.stdout), ours.json["opencl"]

    def check_props(self, where, theirs, ours, skip=()):
        compared = 0
        problems = []
        for key, val in theirs:
            if key in skip:
                continue
            if key not in ours:
                problems.append("%s: %s missing" % (where, key))
                continue
            msg = compare(key, val, ours[key])
            if msg:
                problems.append("%s: %s: %s" % (where, key, msg))
            compared += 1
        self.assertEqual(problems, [], "\n".join(problems))
        return compared

    def test_every_clinfo_value_is_ours(self):
        theirs, ours = self.both("pthread pthread")
        tplats = theirs.get("platforms")
        self.assertEqual(len(tplats), len(ours["platforms"]))
        self.assertGreater(len(tplats), 0)
        tdevs = theirs.get("devices")
        total = 0
        for i, (tp, op) in enumerate(zip(tplats, ours["platforms"])):
            total += self.check_props("platform %d" % i, tp, op["properties"])
            online = tdevs[i].get("online") or []
            self.assertEqual(len(online), len(op["devices"]), "platform %d device count" % i)
            for j, (td, od) in enumerate(zip(online, op["devices"])):
                total += self.check_props("device %d:%d" % (i, j), td, od["properties"], skip=NOT_REPORTED)
                # the exclusions are real: we really do not report them
                for k in NOT_REPORTED:
                    self.assertNotIn(k, od["properties"])
        self.assertGreater(total, 200)  # 2 devices x ~100 properties, plus the platform's

    def test_zero_devices_and_no_platform_agree(self):
        theirs, ours = self.both("foo")
        self.assertEqual(len(theirs.get("platforms")), len(ours["platforms"]))
        self.assertEqual(theirs.get("devices")[0].get("online") or [], [])
        self.assertEqual(ours["platforms"][0]["devices"], [])


if __name__ == "__main__":
    gctest.main()
