"""The shape of the sources: no .c/.h under src/ or probes/ over 800 lines, no function over 120 (issue 13)."""
import glob
import os
import re
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


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
