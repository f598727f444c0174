"""The check catalogue: IDs emitted in the code, --list-checks and the man page are the same set."""
import glob
import os
import re

import gctest

def id_re(areas):
    """A finding-ID-shaped string literal of one of AREAS (the part before the dot)."""
    return re.compile(r'"((?:%s)\.[a-z0-9]+(?:-[a-z0-9]+)*)"' % "|".join(sorted(map(re.escape, areas))))


def source_ids(areas):
    """Every finding-ID-shaped string literal of AREAS in the C sources, with the files it appears in."""
    ID_RE = id_re(areas)
    ids = {}
    for pattern in ("src/*.c", "src/*/*.c", "probes/*.c", "probes/*/*.c"):
        for path in glob.glob(os.path.join(gctest.SOURCE_ROOT, pattern)):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in ID_RE.finditer(text):
                ids.setdefault(m.group(1), []).append(os.path.basename(path))
    return ids


def man_ids():
    with open(os.path.join(gctest.SOURCE_ROOT, "man", "gpucheckup.1"), encoding="utf-8") as f:
        man = f.read()
    section = man.split(".SH FINDINGS", 1)[1].split("\n.SH ", 1)[0]
    return set(re.findall(r"^\.B ([a-z0-9]+\.[a-z0-9\\-]+)$", section, re.M)), man


class CheckCatalogueTests(gctest.TestCase):
    def setUp(self):
        r = self.run_json("--list-checks", expect_rc=0)
        self.checks = {c["id"]: c for c in r.json["checks"]}

    def test_ids_well_formed_and_unique(self):
        r = gctest.run("--json", "--list-checks")
        ids = [c["id"] for c in r.json["checks"]]
        self.assertEqual(len(ids), len(set(ids)))
        for c in r.json["checks"]:
            self.assertRegex(c["id"], r"^[a-z0-9]+\.[a-z0-9]+(-[a-z0-9]+)*$")
            self.assertTrue(c["description"], c["id"])
            self.assertTrue(c["hint"], c["id"] + " has no hint")

    def test_code_and_catalogue_agree(self):
        # The areas come from the catalogue itself, so a new probe's IDs are checked with no list here.
        areas = {cid.split(".", 1)[0] for cid in self.checks}
        self.assertTrue({"core", "require", "pci", "cuda"} <= areas, areas)
        src = source_ids(areas)
        unknown = sorted(set(src) - set(self.checks))
        self.assertEqual(unknown, [], "IDs used in code but missing from the catalogue")
        # Each catalogue row is emitted somewhere besides its own row: an ID appearing once in the
        # sources is dead.
        dead = sorted(i for i in self.checks if len(src.get(i, [])) < 2)
        self.assertEqual(dead, [], "catalogue IDs never emitted by the code")

    def test_man_page_documents_exactly_the_catalogue(self):
        documented, man = man_ids()
        documented = {d.replace("\\-", "-") for d in documented}
        self.assertEqual(sorted(set(self.checks) - documented), [], "IDs missing from the man page")
        self.assertEqual(sorted(documented - set(self.checks)), [], "man page documents unknown IDs")
        # and with the same severity
        for cid, c in self.checks.items():
            pat = r"\.B %s\n\(%s\)" % (re.escape(cid.replace("-", "\\-")), c["severity"])
            self.assertRegex(man, pat, cid + " severity in the man page")

    def test_text_list_matches_json_list(self):
        text = gctest.run("--list-checks").stdout
        for cid, c in self.checks.items():
            self.assertRegex(text, r"(?m)^%s\s+%s\s" % (re.escape(cid), c["severity"]))


class ListsFollowTheRegistryTests(gctest.TestCase):
    """Lists in the documents that name every probe are checked against the probes themselves."""

    def test_source_layout_names_every_probe_folder(self):
        folders = sorted(d for d in os.listdir(os.path.join(gctest.SOURCE_ROOT, "probes"))
                         if os.path.isdir(os.path.join(gctest.SOURCE_ROOT, "probes", d)))
        self.assertIn("cuda", folders)
        with open(os.path.join(gctest.SOURCE_ROOT, "docs", "guide.md"), encoding="utf-8") as f:
            layout = f.read().split("## Source layout", 1)[1].split("\n## ", 1)[0]
        named = set(re.findall(r"`([a-z0-9]+)`", layout))
        self.assertEqual([d for d in folders if d not in named], [], "probe folders the guide's source layout omits")

    def test_source_layout_names_every_typed_result(self):
        headers = sorted(h for h in os.listdir(os.path.join(gctest.SOURCE_ROOT, "src", "results"))
                         if h.startswith("result_") and h.endswith(".h"))
        self.assertIn("result_cpu.h", headers)
        with open(os.path.join(gctest.SOURCE_ROOT, "docs", "guide.md"), encoding="utf-8") as f:
            layout = f.read().split("## Source layout", 1)[1].split("\n## ", 1)[0]
        named = set(re.findall(r"`(result_[a-z0-9_]+\.h)`", layout))
        self.assertEqual([h for h in headers if h not in named], [], "typed result headers the guide's source layout omits")


class SummaryMarkPropertyTests(gctest.TestCase):
    """The property every report the suite reads is checked for (gctest.check_summary_marks) finds what it must."""

    def test_a_fail_line_above_information_is_caught(self):
        # issue 35's first run: "[FAIL] ROCm" while the rocm probe's only findings are information
        doc = {"rocm": {"summary": [{"mark": "error", "label": "ROCm", "text": "hsa_init: no-library; HIP absent"}]},
               "cpu": {"summary": [{"mark": "warning", "label": "CPU", "text": "no AVX"}]},
               "findings": [{"id": "rocm.no-device", "severity": "info"}, {"id": "cpu.no-avx", "severity": "warning"},
                            {"id": "require.unmet", "severity": "error"}]}
        bad = gctest.summary_mark_disagreements(doc)
        self.assertEqual(len(bad), 1, bad)
        self.assertTrue(bad[0].startswith("rocm: [error] ROCm"), bad)
        with self.assertRaises(AssertionError):
            gctest.check_summary_marks(doc)
        # a core.* finding (a probe that failed) leaves every line in doubt up to its severity
        doc["findings"].append({"id": "core.probe-failed", "severity": "warning"})
        self.assertEqual(len(gctest.summary_mark_disagreements(doc)), 1)
        doc["findings"].append({"id": "rocm.hsa-init-failed", "severity": "error"})
        self.assertEqual(gctest.summary_mark_disagreements(doc), [])

    def test_the_live_run_agrees(self):
        r = self.run_json("--timeout", "60")
        self.assertEqual(gctest.summary_mark_disagreements(r.json), [])


if __name__ == "__main__":
    gctest.main()
