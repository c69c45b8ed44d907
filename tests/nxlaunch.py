"""Start an NX job on the Linux-host Portals: N processes on ONE interface
inside a network namespace, sharing one nid and differing by Portals pid
(docs/job-interface.md).  What yod will do on Tern, for tests and benches.

    with Netns() as ns:
        r = launch(ns, 4, ["build/nx-portals/ring"], timeout=60)
        r.status, r.out, r.err, r.statuses

The namespace holds a veth pair (both ends up, so frames leave va and every
packet socket on va sees them); va has the MAC of nid 1.  Netns.close()
deletes it; launch() kills every process it started before returning,
whatever happened.  Needs root (namespaces, CAP_NET_RAW for AF_PACKET).
"""
import contextlib
import itertools
import os
import subprocess
import sys
import tempfile
import time

NID = 1
BASE_PID = 100
_seq = itertools.count()


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True,
                          text=True, timeout=30)


@contextlib.contextmanager
def netns():
    """A Netns for the length of the `with`, closed (and checked gone) after."""
    n = Netns()
    try:
        yield n
    finally:
        n.close()
        assert n.name not in sh("ip", "netns", "list").stdout


class Netns:
    def __init__(self, mtu=9000):
        self.name = f"tern-nx-{os.getpid()}-{next(_seq)}"
        self.dev = "va"
        try:
            sh("ip", "netns", "add", self.name)
            sh("ip", "-n", self.name, "link", "add", "va", "type", "veth",
               "peer", "name", "vb")
            sh("ip", "-n", self.name, "link", "set", "va", "address",
               f"02:00:00:00:00:{NID:02x}", "mtu", str(mtu), "up")
            sh("ip", "-n", self.name, "link", "set", "vb", "mtu", str(mtu),
               "up")
        except BaseException:
            self.close()
            raise

    def close(self):
        sh("ip", "netns", "del", self.name, check=False)
        for _ in range(50):
            if self.name not in sh("ip", "netns", "list").stdout:
                return
            time.sleep(0.1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Result:
    def __init__(self, statuses, outs, errs, secs):
        self.statuses = statuses
        self.out = "".join(outs)
        self.err = "".join(errs)
        self.outs, self.errs = outs, errs
        self.secs = secs
        bad = [s for s in statuses if s != 0]
        self.status = bad[0] if bad else 0

    def __repr__(self):
        return (f"status={self.status} statuses={self.statuses} "
                f"secs={self.secs:.2f}\n--- stdout\n{self.out}\n--- stderr\n"
                f"{self.err}")


def launch(ns, n, argv, timeout=60, env=None, grace=3.0, cpus=None):
    """Run argv as an n-rank job; return a Result.  A rank that fails makes
    the others end on their own (libnx broadcasts its abort); whatever is
    still running `grace` seconds later, or at the timeout, is killed.
    The job status is the first non-zero exit status (a kill counts as
    -signal), else 0.  cpus: a taskset(1) CPU list for every rank."""
    pids = [BASE_PID + r for r in range(n)]
    tmap = ",".join(f"{NID}:{p}" for p in pids)
    procs, files = [], []
    t0 = time.monotonic()
    try:
        for r in range(n):
            e = dict(os.environ)
            # A bigger receive ring than the host default: on a busy 2-core
            # machine a descheduled receiver otherwise overflows it when 15
            # ranks send to it at once (recovered, but by slow timeouts).
            e.setdefault("TERN_RING_KB", "16384")
            e.update(env or {})
            e.update(TERN_RANK=str(r), TERN_SIZE=str(n), TERN_JOB="1",
                     TERN_MAP=tmap, TERN_PID=str(pids[r]), TERN_IFACE=ns.dev)
            # Output to files, not pipes: a rank blocked on a full pipe
            # would stall the whole job.
            fo = tempfile.TemporaryFile(mode="w+")
            fe = tempfile.TemporaryFile(mode="w+")
            files.append((fo, fe))
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", ns.name,
                 *(["taskset", "-c", cpus] if cpus else []), *argv],
                env=e, stdout=fo,
                stderr=fe, stdin=subprocess.DEVNULL))
        deadline = t0 + timeout
        first_fail = None
        while True:
            codes = [p.poll() for p in procs]
            if all(c is not None for c in codes):
                break
            now = time.monotonic()
            if first_fail is None and any(c not in (None, 0) for c in codes):
                first_fail = now
            if now > deadline or (first_fail and now > first_fail + grace):
                break
            time.sleep(0.02)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
    secs = time.monotonic() - t0
    outs, errs = [], []
    for fo, fe in files:
        fo.seek(0)
        fe.seek(0)
        outs.append(fo.read())
        errs.append(fe.read())
        fo.close()
        fe.close()
    res = Result([p.returncode for p in procs], outs, errs, secs)
    if secs > timeout:
        res.err += f"\nnxlaunch: timed out after {timeout} s\n"
    return res


def cleanup_on_sigterm():
    """Let SIGTERM (timeout(1), a CI runner) unwind through the finally
    clauses, so the ranks are killed and the namespace deleted."""
    import signal

    def _raise(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _raise)


if __name__ == "__main__":
    # python3 tests/nxlaunch.py N prog [args...]
    cleanup_on_sigterm()
    with Netns() as netns:
        r = launch(netns, int(sys.argv[1]), sys.argv[2:], timeout=300)
    sys.stdout.write(r.out)
    sys.stderr.write(r.err)
    sys.exit(r.status if r.status >= 0 else 128 - r.status)
