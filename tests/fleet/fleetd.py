"""fleetd: start real daemons for the fleet tests (munge, Slurm, node_exporter) under a temp dir, on
localhost, each in its own session; every one is stopped at the end, even when a test fails or the
test process is terminated (SIGTERM turns into SystemExit; PR_SET_PDEATHSIG covers SIGKILL)."""
import ctypes
import os
import signal
import socket
import subprocess
import time

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _terminated(signum, frame):
    raise SystemExit("terminated by signal %d" % signum)


signal.signal(signal.SIGTERM, _terminated)


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def wait_for(what, predicate, timeout, interval=0.2):
    """Call PREDICATE until it returns something true, at most TIMEOUT seconds; return it or raise."""
    end = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class Daemons:
    """Foreground daemons started with start(); stop_all() ends each one's whole session."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.procs = []

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.logdir, name + ".out"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                             preexec_fn=_die_with_parent)
        log.close()
        self.procs.append((name, p))
        return p

    def check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise AssertionError("%s exited with %s: %s" % (name, p.returncode, self.log(name)[-3000:]))

    def log(self, name):
        try:
            with open(os.path.join(self.logdir, name + ".out"), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop_all(self):
        for name, p in reversed(self.procs):
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(p.pid, sig)  # the daemon and whatever it started (slurmd's health checks)
                except ProcessLookupError:
                    break
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            try:
                os.killpg(p.pid, signal.SIGKILL)  # anything of the session that outlived its leader
            except ProcessLookupError:
                pass
        self.procs = []
