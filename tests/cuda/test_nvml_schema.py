"""data.nvml in every state the NVML unit test produces follows the schema's $defs/cuda_nvml."""
import glob
import json
import os
import subprocess
import tempfile

import jsonschema

import gctest


class NvmlSchemaTests(gctest.TestCase):
    def test_every_state_follows_the_schema(self):
        unit = os.environ["GC_NVML_UNIT"]
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, GC_NVML_DUMP=d)
            proc = subprocess.run([unit], env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            files = sorted(glob.glob(os.path.join(d, "nvml-*.json")))
            # one per run_nvml call of the unit test; the states below are among them
            self.assertGreaterEqual(len(files), 30)
            schema = dict(gctest.SCHEMA, **{"$ref": "#/$defs/cuda_nvml"})
            schema.pop("oneOf", None)
            validator = jsonschema.Draft202012Validator(schema)
            statuses = set()
            for path in files:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
                errors = ["%s: %s" % (list(e.path), e.message) for e in validator.iter_errors(doc)]
                self.assertEqual(errors, [], os.path.basename(path))
                statuses.add(doc["status"])
            self.assertEqual(statuses, {"ok", "no-library", "missing-symbol", "init-failed", "crash", "timeout"})


if __name__ == "__main__":
    gctest.main()
