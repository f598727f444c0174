"""debian/: the package builds with dpkg-buildpackage -us -uc -b from a copy of the repository, lintian finds no
error and no warning, and `apt-get install ./gpucheckup_*.deb` installs it and `gpucheckup --version` runs from
it. The install happens inside a private mount namespace, in a chroot onto an overlay of / whose upper layer is
a tmpfs (unshare --mount): the real apt-get and dpkg run against a copy-on-write view of this machine, and
everything they change vanishes with the namespace, so the machine itself is never changed. The README's quick
start runs there too, verbatim, as root with no sudo (removed from the view first, as on a bare image)."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest

import gctest

SRC = gctest.SOURCE_ROOT


class DebianPackageTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("the install check mounts an overlay in a namespace: it needs root (CI is root)")
        cls.dir = tempfile.mkdtemp(prefix="fleet-deb-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        src = os.path.join(cls.dir, "gpucheckup")
        os.mkdir(src)
        # the repository's files (tracked, and new ones not ignored), not its build directories
        files = subprocess.run(["git", "-C", SRC, "ls-files", "-co", "--exclude-standard", "-z"],
                               capture_output=True, check=True, timeout=60).stdout.split(b"\0")
        for f in filter(None, files):
            f = f.decode()
            if not os.path.lexists(os.path.join(SRC, f)):
                continue  # deleted in the work tree, not yet committed
            os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
            shutil.copy2(os.path.join(SRC, f), os.path.join(src, f), follow_symlinks=False)
        p = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, capture_output=True, text=True,
                           timeout=900)
        cls.build_log = p.stdout + p.stderr
        if p.returncode != 0:
            raise AssertionError("dpkg-buildpackage failed:\n" + cls.build_log[-6000:])
        debs = glob.glob(os.path.join(cls.dir, "gpucheckup_*.deb"))
        if len(debs) != 1:
            raise AssertionError("expected one gpucheckup_*.deb, found %s" % debs)
        cls.deb = debs[0]
        cls.changes = glob.glob(os.path.join(cls.dir, "gpucheckup_*.changes"))[0]

    def test_lintian_clean(self):
        p = subprocess.run(["lintian", "--fail-on", "error,warning", self.changes], capture_output=True,
                           text=True, timeout=600)
        tags = [line for line in p.stdout.splitlines() if line[:2] in ("E:", "W:")]
        self.assertEqual(tags, [], p.stdout + p.stderr)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def in_overlay(self, body, name):
        """Run shell BODY as root in a chroot onto an overlay of / (upper layer: a tmpfs), in a private mount
        namespace: its cwd is the chroot's top. Returns the finished process."""
        mnt = os.path.join(self.dir, name)
        os.mkdir(mnt)
        script = textwrap.dedent("""\
            set -e
            M=%s
            D=%s
            mount -t tmpfs tmpfs "$M"
            mkdir "$M/upper" "$M/work" "$M/root"
            mount -t overlay overlay -o lowerdir=/,upperdir="$M/upper",workdir="$M/work" "$M/root"
            # the overlay of / holds no file system mounted below it: where the temporary directory is on
            # one of its own (a tmpfs /tmp, Debian 13's default) the .deb and the sources would be missing
            mkdir -p "$M/root$D"
            mount --bind "$D" "$M/root$D"
            mount --rbind /dev "$M/root/dev"
            mount -t proc proc "$M/root/proc"
            mount --rbind /sys "$M/root/sys"
            cd "$M/root"
            """) % (mnt, self.dir) + body
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, text=True, timeout=900)
        self.assertEqual(os.listdir(mnt), [])  # the namespace took its tmpfs, and every change, with it
        return p

    def test_readme_quick_start_as_root_without_sudo(self):
        with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        block = re.search(r"## Quick start.*?```sh\n(.*?)```", readme, re.S).group(1)
        # the copy of the work tree stands for the clone (which would fetch what is published, not this tree)
        clone = re.compile(r"^git clone https://\S+ && cd gpucheckup\n", re.M)
        self.assertRegex(block, clone, "the Quick start shows the clone")
        block = clone.sub("", block)
        src = os.path.join(self.dir, "quickstart")
        shutil.copytree(os.path.join(self.dir, "gpucheckup"), src, ignore=shutil.ignore_patterns("obj-*", "debian"))
        shutil.copytree(os.path.join(self.dir, "gpucheckup", "debian"), os.path.join(src, "debian"),
                        ignore=shutil.ignore_patterns("gpucheckup", ".debhelper", "files", "*.substvars"))
        with open(os.path.join(self.dir, "quickstart.sh"), "w", encoding="utf-8") as f:
            f.write("set -e\n" + block)
        body = textwrap.dedent("""\
            rm -f ./usr/bin/sudo ./usr/local/bin/sudo
            chroot . sh -c 'command -v sudo && exit 9; cd %(src)s && DEBIAN_FRONTEND=noninteractive sh -x %(qs)s'
            """) % {"src": src, "qs": os.path.join(self.dir, "quickstart.sh")}
        p = self.in_overlay(body, "ns-quickstart")
        self.assertEqual(p.returncode, 0, p.stdout[-4000:] + p.stderr[-4000:])
        self.assertIn("Verdict:", p.stdout)  # build/gpucheckup ran and printed its report

    def test_installs_with_apt_and_runs(self):
        was = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "gpucheckup"], capture_output=True, text=True)
        script = textwrap.dedent("""\
            chroot . env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends %(deb)s
            echo "VERSION: $(chroot . gpucheckup --version)"
            echo "STATUS: $(chroot . dpkg-query -W -f='${Status} ${Version}' gpucheckup)"
            rc=0; line=$(chroot . gpucheckup --health --no-smoke) || rc=$?
            echo "HEALTH: $line rc=$rc"
            for f in /usr/share/man/man1/gpucheckup.1.gz /usr/share/bash-completion/completions/gpucheckup \\
                     /usr/share/zsh/vendor-completions/_gpucheckup /usr/share/gpucheckup/gpucheckup.schema.json \\
                     /usr/share/gpucheckup/contrib/slurm/gpucheckup-healthcheck /lib/systemd/system/gpucheckup.timer \\
                     /usr/share/doc/gpucheckup/fleet.md.gz; do
                test -f ".$f" && echo "FILE: $f"
            done
            test -e ./etc/systemd/system/timers.target.wants/gpucheckup.timer && echo "ENABLED: timer" || true
            """) % {"deb": self.deb}
        p = self.in_overlay(script, "ns-install")
        self.assertEqual(p.returncode, 0, p.stdout[-4000:] + p.stderr[-4000:])
        out = p.stdout.splitlines()
        self.assertIn("VERSION: gpucheckup 0.1.0", out)
        self.assertIn("STATUS: install ok installed 0.1.0", out)
        health = [line for line in out if line.startswith("HEALTH: ")]
        self.assertRegex(health[0], r"^HEALTH: (READY|NOT-READY|UNKNOWN) .* rc=[012]$")
        self.assertEqual(len([line for line in out if line.startswith("FILE: ")]), 7, p.stdout)
        self.assertNotIn("ENABLED: timer", out)  # installing does not turn the timer on
        # and this machine is as it was: the namespace took every change with it
        now = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "gpucheckup"], capture_output=True, text=True)
        self.assertEqual((now.returncode, now.stdout), (was.returncode, was.stdout))


if __name__ == "__main__":
    unittest.main(verbosity=2)
