"""The CUDA smoke test's data["smoke"] over every outcome validates against the schema's $defs/cuda_smoke."""
import json
import os
import subprocess

import jsonschema

import gctest


class CudaSmokeSchemaTests(gctest.TestCase):
    def test_every_outcome_validates(self):
        exe = os.environ["GC_CUDA_SMOKE_UNIT"]
        out = subprocess.run([exe, "dump"], capture_output=True, text=True, check=True, timeout=60).stdout
        smoke = json.loads(out)
        schema = dict(gctest.SCHEMA)
        schema["$ref"] = "#/$defs/cuda_smoke"
        schema.pop("oneOf", None)
        jsonschema.Draft202012Validator(schema).validate(smoke)
        statuses = [e["status"] for e in smoke]
        self.assertEqual(statuses, ["pass", "wrong-result", "wrong-result", "wrong-result", "jit-failed",
                                    "jit-failed", "run-failed", "init-failed", "run-failed", "no-compute-api",
                                    "crash", "timeout"])
        self.assertIsInstance(smoke[0]["gflops"], float)
        self.assertEqual(smoke[0]["timer"], "profiling")
        self.assertEqual(smoke[10]["pci_bus_id"], "0000:01:00.0")
        # A schema that accepts anything would pass the above: it must reject a made-up status.
        smoke[0]["status"] = "ok"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate(smoke)


if __name__ == "__main__":
    gctest.main()
