"""A CUDA library that is not loaded (a file states its version) is still checked for what loading it would
hit first: a dependency (DT_NEEDED) the dynamic loader finds nowhere (issue 30). Synthetic libraries built
here with the system compiler, found through LD_LIBRARY_PATH as a real install lays them out (libcublas.so.N
linking to a file whose name carries the full version); the dynamic linker's own trace (LD_DEBUG=files) proves
that nothing of them is loaded."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

import gctest

CC = os.environ.get("CC", "cc").split()[0]
# A SONAME major no CUDA release has: neither this machine's cache nor its default directories hold it.
MAJOR = "99"
LINE = re.compile(r"^\s*\d+:\s+file=(\S+) \[\d+\];\s+(?:dynamically loaded by|needed by)")


class CudaDepsTests(gctest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gc-cudadeps-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        p = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
        self.assertNotIn("libcublasLt.so." + MAJOR + " ", p.stdout, "the cache must not hold the missing one")

    def cc(self, *args):
        p = subprocess.run([CC, *args], capture_output=True, text=True, cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)

    def build(self, name, dep_dir=None, link_flags=(), keep_dep=False):
        """NAME/libcublas.so.99 -> libcublas.so.99.1.0.3, which needs libcublasLt.so.99 (a stub built in
        DEP_DIR, NAME by default, and deleted unless KEEP_DEP)."""
        top = os.path.join(self.dir, name)
        dep = os.path.join(top, dep_dir) if dep_dir else top
        os.makedirs(dep, exist_ok=True)
        lt = os.path.join(dep, "libcublasLt.so.%s.1.0.3" % MAJOR)  # its version in its name, as NVIDIA ships it
        with open(os.path.join(self.dir, "lt.c"), "w") as f:
            f.write("int cublasLtStub(void) { return 1; }\n")
        with open(os.path.join(self.dir, "blas.c"), "w") as f:
            f.write("int cublasLtStub(void);\nint cublasCreate_v2(void) { return cublasLtStub(); }\n")
        self.cc("-shared", "-fPIC", "-Wl,-soname,libcublasLt.so." + MAJOR, "-o", lt, "lt.c")
        os.symlink(os.path.basename(lt), os.path.join(dep, "libcublasLt.so." + MAJOR))
        real = "libcublas.so.%s.1.0.3" % MAJOR
        # --no-as-needed: the dependency stays in DT_NEEDED whatever the toolchain's default
        self.cc("-shared", "-fPIC", "-Wl,-soname,libcublas.so." + MAJOR, *link_flags, "-Wl,--no-as-needed",
                "-o", os.path.join(top, real), "blas.c", "-L" + dep, "-l:libcublasLt.so." + MAJOR)
        os.symlink(real, os.path.join(top, "libcublas.so." + MAJOR))
        if not keep_dep:
            os.unlink(lt)
            os.unlink(os.path.join(dep, "libcublasLt.so." + MAJOR))
        return top, os.path.join(top, real)

    def check(self, ld_path, trace=None):
        env = {"LD_LIBRARY_PATH": ld_path, "VIRTUAL_ENV": None}
        if trace:
            env.update(LD_DEBUG="files", LD_DEBUG_OUTPUT=os.path.join(trace, "ld"))
        r = self.run_json("cuda", env=env)
        self.assertIsNone(r.json["cuda"]["libraries_not_loaded"], r)
        mine = [x for x in r.json["cuda"]["libraries"] if x["found_at"].startswith(self.dir + "/") and
                x["library"] == "cublas"]
        self.assertEqual([x["file"] for x in mine], ["libcublas.so." + MAJOR], r.json["cuda"]["libraries"])
        self.assertEqual((mine[0]["version"], mine[0]["version_from"]), (MAJOR + ".1.0.3", "file name"), mine)
        return r, mine[0]

    def test_missing_dependency_is_named_without_loading(self):
        top, real = self.build("missing")
        trace = os.path.join(self.dir, "trace")
        os.makedirs(trace)
        r, lib = self.check(top, trace)
        f = [x for x in r.json["findings"] if x["id"] == "cuda.lib-load-failed" and x["subject"] == real]
        self.assertEqual(len(f), 1, r.json["findings"])
        self.assertIn("needs libcublasLt.so.%s (DT_NEEDED)" % MAJOR, f[0]["message"])
        self.assertIn('"libcublasLt.so.%s: cannot open shared object file"' % MAJOR, f[0]["message"])
        self.assertIn("libcublasLt.so." + MAJOR, lib["error"])
        self.assertIn("cuda.lib-load-failed", gctest.run("cuda", env={"LD_LIBRARY_PATH": top}).stdout)
        # the dynamic linker's trace: the processes of the run loaded things, but nothing of ours
        files = [m.group(1) for p in glob.glob(os.path.join(trace, "ld.*"))
                 for line in open(p, encoding="utf-8", errors="replace") for m in [LINE.match(line)] if m]
        self.assertTrue(files, "LD_DEBUG wrote no trace")
        self.assertFalse([x for x in files if "libcublas" in x and self.dir in os.path.realpath(x)], files)

    def test_dependency_beside_it_is_found(self):
        top, real = self.build("beside", keep_dep=True)
        r, lib = self.check(top)
        self.assertIsNone(lib["error"], lib)
        self.assertNotIn("cuda.lib-load-failed", r.finding_ids())  # the stub too: its name states its version

    def test_runpath_origin_is_followed(self):
        top, real = self.build("runpath", dep_dir="deps", link_flags=("-Wl,-rpath,$ORIGIN/deps", "-Wl,--enable-new-dtags"),
                               keep_dep=True)
        self.assertIn("RUNPATH", subprocess.run(["readelf", "-d", real], capture_output=True, text=True).stdout)
        r, lib = self.check(top)
        self.assertIsNone(lib["error"], lib)

    def test_rpath_origin_is_followed(self):
        top, real = self.build("rpath", dep_dir="deps", link_flags=("-Wl,-rpath,${ORIGIN}/deps", "-Wl,--disable-new-dtags"),
                               keep_dep=True)
        self.assertIn("(RPATH)", subprocess.run(["readelf", "-d", real], capture_output=True, text=True).stdout)
        r, lib = self.check(top)
        self.assertIsNone(lib["error"], lib)

    def test_runpath_without_it_names_the_runpath(self):
        top, real = self.build("gone", dep_dir="deps", link_flags=("-Wl,-rpath,$ORIGIN/deps", "-Wl,--enable-new-dtags"))
        r, lib = self.check(top)
        self.assertIn("its DT_RUNPATH $ORIGIN/deps", lib["error"] or "", lib)
        self.assertIn("cuda.lib-load-failed", r.finding_ids())

    def wheel_site(self, with_nvjitlink):
        """A venv whose NVIDIA wheels lay out cuSPARSE needing nvJitLink (RUNPATH $ORIGIN only, as cuSPARSE
        12.1's wheel did), their versions in the wheels' RECORDs; nvJitLink's wheel there or not."""
        site = os.path.join(self.dir, "venv", "lib", "python3.11", "site-packages")
        sp = os.path.join(site, "nvidia", "cusparse", "lib")
        jl = os.path.join(site, "nvidia", "nvjitlink", "lib")
        os.makedirs(sp)
        os.makedirs(jl)
        with open(os.path.join(self.dir, "jl.c"), "w") as f:
            f.write("int nvJitLinkStub(void) { return 1; }\n")
        with open(os.path.join(self.dir, "sp.c"), "w") as f:
            f.write("int nvJitLinkStub(void);\nint cusparseCreate(void) { return nvJitLinkStub(); }\n")
        self.cc("-shared", "-fPIC", "-Wl,-soname,libnvJitLink.so." + MAJOR, "-o",
                os.path.join(jl, "libnvJitLink.so." + MAJOR), "jl.c")
        self.cc("-shared", "-fPIC", "-Wl,-soname,libcusparse.so." + MAJOR, "-Wl,-rpath,$ORIGIN",
                "-Wl,--enable-new-dtags", "-Wl,--no-as-needed", "-o", os.path.join(sp, "libcusparse.so." + MAJOR),
                "sp.c", "-L" + jl, "-l:libnvJitLink.so." + MAJOR)
        for wheel, d, lib, ver in (("nvidia_cusparse_cu12", sp, "cusparse", "12.1.0.106"),
                                   ("nvidia_nvjitlink_cu12", jl, "nvjitlink", "12.9.86")):
            dist = os.path.join(site, "%s-%s.dist-info" % (wheel, ver))
            os.makedirs(dist)
            name = os.listdir(d)[0]
            with open(os.path.join(dist, "RECORD"), "w") as f:
                f.write("nvidia/%s/lib/%s,sha256=x,%d\n" % (lib, name, os.path.getsize(os.path.join(d, name))))
        if not with_nvjitlink:
            shutil.rmtree(os.path.join(site, "nvidia", "nvjitlink"))
        r = self.run_json("cuda", env={"LD_LIBRARY_PATH": None, "VIRTUAL_ENV": os.path.join(self.dir, "venv")})
        lib = [x for x in r.json["cuda"]["libraries"] if x["file"] == "libcusparse.so." + MAJOR]
        self.assertEqual([x["version_from"] for x in lib], ["wheel metadata"], r.json["cuda"]["libraries"])
        return r, lib[0]

    def test_another_wheels_library_counts_as_found(self):
        """A framework loads its NVIDIA wheels' libraries first: a dependency in a sibling wheel is met."""
        r, lib = self.wheel_site(True)
        self.assertIsNone(lib["error"], lib)
        self.assertNotIn("cuda.lib-load-failed", r.finding_ids())

    def test_wheel_dependency_missing(self):
        r, lib = self.wheel_site(False)
        self.assertIn("needs libnvJitLink.so.%s (DT_NEEDED)" % MAJOR, lib["error"] or "", lib)
        self.assertIn("cuda.lib-load-failed", r.finding_ids())


if __name__ == "__main__":
    gctest.main()
