"""The shape of the sources (issue 13): no .c/.h under src/ or probes/ over 800 lines, no function over 120;
and what a probe owns stays in its folder: src/ (outside src/report/registry.c) names no probe's command, option
or finding ID prefix, and the top-level meson.build no probe folder; no probe includes another's headers,
nor src/ or the shared OpenCL child a probe's (issue 25), nor a probe a header of src/app/; probes/ holds only
folders, and no src/ object of the core library calls a function defined under probes/ (issue 38)."""
import glob
import os
import re
import subprocess
import sys
import unittest

ROOT = os.environ.get("GPUCHECKUP_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120

# Exceptions, (path, function) and paths: none left. Add one only with a comment saying why and when it goes.
EXCEPTIONS = set()
FILE_EXCEPTIONS = set()


def blank_comments_and_literals(src):
    """The source with comments, string and character literals blanked; newlines are kept."""
    out = []
    i, n = 0, len(src)
    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src[i] in "\"'":
            quote, j = src[i], i + 1
            while j < n and src[j] != quote and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(quote + " " * max(0, j - i - 1) + quote)
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


DECL_RE = re.compile(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*$")
PREPROC_RE = re.compile(r"^[ \t]*#.*(?:\\\n.*)*$", re.M)


def functions(src):
    """(name, first line, last line) of every function definition: a top-level brace block whose
    opening brace follows a parameter list."""
    s = blank_comments_and_literals(src)
    found = []
    depth, line, start = 0, 1, None
    for k, ch in enumerate(s):
        if ch == "\n":
            line += 1
        elif ch == "{":
            if depth == 0:
                head = s[max(0, k - 4000):k]
                # The declaration starts after the last statement, block or preprocessor line.
                head = PREPROC_RE.sub("", head)
                cut = max(head.rfind(";"), head.rfind("}"))
                m = DECL_RE.search(head[cut + 1:])
                start = (m.group(1), line) if m and m.group(1) not in ("if", "for", "while", "switch") else None
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
            if depth == 0 and start:
                found.append((start[0], start[1], line))
                start = None
    return found


def sources():
    paths = []
    for pattern in ("src/**/*.[ch]", "probes/**/*.[ch]"):
        paths += glob.glob(os.path.join(ROOT, pattern), recursive=True)
    return sorted(os.path.relpath(p, ROOT) for p in paths)


class ScannerTests(unittest.TestCase):
    """The scanner itself: a broken scanner would pass every tree."""

    def test_counts_function_lines(self):
        src = "static int f(int a,\n  int b)\n{\n  if (a) {\n    return b;\n  }\n  return 0;\n}\n"
        self.assertEqual(functions(src), [("f", 3, 8)])

    def test_braces_in_comments_strings_and_initialisers_ignored(self):
        src = ('static const char *s = "{{{";\nstatic const int t[] = {1, 2};\n'
               "/* int g(void) { */\nvoid h(void)\n{\n  char c = '{';\n  (void)c; // }\n}\n"
               "#define N (sizeof(t))\nstruct x { int a; };\n")
        self.assertEqual(functions(src), [("h", 5, 8)])

    def test_long_function_found(self):
        src = "void big(void)\n{\n" + "  x();\n" * 130 + "}\n"
        (name, a, b), = functions(src)
        self.assertEqual((name, b - a + 1), ("big", 132))


class ShapeTests(unittest.TestCase):
    def test_sources_found(self):
        self.assertGreater(len(sources()), 50)

    def test_no_file_over_limit(self):
        over = []
        for rel in sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                n = sum(1 for _ in f)
            if n > MAX_FILE_LINES and rel not in FILE_EXCEPTIONS:
                over.append(f"{rel}: {n} lines")
        self.assertEqual(over, [], f"files over {MAX_FILE_LINES} lines: split them along their seams")

    def test_no_function_over_limit(self):
        over = []
        seen = set()
        for rel in sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                for name, a, b in functions(f.read()):
                    if b - a + 1 > MAX_FUNCTION_LINES:
                        seen.add((rel, name))
                        if (rel, name) not in EXCEPTIONS:
                            over.append(f"{rel}:{a}: {name}() is {b - a + 1} lines")
        self.assertEqual(over, [], f"functions over {MAX_FUNCTION_LINES} lines")
        # An exception that no longer applies goes: the list only shrinks.
        self.assertEqual(sorted(EXCEPTIONS - seen), [], "stale exceptions in test_shape.py")


def string_literals(src):
    """(line, text) of every string literal outside comments (character literals skipped)."""
    out, i, n, line = [], 0, len(src), 1
    while i < n:
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src[i] in "\"'":
            quote, j = src[i], i + 1
            while j < n and src[j] != quote and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            if quote == '"':
                out.append((line, src[i + 1:j]))
            i = j + 1
        else:
            line += src[i] == "\n"
            i += 1
    return out


def probe_facts():
    """What the probes own, read from probes/: {command: file} from each `const struct probe`'s .name,
    {option: file} from each `struct probe_option` table's .name rows, {ID prefix: file} from the IDs of
    each `struct check` table."""
    names, options, prefixes = {}, {}, {}
    for rel in sources():
        if not rel.startswith("probes" + os.sep) or not rel.endswith(".c"):
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            src = f.read()
        for m in re.finditer(r"const struct probe probe_\w+\s*=\s*\{(.*?)\n\};", src, re.S):
            name = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
            if name:
                names[name.group(1)] = rel
        for m in re.finditer(r"struct probe_option \w+\[\]\s*=\s*\{(.*?)\n\};", src, re.S):
            for o in re.findall(r'\.name\s*=\s*"([a-z0-9-]+)"', m.group(1)):
                options[o] = rel
        for m in re.finditer(r"struct check \w+\[\]\s*=\s*\{(.*?)\n\};", src, re.S):
            for prefix in re.findall(r'\{\s*"([a-z0-9]+)\.[a-z0-9-]+",', m.group(1)):
                prefixes[prefix] = rel
    return names, options, prefixes


def probe_mentions():
    """(file, kind, what) for each place in src/ outside src/report/registry.c that names a probe: a string
    literal that is a probe's command name, holds one of its options (--NAME), or starts with one of
    its finding ID prefixes ("cl.")."""
    names, options, prefixes = probe_facts()
    found = set()
    for rel in sources():
        if not rel.startswith("src" + os.sep) or rel == os.path.join("src", "report", "registry.c"):
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            lits = string_literals(f.read())
        rel = rel.replace(os.sep, "/")
        for _, lit in lits:
            if lit in names:
                found.add((rel, "command", lit))
            for o in options:
                if re.search(r"--" + re.escape(o) + r"(?![a-z0-9-])", lit):
                    found.add((rel, "option", o))
            for prefix in prefixes:
                if re.match(re.escape(prefix) + r"\.[a-z]", lit):
                    found.add((rel, "finding ID", prefix))
    return found


# Where src/ still names a probe, and why. The list only shrinks: a new entry means a probe's facts
# leaked into the core (put them on the probe's row: struct probe, its options, its catalogue flags).
OWNERSHIP_EXCEPTIONS = {
    # "rocm" as a vendor word, older than the rocm probe: an OpenCL platform name's prefix and a word that says AMD in
    # a finding's text (vendor.c, the one module that knows vendors). It does not refer to the probe's command.
    ("src/host/vendor.c", "command", "rocm"),
    # "health" as the --health option's long name (struct option, older than the health probe): the node health
    # contract's flag, not the probe's command.
    ("src/app/cli.c", "command", "health"),
}


class OwnershipScannerTests(unittest.TestCase):
    """The scanners themselves: a broken scanner would pass every tree."""

    def test_literals_skip_comments_and_characters(self):
        src = '/* "a" */ x = "b"; // "c"\nchar q = \'"\'; y = "d\\"e";\n'
        self.assertEqual(string_literals(src), [(1, "b"), (2, 'd\\"e')])

    def test_probe_facts_found(self):
        names, options, prefixes = probe_facts()
        self.assertLessEqual({"cpu", "pci", "cuda", "icd", "opencl", "smoke", "bench"}, set(names))
        self.assertLessEqual({"smoke", "no-smoke", "smoke-size", "bench-time", "bench-precision", "plot"},
                             set(options))
        self.assertLessEqual({"cpu", "pci", "drv", "dev", "cuda", "icd", "cl", "smoke", "bench"}, set(prefixes))


class OwnershipTests(unittest.TestCase):
    def test_src_names_no_probe(self):
        found = probe_mentions()
        self.assertEqual(sorted(found - OWNERSHIP_EXCEPTIONS), [],
                         "src/ names a probe's command, option or finding ID: the fact belongs on the "
                         "probe's row (struct probe, its options, its catalogue flags)")
        self.assertEqual(sorted(OWNERSHIP_EXCEPTIONS - found), [], "stale entries in OWNERSHIP_EXCEPTIONS")

    def test_meson_top_level_names_no_probe_folder(self):
        names, _, _ = probe_facts()
        with open(os.path.join(ROOT, "meson.build"), encoding="utf-8") as f:
            top = f.read()
        for name in names:
            self.assertFalse("probes/" + name in top,
                             f"meson.build names probes/{name}: the folder adds itself (probes/{name}/meson.build)")
            self.assertTrue(os.path.exists(os.path.join(ROOT, "probes", name, "meson.build")), name)


INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def include_owner(rel):
    """Who a source or header belongs to: "probes/NAME" for a probe's folder (or the shared OpenCL child's,
    probes/clonce), else its folder ("src", "src/results")."""
    parts = rel.replace(os.sep, "/").split("/")
    if parts[0] == "probes" and len(parts) > 2:
        return "probes/" + parts[1]
    return "/".join(parts[:-1])


def resolve_include(rel, name, files):
    """The file (a path relative to ROOT, from FILES) that `#include "NAME"` in REL finds: the includer's
    folder first, as the compiler looks, then src/ and its role folders (src/util/...), then any folder
    under probes/; None when none has it."""
    here = os.path.dirname(rel).replace(os.sep, "/")
    cands = [os.path.normpath(os.path.join(here, name)).replace(os.sep, "/"), "src/" + name]
    cands += sorted(f for f in files if f.startswith("src/") and f.count("/") == 2 and f.endswith("/" + name))
    cands += sorted(f for f in files if f.startswith("probes/") and f.endswith("/" + name))
    for c in cands:
        if c in files:
            return c
    return None


SHARED_CHILD = "probes/clonce"


def cross_probe_includes(texts):
    """(includer, header) for each `#include "x.h"` in TEXTS ({path: source}) that resolves to a probe's
    folder (probes/B/) from outside it: from another probe (probes/A/), the core (src/) or the shared
    OpenCL child (probes/clonce/). The shared child's own folder is the one a probe may include: its
    parts tables (clonce_parts.h, bench_parts.h) are the contract its users implement."""
    files = set(texts)
    found = []
    for rel in sorted(texts):
        owner = include_owner(rel)
        for m in INCLUDE_RE.finditer(blank_comments(texts[rel])):
            hdr = resolve_include(rel, m.group(1), files)
            if not hdr:
                continue
            target = include_owner(hdr)
            if target != owner and target.startswith("probes/") and target != SHARED_CHILD:
                found.append((rel, hdr))
    return found


def blank_comments(src):
    """SRC with its comments blanked (string literals kept: an include names its file in one)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)


# Cross-probe includes left, and why. The list only shrinks.
CROSS_INCLUDE_EXCEPTIONS = set()


class IncludeScannerTests(unittest.TestCase):
    """The include scanner itself: a broken scanner would pass every tree."""

    TREE = {
        "src/core.h": "",
        "src/results/result_a.h": "",
        "src/uses.c": '#include "core.h"\n#include "results/result_a.h"\n#include "a_internal.h"\n',
        "probes/clonce/clonce_parts.h": "",
        "probes/clonce/clonce.c": '#include "clonce_parts.h"\n#include "b_private.h"\n',
        "probes/a/a.c": ('#include "a_internal.h"\n#include "core.h"\n#include "clonce_parts.h"\n'
                         '  #  include "b_internal.h"\n/* #include "b_private.h" */\n#include <b_sys.h>\n'),
        "probes/a/a_internal.h": "",
        "probes/b/b_internal.h": '#include "../a/a_internal.h"\n',
        "probes/b/b_private.h": "",
    }

    def test_cross_probe_found(self):
        self.assertEqual(cross_probe_includes(self.TREE), [
            ("probes/a/a.c", "probes/b/b_internal.h"),
            ("probes/b/b_internal.h", "probes/a/a_internal.h"),
            ("probes/clonce/clonce.c", "probes/b/b_private.h"),
            ("src/uses.c", "probes/a/a_internal.h"),
        ])

    def test_own_folder_first(self):
        tree = {"probes/a/x.h": "", "probes/b/x.h": "", "probes/b/b.c": '#include "x.h"\n'}
        self.assertEqual(cross_probe_includes(tree), [])
        self.assertEqual(resolve_include("probes/b/b.c", "x.h", set(tree)), "probes/b/x.h")


class IncludeTests(unittest.TestCase):
    def test_probes_holds_only_folders(self):
        loose = sorted(n for n in os.listdir(os.path.join(ROOT, "probes"))
                       if n != "meson.build" and not os.path.isdir(os.path.join(ROOT, "probes", n)))
        self.assertEqual(loose, [], "a file loose in probes/: it belongs in a probe's folder or the shared "
                         "OpenCL child's (probes/clonce/)")

    def test_no_cross_probe_include(self):
        texts = {}
        for rel in sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                texts[rel.replace(os.sep, "/")] = f.read()
        found = set(cross_probe_includes(texts))
        self.assertGreater(len(texts), 50)
        self.assertEqual(sorted(found - CROSS_INCLUDE_EXCEPTIONS), [],
                         "a probe includes another probe's header (or src/ a probe's): move what is shared "
                         "into src/ (a service, or a typed result header in src/results/)")
        self.assertEqual(sorted(CROSS_INCLUDE_EXCEPTIONS - found), [], "stale entries in CROSS_INCLUDE_EXCEPTIONS")


APP_HEADERS = ("cli.h", "run.h")


def app_includes(texts):
    """(includer, header) for each `#include` in a probe's file (probes/...) that resolves to src/app/: the
    program's own headers (what a probe reads of the command line is src/report/options.h)."""
    files = set(texts)
    found = []
    for rel in sorted(texts):
        if not rel.startswith("probes/"):
            continue
        for m in INCLUDE_RE.finditer(blank_comments(texts[rel])):
            hdr = resolve_include(rel, m.group(1), files)
            if hdr and hdr.startswith("src/app/"):
                found.append((rel, hdr))
    return found


class AppIncludeTests(unittest.TestCase):
    def test_scanner(self):
        tree = {"src/app/cli.h": "", "src/report/options.h": "", "probes/a/a.c": '#include "cli.h"\n',
                "probes/b/b.c": '#include "options.h"\n/* #include "cli.h" */\n'}
        self.assertEqual(app_includes(tree), [("probes/a/a.c", "src/app/cli.h")])

    def test_no_probe_includes_app(self):
        texts = {}
        for rel in sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                texts[rel.replace(os.sep, "/")] = f.read()
        self.assertTrue(any(r.startswith("src/app/") for r in texts))
        self.assertEqual(app_includes(texts), [], "a probe includes a header of src/app/ (the program): "
                         "what it needs belongs in src/report/ (options.h, probe.h) or another role folder")


def archive_symbols(lines):
    """From `nm -A` LINES of the core library (probes' objects merged in, thin or not): ({symbol: set of
    objects defining it}, {object: set of undefined symbols}). An object is the member's path as nm prints
    it: "probes/NAME/libprobe-NAME.a.p/x.c.o" for a probe's, "libgpucheckup-core.a.p/src_DIR_x.c.o" for
    the core's."""
    defined, undefined = {}, {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        obj, f = parts[1], parts[2].split()
        if len(f) == 2 and f[0] == "U":
            undefined.setdefault(obj, set()).add(f[1])
        elif len(f) == 3 and f[1] in "TDBRGCSV":
            defined.setdefault(f[2], set()).add(obj)
    return defined, undefined


def is_probe_object(obj):
    return obj.startswith("probes/") or "/probes/" in obj


def is_src_object(obj):
    return os.path.basename(obj).startswith("src_")


def src_calls_into_probes(defined, undefined):
    """(src object, symbol) for each symbol a src/ object needs that only objects under probes/ define,
    but registry.c's references to the probes' `probe_NAME` rows (the one allowed link: it lists them)."""
    found = []
    for obj in sorted(o for o in undefined if is_src_object(o)):
        for sym in sorted(undefined[obj]):
            owners = defined.get(sym)
            if not owners or not all(is_probe_object(o) for o in owners):
                continue
            if os.path.basename(obj).endswith("registry.c.o") and sym.startswith("probe_"):
                continue
            found.append((os.path.basename(obj), sym))
    return found


class ArrowTests(unittest.TestCase):
    """src/ calls nothing defined under probes/: the core serves the probes, never the other way."""

    def test_scanner(self):
        lines = [
            "libgpucheckup-core.a:libgpucheckup-core.a.p/src_report_doctor.c.o:                 U result_x_get",
            "libgpucheckup-core.a:libgpucheckup-core.a.p/src_report_doctor.c.o:                 U str_printf",
            "libgpucheckup-core.a:libgpucheckup-core.a.p/src_report_registry.c.o:                 U probe_x",
            "libgpucheckup-core.a:libgpucheckup-core.a.p/src_report_registry.c.o:                 U x_helper",
            "libgpucheckup-core.a:libgpucheckup-core.a.p/src_util_strutil.c.o:0000000000000000 T str_printf",
            "libgpucheckup-core.a:probes/x/libprobe-x.a.p/x.c.o:0000000000000000 D probe_x",
            "libgpucheckup-core.a:probes/x/libprobe-x.a.p/x.c.o:0000000000000040 T result_x_get",
            "libgpucheckup-core.a:probes/x/libprobe-x.a.p/x.c.o:0000000000000080 T x_helper",
            "libgpucheckup-core.a:probes/x/libprobe-x.a.p/x.c.o:                 U str_printf",
        ]
        self.assertEqual(src_calls_into_probes(*archive_symbols(lines)), [
            ("src_report_doctor.c.o", "result_x_get"), ("src_report_registry.c.o", "x_helper")])

    def test_src_calls_nothing_under_probes(self):
        build = os.environ.get("GPUCHECKUP_BUILD_ROOT")
        if not build:
            self.fail("GPUCHECKUP_BUILD_ROOT is not set: run through meson test (unit-shape reads the core library)")
        lib = os.path.join(build, "libgpucheckup-core.a")
        out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True,
                             cwd=build).stdout.splitlines()
        defined, undefined = archive_symbols(out)
        objs = set(undefined) | {o for objs in defined.values() for o in objs}
        self.assertGreater(len([o for o in objs if is_src_object(o)]), 30, "no src/ objects found in " + lib)
        self.assertGreater(len([o for o in objs if is_probe_object(o)]), 50, "no probe objects found in " + lib)
        self.assertEqual(src_calls_into_probes(defined, undefined), [],
                         "src/ calls a function (or reads data) defined only under probes/: move it to the "
                         "probe (a typed result's helper in probes/NAME/result_NAME.c, declared in src/results/)")


def object_folder(obj):
    """The folder an object's source lies in: "probes/NAME" or "src/ROLE"."""
    if is_probe_object(obj):
        parts = obj.split("/")
        return "/".join(parts[parts.index("probes"):parts.index("probes") + 2])
    return "src/" + os.path.basename(obj).split("_")[1]


def object_name(obj):
    return os.path.basename(obj).replace(".c.o", "").replace("src_", "", 1)


def call_cycles(defined, undefined):
    """Sets of a folder's files (by object name) that call each other round a cycle: A calls what B defines
    and B, directly or through others of the folder, what A defines. A probe's files referring to its own
    `probe_NAME` row (a verdict naming its target) make no edge: the row is what lists them."""
    owner = {}
    for sym, objs in defined.items():
        if len(objs) == 1:
            owner[sym] = next(iter(objs))
    graph = {}
    for obj, syms in undefined.items():
        for sym in syms:
            t = owner.get(sym)
            if not t or t == obj or object_folder(t) != object_folder(obj):
                continue
            if re.fullmatch(r"probe_[a-z0-9]+", sym):
                continue
            graph.setdefault(obj, set()).add(t)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append((object_folder(v), tuple(sorted(object_name(o) for o in comp))))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(comps)


def folder_cycles(defined, undefined):
    """Sets of probes/ folders that call one another round a cycle (the shared OpenCL child in probes/clonce
    calling a probe that calls it back). A probe's typed result (its result_NAME.c, declared in src/results/)
    is the interface every probe may read, and a registry row `probe_NAME` lists a probe: neither makes an
    edge. src/ calls nothing under probes/ (SrcCallTests), so only probe folders count."""
    owner = {}
    for sym, objs in defined.items():
        if len(objs) == 1:
            owner[sym] = next(iter(objs))
    graph = {}
    for obj, syms in undefined.items():
        if not is_probe_object(obj):
            continue
        for sym in syms:
            t = owner.get(sym)
            if not t or not is_probe_object(t) or object_folder(t) == object_folder(obj):
                continue
            if object_name(t).startswith("result_") or re.fullmatch(r"probe_[a-z0-9]+", sym):
                continue
            graph.setdefault(object_folder(obj), set()).add(object_folder(t))
    comps, seen = set(), set()
    for v in sorted(graph):
        if v in seen:
            continue
        reach = folder_reach(graph, v)  # every folder V reaches: those that reach V back share its cycle
        comp = {w for w in reach if w == v or v in folder_reach(graph, w)}
        if v in reach and len(comp) > 1:
            comps.add(tuple(sorted(comp)))
        seen |= comp
    return sorted(comps)


def folder_reach(graph, v):
    """The folders V's calls reach, directly or through others (V itself only round a cycle)."""
    reach, todo = set(), [v]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in reach:
                reach.add(w)
                todo.append(w)
    return reach


class FolderCycleTests(unittest.TestCase):
    """Probe folders call one another one way: the shared OpenCL child (probes/clonce) finds its parts in the
    registry (struct probe's clonce_part) and calls none of the icd, opencl or smoke probes by name."""

    def test_scanner(self):
        lines = [
            "a:probes/c/libprobe-c.a.p/c.c.o:0000000000000000 T c_run",
            "a:probes/c/libprobe-c.a.p/c.c.o:                 U s_part",
            "a:probes/s/libprobe-s.a.p/s.c.o:0000000000000000 T s_part",
            "a:probes/s/libprobe-s.a.p/s.c.o:                 U c_run",
            "a:probes/s/libprobe-s.a.p/s.c.o:                 U result_o_get",
            "a:probes/s/libprobe-s.a.p/result_s.c.o:0000000000000000 T result_s_get",
            "a:probes/o/libprobe-o.a.p/result_o.c.o:0000000000000000 T result_o_get",
            "a:probes/o/libprobe-o.a.p/o.c.o:                 U result_s_get",
            "a:probes/o/libprobe-o.a.p/o.c.o:                 U probe_c",
            "a:probes/c/libprobe-c.a.p/c.c.o:0000000000000040 D probe_c",
            "a:probes/c/libprobe-c.a.p/c.c.o:                 U probe_o",
            "a:probes/o/libprobe-o.a.p/o.c.o:0000000000000040 D probe_o",
        ]
        self.assertEqual(folder_cycles(*archive_symbols(lines)), [("probes/c", "probes/s")])

    def test_no_call_cycle_between_probe_folders(self):
        build = os.environ.get("GPUCHECKUP_BUILD_ROOT")
        if not build:
            self.fail("GPUCHECKUP_BUILD_ROOT is not set: run through meson test (unit-shape reads the core library)")
        out = subprocess.run(["nm", "-A", os.path.join(build, "libgpucheckup-core.a")], capture_output=True,
                             text=True, check=True, cwd=build).stdout.splitlines()
        defined, undefined = archive_symbols(out)
        self.assertIn("probes/clonce", {object_folder(o) for o in undefined if is_probe_object(o)})
        self.assertEqual(folder_cycles(defined, undefined), [],
                         "probe folders call one another round a cycle: hand the callee a table (as the "
                         "shared OpenCL child's parts are, struct clonce_part) or read its typed result")


# Call cycles left, and why (issue 38). The list only shrinks.
CYCLE_EXCEPTIONS = set()  # none left: each entry needs its reason beside it, and the list only shrinks


class CycleTests(unittest.TestCase):
    """The files of a folder call one another one way: a cycle is usually a helper in the wrong file."""

    def test_scanner(self):
        lines = [
            "a:probes/x/libprobe-x.a.p/x.c.o:0000000000000000 T x_run",
            "a:probes/x/libprobe-x.a.p/x.c.o:                 U x_util",
            "a:probes/x/libprobe-x.a.p/x_util.c.o:0000000000000000 T x_util",
            "a:probes/x/libprobe-x.a.p/x_util.c.o:                 U x_run",
            "a:probes/x/libprobe-x.a.p/x_verdict.c.o:0000000000000000 T x_verdict",
            "a:probes/x/libprobe-x.a.p/x_verdict.c.o:                 U probe_x",
            "a:probes/x/libprobe-x.a.p/x.c.o:0000000000000000 D probe_x",
            "a:probes/x/libprobe-x.a.p/x.c.o:                 U x_verdict",
            "a:libgpucheckup-core.a.p/src_util_a.c.o:0000000000000000 T a_f",
            "a:libgpucheckup-core.a.p/src_util_a.c.o:                 U b_f",
            "a:libgpucheckup-core.a.p/src_host_b.c.o:0000000000000000 T b_f",
            "a:libgpucheckup-core.a.p/src_host_b.c.o:                 U a_f",
        ]
        self.assertEqual(call_cycles(*archive_symbols(lines)), [("probes/x", ("x", "x_util"))])

    def test_no_call_cycle_in_a_folder(self):
        build = os.environ.get("GPUCHECKUP_BUILD_ROOT")
        if not build:
            self.fail("GPUCHECKUP_BUILD_ROOT is not set: run through meson test (unit-shape reads the core library)")
        out = subprocess.run(["nm", "-A", os.path.join(build, "libgpucheckup-core.a")], capture_output=True,
                             text=True, check=True, cwd=build).stdout.splitlines()
        found = set(call_cycles(*archive_symbols(out)))
        self.assertEqual(sorted(found - CYCLE_EXCEPTIONS), [],
                         "files of one folder call each other round a cycle: move the helper to the file it "
                         "belongs with (or a NAME_util.c both call)")
        self.assertEqual(sorted(CYCLE_EXCEPTIONS - found), [], "stale entries in CYCLE_EXCEPTIONS")


# A probe reads another probe's facts through that probe's typed result (src/results/result_NAME.h,
# result_NAME_get), never its section's JSON by name: a renamed key then breaks the build, not a run.
SECTION_READ_RE = re.compile(r'\b(report_find_section|doctor_data|probe_captured)\s*\(([^;]*?),\s*"([a-z0-9_-]+)"\s*\)')


def section_reads(texts, names):
    """(file, reader, section) for each call in TEXTS ({path: source}) under probes/ that reads a section by a
    string literal naming another probe (NAMES): report_find_section(r, "pci"), doctor_data(r, "cpu"),
    probe_captured(ctx, "icd"). A file loose in probes/ (the shared OpenCL child) is no probe: any name counts."""
    found = set()
    for rel in sorted(texts):
        if not rel.startswith("probes/"):
            continue
        owner = rel.split("/")[1] if rel.count("/") >= 2 else None
        for m in SECTION_READ_RE.finditer(blank_comments(texts[rel])):
            section = m.group(3)
            if section in names and section != owner:
                found.add((rel, m.group(1), section))
    return found


# Sections still read by name by another probe, and why: none (issue 38). An entry, (file, reader, section), needs
# its reason beside it, and the list only shrinks.
SECTION_READ_EXCEPTIONS = set()


class SectionReadScannerTests(unittest.TestCase):
    """The scanner itself: a broken scanner would pass every tree."""

    def test_reads_found(self):
        tree = {
            "probes/a/a.c": ('x = report_find_section(ctx->report, "b");\ny = doctor_data(r, "a");\n'
                             '/* doctor_data(r, "b") */\nz = probe_captured(ctx,\n "b");\nw = doctor_data(r, "zz");\n'),
            "probes/shared.c": 'x = report_find_section(ctx->report, "a");\n',
            "src/core.c": 'x = report_find_section(r, "a");\n',
        }
        self.assertEqual(sorted(section_reads(tree, {"a", "b"})), [
            ("probes/a/a.c", "probe_captured", "b"),
            ("probes/a/a.c", "report_find_section", "b"),
            ("probes/shared.c", "report_find_section", "a"),
        ])


class SectionReadTests(unittest.TestCase):
    def test_no_probe_reads_another_section_by_name(self):
        names, _, _ = probe_facts()
        texts = {}
        for rel in sources():
            with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
                texts[rel.replace(os.sep, "/")] = f.read()
        found = section_reads(texts, set(names))
        self.assertEqual(sorted(found - SECTION_READ_EXCEPTIONS), [],
                         "a probe reads another probe's section by name: read its typed result "
                         "(src/results/result_NAME.h) instead, or give that section one")
        self.assertEqual(sorted(SECTION_READ_EXCEPTIONS - found), [], "stale entries in SECTION_READ_EXCEPTIONS")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
