"""--output FILE is atomic: a run killed at any moment leaves FILE with its old content (or absent),
never a partial report, and leaves no process behind. The report goes to a temporary file in the
same directory only once it is complete, so a kill at any earlier moment leaves nothing at all; a
SIGKILL in the instant between creating and renaming it may leave a stray .gpucheckup.XXXXXX (the
man page says so), never a damaged FILE."""
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

import gctest

PR_SET_CHILD_SUBREAPER = 36
OLD = '{"old": "report"}\n'


def become_subreaper():
    """Orphaned grandchildren come to this process (and are reaped here) instead of to init."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def live_processes_mentioning(text):
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % p) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmd and state != "Z":
            pids.append(int(p))
    return pids


class AtomicOutputTests(gctest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.subreaper = become_subreaper()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gc-atomic-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.addCleanup(reap)
        self.addCleanup(self.kill_leftovers)
        vendors = os.path.join(self.dir, "vendors")
        os.mkdir(vendors)
        with open(os.path.join(vendors, "hang.icd"), "w") as f:
            f.write(os.environ["GC_FAKE_ICD_HANG"] + "\n")
        self.env = {**os.environ, "OCL_ICD_VENDORS": vendors}
        self.out = os.path.join(self.dir, "report.json")

    def start_hanging_run(self, *extra):
        """A run that hangs in a driver child for a minute; returns once that child is running."""
        proc = subprocess.Popen([gctest.GPUCHECKUP, "--json", "--timeout", "60", "-o", self.out, *extra, "check"],
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.stop, proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(live_processes_mentioning(self.out)) > 1:  # gpucheckup and at least one child
                return proc
            if proc.poll() is not None:
                self.fail("gpucheckup ended before hanging: %r" % (proc.communicate(),))
            time.sleep(0.05)
        self.fail("no driver child appeared")

    def kill_leftovers(self):
        """After a failure: end what this test started and left running (by pid)."""
        for pid in live_processes_mentioning(self.out):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def stop(self, proc):
        if proc.poll() is None:
            proc.kill()
        proc.communicate()

    def others(self):
        return sorted(n for n in os.listdir(self.dir) if n not in ("vendors", "report.json"))

    def assert_nothing_left_running(self):
        deadline = time.monotonic() + 5
        while live_processes_mentioning(self.out) and time.monotonic() < deadline:
            reap()
            time.sleep(0.05)
        self.assertEqual(live_processes_mentioning(self.out), [], "driver children outlived gpucheckup")

    def test_sigkill_mid_run_keeps_the_old_file(self):
        with open(self.out, "w") as f:
            f.write(OLD)
        proc = self.start_hanging_run()
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        with open(self.out) as f:
            self.assertEqual(f.read(), OLD)
        self.assertEqual(self.others(), [], "the temp file is made only at the end")
        self.assert_nothing_left_running()

    def test_sigkill_mid_run_leaves_no_file(self):
        proc = self.start_hanging_run()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        self.assertFalse(os.path.exists(self.out))
        self.assertEqual(self.others(), [])
        self.assert_nothing_left_running()

    def test_ctrl_c_and_sigterm_mid_run(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(sig=sig.name):
                with open(self.out, "w") as f:
                    f.write(OLD)
                proc = self.start_hanging_run()
                proc.send_signal(sig)
                proc.communicate(timeout=30)
                self.assertEqual(proc.returncode, -sig)
                with open(self.out) as f:
                    self.assertEqual(f.read(), OLD)
                self.assertEqual(self.others(), [])
                self.assert_nothing_left_running()

    def test_killed_at_random_moments(self):
        # Quick runs (cpu, pci) killed at moments spread over their whole length, writing included:
        # the file is always the old report or a whole new one.
        with open(self.out, "w") as f:
            f.write(OLD)
        start = time.monotonic()
        subprocess.run([gctest.GPUCHECKUP, "--json", "-o", os.path.join(self.dir, "probe.json"), "cpu", "--compact"],
                       check=False, capture_output=True, timeout=120)
        length = time.monotonic() - start
        os.unlink(os.path.join(self.dir, "probe.json"))
        rng = random.Random(9)
        outcomes = {"old": 0, "new": 0}
        for _ in range(30):
            proc = subprocess.Popen([gctest.GPUCHECKUP, "--json", "-o", self.out, "cpu"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, length * 1.2))
            proc.kill()
            proc.wait()
            with open(self.out) as f:
                text = f.read()
            if text == OLD:
                outcomes["old"] += 1
            else:
                gctest.validate(json.loads(text))  # a whole report, or this raises
                outcomes["new"] += 1
                with open(self.out, "w") as f:
                    f.write(OLD)
            for n in self.others():
                # only the documented leftover, and it never replaced the report
                self.assertTrue(n.startswith(".gpucheckup."), n)
                os.unlink(os.path.join(self.dir, n))
        print("killed 30 runs: %(old)d left the old file, %(new)d the new one" % outcomes)


if __name__ == "__main__":
    gctest.main()
