"""--format=junit|prometheus|nfd|github on the scenarios the other e2e tests build, each checked by its consumer's tool.

junit: xmllint --schema against Jenkins' junit-10.xsd (tests/formats/junit-10.xsd), then read as Jenkins and
GitLab read it (counts of testcase/failure/skipped agree with the attributes). prometheus: promtool check
metrics. nfd: Kubernetes' label syntax (regular expressions below). github: a parser of workflow commands
as GitHub documents them. Every format keeps the exit status of the JSON run of the same scenario.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import gctest

sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "pci"))
sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "fixtures"))
sys.path.insert(0, os.path.join(gctest.SOURCE_ROOT, "tests", "cuda"))
from test_pci import PciTree  # noqa: E402
import test_doctor  # noqa: E402  (its vendors()/env() helpers; not its tests)
from test_fixtures import unpack  # noqa: E402
from test_cuda import CudaBase  # noqa: E402

XSD = os.path.join(gctest.SOURCE_ROOT, "tests", "formats", "junit-10.xsd")
FORMATS = ("junit", "prometheus", "nfd", "github")

# Kubernetes label syntax (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/
# #syntax-and-character-set): an optional prefix, a DNS subdomain (RFC 1123: lowercase alphanumerics,
# '-' and '.', at most 253 characters) followed by '/'; a name of at most 63 characters, alphanumeric at
# both ends with '-', '_', '.' and alphanumerics between; a value: empty, or the same rule as the name.
K8S_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
K8S_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def k8s_label_ok(name, value):
    if "/" in name:
        prefix, name = name.split("/", 1)
        if len(prefix) > 253 or not K8S_PREFIX.match(prefix):
            return False
    if len(name) > 63 or not K8S_NAME.match(name):
        return False
    return value == "" or (len(value) <= 63 and K8S_NAME.match(value) is not None)


def gh_unescape(s):
    """Reverse the workflow-command escaping (actions/toolkit's escapeData/escapeProperty)."""
    return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}[m.group(1)], s)


GH_LINE = re.compile(r"^::([a-z-]+)(?: ([^:]*))?::(.*)$")


def gh_parse(text):
    """Workflow commands in TEXT as (command, {property: value}, message); every line must be one."""
    out = []
    for line in text.splitlines():
        m = GH_LINE.match(line)
        if not m:
            raise AssertionError("not a workflow command: %r" % line)
        props = {}
        for p in (m.group(2) or "").split(","):
            if p:
                k, _, v = p.partition("=")
                props[k] = gh_unescape(v)
        out.append((m.group(1), props, gh_unescape(m.group(3))))
    return out


