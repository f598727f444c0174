#!/usr/bin/env python3
"""test_bench_plot.py: the bench --plot files are a well-formed SVG and a well-formed PNG, read by Python."""
import os
import struct
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zlib

WRITER = os.environ.get("GC_BENCH_PLOT_TEST", "")
SVG_NS = "{http://www.w3.org/2000/svg}"
LABELS = ["NVIDIA GeForce RTX 3060 / gpucheckup fp32", "PoCL cpu-haswell / gpucheckup fp32 <&>",
          "CPU OpenBLAS fp32 (baseline)"]


def png_chunks(data):
    """Yield (type, payload) of every chunk, checking each CRC."""
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype = data[pos + 4:pos + 8]
        payload = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(ctype + payload) != crc:
            raise AssertionError(f"bad CRC in chunk {ctype!r}")
        yield ctype, payload
        pos += 12 + length


class PlotFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not WRITER:
            raise unittest.SkipTest("run through meson (GC_BENCH_PLOT_TEST names the writer)")
        cls.tmp = tempfile.TemporaryDirectory()
        env = dict(os.environ, GC_BENCH_PLOT_DIR=cls.tmp.name)
        r = subprocess.run([WRITER], env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise AssertionError(f"unit-bench-plot failed:\n{r.stdout}\n{r.stderr}")
        cls.built_with_cairo = os.path.exists(os.path.join(cls.tmp.name, "chart.svg"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        if not self.built_with_cairo:
            self.skipTest("built with -Dplot=disabled (unit-bench-plot checks the error instead)")
        return os.path.join(self.tmp.name, name)

    def test_svg_parses_and_names_everything(self):
        root = ET.parse(self.path("chart.svg")).getroot()
        self.assertEqual(root.tag, SVG_NS + "svg")
        self.assertEqual(float(root.get("width").rstrip("pt")), 960)
        title = root.find(SVG_NS + "title")
        self.assertIsNotNone(title)
        self.assertEqual(title.text, "gpucheckup bench: GEMM GFLOPS")
        desc = root.find(SVG_NS + "desc").text
        for label in LABELS:
            self.assertIn(label, desc)  # ElementTree unescaped "&lt;&amp;&gt;"
        self.assertIn("beats the baseline from N=512", desc)
        # Drawn content: paths for lines and markers, one dashed (the baseline).
        paths = list(root.iter(SVG_NS + "path"))
        self.assertGreater(len(paths), 20)
        dashed = [p for p in paths if "stroke-dasharray" in (p.get("style") or "") + str(p.attrib)]
        self.assertTrue(dashed, "no dashed line: the baseline must be dashed")

    def test_png_is_a_png(self):
        with open(self.path("chart.PNG"), "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        chunks = list(png_chunks(data))
        self.assertEqual(chunks[0][0], b"IHDR")
        width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
        self.assertEqual((width, depth), (960, 8))
        self.assertTrue(500 <= height <= 700, height)
        self.assertEqual(chunks[-1][0], b"IEND")
        pixels = zlib.decompress(b"".join(p for t, p in chunks if t == b"IDAT"))
        bpp = {2: 3, 6: 4}[colour]
        self.assertEqual(len(pixels), height * (1 + width * bpp))
        # Not a blank picture: many distinct byte values (lines in several colours on white).
        self.assertGreater(len(set(pixels[::7])), 50)


if __name__ == "__main__":
    unittest.main()
