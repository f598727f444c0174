"""contrib/slurm/gpucheckup-healthcheck against a real single-node Slurm from Debian (munge, slurmctld, slurmd
on 127.0.0.1, a generated key and slurm.conf, everything under a temp dir and stopped at the end): slurmd
runs it as HealthCheckProgram; a failing --require drains the node with "gpucheckup: ID", a passing run
resumes it, and a node an admin drained is left alone."""
import os
import shlex
import shutil
import subprocess
import tempfile
import unittest

import fleetd
import gctest

SCRIPT = os.path.join(gctest.SOURCE_ROOT, "contrib", "slurm", "gpucheckup-healthcheck")
NODE = "gcnode"
# slurmd runs the health check every HealthCheckInterval seconds (slurmctld asks for it; in 22.05 its
# background loop looks about every few seconds), so each step waits for a run that began after it.
INTERVAL = 2
STEP_TIMEOUT = 120


def tool(name):
    return shutil.which(name) or os.path.join("/usr/sbin", name)


class SlurmHealthCheckTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise AssertionError("this test runs slurmd, which must run as root (CI runs the suite as root)")
        cls.dir = tempfile.mkdtemp(prefix="fleet-slurm-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.daemons = fleetd.Daemons(cls.dir)
        cls.addClassCleanup(cls.daemons.stop_all)
        cls.start_munge()
        cls.write_slurm_conf()
        cls.env = {**os.environ, "SLURM_CONF": cls.conf}
        cls.daemons.start("slurmctld", [tool("slurmctld"), "-D", "-i", "-f", cls.conf], env=cls.env)
        fleetd.wait_for("slurmctld to answer", lambda: cls.scontrol_ok("ping"), 60)
        cls.daemons.start("slurmd", [tool("slurmd"), "-D", "-N", NODE, "-f", cls.conf], env=cls.env)
        fleetd.wait_for("the node to register", lambda: "IDLE" in cls.node()[0], 60)

    @classmethod
    def start_munge(cls):
        m = os.path.join(cls.dir, "munge")
        os.mkdir(m, 0o700)
        cls.key = os.path.join(m, "munge.key")
        with open(cls.key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(cls.key, 0o400)
        cls.munge_socket = os.path.join(m, "munge.socket")
        cls.daemons.start("munged", [tool("munged"), "-F", "-f", "--key-file=" + cls.key,
                                     "--socket=" + cls.munge_socket, "--pid-file=" + os.path.join(m, "pid"),
                                     "--seed-file=" + os.path.join(m, "seed"),
                                     "--log-file=" + os.path.join(m, "munged.log")])
        fleetd.wait_for("munged's socket", lambda: os.path.exists(cls.munge_socket), 30)

    @classmethod
    def write_slurm_conf(cls):
        d = cls.dir
        for sub in ("state", "spool"):
            os.mkdir(os.path.join(d, sub))
        # slurmd gives its HealthCheckProgram no environment but SLURMD_NODENAME (no PATH either, which the
        # script sets itself): this wrapper names the settings of the current step (the file "step" holds
        # its number) and Slurm's config, and records each run's end.
        cls.wrapper = os.path.join(d, "healthcheck")
        # The sanitizer build's settings reach gpucheckup as in the other tests (HACKING.md "Sanitizers": NEO
        # aborts under ASan without them), although slurmd passes no environment on.
        keep = "".join("export %s=%s\n" % (k, shlex.quote(os.environ[k]))
                       for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "NEOReadDebugKeys", "DisableDeepBind")
                       if k in os.environ)
        with open(cls.wrapper, "w") as f:
            f.write("#!/bin/sh\n" + keep +
                    "step=$(cat %(d)s/step)\n"
                    "GPUCHECKUP_HEALTHCHECK_CONF=%(d)s/healthcheck-$step.conf SLURM_CONF=%(d)s/slurm.conf \\\n"
                    "    %(script)s 2>>%(d)s/healthcheck.err\n"
                    "echo \"$step $?\" >> %(d)s/runs\n" % {"d": d, "script": SCRIPT})
        os.chmod(cls.wrapper, 0o755)
        cls.set_step(0, "")
        cls.conf = os.path.join(d, "slurm.conf")
        with open(cls.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=gctest",
                "SlurmctldHost=localhost(127.0.0.1)",
                "SlurmctldPort=%d" % fleetd.free_port(),
                "SlurmdPort=%d" % fleetd.free_port(),
                "AuthType=auth/munge",
                "AuthInfo=socket=%s" % cls.munge_socket,
                "CredType=cred/munge",
                "SlurmUser=root",
                "SlurmdUser=root",
                "StateSaveLocation=%s/state" % d,
                "SlurmdSpoolDir=%s/spool" % d,
                "SlurmctldPidFile=%s/slurmctld.pid" % d,
                "SlurmdPidFile=%s/slurmd.pid" % d,
                "SlurmctldLogFile=%s/slurmctld.log" % d,
                "SlurmdLogFile=%s/slurmd.log" % d,
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none",
                "SelectType=select/cons_tres",
                "MpiDefault=none",
                "ReturnToService=2",
                "HealthCheckProgram=%s" % cls.wrapper,
                "HealthCheckInterval=%d" % INTERVAL,
                "HealthCheckNodeState=ANY",
                "NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 RealMemory=1 State=UNKNOWN" % NODE,
                "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                ""]))

    step_no = 0

    @classmethod
    def set_step(cls, n, require, args="--no-smoke", extra=""):
        """Settings for the runs from now on: --require REQUIRE, ARGS, the node's JSON report kept. gpucheckup
        is run through a wrapper that records its arguments (args-N)."""
        rec = os.path.join(cls.dir, "gpucheckup-%d" % n)
        with open(rec, "w") as f:
            f.write('#!/bin/sh\necho "$*" >> %s/args-%d\nexec %s "$@"\n' % (cls.dir, n, gctest.GPUCHECKUP))
        os.chmod(rec, 0o755)
        if gctest.SANITIZED:  # a sanitizer build is slower: more of Slurm's 60 s, as gctest.run gives others
            args += " --timeout=45"
        with open(os.path.join(cls.dir, "healthcheck-%d.conf" % n), "w") as f:
            f.write("GPUCHECKUP=%s\nREQUIRE='%s'\nARGS='%s'\nREPORT=%s/report-%d.json\nNODE=%s\n%s"
                    % (rec, require, args, cls.dir, n, NODE, extra))
        with open(os.path.join(cls.dir, "step.new"), "w") as f:
            f.write("%d\n" % n)
        os.replace(os.path.join(cls.dir, "step.new"), os.path.join(cls.dir, "step"))

    @classmethod
    def scontrol_ok(cls, *args):
        return subprocess.run(["scontrol", *args], env=cls.env, capture_output=True, timeout=30).returncode == 0

    @classmethod
    def node(cls):
        """(State, Reason without its [user@time]) of the node, as scontrol shows them."""
        out = subprocess.run(["scontrol", "show", "node", NODE], env=cls.env, capture_output=True, text=True,
                             timeout=30).stdout
        state = reason = ""
        for line in out.splitlines():
            for field in line.split():
                if field.startswith("State="):
                    state = field[6:]
            if line.strip().startswith("Reason="):
                reason = line.strip()[7:].rsplit(" [", 1)[0]
        return state, reason

    def run_step(self, require, args="--no-smoke", extra=""):
        """Make the next health checks use --require REQUIRE; wait for slurmd to run one with it."""
        type(self).step_no += 1
        n = self.step_no
        self.set_step(n, require, args, extra)
        runs = os.path.join(self.dir, "runs")

        def done():
            self.daemons.check_alive()
            try:
                with open(runs, encoding="utf-8") as f:
                    return [line.split()[1] for line in f if line.split()[0] == str(n)]
            except OSError:
                return None
        rcs = fleetd.wait_for("slurmd to run HealthCheckProgram (step %d)" % n, done, STEP_TIMEOUT)
        self.assertEqual(rcs[0], "0", self.errors())
        return n

    def errors(self):
        try:
            with open(os.path.join(self.dir, "healthcheck.err"), encoding="utf-8") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def expected_cause(self, require):
        """The root cause's ID and subject gpucheckup --health names for this machine with --require REQUIRE."""
        r = gctest.run("--health", "--no-smoke", "--require", require)
        self.assertEqual(r.rc, 1, repr(r))
        return r.stdout.strip().split(" ", 1)[1]

    def missing_flag(self):
        flags = gctest.host_cpu_flags()
        for f in ("amx_tile", "amx_int8", "avx512_bf16", "sha_ni", "avx512f", "avx2", "avx"):
            if f not in flags:
                return f
        self.fail("this CPU lists every flag the test knows to ask for")

    def test_drain_resume_and_an_admins_drain(self):
        # the passing run needs a machine gpucheckup calls ready without --require: say so if it is not
        ready = gctest.run("--health", "--no-smoke")
        self.assertEqual(ready.rc, 0, "precondition: this machine is not ready: %r" % ready)
        flag = self.missing_flag()
        want = "gpucheckup: " + self.expected_cause(flag)

        # 1. a failing --require drains the node, with the root cause in the reason
        self.run_step(flag)
        state, reason = self.node()
        self.assertIn("DRAIN", state, self.errors())
        self.assertEqual(reason, want)
        self.assertTrue(os.path.getsize(os.path.join(self.dir, "report-%d.json" % self.step_no)) > 0)

        # 2. a passing run resumes it: the drain was the script's own
        self.run_step("")
        state, reason = self.node()
        self.assertNotIn("DRAIN", state, (state, reason, self.errors()))

        # 3. an admin's drain stays, with the admin's reason, through a failing and a passing run
        subprocess.run(["scontrol", "update", "nodename=" + NODE, "state=drain", "reason=admin: bad fan"],
                       env=self.env, check=True, timeout=30)
        for require in (flag, ""):
            self.run_step(require)
            state, reason = self.node()
            self.assertIn("DRAIN", state)
            self.assertEqual(reason, "admin: bad fan", self.errors())
        self.assertIn("left alone", self.errors())
        subprocess.run(["scontrol", "update", "nodename=" + NODE, "state=resume"], env=self.env, check=True,
                       timeout=30)
        print("slurmd ran the health check; %s drained, resumed, an admin's drain kept" % want)

    def test_unknown_leaves_the_node_unless_told(self):
        # gpucheckup cannot decide (exit 2: here an unknown --require name): logged, node left as it is
        self.run_step("warp-drive")
        state, reason = self.node()
        self.assertNotIn("DRAIN", state, (state, reason))
        self.assertIn("could not decide (exit 2): UNKNOWN input", self.errors())
        # ON_UNKNOWN=drain drains, with the line's cause; a ready run then resumes
        self.run_step("warp-drive", extra="ON_UNKNOWN=drain\n")
        state, reason = self.node()
        self.assertIn("DRAIN", state)
        self.assertTrue(reason.startswith("gpucheckup: input --require: unknown requirement"), reason)
        self.run_step("")
        self.assertNotIn("DRAIN", self.node()[0])

    def test_allocated_node_gets_no_smoke(self):
        # a job holds the node: the health check must not run the smoke test on its GPUs
        job = subprocess.run(["sbatch", "--parsable", "-w", NODE, "-o", "/dev/null", "--wrap", "sleep 300"],
                             env=self.env, capture_output=True, text=True, timeout=30)
        self.assertEqual(job.returncode, 0, job.stderr)
        jobid = job.stdout.strip().split(";")[0]
        self.addCleanup(subprocess.run, ["scancel", jobid], env=self.env, timeout=30)
        fleetd.wait_for("the job to start", lambda: self.node()[0].startswith(("ALLOCATED", "MIXED")), 60)
        n = self.run_step("", args="")
        with open(os.path.join(self.dir, "args-%d" % n), encoding="utf-8") as f:
            runs = f.read().splitlines()
        self.assertTrue(runs, "gpucheckup did not run")
        self.assertIn("--no-smoke", runs[-1].split(), runs)
        # and on an idle node the same settings do run the smoke test
        subprocess.run(["scancel", jobid], env=self.env, timeout=30)
        fleetd.wait_for("the node to be idle", lambda: self.node()[0].startswith("IDLE"), 60)
        n = self.run_step("", args="")
        with open(os.path.join(self.dir, "args-%d" % n), encoding="utf-8") as f:
            self.assertNotIn("--no-smoke", f.read().splitlines()[-1].split())


if __name__ == "__main__":
    unittest.main(verbosity=2)