class FormatsBase(gctest.TestCase):
    setUp = test_doctor.DoctorTests.setUp
    vendors = test_doctor.DoctorTests.vendors
    env = test_doctor.DoctorTests.env

    def formats(self, args, env=None):
        """Run ARGS as JSON and in every format; check each with its consumer. Returns the JSON run and
        {format: Result}."""
        j = self.run_json(*args, env=env)
        self.assertIn(j.rc, (0, 1), repr(j))
        out = {}
        for fmt in FORMATS:
            r = gctest.run("--format=" + fmt, *args, env=env)
            with self.subTest(format=fmt):
                self.assertEqual(r.rc, j.rc, "exit status changed by --format=%s\n%r" % (fmt, r))
                getattr(self, "check_" + fmt)(r.stdout, j)
            out[fmt] = r
        return j, out

    # ---- consumers ----------------------------------------------------------------------------

    def check_junit(self, text, j):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        v = subprocess.run(["xmllint", "--noout", "--schema", XSD, f.name], capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stderr + text[:3000])
        root = ET.fromstring(text.encode())
        self.assertEqual(root.tag, "testsuites")
        tests = failures = 0
        names = []
        for ts in root.findall("testsuite"):
            cases = ts.findall("testcase")
            nf = sum(len(c.findall("failure")) for c in cases)
            ns = sum(1 for c in cases if c.find("skipped") is not None)
            self.assertEqual(int(ts.get("tests")), len(cases), ts.get("name"))
            self.assertEqual(int(ts.get("failures")), nf, ts.get("name"))
            self.assertEqual(int(ts.get("skipped")), ns, ts.get("name"))
            self.assertEqual(int(ts.get("errors")), 0)
            for c in cases:
                self.assertEqual(c.get("classname"), ts.get("name"))
                self.assertLessEqual(len(c.findall("failure")) + len(c.findall("skipped")), 1)
                names.append(c.get("name"))
            tests += len(cases)
            failures += nf
        self.assertEqual(int(root.get("tests")), tests)
        self.assertEqual(int(root.get("failures")), failures)
        # one failure per error finding, so the report fails exactly when gpucheckup exits 1
        errors = [f for f in j.json["findings"] if f["severity"] == "error"]
        self.assertEqual(failures, len(errors))
        self.assertEqual(failures > 0, j.rc == 1)
        # every finding is a testcase, named by its ID and subject
        for fi in j.json["findings"]:
            name = fi["id"] + (" (%s)" % fi["subject"] if fi["subject"] is not None else "")
            self.assertIn(name, names)
        # every probe that ran is a testsuite
        for p in ("cpu", "pci", "cuda", "icd", "opencl", "smoke"):
            if p in j.json:
                self.assertIn("gpucheckup." + p, [ts.get("name") for ts in root.findall("testsuite")])
        return root

    def check_prometheus(self, text, j):
        v = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr + text)
        self.assertEqual(v.stdout + v.stderr, "", "promtool lint: " + v.stdout + v.stderr)
        self.assertIn("gpucheckup_ready %d\n" % (1 if j.rc == 0 else 0), text)
        self.assertIn("gpucheckup_exit_code %d\n" % j.rc, text)
        self.assertRegex(text, r"\ngpucheckup_run_duration_seconds [0-9.e+-]+\n")
        self.assertRegex(text, r"\ngpucheckup_run_timestamp_seconds 1[0-9]{9}\.[0-9]{3}\n")
        checks = [l for l in text.splitlines() if l.startswith("gpucheckup_check{")]
        want = {(f["id"], f["subject"] or "") for f in j.json["findings"]}
        self.assertEqual(len(checks), len(want))
        for sev in ("error", "warning", "info"):
            self.assertIn('gpucheckup_findings{severity="%s"} %d\n' % (sev, j.json["verdict"]["counts"][sev]), text)

    def check_nfd(self, text, j):
        labels = {}
        for line in text.splitlines():
            self.assertIn("=", line, line)
            name, _, value = line.partition("=")
            self.assertTrue(k8s_label_ok(name, value), "not a valid Kubernetes label: %r" % line)
            self.assertTrue(name.startswith("feature.node.kubernetes.io/gpucheckup-"), line)
            self.assertNotIn(name, labels, "label twice: " + name)
            labels[name[len("feature.node.kubernetes.io/gpucheckup-"):]] = value
        self.assertEqual(labels["ready"], "true" if j.rc == 0 else "false")
        if "pci" in j.json and j.json["pci"]["status"] == "ok":
            gpus = [d for d in j.json["pci"]["devices"] if d["kind"] in ("compute-gpu", "accelerator")]
            self.assertEqual(labels["gpu.count"], str(len(gpus)))
            self.assertEqual(labels["gpu.present"], "true" if gpus else "false")
        if "cpu" in j.json and j.json["cpu"]["status"] == "ok":
            self.assertEqual(labels["cpu.x86-64-level"], str(j.json["cpu"]["x86_64_level"]))
            self.assertEqual(labels["cpu.avx512"], "true" if j.json["cpu"]["flags"].get("avx512f") else "false")
        for t, ready in ((k, v["ready"]) for k, v in j.json["verdict"]["targets"].items()):
            if t in ("gpu", "opencl", "cuda12", "cuda13"):
                self.assertEqual(labels[t + ".ready"], "true" if ready else "false")
        return labels

    def check_github(self, text, j):
        cmds = gh_parse(text)
        self.assertEqual(len(cmds), len(j.json["findings"]))
        kinds = {"error": "error", "warning": "warning", "info": "notice"}
        for (cmd, props, msg), fi in zip(cmds, j.json["findings"]):
            self.assertEqual(cmd, kinds[fi["severity"]])
            want = "gpucheckup " + fi["id"] + (" (%s)" % fi["subject"] if fi["subject"] is not None else "")
            self.assertEqual(props, {"title": want})
            self.assertEqual(msg.split("\n")[0], fi["message"].split("\n")[0])
            if fi["hint"] and not fi["caused_by"]:
                self.assertIn("\nfix: " + fi["hint"], msg)
            elif fi["caused_by"]:  # a consequence: its cause's hint is the fix (issue 24 item 8)
                self.assertNotIn("\nfix: ", msg)
        return cmds


class FormatTests(FormatsBase):
    def test_healthy_pocl(self):
        j, out = self.formats(["--require", "opencl,avx"], env={"POCL_CACHE_DIR": self.cache})
        self.assertEqual(j.rc, 0)
        self.assertRegex(out["prometheus"].stdout,
                         r'gpucheckup_smoke_pass\{api="opencl",device="[0-9]+:[0-9]+",name="[^"]+",pci_address=""\} 1')
        self.assertIn('gpucheckup_requirement_met{requirement="opencl"} 1\n', out["prometheus"].stdout)
        self.assertIn("feature.node.kubernetes.io/gpucheckup-opencl.ready=true\n", out["nfd"].stdout)
        self.assertNotIn("::error", out["github"].stdout)
        root = ET.fromstring(out["junit"].stdout.encode())
        self.assertEqual(root.get("failures"), "0")
        core = [ts for ts in root.findall("testsuite") if ts.get("name") == "gpucheckup.core"][0]
        self.assertIn("require.unmet (opencl)", [c.get("name") for c in core.findall("testcase")])

    def test_nouveau(self):
        tree = self.make_tree()
        t = PciTree(tree)
        t.device("0000:01:00.0", 0x10de, 0x2204, 0x030000, driver="nouveau", drm=("card0", "renderD128"))
        t.module("nouveau", 1)
        t.node("/dev/dri/renderD128")
        v = self.vendors(tree, {"nvidia.icd": "@LIB@/libnvidia-opencl.so.1"},
                         {"libnvidia-opencl.so.1": os.environ["GC_FAKE_ICD_NOPLAT"]})
        j, out = self.formats(["--root", tree.root, "--live", "--timeout", "20", "--require", "gpu"], env=self.env(v))
        self.assertEqual(j.rc, 1)
        root = ET.fromstring(out["junit"].stdout.encode())
        pci = [ts for ts in root.findall("testsuite") if ts.get("name") == "gpucheckup.pci"][0]
        case = [c for c in pci.findall("testcase") if c.get("name") == "pci.nouveau-bound (0000:01:00.0)"][0]
        fail = case.find("failure")
        self.assertEqual(fail.get("type"), "error")
        self.assertIn("fix: ", fail.text)
        self.assertIn('gpucheckup_check{id="pci.nouveau-bound",subject="0000:01:00.0",severity="error"} 1',
                      out["prometheus"].stdout)
        self.assertIn('gpucheckup_requirement_met{requirement="gpu"} 0\n', out["prometheus"].stdout)
        labels = self.check_nfd(out["nfd"].stdout, j)
        self.assertEqual((labels["gpu.present"], labels["gpu.count"], labels["gpu.vendor"], labels["gpu.ready"]),
                         ("true", "1", "nvidia", "false"))
        cmds = gh_parse(out["github"].stdout)
        self.assertIn(("error", {"title": "gpucheckup pci.nouveau-bound (0000:01:00.0)"}), [(c, p) for c, p, _ in cmds])
        self.assertIn("0000%3A01%3A00.0", out["github"].stdout)  # ':' escaped in the title property
        # caused_by is said on the consequences
        icd = [m for c, p, m in cmds if p["title"].startswith("gpucheckup require.unmet")][0]
        self.assertIn("\ncaused by: pci.nouveau-bound (0000:01:00.0)", icd)
        # and they carry no fix of their own: the cause's is the fix (issue 24 item 8)
        self.assertNotIn("\nfix: ", icd)
        for c in pci.findall("testcase") + [c for ts in root.findall("testsuite") for c in ts.findall("testcase")]:
            f = c.find("failure")
            if f is not None and "\ncaused by: " in (f.text or ""):
                self.assertNotIn("\nfix: ", f.text)

    def test_broken_icd_with_awkward_name(self):
        """A crashing driver registered by an .icd file whose name holds every character the formats escape."""
        tree = self.make_tree()
        name = 'odd "q" \\b, c:d 50% <x>&.icd'
        v = self.vendors(tree, {name: "@LIB@/libbroken.so"}, {"libbroken.so": os.environ["GC_FAKE_ICD_SEGV"]})
        j, out = self.formats(["--root", tree.root, "--live", "--timeout", "20"], env=self.env(v))
        subject = os.path.join(v, name)
        mine = [f for f in j.json["findings"] if f["subject"] == subject]
        self.assertTrue(mine, repr(j))
        self.assertIn("error", [f["severity"] for f in mine])
        self.assertEqual(j.rc, 1)
        # every format carries the subject through its own escaping, back to the same text
        root = ET.fromstring(out["junit"].stdout.encode())
        names = [c.get("name") for ts in root.findall("testsuite") for c in ts.findall("testcase")]
        self.assertIn("%s (%s)" % (mine[0]["id"], subject), names)
        esc = subject.replace("\\", "\\\\").replace('"', '\\"')
        self.assertIn('subject="%s"' % esc, out["prometheus"].stdout)
        titles = [p["title"] for _, p, _ in gh_parse(out["github"].stdout)]
        self.assertIn("gpucheckup %s (%s)" % (mine[0]["id"], subject), titles)
        # in the title property ':' and ',' are escaped as well as '%'; in the message only '%'
        self.assertIn("%2C c%3Ad 50%25", out["github"].stdout)
        self.assertIn(", c:d 50%25", out["github"].stdout)

    def test_no_gpu_replayed_fixture(self):
        """The captured Debian VM without a GPU, replayed: the live probes are skipped."""
        root = tempfile.mkdtemp(prefix="gc-fixture-")
        self.addCleanup(shutil.rmtree, root, True)
        unpack(os.path.join(gctest.SOURCE_ROOT, "tests", "fixtures", "debian12-vm-no-gpu", "tree.tar.gz"), root)
        j, out = self.formats(["--root", root])
        self.assertEqual(j.rc, 0)
        root_el = ET.fromstring(out["junit"].stdout.encode())
        skipped = {ts.get("name"): int(ts.get("skipped")) for ts in root_el.findall("testsuite")}
        for p in ("cuda", "opencl", "smoke"):
            self.assertEqual(j.json[p]["status"], "skipped")
            self.assertEqual(skipped["gpucheckup." + p], int(
                [ts for ts in root_el.findall("testsuite") if ts.get("name") == "gpucheckup." + p][0].get("tests")))
        self.assertEqual(skipped["gpucheckup.pci"], 0)
        self.assertIn('gpucheckup_probe_ok{probe="cuda"} 0\n', out["prometheus"].stdout)
        self.assertNotIn("gpucheckup_smoke_pass", out["prometheus"].stdout)
        labels = self.check_nfd(out["nfd"].stdout, j)
        self.assertEqual((labels["gpu.present"], labels["gpu.count"]), ("false", "0"))
        self.assertNotIn("gpu.vendor", labels)
        self.assertNotIn("cuda.ready", labels)  # cuda did not run: no label rather than a guess

    def test_h100_replayed_fixture_pci(self):
        root = tempfile.mkdtemp(prefix="gc-fixture-")
        self.addCleanup(shutil.rmtree, root, True)
        unpack(os.path.join(gctest.SOURCE_ROOT, "tests", "fixtures", "h100-nvidia-cuda-container", "tree.tar.gz"),
               root)
        j, out = self.formats(["pci", "--root", root])
        labels = self.check_nfd(out["nfd"].stdout, j)
        self.assertEqual((labels["gpu.present"], labels["gpu.count"], labels["gpu.vendor"]), ("true", "1", "nvidia"))


class CudaFormatTests(CudaBase, FormatsBase):
    def test_fake_h100_cuda_labels_and_metrics(self):
        t = self.tree()
        d = self.libdir()
        e = {"LD_LIBRARY_PATH": d, "CUDA_VISIBLE_DEVICES": None, "GC_FAKE_CUDA_GPUS": None,
             "GC_FAKE_NVML_GPUS": "1", "GC_FAKE_NVML_BUSIDS": t.gc_gpus[0], "GC_FAKE_NVML_DRIVER": "580.159.04"}
        j, out = self.formats(["cuda", "--root", t.root, "--live"], env=e)
        self.assertEqual(j.json["cuda"]["status"], "ok", repr(j))
        labels = self.check_nfd(out["nfd"].stdout, j)
        self.assertEqual(labels["cuda.driver-version"], "13.0")
        self.assertEqual(labels["nvidia.driver-version"], "580.159.04")
        self.assertEqual(labels["cuda.compute-capability"], "9.0")
        self.assertEqual(labels["cuda.compute-capability-major"], "9")
        self.assertEqual(labels["cuda.device-count"], "1")
        self.assertEqual(labels["gpu.vendor"], "nvidia")
        # the targets by API (issue 25: no target list in the writer): the gpu target, CUDA's two series,
        # and cuda.ready for the API whose targets have other names
        for name in ("gpu.ready", "cuda12.ready", "cuda13.ready", "cuda.ready"):
            self.assertEqual(labels[name], "true", (name, labels))
        self.assertNotIn("cpu_avx.ready", labels)  # `cuda` runs no cpu probe: no target, no label
        self.assertRegex(out["prometheus"].stdout, r'gpucheckup_target_ready\{target="gpu"\} 1\n')
        self.assertRegex(out["prometheus"].stdout,
                         r'gpucheckup_smoke_pass\{api="cuda",device="0",name="NVIDIA H100 80GB HBM3",'
                         r'pci_address="[0-9a-fA-F:.]+"\} 1\n')
        self.assertRegex(out["prometheus"].stdout, r'gpucheckup_smoke_gflops\{api="cuda",[^}]*\} [0-9.e+]+\n')


class FormatCliTests(FormatsBase):
    def test_output_file_is_written_atomically_in_each_format(self):
        d = tempfile.mkdtemp(prefix="gc-out-")
        self.addCleanup(shutil.rmtree, d, True)
        for fmt in FORMATS:
            path = os.path.join(d, "report." + fmt)
            with open(path, "w") as f:
                f.write("old\n")
            r = gctest.run("cpu", "--format=" + fmt, "-o", path)
            self.assertEqual(r.rc, 0, repr(r))
            self.assertEqual(r.stdout, "")
            with open(path) as f:
                text = f.read()
            self.assertNotIn("old", text)
            j = self.run_json("cpu")
            getattr(self, "check_" + fmt)(text, j)
        self.assertEqual(sorted(os.listdir(d)), sorted("report." + f for f in FORMATS))  # no temp file left

    def test_bad_input_exits_2_and_writes_nothing(self):
        for fmt in FORMATS:
            r = gctest.run("--format=" + fmt, "--root", "/nonexistent/gc-formats")
            self.assertEqual(r.rc, 2, repr(r))
            self.assertEqual(r.stdout, "")
            self.assertIn("/nonexistent/gc-formats", r.stderr)
            r = gctest.run("--format=" + fmt, "--list-checks")
            self.assertEqual(r.rc, 2, repr(r))
            self.assertIn("--list-checks", r.stderr)
        r = gctest.run("--format=xml")
        self.assertEqual(r.rc, 2)
        for word in ("text", "json", "junit", "prometheus", "nfd", "github"):
            self.assertIn(word, r.stderr)

    def test_list_walks_the_opencl_report(self):
        e = {"POCL_CACHE_DIR": self.cache}
        j = self.run_json("list", env=e)
        r = gctest.run("list", "--format=junit", env=e)
        self.assertEqual(r.rc, j.rc)
        root = self.check_junit(r.stdout, j)
        self.assertIn("gpucheckup.opencl", [ts.get("name") for ts in root.findall("testsuite")])

    def test_help_names_every_format(self):
        r = gctest.run("--help")
        for fmt in FORMATS:
            self.assertIn(fmt, r.stdout)


if __name__ == "__main__":
    gctest.main()
